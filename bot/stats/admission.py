"""Per-class admission from a priority mix: does the evolved admitter shed sheddable traffic first?

The priority mix (``bot.bench.priority_mix``) gives, per arm and traffic class, how many requests were
sent and how many were admitted and served (2xx). A class's admit rate is successes / requests, pooled
over the arm's runs. Two questions are asked of it:

- **per class, evolved against baseline**: Fisher's exact test on the 2 x 2 table (admitted / not, per
  arm), two-sided, the classes one family under Holm (``bot.stats.multiplicity``): a class "admits
  fewer" or "admits more" only when its adjusted p is within alpha;
- **the shedding order** (the admission hypothesis that sheddable traffic, priority < 0, is shed before
  critical traffic), judged on the requests the EPP shed, not on successes: on llm-d-router v0.10.0 refused
  with HTTP 429 by its built-in admission (``bot.model.evidence.SHED_STATUS``) or with HTTP 500 by an Admitter
  plugin (``ADMITTER_REJECT_STATUS``: director.go rewrites the plugin's error to errcommon.Internal). The harness
  keeps no response body, so a 500 that streamed nothing cannot be told from an unrelated server error: it is
  counted as shed in both arms and every class, and the verdict says how many sheds were 500s
  (``_ambiguous``). A server error that strikes every class alike adds to the critical class's count as much as
  to a sheddable one's, so it does not make an order, and a protected class's 500s count against the evolved
  arm: the ambiguity can cost the claim, not confirm it. A class that timed out or got another 5xx under load
  saw the stack fail, not the admitter shed; those failures are reported apart and never count as shedding. Within the evolved arm, each sheddable class against the highest-priority class (one-sided
  Fisher: shed more), and each non-sheddable class against its baseline (one-sided: shed more under
  evolved), all in one Holm family with the per-class tests' alpha. Confirmed when every sheddable class
  is shed more than the critical class and no protected class is shed more than under the baseline;
  refuted when a protected class is, or a sheddable class is shed less than the critical one;
  inconclusive otherwise, and always when no sheddable request was shed in the evolved arm (the load did
  not saturate the stack, or it failed instead of shedding, so the order was never exercised).

Pooling counts requests as independent trials. Requests of one run share its load, so the p-values are
optimistic when runs differ (one saturated run can carry a pooled p of 1e-20 alone). So the order is confirmed
only when every evolved run agrees with it (``runs_disagree``: each sheddable class admitted less than the
critical class within the run), and the verdict shows each arm's per-run rates beside the pooled ones. Three
runs cannot make a test across runs significant (a sign test's smallest p is 1/8), so the per-run check is a
condition, not a p-value. Runs of different loads (workload, rate) are never pooled or compared
(``MixedLoads``): how much an admitter sheds depends on how saturated the stack is.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from bot.model.evidence import ADMITTER_REJECT_STATUS, SHED_STATUS
from bot.stats.decide import CONFIRMED, INCONCLUSIVE, REFUTED
from bot.stats.multiplicity import holm


class MixedLoads(ValueError):
    """The count table holds runs of more than one load (workload, rate): their admit rates cannot be pooled."""


@dataclass(frozen=True)
class ClassAdmission:
    """One traffic class: admitted / sent per arm (pooled over runs), per-run rates, the test against baseline."""

    traffic_class: str
    priority: int | None
    baseline: tuple[int, int]  # (admitted, requests)
    evolved: tuple[int, int]
    baseline_runs: tuple[float, ...]
    evolved_runs: tuple[float, ...]
    p: float
    adjusted: float
    baseline_shed: int = 0  # of the requests, shed (HTTP 429, or a 500 that streamed nothing)
    evolved_shed: int = 0
    baseline_shed_500: int = 0  # of the shed, HTTP 500s: an Admitter's refusal or an unrelated server error
    evolved_shed_500: int = 0

    @staticmethod
    def _rate(pair: tuple[int, int]) -> float | None:
        return pair[0] / pair[1] if pair[1] else None

    @property
    def baseline_rate(self) -> float | None:
        return self._rate(self.baseline)

    @property
    def evolved_rate(self) -> float | None:
        return self._rate(self.evolved)

    def change(self, alpha: float) -> str:
        if not (self.baseline[1] and self.evolved[1]):
            return "not measured"
        if self.adjusted > alpha:
            return "no detectable change"
        return "admits fewer" if self.evolved_rate < self.baseline_rate else "admits more"


@dataclass(frozen=True)
class ShedOrder:
    """The shedding-order verdict: status (CONFIRMED / INCONCLUSIVE / REFUTED) and why, in words."""

    status: int
    why: str


def _fisher(a: tuple[int, int], b: tuple[int, int], alternative: str = "two-sided") -> float:
    """p of Fisher's exact test that a's admit rate differs from (``less``: is below) b's."""
    from scipy.stats import fisher_exact  # here: stage 2 imports this module (the PR draft), scipy.stats is slow

    table = [[a[0], a[1] - a[0]], [b[0], b[1] - b[0]]]
    return float(fisher_exact(table, alternative=alternative).pvalue)


def _pooled(
    table: pd.DataFrame, arm: str
) -> dict[str, tuple[tuple[int, int], tuple[float, ...], int | None, int, int]]:
    out = {}
    for name, g in table[table["treatment"] == arm].groupby("traffic_class", sort=True):
        runs = tuple(float(s / r) for s, r in zip(g["successes"], g["requests"], strict=True) if r)
        prio = g["priority"].dropna()
        out[str(name)] = (
            (int(g["successes"].sum()), int(g["requests"].sum())),
            runs,
            int(prio.iloc[0]) if len(prio) else None,
            int(g["shed"].sum()),
            int(g["shed_500"].sum()) if "shed_500" in g else 0,
        )
    return out


def _one_load(table: pd.DataFrame) -> None:
    """MixedLoads unless every run of the table ran one load: an arm driven at 80 req/s against one at 10 would
    "shed more" from load alone, and pooling two rates in one arm mixes two saturations."""
    loads = {arm: sorted(set(zip(g["workload"], g["rate"], strict=True))) for arm, g in table.groupby("treatment")}
    every = sorted({load for arm_loads in loads.values() for load in arm_loads})
    if len(every) <= 1:
        return
    said = "; ".join(
        f"{arm} at {', '.join(f'{w} @ {r:g} req/s' for w, r in arm_loads)}" for arm, arm_loads in sorted(loads.items())
    )
    raise MixedLoads(
        f"the priority-mix runs are of more than one load ({said}): admit rates of different loads cannot be "
        "pooled or compared; judge runs of the plan's one load (priority_mix.rate)"
    )


def class_admission(table: pd.DataFrame) -> list[ClassAdmission]:
    """Per traffic class, evolved against baseline (``bot.bench.priority_mix.COUNT_COLUMNS`` rows), Holm-adjusted.

    Raises MixedLoads when the runs are not all of one load (workload and rate)."""
    _one_load(table)
    base, evo = _pooled(table, "baseline"), _pooled(table, "evolved")
    names = sorted(set(base) | set(evo))
    none = ((0, 0), (), None, 0, 0)
    ps = []
    for n in names:
        b, e = base.get(n, none)[0], evo.get(n, none)[0]
        ps.append(_fisher(e, b) if b[1] and e[1] else 1.0)
    adjusted = holm(ps) if ps else []
    out = []
    for n, p, adj in zip(names, ps, adjusted, strict=True):
        b, e = base.get(n, none), evo.get(n, none)
        prio = e[2] if e[2] is not None else b[2]
        out.append(ClassAdmission(n, prio, b[0], e[0], b[1], e[1], p, float(adj), b[3], e[3], b[4], e[4]))
    return sorted(out, key=lambda c: (-(c.priority if c.priority is not None else 0), c.traffic_class))


def _kept(c: ClassAdmission, arm: str) -> tuple[int, int]:
    """(requests not shed, requests) of one arm: only a shed (``bot.bench.priority_mix.is_shed``) is shedding; a
    timeout or another 5xx is kept, and failed."""
    sent = c.evolved[1] if arm == "evolved" else c.baseline[1]
    shed = c.evolved_shed if arm == "evolved" else c.baseline_shed
    return sent - shed, sent


def _failed(classes: list[ClassAdmission]) -> str:
    """The evolved arm's requests that failed without being shed, per class, in words ("" when none)."""
    parts = [f"{c.traffic_class} {n}" for c in classes if (n := c.evolved[1] - c.evolved[0] - c.evolved_shed) > 0]
    if not parts:
        return ""
    return (
        f"; failed without being shed (timeouts, 5xx other than a refusal: the stack failing, not the admitter "
        f"shedding; not counted as shed) in the evolved arm: {', '.join(parts)}"
    )


def _ambiguous(classes: list[ClassAdmission]) -> str:
    """What the verdict must say when HTTP 500s were counted as shed ("" when none were): the report cannot tell an
    Admitter's refusal from an unrelated server error, and which way that can bias the order."""
    evolved, baseline = sum(c.evolved_shed_500 for c in classes), sum(c.baseline_shed_500 for c in classes)
    if not evolved and not baseline:
        return ""
    base = f" (the baseline arm runs no Admitter, so its {baseline} are such errors)" if baseline else ""
    return (
        f"; {evolved} of the evolved arm's and {baseline} of the baseline arm's shed requests are HTTP "
        f"{ADMITTER_REJECT_STATUS}: on llm-d-router v0.10.0 an Admitter's refusal reaches the client as "
        f"{ADMITTER_REJECT_STATUS} (director.go rewrites it to errcommon.Internal), and the priority-mix harness "
        f"records no response body, so such a {ADMITTER_REJECT_STATUS} cannot be told from an unrelated server "
        f"error{base}; each is counted as shed, in both arms and every class: an error that strikes every class "
        "alike adds to the critical class's count as much as to a sheddable one's, so it does not make an order, "
        "and a protected class's 500s count against the evolved arm"
    )


def shedding_order(classes: list[ClassAdmission], alpha: float) -> ShedOrder:
    """Whether the evolved arm sheds (HTTP 429, or 500 on v0.10.0) its sheddable classes before the critical one and
    no protected class more than the baseline did. Requests that failed any other way are said, never counted as
    shed; 500s counted as shed are said too (``_ambiguous``)."""
    measured = [c for c in classes if c.priority is not None and c.baseline[1] and c.evolved[1]]
    sheddable = [c for c in measured if c.priority < 0]
    protected = [c for c in measured if c.priority >= 0]
    if not sheddable or not protected:
        return ShedOrder(
            INCONCLUSIVE, "the mix needs a sheddable class (priority < 0) and a protected one, both measured"
        )
    failed = _failed(measured) + _ambiguous(measured)
    if not any(c.evolved_shed for c in sheddable):
        return ShedOrder(
            INCONCLUSIVE,
            f"the evolved arm shed nothing (no HTTP {SHED_STATUS} or {ADMITTER_REJECT_STATUS} in a sheddable class): "
            f"the load did not saturate the stack, so the shedding order was never exercised{failed}",
        )
    critical = max(protected, key=lambda c: c.priority)
    top = _kept(critical, "evolved")
    tests = [
        (f"{c.traffic_class} more than {critical.traffic_class}", "order", _fisher(_kept(c, "evolved"), top, "less"))
        for c in sheddable
    ]
    tests += [
        (
            f"{c.traffic_class} more than its baseline",
            "loss",
            _fisher(_kept(c, "evolved"), _kept(c, "baseline"), "less"),
        )
        for c in protected
    ]
    tests += [
        (f"{c.traffic_class} less than {critical.traffic_class}", "inverted", _fisher(top, _kept(c, "evolved"), "less"))
        for c in sheddable
    ]
    adjusted = holm([p for _, _, p in tests])
    hit = {label: kind for (label, kind, _), adj in zip(tests, adjusted, strict=True) if adj <= alpha}
    bad = sorted(label for label, kind in hit.items() if kind in ("loss", "inverted"))
    if bad:
        return ShedOrder(REFUTED, "the evolved arm sheds " + "; ".join(bad) + f" (Holm, alpha {alpha:g}){failed}")
    order = [label for label, kind in hit.items() if kind == "order"]
    disagree = runs_disagree(sheddable, critical)
    if len(order) == len(sheddable) and disagree:
        return ShedOrder(
            INCONCLUSIVE,
            f"pooled, the evolved arm sheds {', '.join(sorted(order))} (Holm, alpha {alpha:g}), but its runs do not "
            f"agree: {disagree}; Fisher's test counts requests as independent, so one run can carry the pooled "
            f"p-value{failed}",
        )
    if len(order) == len(sheddable):
        return ShedOrder(
            CONFIRMED,
            f"the evolved arm sheds {', '.join(sorted(order))} (HTTP {SHED_STATUS} or {ADMITTER_REJECT_STATUS}), and "
            "no protected class more "
            f"than its baseline (Holm, alpha {alpha:g}); every one of its {len(critical.evolved_runs)} runs admits "
            f"each sheddable class less than {critical.traffic_class}{failed}",
        )
    return ShedOrder(
        INCONCLUSIVE, f"the sheddable classes are not shed detectably more than the critical class{failed}"
    )


def runs_disagree(sheddable: list[ClassAdmission], critical: ClassAdmission) -> str:
    """The evolved runs in which a sheddable class was admitted at least as often as the critical class, in words
    ("" when every run agrees with the order). A run's classes are paired by position, so a class missing from a
    run (no requests) leaves the runs unpaired, which is said too."""
    top = critical.evolved_runs
    out = []
    for c in sheddable:
        if len(c.evolved_runs) != len(top):
            out.append(
                f"{c.traffic_class} was sent in {len(c.evolved_runs)} runs, {critical.traffic_class} in {len(top)}"
            )
            continue
        bad = [i for i, (x, y) in enumerate(zip(c.evolved_runs, top, strict=True), 1) if x >= y]
        if bad:
            out.append(
                f"{c.traffic_class} was admitted as often as {critical.traffic_class} or more in {len(bad)} of "
                f"{len(top)} runs (run {', '.join(map(str, bad))} in repetition order)"
            )
    return "; ".join(out)
