"""Numbers an order cannot feel as magnitudes: a term added to every candidate's key, and a per-class rank.

An order built from a key function (``urgency := func(r *Request) float64``) whose results are compared only with
each other (``ui, uj := urgency(a), urgency(b)``, then ``ui != uj`` and ``ui > uj``) reads the keys only relative
to one another. Found by a researcher's trial 4 (a scheduler ordering by SLO class rank, then by a slack):

- a number added to every candidate's key (``slack := 250.0 + 0.04*len - 1.3*waitedMs``, ``return -slack``)
  cancels in every comparison, in BLIS too: it was the parameter ``inputTokensOffset``, for which a finding asked
  a test case by hand. ``cancelling`` finds it; ``dead_branches.demote`` makes it a constant of evolved.go
  (``baseSlack``) with why beside it, as it does a number that acts only where llm-d never goes.
- a whole number chosen per class and read only as an order (``rank := 2``, ``case "critical": rank = 0``,
  compared with another request's rank, with a literal, or stepped by one when a request has aged) is an ordinal
  label: its value says where the class stands, not how much. Tuned alone it can only reorder the classes
  (``criticalRank: 3`` put critical behind batch, and Validate() could not see it), so ``keep_ordinal_ranks``
  keeps each as evolved, no parameter, and ``rank_comments`` says so at its line. A rank compared with a signal,
  or weighed in arithmetic, is a magnitude and stays a parameter.

A key function whose result is compared with anything else (``slack(r) < 0``, s03's hopeless requests), or has a
second return, decides with the number's size, so nothing here applies to it.
"""

from __future__ import annotations

from bot.golang.analysis_types import COMPARE, Analysis, Node, Threshold
from bot.golang.gonames import exported
from bot.golang.gotree import named, parse_number, text_of, walk
from bot.golang.source import EvolvedSource
from bot.model import PolicyKind

_FUNCS = ("func_literal", "function_declaration", "method_declaration")
_INT_TYPES = ("int", "int64", "int32")


def candidate(an: Analysis) -> str:
    """What an order ranks, in the words a reason uses: a scheduler's requests, else the candidates."""
    return "request" if an.kind == PolicyKind.SCHEDULING else "candidate"


def cancelling(an: Analysis) -> dict[str, str]:
    """Parameter -> the key it is added to (``slack``; the key function's name when the sum is returned as it is),
    for each parameter every use of which is a term of a key that is compared only with other candidates' keys."""
    src = an.src
    if src is None:
        return {}
    out: dict[str, str] = {}
    for th in an.thresholds:
        if not th.param or not th.occurrences:
            continue
        keys = {_cancels(src, _node(src, o.start, o.end)) for o in th.occurrences}
        if len(keys) == 1 and (key := keys.pop()) is not None:
            out[th.param] = key
    return out


def cancel_comment(an: Analysis, th: Threshold) -> str:
    """The line above the constant in evolved.go: what it is added to, and that it never changes the order."""
    who = candidate(an)
    return f"{th.constant} is added to every {who}'s `{th.cancels}`, compared only between {who}s: it never changes the order."


def cancel_reason(an: Analysis, th: Threshold) -> str:
    """Why ``th`` (demoted, ``th.cancels``) is no parameter and no test can exercise it."""
    who = candidate(an)
    return (
        f"it is added to every {who}'s `{th.cancels}`, which the order compares only with another {who}'s, so it "
        "cancels in every comparison (in BLIS too) and never changes the order"
    )


def _node(src: EvolvedSource, start: int, end: int) -> Node | None:
    return src.tree.root_node.descendant_for_byte_range(start, end)


def _cancels(src: EvolvedSource, lit: Node | None) -> str | None:
    """The key ``lit`` is a term of, when every use of the sum it is in is the one result of a key function whose
    results are compared only with each other; else None."""
    if lit is None:
        return None
    up = lit.parent
    while up is not None and (
        up.type == "parenthesized_expression"
        or (up.type == "unary_expression" and text_of(src, up.child_by_field_name("operator")) in ("+", "-"))
    ):
        up = up.parent  # `(-250.0) + x`: the term is still a number added alike to every key
    if (
        up is None
        or up.type != "binary_expression"
        or text_of(src, up.child_by_field_name("operator")) not in ("+", "-")
    ):
        return None
    fn = _func_of(lit)
    returns = [r for r in walk(fn) if r.type == "return_statement" and _func_of(r) == fn] if fn is not None else []
    if fn is None or len(returns) != 1 or not _compared_pairwise(src, fn):
        return None
    found = _to_return(src, fn, lit, 0)
    if found is None:
        return None
    return found or _func_name(src, fn)[0]  # type: ignore[index]


def _to_return(src: EvolvedSource, fn: Node, node: Node, depth: int) -> str | None:
    """How ``node`` reaches ``fn``'s one return through sums and signs only: the first local it is bound to on the way
    (every read of that local reaching it likewise), the empty string when it is returned as it is; None when it
    does not (a product, a call, a comparison, a local set again)."""
    n = node
    while depth < 4:
        p = n.parent
        if p is None:
            return None
        op = (
            text_of(src, p.child_by_field_name("operator"))
            if p.type in ("binary_expression", "unary_expression")
            else ""
        )
        if p.type == "parenthesized_expression" or op in ("+", "-"):  # a sum, a difference or a sign
            n = p
        elif p.type == "expression_list" and len(named(p)) == 1 and p.parent is not None:
            stmt = p.parent
            if stmt.type == "return_statement":
                return ""
            if stmt.type != "short_var_declaration" or stmt.child_by_field_name("right") != p:
                return None
            left = named(stmt.child_by_field_name("left"))
            if len(left) != 1 or left[0].type != "identifier":
                return None
            name = text_of(src, left[0])
            reads = [r for r in _reads(src, fn, name) if r.start_byte > stmt.end_byte]
            if not reads or _assigned(src, fn, name, stmt):
                return None
            if any(_to_return(src, fn, r, depth + 1) is None for r in reads):
                return None
            return name
        else:
            return None
    return None


def _reads(src: EvolvedSource, scope: Node, name: str) -> list[Node]:
    """The identifiers ``name`` in ``scope`` that are read (not the left of a declaration or an assignment)."""
    out = []
    for n in walk(scope):
        if n.type != "identifier" or text_of(src, n) != name:
            continue
        holder = n.parent
        stmt = holder.parent if holder is not None and holder.type == "expression_list" else None
        if stmt is not None and stmt.type in ("short_var_declaration", "assignment_statement"):
            if stmt.child_by_field_name("left") == holder:
                continue
        out.append(n)
    return out


def _assigned(src: EvolvedSource, scope: Node, name: str, decl: Node) -> bool:
    """``name`` is set in ``scope`` by a statement other than ``decl``, or stepped."""
    for n in walk(scope):
        if n.type == "assignment_statement" and n != decl:
            if any(text_of(src, t).strip() == name for t in named(n.child_by_field_name("left"))):
                return True
        if n.type in ("inc_statement", "dec_statement") and text_of(src, named(n)[0]).strip() == name:
            return True
    return False


def _func_of(node: Node) -> Node | None:
    n = node.parent
    while n is not None and n.type not in _FUNCS:
        n = n.parent
    return n


def _func_name(src: EvolvedSource, fn: Node) -> tuple[str, Node] | None:
    """(name, the scope its calls are in) of a function literal bound to a local (``urgency := func...``) or of a
    plain function; None for a method (its calls go through a receiver) or a literal not bound so."""
    if fn.type == "function_declaration":
        return text_of(src, fn.child_by_field_name("name")), src.tree.root_node
    holder = fn.parent
    stmt = holder.parent if holder is not None and holder.type == "expression_list" else None
    if fn.type != "func_literal" or stmt is None or stmt.type != "short_var_declaration" or len(named(holder)) != 1:
        return None
    left = named(stmt.child_by_field_name("left"))
    scope = _func_of(stmt)
    if len(left) != 1 or left[0].type != "identifier" or scope is None:
        return None
    return text_of(src, left[0]), scope


def _bare(n: Node) -> Node:
    while n.type == "parenthesized_expression" and named(n):
        n = named(n)[0]
    return n


def _compared_pairwise(src: EvolvedSource, fn: Node) -> bool:
    """Every call of ``fn`` is compared only with another call of it: directly (``rank(a) < rank(b)``) or through
    locals each bound once to a call (``ui, uj := urgency(a), urgency(b)``), and ``fn`` returns one value."""
    result = fn.child_by_field_name("result")
    named_fn = _func_name(src, fn)
    if result is None or result.type == "parameter_list" or named_fn is None:
        return False
    name, scope = named_fn
    calls, bound = [], {}
    for n in walk(scope):
        if n.type != "identifier" or text_of(src, n) != name or _inside(n, fn):
            continue
        p = n.parent
        if p is not None and p.type == "expression_list" and p.parent is not None:
            if p.parent.type == "short_var_declaration" and p.parent.child_by_field_name("left") == p:
                continue  # the declaration of the literal itself
        if p is None or p.type != "call_expression" or p.child_by_field_name("function") != n:
            return False  # passed around or stored: its results may be read anywhere
        calls.append(p)
    if not calls:
        return False
    for call in calls:
        up = call.parent
        while up is not None and up.type == "parenthesized_expression":
            up = up.parent
        if up is not None and up.type == "expression_list" and up.parent is not None:
            stmt = up.parent
            if stmt.type != "short_var_declaration" or stmt.child_by_field_name("right") != up:
                return False
            left, right = named(stmt.child_by_field_name("left")), named(up)
            at = next(i for i, v in enumerate(right) if _bare(v).start_byte == call.start_byte)
            if len(left) != len(right) or left[at].type != "identifier":
                return False
            owner = _func_of(stmt)
            var = text_of(src, left[at])
            if owner is None or _assigned(src, owner, var, stmt):
                return False
            bound[(var, owner.start_byte)] = owner
        elif up is None or up.type != "binary_expression":
            return False
    keys = {c.start_byte for c in calls}

    def is_key(n: Node) -> bool:
        n = _bare(n)
        owner = _func_of(n)
        return n.start_byte in keys or (
            n.type == "identifier" and owner is not None and (text_of(src, n), owner.start_byte) in bound
        )

    uses = [*calls, *(r for (var, _), owner in bound.items() for r in _reads(src, owner, var))]
    for use in uses:
        up = use.parent
        while up is not None and up.type == "parenthesized_expression":
            up = up.parent
        if up is not None and up.type == "expression_list" and use in calls:
            continue  # bound to a local: its reads are checked
        if up is None or up.type != "binary_expression":
            return False
        if text_of(src, up.child_by_field_name("operator")) not in COMPARE:
            return False
        if not all(is_key(up.child_by_field_name(s)) for s in ("left", "right")):
            return False
    return True


def _inside(n: Node, outer: Node) -> bool:
    return outer.start_byte <= n.start_byte and n.end_byte <= outer.end_byte


def keep_ordinal_ranks(src: EvolvedSource, an: Analysis) -> None:
    """Each whole number chosen per class that the order reads only as a rank stays as evolved (``th.reason``), and
    every literal of its rank gets a comment at its line (``an.rank_notes``): see the module doc."""
    for th in an.thresholds:
        if th.role != "value" or not th.case or th.reason is not None or th.go_type not in _INT_TYPES:
            continue
        lit = _node(src, th.occurrences[0].start, th.occurrences[0].end) if len(th.occurrences) == 1 else None
        rank = _rank_of(src, lit) if lit is not None else None
        if rank is None:
            continue
        name, literals, stepped = rank
        who = candidate(an)
        whom = "every other class" if th.case == "other" else f"{th.case} requests"
        th.reason = (
            f"`{name}` = {th.literal} for {whom} is an ordinal label: the order reads it only by comparing it with "
            f"another {who}'s `{name}` or with a fixed number{', and steps it by one' if stepped else ''}, so only "
            "where the classes stand counts and a value tuned alone could only reorder them; kept as evolved, not a "
            "parameter"
        )
        for node in literals:
            owner = an.literal_nodes.get(node.start_byte)
            case = owner.case if owner is not None else "other" if _declares(node) else None
            whose = "" if not case else "every other class's " if case == "other" else f"{case} requests' "
            an.rank_notes[node.end_byte] = f"{whose}{name}: an ordinal label, kept as evolved (no parameter)"


def _declares(lit: Node) -> bool:
    """``lit`` declares the rank (``rank := 2``): the value of every class no later arm sets."""
    holder = lit.parent
    return holder is not None and holder.parent is not None and holder.parent.type == "short_var_declaration"


def _rank_of(src: EvolvedSource, lit: Node) -> tuple[str, list[Node], bool] | None:
    """(the rank's name, every literal it is set to, whether it is stepped by one) when ``lit`` is one value of a
    whole-number rank: a local set only to literals and read only as an order, returned by a key function whose
    results are compared only with each other; or one of that function's returns, all literals. Else None."""
    holder = lit.parent
    stmt = holder.parent if holder is not None and holder.type == "expression_list" else None
    fn = _func_of(lit)
    if stmt is None or fn is None or len(named(holder)) != 1 or not _compared_pairwise(src, fn):
        return None
    returns = [r for r in walk(fn) if r.type == "return_statement" and _func_of(r) == fn]
    values = [_bare(named(named(r)[0])[0]) if named(r) and len(named(named(r)[0])) == 1 else None for r in returns]
    if stmt.type == "return_statement":
        if not all(v is not None and _whole(src, v) for v in values):
            return None
        return _func_name(src, fn)[0], values, False  # type: ignore[index,return-value]
    left = named(stmt.child_by_field_name("left")) if stmt.type == "assignment_statement" else []
    if len(left) != 1 or left[0].type != "identifier" or text_of(src, stmt.child_by_field_name("operator")) != "=":
        return None
    name = text_of(src, left[0])
    literals, stepped = [], False
    for n in walk(fn):
        if n.type in ("short_var_declaration", "assignment_statement"):
            targets = [text_of(src, t).strip() for t in named(n.child_by_field_name("left"))]
            if name not in targets:
                continue
            right = named(n.child_by_field_name("right"))
            op = ":=" if n.type == "short_var_declaration" else text_of(src, n.child_by_field_name("operator"))
            value = _bare(right[targets.index(name)]) if len(right) == len(targets) else None
            if value is None or not _whole(src, value):
                return None
            if op in ("-=", "+=") and parse_number(text_of(src, value)) == 1:
                stepped = True
            elif op in ("=", ":="):
                literals.append(value)
            else:
                return None
        elif n.type in ("inc_statement", "dec_statement") and text_of(src, named(n)[0]).strip() == name:
            stepped = True
    for r in _reads(src, fn, name):
        if r.parent is not None and r.parent.type in ("inc_statement", "dec_statement"):
            continue
        if not _read_as_order(src, r, values):
            return None
    if not any(v is not None and v.type == "identifier" and text_of(src, v) == name for v in values):
        return None
    return name, literals, stepped


def _read_as_order(src: EvolvedSource, read: Node, returned: list[Node | None]) -> bool:
    """``read`` is what the function returns, or compared with a whole-number literal (``rank > 0``)."""
    if any(v is not None and v.start_byte == read.start_byte for v in returned):
        return True
    up = read.parent
    while up is not None and up.type == "parenthesized_expression":
        up = up.parent
    if up is None or up.type != "binary_expression":
        return False
    if text_of(src, up.child_by_field_name("operator")) not in COMPARE:
        return False
    other = next(_bare(s) for s in (up.child_by_field_name("left"), up.child_by_field_name("right")) if s != read)
    return _whole(src, other)


def _whole(src: EvolvedSource, n: Node) -> bool:
    value = parse_number(text_of(src, n).replace("_", "")) if n.type == "int_literal" else None
    return value is not None


def rank_comments(an: Analysis) -> dict[int, str]:
    """End-of-line comments (by the byte offset of the line's end) for the literals of each rank kept as evolved;
    a line that already carries a comment gets none."""
    if an.src is None:
        return {}
    data = an.src.go_bytes
    out: dict[int, str] = {}
    for after, text in an.rank_notes.items():
        end = data.find(b"\n", after)
        end = len(data) if end < 0 else end
        if b"//" not in data[after:end] and b"/*" not in data[after:end]:
            out[end] = f" // {text}"
    return out


def constant_name(key: str, taken: set[str]) -> str:
    """The constant a term added to every key becomes: ``slack`` -> ``baseSlack``."""
    name, i = "base" + exported(key), 2
    while name in taken:
        name = f"base{exported(key)}{i}"
        i += 1
    return name
