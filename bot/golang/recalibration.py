"""The recalibration check: simulator-scale thresholds raised to pod scale, and what that does to the plugin.

A threshold evolved against a simulator's few requests per instance needs re-calibrating for a vLLM
pod's tens; the config says so. This module picks the values the check runs the compiled plugin with
(a person's gate-1 choices, else every such threshold times POD_SCALE), the values of the same step it
also tries, and the findings: an inversion (a busier endpoint scoring higher), with values that avoid
it when the harness found some, and a threshold a person re-calibrated no longer blocking.
"""

from __future__ import annotations

import itertools

from bot.golang import counter_era, probes
from bot.golang.analysis_types import Analysis
from bot.golang.generate import Generated
from bot.golang.gonames import go_float
from bot.golang.plugin_docs import config_line, same_step, sim_scale_thresholds
from bot.model import Finding, Severity

SIM_SCALE = "hazard.sim-scale-threshold"


#: How far the recalibration check raises simulator-scale thresholds when no one has chosen values: from a few
#: requests per simulated instance to the tens a vLLM pod runs.
POD_SCALE = 8
RECALIBRATION = "hazard.recalibration-inverts"


def recalibration_values(an: Analysis, deployed: dict[str, float | str]) -> dict[str, float]:
    """The values the recalibration check runs the plugin with: the ones a person chose at gate 1 when they
    touch a simulator-scale threshold, else every such threshold times POD_SCALE (the rest as evolved)."""
    if any(th.param in deployed for th in sim_scale_thresholds(an)):
        return {k: v for k, v in deployed.items() if not isinstance(v, str)}
    return pod_scale(an)


def pod_scale(an: Analysis) -> dict[str, float]:
    """Every simulator-scale threshold times POD_SCALE: the values the check tries when no one chose any, and
    the example gate 1 offers for ``param`` (a change the review asks for, not a no-op)."""
    return {
        th.param: (int(th.value) * POD_SCALE if th.go_type in ("int", "int64") else th.value * POD_SCALE)
        for th in sim_scale_thresholds(an)
    }


#: Roles that place a cut on the load (scaled with it) and roles that are a slope per unit of it (scaled inversely).
_CUTS = ("threshold", "offset", "cap")
_SLOPES = ("coefficient", "step")


def same_step_alternatives(an: Analysis, gen: Generated, recalibrated: dict) -> list[dict]:
    """Values to try for the parameters of the same step as the re-calibrated thresholds, derived from the values
    actually in use: first every cut of the step scaled as the re-calibrated ones were (loadLowThreshold with
    loadHighThreshold) and every slope divided by how much wider the span between the cuts became; then the
    slopes alone, over the span the thresholds now have. Whole-number slopes are left out (dividing rounds them)."""
    evolved = {p.name: p for p in gen.params}
    by_param = {th.param: th for th in an.thresholds if th.param}
    sim = {th.param for th in sim_scale_thresholds(an)}
    scales = [
        float(v) / by_param[n].value
        for n, v in recalibrated.items()
        if n in sim and by_param[n].role in _CUTS and by_param[n].value
    ]
    if not scales:
        return []
    k = scales[0]
    step = [n for n in same_step(an, recalibrated) if n in evolved and n in by_param]
    cuts = {
        n: (round(by_param[n].value * k) if evolved[n].go_type in ("int", "int64") else by_param[n].value * k)
        for n in step
        if by_param[n].role in _CUTS
    }
    slopes = [
        n
        for n in step
        if by_param[n].role in _SLOPES
        and evolved[n].go_type in ("float64", "float32")
        and isinstance(evolved[n].json_default, float)
    ][:3]

    def derived(cut_values: dict) -> dict:
        wider = _span_ratio(an, recalibrated, cut_values, k)
        return {n: float(f"{evolved[n].json_default / wider:.4g}") for n in slopes}

    out = [cuts | derived(cuts)] if cuts else []
    over_span = derived({})
    subsets = [c for n in range(1, len(slopes) + 1) for c in itertools.combinations(slopes, n)]
    out += [{n: over_span[n] for n in subset} for subset in subsets]
    return [alt for i, alt in enumerate(out) if alt and alt not in out[:i]]


def _span_ratio(an: Analysis, recalibrated: dict, cut_values: dict, k: float) -> float:
    """How many times as wide the span between the step's cuts is with these values as evolved (``k``, the
    thresholds' own scale, when the step has one cut): a slope divided by it falls as much over the span."""
    names = set(recalibrated) | set(cut_values) | set(same_step(an, recalibrated))
    cuts = [th for th in an.thresholds if th.param in names and th.role in _CUTS]
    if len(cuts) < 2:
        return k
    now = [float(recalibrated.get(th.param, cut_values.get(th.param, th.value))) for th in cuts]
    was = [th.value for th in cuts]
    old, new = max(was) - min(was), max(now) - min(now)
    return new / old if old > 0 and new > 0 else k


def cut_values(an: Analysis, recalibrated: dict, alternatives: list[dict]) -> list[float]:
    """The cuts the recalibration check must straddle: every threshold value it runs the plugin with."""
    roles = {th.param: th.role for th in an.thresholds if th.param}
    return sorted({float(v) for d in [recalibrated, *alternatives] for n, v in d.items() if roles.get(n) in _CUTS})


def inversion_findings(
    inversions,
    recalibrated: dict,
    an: Analysis,
    gen: Generated,
    *,
    chosen: bool,
    safe: dict | None = None,
    pairs: int = 0,
    refused: list[str] | None = None,
) -> list[Finding]:
    """IMPORTANT when the re-calibration the config asks for sends traffic to the busier pod. It names the
    parameters of the same step that kept their evolved values (moving the thresholds alone is what inverts a
    taper), and says whose values were tried: after a person's ``param`` lines the same words as before would
    read as if the change had been ignored. ``refused``: why the plugin's Validate() refuses these values (a taper
    that falls below its cut); the harness cannot build the plugin with them, so the finding says that instead."""
    refused = refused or []
    if not inversions and not refused:
        return []
    first = next(iter(recalibrated))
    values = ", ".join(f"{k}={go_float(v)}" for k, v in recalibrated.items())
    evolved = {p.name: p.json_default for p in gen.params}
    stayed = [n for n in same_step(an, recalibrated) if n in evolved]
    kept = ", ".join(f"{n}={go_float(float(evolved[n]))}" for n in stayed)
    tried = f"with the values set at gate 1 ({values})" if chosen else f"re-calibrated to pod scale ({values})"
    why = (
        f"{', '.join(stayed)} act{'s' if len(stayed) == 1 else ''} on the same load and kept the evolved "
        f"value{'s' if len(stayed) > 1 else ''} ({kept}), so a factor of the same step turns negative or a cut "
        "stops cutting"
        if stayed
        else "a factor of the same step turns negative or a cut stops cutting"
    )
    move = f"move {', '.join(f'`{n}`' for n in stayed)} together with {', '.join(f'`{n}`' for n in recalibrated)}"
    return [
        Finding(
            severity=Severity.IMPORTANT,
            check=RECALIBRATION,
            file=gen.config_path,
            line=config_line(gen.epp_config, first),
            message=f"{tried} and every other parameter as evolved, {_outcome(inversions, refused, pairs)}; {why}",
            fix=_safe_fix(safe, recalibrated, an)
            or (
                (move if stayed else "re-derive the parameters that act on the same load together")
                + " (each taper must stay >= 0 up to its cut, each cut must lower the score) and set them at gate 1 "
                "with `param NAME: VALUE` lines, one per parameter: the translation reruns this check on those values"
            ),
        )
    ]


def _outcome(inversions, refused: list[str], pairs: int) -> str:
    """What the re-calibrated plugin does: the load pair the harness saw inverted, or Validate()'s refusal."""
    if not inversions:
        return (
            "the plugin would score a busier endpoint higher, so its Validate() refuses the values and the EPP "
            f"would not start: {'; '.join(refused)}"
        )
    busy, busy_score, idle, idle_score = inversions[0]
    return (
        f"the plugin scores a busier endpoint higher: {busy} running requests score {busy_score:.3f}, {idle} score "
        f"{idle_score:.3f} (in {len(inversions)} of {pairs or len(probes.RECALIBRATION_LOADS)} load pairs)"
    )


def _safe_fix(safe: dict | None, recalibrated: dict, an: Analysis) -> str:
    """The fix when the harness found values of the same step that keep a busier endpoint scoring lower: the
    lines to paste at gate 1, and how each value follows from the thresholds in use."""
    if not safe:
        return ""
    by_param = {th.param: th for th in an.thresholds if th.param}
    lines = ", ".join(f"`param {n}: {go_float(v)}`" for n, v in (recalibrated | safe).items())
    why = "; ".join(_why(by_param[n], v, recalibrated) for n, v in safe.items() if n in by_param)
    return (
        f"set {lines} at gate 1, one `param` line each: {why}; with these values a busier endpoint scored lower "
        "at every load pair the harness tried, on both sides of every cut; check them against the benchmark "
        "(the translation reruns this check on the values you set)"
    )


def _why(th, value: float, recalibrated: dict) -> str:
    """How one offered value follows from the evolved one: a cut scaled as the re-calibrated thresholds were,
    a slope divided by how much wider its span became."""
    if th.role in _CUTS:
        return (
            f"{th.param} is the evolved {go_float(th.value)} x {go_float(round(float(value) / th.value, 4))}, "
            f"as {', '.join(recalibrated)} moved"
        )
    ratio = go_float(round(th.value / float(value), 4))
    return f"{th.param} is the evolved {go_float(th.value)} / {ratio} (the same fall over a span {ratio} times as wide)"


def recalibrated_findings(an: Analysis, deployed: dict[str, float | str]) -> list[Finding]:
    """The analysis's findings, with a simulator-scale threshold a person re-calibrated at gate 1 no longer blocking:
    the decision is on record (the config line says the value and BLIS's), so the finding becomes a note. Keyed
    by parameter: setting one does not silence another's finding on the same evolved line. A pre-rename copy's
    ``hazard.counter-meaning-changed`` becomes a note too once every threshold it names is set (``counter_era``)."""
    out = []
    for f in an.findings:
        if f.check == SIM_SCALE and f.param in deployed:
            name = f.param
            f = f.model_copy(
                update={
                    "severity": Severity.SUGGESTION,
                    "message": f"{f.message.split('; the parameter is live')[0]}; re-calibrated at gate 1: `{name}` = "
                    f"{go_float(deployed[name])} in the deployed config",
                    "fix": "check the value on the GPU run (gate 3)",
                }
            )
        elif f.check == counter_era.CHECK and counter_era.recalibrated(an, deployed):
            f = counter_era.as_recalibrated(f, an, deployed)
        out.append(f)
    return out
