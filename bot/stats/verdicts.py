"""Stage 5: decide each hypothesis from llm-d-benchmark reports, with the noise taken seriously.

Gate 3 asks a person to believe that the evolved plugin moves a metric in the
direction BLIS predicted. A sign of a difference (what sim2real reports today)
is not evidence; this module says, per hypothesis, CONFIRMED / REFUTED /
INCONCLUSIVE with the numbers behind it, and is deliberately slow to confirm.

Unit of evidence: a *cell* = (hypothesis, workload, rate) on the hypothesis's
metric. Each repetition of a treatment contributes one aggregate value (mean
TTFT of the run, p95 E2E of the run ...), so a cell is two small samples of
n = 2..20 run-level values (baseline and evolved, independent stand-ups). The
per-cell rule lives in ``bot.stats.rule`` (one vectorised implementation for
real reports and for the simulations that check it), and ``bot.stats.measured_cell``
applies it to one cell of the reports; in short:

- outlier runs (x1.5 from the arm median and beyond 5 robust sd, or x3 in
  any case) are flagged, listed and excluded from every estimate;
- the noise floor is ``T_eff = max(5%, 2 x CV of the baseline repetitions)``; a
  baseline CV above 15% halts the cell as INCONCLUSIVE ("cluster too noisy"),
  as do fewer than 2 retained repetitions in an arm;
- the test is one-sided Welch t on log values (why not Mann-Whitney U: its
  smallest one-sided p-value is 1 / C(2n, n), 0.05 at n = 3 per arm, so no
  n <= 3 claim could ever be confirmed; run-level aggregates average thousands
  of requests, so across repetitions they are close to log-normal; Welch, not
  Student, because the evolved plugin can change the run-to-run variance);
- the interval shown is the two-sided 1 - 2 alpha Welch interval of the ratio
  of geometric means, the interval the one-sided tests invert (a percentile
  bootstrap of 3-5 repetitions is too narrow, and one bad run dominates it).

Decision per cell (``level`` = the level multiplicity control gives the
hypothesis, see below):

- DECREASE / INCREASE: CONFIRMED when the test's p <= level AND the change
  exceeds T_eff in the predicted direction. REFUTED on the mirror-image
  evidence (opposite p <= the refutation level, change beyond T_eff the other
  way). A significant move the other way inside the noise floor is not a
  contradiction: INCONCLUSIVE, said so. An effect smaller than T_eff is never
  called real, however small its p-value.
- EQUIVALENT: TOST within ±margin on the log scale (margin on the relative
  change). CONFIRMED when both one-sided tests reject; REFUTED when the test
  that the shift lies beyond the margin (on the side the estimate lies) rejects.
- NO_WORSE: one one-sided test against the margin on the metric's bad side
  (``bot.model.metrics.METRICS[m].better``); REFUTED when "more than the margin
  worse" is significant.
- The noise floor widens nothing for EQUIVALENT / NO_WORSE: a noisy cluster must
  not make equivalence easier to claim; the tests' own power handles it.

Multiple comparisons (``bot.stats.multiplicity``): the family is every
benchmarked hypothesis of the promotion, not a track, so at most alpha of
promotions confirm any false hypothesis. A hypothesis's confirmation p-value is
the largest over its cells (every cell must confirm: an intersection-union
test), its refutation p-value the smallest times its number of cells. Weighted
Holm runs over the confirmation family with the weights of the evaluation
spec's ``DecisionRule`` (equal weights, i.e. Holm, without one), and plain Holm
over the refutation family. Halted cells are not tested (p = 1).

Aggregation over a hypothesis's cells (BLIS: "one contradicting seed means not
confirmed"): CONFIRMED only when every cell confirms. For a directional claim,
REFUTED when some cell refutes and none confirms; confirmed and refuted cells
together are INCONCLUSIVE with the flag "parameter-dependent" (BLIS's
"Inconclusive - parameter-dependent"). For EQUIVALENT / NO_WORSE a single
refuted cell refutes: a regression anywhere is a regression.

Not testable as translated: a hypothesis whose mechanism reads a signal the
plugin sets constant, or rests on logic gate 1 found dead in the plugin
(``Hypothesis.not_testable``), is not measured, takes no
share of alpha and gets NOT_TESTABLE with the reason, never INCONCLUSIVE
("add repetitions" would not help) and never CONFIRMED.

Guards (``bot.stats.guards``): shedding that can fake a latency gain demotes a
confirmed latency cell to INCONCLUSIVE; BLIS magnitude and the mechanism check
add flags for the human at gate 3.

The false-confirm rate and the power of all of this are checked by simulation
in ``tests/stats/``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from bot.model import Direction, Hypothesis, Track, Verdict, VerdictStatus
from bot.model.evidence import HELD_NOISE_FLOOR, HELD_SHEDDING
from bot.stats import StatsError, explain, guards
from bot.stats.cells import ReportIndex, Reports, cells_of, rate_key
from bot.stats.decide import CONFIRMED, INCONCLUSIVE, REFUTED, Claim, aggregate, decide_from_p, level_if_confirmed
from bot.stats.design import DecisionRule, default_rule
from bot.stats.judged import judged_arms, judged_requests
from bot.stats.measured_cell import MeasuredCell, better_side, measure, show_decision_look
from bot.stats.multiplicity import holm
from bot.stats.unjudged import not_benchmarked_verdict, not_testable_verdict

__all__ = ["evaluate", "holm", "not_testable_verdict"]

_DIRECTIONAL = (Direction.DECREASE, Direction.INCREASE)


def evaluate(
    hypotheses: Iterable[Hypothesis],
    reports: Reports,
    *,
    evolved_for: str | None = None,
    alpha: float | None = None,
    blis_magnitudes: Mapping[str, float] | None = None,
    decision: DecisionRule | None = None,
) -> list[Verdict]:
    """One verdict per hypothesis, in input order. See the module docstring for every rule.

    ``decision`` is the evaluation spec's decision rule (alpha and the weights of
    the multiplicity procedure); without it, Holm over the whole family at
    ``alpha`` (0.05). ``blis_magnitudes`` (hypothesis id -> BLIS relative change)
    overrides ``Prediction.blis_magnitude``. Hypotheses without a prediction are
    not decided by benchmarks; they get an INCONCLUSIVE verdict that says so, so
    nothing disappears from the evidence. Hypotheses the translated plugin cannot test
    (``Hypothesis.not_testable``) get NOT_TESTABLE with the reason and are left out of the
    multiplicity family.
    """
    if decision is None:
        decision = default_rule(0.05 if alpha is None else alpha)
    elif alpha is not None and alpha != decision.alpha:
        raise StatsError(f"alpha={alpha!r} differs from the decision rule's alpha {decision.alpha!r}; pass one of them")
    alpha = decision.alpha
    hyps = list(hypotheses)
    ids = [h.id for h in hyps]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise StatsError(f"hypotheses: duplicate ids {dup}; every hypothesis needs its own id")
    index = ReportIndex.build(reports)
    magnitudes = dict(blis_magnitudes or {})

    cells: dict[str, list[MeasuredCell]] = {}
    for h in hyps:
        if not h.benchmarked:
            continue
        metric = _short_metric(h)
        cells[h.id] = [measure(h, metric, wl, rate, index, decision) for wl, rate in cells_of(h, index)]

    _judge(hyps, cells, decision, index)
    requests = getattr(reports, "requests", None)
    for cs in cells.values():
        for c in cs:  # the guard reads the runs the deciding look judged, as the tests did
            if c.rate is not None:
                _shedding_guard(c, judged_requests(index, requests, c.workload, c.rate, c.metric, c.runs_judged), alpha)

    mechanism = _mechanism(hyps, index, evolved_for, decision)
    verdicts = []
    for h in hyps:
        if h.not_testable:
            verdicts.append(not_testable_verdict(h))
            continue
        if h.prediction is None:
            verdicts.append(not_benchmarked_verdict(h))
            continue
        magnitude = magnitudes.get(h.id, h.prediction.blis_magnitude)
        verdicts.append(_verdict(h, cells[h.id], magnitude, mechanism.get(h.id, []), decision, len(cells)))
    return verdicts


def _short_metric(h: Hypothesis) -> str:
    from bot.model.metrics import MetricError, short_metric

    assert h.prediction is not None
    try:
        return short_metric(h.prediction.metric)
    except MetricError as exc:
        raise StatsError(f"hypothesis {h.id}: {exc}") from None


# --------------------------------------------------------------------------
# Multiple comparisons and decisions
# --------------------------------------------------------------------------


def _judge(
    hyps: list[Hypothesis], cells: Mapping[str, list[MeasuredCell]], decision: DecisionRule, index: ReportIndex
) -> None:
    """Run the batch decision (``bot.stats.decide``) on this one promotion and write the results into the cells."""
    claims = [
        Claim(h.id, h.prediction.direction.value, h.prediction.margin, "", tuple(range(len(cells[h.id]))))
        for h in hyps
        if h.prediction is not None and h.id in cells
    ]
    if not claims:
        return
    pc = {c.id: np.array([[x.pc_eff for x in cells[c.id]]]) for c in claims}
    pr = {c.id: np.array([[x.pr_eff for x in cells[c.id]]]) for c in claims}
    dec = decide_from_p(claims, pc, pr, decision)
    # Where the noise floor held a cell, the decision's p for it is 1 (no p-value overrides the floor); the
    # adjusted p people read is weighted Holm over the tests' own p-values, and held_by says what held it.
    tests = {c.id: np.array([[x.p_confirm if x.tested else x.pc_eff for x in cells[c.id]]]) for c in claims}
    shown = decide_from_p(claims, tests, pr, decision).adjusted
    unmeasured = {c.id for c in claims if not any(x.tested for x in cells[c.id])}
    for j, claim in enumerate(claims):
        level_if = level_if_confirmed(dec, decision, unmeasured, j)
        for k, c in enumerate(cells[claim.id]):
            c.level_if = level_if
            c.p_adjusted = float(dec.adjusted[0, j])
            c.alpha = decision.alpha
            c.hyp_confirmed = bool(dec.status[0, j] == CONFIRMED)
            c.level = float(dec.level[0, j])
            c.level_refute = float(dec.level_refute[0, j])
            c.p_adjusted_refute = float(dec.adjusted_refute[0, j])
            if c.tested:
                explain.decide(c, int(dec.cell_status[claim.id][0, k]))
                if c.looks and c.status is not VerdictStatus.INCONCLUSIVE:
                    show_decision_look(c, index)
        held = [c for c in cells[claim.id] if explain.within_floor(c)]
        for c in held:
            c.held_by = HELD_NOISE_FLOOR
        for c in cells[claim.id] if held else []:
            c.p_adjusted = float(shown[0, j])


def _shedding_guard(c: MeasuredCell, index: ReportIndex, alpha: float) -> None:
    if c.rate is None or not c.baseline.size:
        return
    c.lost = guards.lost_shares(index, c.workload, rate_key(c.rate))
    flag, lost_more = guards.shedding(index, c.workload, rate_key(c.rate), c.where, alpha, claim=c)
    if flag:
        c.flags.append(flag)
    if lost_more and c.status is VerdictStatus.CONFIRMED and better_side(c.metric) == "lower":
        assert c.lost is not None  # the guard found more lost, so it counted them
        c.status = VerdictStatus.INCONCLUSIVE
        c.held_by = HELD_SHEDDING
        # a no-worse or equivalence guard is no "claim", and its reason must not call it one
        p = c.hypothesis.prediction
        kind = "guard" if p is not None and p.direction in (Direction.NO_WORSE, Direction.EQUIVALENT) else "claim"
        c.reason = (
            f"{guards.SHED_DEMOTED}: the evolved plugin lost {c.lost[1]:.1%} of requests (failed or incomplete) "
            f"vs {c.lost[0]:.1%} for baseline, which can hide latency, so a latency {kind} is not confirmed "
            "whatever its p-value"
        )


def _mechanism(
    hyps: list[Hypothesis], index: ReportIndex, evolved_for: str | None, decision: DecisionRule
) -> dict[str, list[str]]:
    if not evolved_for:
        return {}
    by_metric: dict[str, list[str]] = {}
    for h in hyps:
        if h.track == Track.A and h.benchmarked:
            by_metric.setdefault(_short_metric(h), []).append(h.id)
    out: dict[str, list[str]] = {}
    for metric in sorted(by_metric):
        flags = guards.mechanism_flags(metric, better_side(metric), index, evolved_for, judged_arms(index, decision))
        for hid in by_metric[metric]:
            out.setdefault(hid, []).extend(flags)
    return out


# --------------------------------------------------------------------------
# Verdict per hypothesis
# --------------------------------------------------------------------------


def _aggregate(h: Hypothesis, cs: list[MeasuredCell]) -> tuple[VerdictStatus, list[str]]:
    assert h.prediction is not None
    codes = np.array([[_CODE.get(c.status, INCONCLUSIVE) for c in cs]], dtype=np.int8).reshape(1, len(cs))
    status = _STATUS[int(aggregate(h.prediction.direction.value, codes)[0])]
    flags: list[str] = []
    if (
        h.prediction.direction in _DIRECTIONAL
        and status is VerdictStatus.INCONCLUSIVE
        and any(c.status is VerdictStatus.CONFIRMED for c in cs)
        and any(c.status is VerdictStatus.REFUTED for c in cs)
    ):
        flags.append("parameter-dependent: confirmed in some cells, refuted in others")
    return status, flags


_CODE = {VerdictStatus.CONFIRMED: CONFIRMED, VerdictStatus.REFUTED: REFUTED, VerdictStatus.INCONCLUSIVE: INCONCLUSIVE}
_STATUS = {v: k for k, v in _CODE.items()}


def _verdict(
    h: Hypothesis, cs: list[MeasuredCell], magnitude: float | None, mech: list[str], decision: DecisionRule, family: int
) -> Verdict:
    status, agg_flags = _aggregate(h, cs)
    flags: list[str] = []
    for c in cs:  # BLIS's magnitude read off the effect shown, by the rule its feedback applies (bot.stats.guards)
        flags.extend(c.flags)
        if c.direction in _DIRECTIONAL and (e := c.effect()) is not None:
            flags.extend(guards.magnitude_flags(magnitude, e))
    flags.extend(agg_flags + explain.indicated_flags(cs, status))
    flags.extend(mech)
    flags = list(dict.fromkeys(flags))  # de-duplicate, keep order
    effects = [e for e in (c.effect() for c in cs) if e is not None]
    return Verdict(
        hypothesis_id=h.id,
        status=status,
        summary=explain.summary(h, cs, status, magnitude, decision, family, bool(mech)),
        effects=effects,
        flags=flags,
    )
