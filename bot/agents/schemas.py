"""What the Claude author and reviewer must answer with: pydantic models, sent as the JSON schema.

The schema goes to the API as ``output_config.format`` (structured outputs);
the reply is validated again here with these models plus the checks only the
caller can make (a checklist item that exists, a file that was reviewed, an
edit inside the allowed paths). Every model lists ``rationale`` first where the
model reasons: that field lets it think before answering and is then
discarded; it never reaches the branch, the state or a reviewer.

The reviewer's *inputs* are typed too (``ReviewerInput``): committed artifacts,
references, the checklist, earlier findings and the author's committed
responses, and nothing else, so the author's reasoning has no way in.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.agents.record import Response


class Out(BaseModel):
    """Replies are closed objects: an unknown key is a schema violation, asked again once."""

    model_config = ConfigDict(extra="forbid")


SeverityOut = Literal["CRITICAL", "IMPORTANT", "SUGGESTION"]


# --------------------------------------------------------------------------
# Reviewer
# --------------------------------------------------------------------------


class ReviewFindingOut(Out):
    severity: SeverityOut = Field(
        description="CRITICAL: must fix (wrong result, silent data loss, contradiction); IMPORTANT: would mislead "
        "a reader or change a conclusion; SUGGESTION: cosmetic, non-blocking"
    )
    checklist_item: int = Field(ge=1, le=9, description="number of the checklist item this finding falls under")
    file: str | None = Field(
        description="path on the promotion branch, exactly as given in the artifacts; null if none"
    )
    line: int | None = Field(ge=1, description="1-based line in that file; null if the finding is about the whole file")
    message: str = Field(min_length=10, description="what is wrong, specific enough to act on")
    suggested_fix: str = Field(min_length=3, description="the change that would resolve it")
    recurs: str | None = Field(
        default=None, description="id of an earlier round's finding (e.g. R1.3) this one repeats, if any"
    )


class ResponseVerdict(Out):
    response_id: str = Field(description="id of an author response, e.g. A2")
    accepted: bool = Field(description="true only if the fix or justification fully resolves the finding")
    reason: str = Field(min_length=3)


class ReviewReport(Out):
    rationale: str = Field(description="your reasoning; not shown to anyone")
    findings: list[ReviewFindingOut] = Field(description="every problem found; an empty list if none")
    responses: list[ResponseVerdict] = Field(
        default_factory=list, description="a verdict on each author response you were asked to weigh"
    )
    summary: str = Field(description="one or two sentences for the person deciding the gate")


class EarlierFinding(BaseModel):
    """A finding from an earlier round at this gate, and what became of it (from committed artifacts)."""

    id: str  # R<round>.<n>
    round: int
    severity: str
    check: str
    file: str | None = None
    line: int | None = None
    message: str
    status: Literal["open", "gone", "author says fixed", "author justified"] = "open"


class ReviewerInput(BaseModel):
    """Everything the independent reviewer sees. Built from the branch and the state only."""

    model_config = ConfigDict(frozen=True)

    gate: int
    round: int
    branch: str
    artifacts: dict[str, str] = Field(description="path -> text, as committed on the promotion branch")
    untrusted: dict[str, str] = Field(
        default_factory=dict, description="label -> text from outside (evolved program, BLIS claims), sanitized"
    )
    deterministic: list[dict] = Field(default_factory=list, description="the checklist findings already raised")
    earlier: list[EarlierFinding] = Field(default_factory=list)
    responses: list[Response] = Field(default_factory=list, description="the author's committed responses")


# --------------------------------------------------------------------------
# Author
# --------------------------------------------------------------------------


class FileEdit(Out):
    path: str = Field(description="path on the promotion branch; must be inside the allowed paths")
    find: str | None = Field(
        description="exact text to replace (must occur exactly once in the current file); null = write the whole file"
    )
    replace: str = Field(description="replacement text, or the whole new file when find is null")


class FindingResponseOut(Out):
    finding_id: str = Field(description="id of the finding as given (F1, F2, ...)")
    action: Literal["fixed", "justified"] = Field(
        description="fixed: your edits resolve it; justified: it cannot be fixed in code and the note says why "
        "that is acceptable and what covers the risk"
    )
    note: str = Field(min_length=20, description="for the reviewer and the person deciding: what you did or why")


class TranslationPatch(Out):
    rationale: str = Field(description="your reasoning; discarded, never shown to the reviewer")
    edits: list[FileEdit] = Field(description="changes to the generated plugin or the promotion docs; may be empty")
    responses: list[FindingResponseOut] = Field(description="one response per finding you were given")
    report_notes: list[str] = Field(
        default_factory=list, description="lines for the translation report's 'Author changes' section"
    )


class HypothesisWording(Out):
    id: str = Field(description="hypothesis id, e.g. A1")
    title: str | None = Field(default=None, description="new title, or null to keep it")
    statement: str | None = Field(default=None, description="new statement, or null to keep it")
    diagnostic: str | None = Field(
        default=None, description='new diagnostic clause ("If this fails, it would indicate ..."), or null'
    )
    mechanism: str | None = Field(default=None, description="new mechanism sentence, or null to keep it")


class HypothesisSet(Out):
    rationale: str = Field(description="your reasoning; discarded")
    hypotheses: list[HypothesisWording] = Field(description="wording changes; hypotheses not listed stay as they are")
    responses: list[FindingResponseOut] = Field(default_factory=list, description="one per finding you were given")


class Narrative(Out):
    rationale: str = Field(description="your reasoning; discarded")
    root_cause: str = Field(
        min_length=40, description="root-cause analysis in plain paragraphs (no headings), citing numbers given"
    )
    devils_advocate: str = Field(min_length=40, description="the strongest case against this reading of the data")
    scope_and_limitations: str = Field(min_length=20)


#: The role each output model belongs to (for logs and accounting).
ROLE = {ReviewReport: "reviewer", TranslationPatch: "author", HypothesisSet: "author", Narrative: "author"}
