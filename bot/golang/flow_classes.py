"""What the data-flow walk learns from branches on the request's SLO class: the class names it compares (a
name llm-d never sends, a ``default`` only such names reach) and the values chosen per class (a switch's cases,
whose every value is a parameter named for its class). A mixin of ``bot.golang.flow.Walker``, beside
``bot.golang.flow_exprs``, which calls it when a literal becomes a parameter."""

from __future__ import annotations

import re

from bot.golang.analysis_types import Node
from bot.golang.flow_values import Val
from bot.golang.gotree import named, walk

#: BLIS SLO classes the llm-d adapter never produces: it reads critical, standard or sheddable from the
#: request's integer priority (dictionary SLOClass), so batch and background arrive as sheddable and the
#: empty class as standard.
UNREACHABLE_CLASSES = ("batch", "background", "")
#: The classes it does produce: a clause that also accepts one of them still runs.
REACHABLE_CLASSES = ("critical", "standard", "sheddable")


class ClassMixin:
    """Per-class values and SLO names; needs the walker's state (see flow.Walker)."""

    def _set_per_case(self, lit: Node, target: str) -> bool:
        """``lit`` is set to ``target`` in one case of a switch whose other cases set ``target`` too."""
        case = lit.parent
        while case is not None and case.type not in ("expression_case", "default_case", "func_literal"):
            case = case.parent
        if case is None or case.type == "func_literal" or case.parent is None:
            return False
        return any(
            n.type == "assignment_statement"
            and target in (self.t(t).strip() for t in named(n.child_by_field_name("left")))
            for other in named(case.parent)
            if other.type in ("expression_case", "default_case") and other != case
            for n in walk(other)
        )

    def _case_label(self, lit: Node) -> str | None:
        """The class a value is chosen for, when it is set in a string switch's case (``case "critical":``
        gives ``critical``; the default of a switch whose cases are all strings, or of one on conditions (``switch {
        case load > 8:``), gives ``other``), else None."""
        n = lit.parent
        while n is not None and n.type not in ("expression_case", "default_case", "func_literal"):
            n = n.parent
        if n is None or n.type == "func_literal" or n.parent is None:
            return None

        def labels(case: Node) -> list[str]:
            values = case.child_by_field_name("value")
            items = named(values) if values is not None else []
            if not items or any(i.type != "interpreted_string_literal" for i in items):
                return []
            return [w for i in items if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", w := self.t(i)[1:-1])] or [""]

        if n.type == "expression_case":
            words = [w for w in labels(n) if w]
            return words[0] if words else None
        cases = [c for c in named(n.parent) if c.type == "expression_case"]
        on_conditions = n.parent.child_by_field_name("value") is None
        return "other" if cases and (on_conditions or all(labels(c) for c in cases)) else None

    # ---- SLO names -------------------------------------------------------

    def check_slo_literal(self, v: Val, other: Node | None, ctx: Node) -> None:
        if other is None or "SLOClass" not in v.taint:
            return
        lit = other
        if lit.type != "interpreted_string_literal":
            return
        s = self.t(lit).strip('"')
        self.an.slo_names.add(s)
        if s in ("realtime", "interactive"):
            self.hazard("dead-slo", ctx, name=s)
        elif s in UNREACHABLE_CLASSES:
            self.hazard("slo-unreachable", ctx, name=s, beside=self.reachable_beside(lit, ctx))

    def check_slo_default(self, v: Val, switch: Node, default: Node) -> None:
        """A switch on the class whose cases name every class the adapter produces: its ``default`` runs only for
        classes llm-d never yields (in BLIS the empty class, batch or background), so it never runs in llm-d. A
        ``fallthrough`` may enter it from a case: then it is left alone."""
        if switch.child_by_field_name("value") is None or "SLOClass" not in v.taint:
            return
        cases = [c for c in named(switch) if c.type == "expression_case"]
        named_classes = {
            self.t(lit).strip('"')
            for c in cases
            for lit in (named(c.child_by_field_name("value")) if c.child_by_field_name("value") is not None else [])
            if lit.type == "interpreted_string_literal"
        }
        if set(REACHABLE_CLASSES) <= named_classes and not any(n.type == "fallthrough_statement" for n in walk(switch)):
            left = [c for c in UNREACHABLE_CLASSES if c not in named_classes]
            self.hazard(
                "slo-default-unreachable", default, subject=self.t(switch.child_by_field_name("value")), left=left
            )

    def reachable_beside(self, lit: Node, ctx: Node) -> str | None:
        """A class the adapter produces that the same clause accepts too (``case "standard", "":``,
        ``c == "standard" || c == ""``, ``c != "standard" && c != ""``): then only ``lit``'s alternative is
        dead and the branch still runs, so it is not constant in llm-d."""
        parent = lit.parent
        if ctx == lit and parent is not None and parent.type == "expression_list":  # a case clause's values
            alternatives = named(parent)
        else:
            op = self.t(ctx.child_by_field_name("operator"))
            subject = next((self.t(n) for n in (ctx.child_by_field_name(f) for f in ("left", "right")) if n != lit), "")
            top = ctx
            while top.parent is not None and _joins(self, top.parent, "||" if op == "==" else "&&"):
                top = top.parent
            alternatives = []
            for cmp in _comparisons(self, top, op):
                left, right = cmp.child_by_field_name("left"), cmp.child_by_field_name("right")
                if self.t(left) == subject:
                    alternatives.append(right)
                elif self.t(right) == subject:
                    alternatives.append(left)
        for alt in alternatives:
            if alt.type == "interpreted_string_literal" and self.t(alt).strip('"') in REACHABLE_CLASSES:
                return self.t(alt).strip('"')
        return None


def _joins(walker, node: Node, joiner: str) -> bool:
    """``node`` groups its operands without changing the clause: parentheses, or the clause's own joiner."""
    if node.type == "parenthesized_expression":
        return True
    return node.type == "binary_expression" and walker.t(node.child_by_field_name("operator")) == joiner


def _comparisons(walker, top: Node, op: str) -> list[Node]:
    """The ``op`` comparisons a chain of ``||`` (or ``&&``) and parentheses joins under ``top``."""
    joiner = "||" if op == "==" else "&&"
    if top.type == "binary_expression" and walker.t(top.child_by_field_name("operator")) == op:
        return [top]
    if _joins(walker, top, joiner):
        return [c for n in named(top) for c in _comparisons(walker, n, op)]
    return []
