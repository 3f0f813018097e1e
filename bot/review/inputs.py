"""What the independent reviewer sees at each gate, read from the promotion branch through the forge.

The design's "review agent receives" lists, as committed artifacts:

- gate 1: the translated plugin package, the translation report and summary, the EndpointPickerConfig,
  the registration in the fork's runner; the BLIS original (the evolved program) as untrusted data;
- gate 2: the hypothesis documents and the translation summary; the BLIS claims as untrusted data;
- gate 3: the Go check results, the verdicts with their per-cell evidence, the hypothesis predictions
  and the evaluation spec; the BLIS claims as untrusted data.

The translation dictionary, the gap inventory and the BLIS standards are in the shared reference block.
Earlier findings come from the state; the author's responses from the branch. Nothing else is read, so
nothing the author said outside the branch can reach the reviewer.
"""

from __future__ import annotations

import json

from bot.agents.record import AuthorRecord
from bot.agents.schemas import EarlierFinding, ReviewerInput
from bot.agents.untrusted import untrusted_inputs
from bot.model import Finding

RUNNER_GO = "cmd/epp/runner/runner.go"


def gate_artifacts(gate: int, ctx) -> dict[str, str]:
    paths = ctx.paths
    wanted: list[str] = []
    if gate == 1:
        wanted = [paths.translation_report, paths.translation_json, RUNNER_GO]
        summary = ctx.read(paths.translation_json)
        if summary:
            data = json.loads(summary)
            package_dir = data.get("package_dir", "")
            wanted += [p for p in ctx.list(package_dir) if not p.endswith("_test.go")] if package_dir else []
            wanted.append(paths.epp_config(data.get("plugin_type", "")))
    elif gate == 2:
        wanted = [paths.translation_json, *ctx.list(paths.hypotheses_dir)]
    elif gate == 3:
        wanted = [paths.go_checks, paths.verdicts_json, paths.evaluation_spec, *ctx.list(paths.hypotheses_dir)]
    out = {}
    for p in wanted:
        text = ctx.read(p)
        if text is not None:
            out[p] = text
    return out


def earlier_findings(gate: int, state, current: list[Finding], record: AuthorRecord | None) -> list[EarlierFinding]:
    """Findings of the rounds since the gate was last decided, with what became of each."""
    rounds = state.reviews.get(gate, [])[-state.review_round :] if state.review_round else []
    out = []
    for rnd in rounds:
        for n, f in enumerate(rnd.findings, 1):
            response = record.response_for(f) if record else None
            if response is not None:
                status = "author says fixed" if response.action == "fixed" else "author justified"
            elif f.by is None and not any(f.key() == c.key() for c in current):
                status = "gone"
            else:
                status = "open"
            out.append(
                EarlierFinding(
                    id=f"R{rnd.round}.{n}",
                    round=rnd.round,
                    severity=f.severity.value,
                    check=f.check,
                    file=f.file,
                    line=f.line,
                    message=f.message,
                    status=status,
                )
            )
    return out


def reviewer_input(
    gate: int, round_: int, ctx, deterministic: list[Finding], record: AuthorRecord | None
) -> ReviewerInput:
    return ReviewerInput(
        gate=gate,
        round=round_,
        branch=ctx.branch,
        artifacts=gate_artifacts(gate, ctx),
        untrusted=untrusted_inputs(gate, ctx.request),
        deterministic=[
            f.model_dump(mode="json", include={"severity", "check", "file", "line", "source_line", "message"})
            for f in deterministic
        ],
        earlier=earlier_findings(gate, ctx.state, deterministic, record),
        responses=list(record.responses) if record else [],
    )
