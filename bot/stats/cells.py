"""The benchmark reports as stage 5 reads them: run-level values per (workload, rate, metric) and arm.

``ReportIndex.build`` takes a ``ReportSet`` (``bot.bench.reports.load_results``,
or any object with the same ``table`` and ``requests`` DataFrames) and keeps one
value per repetition, in repetition order (the sequential rule reads the first
``n`` repetitions of each arm as its ``n``-th look), plus the request counts per
treatment the shedding guard needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from bot.model import Hypothesis
from bot.stats import StatsError

TABLE_COLUMNS = ("treatment", "workload", "rate", "repetition", "metric", "value")
REQUEST_COLUMNS = ("treatment", "workload", "rate", "repetition", "total", "failures", "incomplete")
BASELINE, EVOLVED = "baseline", "evolved"


class Reports(Protocol):
    """What stage 5 reads of a ``bot.bench.reports.ReportSet``: its ``table`` (and ``requests``, when counted).

    A protocol rather than the class: the statistics sit below the benchmark package, which sizes its plans
    with them, so they do not import it."""

    table: Any


def rate_key(rate: Any) -> float:
    """Rates are floats from YAML and directory names; compare them rounded."""
    v = _number(rate)
    return round(v, 9) if math.isfinite(v) else math.nan


@dataclass
class ReportIndex:
    values: dict[tuple[str, float, str], dict[str, np.ndarray]]
    repetitions: dict[tuple[str, float, str], dict[str, list[str]]]  # labels, in the order of `values`
    rates: dict[str, list[float]]
    #: (workload, rate) -> treatment -> (total, lost, per-run (total, lost) in repetition order): the shedding guard
    #: judges the loss with runs as the unit (requests within a run are not independent).
    requests: dict[tuple[str, float], dict[str, tuple[int, int, tuple[tuple[int, int], ...]]]]

    @classmethod
    def build(cls, reports: Any) -> ReportIndex:
        table = getattr(reports, "table", None)
        if table is None or not hasattr(table, "columns"):
            raise StatsError("reports: expected a ReportSet (bot.bench.reports.load_results) with a `table` DataFrame")
        missing = [c for c in TABLE_COLUMNS if c not in table.columns]
        if missing:
            raise StatsError(
                f"reports.table: missing columns {missing}; load reports with bot.bench.reports.load_results"
            )
        # Plain dict accumulation, not pandas groupby: evaluate() runs in loops of thousands of
        # simulated experiments, where groupby's fixed cost dominated.
        acc: dict[tuple[str, float, str, str], dict[Any, list[float]]] = {}
        cols = [table[c].to_numpy() for c in TABLE_COLUMNS]
        for treatment, wl, rate, rep, metric, value in zip(*cols, strict=False):
            rk = rate_key(rate)
            if not math.isfinite(rk):
                continue
            key = (str(wl), rk, str(metric), str(treatment))
            acc.setdefault(key, {}).setdefault(rep, []).append(_number(value))
        values: dict[tuple[str, float, str], dict[str, np.ndarray]] = {}
        labels: dict[tuple[str, float, str], dict[str, list[str]]] = {}
        rates: dict[str, set[float]] = {}
        for (wl, rate, metric, treatment), reps in sorted(acc.items()):
            # One value per repetition, in repetition order; a metric reported twice in one repetition is averaged.
            ordered = sorted(reps.items(), key=_rep_order)
            values.setdefault((wl, rate, metric), {})[treatment] = np.array(
                [sum(v) / len(v) for _, v in ordered], dtype=float
            )
            labels.setdefault((wl, rate, metric), {})[treatment] = [_rep_label(r) for r, _ in ordered]
            rates.setdefault(wl, set()).add(rate)
        requests: dict[tuple[str, float], dict[str, tuple[int, int, tuple[tuple[int, int], ...]]]] = {}
        req = getattr(reports, "requests", None)
        if req is not None and len(req) and all(c in req.columns for c in REQUEST_COLUMNS):
            racc: dict[tuple[str, float], dict[str, list]] = {}
            rcols = [req[c].to_numpy() for c in REQUEST_COLUMNS]
            for treatment, wl, rate, rep, total, failures, incomplete in zip(*rcols, strict=False):
                slot = racc.setdefault((str(wl), rate_key(rate)), {}).setdefault(str(treatment), [0, 0, {}, True])
                t, lost = _count(total), _count(failures) + _count(incomplete)
                slot[0] += t
                slot[1] += lost
                run = slot[2].setdefault(rep, [0, 0])
                run[0] += t
                run[1] += lost
                # A run with a total but neither failures nor incomplete reported cannot be guarded.
                if not math.isfinite(_number(total)) or (
                    not math.isfinite(_number(failures)) and not math.isfinite(_number(incomplete))
                ):
                    slot[3] = False
            for key in sorted(racc):
                requests[key] = {
                    t: (v[0], v[1], tuple((r[0], r[1]) for _, r in sorted(v[2].items(), key=_rep_order)))
                    for t, v in sorted(racc[key].items())
                    if v[3]
                }
        return cls(values, labels, {w: sorted(r) for w, r in rates.items()}, requests)

    def arms(self, workload: str, rate: float, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """(baseline, evolved) run-level values of a cell, each in repetition order."""
        got = self.values.get((workload, rate_key(rate), metric), {})
        empty = np.empty(0)
        return got.get(BASELINE, empty), got.get(EVOLVED, empty)

    def labels(self, workload: str, rate: float, metric: str) -> tuple[list[str], list[str]]:
        """The repetition labels of ``arms``, in the same order."""
        got = self.repetitions.get((workload, rate_key(rate), metric), {})
        return list(got.get(BASELINE, [])), list(got.get(EVOLVED, []))


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


def _rep_label(rep: Any) -> str:
    v = _number(rep)
    return f"{int(v)}" if math.isfinite(v) and v == int(v) else str(rep)


def unusable(baseline: np.ndarray, evolved: np.ndarray) -> str:
    """What keeps a cell's values off the log scale, counted by cause and arm ("" when every value is usable).

    A verdict must name the cause it halted on: "zero" and "infinite" send a person to different fixes.
    """
    parts = []
    for arm, values in ((BASELINE, baseline), (EVOLVED, evolved)):
        causes = {
            "missing": int(np.isnan(values).sum()),
            "infinite": int(np.isinf(values).sum()),
            "zero": int((values == 0).sum()),
            "negative": int((np.isfinite(values) & (values < 0)).sum()),
        }
        found = [f"{n} {cause}" for cause, n in causes.items() if n]
        if found:
            parts.append(f"{', '.join(found)} {arm} value(s)")
    return "; ".join(parts)


def cells_of(h: Hypothesis, index: ReportIndex) -> list[tuple[str, float | None]]:
    """The (workload, rate) cells a hypothesis is judged on: its own rates, else every rate the reports have for
    the workload, else the workload with no rate (its cell then says there are no reports for it)."""
    out: list[tuple[str, float | None]] = []
    for wl in h.workloads:
        if h.rates:
            out.extend((wl, float(r)) for r in sorted(set(h.rates)))
        elif index.rates.get(wl):
            out.extend((wl, r) for r in index.rates[wl])
        else:
            out.append((wl, None))
    return out
