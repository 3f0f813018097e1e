"""Gate 3 (validation): the seed's checklist over the test results and verdicts on the branch.

- unit tests pass (rerun here, independently of stage 5's record);
- every hypothesis has a verdict, and each verdict is what the data say (recomputed from the reports);
- reports that failed validation are surfaced.
What the evidence says (Track A direction, Track B gaps, Track C regressions) is summarized for the
person deciding; a refuted hypothesis is a result, not a defect of the artifacts.
"""

from __future__ import annotations

import json

from bot.model import Finding, ReviewRound, Severity, Track, Verdict, VerdictStatus

CHECKLIST = [
    "unit tests pass",
    "every hypothesis has a verdict",
    "verdicts consistent with the data",
    "benchmark reports valid",
    "direction / gaps / regressions summarized",
]


def _verdicts(ctx) -> dict[str, Verdict] | None:
    text = ctx.read(ctx.paths.verdicts_json)
    if text is None:
        return None
    return {v["hypothesis_id"]: Verdict.model_validate(v) for v in json.loads(text)}


def review(ctx) -> list[Finding]:
    from bot.stages.hypothesize import load_hypotheses
    from bot.stages.run_validate import go_checks, judge

    findings: list[Finding] = []
    checks = go_checks(ctx)
    findings += checks.findings
    if not checks.test_ok:
        findings.append(
            Finding(
                severity=Severity.CRITICAL,
                check="G3.tests-pass",
                file=ctx.paths.go_checks,
                message=f"go test fails ({checks.tests_failed} failed)",
            )
        )
    recorded = _verdicts(ctx)
    if recorded is None:
        return [
            *findings,
            Finding(
                severity=Severity.CRITICAL,
                check="G3.verdicts",
                file=ctx.paths.verdicts_json,
                message="no verdicts on the branch",
            ),
        ]
    hypotheses = load_hypotheses(ctx)
    for h in hypotheses:
        if h.id not in recorded:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G3.verdict-missing",
                    file=ctx.paths.verdicts_json,
                    message=f"{h.id} has no verdict",
                )
            )
    fresh, reports = judge(ctx, hypotheses)
    for v in fresh:
        old = recorded.get(v.hypothesis_id)
        if old is not None and old.status is not v.status:
            findings.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check="G3.verdict-consistent",
                    file=ctx.paths.verdicts_json,
                    message=f"{v.hypothesis_id} is recorded as {old.status.value} but the data give {v.status.value}",
                    fix="rerun stage 5; never edit verdicts by hand",
                )
            )
    if reports is None:
        findings.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G3.no-results",
                file=ctx.paths.verdicts_md,
                message="no benchmark results: every hypothesis is inconclusive",
                fix="run the stage 4 plan on GPUs and pass the reports with --results",
            )
        )
    else:
        for path, reason in reports.rejected:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G3.report-invalid",
                    file=ctx.paths.verdicts_md,
                    message=f"benchmark report {path} was not used: {reason}",
                )
            )
    return findings


def notes(ctx) -> list[str]:
    """The evidence in plain words, for the person deciding gate 3."""
    from bot.stages.hypothesize import load_hypotheses

    recorded = _verdicts(ctx) or {}
    hypotheses = load_hypotheses(ctx)
    out = []
    for t, label in (
        (Track.A, "Track A (direction matches BLIS)"),
        (Track.B, "Track B (sim-to-real gaps)"),
        (Track.C, "Track C (no regression beyond 5%)"),
    ):
        hs = [h for h in hypotheses if h.track is t]
        counts = {s: sum(1 for h in hs if h.id in recorded and recorded[h.id].status is s) for s in VerdictStatus}
        out.append(
            f"{label}: {counts[VerdictStatus.CONFIRMED]} confirmed, {counts[VerdictStatus.REFUTED]} refuted, "
            f"{counts[VerdictStatus.INCONCLUSIVE]} inconclusive of {len(hs)}"
        )
        for h in hs:
            v = recorded.get(h.id)
            if v and (v.status is VerdictStatus.REFUTED or v.flags):
                out.append(
                    f"{h.id} {v.status.value}: {v.summary}" + (f" Flags: {'; '.join(v.flags)}" if v.flags else "")
                )
    return out


__all__ = ["CHECKLIST", "ReviewRound", "notes", "review"]
