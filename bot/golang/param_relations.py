"""Checks across parameters that keep the evolved policy's direction, derived from the shape of the evolved code.

Each parameter's own range (``>= 0``, a 0-1 fraction) cannot stop a set of values that together invert what the
evolved logic does. Two shapes are recognised wherever they occur, whatever the program calls its values:

- two cuts on the same value in one if/else-if chain (``if load > 7 {...} else if load > 4.5 {...}``): the cut
  tested first must stay the higher one (the lower one the lower), or the later branch can never run;
- a linear taper in the later branch, ``t *= 1 - c*(load - 4.5)``, ended by the earlier branch's cut at 7: at
  the cut it must not fall below what the cut itself multiplies ``t`` by (``t *= 0.4``; 0 when the cut sets no
  factor), ``c*(high-low) <= 1-factor``, or a larger value ends up with a larger factor than a smaller one. A
  taper floored or capped (``math.Max(0.2, 1 - c*(load-4.5))``, a ``math.Min`` around it or inside, either
  argument order) is judged by its clamped value at the cut, ``max(0.2, 1-c*(7-4.5)) >= factor``: a floor at or
  above the factor keeps the direction whatever ``c`` is, a cap below it inverts it whatever ``c`` is;
- a hysteresis pair: a bool field of the receiver set ``true`` under one cut and ``false`` under the other, on the
  same value, one cut upward (``>=``, ``>``) and one downward (``<``, ``<=``): ``if p >= 1.0 { h.shedding = true }``
  and ``if p < 0.7 { h.shedding = false }`` (or a "calm" flag set true under the low cut and false under the high
  one). Each assignment is a statement directly in the block of an if whose whole condition is that comparison
  (the number on either side, in parentheses or not); the two ifs may sit anywhere in one method: nested under a
  test of the flag itself (as evolved programs write it), in one else-if chain, or one after the other. The
  downward cut must stay at or below the upward one: past it, a value between them meets both, so the flag no
  longer keeps its state between the cuts (nested under the flag, it flips on and off on every request). A flag
  set from a comparison (``h.s = p >= 1.0``), a local, or a cut inside a compound condition is not recognised.

A relation the evolved values themselves break is not one (it would refuse the evolved program). The generated
Validate() checks each relation, gate 1 refuses ``param`` lines that break one with the values in effect, and
the recalibration check reports one its pod-scale values break instead of running the plugin with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from bot.golang.analysis_types import Analysis, Node, Threshold
from bot.golang.gonames import go_float
from bot.golang.gotree import id_of, named, parse_number

#: Slack for a relation met with equality (0.12*5 is 0.6000000000000001 in float64).
EPS = 1e-9
_EPS_GO = "1e-9"
_UP = (">", ">=")
_DOWN = ("<", "<=")
#: The kinds that are ``low <= high``.
_ORDERED = ("order", "hysteresis")
_ANY_ROLE = ("threshold", "offset", "coefficient", "factor", "floor", "cap", "exponent")


@dataclass(frozen=True)
class Relation:
    """``kind`` "order" and "hysteresis": ``low <= high``; "taper": ``coeff*(high-low) <= 1 - factor`` (factor ""
    when the cut sets none). ``names``/``fields`` by role (low, high, coeff, factor); ``defaults`` the evolved
    values."""

    kind: str
    subject: str
    names: tuple[tuple[str, str], ...]
    fields: tuple[tuple[str, str], ...]
    defaults: tuple[tuple[str, float], ...]
    integer: bool = False
    #: A taper's ``math.Max``/``math.Min`` around ``1-c*(x-low)``, innermost first: ("max"|"min", a role among
    #: ``names`` for a parameter, else the constant's Go literal).
    clamps: tuple[tuple[str, str], ...] = ()
    #: A hysteresis pair's flag (``h.shedding``) and its two assignments, the one setting it true first: (role,
    #: the operator with ``subject`` on the left, the value set), e.g. ``(("high", ">=", "true"), ("low", "<",
    #: "false"))``.
    flag: str = ""
    steps: tuple[tuple[str, str, str], ...] = ()

    def name(self, role: str) -> str:
        return dict(self.names).get(role, "")

    def field(self, role: str) -> str:
        return dict(self.fields).get(role, "")

    @property
    def roles(self) -> tuple[str, ...]:
        return ("low", "high") if self.kind in _ORDERED else tuple(r for r, _ in self.names)

    def broken(self, values: dict[str, float | str]) -> bool:
        """Whether these values (by parameter name; the evolved default for one not given) break it."""
        v = dict(self.defaults) | {k: float(x) for k, x in values.items() if not isinstance(x, str)}
        low, high = v[self.name("low")], v[self.name("high")]
        if self.kind in _ORDERED:
            return low > high
        factor = v[self.name("factor")] if self.name("factor") else 0.0
        below = v[self.name("coeff")] * (high - low) > 1 - factor + EPS
        for func, ref in self.clamps:  # the Go condition's logic, innermost first (see ``cond``)
            x = v[self.name(ref)] if self.name(ref) else float(ref)
            below = (x < factor - EPS and below) if func == "max" else (x < factor - EPS or below)
        return below

    @property
    def cond(self) -> str:
        """The Go condition Validate() refuses on."""
        f = {r: f"p.{self.field(r)}" for r in self.roles}
        if self.kind in _ORDERED:
            return f"{f['low']} > {f['high']}"
        bound = f"1-{f['factor']}" if "factor" in f else "1"
        cond = f"{f['coeff']}*({f['high']}-{f['low']}) > {bound}+{_EPS_GO}"
        under = f"{f['factor']}-{_EPS_GO}" if "factor" in f else f"-{_EPS_GO}"
        for func, ref in self.clamps:  # max(x, t) < factor: both are; min(x, t) < factor: either is
            cond = f"({f.get(ref, ref)} < {under} {'&&' if func == 'max' else '||'} {cond})"
        return cond

    @property
    def _printed(self) -> tuple[str, ...]:
        """The roles whose values the message prints, in its order."""
        if self.kind in _ORDERED:
            return ("low", "high")
        outer = tuple(ref for _, ref in reversed(self.clamps) if self.name(ref))
        return (*outer, "coeff", "high", "low", *(("factor",) if self.name("factor") else ()))

    @property
    def args(self) -> list[str]:
        return [f"p.{self.field(r)}" for r in self._printed]

    def message(self, values: dict | None = None) -> str:
        """What Validate() says (``%v`` the values, in ``args`` order), or with ``values`` filled in."""
        n = {r: self.name(r) for r in self.roles}
        in_effect = dict(self.defaults) | (values or {})
        got = {r: go_float(float(in_effect[n[r]])) if values is not None else "%v" for r in self.roles}
        if self.kind == "hysteresis":
            sets = " and ".join(f"`{self.flag} = {val}` when `{self.subject} {op} {n[r]}`" for r, op, val in self.steps)
            return (
                f"{n['low']} must be <= {n['high']} (the evolved logic sets {sets}, and keeps it between the two cuts; "
                f"with {n['low']} above {n['high']} a `{self.subject}` between them meets both, so `{self.flag}` no "
                f"longer keeps its state there and can flip on and off from one request to the next), got "
                f"{got['low']} > {got['high']}"
            )
        if self.kind == "order":
            return (
                f"{n['low']} must be <= {n['high']} (the evolved logic compares `{self.subject}` with {n['high']} "
                f"first and with {n['low']} only in the branch after it), got {got['low']} > {got['high']}"
            )
        bound, at = (f"1-{n['factor']}", "the cut's factor") if "factor" in n else ("1", "0")
        got_bound = f"1-{got['factor']}" if "factor" in n else "1"
        if self.clamps:
            at_cut, at_got = self._clamped(n, n["high"], n["low"]), self._clamped(got, got["high"], got["low"])
            return (
                f"{at_cut} must be >= {n.get('factor', '0')}, got {at_got} < {got.get('factor', '0')}: the taper "
                f"`{self._clamped(n, self.subject, n['low'])}` must stay at or above {at} up to the cut at "
                f"{n['high']}, or a larger `{self.subject}` gets a larger factor than a smaller one (the evolved "
                "policy's direction inverts)"
            )
        return (
            f"{n['coeff']}*({n['high']}-{n['low']}) must be <= {bound}, got {got['coeff']}*({got['high']}-"
            f"{got['low']}) > {got_bound}: the taper `1-{n['coeff']}*({self.subject}-{n['low']})` must stay at or "
            f"above {at} up to the cut at {n['high']}, or a larger `{self.subject}` gets a larger factor than a "
            "smaller one (the evolved policy's direction inverts)"
        )

    def _clamped(self, shown: dict[str, str], x: str, low: str) -> str:
        """``max(floor, 1-coeff*(x-low))`` with each role written as ``shown`` has it (a constant as itself)."""
        text = f"1-{shown['coeff']}*({x}-{low})"
        for func, ref in self.clamps:
            text = f"{func}({shown.get(ref, ref)}, {text})"
        return text

    @property
    def owner(self) -> str:
        """The parameter whose spec carries the check (the generated test sets it alone to a refused value)."""
        if self.kind == "taper" and self.clamps:
            return self._breaker()[0]
        return self.name("low" if self.kind in _ORDERED else "coeff")

    def _breaker(self) -> tuple[str, float]:
        """A clamped taper's (parameter, value) that breaks it alone: a steeper taper, else a floor or cap below
        the factor; ("", nan) when none does (a floor at or above the factor needs a second value moved)."""
        d = dict(self.defaults)
        room = 1 - (d[self.name("factor")] if self.name("factor") else 0.0)
        base = 2 * max(room, 0.05) / (d[self.name("high")] - d[self.name("low")])
        tries = [(self.name("coeff"), float(f"{base * 10**k:.3g}")) for k in range(4)]
        tries += [(self.name(ref), float(f"{(1 - room) / 2:.3g}")) for _, ref in self.clamps if self.name(ref)]
        return next(((n, v) for n, v in tries if self.broken({n: v})), ("", math.nan))

    def bad(self) -> float:
        """A value of ``owner`` that breaks the relation with every other parameter at its evolved value."""
        if self.kind == "taper" and self.clamps:
            return self._breaker()[1]
        d = dict(self.defaults)
        low, high = d[self.name("low")], d[self.name("high")]
        if self.kind in _ORDERED:
            # past ``high`` also where + 1 is lost in the float (a 1e19 "never" sentinel)
            return (
                float(int(high) + 1) if self.integer else float(go_float(max(high + 1, math.nextafter(high, math.inf))))
            )
        room = 1 - (d[self.name("factor")] if self.name("factor") else 0.0)
        return float(f"{2 * room / (high - low):.3g}")

    def check(self) -> dict:
        """The entry ``ParamSpec.checks`` holds for it (``args``: the values the message prints)."""
        return {"cond": self.cond, "message": self.message(), "bad": self.bad(), "args": self.args, "relation": self}


def relations(an: Analysis) -> list[Relation]:
    """Every relation the evolved code's shape implies, the evolved values meeting it."""
    out: list[Relation] = []
    by_cond = _comparisons(an)
    for cid, (outer, op) in by_cond.items():
        stmt = _if_of(an.cond_nodes[cid])
        alt = stmt.child_by_field_name("alternative") if stmt is not None else None
        if alt is None or alt.type != "if_statement":
            continue
        inner_cond = _bare(alt.child_by_field_name("condition"))
        hit = by_cond.get(id_of(inner_cond)) if inner_cond is not None else None
        if hit is None or hit[0].subject != outer.subject or (hit[1] in _UP) != (op in _UP):
            continue
        inner = hit[0]
        low, high = (inner, outer) if op in _UP else (outer, inner)
        if low.param == high.param or low.value > high.value:
            continue
        integer = low.go_type in ("int", "int64") and high.go_type in ("int", "int64")
        out.append(_relation("order", outer.subject, {"low": low, "high": high}, integer))
        if op in _UP:
            taper = _taper(an, stmt, alt, outer.subject, low, high)
            if taper is not None:
                out.append(taper)
    out += _hysteresis(an, by_cond)
    # A relation no one value breaks (a floor at or above the factor) is left out: the generated test sets one alone.
    return [r for r in dict.fromkeys(out) if not r.broken({}) and r.owner]


def _hysteresis(an: Analysis, by_cond: dict[int, tuple[Threshold, str]]) -> list[Relation]:
    """The hysteresis pairs (see the module's docstring): a receiver's bool set true under one cut and false under
    the other, on the same value, the two cuts facing opposite ways."""
    sets: dict[tuple[int, str, str], list[tuple[Threshold, str]]] = {}  # (method, flag, "true"|"false") -> (cut, op)
    for cid, (th, op) in by_cond.items():
        stmt = _if_of(an.cond_nodes[cid])
        if stmt is None:
            continue
        for method, flag, value in _flag_sets(an, stmt):
            sets.setdefault((method, flag, value), []).append((th, op))
    out = []
    for (method, flag, value), enters in sets.items():
        if value != "true":
            continue
        for (on, on_op), (off, off_op) in ((a, b) for a in enters for b in sets.get((method, flag, "false"), [])):
            if on.subject != off.subject or (on_op in _UP) == (off_op in _UP) or on.param == off.param:
                continue
            low, high = (off, on) if on_op in _UP else (on, off)
            if low.value > high.value:
                continue
            steps = (
                ("high" if on is high else "low", on_op, "true"),
                ("high" if off is high else "low", off_op, "false"),
            )
            integer = low.go_type in ("int", "int64") and high.go_type in ("int", "int64")
            rel = _relation("hysteresis", on.subject, {"low": low, "high": high}, integer)
            out.append(replace(rel, flag=flag, steps=steps))
    return out


def _flag_sets(an: Analysis, stmt: Node) -> list[tuple[int, str, str]]:
    """(the method's node id, ``recv.field``, "true"|"false") of each ``recv.field = true`` (or false) directly in
    an if statement's block, ``recv`` the receiver of the method holding it."""
    method = stmt.parent
    while method is not None and method.type != "method_declaration":
        method = method.parent
    params = method.child_by_field_name("receiver") if method is not None else None
    names = [n for d in (named(params) if params is not None else []) if (n := d.child_by_field_name("name"))]
    if len(names) != 1:
        return []
    recv = _text(an, names[0])
    out = []
    for s in _consequence(stmt):
        if s.type != "assignment_statement" or _text(an, s.child_by_field_name("operator")) != "=":
            continue
        left, right = _bare(s.child_by_field_name("left")), _bare(s.child_by_field_name("right"))
        if left is None or right is None or left.type != "selector_expression" or right.type not in ("true", "false"):
            continue
        operand = _bare(left.child_by_field_name("operand"))
        if operand is not None and operand.type == "identifier" and _text(an, operand) == recv:
            out.append((id_of(method), _text(an, left), right.type))
    return out


def _relation(kind: str, subject: str, parts: dict[str, Threshold], integer: bool = False) -> Relation:
    return Relation(
        kind,
        subject,
        tuple((r, th.param) for r, th in parts.items()),  # type: ignore[misc]
        tuple((r, th.field) for r, th in parts.items()),  # type: ignore[misc]
        tuple((th.param, float(th.value)) for th in parts.values()),  # type: ignore[misc]
        integer,
    )


def _comparisons(an: Analysis) -> dict[int, tuple[Threshold, str]]:
    """Comparison node id -> (the parameter compared, its operator with the subject on the left)."""
    out = {}
    for th in an.thresholds:
        if not th.param or th.role not in ("threshold", "offset"):
            continue
        for o in th.occurrences:
            if o.role == "threshold" and o.op in (*_UP, *_DOWN) and o.cond_id in an.cond_nodes:
                out[o.cond_id] = (th, o.op)
    return out


def _bare(node: Node | None) -> Node | None:
    """The expression itself, without parentheses or a one-element list around it (an assignment's sides)."""
    while node is not None and (
        node.type == "parenthesized_expression" or (node.type == "expression_list" and len(named(node)) == 1)
    ):
        node = named(node)[0]
    return node


def _if_of(cond: Node) -> Node | None:
    """The if statement whose whole condition ``cond`` is."""
    n = cond.parent
    while n is not None and n.type == "parenthesized_expression":
        n = n.parent
    if n is None or n.type != "if_statement":
        return None
    whole = _bare(n.child_by_field_name("condition"))
    return n if whole is not None and id_of(whole) == id_of(cond) else None


def _param_at(an: Analysis, node: Node | None, roles: tuple[str, ...]) -> Threshold | None:
    node = _bare(node)
    if node is None:
        return None
    th = an.literal_nodes.get(node.start_byte)
    return th if th is not None and th.param and th.role in roles else None


def _scaled(an: Analysis, stmt: Node) -> list[tuple[str, Node]]:
    """(target, right-hand side) of each ``target *= expr`` directly in an if statement's block."""
    out = []
    for s in _consequence(stmt):
        if s.type == "assignment_statement" and _text(an, s.child_by_field_name("operator")) == "*=":
            out.append((_text(an, _bare(s.child_by_field_name("left"))), s.child_by_field_name("right")))
    return out


def _consequence(stmt: Node) -> list[Node]:
    """The statements directly in an if statement's block."""
    block = stmt.child_by_field_name("consequence")
    stmts = named(block) if block is not None else []
    return named(stmts[0]) if len(stmts) == 1 and stmts[0].type == "statement_list" else stmts


def _text(an: Analysis, node: Node | None) -> str:
    if node is None or an.src is None:
        return ""
    return an.src.go_bytes[node.start_byte : node.end_byte].decode("utf-8")


def _unclamped(an: Analysis, rhs: Node | None) -> tuple[Node | None, list[tuple[str, Node]]]:
    """``rhs`` without the ``math.Max``/``math.Min`` (or ``max``/``min``) of a number around it: the expression
    inside and the clamps as (func, the number's node), innermost first. A call of another shape is not peeled."""
    clamps: list[tuple[str, Node]] = []
    while rhs is not None and rhs.type == "call_expression":
        func = _text(an, rhs.child_by_field_name("function")).removeprefix("math.").lower()
        args = [_bare(a) for a in named(rhs.child_by_field_name("arguments"))]
        numbers = [a for a in args if a is not None and a.type in ("float_literal", "int_literal")]
        if func not in ("max", "min") or len(args) != 2 or len(numbers) != 1:
            break
        clamps.insert(0, (func, numbers[0]))
        rhs = next(a for a in args if a is not numbers[0])
    return rhs, clamps


def _taper(an: Analysis, cut: Node, branch: Node, subject: str, low: Threshold, high: Threshold) -> Relation | None:
    """The taper ``t *= 1 - c*(subject - low)`` of the branch after the cut (floored or capped by numbers or not),
    with the factor the cut sets on t."""
    for target, whole in _scaled(an, branch):
        rhs, clamps = _unclamped(an, _bare(whole))
        if rhs is None or rhs.type != "binary_expression" or _text(an, rhs.child_by_field_name("operator")) != "-":
            continue
        one, prod = _bare(rhs.child_by_field_name("left")), _bare(rhs.child_by_field_name("right"))
        if one is None or parse_number(_text(an, one)) != 1.0 or prod is None or prod.type != "binary_expression":
            continue
        if _text(an, prod.child_by_field_name("operator")) != "*":
            continue
        a, b = prod.child_by_field_name("left"), prod.child_by_field_name("right")
        coeff, span = (
            (_param_at(an, a, ("coefficient",)), b)
            if _param_at(an, a, ("coefficient",))
            else (
                _param_at(an, b, ("coefficient",)),
                a,
            )
        )
        span = _bare(span)
        if coeff is None or span is None or span.type != "binary_expression":
            continue
        if _text(an, span.child_by_field_name("operator")) != "-" or _text(
            an, span.child_by_field_name("left")
        ).replace(" ", "") != subject.replace(" ", ""):
            continue
        if _param_at(an, span.child_by_field_name("right"), ("threshold", "offset")) is not low:
            continue
        parts = {"low": low, "high": high, "coeff": coeff}
        factor = next(
            (f for t, r in _scaled(an, cut) if t == target and (f := _param_at(an, r, ("factor",))) is not None), None
        )
        if factor is not None:
            parts["factor"] = factor
        refs = []
        for i, (func, node) in enumerate(clamps):
            th = _param_at(an, node, _ANY_ROLE)
            if th is not None:
                parts[f"clamp{i}"] = th
            refs.append((func, f"clamp{i}" if th is not None else _text(an, node)))
        if len({th.param for th in parts.values()}) < len(parts):
            continue  # one parameter in two roles: no relation among distinct values
        return replace(_relation("taper", subject, parts), clamps=tuple(refs))
    return None


def broken(checks: dict[str, list[dict]], values: dict[str, float | str]) -> list[Relation]:
    """The relations among ``checks`` (``ParamSpec.checks`` by parameter) these values break, once each."""
    found = dict.fromkeys(c["relation"] for cs in checks.values() for c in cs if "relation" in c)
    return [r for r in found if r.broken(values)]
