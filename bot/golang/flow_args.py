"""Numbers passed as an argument to a helper that weighs or compares a signal with its parameter: ``ws.pressure(snap,
critQueueWeight)`` where ``pressure`` computes ``queueWeight*float64(snap.QueueDepth)``, ``ws.overloaded(snap, 0.85)``
where ``overloaded`` tests ``s.KVUtilization > limit`` (a mixin of ``flow.Walker``, through ``flow_exprs.ExprMixin``).

A researcher's SLO router passed its per-class queue weights so: the walk read ``critQueueWeight`` as 0.35 at the
call, but the number met no signal there, and in the helper ``queueWeight`` held no number, so the two main knobs
stayed constants with no finding. The walk now follows the argument one level: the helper notes, for each of its
parameters, the signal it is combined with or compared with (``note_param_meet``), and the call makes the number it
passes there a parameter with that role (``lift_args``), read where the caller passes it (``ws.pressure(snap,
ws.params.CritQueueWeight)``). A threshold so passed is named, documented and watched by the harness at the helper's
comparison as ``arg_thresholds`` says; one whose parameter is of a type no plugin parameter carries (``float32``)
keeps its literal with a finding saying why (``arg_findings``).
"""

from __future__ import annotations

from functools import cached_property

from bot.golang.analysis_types import COMPARE, FLIP, Node, Occurrence
from bot.golang.arg_thresholds import name_of, note_passed
from bot.golang.flow_values import Val
from bot.golang.gotree import id_of, named, norm_type, text_of, walk
from bot.golang.literals import CHECK_UNLISTED_LITERAL
from bot.model import Finding, Severity


class ArgMixin:
    """The walk's view of a number passed to a helper's parameter (needs the walker's state, see flow.Walker)."""

    @cached_property
    def param_meets(self) -> dict[tuple[str, int], tuple]:
        """(function label, parameter position) -> (role, op, the signal side, its value, the expression, divisor,
        the parameter's name and type): the first signal the parameter meets in the function's arithmetic."""
        return {}

    @cached_property
    def kept_args(self) -> dict[int, tuple[Node, str, str, str, str]]:
        """Literal start -> (the literal, the call, the parameter, what it is compared with, the parameter's type) of
        a number passed where the helper compares a signal with it as a type no plugin parameter carries: kept, with
        a finding."""
        return {}

    def note_param_meet(self, node: Node, side: Node | None, other: Node | None, ov: Val, op: str) -> None:
        """``side`` of the binary expression ``node`` is a parameter of the walked function that ``other``'s
        signals meet: remember how, for the numbers its callers pass there."""
        f = self.fn
        while side is not None and side.type == "parenthesized_expression" and named(side):
            side = named(side)[0]
        if f is None or side is None or other is None or side.type != "identifier" or not ov.signals():
            return
        name = self.t(side)
        at = next((i for i, (p, _) in enumerate(f.params) if p == name), None)
        if at is None or (f.label, at) in self.param_meets or _set_in(self.src, f.node, name):
            return
        on_left = node.child_by_field_name("left") == side
        if op in COMPARE:
            role, op = "threshold", FLIP[op] if on_left else op  # as the number would be written in its place
        elif op in ("*", "/", "+", "-"):
            role = "coefficient" if op in ("*", "/") else "offset"
        else:
            return
        divisor = op == "/" and not on_left
        self.param_meets[(f.label, at)] = (role, op, other, ov, node, divisor, name, norm_type(f.params[at][1]))

    def lift_args(self, callee: str, args_node: Node | None, args: list[Node], vals: list[Val]) -> None:
        """Each number passed at this call (a literal, or a constant read as its number) to a parameter the callee
        weighs a signal with becomes a parameter with that role, as if written where the signal is."""
        for i, (a, v) in enumerate(zip(args, vals, strict=False)):
            meet = self.param_meets.get((callee, i))
            if v.lit is None or meet is None or args_node is None:
                continue
            role, op, other, ov, ctx, divisor, pname, ptype = meet
            if role == "threshold":
                self._lift_threshold(callee, args_node, a, v, args, vals, meet)
                continue
            if self.recording:
                self.an.passed[a.start_byte] = Occurrence(
                    a.start_byte, a.end_byte, self.line(a), role, op, None, self.fn_label, divisor
                )
            self.note_const_use(args_node, v, Val(type=ptype))  # a constant read here meets the callee's signal
            named_as = None if a.type == "identifier" else pname
            suffix = "" if named_as else None  # a literal passed is named by the parameter it is passed for
            self.literal(v.lit, role, other, ov, ctx, op=op, divisor=divisor, named_as=named_as, suffix=suffix)

    def _lift_threshold(self, callee: str, args_node: Node, a: Node, v: Val, args: list[Node], vals: list[Val], meet):
        """The number ``v`` passed as ``a`` where the helper compares a signal with it: a threshold parameter as if
        written in the helper's comparison, on the argument the compared parameter holds at this call when it is one
        (``busy(snap.QueueDepth, 12)`` comparing ``q >= max``: ``snap.QueueDepth``), read at the call."""
        _, op, other, ov, ctx, _, pname, ptype = meet
        if ptype not in ("int", "int64", "float64"):
            if self.recording:
                self.kept_args.setdefault(v.lit.start_byte, (v.lit, callee, pname, self.t(other), ptype))
            return
        helper = self.funcs.get(callee)
        subject, taint = other, ov.taint
        at = _param_at(helper, other, self.t) if helper is not None else None
        if at is not None and at < len(args) and vals[at].signals():
            subject, taint = args[at], vals[at].taint  # what the compared parameter holds at this call
        if self.recording:
            self.an.passed[a.start_byte] = Occurrence(
                a.start_byte, a.end_byte, self.line(a), "threshold", op, id_of(ctx), self.fn_label, param=pname
            )
        self.note_const_use(args_node, v, Val(type=ptype))
        before = self.an.literal_nodes.get(v.lit.start_byte)
        base, suffix = name_of(pname, subject, sorted(Val(None, taint).signals()), self.t)
        self.literal(v.lit, "threshold", subject, Val(None, taint, ptype), ctx, op=op, named_as=base, suffix=suffix)
        th = self.an.literal_nodes.get(v.lit.start_byte)
        if th is not None and th is not before and helper is not None:
            note_passed(th, th.occurrences[-1], helper.name, pname, self.t(ctx))


def _param_at(f, node: Node, text) -> int | None:
    """The position of the parameter of ``f`` that ``node`` (in parentheses or not) names, else None."""
    while node.type == "parenthesized_expression" and named(node):
        node = named(node)[0]
    if node.type != "identifier":
        return None
    return next((i for i, (p, _) in enumerate(f.params) if p == text(node)), None)


def arg_findings(src, an, kept: dict[int, tuple[Node, str, str, str, str]]) -> None:
    """A number passed to a helper that compares a signal with it as a type no parameter carries, and not made a
    parameter elsewhere: listed."""
    for start, (lit, callee, pname, other, ptype) in sorted(kept.items()):
        if start in an.literal_nodes:
            continue
        an.findings.append(
            Finding(
                severity=Severity.SUGGESTION,
                check=CHECK_UNLISTED_LITERAL,
                source_line=an.line_of(lit),
                message=(
                    f"the number {text_of(src, lit).strip()} is passed to `{callee}` as `{pname}`, which it compares "
                    f"`{other[:50]}` with, so it decides outcomes, but the translation keeps it a literal: `{pname}` "
                    f"is of type {ptype}, which no plugin parameter carries (int, int64 or float64), so the call "
                    "cannot pass one; it is neither a plugin parameter nor listed as a kept literal, and tuning it on "
                    "real pods needs a rebuild"
                ),
                fix=f"declare `{pname}` as float64 or int (the translation then makes the number a parameter), or "
                "add a parameter for it by hand",
            )
        )


def _set_in(src, fn: Node, name: str) -> bool:
    """``name`` is set again in ``fn`` (assigned, declared anew, incremented or its address taken): the number passed
    for it is then only its first value."""
    for n in walk(fn):
        if n.type in ("assignment_statement", "short_var_declaration"):
            left = n.child_by_field_name("left")
            if left is not None and any(text_of(src, t).strip() == name for t in named(left)):
                return True
        elif n.type in ("inc_statement", "dec_statement") and named(n) and text_of(src, named(n)[0]) == name:
            return True
        elif n.type == "unary_expression" and text_of(src, n.child_by_field_name("operator")) == "&":
            if text_of(src, n.child_by_field_name("operand")).strip() == name:
                return True
    return False
