"""Where a hypothesis is tested: the real rates and workloads a BLIS claim or a Map C gap maps to.

BLIS rates are simulator-calibrated and often on another scale than the GPU rates
the request lists, and dictionary hints name workloads by profile or by words; this
module turns both into the request's own workload names and rates, or says why a
gap cannot be run here.
"""

from __future__ import annotations

import re

from bot.bench.layout import split_condition
from bot.model import Family, Hypothesis, PromotionRequest


def claim_rates(claim_rate: float | None, real_rates: list[float]) -> list[float]:
    """The real rates a BLIS claim's rate stands for (module docstring: operating-point rule)."""
    if claim_rate is None:
        return []
    rates = sorted(real_rates)
    if any(abs(r - claim_rate) <= 1e-9 * max(1.0, abs(r)) for r in rates):
        return [next(r for r in rates if abs(r - claim_rate) <= 1e-9 * max(1.0, abs(r)))]
    if rates[0] <= claim_rate <= rates[-1]:
        return [min(rates, key=lambda r: (abs(r - claim_rate), r))]
    return []


def norm_name(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def workloads_for_prefix(req: PromotionRequest, prefix: str | None) -> tuple[list[str], str]:
    """Request workloads an OpenEvolve per-workload metric refers to, and a note on how they were chosen."""
    every = [w.name for w in req.workloads]
    if prefix is None:
        return every, "the metric averages BLIS workloads, so it is checked on every workload"
    p = norm_name(prefix)
    hits = [
        w.name for w in req.workloads if norm_name(w.name) == p or (w.blis_workload and p in norm_name(w.blis_workload))
    ]
    if hits:
        return hits, f"BLIS workload `{prefix}` corresponds to {', '.join(f'`{h}`' for h in hits)}"
    return every, f"no workload declares blis_workload `{prefix}`, so it is checked on every workload"


def workloads_named_in(req: PromotionRequest, text: str, default: list[str], note: str) -> tuple[list[str], str]:
    """An averaged EXPECT metric is checked where the HYPOTHESIS line says ("Under load-spikes, ..."),
    else on the workload the program was evolved for; spreading it over guard workloads would make it
    contradict their Track C equivalence hypotheses."""
    words = set(re.findall(r"[a-z0-9][a-z0-9_-]*", text.lower()))
    named = [
        w.name
        for w in req.workloads
        if w.name in words
        or (w.blis_workload and norm_name(w.blis_workload.removesuffix(".yaml")) in {norm_name(x) for x in words})
    ]
    if named:
        return named, f"the HYPOTHESIS line names {', '.join(f'`{n}`' for n in named)}"
    if req.evolved_for:
        return (
            [req.evolved_for],
            f"the HYPOTHESIS line names no workload, so it is checked on `{req.evolved_for}`, the workload the program was evolved for",
        )
    return default, note


#: Words in a Map C gap's run-condition hint that mean a setup the standard plan
#: (baseline vs evolved EPP on the request's workloads) does not provide, unless a
#: request workload is named in the hint. Such gaps get no benchmark prediction:
#: a "no worse" verdict from a run without the condition would be false evidence.
SPECIAL_SETUP = (
    "pod deleted",
    "pod failure",
    "failure",
    "restart",
    "lora",
    "adapter",
    "disaggregat",
    "pd-",
    "mixed-capacity",
    "heterogen",
    "priority-mix",
    "mixed-class",
    "variance",
    "inject",
)


def hint_workloads(req: PromotionRequest, hint: str) -> list[str]:
    """Request workloads a dictionary hint names, by workload name or harness profile (plural-insensitive)."""
    h = norm_name(hint)
    hits = []
    for w in req.workloads:
        keys = {
            norm_name(w.name),
            norm_name(w.profile),
            norm_name(w.name).rstrip("s"),
            norm_name(w.profile).rstrip("s"),
        }
        if any(k and k in h for k in keys):
            hits.append(w.name)
    return hits


def hint_rates(req: PromotionRequest, workloads: list[str], hint: str) -> list[float]:
    """lowest / middle / moderate / highest rate of a single workload, when the hint asks for one."""
    if len(workloads) != 1:
        return []
    rates = sorted(req.workload(workloads[0]).rates)
    h = hint.lower()
    if "lowest" in h:
        return [rates[0]]
    if "highest" in h or "near saturation" in h:
        return [rates[-1]]
    if "middle" in h or "moderate" in h:
        return [rates[(len(rates) - 1) // 2]]
    return []


#: Hint words for requests of several priority classes. No request workload can send them (promotion.yaml has no
#: priority mix; the plan's priority-mix experiment, an admitter's only, is judged by per-class admit rate), so a workload merely
#: *named* like one provides nothing.
CLASS_MIX = ("priority-mix", "mixed-class")


def gap_run_plan(req: PromotionRequest, hint: str, family: Family) -> tuple[list[str], list[float], str | None]:
    """(workloads, rates, why the standard plan cannot decide it or None) for a Map C gap's hint."""
    low = hint.lower()
    if any(k in low for k in CLASS_MIX):
        workloads = [req.evolved_for] if req.evolved_for else [w.name for w in req.workloads]
        why = (
            f"needs requests of several priority classes ({hint.strip()}); every planned workload sends all its "
            "requests at one priority (the plan's priority mix, an admitter's only, is judged by per-class admit rate), whatever the "
            "workload is called"
        )
        return workloads, [], why
    named = hint_workloads(req, hint)
    if named:
        return named, hint_rates(req, named, hint), None
    workloads = [req.evolved_for] if req.evolved_for else [w.name for w in req.workloads]
    low = hint.lower()
    special = [k for k in SPECIAL_SETUP if k in low]
    if family is Family.ROBUSTNESS or special:
        why = f"needs a run the standard plan does not include ({hint.strip()}) and no request workload provides it"
        return workloads, [], why
    return workloads, hint_rates(req, workloads, hint), None


#: Hint words for a gap decided where the evolved logic rarely acts (network-latency: "at low load, where
#: time-based branches rarely fire"): an equivalence there is only evidence on a cell that is low load.
LOW_LOAD = ("lowest", "low load")


def wants_low_load(hint: str) -> bool:
    """Whether a Map C gap's run-condition hint asks for low load (its equivalence holds only where little acts)."""
    return any(k in hint.lower() for k in LOW_LOAD)


def low_load_plan(
    req: PromotionRequest, workloads: list[str], claimed: dict[tuple[str, float], str]
) -> tuple[list[str], list[float], str | None]:
    """(workloads, rates, why none is low load or None) for a gap that must be judged at low load.

    A cell is low load only when it is the lowest rate of a workload that runs at several (a workload's only
    rate is its operating point, which nothing marks as low) and no Track A claim predicts a change on it
    (``claimed``: cell -> claim id): a claim of an effect there says the evolved logic acts there, so a
    working plugin would "refute" the equivalence and file a false gap. The cells kept share one rate (a
    hypothesis's rates hold for each of its workloads); without any, the plan cannot decide the gap.
    """
    ok: list[tuple[str, float]] = []
    why: list[str] = []
    for w in workloads:
        rates = sorted(req.workload(w).rates)
        low = rates[0]
        if len(rates) < 2:
            why.append(f"`{w}` runs at one rate ({low:g} req/s), which nothing marks as low load")
        elif (w, low) in claimed:
            why.append(
                f"{claimed[(w, low)]} predicts a change at `{w}` @ {low:g} req/s (the evolved logic acts there by "
                "its own claim)"
            )
        else:
            ok.append((w, low))
    if ok:
        rate = ok[0][1]
        return [w for w, r in ok if r == rate], [rate], None
    fix = "; to decide it, add a lower rate, one no claim predicts a change at, to the workload's rates"
    return workloads, [], "needs a low-load cell, and the plan has none: " + "; ".join(why) + fix


def cells(req: PromotionRequest, h: Hypothesis) -> set[tuple[str, float]]:
    """The (workload, rate) cells a hypothesis is judged on: its rates, or every rate of each workload when it
    names none. A fault treatment (``load-spikes+pod-failure``) is a cell of its own at its workload's rates."""
    rates = {w.name: w.rates for w in req.workloads}
    return {(w, r) for w in h.workloads for r in (h.rates or rates.get(split_condition(w)[0], []))}


def same_prediction(req: PromotionRequest, h: Hypothesis, earlier: list[Hypothesis]) -> Hypothesis | None:
    """An earlier Track A hypothesis that predicts what ``h`` does (metric, direction) on every cell ``h`` covers."""
    if h.prediction is None:
        return None
    mine = cells(req, h)
    for e in earlier:
        p = e.prediction
        if p is not None and (p.metric, p.direction) == (h.prediction.metric, h.prediction.direction):
            if mine and mine <= cells(req, e):
                return e
    return None
