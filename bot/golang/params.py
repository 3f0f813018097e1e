"""The plugin's JSON parameters: every evolved number, with its default, validation and doc comment."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.gonames import comment_lines, go_float, go_value

ROLE_WORDS = {
    "threshold": "threshold",
    "offset": "offset",
    "floor": "floor",
    "cap": "cap",
    "coefficient": "coefficient",
    "exponent": "exponent",
    "factor": "factor",
    "step": "step",
    "value": "value",
}

_FRACTION_SIGNALS = {"KVUtilization", "CacheHitRate"}


@dataclass
class ParamSpec:
    name: str
    field: str
    go_type: str
    default: str  # Go literal
    doc: str
    checks: list[dict] = field(default_factory=list)  # {cond, message, bad}
    threshold: Threshold | None = None
    json_default: object = None

    @property
    def doc_lines(self) -> list[str]:
        return comment_lines(self.doc)


def param_specs(an: Analysis, scorer_defaults: list[tuple[str, float]] | None, scheduling: bool) -> list[ParamSpec]:
    specs: list[ParamSpec] = []
    if scorer_defaults is not None:
        lit = ", ".join(f'{{Name: "{n}", Weight: {go_float(w)}}}' for n, w in scorer_defaults)
        specs.append(
            ParamSpec(
                "scorers",
                "Scorers",
                "[]ScorerConfig",
                f"[]ScorerConfig{{{lit}}}",
                "Scorers are BLIS's weighted-scoring terms (ws.scorers and ws.weights) in the evolved order, "
                "which positional logic depends on.",
                json_default=[{"name": n, "weight": w} for n, w in scorer_defaults],
            )
        )
    for th in an.thresholds:
        if not th.param:
            continue
        sig = ", ".join(th.signals)
        doc = f"{th.field} is the evolved {th.literal} ({ROLE_WORDS.get(th.role, th.role)} on {_oneline(th.subject)}; reads {sig})."
        if th.role == "field":
            doc = f"{th.field} is the evolved {th.subject} = {th.literal}, set by the constructor."
        spec = ParamSpec(
            th.param,
            th.field,
            th.go_type or "float64",
            go_value(th.value, th.go_type),
            doc,
            threshold=th,
            json_default=int(th.value) if th.go_type in ("int", "int64") else th.value,
        )
        if th.value >= 0 and th.role != "exponent":
            spec.checks.append(
                {
                    "cond": f"p.{th.field} < 0",
                    "message": f"{th.param} must be >= 0, got %v",
                    "bad": -1 if th.go_type in ("int", "int64") else -0.5,
                }
            )
        if th.role == "exponent":
            spec.checks.append({"cond": f"p.{th.field} <= 0", "message": f"{th.param} must be > 0, got %v", "bad": 0})
        if (
            th.role in ("threshold", "offset", "floor", "cap")
            and th.signals
            and set(th.signals) <= _FRACTION_SIGNALS
            and 0 <= th.value <= 1
        ):
            spec.checks.append(
                {"cond": f"p.{th.field} > 1", "message": f"{th.param} is a 0-1 fraction, got %v", "bad": 1.5}
            )
        specs.append(spec)
    if scheduling:
        specs += [
            ParamSpec(
                "maxPseudoQueue",
                "MaxPseudoQueue",
                "int",
                "256",
                "MaxPseudoQueue caps how many waiting requests are modelled per endpoint (cost bound).",
                [{"cond": "p.MaxPseudoQueue < 1", "message": "maxPseudoQueue must be >= 1, got %v", "bad": 0}],
                json_default=256,
            ),
            ParamSpec(
                "incumbentSLOClass",
                "IncumbentSLOClass",
                "string",
                '"standard"',
                "IncumbentSLOClass is the SLO class assumed for requests already waiting (the EPP cannot see them).",
                [
                    {
                        "cond": 'p.IncumbentSLOClass == "realtime" || p.IncumbentSLOClass == "interactive"',
                        "message": "incumbentSLOClass %q is a BLIS v1 name; use critical or standard",
                        "bad": "realtime",
                    }
                ],
                json_default="standard",
            ),
            ParamSpec(
                "incumbentInputTokens",
                "IncumbentInputTokens",
                "int",
                "512",
                "IncumbentInputTokens is the prompt length assumed for requests already waiting.",
                [
                    {
                        "cond": "p.IncumbentInputTokens < 0",
                        "message": "incumbentInputTokens must be >= 0, got %v",
                        "bad": -1,
                    }
                ],
                json_default=512,
            ),
            ParamSpec(
                "incumbentSpacingUs",
                "IncumbentSpacingUs",
                "int64",
                "50000",
                "IncumbentSpacingUs is the assumed gap (µs) between arrivals of the waiting requests; the oldest arrived n*spacing ago.",
                [{"cond": "p.IncumbentSpacingUs < 0", "message": "incumbentSpacingUs must be >= 0, got %v", "bad": -1}],
                json_default=50000,
            ),
        ]
    return specs


def _oneline(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= 60 else s[:57] + "..."
