"""The recalibration check: simulator-scale thresholds raised to pod scale, and what that does to the plugin.

A threshold evolved against a simulator's few requests per instance needs re-calibrating for a vLLM
pod's tens; the config says so. This module picks the values the check runs the compiled plugin with
(a person's gate-1 choices, else every such threshold times POD_SCALE), the values of the same step it
also tries, and the findings: an inversion (a busier endpoint scoring higher), with values that avoid
it when the harness found some, and a threshold a person re-calibrated no longer blocking.
"""

from __future__ import annotations

import itertools

from bot.golang import probes
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


def same_step_alternatives(an: Analysis, gen: Generated, recalibrated: dict) -> list[dict]:
    """Values to try for the parameters of the same step as the re-calibrated thresholds, fewest changed first:
    each one's evolved value divided by POD_SCALE (a taper's slope over a span POD_SCALE times as wide falls as
    much), alone and together. Whole-number parameters are left out: dividing them rounds the step away."""
    evolved = {p.name: p for p in gen.params}
    names = [
        n
        for n in same_step(an, recalibrated)
        if n in evolved and evolved[n].go_type in ("float64", "float32") and isinstance(evolved[n].json_default, float)
    ][:3]
    subsets = [c for k in range(1, len(names) + 1) for c in itertools.combinations(names, k)]
    return [{n: evolved[n].json_default / POD_SCALE for n in subset} for subset in subsets]


def inversion_findings(
    inversions, recalibrated: dict, an: Analysis, gen: Generated, *, chosen: bool, safe: dict | None = None
) -> list[Finding]:
    """IMPORTANT when the re-calibration the config asks for sends traffic to the busier pod. It names the
    parameters of the same step that kept their evolved values (moving the thresholds alone is what inverts a
    taper), and says whose values were tried: after a person's ``param`` lines the same words as before would
    read as if the change had been ignored."""
    if not inversions:
        return []
    busy, busy_score, idle, idle_score = inversions[0]
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
            message=(
                f"{tried} and every other parameter as evolved, the plugin scores a busier endpoint higher: {busy} "
                f"running requests score {busy_score:.3f}, {idle} score {idle_score:.3f} (in {len(inversions)} of "
                f"{len(probes.RECALIBRATION_LOADS)} load pairs); {why}"
            ),
            fix=_safe_fix(safe, recalibrated, gen)
            or (
                (move if stayed else "re-derive the parameters that act on the same load together")
                + " (each taper must stay >= 0 up to its cut, each cut must lower the score) and set them at gate 1 "
                "with `param NAME: VALUE` lines, one per parameter: the translation reruns this check on those values"
            ),
        )
    ]


def _safe_fix(safe: dict | None, recalibrated: dict, gen: Generated) -> str:
    """The fix when the harness found values of the same step that keep a busier endpoint scoring lower: the
    lines to paste at gate 1, and why those values."""
    if not safe:
        return ""
    evolved = {p.name: p.json_default for p in gen.params}
    lines = ", ".join(f"`param {n}: {go_float(v)}`" for n, v in (recalibrated | safe).items())
    why = ", ".join(f"{n} is the evolved {go_float(float(evolved[n]))} / {POD_SCALE}" for n in safe)
    return (
        f"set {lines} at gate 1, one `param` line each: {why} (the same slope over a span {POD_SCALE} times as wide), "
        "and with these values a busier endpoint scored lower at every load pair the harness tried; check them "
        "against the benchmark (the translation reruns this check on the values you set)"
    )


def recalibrated_findings(an: Analysis, deployed: dict[str, float | str]) -> list[Finding]:
    """The analysis's findings, with a simulator-scale threshold a person re-calibrated at gate 1 no longer blocking:
    the decision is on record (the config line says the value and BLIS's), so the finding becomes a note."""
    lines = {ln: th.param for th in an.thresholds if th.param in deployed for ln in th.lines}
    out = []
    for f in an.findings:
        if f.check == SIM_SCALE and f.source_line in lines:
            name = lines[f.source_line]
            f = f.model_copy(
                update={
                    "severity": Severity.SUGGESTION,
                    "message": f"{f.message.split('; the parameter is live')[0]}; re-calibrated at gate 1: `{name}` = "
                    f"{go_float(deployed[name])} in the deployed config",
                    "fix": "check the value on the GPU run (gate 3)",
                }
            )
        out.append(f)
    return out
