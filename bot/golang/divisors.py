"""Parameters the evolved code divides by: the values Validate() must refuse so the quotient keeps meaning.

``float64(snap.QueueDepth)/s.QDThreshold`` at ``QDThreshold`` 0 is +Inf (one waiting request saturates the pool),
or NaN for 0/0 (every comparison false: the policy never acts); ``(sat - s.RampStart) / (1.0 - s.RampStart)``
at ``RampStart`` 1 is ±Inf, and past 1 its sign flips (a ramp that falls as load rises). A ``>= 0`` check per
parameter stops none of these. The rule, derived from the code's shape wherever it occurs: a denominator that
is one parameter plus or minus numbers (``p``, ``1 - p``, ``p - 2``, through parentheses, a unary minus and a
numeric conversion) must stay away from 0 on the side it is at with the evolved value, so the parameter is
refused at the bound where the denominator is 0 and beyond it. A denominator with two parameters, or with a
signal in it, is left alone (no one value decides its sign); one the evolved values already make 0 is too.

Reads the analysis (the evolved source's tree); the checks go to ``ParamSpec.checks`` (params.py), so the
generated Validate() and its test, and gate 1's ``param`` answer (``out_of_range``), refuse the same values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bot.golang.analysis_types import Analysis, Node, Threshold
from bot.golang.gonames import go_float
from bot.golang.gotree import named, parse_number, text_of, walk

_CONVERSIONS = {"float64", "float32", "int", "int64", "int32", "uint", "uint64", "uint32"}


@dataclass(frozen=True)
class Divisor:
    """A denominator ``sign*param + const`` of one parameter; ``text`` it in the parameter's name (``1 - rampStart``),
    as the operator who sets the value reads it."""

    param: str
    field: str
    sign: int
    const: float
    text: str
    default: float
    integer: bool

    @property
    def zero_at(self) -> float:
        """The parameter value at which the denominator is 0."""
        return -self.const / self.sign

    @property
    def above(self) -> bool:
        """Whether the evolved value lies above ``zero_at`` (the side the parameter must stay on)."""
        return self.default > self.zero_at

    def bound(self) -> float:
        """The refused bound in the parameter's type: an integer parameter is refused from the nearest integer
        on the wrong side of a fractional zero (``zero_at`` 0.5, default 2: refused at <= 0)."""
        z = self.zero_at
        if not self.integer or float(z).is_integer():
            return z
        return float(math.floor(z) if self.above else math.ceil(z))

    def check(self) -> dict:
        """The ``ParamSpec.checks`` entry: the Go condition, the message naming the bound, a refused value."""
        b = go_float(self.bound())
        op, must = ("<=", ">") if self.above else (">=", "<")
        if self.sign == 1 and self.const == 0:
            said = f"{self.param} is a divisor and must be {must} {b}"
        else:
            said = (
                f"{self.param} is in the divisor `{self.text}` and must be {must} {b} (at {go_float(self.zero_at)} "
                f"the divisor is 0, and beyond it its sign flips from the one it has at the evolved "
                f"{go_float(self.default)})"
            )
        return {
            "cond": f"p.{self.field} {op} {b}",
            "message": f"{said}, got %v",
            "bad": int(self.bound()) if self.integer else float(b),
        }


def divisor_checks(an: Analysis) -> dict[str, list[dict]]:
    """Validate() checks by parameter name, one per distinct bound, for every denominator of one parameter."""
    out: dict[str, list[dict]] = {}
    for d in dict.fromkeys(_divisors(an)):
        checks = out.setdefault(d.param, [])
        check = d.check()
        if check["cond"] not in {c["cond"] for c in checks}:
            checks.append(check)
    return out


def _divisors(an: Analysis) -> list[Divisor]:
    if an.src is None or an.host_info is None:
        return []
    fields = {getattr(th, "receiver_field", None): th for th in an.thresholds if th.role == "field" and th.param}
    found: list[Divisor] = []
    for func in [an.host_info, *an.helpers]:
        for node in walk(func.node):
            right = _denominator(an, node)
            if right is None:
                continue
            form = _linear(an, right, func.receiver_var, fields)
            if form is None or form[0] is None or form[1] == 0:
                continue
            th, sign, const = form
            d = Divisor(
                th.param,  # type: ignore[arg-type]
                th.field,  # type: ignore[arg-type]
                sign,
                const,
                _written(th.param, sign, const),  # type: ignore[arg-type]
                float(th.value),
                th.go_type in ("int", "int64"),
            )
            if sign * d.default + const != 0:  # the evolved values divide by 0 already: not ours to refuse
                found.append(d)
    return found


def _written(param: str, sign: int, const: float) -> str:
    """``sign*param + const`` as a person writes it: ``1 - rampStart``, ``qdThreshold - 2``, ``-scale``."""
    if const == 0:
        return param if sign == 1 else f"-{param}"
    if sign == 1:
        return f"{param} {'+' if const > 0 else '-'} {go_float(abs(const))}"
    return f"{go_float(const)} - {param}"


def _denominator(an: Analysis, node: Node) -> Node | None:
    """The right operand of ``a / b`` or ``a /= b``."""
    if node.type == "binary_expression" and text_of(an.src, node.child_by_field_name("operator")) == "/":
        return node.child_by_field_name("right")
    if node.type == "assignment_statement" and text_of(an.src, node.child_by_field_name("operator")) == "/=":
        right = node.child_by_field_name("right")
        parts = named(right) if right is not None and right.type == "expression_list" else [right]
        return parts[0] if len(parts) == 1 else None
    return None


Form = tuple[Threshold | None, int, float]


def _linear(an: Analysis, node: Node | None, recv: str | None, fields: dict) -> Form | None:
    """``node`` as ``sign*param + const`` (param None for a constant), or None when it is anything else: a
    signal, a call, a product, or two parameters."""
    if node is None:
        return None
    t = node.type
    if t == "parenthesized_expression" and len(named(node)) == 1:
        return _linear(an, named(node)[0], recv, fields)
    if t in ("float_literal", "int_literal"):
        th = an.literal_nodes.get(node.start_byte)
        if th is not None and th.param:
            return th, 1, 0.0
        value = parse_number(text_of(an.src, node))
        return None if value is None else (None, 0, value)
    if t == "selector_expression":
        operand, fld = node.child_by_field_name("operand"), node.child_by_field_name("field")
        th = fields.get(text_of(an.src, fld)) if recv and text_of(an.src, operand) == recv else None
        return None if th is None else (th, 1, 0.0)
    if t == "call_expression" and text_of(an.src, node.child_by_field_name("function")) in _CONVERSIONS:
        args = named(node.child_by_field_name("arguments"))
        return _linear(an, args[0], recv, fields) if len(args) == 1 else None
    if t == "unary_expression" and text_of(an.src, node.child_by_field_name("operator")) in ("-", "+"):
        inner = _linear(an, node.child_by_field_name("operand"), recv, fields)
        neg = text_of(an.src, node.child_by_field_name("operator")) == "-"
        return None if inner is None else (inner[0], -inner[1] if neg else inner[1], -inner[2] if neg else inner[2])
    if t == "binary_expression" and text_of(an.src, node.child_by_field_name("operator")) in ("+", "-"):
        a = _linear(an, node.child_by_field_name("left"), recv, fields)
        b = _linear(an, node.child_by_field_name("right"), recv, fields)
        if a is None or b is None or (a[0] is not None and b[0] is not None):
            return None
        s = -1 if text_of(an.src, node.child_by_field_name("operator")) == "-" else 1
        return (a[0] or b[0], a[1] + s * b[1], a[2] + s * b[2])
    return None
