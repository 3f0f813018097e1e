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
real reports and for the simulations that check it); in short:

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

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from bot.model import Direction, Effect, Hypothesis, Track, Verdict, VerdictStatus
from bot.model.evidence import HELD_NOISE_FLOOR, HELD_SHEDDING
from bot.stats import StatsError, explain, guards, rule, sequential
from bot.stats.cells import ReportIndex, Reports, cells_of, rate_key, unusable
from bot.stats.decide import CONFIRMED, INCONCLUSIVE, REFUTED, Claim, aggregate, decide_from_p, level_if_confirmed
from bot.stats.design import DecisionRule, default_rule
from bot.stats.judged import judged_arms, judged_requests
from bot.stats.multiplicity import holm
from bot.stats.rule import MAX_CV, MIN_REPS
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

    cells: dict[str, list[_Cell]] = {}
    for h in hyps:
        if not h.benchmarked:
            continue
        metric = _short_metric(h)
        cells[h.id] = [_measure(h, metric, wl, rate, index, decision) for wl, rate in cells_of(h, index)]

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


# --------------------------------------------------------------------------
# Cells
# --------------------------------------------------------------------------


def _short_metric(h: Hypothesis) -> str:
    from bot.model.metrics import MetricError, short_metric

    assert h.prediction is not None
    try:
        return short_metric(h.prediction.metric)
    except MetricError as exc:
        raise StatsError(f"hypothesis {h.id}: {exc}") from None


def _better(metric: str) -> str:
    from bot.model.metrics import METRICS

    return METRICS[metric].better


@dataclass
class _Cell:
    hypothesis: Hypothesis
    metric: str
    workload: str
    rate: float | None
    baseline: np.ndarray = field(default_factory=lambda: np.empty(0))
    evolved: np.ndarray = field(default_factory=lambda: np.empty(0))
    n_b: int = 0  # retained runs (outliers excluded)
    n_e: int = 0
    keep_b: np.ndarray | None = None  # masks of the retained runs in `baseline` / `evolved`
    keep_e: np.ndarray | None = None
    excluded: list[str] = field(default_factory=list)
    status: VerdictStatus | None = None
    reason: str = ""
    flags: list[str] = field(default_factory=list)
    tested: bool = False
    rel: float = math.nan
    ci: tuple[float, float] = (math.nan, math.nan)
    cv: float = math.nan
    t_eff: float = math.nan
    test: str = ""
    p_confirm: float = 1.0  # the p people read: pc_eff when the noise floor allowed the test, else the test's own
    p_refute: float = 1.0
    pc_eff: float = 1.0  # the p the decision compares: conditions folded in (rule.effective_p), repeated if sequential
    pr_eff: float = 1.0
    p_adjusted: float = 1.0  # the hypothesis's multiplicity-adjusted confirmation p (as shown: see _judge)
    p_adjusted_refute: float = 1.0  # ... and its adjusted refutation p
    level: float = 0.0  # the level this hypothesis's confirmations were tested at
    level_refute: float = 0.0  # ... and each of its cells' refutations
    level_if: tuple[tuple[str, ...], float] | None = None  # (ids, level): were these unmeasured ones confirmed
    alpha: float = 0.05
    hyp_confirmed: bool = False
    looks: list[int] = field(default_factory=list)  # sequential: runs per arm at each look taken
    look_stats: list = field(default_factory=list)  # sequential: rule.CellStats per look
    decided_at: tuple[int, int] = (0, 0)  # sequential: look where the confirm / refute test crossed
    runs_judged: int | None = None  # sequential: runs per arm of the look shown (the deciding one); None: every run
    all_runs_rel: float | None = None  # sequential, decided before its last look: the change over every run
    lost: tuple[float, float] | None = None  # (baseline, evolved) share of requests lost; None: not counted
    held_by: str = ""  # Effect.held_by: what overrode the test (the noise floor, the shedding guard)

    @property
    def where(self) -> str:
        return self.workload if self.rate is None else f"{self.workload} @ {self.rate:g} req/s"

    @property
    def direction(self) -> Direction:
        assert self.hypothesis.prediction is not None
        return self.hypothesis.prediction.direction

    @property
    def margin(self) -> float:
        assert self.hypothesis.prediction is not None
        return self.hypothesis.prediction.margin

    def effect(self) -> Effect | None:
        if not (self.baseline.size and self.evolved.size) or not math.isfinite(self.rel) or self.rate is None:
            return None
        lo, hi = self.ci if all(math.isfinite(x) for x in self.ci) else (self.rel, self.rel)
        mean_b = float(np.mean(self.baseline if self.keep_b is None else self.baseline[self.keep_b]))
        mean_e = float(np.mean(self.evolved if self.keep_e is None else self.evolved[self.keep_e]))
        return Effect(
            workload=self.workload,
            rate=self.rate,
            metric=self.metric,
            baseline_mean=mean_b,
            evolved_mean=mean_e,
            rel_change=self.rel,
            ci_low=lo,
            ci_high=hi,
            p_value=self._p() if self.tested else None,
            p_adjusted=self._p_adjusted() if self.tested else None,
            test=self.test,
            cv_baseline=self.cv if math.isfinite(self.cv) else 0.0,
            t_eff=self.t_eff if math.isfinite(self.t_eff) else rule.noise_floor(0.0),
            n_baseline=self.n_b,
            n_evolved=self.n_e,
            excluded_runs=list(self.excluded),
            runs_judged=self.runs_judged,
            all_runs_change=self.all_runs_rel,
            status=self.status,
            reason=self.reason or "",
            held_by=self.held_by,
            lost_baseline=None if self.lost is None else self.lost[0],
            lost_evolved=None if self.lost is None else self.lost[1],
        )

    def _p(self) -> float:
        """The p-value of the test behind this cell's status: the refutation test for a refuted cell."""
        return self.p_refute if self.status is VerdictStatus.REFUTED else self.p_confirm

    def _p_adjusted(self) -> float:
        """That p-value on the alpha scale after multiplicity control: <= alpha exactly when the cell decides,
        unless ``held_by`` names what overrode the test (then the hypothesis's p is the tests' own, see _judge).

        One number per hypothesis wherever it can be (a refuted cell: the adjusted refutation p; others: the
        adjusted confirmation p the summary gives), so a one-cell hypothesis reads alike in table and prose.
        A cell that confirms while its hypothesis does not shows its own p scaled by alpha / the level it met.
        """
        if self.status is VerdictStatus.REFUTED:
            return self.p_adjusted_refute
        if self.status is VerdictStatus.CONFIRMED and not self.hyp_confirmed:
            return _scaled(self.pc_eff, self.alpha, self.level)
        return self.p_adjusted


def _scaled(p: float, alpha: float, level: float) -> float:
    return min(1.0, p * alpha / level) if level > 0 else 1.0


def _halt(cell: _Cell, reason: str, flag: str | None = None) -> _Cell:
    cell.status = VerdictStatus.INCONCLUSIVE
    cell.reason = reason
    if flag:
        cell.flags.append(flag)
    return cell


_TEST_NAMES = {
    Direction.DECREASE: "Welch t on log values, one-sided",
    Direction.INCREASE: "Welch t on log values, one-sided",
    Direction.EQUIVALENT: "TOST (two one-sided Welch t on log values, margin ±{m:.0%})",
    Direction.NO_WORSE: "non-inferiority Welch t on log values, one-sided, margin {m:.0%}",
}


def _measure(
    h: Hypothesis, metric: str, workload: str, rate: float | None, index: ReportIndex, decision: DecisionRule
) -> _Cell:
    alpha = decision.alpha
    cell = _Cell(h, metric, workload, rate)
    if rate is None:
        return _halt(cell, f"no reports for workload {workload}", f"no data: {workload}")
    b, e = index.arms(workload, rate, metric)
    cell.baseline, cell.evolved = b, e
    cell.n_b, cell.n_e = int(b.size), int(e.size)
    if b.size == 0 or e.size == 0:
        arm = "baseline" if b.size == 0 else "evolved"
        if b.size == 0 and e.size == 0:
            arm = "baseline or evolved"
        return _halt(cell, f"no {arm} reports of {metric} at {cell.where}", f"no data: {metric} at {cell.where}")
    if bad := unusable(b, e):
        cell.baseline, cell.evolved = np.empty(0), np.empty(0)
        return _halt(
            cell,
            f"{metric} has {bad} at {cell.where}; the log-scale test needs finite positive values",
            f"unusable values: {metric} at {cell.where}",
        )
    schedule = _schedule(decision, workload, rate)
    if schedule is not None:  # group-sequential: replay the looks the runs reached (bot.stats.sequential)
        taken = sequential.looks_taken(schedule, min(b.size, e.size))
        if not taken:  # judging a count the plan did not schedule would spend alpha it never planned for
            return _halt(
                cell,
                f"only {cell.n_b} baseline and {cell.n_e} evolved run(s) at {cell.where}, below the sequential "
                f"plan's first look at {schedule[0]} runs per arm; a count the plan did not schedule is not judged",
                f"below the first planned look ({schedule[0]} runs per arm) at {cell.where}",
            )
        if b.size > taken[-1] or e.size > taken[-1]:
            cell.flags.append(
                f"runs past the last planned look reached not used at {cell.where}: the looks use the first "
                f"{taken[-1]} of {b.size} baseline and {e.size} evolved runs (looks at {schedule})"
            )
        if taken:
            b, e = b[: taken[-1]], e[: taken[-1]]
            cell.baseline, cell.evolved = b, e
            cell.runs_judged = taken[-1]
    st = rule.cell_stats(b, e)
    _show(cell, st, alpha, index)
    if cell.excluded:
        cell.flags.append(_outlier_flag(cell))
    if not bool(st.enough[0]):
        return _halt(
            cell,
            f"only {cell.n_b} baseline and {cell.n_e} evolved repetition(s) at {cell.where}; "
            f"a variance needs at least {MIN_REPS} per arm",
            f"too few repetitions at {cell.where}",
        )
    if cell.cv > MAX_CV:
        return _halt(
            cell,
            f"baseline CV {cell.cv:.1%} exceeds {MAX_CV:.0%} at {cell.where}",
            f"cluster too noisy: baseline CV {cell.cv:.1%} > {MAX_CV:.0%} on {metric} at {cell.where}",
        )
    kind, better = cell.direction.value, _better(metric)
    pc, pr = rule.p_values(st, kind, cell.margin, better)
    pce, pre = rule.effective_p(st, kind, cell.margin, better)
    cell.test = _TEST_NAMES[cell.direction].format(m=cell.margin)
    if schedule is not None:
        seq = decision.sequential
        assert seq is not None
        cl = sequential.CellLooks.from_arms(b, e, taken, schedule[-1])
        rc, rr = sequential.claim_look_p(cl, kind, cell.margin, better, seq.spending)
        pce, pre = rc.min(axis=1), rr.min(axis=1)
        cell.looks, cell.look_stats = taken, cl.stats
        cell.decided_at = (int(np.argmin(rc[0])), int(np.argmin(rr[0])))
        cell.test += f"; group-sequential ({seq.spending} spending), looks at {taken} of {schedule[-1]} runs"
        pc, pr = _repeated_raw(cl, kind, cell.margin, better, seq.spending)
    # The p people read is the p the decision compares with the level; only where the noise floor kept a
    # directional test from counting (the reason says so) is it the test's own p, which then decides nothing.
    ok_c, ok_r = rule.conditions(st, kind)
    cell.p_confirm = float(pce[0] if ok_c[0] else pc[0])
    cell.p_refute = float(pre[0] if ok_r[0] else pr[0])
    cell.pc_eff, cell.pr_eff = float(pce[0]), float(pre[0])
    cell.tested = True
    return cell


def _repeated_raw(
    cl: sequential.CellLooks, kind: str, margin: float, better: str, spending: str
) -> tuple[np.ndarray, np.ndarray]:
    """The group-sequential test's own repeated p-values (no noise-floor condition folded in), each (S,)."""
    from bot.stats.spending import repeated_p

    per_look = [rule.p_values(st, kind, margin, better) for st in cl.stats]
    ts = cl.fractions()
    rc = repeated_p(np.stack([p for p, _ in per_look], axis=1), ts, spending)
    rr = repeated_p(np.stack([p for _, p in per_look], axis=1), ts, spending)
    return np.where(cl.taken, rc, 1.0).min(axis=1), np.where(cl.taken, rr, 1.0).min(axis=1)


def _show(cell: _Cell, st: rule.CellStats, alpha: float, index: ReportIndex) -> None:
    """Fill the numbers people read (runs used, change, interval, CV, noise floor, outliers) from ``st``."""
    assert cell.rate is not None
    cell.n_b, cell.n_e = int(st.n_b[0]), int(st.n_e[0])
    cell.keep_b, cell.keep_e = ~st.flag_b[0], ~st.flag_e[0]
    cell.excluded = _excluded(index, cell.workload, cell.rate, cell.metric, st)
    cell.rel = float(st.rel[0])
    cell.cv = float(st.cv[0]) if cell.n_b >= MIN_REPS else math.nan
    cell.t_eff = float(st.t_eff[0]) if cell.n_b >= MIN_REPS else math.nan
    lo, hi = rule.interval(st, alpha)
    cell.ci = (float(lo[0]), float(hi[0]))


def _show_decision_look(cell: _Cell, index: ReportIndex) -> None:
    """A sequential cell is decided at the look where its test crossed: show that look's numbers.

    Runs after it (made because other claims on the cell were still undecided, or in a fixed run
    replayed here) do not change a group-sequential decision, and the evidence says so.
    """
    k = cell.decided_at[0 if cell.status is VerdictStatus.CONFIRMED else 1]
    if k >= len(cell.looks) - 1:
        return
    n = cell.looks[k]
    st = cell.look_stats[k]
    every = cell.look_stats[-1]
    lo, hi = rule.interval(every, cell.alpha)
    cell.baseline, cell.evolved = cell.baseline[:n], cell.evolved[:n]
    cell.runs_judged, cell.all_runs_rel = n, float(every.rel[0])
    last_look = _outlier_flag(cell) if cell.excluded else None
    _show(cell, st, cell.alpha, index)
    # the outlier flag names the runs this look excluded, not the last look's (runs it never used)
    at = cell.flags.index(last_look) if last_look in cell.flags else len(cell.flags)
    cell.flags[at : at + (last_look in cell.flags)] = [_outlier_flag(cell)] if cell.excluded else []
    # the p shown stays the repeated p the decision used (it crossed at this look), not this look's own test
    cell.p_confirm, cell.p_refute = cell.pc_eff, cell.pr_eff
    cell.flags.append(
        f"decided at look {k + 1} ({n} runs per arm) at {cell.where}: the change and interval shown are that "
        f"look's, and an estimate where a test stops leans away from zero; all {cell.looks[-1]} runs per arm give "
        f"{float(every.rel[0]):+.1%} [{float(lo[0]):+.1%}, {float(hi[0]):+.1%}], and the "
        f"{cell.looks[-1] - n} later run(s) per arm do not change a group-sequential decision"
    )


def _outlier_flag(cell: _Cell) -> str:
    return f"outlier runs excluded at {cell.where} ({cell.metric}): {'; '.join(cell.excluded)}"


def _schedule(decision: DecisionRule, workload: str, rate: float) -> list[int] | None:
    seq = decision.sequential
    return None if seq is None else seq.looks.get(f"{workload}@{rate:g}")


def _excluded(index: ReportIndex, workload: str, rate: float, metric: str, st: rule.CellStats) -> list[str]:
    """'evolved rep 3: 4.9x the arm median' for every flagged run."""
    out = []
    b, e = index.arms(workload, rate, metric)
    lb, le = index.labels(workload, rate, metric)
    for arm, values, labels, flags in (("baseline", b, lb, st.flag_b[0]), ("evolved", e, le, st.flag_e[0])):
        if not flags.any():
            continue
        values, labels = values[: flags.size], labels[: flags.size]  # the runs the (last) look used
        median = float(np.median(values[~flags]))
        for v, label, flagged in zip(values, labels, flags, strict=False):
            if flagged:
                out.append(f"{arm} rep {label}: {v / median:.2g}x the arm median")
    return out


# --------------------------------------------------------------------------
# Multiple comparisons and decisions
# --------------------------------------------------------------------------


def _judge(
    hyps: list[Hypothesis], cells: Mapping[str, list[_Cell]], decision: DecisionRule, index: ReportIndex
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
                    _show_decision_look(c, index)
        held = [c for c in cells[claim.id] if explain.within_floor(c)]
        for c in held:
            c.held_by = HELD_NOISE_FLOOR
        for c in cells[claim.id] if held else []:
            c.p_adjusted = float(shown[0, j])


def _shedding_guard(c: _Cell, index: ReportIndex, alpha: float) -> None:
    if c.rate is None or not c.baseline.size:
        return
    c.lost = guards.lost_shares(index, c.workload, rate_key(c.rate))
    flag, lost_more = guards.shedding(index, c.workload, rate_key(c.rate), c.where, alpha, claim=c)
    if flag:
        c.flags.append(flag)
    if lost_more and c.status is VerdictStatus.CONFIRMED and _better(c.metric) == "lower":
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
        flags = guards.mechanism_flags(metric, _better(metric), index, evolved_for, judged_arms(index, decision))
        for hid in by_metric[metric]:
            out.setdefault(hid, []).extend(flags)
    return out


# --------------------------------------------------------------------------
# Verdict per hypothesis
# --------------------------------------------------------------------------


def _aggregate(h: Hypothesis, cs: list[_Cell]) -> tuple[VerdictStatus, list[str]]:
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
    h: Hypothesis, cs: list[_Cell], magnitude: float | None, mech: list[str], decision: DecisionRule, family: int
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
