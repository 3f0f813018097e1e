"""Stage 5: decide each hypothesis from llm-d-benchmark reports, with the noise taken seriously.

Gate 3 asks a person to believe that the evolved plugin moves a metric in the
direction BLIS predicted. A sign of a difference (what sim2real reports today)
is not evidence; this module says, per hypothesis, CONFIRMED / REFUTED /
INCONCLUSIVE with the numbers behind it, and is deliberately slow to confirm.

Unit of evidence: a *cell* = (hypothesis, workload, rate) on the hypothesis's
metric. Each repetition of a treatment contributes one aggregate value (mean
TTFT of the run, p95 E2E of the run ...), so a cell is two small samples of
n = 2..20 run-level values (baseline and evolved, independent stand-ups).

Noise floor. ``T_eff = max(5%, 2 x CV of the baseline repetitions)`` per cell
and metric (sim2real v3's rule). A baseline CV above 15% halts the cell as
INCONCLUSIVE with the flag "cluster too noisy"; fewer than 2 repetitions in an
arm halts it too (no variance, no test). An effect smaller than T_eff is never
called real, however small its p-value.

Test: one-sided Welch t-test on log values, not Mann-Whitney U. Why:
- MWU cannot reach significance at the sample sizes GPU budgets allow: its
  smallest one-sided p-value is 1 / C(2n, n), i.e. 0.05 at n = 3 per arm (never
  < 0.05) and 0.014 at n = 4, which Holm then multiplies by the number of cells
  in the track. A rank test would make every n <= 4 claim unconfirmable by
  construction, and the power plan would have to ask for far more runs.
- Run-level aggregates average thousands of requests, so across repetitions
  they are close to normal; their spread is multiplicative (a noisier node
  scales every latency), so logs make it additive and symmetric. The claim is
  relative ("10% lower TTFT"), which on the log scale is a location shift, the
  exact thing a t-test measures.
- Welch, not Student: the evolved plugin can change the run-to-run variance as
  well as the mean (a better router is often also a steadier one); Welch's
  Satterthwaite df keeps the error rate right when variances differ.
The false-confirm rate and the power are checked by simulation in
``tests/stats/``.

Interval: a stratified percentile bootstrap (each arm resampled on its own,
2,000 resamples, ``numpy.random.Generator(PCG64)`` seeded from a hash of the
cell, so the same reports always give the same interval) of the relative change
of arithmetic means (what people read: "evolved mean / baseline mean - 1").
The interval is two-sided at 1 - 2 alpha (90% for alpha = 0.05), the interval
that matches a one-sided test at alpha and the one TOST uses. Percentile, not
BCa: BCa's acceleration comes from a jackknife, which with 3-5 repetitions is
itself noise. At such n a percentile bootstrap is too narrow (it ignores the
t correction), which is why it never decides alone: every verdict also needs
the Welch test, which carries the small-sample correction.

Decision per cell:
- DECREASE / INCREASE: CONFIRMED when the interval excludes zero in the
  predicted direction AND the change exceeds T_eff in that direction AND the
  Holm-adjusted one-sided p < alpha. REFUTED on the mirror-image evidence: the
  interval excludes zero the other way AND the change exceeds T_eff the other
  way AND the opposite one-sided p (Holm-adjusted within the track's
  refutation family) < alpha. A significant move the other way that stays
  inside the noise floor is not a contradiction: INCONCLUSIVE, said so.
- EQUIVALENT: TOST, two one-sided Welch tests on logs against
  ``[log(1 - margin), log(1 + margin)]``; CONFIRMED when both reject (Holm on
  the larger p) and the interval lies inside ±margin; REFUTED when the interval
  lies entirely outside the margin and the one-sided test that the change is
  beyond that margin rejects (Holm, refutation family).
- NO_WORSE: one one-sided Welch test against the margin on the metric's bad
  side (``bot.bench.metrics.METRICS[m].better``); CONFIRMED when it rejects and
  the interval's bad end is inside the margin; REFUTED when the whole interval
  is beyond the margin and the test that it is worse than the margin rejects.
- The noise floor widens nothing for EQUIVALENT / NO_WORSE: a noisy cluster must
  not make equivalence easier to claim; the tests' own power handles it.

Multiple comparisons: Holm across each track (every tested cell of every
hypothesis of Track A, of B, of C). Confirmations and refutations are two
families, each with family-wise error <= alpha. Halted cells (too noisy, too
few repetitions, missing data) are not tested and are not in the family.

Aggregation over a hypothesis's cells (BLIS: "one contradicting seed means not
confirmed"): CONFIRMED only when every cell confirms. For a directional claim,
REFUTED when some cell refutes and none confirms; confirmed and refuted cells
together are INCONCLUSIVE with the flag "parameter-dependent" (BLIS's
"Inconclusive - parameter-dependent"). For EQUIVALENT / NO_WORSE a single
refuted cell refutes: a regression anywhere is a regression.

Guards:
- Shedding. Per cell, the failed + incomplete share of requests per
  treatment. If the evolved share exceeds the baseline's by more than 1
  percentage point, or by a margin a one-sided two-proportion z-test finds
  significant at alpha (tail metrics move when even 0.3% of the slowest
  requests vanish), flag "shedding may mask latency" and do NOT confirm a claim
  on a lower-is-better metric (latency): the cell becomes INCONCLUSIVE. A
  missing request count is flagged, never assumed zero.
- BLIS magnitude: observed / predicted relative change below 0.3 is flagged as
  attenuation, above 2 as amplification, a sign flip as opposite to BLIS.
  Informational: the claim transferred is the direction, not the magnitude.
- Mechanism check (``evolved_for``): on each Track A metric, the workload the
  program was evolved for should improve the most. If every workload improves
  and all by amounts within T_eff / 2 of each other, flag "gain may not come
  from the evolved mechanism" (an overhead reduction would do that); if the
  evolved-for workload is not the most improved, or improves by less than
  T_eff, flag it. Flags, not status changes: the hypothesis is about the
  direction; the mechanism is for the human at gate 3 (BLIS RCV-3).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from bot.model import Direction, Effect, Hypothesis, Track, Verdict, VerdictStatus
from bot.stats import StatsError
from bot.stats.power import MAX_CV, MIN_REPS, noise_floor

if TYPE_CHECKING:  # pragma: no cover
    from bot.bench.reports import ReportSet

#: Bootstrap resamples per cell; 2,000 puts the 5% / 95% percentiles within ~0.5 pp of their limit.
BOOTSTRAP_RESAMPLES = 2000
#: The evolved share of failed + incomplete requests may exceed the baseline's by this much.
SHED_TOLERANCE = 0.01
#: BLIS magnitude guards: observed / predicted.
ATTENUATION = 0.3
AMPLIFICATION = 2.0

_TABLE_COLUMNS = ("treatment", "workload", "rate", "repetition", "metric", "value")
_REQUEST_COLUMNS = ("treatment", "workload", "rate", "repetition", "total", "failures", "incomplete")
_BASELINE, _EVOLVED = "baseline", "evolved"


def evaluate(
    hypotheses: Iterable[Hypothesis],
    reports: ReportSet,
    *,
    evolved_for: str | None = None,
    alpha: float = 0.05,
    blis_magnitudes: Mapping[str, float] | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> list[Verdict]:
    """One verdict per hypothesis, in input order. See the module docstring for every rule.

    ``blis_magnitudes`` (hypothesis id -> BLIS relative change) overrides
    ``Prediction.blis_magnitude``. Hypotheses without a prediction are not
    decided by benchmarks; they get an INCONCLUSIVE verdict that says so, so
    nothing disappears from the evidence.
    """
    if not 0 < alpha < 0.5:
        raise StatsError(f"alpha={alpha!r}; pass a one-sided significance level between 0 and 0.5, e.g. 0.05")
    if resamples < 100:
        raise StatsError(f"resamples={resamples!r}; pass at least 100 bootstrap resamples")
    hyps = list(hypotheses)
    ids = [h.id for h in hyps]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise StatsError(f"hypotheses: duplicate ids {dup}; every hypothesis needs its own id")
    index = _Index.build(reports)
    magnitudes = dict(blis_magnitudes or {})

    cells: dict[str, list[_Cell]] = {}
    for h in hyps:
        if h.prediction is None:
            continue
        metric = _short_metric(h)
        cells[h.id] = [
            _measure(h, metric, wl, rate, index, alpha=alpha, resamples=resamples) for wl, rate in _cells_of(h, index)
        ]

    # Holm per track: a confirmation family and a refutation family.
    for track in Track:
        tested = [c for h in hyps if h.track == track for c in cells.get(h.id, []) if c.tested]
        for attr in ("p_confirm", "p_refute"):
            adjusted = holm([getattr(c, attr) for c in tested])
            for c, p in zip(tested, adjusted, strict=False):
                setattr(c, attr + "_adj", float(p))

    for cs in cells.values():
        for c in cs:
            _decide(c, alpha)
            _shedding_guard(c, index, alpha)

    mechanism = _mechanism_flags(hyps, index, evolved_for)

    verdicts = []
    for h in hyps:
        if h.prediction is None:
            verdicts.append(
                Verdict(
                    hypothesis_id=h.id,
                    status=VerdictStatus.INCONCLUSIVE,
                    summary=(
                        f"{h.id} makes no benchmark prediction, so the benchmark reports cannot decide it; "
                        "it is decided by the stage 4 tests or by review."
                    ),
                    flags=["not decided by benchmarks"],
                )
            )
            continue
        magnitude = magnitudes.get(h.id, h.prediction.blis_magnitude)
        verdicts.append(_verdict(h, cells[h.id], magnitude, mechanism.get(h.id, []), alpha))
    return verdicts


def holm(pvalues: Iterable[float]) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error control, any dependence)."""
    p = np.asarray(list(pvalues), dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


# --------------------------------------------------------------------------
# Report index
# --------------------------------------------------------------------------


def _rk(rate: Any) -> float:
    """Rates are floats from YAML and directory names; compare them rounded."""
    v = _number(rate)
    return round(v, 9) if math.isfinite(v) else math.nan


@dataclass
class _Index:
    values: dict[tuple[str, float, str], dict[str, np.ndarray]]
    rates: dict[str, list[float]]
    requests: dict[tuple[str, float], dict[str, tuple[int, int, int]]]  # treatment -> (total, lost, reps)

    @classmethod
    def build(cls, reports: Any) -> _Index:
        table = getattr(reports, "table", None)
        if table is None or not hasattr(table, "columns"):
            raise StatsError("reports: expected a ReportSet (bot.bench.reports.load_results) with a `table` DataFrame")
        missing = [c for c in _TABLE_COLUMNS if c not in table.columns]
        if missing:
            raise StatsError(
                f"reports.table: missing columns {missing}; load reports with bot.bench.reports.load_results"
            )
        # Plain dict accumulation, not pandas groupby: evaluate() runs in loops of thousands of
        # simulated experiments, where groupby's fixed cost dominated.
        acc: dict[tuple[str, float, str, str], dict[Any, list[float]]] = {}
        cols = [table[c].to_numpy() for c in _TABLE_COLUMNS]
        for treatment, wl, rate, rep, metric, value in zip(*cols, strict=False):
            rk = _rk(rate)
            if not math.isfinite(rk):
                continue
            key = (str(wl), rk, str(metric), str(treatment))
            acc.setdefault(key, {}).setdefault(rep, []).append(_number(value))
        values: dict[tuple[str, float, str], dict[str, np.ndarray]] = {}
        rates: dict[str, set[float]] = {}
        for (wl, rate, metric, treatment), reps in sorted(acc.items()):
            # One value per repetition; a metric reported twice in one repetition is averaged.
            arr = np.array([sum(v) / len(v) for _, v in sorted(reps.items(), key=_rep_order)], dtype=float)
            values.setdefault((wl, rate, metric), {})[treatment] = arr
            rates.setdefault(wl, set()).add(rate)
        requests: dict[tuple[str, float], dict[str, tuple[int, int, int]]] = {}
        req = getattr(reports, "requests", None)
        if req is not None and len(req) and all(c in req.columns for c in _REQUEST_COLUMNS):
            racc: dict[tuple[str, float], dict[str, list]] = {}
            rcols = [req[c].to_numpy() for c in _REQUEST_COLUMNS]
            for treatment, wl, rate, rep, total, failures, incomplete in zip(*rcols, strict=False):
                slot = racc.setdefault((str(wl), _rk(rate)), {}).setdefault(str(treatment), [0, 0, set(), True])
                slot[0] += _count(total)
                slot[1] += _count(failures) + _count(incomplete)
                slot[2].add(rep)
                # A run with a total but neither failures nor incomplete reported cannot be guarded.
                if not math.isfinite(_number(total)) or (
                    not math.isfinite(_number(failures)) and not math.isfinite(_number(incomplete))
                ):
                    slot[3] = False
            for key in sorted(racc):
                requests[key] = {t: (v[0], v[1], len(v[2])) for t, v in sorted(racc[key].items()) if v[3]}
        return cls(values, {w: sorted(r) for w, r in rates.items()}, requests)

    def arms(self, workload: str, rate: float, metric: str) -> tuple[np.ndarray, np.ndarray]:
        got = self.values.get((workload, _rk(rate), metric), {})
        empty = np.empty(0)
        return got.get(_BASELINE, empty), got.get(_EVOLVED, empty)


def _number(x: Any) -> float:
    """float(x), or NaN for None / pd.NA / text: report counts are nullable."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _rep_order(item: tuple[Any, Any]) -> tuple[int, float, str]:
    rep = item[0]
    v = _number(rep)
    return (0, v, "") if math.isfinite(v) else (1, 0.0, str(rep))


def _count(x: Any) -> int:
    """A request count from a report; missing (None / NaN) counts as 0 and is visible in the totals."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return 0
    return int(v) if math.isfinite(v) else 0


def _short_metric(h: Hypothesis) -> str:
    from bot.bench.metrics import MetricError, short_metric

    assert h.prediction is not None
    try:
        return short_metric(h.prediction.metric)
    except MetricError as exc:
        raise StatsError(f"hypothesis {h.id}: {exc}") from None


def _better(metric: str) -> str:
    from bot.bench.metrics import METRICS

    return METRICS[metric].better


def _cells_of(h: Hypothesis, index: _Index) -> list[tuple[str, float | None]]:
    out: list[tuple[str, float | None]] = []
    for wl in h.workloads:
        if h.rates:
            out.extend((wl, float(r)) for r in sorted(set(h.rates)))
        elif index.rates.get(wl):
            out.extend((wl, r) for r in index.rates[wl])
        else:
            out.append((wl, None))
    return out


# --------------------------------------------------------------------------
# One cell
# --------------------------------------------------------------------------


@dataclass
class _Cell:
    hypothesis: Hypothesis
    metric: str
    workload: str
    rate: float | None
    baseline: np.ndarray = field(default_factory=lambda: np.empty(0))
    evolved: np.ndarray = field(default_factory=lambda: np.empty(0))
    status: VerdictStatus | None = None
    reason: str = ""
    flags: list[str] = field(default_factory=list)
    tested: bool = False
    rel: float = math.nan
    ci: tuple[float, float] = (math.nan, math.nan)
    cv: float = math.nan
    t_eff: float = math.nan
    test: str = ""
    p_confirm: float = 1.0
    p_refute: float = 1.0
    p_confirm_adj: float = 1.0
    p_refute_adj: float = 1.0

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
        return Effect(
            workload=self.workload,
            rate=self.rate,
            metric=self.metric,
            baseline_mean=float(self.baseline.mean()),
            evolved_mean=float(self.evolved.mean()),
            rel_change=self.rel,
            ci_low=lo,
            ci_high=hi,
            p_value=self.p_confirm if self.tested else None,
            p_adjusted=self.p_confirm_adj if self.tested else None,
            test=self.test,
            cv_baseline=self.cv if math.isfinite(self.cv) else 0.0,
            t_eff=self.t_eff if math.isfinite(self.t_eff) else noise_floor(0.0),
            n_baseline=int(self.baseline.size),
            n_evolved=int(self.evolved.size),
            status=self.status,
            reason=self.reason or "",
        )


def _halt(cell: _Cell, reason: str, flag: str | None = None) -> _Cell:
    cell.status = VerdictStatus.INCONCLUSIVE
    cell.reason = reason
    if flag:
        cell.flags.append(flag)
    return cell


def _measure(
    h: Hypothesis, metric: str, workload: str, rate: float | None, index: _Index, *, alpha: float, resamples: int
) -> _Cell:
    cell = _Cell(h, metric, workload, rate)
    if rate is None:
        return _halt(cell, f"no reports for workload {workload}", f"no data: {workload}")
    b, e = index.arms(workload, rate, metric)
    cell.baseline, cell.evolved = b, e
    if b.size == 0 or e.size == 0:
        arm = "baseline" if b.size == 0 else "evolved"
        if b.size == 0 and e.size == 0:
            arm = "baseline or evolved"
        return _halt(cell, f"no {arm} reports of {metric} at {cell.where}", f"no data: {metric} at {cell.where}")
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(e)) and b.min() > 0 and e.min() > 0):
        cell.baseline, cell.evolved = np.empty(0), np.empty(0)
        return _halt(
            cell,
            f"{metric} has zero, negative or missing values at {cell.where}; the log-scale test needs positive values",
            f"unusable values: {metric} at {cell.where}",
        )
    cell.rel = float(e.mean() / b.mean() - 1.0)
    cell.cv = float(b.std(ddof=1) / b.mean()) if b.size >= 2 else math.nan
    cell.t_eff = noise_floor(cell.cv) if b.size >= 2 else math.nan
    if b.size < MIN_REPS or e.size < MIN_REPS:
        return _halt(
            cell,
            f"only {b.size} baseline and {e.size} evolved repetition(s) at {cell.where}; "
            f"a variance needs at least {MIN_REPS} per arm",
            f"too few repetitions at {cell.where}",
        )
    cell.ci = _bootstrap_ci(b, e, alpha=alpha, resamples=resamples, seed=_seed(workload, _rk(rate), metric))
    if cell.cv > MAX_CV:
        return _halt(
            cell,
            f"baseline CV {cell.cv:.1%} exceeds {MAX_CV:.0%} at {cell.where}",
            f"cluster too noisy: baseline CV {cell.cv:.1%} > {MAX_CV:.0%} on {metric} at {cell.where}",
        )
    d, se, df = _welch_log(b, e)
    direction = cell.direction
    if direction in (Direction.DECREASE, Direction.INCREASE):
        s = -1.0 if direction is Direction.DECREASE else 1.0
        cell.p_confirm = _sf(s * d, se, df)
        cell.p_refute = _sf(-s * d, se, df)
        cell.test = "Welch t on log values, one-sided"
    elif direction is Direction.EQUIVALENT:
        lo, hi = math.log1p(-cell.margin), math.log1p(cell.margin)
        p_above_lo = _sf(d - lo, se, df)  # H0: shift <= lo
        p_below_hi = _sf(hi - d, se, df)  # H0: shift >= hi
        cell.p_confirm = max(p_above_lo, p_below_hi)
        # Refutation: the shift is beyond the margin on the side the estimate lies.
        cell.p_refute = _sf(d - hi, se, df) if d >= 0 else _sf(lo - d, se, df)
        cell.test = f"TOST (two one-sided Welch t on log values, margin ±{cell.margin:.0%})"
    else:  # NO_WORSE
        bad = 1.0 if _better(metric) == "lower" else -1.0
        bound = math.log1p(bad * cell.margin)
        cell.p_confirm = _sf(bad * (bound - d), se, df)  # H0: at least margin worse
        cell.p_refute = _sf(bad * (d - bound), se, df)  # H0: within margin
        cell.test = f"non-inferiority Welch t on log values, one-sided, margin {cell.margin:.0%}"
    cell.tested = True
    return cell


def _seed(*parts: Any) -> int:
    """Seed from a content hash of the cell (not the hypothesis): every hypothesis on the same
    (workload, rate, metric) reports the same interval, in any order, in any process."""
    key = "|".join(repr(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


def _bootstrap_ci(b: np.ndarray, e: np.ndarray, *, alpha: float, resamples: int, seed: int) -> tuple[float, float]:
    rng = np.random.Generator(np.random.PCG64(seed))
    mb = b[rng.integers(0, b.size, size=(resamples, b.size))].mean(axis=1)
    me = e[rng.integers(0, e.size, size=(resamples, e.size))].mean(axis=1)
    lo, hi = np.quantile(me / mb - 1.0, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def _welch_log(b: np.ndarray, e: np.ndarray) -> tuple[float, float, float]:
    lb, le = np.log(b), np.log(e)
    vb, ve = lb.var(ddof=1) / lb.size, le.var(ddof=1) / le.size
    d = float(le.mean() - lb.mean())
    se = math.sqrt(vb + ve)
    if se == 0:
        return d, 0.0, float(lb.size + le.size - 2)
    df = (vb + ve) ** 2 / (vb**2 / (lb.size - 1) + ve**2 / (le.size - 1))
    return d, se, float(df)


def _sf(x: float, se: float, df: float) -> float:
    """P(T >= x / se): the one-sided p for 'the shift exceeds 0 by x'. se = 0 means no noise at all."""
    if se == 0:
        return 0.0 if x > 0 else (0.5 if x == 0 else 1.0)
    return float(stats.t.sf(x / se, df))


# --------------------------------------------------------------------------
# Decisions
# --------------------------------------------------------------------------


def _decide(c: _Cell, alpha: float) -> None:
    if not c.tested:
        return
    lo, hi = c.ci
    m = c.margin
    if c.direction in (Direction.DECREASE, Direction.INCREASE):
        s = -1.0 if c.direction is Direction.DECREASE else 1.0
        ci_pred = (s * lo > 0) and (s * hi > 0)
        ci_opp = (s * lo < 0) and (s * hi < 0)
        word = "lower" if s < 0 else "higher"
        if ci_pred and s * c.rel > c.t_eff and c.p_confirm_adj < alpha:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"{word} beyond the noise floor, significant after Holm"
        elif ci_opp and -s * c.rel > c.t_eff and c.p_refute_adj < alpha:
            opp = "higher" if s < 0 else "lower"
            c.status, c.reason = VerdictStatus.REFUTED, f"{opp}, opposite to the prediction, beyond the noise floor"
        else:
            c.status = VerdictStatus.INCONCLUSIVE
            if abs(c.rel) <= c.t_eff:
                c.reason = f"change {c.rel:+.1%} is within the noise floor T_eff {c.t_eff:.1%}"
            elif s * c.rel > 0:
                c.reason = "direction as predicted but not significant after Holm / interval includes zero"
            else:
                c.reason = "direction opposite to the prediction but not significant after Holm"
    elif c.direction is Direction.EQUIVALENT:
        if -m < lo and hi < m and c.p_confirm_adj < alpha:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"both one-sided tests reject; interval inside ±{m:.0%}"
        elif (lo > m or hi < -m) and c.p_refute_adj < alpha:
            c.status, c.reason = VerdictStatus.REFUTED, f"interval entirely outside ±{m:.0%}"
        else:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, f"equivalence within ±{m:.0%} not shown"
    else:
        bad = 1.0 if _better(c.metric) == "lower" else -1.0
        bad_end = hi if bad > 0 else lo
        good_end = lo if bad > 0 else hi
        if bad * bad_end < m and c.p_confirm_adj < alpha:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"no worse than the {m:.0%} margin"
        elif bad * good_end > m and c.p_refute_adj < alpha:
            c.status, c.reason = VerdictStatus.REFUTED, f"worse than the {m:.0%} margin"
        else:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, f"a regression beyond {m:.0%} is not ruled out"


def _shedding_guard(c: _Cell, index: _Index, alpha: float) -> None:
    if c.rate is None or not c.baseline.size:
        return
    counts = index.requests.get((c.workload, _rk(c.rate)), {})
    if _BASELINE not in counts or _EVOLVED not in counts:
        c.flags.append(f"request counts missing at {c.where}: shedding guard not applied")
        return
    (tb, lb, _), (te, le, _) = counts[_BASELINE], counts[_EVOLVED]
    if tb <= 0 or te <= 0:
        c.flags.append(f"request counts missing at {c.where}: shedding guard not applied")
        return
    rb, re_ = lb / tb, le / te
    gap = re_ - rb
    significant = False
    pooled = (lb + le) / (tb + te)
    if gap > 0 and 0 < pooled < 1:
        z = gap / math.sqrt(pooled * (1 - pooled) * (1 / tb + 1 / te))
        significant = bool(stats.norm.sf(z) < alpha)
    if gap > SHED_TOLERANCE or significant:
        c.flags.append(
            f"shedding may mask latency: evolved lost {re_:.2%} of requests (failed or incomplete) "
            f"vs {rb:.2%} for baseline at {c.where}"
        )
        if c.status is VerdictStatus.CONFIRMED and _better(c.metric) == "lower":
            c.status = VerdictStatus.INCONCLUSIVE
            c.reason = (
                "more requests failed or went incomplete with the evolved plugin, which can hide latency, "
                "so a latency claim is not confirmed"
            )


# --------------------------------------------------------------------------
# Mechanism check
# --------------------------------------------------------------------------


def _mechanism_flags(hyps: list[Hypothesis], index: _Index, evolved_for: str | None) -> dict[str, list[str]]:
    if not evolved_for:
        return {}
    track_a = [h for h in hyps if h.track == Track.A and h.prediction is not None]
    by_metric: dict[str, list[str]] = {}
    for h in track_a:
        by_metric.setdefault(_short_metric(h), []).append(h.id)
    out: dict[str, list[str]] = {}
    for metric in sorted(by_metric):
        flags = _mechanism_for_metric(metric, index, evolved_for)
        for hid in by_metric[metric]:
            out.setdefault(hid, []).extend(flags)
    return out


def _mechanism_for_metric(metric: str, index: _Index, evolved_for: str) -> list[str]:
    better = _better(metric)
    improvement: dict[str, float] = {}
    floors: dict[str, float] = {}
    for wl in sorted(index.rates):
        imps, tes = [], []
        for rate in index.rates[wl]:
            b, e = index.arms(wl, rate, metric)
            if b.size < 1 or e.size < 1 or b.mean() <= 0:
                continue
            rel = e.mean() / b.mean() - 1.0
            imps.append(-rel if better == "lower" else rel)
            cv = b.std(ddof=1) / b.mean() if b.size >= 2 else 0.0
            tes.append(noise_floor(float(cv)))
        if imps:
            improvement[wl] = float(np.mean(imps))
            floors[wl] = float(np.mean(tes))
    if evolved_for not in improvement:
        return [f"mechanism check: the evolved-for workload {evolved_for} has no {metric} reports"]
    if len(improvement) < 2:
        return [f"mechanism check not possible on {metric}: only {evolved_for} was measured"]
    flags = []
    t_eff = floors[evolved_for]
    own = improvement[evolved_for]
    top = max(sorted(improvement), key=lambda w: improvement[w])
    spread = max(improvement.values()) - min(improvement.values())
    if all(v > 0 for v in improvement.values()) and spread <= t_eff / 2:
        lo, hi = min(improvement.values()), max(improvement.values())
        flags.append(
            f"gain may not come from the evolved mechanism: every workload improves {metric} by about the same "
            f"({lo:.1%} to {hi:.1%}, within T_eff/2 = {t_eff / 2:.1%})"
        )
    if top != evolved_for and improvement[top] > own:
        flags.append(
            f"mechanism check: the evolved-for workload {evolved_for} is not the most improved on {metric} "
            f"({top}: {improvement[top]:+.1%} vs {evolved_for}: {own:+.1%})"
        )
    if own < t_eff:
        flags.append(
            f"mechanism check: the evolved-for workload {evolved_for} improves {metric} by {own:+.1%}, "
            f"less than its noise floor T_eff {t_eff:.1%}"
        )
    return flags


# --------------------------------------------------------------------------
# Verdict per hypothesis
# --------------------------------------------------------------------------


def _aggregate(h: Hypothesis, cs: list[_Cell]) -> tuple[VerdictStatus, list[str]]:
    statuses = [c.status for c in cs]
    flags: list[str] = []
    if cs and all(s is VerdictStatus.CONFIRMED for s in statuses):
        return VerdictStatus.CONFIRMED, flags
    refuted = any(s is VerdictStatus.REFUTED for s in statuses)
    confirmed = any(s is VerdictStatus.CONFIRMED for s in statuses)
    assert h.prediction is not None
    if h.prediction.direction in (Direction.DECREASE, Direction.INCREASE):
        if refuted and confirmed:
            flags.append("parameter-dependent: confirmed in some cells, refuted in others")
            return VerdictStatus.INCONCLUSIVE, flags
        if refuted:
            return VerdictStatus.REFUTED, flags
        return VerdictStatus.INCONCLUSIVE, flags
    return (VerdictStatus.REFUTED if refuted else VerdictStatus.INCONCLUSIVE), flags


def _magnitude_flags(c: _Cell, predicted: float | None) -> list[str]:
    if (
        predicted is None
        or predicted == 0
        or not math.isfinite(c.rel)
        or c.direction
        not in (
            Direction.DECREASE,
            Direction.INCREASE,
        )
    ):
        return []
    ratio = c.rel / predicted
    if ratio < 0:
        return [f"opposite to BLIS: observed {c.rel:+.1%} vs BLIS {predicted:+.1%} at {c.where}"]
    if ratio < ATTENUATION:
        return [f"attenuated: observed {c.rel:+.1%} is {ratio:.2f}x BLIS's {predicted:+.1%} at {c.where}"]
    if ratio > AMPLIFICATION:
        return [f"amplified: observed {c.rel:+.1%} is {ratio:.2f}x BLIS's {predicted:+.1%} at {c.where}"]
    return []


_DIRECTION_WORDS = {
    Direction.DECREASE: "decreases",
    Direction.INCREASE: "increases",
    Direction.EQUIVALENT: "stays within ±{m:.0%} (equivalence)",
    Direction.NO_WORSE: "gets no worse than {m:.0%} (no regression)",
}


def _verdict(h: Hypothesis, cs: list[_Cell], magnitude: float | None, mech: list[str], alpha: float) -> Verdict:
    status, agg_flags = _aggregate(h, cs)
    flags: list[str] = []
    for c in cs:
        flags.extend(c.flags)
        flags.extend(_magnitude_flags(c, magnitude))
    flags.extend(agg_flags)
    flags.extend(mech)
    flags = list(dict.fromkeys(flags))  # de-duplicate, keep order
    effects = [e for e in (c.effect() for c in cs) if e is not None]
    return Verdict(
        hypothesis_id=h.id,
        status=status,
        summary=_summary(h, cs, status, magnitude, alpha, bool(mech)),
        effects=effects,
        flags=flags,
    )


def _summary(
    h: Hypothesis, cs: list[_Cell], status: VerdictStatus, magnitude: float | None, alpha: float, mech: bool
) -> str:
    assert h.prediction is not None
    metric = cs[0].metric if cs else h.prediction.metric
    what = _DIRECTION_WORDS[h.prediction.direction].format(m=h.prediction.margin)
    parts = [f"{h.id} predicted that {metric} {what} with the evolved plugin."]
    for c in cs:
        if not c.baseline.size or not math.isfinite(c.rel):
            parts.append(f"At {c.where}: inconclusive, {c.reason}.")
            continue
        nums = f"{metric} changed by {c.rel:+.1%}"
        if c.tested:
            nums += (
                f" ({1 - 2 * alpha:.0%} bootstrap CI {c.ci[0]:+.1%} to {c.ci[1]:+.1%}; {c.test} p = {c.p_confirm:.3g}, "
                f"Holm-adjusted {c.p_confirm_adj:.3g}; noise floor T_eff {c.t_eff:.1%} from baseline CV {c.cv:.1%}; "
                f"n = {c.baseline.size} vs {c.evolved.size})"
            )
        else:
            nums += f" (n = {c.baseline.size} vs {c.evolved.size})"
        assert c.status is not None
        parts.append(f"At {c.where}: {nums}; {c.status.value}: {c.reason}.")
    rule = {
        VerdictStatus.CONFIRMED: "Every measured cell confirms, so the hypothesis is confirmed.",
        VerdictStatus.REFUTED: (
            "At least one cell contradicts the prediction beyond the noise floor and none confirms it, so it is refuted."
            if h.prediction.direction in (Direction.DECREASE, Direction.INCREASE)
            else "At least one cell lies beyond the margin, so it is refuted."
        ),
        VerdictStatus.INCONCLUSIVE: (
            "Not every cell confirms and the evidence does not contradict the prediction, so it is inconclusive "
            "(a hypothesis is confirmed only when every cell confirms)."
        ),
    }[status]
    parts.append(rule)
    if magnitude is not None and h.prediction.direction in (Direction.DECREASE, Direction.INCREASE):
        parts.append(f"BLIS predicted {magnitude:+.1%}.")
    if mech:
        parts.append("See the mechanism-check flags.")
    if any("shedding" in f for c in cs for f in c.flags):
        parts.append(
            "More requests failed or went incomplete with the evolved plugin; a latency gain may come from shedding."
        )
    return " ".join(parts)
