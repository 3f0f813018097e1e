"""Gate 3's findings on what the evidence says beyond the verdicts' counts: an undecided cell whose interval lies
wholly on the wrong side, requests the evolved plugin lost beyond the baseline's, and arms measured on different
testbeds. Each is something "0 regressed" or a clean checklist would pass without a word (``bot.review.gate3``
runs them; split from it to keep each module readable).
"""

from __future__ import annotations

import json

from bot.model import Finding, Severity, Track, Verdict


def indicated(ctx, hypotheses, recorded: dict[str, Verdict]) -> list[Finding]:
    """An undecided cell whose whole interval lies on the wrong side (a regression beyond the margin, a move against
    the prediction): its refutation was not significant after multiplicity control, so no count calls it a
    regression, and a gate that passed "0 regressed" without a word would pass a plugin measured worse. IMPORTANT:
    the person deciding must weigh it (``bot.render.claims.indicated``)."""
    from bot.render.claims import indicated_cells

    out = []
    for h in hypotheses:
        for e, _ in indicated_cells(h, recorded.get(h.id)):
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G3.against-indicated",
                    file=ctx.paths.verdicts_md,
                    message=f"{h.id} at {e.workload} @ {e.rate:g} req/s: {e.reason} (interval {e.ci_low:+.1%} to "
                    f"{e.ci_high:+.1%}); the verdict stays inconclusive, and no count says regressed or refuted",
                    fix="benchmark the cell with more runs (they decide it either way), or decide the gate as if "
                    + ("it were refuted" if h.track is Track.A else "it were a regression"),
                )
            )
    return out


def requests_lost(ctx, recorded: dict[str, Verdict]) -> list[Finding]:
    """A cell where the evolved plugin lost more requests (failed or incomplete) than the baseline beyond the shedding
    guard's tolerance (``bot.render.lost``): a regression whatever the latencies, which no verdict counts (a guard
    judges its metric, and the shedding guard only holds back latency gains), so "0 regressed" would pass it.
    IMPORTANT, naming the cell, the shares and the hypotheses whose runs show it."""
    from bot.render.lost import lost_cells

    return [
        Finding(
            severity=Severity.IMPORTANT,
            check="G3.requests-lost",
            file=ctx.paths.verdicts_md,
            message=f"the evolved plugin lost {c.evolved:.1%} of requests (failed or incomplete) vs {c.baseline:.1%} "
            f"for baseline at {c.workload} @ {c.rate:g} req/s (the runs of {', '.join(c.hypotheses)}): a regression "
            "whatever the latencies, which no verdict counts as one",
            fix="find why the evolved arm's requests failed or did not complete (the runs' harness output), fix the "
            "plugin and benchmark again, or decide the gate as if it were a regression",
        )
        for c in lost_cells(recorded.values())
    ]


def _testbed_words(group: dict) -> str:
    """One testbed in plain words (findings are escaped where they are rendered)."""
    engines = [e for e in group.get("engines") or [] if isinstance(e, dict)]
    parts = [
        f"{e.get('model') or 'model not recorded'} on {e.get('accelerator') or 'accelerator not recorded'}"
        f" with {e.get('image') or 'engine image not recorded'}"
        for e in engines
    ] or ["engine not recorded"]
    harness = " ".join(str(x) for x in (group.get("harness"), group.get("harness_version")) if x) or "not recorded"
    return f"{'; '.join(parts)}; harness {harness}; cluster {group.get('cluster') or 'not recorded'}"


def testbeds(ctx) -> list[Finding]:
    """A verdict compares two arms; measured on different testbeds (another model, GPU, engine image, harness or
    cluster), the difference is the testbeds' as much as the plugin's. Stage 5 records every testbed its reports
    name; the gate raises arms that do not share one, and notes verdicts pooled over several. Every testbed but the
    one most reports ran on is named with its reports and the cells and hypotheses they enter (the engine image is
    not pinned by the experiment, so such reports are judged, and the person deciding must know where they sit)."""
    path = ctx.paths.testbed
    text = ctx.read(path)
    if not text:
        return []
    try:
        groups = [g for g in json.loads(text).get("testbeds") or [] if isinstance(g, dict)]
    except (ValueError, AttributeError):
        return [
            Finding(severity=Severity.IMPORTANT, check="G3.testbed", file=path, message="unreadable testbed record")
        ]
    if len(groups) < 2:
        return []
    from bot.bench.testbed import entered_text

    arms = {a for g in groups for a in g.get("arms") or []}
    # every testbed but the one most reports ran on names its reports and the verdicts they enter
    said = " | ".join(
        f"{g.get('reports', 0)} report(s) of {', '.join(g.get('arms') or []) or 'no arm'}: {_testbed_words(g)}"
        + (f"; {entered}" if (entered := entered_text(g)) else "")
        for g in groups
    )
    if any(set(g.get("arms") or []) != arms for g in groups):
        return [
            Finding(
                severity=Severity.IMPORTANT,
                check="G3.testbed",
                file=path,
                message=f"the arms were not measured on one testbed ({len(groups)} testbeds): {said}",
                fix="benchmark both arms on one testbed, or set the other testbed's reports aside and request "
                "changes with `rejudge:` so stage 5 judges what is comparable",
            )
        ]
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check="G3.testbed",
            file=path,
            message=f"the verdicts pool {len(groups)} testbeds, each of which ran both arms: {said}",
            fix="say in the decision which testbed the result is for, or judge each testbed's reports apart",
        )
    ]


__all__ = ["indicated", "requests_lost", "testbeds"]
