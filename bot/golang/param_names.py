"""Plugin parameter names that say each number's role: what an llm-d maintainer reads in the config.

A number is named by its subject and role (``kvUtilizationThreshold``), ranked when one subject has several
(``loadLowThreshold``, ``loadHighThreshold``). Two shapes are named by what they do instead, as a reader of the
evolved code would say it (found by an llm-d maintainer reading a01's plugin):

- a time compared with how long ago something started, ``clock - a.windowStart > 10_000_000``, is the window's
  length (``windowLength``); ``now - lastRefill > 5e6`` is the refill interval (``refillInterval``); ``clock -
  r.ArrivalTime > 1_500_000`` is how long the request has waited (``waitThreshold``);
- the two weights of an exponential moving average, ``x = 0.7*x + 0.3*sample`` (summing to 1), are ``xDecay``
  (what the old value keeps) and ``xSampleWeight`` (what the new sample brings), never the coefficient of a signal.
  Only a field of a pointer receiver (or an entry of a map it holds, ``a.tokenEMA[tenant] = 0.8*prev + 0.2*x``
  with ``prev, seen := a.tokenEMA[tenant]`` read before) is state kept across calls, so only its update is an
  average (0.5 and 0.5 too: it forgets at the rate its weights say); the same shape on a local or a map entry set in the call
  (``scores[snap.ID] = 0.5*scores[snap.ID] + 0.5*adj``) blends two terms once: each weight is named by the term it
  weighs (``scoresBlendWeight``, ``adjBlendWeight``), and both are parameters (``pair_weights``);
- the ``k`` of a saturation ``x/(x+k)`` is ``xHalfSaturation`` (the term is half its largest value at ``x = k``),
  an offset alone ``xOffset``, and a number a term divides (``criticalBoost / (1 + p)``) its numerator, never a
  coefficient of that term;
- a number compared with a variable and then assigned to it in the branch, ``if p > 200 { p = 200 }``, is a
  clamp: ``maxPriority`` (``minX`` for ``<``), by what the variable holds, not a threshold.

A value chosen per class is named by the class and what it is for; "Value" ends it only when nothing else says its
role: ``weightFor`` returns ``criticalWeight``, not ``criticalWeightValue`` (``says_role``), ``urgencyFor``
``criticalUrgencyValue``.

A name is built from identifiers only (``scores[snap.ID]`` gives ``scores``), and ``param_name_problem`` checks
every name as it is written: a name built from source text was once ``iD]SampleWeight``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from bot.golang.analysis_types import COMPARE, Analysis, Node, Threshold
from bot.golang.gonames import exported, lower_camel
from bot.golang.gotree import named, parse_number, text_of, walk
from bot.golang.literals import LIMIT_WORDS
from bot.golang.short_locals import plain_name
from bot.golang.source import EvolvedSource

#: The two parts of an exponential moving average (``Threshold.moving_average``) and their name suffixes.
DECAY, SAMPLE = "decay", "sample"
_AVERAGE_SUFFIX = {DECAY: "Decay", SAMPLE: "SampleWeight"}

#: ``<now> - <start>``: the start's name says what the elapsed time measures.
_ELAPSED = re.compile(r"^\(?\s*[A-Za-z_][\w.]*\s*-\s*(?:[A-Za-z_]\w*\.)*(?P<start>[A-Za-z_]\w*)\s*\)?$")


def named_by_use(th: Threshold) -> tuple[str, str] | None:
    """(stem, suffix) for a number whose use says its role better than its subject does, else None."""
    if th.moving_average is not None:
        var, part = th.moving_average
        return lower_camel(var.split("[", 1)[0].rsplit(".", 1)[-1]), _AVERAGE_SUFFIX[part]  # a.tokenEMA[t]: tokenEMA
    if th.clamp is not None:
        return th.clamp, exported(_identifier(th.base))  # maxPriority: the most `p` (a priority) may be
    if th.role != "threshold" or (m := _ELAPSED.match(th.subject.strip())) is None:
        return None
    start = m["start"]
    if len(start) > len("Start") and start.endswith("Start"):
        return lower_camel(start.removesuffix("Start")), "Length"  # windowStart -> windowLength
    if re.fullmatch(r"last[A-Z]\w*", start):
        return lower_camel(start.removeprefix("last")), "Interval"  # lastRefill -> refillInterval
    if _ARRIVAL.fullmatch(start):
        return "wait", "Threshold"  # clock - r.ArrivalTime: how long the request has waited, not an arrival time
    return None


#: The start of a request's wait: ``clock - r.ArrivalTime`` is how long it has waited (trial 4's
#: ``arrivalTimeThreshold``, named from one operand of the difference, is ``waitThreshold``).
_ARRIVAL = re.compile(r"(?i:arrival(?:time)?(?:us)?|arrived(?:at)?)")


def moving_average(lit: Node, text: Callable[[Node], str], receiver: str | None) -> tuple[str, str] | None:
    """(variable, DECAY or SAMPLE) when ``lit`` is one weight of ``x = a*x + b*sample`` with a + b = 1 and ``x`` a
    field of ``receiver`` (the method's, when it is a pointer: state kept across calls), else None.

    The two weights are one choice (how fast x forgets), so each is named for its part in it, and the doc says to
    change them together. Only state kept across calls forgets: the same update of a local or a map entry made in
    the call weighs two terms once (a blend, ``blend``)."""
    update = _sum_to_one(lit, text)
    if update is None or receiver is None or not re.fullmatch(re.escape(receiver) + r"\.\w+(\[.*\])?", update.var):
        return None
    return update.var, DECAY if update.own else SAMPLE


def blend(lit: Node, text: Callable[[Node], str], receiver: str | None) -> WeightedUpdate | None:
    """The update ``lit`` weighs when it is ``x = a*x + b*y`` (a + b = 1) but no moving average: ``x`` is a local
    or a map entry set in this call (``scores[snap.ID] = 0.5*scores[snap.ID] + 0.5*adj``), so each weight is the
    share of one term in one blend, named by that term (``scoresBlendWeight``, ``adjBlendWeight``).

    Both weights are parameters (the simplest reading that keeps the evolved code as it is, 0.5 and 0.5 alike):
    rewriting one as ``1 - w`` would change what tuning one of them does."""
    update = _sum_to_one(lit, text)
    return None if update is None or moving_average(lit, text, receiver) is not None else update


@dataclass
class WeightedUpdate:
    """``var = a*x + b*y`` with a + b = 1 and ``x`` (or ``y``) ``var`` itself, seen from one of its weights."""

    var: str
    own: bool  # this weight multiplies ``var`` itself (the old value)
    term: Node  # what this weight multiplies
    partner: Node  # the other weight's literal
    partner_term: Node  # what the other weight multiplies


def _sum_to_one(lit: Node, text: Callable[[Node], str]) -> WeightedUpdate | None:
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
    weights: list[tuple[float, bool, Node, Node]] = []
    for side in ("left", "right"):
        t = _down(total.child_by_field_name(side))
        if t.type != "binary_expression" or text(t.child_by_field_name("operator")) != "*":
            return None
        a, b = _down(t.child_by_field_name("left")), _down(t.child_by_field_name("right"))
        weight, other = (a, b) if a.type in ("float_literal", "int_literal") else (b, a)
        value = parse_number(text(weight)) if weight.type in ("float_literal", "int_literal") else None
        if value is None or not 0 < value < 1:
            return None
        weights.append((value, _plain(text(other)) == var or _copy_of(other, var, text), weight, other))
    if not math.isclose(weights[0][0] + weights[1][0], 1.0) or [w[1] for w in weights].count(True) != 1:
        return None
    mine = next((w for w in weights if w[2].start_byte == _down(lit).start_byte), None)
    if mine is None:
        return None
    other = next(w for w in weights if w is not mine)
    return WeightedUpdate(var, mine[1], mine[3], other[2], other[3])


def _copy_of(term: Node, var: str, text: Callable[[Node], str]) -> bool:
    """``term`` is a local declared as a copy of ``var`` (``prev, seen := a.tokenEMA[tenant]``, then
    ``a.tokenEMA[tenant] = 0.8*prev + 0.2*inLen``): the old value read into a local before the update. A later
    assignment to it (``if !seen { prev = inLen }``, a first sample) does not make it another value's."""
    if term.type != "identifier":
        return False
    fn = term.parent
    while fn is not None and fn.type not in ("function_declaration", "method_declaration", "func_literal"):
        fn = fn.parent
    for n in walk(fn) if fn is not None else []:
        if n.type != "short_var_declaration" or n.start_byte >= term.start_byte:
            continue
        left, right = named(n.child_by_field_name("left")), named(n.child_by_field_name("right"))
        if left and text(left[0]) == text(term) and len(right) == 1 and _plain(text(right[0])) == var:
            return True
    return False


def saturation(lit: Node, text: Callable[[Node], str]) -> Node | None:
    """The quotient when ``lit`` is the ``k`` of a saturation ``x/(x+k)`` (or ``c*x/(x+k)``), else None: the term
    rises with ``x`` towards its largest value and is half of it at ``x = k``, so ``k`` is a half-saturation point,
    compared with nothing (a trial's ``load/(load+8)`` gave ``loadThreshold``)."""
    total = _up(lit.parent)
    if total is None or total.type != "binary_expression" or text(total.child_by_field_name("operator")) != "+":
        return None
    sides = [_down(total.child_by_field_name(s)) for s in ("left", "right")]
    x = next((s for s in sides if s.start_byte != _down(lit).start_byte), None)
    quotient = _up(total.parent)
    if x is None or quotient is None or quotient.type != "binary_expression":
        return None
    right = _down(quotient.child_by_field_name("right"))
    if text(quotient.child_by_field_name("operator")) != "/" or right.start_byte != total.start_byte:
        return None
    num = _down(quotient.child_by_field_name("left"))
    factors = [num]
    if num.type == "binary_expression" and text(num.child_by_field_name("operator")) == "*":
        factors = [_down(num.child_by_field_name(s)) for s in ("left", "right")]
    return quotient if any(_plain(text(f)) == _plain(text(x)) for f in factors) else None


def clamp(lit: Node, text: Callable[[Node], str]) -> tuple[str, Node] | None:
    """("max" or "min", the variable) when ``lit`` is the bound of a clamp, ``if p > 200 { p = 200 }``: compared with
    the variable, then assigned to it in the branch (either of the two literals), else None. A cap is no threshold:
    past it the variable stops growing, nothing switches on."""
    value, at = parse_number(text(lit).replace(" ", "")), _up(lit.parent)
    if value is None or at is None:
        return None
    if at.type == "binary_expression":
        ifs = _up(at.parent)
        cond = _down(ifs.child_by_field_name("condition")) if ifs is not None and ifs.type == "if_statement" else None
        if cond is None or cond.start_byte != at.start_byte:
            return None
    elif at.type == "expression_list" and at.parent is not None and at.parent.type == "assignment_statement":
        ifs = at.parent.parent
        while ifs is not None and ifs.type != "if_statement":
            ifs = ifs.parent
        body = ifs.child_by_field_name("consequence") if ifs is not None else None
        if body is None or not body.start_byte <= lit.start_byte < body.end_byte:
            return None
        at = _down(ifs.child_by_field_name("condition"))
    else:
        return None
    op = text(at.child_by_field_name("operator")) if at.type == "binary_expression" else ""
    if op not in ("<", "<=", ">", ">="):
        return None
    left, right = _down(at.child_by_field_name("left")), _down(at.child_by_field_name("right"))
    var, bound, flip = (
        (left, right, False) if parse_number(text(right).replace(" ", "")) is not None else (right, left, True)
    )
    if parse_number(text(bound).replace(" ", "")) != value or var.type not in ("identifier", "selector_expression"):
        return None
    sets = [
        n
        for n in walk(ifs.child_by_field_name("consequence"))
        if n.type == "assignment_statement"
        and text(n.child_by_field_name("operator")) == "="
        and _plain(text(n.child_by_field_name("left"))) == _plain(text(var))
        and parse_number(_plain(text(n.child_by_field_name("right")))) == value
    ]
    if not sets:
        return None
    return ("max" if (op in (">", ">=")) != flip else "min"), var


def pair_weights(src: EvolvedSource, an: Analysis) -> None:
    """The other weight of a blend or a moving average is a parameter beside its mate even when the term it weighs
    reads no signal the analysis follows (the scorer composite ``scores[snap.ID]``): the two weights are one choice,
    so one is never tuned while the other stays a literal. It takes its mate's signals, which the blend reads."""
    for th in list(an.thresholds):
        if (th.blend is None and th.moving_average is None) or not th.occurrences:
            continue
        first = th.occurrences[0]
        lit = src.tree.root_node.descendant_for_byte_range(first.start, first.end)
        update = _sum_to_one(lit, lambda n: text_of(src, n)) if lit is not None else None
        if update is None or update.partner.start_byte in an.literal_nodes:
            continue
        node, line = update.partner, an.line_of(update.partner)
        term, other = text_of(src, update.partner_term), text_of(src, update.term)
        mate = replace(
            th,
            value=parse_number(text_of(src, node)),
            literal=text_of(src, node).strip(),
            subject=term,
            base=plain_name(update.partner_term, lambda n: text_of(src, n)) or th.base,
            line=line,
            occurrences=[replace(first, start=node.start_byte, end=node.end_byte, line=line)],
            blend=None if th.blend is None else (term, other),
            moving_average=None
            if th.moving_average is None
            else (th.moving_average[0], SAMPLE if th.moving_average[1] == DECAY else DECAY),
            signals=list(th.signals),
        )
        an.thresholds.insert(an.thresholds.index(th) + 1, mate)
        an.literal_nodes[node.start_byte] = mate


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
        "offset": "Offset",  # alone: an offset merged with a threshold on its subject takes "threshold"
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
        stem = _identifier(th.target if by_target else th.base)
        # A lifted local limit keeps the evolved name, which already says its role (batchLimit); `t := 0.5`
        # compared with `load` becomes loadThreshold (short_locals: a letter says nothing of the role).
        role = "" if th.local and LIMIT_WORDS.search(stem) else "Divisor" if th.divides else suffix[th.role]
        role = th.suffix if th.suffix is not None else role
        if th.numerator:  # divided by its term, no coefficient of it: criticalBoost keeps its name, else xNumerator
            role = "" if th.const_decl and says_role(stem) else "Numerator"
        stem, role = named_by_use(th) or (stem, role)
        role = "" if role == "Value" and says_role(stem) else role  # criticalWeight, not criticalWeightValue
        wanted.setdefault(lower_camel(_identifier(stem)) + "\0" + re.sub(r"[^A-Za-z0-9]", "", role), []).append(th)
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

#: Last words of a name that already say what its number does: "Value" after one says nothing more. A trial had
#: ``criticalWeightValue`` from a helper ``weightFor`` and ``criticalClassWeightValue`` from a scheduler's
#: ``classWeight`` where a tuple of weights gave ``criticalKVWeight``; now each is ``critical<Stem>``.
_ROLE_ENDING = re.compile(
    "Weight|Threshold|Limit|Cap|Ceiling|Floor|Bound|Cutoff|Max|Min|Bonus|Penalty|Factor|Coeff|Coefficient|Multiplier|"
    "Divisor|Exponent|Offset|Step|Rate|Budget|Capacity|Quota|Share|Priority|Rank|Boost|Timeout|Deadline|Target|Base|"
    "Scale|Margin|Slack|Interval|Window|Length|Decay"
)
#: A unit after a role word keeps the role (``deadlineMs``); ``Per`` before one makes a rate (``refillPerSec``).
_UNIT = re.compile("Ns|Us|Ms|Secs?|Seconds?|Minutes?|Tokens|Bytes|Pct|Percent")


def says_role(stem: str) -> bool:
    """``stem`` ends in a word that says its number's role (``criticalClassWeight``, ``timeoutMs``,
    ``refillPerSec``), so no "Value" need follow it; ``criticalUrgency`` or ``criticalW`` say none."""
    words = [w[:1].upper() + w[1:] for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", stem)]
    if len(words) > 1 and _UNIT.fullmatch(words[-1]):
        if words[-2] == "Per":
            return True
        words.pop()
    return bool(words) and (_ROLE_ENDING.fullmatch(words[-1]) is not None or (len(words) > 1 and words[-2] == "Per"))


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


def param_name_problem(name: str, field: str) -> str | None:
    """Why ``name`` (the JSON key in the EPP config) or ``field`` (its Go field) is not a lowerCamel key and an
    exported Go identifier, else None: the guard behind every way a name is built (a name made from the text
    ``scores[snap.ID]`` was ``iD]SampleWeight``)."""
    if not re.fullmatch(r"[a-z][A-Za-z0-9]*", name):
        return f"parameter name {name!r} is not a lowerCamel identifier (a letter, then letters and digits)"
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", field):
        return f"parameter {name!r} has Go field {field!r}, which is not an exported Go identifier"
    return None


def _identifier(text: str) -> str:
    """``text`` with everything but letters and digits dropped, never starting with a digit ("evolved" if empty)."""
    stem = re.sub(r"[^A-Za-z0-9]", "", text) or "evolved"
    return "p" + stem if stem[0].isdigit() else stem


def class_value_part(an: Analysis, th: Threshold) -> str:
    """A value chosen per class for a local (``limit = 60`` for critical requests): what the local is compared with
    says what it limits, so the doc says that, not the class it is chosen by."""
    who = "requests of every other class" if th.case == "other" else f"{th.case} requests"
    owner = next(
        (f for f in (an.host_info, *an.helpers) if th.occurrences and f.label == th.occurrences[0].owner), None
    )
    for n in walk(owner.node) if owner is not None and an.src is not None else []:
        sides = [n.child_by_field_name(s) for s in ("left", "right")] if n.type == "binary_expression" else []
        op = text_of(an.src, n.child_by_field_name("operator")) if sides else ""
        if op in COMPARE - {"==", "!="} and th.target in (text_of(an.src, s).strip() for s in sides):
            other = next(text_of(an.src, s).strip() for s in sides if text_of(an.src, s).strip() != th.target)
            what = "limit" if LIMIT_WORDS.search(th.target) else "threshold"
            return (
                f"the {what} on `{other}` for {who}: the evolved `{th.target}`, which `{text_of(an.src, n)}` compares"
            )
    return f"the value of `{th.target}` for {who}"
