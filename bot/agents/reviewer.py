"""The independent reviewer: a fresh Claude session per checklist item, over the committed artifacts only.

Its only input is a ``ReviewerInput`` (committed artifacts, untrusted inputs
as data, the deterministic findings, earlier rounds' findings and the author's
committed responses); the request is rendered from that and the gate's
template, nothing else. With ``perspectives: per-item`` each checklist item
gets its own call over the same cached prefix (reference, role, artifacts),
as the BLIS convergence review runs several perspectives per gate; ``single``
asks once for the whole checklist.

The reviewer can add findings and weigh the author's responses. It cannot
remove a finding of the deterministic checklist and it cannot approve.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.agents.client import LLMClient
from bot.agents.prompts import PromptRequest, artifacts_block, as_data, checklist, load
from bot.agents.schemas import ReviewerInput, ReviewReport
from bot.model import Finding, Severity


@dataclass
class ReviewOutcome:
    findings: list[Finding] = field(default_factory=list)
    accepted: dict[str, bool] = field(default_factory=dict)  # author response id -> accepted by every verdict
    summaries: list[str] = field(default_factory=list)


def requests(inp: ReviewerInput, perspectives: str) -> list[PromptRequest]:
    """The calls one review round makes: identical first three blocks, one task each."""
    prompt = load(f"reviewer/gate{inp.gate}.md.j2")
    role_text = prompt.render_block("system", gate=inp.gate)
    context = artifacts_block(
        f"Gate {inp.gate} artifacts on `{inp.branch}` (as committed)", inp.artifacts, inp.untrusted
    )
    common = {
        "gate": inp.gate,
        "round": inp.round,
        "deterministic_json": as_data("checklist findings", inp.deterministic),
        "earlier_json": as_data("earlier findings", [e.model_dump(mode="json") for e in inp.earlier]),
        "responses": [r.model_dump(mode="json") for r in inp.responses],
        "responses_json": as_data("author responses", [r.model_dump(mode="json") for r in inp.responses]),
    }
    items: list[dict | None]
    if perspectives == "single":
        items = [None]
    else:
        items = [{"number": n, "text": text} for n, text in checklist(inp.gate)]
        if inp.responses:
            items.append({"number": "R", "text": "Author responses"})
    out = []
    for item in items:
        label = f"gate {inp.gate} review round {inp.round}" + (f", item {item['number']}" if item else "")
        out.append(
            PromptRequest(
                prompt=prompt.tag,
                role="reviewer",
                role_text=role_text,
                context=context,
                task=prompt.render_block("task", item=item, **common),
                output=ReviewReport,
                gate=inp.gate,
                round=inp.round,
                label=label,
                extra={"item": item["number"] if item else None},
            )
        )
    return out


def validator(inp: ReviewerInput, item: str | None):
    """Checks only the caller can make: items that exist, every response weighed. A finding's anchor is not
    checked here (``anchored``): one bad path must not fail the whole reply, and with it the gate."""
    numbers = {int(n) for n, _ in checklist(inp.gate)}
    response_ids = {r.id for r in inp.responses}
    earlier_ids = {e.id for e in inp.earlier}
    must_weigh = bool(inp.responses) and item in (None, "R")

    def check(report: ReviewReport) -> list[str]:
        errors = []
        for i, f in enumerate(report.findings):
            if f.checklist_item not in numbers:
                errors.append(
                    f"findings[{i}].checklist_item {f.checklist_item}: the checklist has items {sorted(numbers)}"
                )
            if f.recurs is not None and f.recurs not in earlier_ids:
                errors.append(f"findings[{i}].recurs {f.recurs!r} is not an earlier finding id")
        weighed = [v.response_id for v in report.responses]
        unknown = sorted(set(weighed) - response_ids)
        if unknown:
            errors.append(f"responses: unknown response ids {unknown}; the ids are {sorted(response_ids)}")
        if must_weigh and set(weighed) != response_ids:
            errors.append(f"responses: give one verdict for each of {sorted(response_ids)}")
        return errors

    return check


def review(llm: LLMClient, inp: ReviewerInput, *, perspectives: str = "per-item") -> ReviewOutcome:
    outcome = ReviewOutcome()
    verdicts: dict[str, list[bool]] = {}
    seen = set()
    dropped: list[str] = []
    for req in requests(inp, perspectives):
        report = llm.ask(req, validator(inp, req.extra["item"]))
        outcome.summaries.append(report.summary)
        for v in report.responses:
            verdicts.setdefault(v.response_id, []).append(v.accepted)
        for f in report.findings:
            line, why = anchored(inp, f)
            if why:
                llm.log(f"{req.label}: dropped a finding: {why}")
                dropped.append(why)
                continue
            finding = Finding(
                severity=Severity(f.severity),
                check=f"G{inp.gate}.{f.checklist_item}",
                file=f.file,
                line=line,
                message=f.message,
                fix=f.suggested_fix,
                by=llm.settings.model,
                recurring=f.recurs is not None,
            )
            key = (finding.check, finding.file, finding.line, finding.message)
            if key not in seen:
                seen.add(key)
                outcome.findings.append(finding)
    outcome.accepted = {rid: all(vs) for rid, vs in verdicts.items()}
    if dropped:
        outcome.findings.append(dropped_finding(dropped, by=llm.settings.model))
    return outcome


def anchored(inp: ReviewerInput, f) -> tuple[int | None, str]:
    """(the finding's line, or None when it names no line the file has; why the finding is dropped, or '').

    A finding on a file the reviewer was not shown (a hallucinated or misspelt path) anchors nothing and
    cannot be checked: it is dropped and reported, the rest of the reply is kept. A line past the end of a
    real file only loses the line."""
    if f.file is None:
        return None, ""
    text = inp.artifacts.get(f.file)
    if text is None:
        where = f"{f.file}:{f.line}" if f.line else f.file
        return None, f"item {f.checklist_item}, {f.severity} on `{where}` (not on the branch): {f.message}"[:400]
    return (f.line if f.line is not None and f.line <= len(text.splitlines()) else None), ""


def dropped_finding(dropped: list[str], *, by: str) -> Finding:
    """One non-blocking finding that reports what the reviewer raised on files that are not on the branch."""
    n = len(dropped)
    return Finding(
        severity=Severity.SUGGESTION,
        check=DROPPED_CHECK,
        message=f"Claude's reviewer raised {n} finding{'s' if n != 1 else ''} on a file that is not among the "
        "reviewed artifacts, so it anchors nothing and was dropped: "
        + "; ".join(dropped[:8])
        + (f" (and {n - 8} more)" if n > 8 else ""),
        fix="if one applies to a file that does exist, request changes with it",
        by=by,
    )


DROPPED_CHECK = "reviewer.finding-dropped"
