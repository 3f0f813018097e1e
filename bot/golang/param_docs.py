"""A plugin parameter's doc comment, for an llm-d reader: its part in the step of the logic it belongs to, what the
value it acts on is made of (per endpoint or per request, in llm-d's words) and, where a number in the evolved
comment is a parameter's value, the parameter's name (split from ``params``, which decides the parameters)."""

from __future__ import annotations

import re

from bot.golang import arg_thresholds, counter_era, local_consts
from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.param_names import DECAY, average_partner, class_value_part, named_by_use
from bot.model import PolicyKind

#: Why BLIS's EffectiveLoad is not an endpoint's concurrency in llm-d (``param_rows`` says it once in the README).
LOAD_COUNT = "about twice its concurrent requests: the in-flight count already includes the waiting and running ones"
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


def meets(an: Analysis, th: Threshold) -> str:
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


def doc(an: Analysis, th: Threshold) -> str:
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
    part = arg_thresholds.doc_part(th, subject) if th.passed else part  # passed to a helper that compares it
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
            if suffix == "Interval"
            else f"the wait threshold, in µs (BLIS's clock unit): how long the request has waited, `{subject}`, is "
            "compared with it"
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
