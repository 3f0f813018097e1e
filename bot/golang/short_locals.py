"""Names for numbers on locals of one or two letters (``n``, ``w``): the letter says nothing of the number's role,
so the name comes from what the local holds (``n := len(r.InputTokens)``, then ``n > 2048`` is an input-tokens
threshold) or, for a local the evolved code sets to numbers, from where it is used (``w`` in ``score -= w * load``
is the load's weight). A value that is a mean or a count is named by what it measures (``measured``), whatever
its locals are called: ``float64(totalQueue)/float64(n)`` with ``n := len(state.Snapshots)`` is a mean, not a total."""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.golang.analysis_types import COMPARE, Node
from bot.golang.gonames import lower_camel
from bot.golang.gotree import named, walk

Text = Callable[[Node], str]

_SETS = ("short_var_declaration", "var_spec", "assignment_statement")
_CONVERSIONS = {"float64", "float32", "int", "int64", "int32", "uint64", "uint"}


def short(name: str) -> bool:
    """A local name too short to say what it holds."""
    return len(name) <= 2


def held_by(fn: Node, name: str, text: Text) -> Node | None:
    """What a local of one or two letters (``n := len(r.InputTokens)``) is set from, when it is set once in the
    function ``fn``: its name says nothing of what it holds, the expression does."""
    if not short(name):
        return None
    found: list[Node] = []
    for n in walk(fn):
        if n.type not in _SETS:
            continue
        left = n.child_by_field_name("left") or n.child_by_field_name("name")
        right = n.child_by_field_name("right") or n.child_by_field_name("value")
        lefts = named(left) if left is not None and left.type == "expression_list" else [left]
        rights = named(right) if right is not None and right.type == "expression_list" else [right]
        for i, target in enumerate(lefts):
            if target is not None and text(target).strip() == name:
                found.append(rights[i] if len(rights) == len(lefts) and rights[i] is not None else n)
    held = found[0] if len(found) == 1 else None
    if held is None or held.type in _SETS:
        return None
    return None if any(c.type == "identifier" and text(c) == name for c in walk(held)) else held


def returned_by(read: Node, name: str, text: Text) -> str | None:
    """What a local of one or two letters holds when it is what its function returns: ``p`` in ``priorityOf :=
    func(r *Request) float64 { ... return p }`` is a priority. Set more than once, it has no one expression that
    says so (``held_by``); the function's name does, without a leading get/compute or a trailing Of/For."""
    if not short(name):
        return None
    fn = _function_of(read)
    if fn is None or fn.child_by_field_name("body") is None:
        return None
    returns = [
        r for r in walk(fn.child_by_field_name("body")) if r.type == "return_statement" and _function_of(r) == fn
    ]
    if not returns or any(" ".join(text(r).split()) != f"return {name}" for r in returns):
        return None
    named_as = fn.child_by_field_name("name")
    if fn.type == "func_literal" and fn.parent is not None and fn.parent.type == "expression_list":
        stmt, values = fn.parent.parent, named(fn.parent)
        left = stmt.child_by_field_name("left") if stmt is not None else None
        targets = named(left) if left is not None and left.type == "expression_list" else []
        named_as = targets[values.index(fn)] if len(targets) == len(values) else None
    if named_as is None or named_as.type not in ("identifier", "field_identifier"):
        return None
    stem = re.sub(r"^(?:get|compute|calc|calculate)(?=[A-Z])|(?<=[a-z])(?:Of|For)$", "", text(named_as))
    return None if short(stem) else lower_camel(stem)


def _function_of(node: Node) -> Node | None:
    fn = node.parent
    while fn is not None and fn.type not in ("func_literal", "function_declaration", "method_declaration"):
        fn = fn.parent
    return fn


def used_for(fn: Node, name: str, text: Text, name_of: Callable[[Node], str]) -> tuple[str, str | None] | None:
    """(stem, role word) for the numbers a local of one or two letters is set to (``w = 0.8`` in a branch), from the
    first read of it in ``fn`` that says what they are for, else None (the letter stays):

    - ``w * load``: the weight of what it multiplies (``loadWeight``); ``load / w``: that value's divisor;
    - ``load > w``: a threshold on what it is compared with (``loadThreshold``);
    - ``urgency[r.ID] = w + age``, ``limit := w``: a value of what it sets, alone or as a term of a sum (the role
      word is then the number's own, None).

    ``name_of`` names the other side as any subject is named (``float64(snap.QueueDepth)`` is ``queueDepth``); a
    side it names by another short local or by nothing says no more than the letter, so the next read is tried."""
    if not short(name):
        return None
    for n in walk(fn):
        if n.type != "identifier" or text(n) != name or _in_own_update(n, name, text):
            continue
        use = _use(n, text)
        stem = name_of(use[0]) if use is not None else ""
        if use is not None and stem and not short(stem):
            return stem, use[1]
    return None


def use_of(fn: Node, name: str, text: Text) -> tuple[Node, str] | None:
    """(what it acts on, role word) at the first read of the local ``name`` in ``fn`` that has a role word
    (``kvW * kvTerm``: ``kvTerm``, ``Weight``; ``load > t``: ``load``, ``Threshold``), whatever the local's length:
    a result named ``kvW`` says by its last letter only that it is some role of the KV term, its use says which."""
    for n in walk(fn):
        if n.type != "identifier" or text(n) != name or _in_own_update(n, name, text):
            continue
        use = _use(n, text)
        if use is not None and use[1] is not None:
            return use[0], use[1]
    return None


def _in_own_update(read: Node, name: str, text: Text) -> bool:
    """``read`` is set there (a target, ``var w float64``) or read to update itself (``w = w * 2``, ``w *= 2``)."""
    stmt = read.parent
    while stmt is not None and stmt.type not in _SETS and not stmt.type.endswith(("_statement", "block")):
        stmt = stmt.parent
    if stmt is None or stmt.type in ("inc_statement", "dec_statement"):
        return stmt is not None
    left = stmt.child_by_field_name("left") or stmt.child_by_field_name("name")
    targets = named(left) if left is not None and left.type == "expression_list" else [left]
    return stmt.type in _SETS and any(t is not None and text(t).strip() == name for t in targets)


def _use(read: Node, text: Text) -> tuple[Node, str | None] | None:
    """(the node that says what ``read``'s value is for, role word) where ``read`` is used, else None."""
    child, p = read, read.parent
    while p is not None and (p.type == "parenthesized_expression" or _conversion(p, text)):
        child, p = (p, p.parent) if p.type == "parenthesized_expression" else (p.parent, p.parent.parent)
    if p is None:
        return None
    if p.type == "expression_list":
        return _target(child)
    if p.type != "binary_expression":
        return None
    op, left, right = (
        text(p.child_by_field_name("operator")),
        p.child_by_field_name("left"),
        p.child_by_field_name("right"),
    )
    other = right if left == child else left
    if op in COMPARE:
        return other, "Threshold"
    if op == "*":
        return other, "Weight"
    if op == "/" and right == child:
        return other, "Divisor"
    if op not in ("+", "-"):
        return None
    while p.parent is not None and (
        p.parent.type == "parenthesized_expression"
        or (p.parent.type == "binary_expression" and text(p.parent.child_by_field_name("operator")) in ("+", "-"))
    ):
        p = p.parent
    return _target(p) if p.parent is not None and p.parent.type == "expression_list" else None


def _conversion(args: Node, text: Text) -> bool:
    """``args`` is the argument list of a conversion (``float64(w)``), which keeps the value's role."""
    call = args.parent
    if args.type != "argument_list" or call is None or call.type != "call_expression":
        return False
    return text(call.child_by_field_name("function")) in _CONVERSIONS and len(named(args)) == 1


def _target(value: Node) -> tuple[Node, None] | None:
    """What the statement ``value`` is the right side of sets (``urgency`` of ``urgency[r.ID] = value``)."""
    values, stmt = value.parent, value.parent.parent if value.parent is not None else None
    if values is None or stmt is None or stmt.type not in _SETS:
        return None
    left = stmt.child_by_field_name("left") or stmt.child_by_field_name("name")
    targets = named(left) if left is not None and left.type == "expression_list" else [left]
    items = named(values)
    if left is None or values == left or len(targets) != len(items):
        return None
    target = targets[items.index(value)]
    while target is not None and target.type == "index_expression":
        target = target.child_by_field_name("operand")
    return None if target is None else (target, None)


def plain_name(side: Node, text: Text) -> str:
    """What a value is named by where no walk of the program is at hand (a local lifted in literals.py):
    ``float64(snap.QueueDepth)`` and ``len(r.InputTokens)`` by their field, ``load`` by itself, ``s.f()`` by its
    method, ``urgency[r.ID]`` by the map; "" for anything else (a literal, a sum)."""
    n = side
    while True:
        if n.type == "parenthesized_expression" and named(n):
            n = named(n)[0]
        elif n.type == "index_expression" and n.child_by_field_name("operand") is not None:
            n = n.child_by_field_name("operand")
        elif n.type == "call_expression" and (args := n.child_by_field_name("arguments")) is not None:
            fn = n.child_by_field_name("function")
            if fn is not None and fn.type == "selector_expression":
                return lower_camel(text(fn.child_by_field_name("field")))
            if fn is None or text(fn) not in (*_CONVERSIONS, "len") or len(named(args)) != 1:
                return ""
            n = named(args)[0]
        elif n.type == "selector_expression":
            return lower_camel(text(n.child_by_field_name("field")))
        else:
            return text(n) if n.type == "identifier" else ""


def measured(subject: Node, fn: Node | None, text: Text) -> tuple[str, str] | None:
    """(name stem, what it is for a doc) when ``subject`` is a mean or a count, which its locals' names do not say
    (found in a trial: ``float64(totalQueue)/float64(n) > 6`` was ``totalQueueThreshold``, a mean queue per
    endpoint named as a total; ``len(kept) > 4`` was ``keptThreshold``, a count of arrivals):

    - ``sum / len(xs)`` (or a local set once from ``len(xs)``) is the mean of ``sum`` per element of ``xs``:
      ``meanQueue``, without a leading total/sum;
    - ``len(local)`` is a count of what the local holds, named by the receiver field it is stored back to
      (``a.arrivals[tenant] = kept``: ``arrivalsCount``) or else by the local. ``len(r.InputTokens)`` is no count
      of a local: the field names it (``inputTokens``)."""
    n = _bare(subject, text)
    if n.type == "binary_expression" and text(n.child_by_field_name("operator")) == "/":
        num, den = _bare(n.child_by_field_name("left"), text), _bare(n.child_by_field_name("right"), text)
        if den.type == "identifier" and fn is not None:
            den = _bare(held_by(fn, text(den), text) or den, text)
        counted = _len_of(den, text)
        stem = plain_name(num, text) if counted is not None else ""
        if counted is None or not stem or short(stem):
            return None
        per = "per endpoint" if text(counted).lower().endswith("snapshots") else f"per element of `{text(counted)}`"
        stem = re.sub(r"^(?:total|sum)(?=[A-Z])", "", stem)
        return "mean" + stem[:1].upper() + stem[1:], f"the mean of `{text(num)}` {per}, `{text(subject)}`,"
    counted = _len_of(n, text)
    if counted is None or counted.type != "identifier" or short(text(counted)):
        return None
    stored = _stored_as(fn, text(counted), text) if fn is not None else None
    stem = (plain_name(stored, text) if stored is not None else "") or text(counted)
    said = f" (`{text(counted)}` is stored as `{text(stored)}`)" if stored is not None else ""
    return stem + "Count", f"the count `{text(n)}`{said}"


def _bare(n: Node, text: Text) -> Node:
    """``n`` without parentheses or a conversion around it (``float64(n)`` is ``n``)."""
    while True:
        if n.type == "parenthesized_expression" and named(n):
            n = named(n)[0]
        elif n.type == "call_expression" and (a := n.child_by_field_name("arguments")) and _conversion(a, text):
            n = named(a)[0]
        else:
            return n


def _len_of(n: Node, text: Text) -> Node | None:
    """``xs`` when ``n`` is ``len(xs)``."""
    args = n.child_by_field_name("arguments") if n.type == "call_expression" else None
    if args is None or text(n.child_by_field_name("function")) != "len" or len(named(args)) != 1:
        return None
    return named(args)[0]


def _stored_as(fn: Node, name: str, text: Text) -> Node | None:
    """Where the local ``name`` is stored in the receiver's state (``a.arrivals[tenant] = kept``), if it is."""
    for n in walk(fn):
        if n.type != "assignment_statement" or text(n.child_by_field_name("operator")) != "=":
            continue
        left, right = named(n.child_by_field_name("left")), named(n.child_by_field_name("right"))
        if len(left) == 1 and len(right) == 1 and text(right[0]).strip() == name:
            target = left[0]
            while target.type == "index_expression":
                target = target.child_by_field_name("operand")
            if target.type == "selector_expression":
                return left[0]
    return None


def applied_as(fn: Node, name: str, text: Text) -> tuple[Node, Node, str] | None:
    """(the statement, the variable it changes, ``*=`` or ``/=``) where the local ``name`` alone multiplies or
    divides a variable (``scores[snap.ID] *= adj``): the numbers it is set to are factors of that variable, whatever
    the local is called (a trial's ``adj = 0.1`` was ``adjValue``, "the value in `snap.KVUtilization`")."""
    for n in walk(fn):
        op = text(n.child_by_field_name("operator")) if n.type == "assignment_statement" else ""
        if op not in ("*=", "/="):
            continue
        left, right = named(n.child_by_field_name("left")), named(n.child_by_field_name("right"))
        if len(left) == 1 and len(right) == 1 and text(_bare(right[0], text)).strip() == name:
            return n, left[0], op
    return None
