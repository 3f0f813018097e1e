"""Values the data-flow walk tracks: the role an expression plays and the signals it derives from."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.golang.analysis_types import FuncInfo, Node
from bot.golang.gotree import named, norm_type, text_of
from bot.golang.source import EvolvedSource


@dataclass
class Val:
    role: str | None = None  # state snapshots snapshot request requests receiver tokens scorer scorers weights
    taint: frozenset = frozenset()
    type: str | None = None
    lit: Node | None = None  # the node when the value is a numeric literal

    def signals(self) -> set[str]:
        return {t for t in self.taint if not t.startswith("@")}


_ROLE_OF_TYPE = {
    "*RouterState": "state",
    "RouterState": "state",
    "[]RoutingSnapshot": "snapshots",
    "[]*RoutingSnapshot": "snapshots",
    "RoutingSnapshot": "snapshot",
    "*RoutingSnapshot": "snapshot",
    "*Request": "request",
    "Request": "request",
    "[]*Request": "requests",
    "[]Request": "requests",
}
_ELEM_ROLE = {"snapshots": "snapshot", "requests": "request", "scorers": "scorer"}
_MATH_FLOAT = re.compile(r"^math\.[A-Z]\w*$")
_UNIT_POWERS = {1e3, 1e6, 1e9, 1e-3, 1e-6}


def _elem_type(t: str | None) -> str | None:
    if not t:
        return None
    if t.startswith("[]"):
        return t[2:]
    m = re.match(r"map\[[^\]]+\](.+)", t)
    if m:
        return m.group(1)
    return None


def _result_type(f: FuncInfo | None) -> str | None:
    if f is None:
        return None
    r = norm_type(f.result)
    return r if r and not r.startswith("(") else None


def _go_scalar(blis_type: str) -> str:
    return {"[]TokenID": "[]tokenID", "[]RoutingSnapshot": "[]RoutingSnapshot"}.get(blis_type, blis_type)


def _param_type(subject_type: str | None, lit: Node, src: EvolvedSource) -> str | None:
    raw = text_of(src, lit)
    is_float = bool(re.search(r"[.eE]", raw.lstrip("-"))) and not raw.lower().startswith(("0x", "-0x"))
    if subject_type in ("float64", "float32", "untyped-float"):
        return "float64"
    if subject_type in ("int", "int64", "int32"):
        return subject_type if not is_float else None
    if subject_type == "time.Duration":
        return None
    if is_float:
        return "float64"
    return None


def field_written(lhs: Node, typ: str | None) -> Node | None:
    """The selector a write of a value of type ``typ`` sets a field through: ``a.total`` for ``a.total = v``, and
    for ``a.tokenEMA[tenant] = v`` too when ``v`` is a number (an entry of a receiver map or slice). The field then
    holds what the number derives from, so a figure computed from it later (a tenant's fair share of the tokens
    seen) meets those signals, as the field itself does when set outright. An entry that holds a history (a slice
    of arrival times) does not: what is read of it is counted (``len``), and a count is on no signal's scale."""
    if lhs.type == "selector_expression":
        return lhs
    if (typ or "").removeprefix("untyped-") not in _NUMBERS:
        return None
    while lhs.type in ("index_expression", "parenthesized_expression"):
        inner = lhs.child_by_field_name("operand") if lhs.type == "index_expression" else (named(lhs) or [None])[0]
        if inner is None:
            return None
        lhs = inner
    return lhs if lhs.type == "selector_expression" else None


_NUMBERS = {"int", "int32", "int64", "uint", "uint64", "float", "float32", "float64"}
