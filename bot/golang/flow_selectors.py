"""The data-flow walk's selectors and indexing: what ``x.Field`` and ``x[i]`` read (a mixin of ``bot.golang.flow.Walker``).

Why a module of its own: a selector is where a BLIS signal enters the walk (a snapshot's, the request's or the
router state's field, each recorded as a signal use with its dictionary type), where the receiver's fields and
the program's use of ``ws.scorers``, ``ws.weights``, ``ws.rng`` and ``ws.observers`` are noted, and where an
oracle read is flagged; indexing carries a slice's role to its element and flags positional scorer indexing.
The statements that reach them are ``bot.golang.flow``'s; calls and arithmetic ``bot.golang.flow_exprs``'.
Needs the walker's state (see ``flow.Walker``).
"""

from __future__ import annotations

from bot.golang.analysis_types import Node
from bot.golang.flow_values import _ELEM_ROLE, _ROLE_OF_TYPE, Val, _elem_type, _go_scalar


class SelectorMixin:
    """``selector`` and ``index`` of the walker, and the two helpers they share with the expressions."""

    def selector(self, node: Node) -> Val:
        operand = node.child_by_field_name("operand")
        fld = self.t(node.child_by_field_name("field"))
        ov = self.ex(operand)
        role = ov.role
        if role == "state":
            if fld in ("Snapshots",):
                return Val("snapshots", frozenset(), "[]RoutingSnapshot")
            if fld == "LoadingSnapshots":
                self.use(fld, "state", node, "field")
                return Val("snapshots", frozenset({"LoadingSnapshots"}), "[]RoutingSnapshot")
            name = self.use(fld, "state", node, "field")
            self.an.state_fields.setdefault(name, self._entry_type(name, "state"))
            return Val(None, frozenset({name}), self._entry_type(name, "state"))
        if role == "snapshot":
            name = self.use(fld, "snapshot", node, self._via(operand))
            entry = self.d.signal(fld, "snapshot")
            typ = self._entry_type(name, "snapshot")
            if entry is not None and entry.identifier_only:
                self.an.snapshot_fields.setdefault(name, typ or "string")
                return Val("id", frozenset(), typ or "string")
            if fld == "EffectiveLoad":
                return Val("method", frozenset(), "func")
            self.an.snapshot_fields.setdefault(name, typ or "float64")
            return Val(None, frozenset({name}), typ)
        if role == "request":
            if fld in ("InputTokens", "OutputTokens"):
                entry = self.d.signal(fld, "request")
                name = entry.name if entry else fld
                self.use(fld, "request", node, self._via(operand))
                self.an.request_fields.setdefault(name, "[]tokenID")
                return Val("tokens", frozenset({name}), "[]tokenID")
            if fld == "InputLen":
                return Val("method", frozenset(), "func")
            name = self.use(fld, "request", node, self._via(operand))
            entry = self.d.signal(fld, "request")
            typ = self._entry_type(name, "request")
            if entry is not None and entry.identifier_only:
                self.an.request_fields.setdefault(name, typ or "string")
                # not a signal (no threshold, no Signals row), but its origin is kept: a hash of it is the client's
                return Val("id", frozenset({f"@id:{name}"}), typ or "string")
            self.an.request_fields.setdefault(name, typ or "float64")
            return Val(None, frozenset({name}), typ)
        if role == "receiver":
            if fld == "scorers":
                self.an.uses_scorers = True
                return Val("scorers", frozenset({"@scorers"}), "[]scorerFunc")
            if fld == "weights":
                self.an.uses_scorers = True
                return Val("weights", frozenset({"@weights"}), "[]float64")
            if fld == "rng":
                self.an.uses_rng = True
                return Val("rng", frozenset(), "*rand.Rand")
            if fld == "observers":
                self.an.uses_observers = True
                return Val("observers", frozenset(), "[]observerFunc")
            if fld in ("cacheWeight", "loadWeight"):
                self.hazard("early-weight", node, name=fld)
                self.an.receiver_fields.setdefault(fld, "float64")
                return Val(None, frozenset({f"@{fld}"}), "float64")
            k = f"@recv::{fld}"
            v = self.env.get(k, Val())
            declared = self.struct_fields.get(self.fn.receiver_type or "", {}).get(fld) if self.fn else None
            if (
                declared is None
                and self.fn
                and self.fn.receiver_type
                and f"{self.fn.receiver_type}.{fld}" in self.funcs
            ):
                return Val("method", v.taint, "func")
            typ = declared or v.type
            if declared is None:
                self.an.receiver_fields.setdefault(fld, typ or "")
            return Val(_ROLE_OF_TYPE.get(typ or ""), v.taint, typ)
        if role == "decision":
            return Val(None, ov.taint, None)
        if role == "rng":
            return Val("rngmethod", ov.taint, "func")
        # package selectors and unknown operands
        otext = self.t(operand)
        if operand is not None and operand.type == "identifier" and self.get(otext) is None:
            full = f"{otext}.{fld}"
            if (otext == "math" and fld.startswith("Max")) or full in (
                "math.MinInt",
                "math.MinInt64",
                "math.SmallestNonzeroFloat64",
            ):
                return Val(type="untyped-int" if "Int" in fld else "untyped-float")
            if otext == "math" and fld.startswith(("Inf",)):
                return Val(type="func")
            return Val(type="pkg")
        if fld == "OutputTokens":
            self.hazard("oracle", node, name=fld)
        return Val(None, ov.taint, None)

    def _via(self, operand: Node | None) -> str:
        if operand is None:
            return "field"
        if operand.type == "identifier":
            return f"via {self.t(operand)}"
        return f"via {self.t(operand)}"

    def _entry_type(self, name: str, scope: str) -> str | None:
        e = self.d.signal(name, scope)
        if e is None:
            return None
        return _go_scalar(e.blis_type)

    def index(self, node: Node) -> Val:
        operand = node.child_by_field_name("operand")
        idx = node.child_by_field_name("index")
        ov = self.ex(operand)
        iv = self.ex(idx)
        self.note_keyed_write(node, operand, iv)
        position = None
        if idx is not None and idx.type == "int_literal":
            position = self.t(idx)
        elif idx is not None and idx.type == "identifier":
            position = self.int_consts.get(self.key(self.t(idx)))  # idx := 0 ... ws.scorers[idx]
        if position is not None and ({"@scorers", "@weights"} & ov.taint) and ov.role not in ("snapshots", "requests"):
            self.hazard("positional", node, operand=self.t(operand), index=position)
        role = _ELEM_ROLE.get(ov.role or "")
        if role in ("snapshot", "request"):
            return Val(role, frozenset({t for t in ov.taint if t.startswith("@")}), _elem_type(ov.type))
        if role == "scorer":
            return Val("scorer", ov.taint, "scorerFunc")
        return Val(None, ov.taint | (iv.taint if ov.role is None else frozenset()), _elem_type(ov.type))
