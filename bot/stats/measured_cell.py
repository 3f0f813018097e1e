"""One cell of a hypothesis measured: its runs, the numbers people read, and its tests' p-values, before any decision.

Why a module of its own: ``bot.stats.verdicts`` decides (multiplicity over the promotion's family, the
shedding guard, one verdict per hypothesis); what it decides on is one ``MeasuredCell`` per (hypothesis,
workload, rate), built here by ``measure`` from the reports: the runs of both arms (the first that many at
each look of a group-sequential plan), the outliers the rule in ``bot.stats.rule`` excludes, the change, its
interval, the baseline CV and the noise floor, and the p-values of the claim's test, or why the cell halts
as INCONCLUSIVE before any test (no data, too few runs, a cluster too noisy). Once decided, a sequential
cell shows the look its test crossed at (``show_decision_look``), and ``MeasuredCell.effect`` is the
``Effect`` the verdict carries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bot.model import Direction, Effect, Hypothesis, VerdictStatus
from bot.stats import rule, sequential
from bot.stats.cells import ReportIndex, unusable
from bot.stats.design import DecisionRule
from bot.stats.rule import MAX_CV, MIN_REPS

__all__ = ["MeasuredCell", "better_side", "measure", "show_decision_look"]


def better_side(metric: str) -> str:
    """'lower' or 'higher': which way the metric is better (``bot.model.metrics.METRICS``)."""
    from bot.model.metrics import METRICS

    return METRICS[metric].better


@dataclass
class MeasuredCell:
    """One (hypothesis, workload, rate) on the hypothesis's metric: its runs, numbers, p-values, then its decision."""

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
    p_adjusted: float = 1.0  # the hypothesis's multiplicity-adjusted confirmation p (as shown: see verdicts._judge)
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
        unless ``held_by`` names what overrode the test (then the hypothesis's p is the tests' own, see
        ``bot.stats.verdicts``' ``_judge``).

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


def _halt(cell: MeasuredCell, reason: str, flag: str | None = None) -> MeasuredCell:
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


def measure(
    h: Hypothesis, metric: str, workload: str, rate: float | None, index: ReportIndex, decision: DecisionRule
) -> MeasuredCell:
    """The cell of ``h`` at (``workload``, ``rate``) measured on ``metric``: tested, or halted with the reason."""
    alpha = decision.alpha
    cell = MeasuredCell(h, metric, workload, rate)
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
    kind, better = cell.direction.value, better_side(metric)
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


def _show(cell: MeasuredCell, st: rule.CellStats, alpha: float, index: ReportIndex) -> None:
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


def show_decision_look(cell: MeasuredCell, index: ReportIndex) -> None:
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


def _outlier_flag(cell: MeasuredCell) -> str:
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
