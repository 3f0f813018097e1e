"""Where the carried code reaches the receiver's fields: its methods, and the plain functions it hands them to.

``lifetime_count`` follows a count across the receiver's carried methods (``a.note(req)``, ``a.active()``). Evolved
code also moves a step into a plain function of the file: ``func activeTenants(a *A) int { return len(a.tenants) }``
called as ``activeTenants(a)``, or ``func record(m map[string]int, k string) { m[k]++ }`` called as
``record(a.counts, t)``. A map passed by value shares its storage, so ``m[k]++`` grows ``a.counts``; a number passed
by value does not, so only the receiver itself and its map fields are followed into a plain function.

A ``View`` is one function as it sees the receiver: a method names a field ``r.f`` through its receiver; a plain
function, for the arguments one call site passes, ``p.f`` (the receiver passed as ``p``) or ``m`` (the map ``r.f``
passed as ``m``). A plain function called with different maps is one view per binding, so a cap at the call that
passes one map caps that map only. One level: a plain function's own calls of plain functions are not followed
(a call site's arguments are matched from a method's receiver only).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.golang.analysis_types import Analysis, FuncInfo, Node
from bot.golang.gotree import text_of, walk
from bot.golang.source import EvolvedSource


@dataclass(frozen=True)
class View:
    fn: FuncInfo
    receiver: str | None  # the name the receiver has inside fn (its receiver, or the parameter it was passed as)
    maps: tuple[tuple[str, str], ...] = ()  # (parameter, receiver map field) a call site passed it

    @property
    def key(self) -> tuple:
        return (self.fn.label, self.receiver if self.fn.receiver_var is None else None, self.maps)

    def target(self, field: str, is_map: bool = True) -> str | None:
        """How ``fn`` names the receiver field (``r.f``, ``p.f``, or the parameter the map was passed as)."""
        passed = next((p for p, f in self.maps if f == field), None)
        if passed is not None and is_map:
            return passed
        return f"{self.receiver}.{field}" if self.receiver else None

    def passed_map(self, name: str) -> str | None:
        """The receiver map field the parameter ``name`` holds, if a call site passed one."""
        return next((f for p, f in self.maps if p == name), None)


def views(src: EvolvedSource, an: Analysis) -> list[View]:
    """The carried methods of the receiver, then every plain function they call with the receiver or a map field
    of it, once per distinct binding (in the order the calls appear)."""
    methods = [View(f, f.receiver_var) for f in [an.host_info, *an.helpers] if f is not None and f.receiver_var]
    out = list(methods)
    seen = {v.key for v in out}
    for caller in methods:
        for node in walk(caller.fn.node):
            got = _plain_view(src, an, caller, node)
            if got is not None and got.key not in seen:
                seen.add(got.key)
                out.append(got)
    return out


def callee(src: EvolvedSource, an: Analysis, caller: View, node: Node) -> tuple | None:
    """The key of the view ``node`` calls from ``caller``: a method on its receiver, or a plain function it passes
    the receiver or a map field to (None for any other node)."""
    fn = node.child_by_field_name("function") if node.type == "call_expression" else None
    if fn is None:
        return None
    if fn.type == "selector_expression":
        operand, name = fn.child_by_field_name("operand"), fn.child_by_field_name("field")
        if operand is None or name is None or caller.receiver is None or text_of(src, operand) != caller.receiver:
            return None
        owner = caller.fn.receiver_type or (an.host_info.receiver_type if an.host_info is not None else None)
        return (f"{owner}.{text_of(src, name)}", None, ())
    got = _plain_view(src, an, caller, node)
    return got.key if got is not None else None


def _plain_view(src: EvolvedSource, an: Analysis, caller: View, node: Node) -> View | None:
    """The view of a carried plain function ``node`` calls, bound by the arguments that are ``caller``'s receiver or
    one of its map fields; None when it passes neither, or the caller is itself a plain function (one level)."""
    fn = node.child_by_field_name("function") if node.type == "call_expression" else None
    if fn is None or fn.type != "identifier" or caller.fn.receiver_var is None:
        return None
    name = text_of(src, fn)
    plain = next((h for h in an.helpers if h.receiver_type is None and h.name == name), None)
    args = node.child_by_field_name("arguments")
    if plain is None or args is None:
        return None
    receiver, maps = None, []
    for (param, _), arg in zip(plain.params, args.named_children, strict=False):
        text = text_of(src, arg)
        if text == caller.receiver and param:
            receiver = param
        elif param and text.startswith(f"{caller.receiver}."):
            field = text.removeprefix(f"{caller.receiver}.")
            if an.receiver_fields.get(field, "").strip().startswith("map["):
                maps.append((param, field))
    if receiver is None and not maps:
        return None
    return View(plain, receiver, tuple(maps))


def passed_writes(src: EvolvedSource, an: Analysis, nodes: list) -> list:
    """The walker's signal-keyed writes through a map parameter (``m[k]++`` in ``record``, noted as
    ``param-keyed-write``) as keyed writes of the receiver map each call site passes (``record(a.counts, t)``), at
    that call: the line that hands the receiver's map over to be grown."""
    writes = [(n, i) for k, n, i in nodes if k == "param-keyed-write"]
    if not writes:
        return []
    out = []
    for caller in (v for v in views(src, an) if v.fn.receiver_var):
        for call in walk(caller.fn.node):
            plain = _plain_view(src, an, caller, call)
            for _node, info in writes if plain is not None else []:
                field = plain.passed_map(info["param"])
                if info["within"] == plain.fn.label and field is not None:
                    out.append(("keyed-write", call, {**info, "field": field, "receiver": caller.receiver}))
    return out
