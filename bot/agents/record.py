"""What the author leaves on the branch besides its edits: responses to findings, and dropped patches.

A reviewer on GitHub sees a pull request's replies ("fixed", "won't fix
because ...") next to the code; this is the same record, committed as
``docs/promotion/<slug>/author-responses/gate-N.json`` by the stage that wrote
it. The independent reviewer and the deterministic review read it back from
the branch like any other artifact. The author's reasoning is not in it: only
what it changed, what it answers, and what the deterministic checks refused.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.model import Finding, Severity, match_text


class FindingRef(BaseModel):
    """Which finding a response answers (enough to find it again in a later round)."""

    model_config = ConfigDict(extra="forbid")

    check: str
    file: str | None = None
    line: int | None = None
    source_line: int | None = None
    message: str = ""
    by: str | None = None

    @classmethod
    def of(cls, f: Finding) -> FindingRef:
        return cls(check=f.check, file=f.file, line=f.line, source_line=f.source_line, message=f.message, by=f.by)

    def refers_to(self, f: Finding) -> bool:
        if self.check != f.check:
            return False
        if self.source_line is not None or f.source_line is not None:
            return self.source_line == f.source_line
        if f.by or self.by:
            return self.file == f.file
        return self.file == f.file and self.line == f.line and match_text(self.message) == match_text(f.message)


class Response(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="A<n>, unique within the file")
    finding: FindingRef
    action: Literal["fixed", "justified"]
    note: str


class DroppedPatch(BaseModel):
    """An author patch the deterministic checks refused twice: not applied, raised at the gate."""

    model_config = ConfigDict(extra="forbid")

    paths: list[str]
    errors: list[str]


class AuthorRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stage: int
    gate: int
    prompt: str = Field(description="template id@version that produced it")
    responses: list[Response] = Field(default_factory=list)
    applied: list[str] = Field(default_factory=list, description="paths the author's accepted edits changed")
    dropped: list[DroppedPatch] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def dumps(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"

    def response_for(self, f: Finding) -> Response | None:
        return next((r for r in self.responses if r.finding.refers_to(f)), None)

    def dropped_findings(self, where: str | None = None) -> list[Finding]:
        """One finding per dropped patch; ``where`` is this record's path, which keeps the full list of paths."""
        return [
            Finding(
                severity=Severity.IMPORTANT,
                check="author.patch-dropped",
                file=d.paths[0] if len(d.paths) == 1 else None,
                message=f"the author's patch to {_listed(d.paths, where)} failed the deterministic checks "
                f"twice and was not applied: {'; '.join(d.errors)[:600]}",
                fix="fix it by hand, or request changes with a narrower instruction",
                by="author",
            )
            for d in self.dropped
        ]


_LISTED = 5


def _listed(paths: list[str], where: str | None) -> str:
    """The first few paths and a count: a patch of a hundred files listed whole in one finding (17 KB for 112)
    pushed the gate's review comment toward GitHub's 65,536-character limit. The record keeps them all."""
    if not paths:
        return "no file"
    if len(paths) <= _LISTED:
        return ", ".join(paths)
    rest = f"and {len(paths) - _LISTED} more"
    return f"{', '.join(paths[:_LISTED])} {rest}" + (f" (all listed in {where})" if where else "")


def record_path(docs_dir: str, gate: int) -> str:
    return f"{docs_dir}/author-responses/gate-{gate}.json"


def load_record(text: str | None) -> AuthorRecord | None:
    """The committed record, or None when absent or unreadable (an unreadable one is raised by the review)."""
    if text is None:
        return None
    return AuthorRecord.model_validate_json(text)
