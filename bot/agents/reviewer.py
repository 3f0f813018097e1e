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
    """Checks only the caller can make: items, files and lines that exist, every response weighed."""
    numbers = {int(n) for n, _ in checklist(inp.gate)}
    lines = {p: len(t.splitlines()) for p, t in inp.artifacts.items()}
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
            if f.file is not None and f.file not in lines:
                errors.append(f"findings[{i}].file {f.file!r} is not one of the artifacts; use an exact path or null")
            elif f.file is not None and f.line is not None and f.line > lines[f.file]:
                errors.append(f"findings[{i}].line {f.line}: {f.file} has {lines[f.file]} lines")
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
    for req in requests(inp, perspectives):
        report = llm.ask(req, validator(inp, req.extra["item"]))
        outcome.summaries.append(report.summary)
        for v in report.responses:
            verdicts.setdefault(v.response_id, []).append(v.accepted)
        for f in report.findings:
            finding = Finding(
                severity=Severity(f.severity),
                check=f"G{inp.gate}.{f.checklist_item}",
                file=f.file,
                line=f.line if f.file else None,
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
    return outcome
