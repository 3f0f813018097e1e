"""The plugin's JSON parameters: every evolved number, with its default, validation and doc comment."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.golang import param_docs
from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.divisors import divisor_checks
from bot.golang.gonames import comment_lines, go_float, go_value
from bot.golang.param_names import param_name_problem
from bot.golang.param_relations import relations
from bot.golang.plugin_shape import scorer_terms_note

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
    assumed: bool = False  # the translation's assumption (a scheduling plugin's pseudo-queue), not an evolved value

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
                "Scorers are the weighted-scoring terms the evolved policy combines, each a BLIS scorer and its "
                "weight, in the evolved order, which logic that picks a term by its position depends on. "
                + scorer_terms_note([n for n, _ in scorer_defaults]),
                json_default=[{"name": n, "weight": w} for n, w in scorer_defaults],
            )
        )
    divisors = divisor_checks(an)
    for th in an.thresholds:
        if not th.param:
            continue
        doc = param_docs.doc(an, th)
        if th.role == "field" and getattr(th, "zero_fallback", False):
            doc = (
                f"{th.field} is the evolved {th.subject}, which nothing in the evolved file sets; the evolved code "
                f"replaces a zero with {th.literal}, its default here (0 still falls back to it)."
            )
        elif th.role == "field" and th.assigned and th.local:
            doc = (
                f"{th.field} is the evolved local `{th.local}` (default {th.literal}, the evolved value), which the "
                f"evolved code sets on line {th.line} and uses afterwards; the plugin sets it from here. "
                f"{param_docs.meets(an, th)}"
            ).strip()
        elif th.role == "field" and th.assigned:
            doc = (
                f"{th.field} is the evolved field {an.host_info.receiver_type}.{th.receiver_field} (default "  # type: ignore[union-attr,attr-defined]
                f"{th.literal}, the evolved value), which the evolved code sets on line {th.line} and reads "
                "afterwards; the plugin sets it from here. "
                f"{param_docs.meets(an, th)}"
            ).strip()
        elif th.role == "field":
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
        # A denominator of this parameter keeps away from 0 on its evolved side (divisors.py): x / 0 is ±Inf
        # (or NaN) and past 0 the quotient's sign flips, so the step it belongs to stops meaning anything.
        divides = divisors.get(th.param, [])
        if th.divides and th.value > 0 and not divides:
            divides = [
                {"cond": f"p.{th.field} <= 0", "message": f"{th.param} is a divisor and must be > 0, got %v", "bad": 0}
            ]
        spec.checks += divides
        if any(c["cond"] == f"p.{th.field} <= 0" for c in divides):
            pass  # > 0 already: a >= 0 check on top would only repeat it
        elif th.value >= 0 and th.role != "exponent":
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
    by_name = {s.name: s for s in specs}
    for rel in relations(an):  # checks across parameters, on the one the generated test sets alone
        if rel.owner in by_name:
            by_name[rel.owner].checks.append(rel.check())
    if scheduling:
        specs += _pseudo_queue_specs(set(an.request_fields))
    for spec in specs:  # a translator bug, not the program's: never write a key the EPP config cannot hold
        if (why := param_name_problem(spec.name, spec.field)) is not None:
            raise ValueError(f"translator bug: {why}")
    return specs


#: The SLO class names BLIS knows (its workload spec's v2 names; "" is standard).
SLO_CLASSES = ("critical", "standard", "sheddable", "batch", "background", "")


def reads_class(request_fields) -> bool:
    """The evolved logic reads a request's class (as SLOClass, or as the Priority BLIS derives from it)."""
    return bool({"SLOClass", "Priority"} & set(request_fields))


def reads_prompt(request_fields) -> bool:
    return "InputTokens" in set(request_fields)


def reads_slo_target(request_fields) -> bool:
    """The evolved logic reads a request's TTFT target (the x-llm-d-slo-ttft-ms header in llm-d)."""
    return "SLOTargetUs" in set(request_fields)


def incumbent_parts(request_fields) -> list[str]:
    """What the pseudo-queue parameters say about a modelled waiting request, for the fields the logic reads."""
    fields = {f.removeprefix("num") for f in request_fields}
    return [
        *(["class"] if reads_class(fields) else []),
        *(["prompt length"] if reads_prompt(fields) else []),
        *(["SLO target"] if reads_slo_target(fields) else []),
        "arrival spacing",
    ]


def _pseudo_queue_specs(request_fields: set[str]) -> list[ParamSpec]:
    """A scheduling plugin's own parameters: the bot's assumptions about the requests already waiting, which
    the EPP cannot see (not evolved numbers). A class or a prompt length is assumed only when the evolved
    logic reads one: a parameter that changes nothing is not exposed."""
    specs = _pseudo_queue_candidates(request_fields)
    for spec in specs:
        spec.assumed = True
    return specs


def _pseudo_queue_candidates(request_fields: set[str]) -> list[ParamSpec]:
    specs = [
        ParamSpec(
            "maxPseudoQueue",
            "MaxPseudoQueue",
            "int",
            "256",
            "MaxPseudoQueue caps how many waiting requests are modelled per endpoint (cost bound; an assumption "
            "of the translation, not an evolved value): endpoints with more waiting score like one with this many.",
            [{"cond": "p.MaxPseudoQueue < 1", "message": "maxPseudoQueue must be >= 1, got %v", "bad": 0}],
            json_default=256,
        )
    ]
    if reads_class(request_fields):
        # The v1 names get their own message first; the list that follows names only the classes Validate
        # accepts (listing the v1 names there too made two conditions of it that could never matter).
        unlike = [f"p.IncumbentSLOClass != {_goquote(c)}" for c in SLO_CLASSES]
        # Three comparisons a line: the six on one ran to 219 columns (gofmt keeps a break after &&).
        known = " &&\n\t\t".join(" && ".join(unlike[i : i + 3]) for i in range(0, len(unlike), 3))
        specs.append(
            ParamSpec(
                "incumbentSLOClass",
                "IncumbentSLOClass",
                "string",
                '"standard"',
                "IncumbentSLOClass is the SLO class assumed for requests already waiting (the EPP cannot see "
                "them; an assumption of the translation, not an evolved value).",
                [
                    {
                        "cond": 'p.IncumbentSLOClass == "realtime" || p.IncumbentSLOClass == "interactive"',
                        "message": "incumbentSLOClass %q is a BLIS v1 name; use critical or standard",
                        "bad": "realtime",
                    },
                    {
                        "cond": known,
                        "message": "incumbentSLOClass %q is not a BLIS SLO class (critical, standard, sheddable, "
                        "batch, background or empty)",
                        "bad": "crtical",
                    },
                ],
                json_default="standard",
            )
        )
    if reads_prompt(request_fields):
        specs.append(
            ParamSpec(
                "incumbentInputTokens",
                "IncumbentInputTokens",
                "int",
                "512",
                "IncumbentInputTokens is the prompt length assumed for requests already waiting (an assumption "
                "of the translation, not an evolved value).",
                [
                    {
                        "cond": "p.IncumbentInputTokens < 0",
                        "message": "incumbentInputTokens must be >= 0, got %v",
                        "bad": -1,
                    }
                ],
                json_default=512,
            )
        )
    if reads_slo_target(request_fields):
        specs.append(
            ParamSpec(
                "incumbentSLOTargetMs",
                "IncumbentSLOTargetMs",
                "int64",
                "0",
                "IncumbentSLOTargetMs is the TTFT target (ms, as clients send it in x-llm-d-slo-ttft-ms) assumed "
                "for requests already waiting; 0 means none, so they fall back to their class's target (an "
                "assumption of the translation, not an evolved value). Set it to the target clients send: a "
                "request whose header is tighter than the waiting requests' target goes ahead of all of them and "
                "scores flat on every endpoint.",
                [
                    {
                        "cond": "p.IncumbentSLOTargetMs < 0 || p.IncumbentSLOTargetMs > 86400000",
                        "message": "incumbentSLOTargetMs must be between 0 (none) and 86400000 (a day), got %v",
                        "bad": -1,
                    }
                ],
                json_default=0,
            )
        )
    specs.append(
        ParamSpec(
            "incumbentSpacingUs",
            "IncumbentSpacingUs",
            "int64",
            "50000",
            "IncumbentSpacingUs is the gap (µs) assumed between arrivals of the waiting requests (an assumption of "
            "the translation, not an evolved value); the oldest arrived n*spacing ago.",
            [{"cond": "p.IncumbentSpacingUs < 0", "message": "incumbentSpacingUs must be >= 0, got %v", "bad": -1}],
            json_default=50000,
        )
    )
    return specs


def _goquote(text: str) -> str:
    return '"' + text + '"'


def shown(value: object) -> str:
    """A parameter value as people write it in a ``param`` line: ``70``, ``0.5``, ``batch``, ``""``."""
    if isinstance(value, str):
        return value if value else '""'
    return go_float(float(value))  # type: ignore[arg-type]


def type_problem(name: str, go_type: str, value: float | str | None, raw: str | None = None) -> str | None:
    """Why ``value`` cannot be the JSON value of a parameter of Go type ``go_type``, or None; ``value`` None is a
    ``param`` line whose ``raw`` text is neither a number nor a word (``bot.directives.param_value``).

    The EPP decodes the EndpointPickerConfig into the plugin's Parameters: a word for a number (``4s``) or a
    number for a string fails there, and a fraction for an integer would be rounded out of sight.
    """
    line = f"`param {name}: {raw.strip() if raw is not None else shown(value)}`"
    if go_type.startswith("[]"):
        return f"`{name}` is a list; set it with its own directive (`scorers: NAME:WEIGHT, ...`), not `param`"
    if go_type == "string":
        if isinstance(value, str):
            return None
        return f'{line}: {name} takes one word (e.g. batch) or a double-quoted string (e.g. ""), not a number'
    if not isinstance(value, float | int):
        return f"{line}: {name} takes a number in plain digits (e.g. 4000 or 0.5: no unit, no exponent)"
    if go_type in ("int", "int64", "int32") and not float(value).is_integer():
        return f"{line}: {name} takes a whole number"
    return None


_COND = re.compile(r'^\s*p\.\w+\s*(<=|>=|<|>|==|!=)\s*(-?\d+(?:\.\d+)?|"[^"\\]*")\s*$')


def out_of_range(value: float | str, checks: list[dict]) -> list[str]:
    """The message of the first of the plugin's Validate() checks ``value`` trips, with the value in it (Validate()
    returns at the first), as a list: empty when none does.

    A check is a Go condition on the one field (``p.LoadHighThreshold < 0``, ``p.IncumbentSLOClass ==
    "realtime"``, parts joined by ``||`` or all by ``&&``) and the message Validate() returns (``%v``/``%q`` the value), as
    ``param_specs`` writes them. A condition in another form is left to Validate(), never guessed; a number
    is never compared with a string (``type_problem`` answers that).
    """
    import operator

    ops = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq}
    ops["!="] = operator.ne
    for check in checks:
        both = "&&" in check["cond"]
        parts = [_COND.match(p) for p in check["cond"].split("&&" if both else "||")]
        if not all(parts) or (both and "||" in check["cond"]):
            continue
        holds = []
        for m in parts:
            lit = m.group(2)
            if lit.startswith('"') != isinstance(value, str) or (
                lit.startswith('"') and m.group(1) not in ("==", "!=")
            ):
                holds.append(False)  # a number is never compared with a string
                continue
            holds.append(ops[m.group(1)](value, lit[1:-1] if lit.startswith('"') else float(lit)))
        hit = all(holds) if both else any(holds)
        if hit:  # Validate() returns at the first check a value trips: so does this, with its message
            quoted = '"' + value + '"' if isinstance(value, str) else shown(value)
            return [check["message"].replace("%v", shown(value)).replace("%q", quoted)]
    return []
