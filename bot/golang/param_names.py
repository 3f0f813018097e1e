"""Plugin parameter names that say each number's role: what an llm-d maintainer reads in the config.

A number is named by its subject and role (``kvUtilizationThreshold``), ranked when one subject has several
(``loadLowThreshold``, ``loadHighThreshold``). Two shapes are named by what they do instead, as a reader of the
evolved code would say it (found by an llm-d maintainer reading a01's plugin):

- a time compared with how long ago something started, ``clock - a.windowStart > 10_000_000``, is the window's
  length (``windowLength``); ``now - lastRefill > 5e6`` is the refill interval (``refillInterval``);
- the two weights of an exponential moving average, ``x = 0.7*x + 0.3*sample`` (summing to 1), are ``xDecay``
  (what the old value keeps) and ``xSampleWeight`` (what the new sample brings), never the coefficient of a signal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from bot.golang.analysis_types import Analysis, Node, Threshold
from bot.golang.gonames import exported, lower_camel
from bot.golang.gotree import named, parse_number
from bot.golang.literals import LIMIT_WORDS

#: The two parts of an exponential moving average (``Threshold.moving_average``) and their name suffixes.
DECAY, SAMPLE = "decay", "sample"
_AVERAGE_SUFFIX = {DECAY: "Decay", SAMPLE: "SampleWeight"}

#: ``<now> - <start>``: the start's name says what the elapsed time measures.
_ELAPSED = re.compile(r"^\(?\s*[A-Za-z_][\w.]*\s*-\s*(?:[A-Za-z_]\w*\.)*(?P<start>[A-Za-z_]\w*)\s*\)?$")


def named_by_use(th: Threshold) -> tuple[str, str] | None:
    """(stem, suffix) for a number whose use says its role better than its subject does, else None."""
    if th.moving_average is not None:
        var, part = th.moving_average
        return lower_camel(var.rsplit(".", 1)[-1]), _AVERAGE_SUFFIX[part]
    if th.role != "threshold" or (m := _ELAPSED.match(th.subject.strip())) is None:
        return None
    start = m["start"]
    if len(start) > len("Start") and start.endswith("Start"):
        return lower_camel(start.removesuffix("Start")), "Length"  # windowStart -> windowLength
    if re.fullmatch(r"last[A-Z]\w*", start):
        return lower_camel(start.removeprefix("last")), "Interval"  # lastRefill -> refillInterval
    return None


def moving_average(lit: Node, text: Callable[[Node], str]) -> tuple[str, str] | None:
    """(variable, DECAY or SAMPLE) when ``lit`` is one weight of ``x = a*x + b*sample`` with a + b = 1, else None.

    The two weights are one choice (how fast x forgets), so each is named for its part in it, and the doc says to
    change them together."""
    term = _up(lit.parent)
    if term is None or term.type != "binary_expression" or text(term.child_by_field_name("operator")) != "*":
        return None
    total = _up(term.parent)
    if total is None or total.type != "binary_expression" or text(total.child_by_field_name("operator")) != "+":
        return None
    stmt = total.parent
    if stmt is not None and stmt.type == "expression_list":
        stmt = stmt.parent
    if stmt is None or stmt.type != "assignment_statement" or text(stmt.child_by_field_name("operator")) != "=":
        return None
    targets = named(stmt.child_by_field_name("left"))
    if len(targets) != 1:
        return None
    var = _plain(text(targets[0]))
    weights: list[tuple[float, bool, Node]] = []
    for side in ("left", "right"):
        t = _down(total.child_by_field_name(side))
        if t.type != "binary_expression" or text(t.child_by_field_name("operator")) != "*":
            return None
        a, b = _down(t.child_by_field_name("left")), _down(t.child_by_field_name("right"))
        weight, other = (a, b) if a.type in ("float_literal", "int_literal") else (b, a)
        value = parse_number(text(weight)) if weight.type in ("float_literal", "int_literal") else None
        if value is None or not 0 < value < 1:
            return None
        weights.append((value, _plain(text(other)) == var, weight))
    if not math.isclose(weights[0][0] + weights[1][0], 1.0) or [w[1] for w in weights].count(True) != 1:
        return None
    mine = next((w for w in weights if w[2].start_byte == _down(lit).start_byte), None)
    return None if mine is None else (var, DECAY if mine[1] else SAMPLE)


def _up(n: Node | None) -> Node | None:
    while n is not None and n.type == "parenthesized_expression":
        n = n.parent
    return n


def _down(n: Node) -> Node:
    while n.type == "parenthesized_expression":
        n = named(n)[0]
    return n


def _plain(s: str) -> str:
    return "".join(s.split())


def name_parameters(an: Analysis) -> None:
    """Same number on the same subject = one parameter (kv > 0.82 and kv - 0.82 stay in step)."""
    groups: dict[tuple, Threshold] = {}
    merged: list[Threshold] = []
    role_rank = {
        "threshold": 0,
        "offset": 1,
        "floor": 2,
        "cap": 3,
        "coefficient": 4,
        "exponent": 5,
        "factor": 6,
        "step": 7,
        "bonus": 7,
        "penalty": 7,
        "value": 8,
        "field": 9,
    }
    for th in an.thresholds:
        key = (th.base, th.suffix, th.value, th.go_type, th.reason is None)  # a weight is no threshold on its term
        if key in groups and th.reason is None:
            g = groups[key]
            g.occurrences.extend(th.occurrences)
            if role_rank[th.role] < role_rank[g.role]:
                g.role = th.role
            g.signals = sorted(set(g.signals) | set(th.signals))
            an.literal_nodes[th.occurrences[0].start] = g
            continue
        groups[key] = th
        merged.append(th)
    suffix = {
        "threshold": "Threshold",
        "offset": "Threshold",
        "floor": "Floor",
        "cap": "Cap",
        "coefficient": "Coeff",
        "exponent": "Exponent",
        "factor": "Factor",
        "step": "Step",
        "bonus": "Bonus",
        "penalty": "Penalty",
        "value": "Value",
        "field": "",
    }
    used: set[str] = set(_RESERVED_PARAMS)
    wanted: dict[str, list[Threshold]] = {}
    shared = [(th.base, th.role) for th in merged if th.reason is None]
    for th in merged:
        if th.reason is not None:
            continue
        # Factors on several variables under one condition are named by the variable each changes
        # (batchLimitFactor, shedLimitFactor), not ranked Low/High on the condition's subject.
        by_target = th.role in ("factor", "step") and th.target and shared.count((th.base, th.role)) > 1
        stem = re.sub(r"[^A-Za-z0-9]", "", th.target if by_target else th.base) or "evolved"
        if stem[0].isdigit():
            stem = "p" + stem
        # A lifted local limit keeps the evolved name, which already says its role (batchLimit); `t := 0.5`
        # compared with `load` becomes loadThreshold (short_locals: a letter says nothing of the role).
        role = "" if th.local and LIMIT_WORDS.search(stem) else "Divisor" if th.divides else suffix[th.role]
        role = th.suffix if th.suffix is not None else role
        stem, role = named_by_use(th) or (stem, role)
        wanted.setdefault(lower_camel(stem) + "\0" + role, []).append(th)
    for key, group in wanted.items():
        stem, role = key.split("\0")
        # Several numbers on one subject in one role say their role by rank: loadLowThreshold, loadHighThreshold.
        ranks = _RANKS.get(len(group)) if len({th.value for th in group}) == len(group) else None
        ordered = sorted(group, key=lambda th: th.value)
        for k, th in enumerate(ordered):
            name = stem + (ranks[k] if ranks else "") + role
            cand, i = name, 2
            while cand in used:
                cand = f"{name}{i}"
                i += 1
            used.add(cand)
            th.param = cand
            th.field = exported(cand)
    an.thresholds = merged


_RANKS = {1: [""], 2: ["Low", "High"], 3: ["Low", "Mid", "High"]}

_RESERVED_PARAMS = {
    "scorers",
    "pseudoQueue",
    "incumbentSLOClass",
    "incumbentInputTokens",
    "incumbentSLOTargetMs",
    "incumbentSpacingUs",
    "maxPseudoQueue",
}


def average_partner(an: Analysis, th: Threshold) -> Threshold | None:
    """The other weight of the moving average ``th`` is one weight of, when it is a parameter too."""
    if th.moving_average is None:
        return None
    var, part = th.moving_average
    want = (var, SAMPLE if part == DECAY else DECAY)
    return next((o for o in an.thresholds if o.moving_average == want and o.field), None)
