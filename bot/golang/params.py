"""The plugin's JSON parameters: every evolved number, with its default, validation and doc comment."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.golang import counter_era, local_consts
from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.divisors import divisor_checks
from bot.golang.gonames import comment_lines, go_float, go_value
from bot.golang.param_names import DECAY, average_partner, class_value_part, named_by_use, param_name_problem
from bot.golang.param_relations import relations
from bot.golang.plugin_shape import scorer_terms_note
from bot.model import PolicyKind

ROLE_WORDS = {
    "threshold": "threshold",
    "offset": "offset",
    "floor": "floor",
    "cap": "cap",
    "coefficient": "coefficient",
    "exponent": "exponent",
    "factor": "factor",
    "step": "step",
    "bonus": "bonus",
    "penalty": "penalty",
    "value": "value",
}

_FRACTION_SIGNALS = {"KVUtilization", "CacheHitRate"}

#: Why BLIS's EffectiveLoad is not an endpoint's concurrency in llm-d (``param_rows`` says it once in the README).
LOAD_COUNT = "about twice its concurrent requests: the in-flight count already includes the waiting and running ones"
#: What a BLIS signal is in llm-d's words, for parameter docs a maintainer reads.
_SIGNAL_WORDS = {
    "QueueDepth": "waiting requests",
    "BatchSize": "running requests",
    "InFlightRequests": "in-flight requests",
    "EffectiveLoad": f"waiting + running + in-flight requests ({LOAD_COUNT})",
    "KVUtilization": "KV-cache utilization (0-1)",
    "CacheHitRate": "cache hit rate (no llm-d source: always 0)",
    "FreeKVBlocks": "free KV-cache blocks",
    "KvTokensInUse": "KV-cache tokens in use",
    "TotalKvCapacityTokens": "KV-cache capacity in tokens",
    "InputTokens": "prompt length, estimated as RequestSizeBytes / 4",
    "SessionID": "session header",
    "SLOClass": "SLO class, read back from its llm-d priority (above 0 critical, 0 standard, below 0 sheddable)",
    "Priority": "llm-d priority, negated",
    "TenantID": "fairness ID",
    "Clock": "wall clock",
}
#: What a request signal is in a scheduling plugin's pseudo-queue (scorer.go.j2): the request being placed
#: gets the adapter's value, the requests modelled as already waiting get the incumbent* parameters'.
_QUEUE_WORDS = {
    "SLOClass": (
        "the SLO class: the request's is read back from its llm-d priority (above 0 critical, 0 standard, below 0 "
        "sheddable), a waiting request's is incumbentSLOClass"
    ),
    "Priority": "the priority: the request's llm-d priority negated, a waiting request's from incumbentSLOClass",
    "ArrivalTime": (
        "the arrival time: the request's is the EPP's wall clock when it scores it (so its own wait is 0), the "
        "waiting requests arrived incumbentSpacingUs apart before it"
    ),
    "InputTokens": (
        "the prompt length: the request's is estimated as RequestSizeBytes / 4, a waiting request's is "
        "incumbentInputTokens"
    ),
    "Clock": "the clock: the EPP's wall clock (µs) when it scores the request",
    "Clock+ArrivalTime": (
        "the clock and the arrival times: the clock is the EPP's wall clock (µs) when it scores the request, which "
        "is also that request's arrival (its own wait is 0); the waiting requests arrived incumbentSpacingUs apart "
        "before it"
    ),
}
_LOAD_PARTS = {"QueueDepth", "BatchSize", "InFlightRequests"}
_MARKER = re.compile(r"(EVOLVE-BLOCK|HYPOTHESIS-\d|MECHANISM-\d|EXPECT-\d|\w\.(?:go|py)\b)")


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
        doc = _doc(an, th)
        if th.role == "field" and getattr(th, "zero_fallback", False):
            doc = (
                f"{th.field} is the evolved {th.subject}, which nothing in the evolved file sets; the evolved code "
                f"replaces a zero with {th.literal}, its default here (0 still falls back to it)."
            )
        elif th.role == "field" and th.assigned and th.local:
            doc = (
                f"{th.field} is the evolved local `{th.local}` (default {th.literal}, the evolved value), which the "
                f"evolved code sets on line {th.line} and uses afterwards; the plugin sets it from here. "
                f"{_meets(an, th)}"
            ).strip()
        elif th.role == "field" and th.assigned:
            doc = (
                f"{th.field} is the evolved field {an.host_info.receiver_type}.{th.receiver_field} (default "  # type: ignore[union-attr,attr-defined]
                f"{th.literal}, the evolved value), which the evolved code sets on line {th.line} and reads "
                "afterwards; the plugin sets it from here. "
                f"{_meets(an, th)}"
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


def _meets(an: Analysis, th: Threshold) -> str:
    """What a field the evolved code sets is combined with: the value it is spent against, and its signals."""
    if "." not in th.subject or not th.signals:
        return ""
    scopes = {u.name: u.scope for u in an.signals}
    words = [f"{_OWNER.get(scopes.get(s, 'snapshot'), 'the')} {_SIGNAL_WORDS.get(s, s)}" for s in th.signals]
    return f"It is combined with `{counter_era.carried(th.subject)}`, which is computed from {'; '.join(words)}."


def _oneline(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= 60 else s[:57] + "..."


#: What a factor or step does to the variable it changes, by its assignment operator.
_CHANGES = {
    "*=": "the factor `{target}` is multiplied by",
    "/=": "the divisor of `{target}`",
    "+=": "the step added to `{target}`",
    "-=": "the step subtracted from `{target}`",
}


def _doc(an: Analysis, th: Threshold) -> str:
    """What the parameter does, for an llm-d reader: its part in the step of the logic it belongs to (the
    evolved comment above its first use, which quotes the evolved values) and what the value it acts on is
    made of, per endpoint or per request. A number in either that is a parameter's evolved value is said by the
    parameter's name: the text must stay true when the operator tunes it (a step that quotes another number is
    left out). The subject is said as evolved.go carries it (``s.InFlightRequests``), and for a copy older than
    BLIS 9a603bca the comment says what the plugin reads there and that the evolved code read ``PendingRequests``
    (``counter_era``)."""
    evolved, _ = _by_name(an, th, _oneline(th.subject))
    return _doc_text(an, th, counter_era.carried(evolved)) + counter_era.parameter_words(an, th, evolved)


def _doc_text(an: Analysis, th: Threshold, subject: str) -> str:
    part = {
        "threshold": f"the threshold {th.subject_words or f'`{subject}`'} is compared with",
        "coefficient": f"the coefficient of `{subject}`",
        "factor": "the factor applied",
        "floor": f"the floor of `{subject}`",
        "cap": f"the cap of `{subject}`",
        "exponent": f"the exponent of `{subject}`",
        "offset": f"the offset in `{subject}`",
    }.get(th.role, f"the {ROLE_WORDS.get(th.role, th.role)} in `{subject}`")
    if th.divides:
        part = (
            f"the divisor of `{subject}`: the evolved code divides `{subject}` by it, so it is a scale (a time "
            f"constant, when `{subject}` is a time) in the units of `{subject}`, and raising it makes the quotient "
            "smaller"
        )
    if th.numerator:
        part = (
            f"the numerator of `{th.const_decl or _by_name(an, th, th.literal)[0]} / {subject}`: the evolved code divides it by "
            f"`{subject}`, so the quotient grows in proportion to it"
        )
    op = th.occurrences[0].op if th.occurrences else None
    if th.target and th.role in ("factor", "step") and op in _CHANGES:
        part = f"{_CHANGES[op].format(target=th.target)} when the condition on `{subject}` holds"
    if th.moving_average is not None:
        part = _average_part(an, th, subject)
    elif th.blend is not None:
        part = _blend_part(an, th)
    elif th.clamp is not None:
        more = "larger" if th.clamp == "max" else "smaller"
        part = f"the {'most' if th.clamp == 'max' else 'least'} `{subject}` may be: a {more} `{subject}` is set to it"
    elif th.role == "threshold" and (use := named_by_use(th)) is not None:
        what, suffix = use
        part = (
            f"how long the {what} lasts: `{subject}` is compared with it"
            if suffix == "Length"
            else f"the {what} interval: the time since the last {what}, `{subject}`, is compared with it"
        )
    if th.const_decl:
        part = local_consts.doc_part(th, part, subject)
    if th.role == "value" and th.target and th.case:
        part = class_value_part(an, th)
    if th.saturation is not None:
        part = (
            f"the offset added to `{subject}` in the saturation `{_by_name(an, th, th.saturation)[0]}`: that term is "
            f"half its largest value when `{subject}` equals it, and a larger one makes it rise more slowly"
        )
    if th.role == "value" and th.applied is not None:
        cond, stmt, changed = th.applied
        cond = _by_name(an, th, cond)[0]  # the threshold's name, which stays true when it is tuned
        verb = "multiplies" if "*=" in stmt else "divides"
        part = f"the factor `{th.target}` is set to when `{cond}` holds: `{stmt}` {verb} `{changed}` by it"
    if th.regime is not None:  # one regime's weight of a switch (regime_weights.py)
        part = f"the weight of `{th.regime[2]}` when `{_by_name(an, th, th.regime[0])[0]}` {th.regime[1]}"
    if th.role in ("bonus", "penalty"):
        score = f"`{th.target}`" if th.target else "the score"
        verb = "added to" if op == "+=" else "subtracted from"
        part = f"the {th.role} {verb} {score} when its condition holds"
    # A lifted local (`shedLimit := 0.75`) decides where it is compared, not where it is set: its step is the
    # comparison's (a step that only scales the local, "tenants far above ... are shed earlier", is not it).
    used = th.compared_line or (min(th.lines) if th.occurrences else th.line)
    step, unnamed = _by_name(an, th, _step_comment(an, used))
    step = "" if unnamed else step
    where = f' in the step "{step}"' if step else ""
    text = f"{th.field} is {part}{where} (default {th.literal}, the evolved value)."
    signals = set(th.signals)
    if "EffectiveLoad" in signals:
        signals -= _LOAD_PARTS
    if not signals or th.role == "factor":
        return text
    if th.role in ("bonus", "penalty"):
        scopes = {u.name: u.scope for u in an.signals}
        words = [f"{_OWNER.get(scopes.get(s, 'snapshot'), 'the')} {_SIGNAL_WORDS.get(s, s)}" for s in sorted(signals)]
        return text + f" The condition reads {'; '.join(words)}."
    scopes = {u.name: u.scope for u in an.signals}
    field = re.fullmatch(r"\w+\.(\w+)", subject)
    direct = len(signals) == 1 and field is not None and field.group(1) in signals
    lead = f"`{subject}` {'is' if direct else 'is computed from'}"
    if th.target and th.role == "step":  # the whole condition's signals (`maxKVUtil > x || minFreeKV < y`)
        lead = "The condition reads"
    if th.blend:  # a blend's other weight has its mate's signals (param_names.pair_weights): the blend reads them
        lead = "The blend reads"
    if an.kind == PolicyKind.SCHEDULING:
        if {"ArrivalTime", "Clock"} <= signals:  # one clock: the request's arrival is the time it is scored
            signals = (signals - {"ArrivalTime", "Clock"}) | {"Clock+ArrivalTime"}
        words = [_QUEUE_WORDS.get(s) or f"the {_SIGNAL_WORDS.get(s, s)}" for s in sorted(signals)]
        return text + f" {lead} {'; '.join(words)}."
    words = [f"{_OWNER.get(scopes.get(s, 'snapshot'), 'the')} {_SIGNAL_WORDS.get(s, s)}" for s in sorted(signals)]
    return text + f" {lead} {', '.join(words)}."


def _average_part(an: Analysis, th: Threshold, subject: str) -> str:
    """A weight of ``x = a*x + b*sample``: what it weighs, and that its partner must move with it (they sum to 1)."""
    var, part = th.moving_average or ("", "")
    partner = average_partner(an, th)
    what = (
        f"the weight the previous `{var}` keeps in its moving average"
        if part == DECAY
        else f"the weight the new sample `{subject}` gets in the moving average of `{var}`"
    )
    if partner is None:
        return what
    return f"{what}; with {partner.field} it sums to 1 in the evolved code, so change the two together"


def _blend_part(an: Analysis, th: Threshold) -> str:
    """A weight of a blend made in one call, ``x = a*x + b*y``: the share of its term, beside the other's."""
    term, other = th.blend or ("", "")
    partner = next((o for o in an.thresholds if o.blend == (other, term) and o.field), None)
    what = f"the weight `{term}` gets in its blend with `{other}`"
    if partner is None:
        return what
    return (
        f"{what}, which {partner.field} weighs; the two sum to 1 in the evolved code, so the blend stays on the "
        "scale of its terms: change them together to keep it there"
    )


_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(%?)(?![\w.])")


def _by_name(an: Analysis, th: Threshold, text: str) -> tuple[str, list[str]]:
    """``text`` with each number that is a parameter's evolved value (``4.5``; ``82%`` for 0.82) replaced by that
    parameter's name, and the numbers that are none (or more than one, none nearer ``th`` than the others)."""
    near = th.lines or [th.line]
    unnamed: list[str] = []

    def distance(t: Threshold) -> int:
        return min(abs(a - b) for a in (t.lines or [t.line]) for b in near)

    def name(m: re.Match) -> str:
        value = float(m.group(1)) / (100 if m.group(2) else 1)
        found = [t for t in an.thresholds if t.param and abs(t.value - value) < 1e-9]
        if len(found) > 1:
            closest = min(map(distance, found))
            found = [t for t in found if distance(t) == closest]
        if len(found) != 1:
            unnamed.append(m.group(0))
            return m.group(0)
        return found[0].param or m.group(0)

    return _NUMBER.sub(name, text), unnamed


#: Whose value a signal is, by its scope in BLIS.
_OWNER = {
    "snapshot": "each endpoint's",
    "method": "each endpoint's",
    "request": "the request's",
    "state": "the cluster's",
}


def _step_comment(an: Analysis, line: int) -> str:
    """The evolved comment that introduces ``line`` (one to three code lines above it), or ""."""
    if an.src is None:
        return ""
    lines = an.src.original_text.splitlines()
    k = line - 2
    for _ in range(4):
        if k < 0 or not lines[k].strip():
            return ""
        if lines[k].strip().startswith("//"):
            top = k
            while top > 0 and lines[top - 1].strip().startswith("//"):
                top -= 1
            text = " ".join(x.strip().removeprefix("//").strip() for x in lines[top : k + 1])
            return "" if _MARKER.search(text) or len(text) > 160 else text.rstrip(".")
        k -= 1
    return ""
