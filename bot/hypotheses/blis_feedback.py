"""What a promotion feeds back to BLIS and OpenEvolve: only what its evidence supports, with the numbers.

The seed's loop back: a refuted hypothesis asks for a structural-model
hypothesis (Track A), a BLIS enhancement (Track B) or a re-evolution (Track C);
an equivalence guard refuted by being better than its margin is no regression,
and asks to state the claim as the improvement instead (``bot.model.better``).
Beyond refutations, a recommendation is made only when the evidence shows it:

- **BLIS's magnitude is off** when a measured cell's whole interval, widened
  by the cell's noise floor, lies outside the band every hypothesis document
  states (attenuation below 0.3x, amplification above 2x BLIS's change; a point
  estimate alone proves nothing on a few runs, nor a change within the noise
  floor), said with both numbers; the rule is ``bot.stats.guards.magnitude_gap``,
  the one the verdict's flags use; for a scheduling policy the gap is
  the translation's (a placement scorer, not a queue order), not the
  simulator's latency model;
- **the gain may not be the mechanism's** when the mechanism check found it
  spread evenly over every workload, or larger elsewhere than on the
  evolved-for workload (``bot.stats.guards``); a change within the noise floor
  or a workload without reports establishes no gain, so it recommends nothing;
- **a claim not testable as translated** asks for a re-evolution without the
  signal llm-d cannot supply, once per signal set (the Track B freshness line
  on the same signal says nothing new); one whose mechanism rests on logic gate 1
  found dead (``bot.hypotheses.dead_logic``) asks for one on what llm-d sends.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.hypotheses.dead_logic import DEAD_END, LEAD
from bot.model import Direction, Effect, Hypothesis, PolicyKind, Track, Verdict, VerdictStatus
from bot.model.better import better_than_margin
from bot.model.metrics import METRICS, short_metric

#: Mechanism-check flags that show something about where the gain is (bot.stats.guards.mechanism_flags).
_SPREAD = "gain may not come from the evolved mechanism"
_ELSEWHERE = "is not the most improved"


@dataclass(frozen=True)
class Recommendation:
    hypothesis: str
    kind: str  # structural-model hypothesis | BLIS enhancement | fitness dimension | re-evolution | claim re-statement
    text: str
    link: str = ""  # the feedback issue filed for it, when one was


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%"


def _measured(v: Verdict) -> str:
    """'e2e_p95 +9.0% (-1.0% to +19.0%) at load-spikes @ 30 req/s; ...' or 'no cell measured'."""
    cells = [
        f"{e.metric} {_pct(e.rel_change)} ({_pct(e.ci_low)} to {_pct(e.ci_high)}) at {e.workload} @ {e.rate:g} req/s"
        for e in v.effects
    ]
    return "; ".join(cells) if cells else "no cell measured"


def _signals(h: Hypothesis) -> str:
    return ", ".join(f"`{s}`" for s in h.signals) if h.signals else "the signals the evolved logic reads"


def _refuted(h: Hypothesis, v: Verdict) -> Recommendation | None:
    if v.status is not VerdictStatus.REFUTED:
        return None
    if h.track is Track.A:
        what = f"`{h.prediction.metric}` {h.prediction.direction.value}" if h.prediction else h.title
        blis = (
            f" by {_pct(h.prediction.blis_magnitude)}"
            if h.prediction and h.prediction.blis_magnitude is not None
            else ""
        )
        return Recommendation(
            h.id,
            "structural-model hypothesis",
            f"BLIS predicted {what}{blis}; llm-d measured {_measured(v)}. Open a BLIS structural-model hypothesis on "
            f"{_signals(h)} and re-check their modelled freshness.",
        )
    if h.track is Track.B:
        return Recommendation(
            h.id,
            "BLIS enhancement",
            f"The gap `{h.source}` changed the outcome in llm-d ({_measured(v)}). Model it in BLIS, and add an "
            "OpenEvolve fitness dimension that penalizes sensitivity to it.",
        )
    if better_than_margin(h, v):
        # An equivalence refuted on the better side: the plugin is faster than the claim allowed, no regression to
        # re-evolve against; what is wrong is the claim, which should say the improvement.
        assert h.prediction is not None
        better = "decrease" if METRICS[short_metric(h.prediction.metric)].better == "lower" else "increase"
        return Recommendation(
            h.id,
            "claim re-statement",
            f"The plugin is better than the ±{h.prediction.margin:.0%} margin on `{h.workloads[0]}` ({_measured(v)}), "
            f"not a regression. State the claim as an improvement (`{h.prediction.metric}` {better}) instead of an "
            "equivalence in the next promotion.",
        )
    return Recommendation(
        h.id,
        "re-evolution",
        f"The plugin regressed `{h.workloads[0]}` ({_measured(v)}). Re-evolve with a regression constraint on it, "
        "or scope the plugin away from that workload.",
    )


def _off_band(p: float, e: Effect) -> str | None:
    """How a cell sits against BLIS's magnitude ``p`` when its interval widened by its noise floor lies outside the
    band the hypothesis documents, by the rule the verdict's flags use (``bot.stats.guards.magnitude_gap``: the
    report's detail, its feedback and the PR must not disagree on it); None inside."""
    from bot.stats.guards import AMPLIFICATION, ATTENUATION, magnitude_gap

    gap = magnitude_gap(p, e)
    if gap is None:
        return None
    return {
        "opposite": "opposite to BLIS's sign",
        "attenuated": f"attenuated below {ATTENUATION:g}x BLIS's value",
        "amplified": f"amplified beyond {AMPLIFICATION:g}x BLIS's value",
    }[gap[0]]


def _placement_check(pairs: list[tuple[Hypothesis, Verdict]]) -> str:
    """Which hypothesis tests the placement a scheduling plugin does instead of BLIS's queue order."""
    for h, v in pairs:
        if h.source == "queue-ordering-authority":
            return f"{h.id} (queue-ordering-authority, {v.status.value}) tests that placement on its own"
    return "Map C `queue-ordering-authority` names that change"


def _magnitude(h: Hypothesis, v: Verdict, kind: PolicyKind, pairs) -> Recommendation | None:
    """BLIS's magnitude is kept only to flag attenuation (< 0.3x) or amplification (> 2x), as every hypothesis
    document says; a cell is fed back when its whole interval lies outside that band (an interval that merely
    excludes BLIS's value, 0.33x say, is the documented tolerance, not a calibration error). A scheduling policy
    changed mechanism in translation (a placement scorer, not a queue order), so its gap is the translation's and
    says nothing about the simulator's latency model."""
    p = h.prediction
    if p is None or p.blis_magnitude is None or p.direction not in (Direction.DECREASE, Direction.INCREASE):
        return None
    if v.status is VerdictStatus.REFUTED:  # the refutation already says what was measured
        return None
    off = [(e, how) for e in v.effects if (how := _off_band(p.blis_magnitude, e))]
    if not off:
        return None
    cells = "; ".join(
        f"{_pct(e.rel_change)} ({_pct(e.ci_low)} to {_pct(e.ci_high)}) at {e.workload} @ {e.rate:g} req/s, {how}"
        for e, how in off
    )
    said = f"BLIS predicted `{p.metric}` {_pct(p.blis_magnitude)}; llm-d measured {cells}."
    if kind is PolicyKind.SCHEDULING:
        return Recommendation(
            h.id,
            "re-evolution",
            f"{said} The translation changed the mechanism: BLIS's OrderQueue reorders each instance's queue, the "
            "plugin only places requests where the evolved order would serve them earlier, so the gap measures what "
            f"placement keeps of the gain, not BLIS's latency model; {_placement_check(pairs)}. To carry the gain "
            "over, evolve the policy as a routing policy (placement is what llm-d deploys) rather than calibrate the "
            "simulator.",
        )
    workloads = ", ".join(dict.fromkeys(e.workload for e, _ in off))
    return Recommendation(
        h.id,
        "structural-model hypothesis",
        f"{said} Calibrate the simulator's latency model on {workloads}.",
    )


def _mechanism(h: Hypothesis, v: Verdict) -> Recommendation | None:
    shown = [f for f in v.flags if f.startswith(_SPREAD) or _ELSEWHERE in f]
    if not shown:
        return None
    return Recommendation(
        h.id,
        "fitness dimension",
        f"The mechanism check found: {'; '.join(shown)}. Check whether the evolved mechanism or a general overhead "
        "change causes the gain before re-evolving.",
    )


def _not_testable(h: Hypothesis, v: Verdict) -> Recommendation | None:
    if v.status is not VerdictStatus.NOT_TESTABLE or h.track is not Track.A:
        return None
    reason = h.not_testable or ""
    if reason.startswith(LEAD):  # no held signal: the logic it rests on never runs in llm-d
        logic = reason.removeprefix(LEAD).lstrip(", ").removesuffix(DEAD_END)
        return Recommendation(
            h.id,
            "re-evolution",
            f"This claim could not be tested: its mechanism rests on logic that cannot act in llm-d, {logic}. "
            "Re-evolve so the mechanism acts on what llm-d sends the plugin (the SLO classes critical, standard "
            "and sheddable; the signals it supplies) so the claim can transfer.",
        )
    # the signals the reason names are the ones the plugin holds constant (bot.hypotheses.signals)
    dead = [s for s in h.signals if f"`{s}`" in (h.not_testable or "")] or h.signals
    them = "it" if len(dead) == 1 else "them"
    listed = ", ".join(f"`{s}`" for s in dead) or "a signal"
    return Recommendation(
        h.id,
        "re-evolution",
        f"This claim could not be tested: its mechanism reads {listed}, which llm-d cannot supply, so the "
        f"translated plugin holds {them} constant. Re-evolve with {them} removed from the simulated snapshot (or "
        "replaced by a signal llm-d has) so the claim can transfer.",
    )


def recommendations(
    pairs: list[tuple[Hypothesis, Verdict]], kind: PolicyKind = PolicyKind.ROUTING
) -> list[Recommendation]:
    """Every recommendation the evidence supports, in hypothesis order; ``kind`` is the promoted policy's (what a
    magnitude gap can blame depends on whether the translation kept the mechanism)."""
    recs: list[Recommendation] = []
    seen: set[tuple[str, str]] = set()  # a metric-wide mechanism flag reaches every claim on it: say it once
    for h, v in pairs:
        for make in (_refuted, _not_testable, lambda h, v: _magnitude(h, v, kind, pairs), _mechanism):
            r = make(h, v)
            if r is not None and (r.kind, r.text) not in seen:
                seen.add((r.kind, r.text))
                recs.append(r)
    return recs
