"""What the data-flow walk learns from branches on the request's SLO class: the class names it compares (a
name llm-d never sends, a ``default`` or an if/else chain's fallback only such names reach) and the values chosen
per class (a switch's cases, whose every value is a parameter named for its class). A mixin of
``bot.golang.flow.Walker``, beside ``bot.golang.flow_exprs``, which calls it when a literal becomes a parameter."""

from __future__ import annotations

import re

from bot.golang.analysis_types import Node
from bot.golang.flow_values import Val
from bot.golang.gotree import named, walk
from bot.golang.short_locals import plain_name, short, use_of, used_for

#: BLIS SLO classes the llm-d adapter never produces: it reads critical, standard or sheddable from the
#: request's integer priority (dictionary SLOClass), so batch and background arrive as sheddable and the
#: empty class as standard.
UNREACHABLE_CLASSES = ("batch", "background", "")
#: The classes it does produce: a clause that also accepts one of them still runs.
REACHABLE_CLASSES = ("critical", "standard", "sheddable")


class ClassMixin:
    """Per-class values and SLO names; needs the walker's state (see flow.Walker)."""

    def _set_per_case(self, lit: Node, target: str) -> bool:
        """``lit`` is set to ``target`` in one case of a switch (or one branch of an if/else chain on the class)
        whose other cases (branches) set ``target`` too."""
        chain = self._class_chain(lit)
        if chain is not None:
            others = [b for b in chain[2] if not b.start_byte <= lit.start_byte < b.end_byte]
        else:
            case = lit.parent
            while case is not None and case.type not in ("expression_case", "default_case", "func_literal"):
                case = case.parent
            if case is None or case.type == "func_literal" or case.parent is None:
                return False
            others = [o for o in named(case.parent) if o.type in ("expression_case", "default_case") and o != case]
        return any(
            n.type == "assignment_statement"
            and target in (self.t(t).strip() for t in named(n.child_by_field_name("left")))
            for other in others
            for n in walk(other)
        )

    def _case_label(self, lit: Node) -> str | None:
        """The class a value is chosen for, when it is set in a string switch's case (``case "critical":``
        gives ``critical``; the default of a switch whose cases are all strings, or of one on conditions (``switch {
        case load > 8:``), gives ``other``), or in a branch of an if/else chain on the class (``_class_chain``),
        else None."""
        chain = self._class_chain(lit)
        if chain is not None:
            return chain[0]
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

    def _class_chain(self, lit: Node) -> tuple[str, Node, list[Node]] | None:
        """(the class, the condition it is chosen by, every branch of the chain) when ``lit``'s nearest branch is
        one of an if/else chain whose every condition compares with class names (``if c == "critical" {...} else
        if c == "sheddable" || c == "batch" {...} else {...}``): an ``if`` branch is its condition's first name,
        the last ``else`` is ``other``, and so is a ``return`` right after a chain whose every branch returns (the
        helper form: ``if c == "critical" { return 0.9 }; return 0.5``). None in a switch's case or elsewhere."""
        n = lit
        while n.parent is not None and n.type != "block":
            if n.parent.type in ("expression_case", "default_case", "func_literal") or n.type == "if_statement":
                return None
            n = n.parent
        parent = n.parent
        if parent is None:
            return None
        if parent.type == "if_statement" and n in (
            parent.child_by_field_name(f) for f in ("consequence", "alternative")
        ):
            head = parent
            while (
                head.parent is not None
                and head.parent.type == "if_statement"
                and head.parent.child_by_field_name("alternative") == head
            ):
                head = head.parent
            links = self._chain_links(head)
            if links is None:
                return None
            if n == parent.child_by_field_name("consequence"):
                words = [w for w in links[parent] if w]
                return (words[0], parent.child_by_field_name("condition"), _branches(links)) if words else None
            return "other", head.child_by_field_name("condition"), _branches(links)
        stmt = lit
        while stmt.parent is not None and stmt.type != "return_statement" and stmt.parent != n:
            stmt = stmt.parent
        before = stmt.prev_named_sibling
        while before is not None and before.type == "comment":
            before = before.prev_named_sibling
        if stmt.type != "return_statement" or before is None or before.type != "if_statement":
            return None
        links = self._chain_links(before)
        if links is None or not all(_returns(b) for b in _branches(links)):
            return None
        return "other", before.child_by_field_name("condition"), [*_branches(links), stmt]

    def _chain_links(self, head: Node) -> dict[Node, list[str]] | None:
        """``chain_links`` read with the walker's text."""
        return chain_links(head, self.t)

    def check_slo_fallback(self, head: Node) -> None:
        """The fallback of an if/else chain on the class that names every class the adapter produces (its last
        ``else``, or what follows a chain whose every branch returns) runs only for classes llm-d never yields,
        as a switch's ``default`` does (``check_slo_default``)."""
        fallback = class_fallback(head, self.t)
        if fallback is None or "SLOClass" not in self.ex(fallback[2]).taint:
            return
        first, _last, subject, names = fallback
        left = [c for c in UNREACHABLE_CLASSES if c not in names]
        form = "else" if first.type == "block" else "after"
        self.hazard("slo-fallback-unreachable", first, subject=self.t(subject), left=left, form=form)

    def returned_per_class(self, ret: Node) -> None:
        """``return 0.9`` in a branch on the class (a string switch's case or default, an if/else chain on
        class names, the return after such a chain): one class's entry of a table written as code, a parameter
        named for the class and for what the function returns (``weightFor`` gives ``criticalWeight``: no "Value"
        after a word that says the role, ``param_names.says_role``; ``urgencyFor`` gives ``criticalUrgencyValue``).
        Each number of ``return 0.2, 0.6`` is one class's entry of a column, named by its result
        (``_result_names``: ``kvW`` gives ``criticalKVWeight``); a position nothing names keeps its literal,
        which ``literals.unlisted_literals`` lists."""
        values = named(ret)
        exprs = named(values[0]) if len(values) == 1 and values[0].type == "expression_list" else values
        lits = [self._numeric_literal(e) for e in exprs]
        first = next((lit for lit in lits if lit is not None), None)
        if first is None or not self._string_cases(first):
            return
        label = self._case_label(first)
        chain = self._class_chain(first)
        subject = chain[1] if chain is not None else _switch_of(first).child_by_field_name("value")
        func = ret.parent
        while func is not None and func.type not in ("func_literal", "function_declaration", "method_declaration"):
            func = func.parent
        if label is None or subject is None or func is None:
            return
        sv = self.ex(subject)
        if not sv.signals():
            return
        result = func.child_by_field_name("result")
        if len(exprs) == 1:
            typ = self.t(result).strip() if result is not None else None
            names: list[tuple[str, str | None, frozenset] | None] = [(_returned_name(self, func), None, frozenset())]
            types: list[str | None] = [typ]
        else:
            names, types = self._result_names(func, len(exprs)), _result_types(self, result, len(exprs))
        for lit, name, typ in zip(lits, names, types, strict=True):
            if lit is None or name is None:
                continue
            self.literal(
                lit, "value", subject, Val(None, sv.taint | name[2], typ), ret, named_as=name[0], suffix=name[1]
            )
            if (th := self.an.literal_nodes.get(lit.start_byte)) is not None and name[2]:
                th.chosen_by = tuple(sorted(sv.signals() - name[2]))

    def _result_names(self, func: Node, count: int) -> list[tuple[str, str | None, frozenset] | None]:
        """(stem, role word, the signals it acts on) for each of the ``count`` results of ``func``: its result's name (``(kvW, queueW
        float64)``), else the variable the first call assigning all of them gives it (``kvW, queueW :=
        weights(c)``), None for a position neither names (``_``, or a call whose results go on whole: ``return
        weights(c)``). The name is read as a short local's is (``short_locals``): ``w`` by its use
        (``w * load``: ``loadWeight``); a last one-letter word (``kvW``) says its role only by initial, so the
        use's role word replaces it (``kvWeight``). What that use combines it with is what it acts on
        (``cacheW * snap.CacheHitRate``: CacheHitRate, which may be a signal llm-d cannot provide, ``inert``)."""
        result = func.child_by_field_name("result")
        declared = [
            self.t(c)
            for d in (named(result) if result is not None and result.type == "parameter_list" else [])
            for c in d.children
            if c.type == "identifier"
        ]
        call, caller = self._assigning_call(func, count)
        taken = [self.t(x).strip() for x in named(call.parent.parent.child_by_field_name("left"))] if call else []
        out: list[tuple[str, str | None, frozenset] | None] = []
        for i in range(count):
            name = declared[i] if len(declared) == count else taken[i] if taken else "_"
            var = taken[i] if taken else name
            if name == "_" or not re.fullmatch(r"[A-Za-z]\w*", name):
                out.append(None)
                continue
            acts = use_of(caller, var, self.t) if caller is not None and var != "_" else None
            use = used_for(caller, var, self.t, lambda n: plain_name(n, self.t)) if caller is not None else None
            met = self._signals_in(caller, acts[0]) if acts is not None else frozenset()
            if short(name) and use is not None:
                out.append((*use, met))
            elif re.search(r"[a-z0-9][A-Z]$", name) and acts is not None:
                out.append((name[:-1], acts[1], met))  # kvW * (1 - kv) -> kvWeight
            else:
                out.append((name, None, met))
        return out

    def _signals_in(self, caller: Node, expr: Node) -> frozenset:
        """The signals of ``expr`` as the walk knows them in the function ``caller`` (its env persists across
        functions and passes), read without recording: it is only looked at from here."""
        info = next((f for f in self.funcs.values() if f.node == caller), None)
        if info is None:
            return frozenset()
        saved = self.recording, self.fn, self.fn_label
        self.recording, self.fn, self.fn_label = False, info, info.label
        try:
            return frozenset(self.ex(expr).signals())
        finally:
            self.recording, self.fn, self.fn_label = saved

    def _assigning_call(self, func: Node, count: int) -> tuple[Node | None, Node | None]:
        """The first call of ``func`` whose ``count`` results one statement assigns (``a, b := f(c)``), and the
        function it is in; a function literal is called by the variable it is assigned to, in its function."""
        callee = func.child_by_field_name("name")
        scope = self.src.tree.root_node
        if func.type == "func_literal":
            holder = func.parent.parent if func.parent is not None else None
            left = holder.child_by_field_name("left") if holder is not None else None
            callee = named(left)[0] if left is not None and len(named(left)) == 1 else None
            scope = func.parent
            while scope is not None and scope.type not in ("function_declaration", "method_declaration"):
                scope = scope.parent
        if callee is None or scope is None:
            return None, None
        name = self.t(callee)
        for n in walk(scope):
            fn = n.child_by_field_name("function") if n.type == "call_expression" else None
            if fn is None or not (
                self.t(fn) == name or (fn.type == "selector_expression" and _field(self, fn) == name)
            ):
                continue
            values, stmt = n.parent, n.parent.parent if n.parent is not None else None
            left = stmt.child_by_field_name("left") if stmt is not None else None
            if values is None or values.type != "expression_list" or len(named(values)) != 1 or left is None:
                continue
            if stmt.child_by_field_name("right") == values and len(named(left)) == count:
                caller = stmt
                while caller is not None and caller.type not in ("function_declaration", "method_declaration"):
                    caller = caller.parent
                return n, caller
        return None, None

    def _string_cases(self, lit: Node) -> bool:
        """``lit`` is chosen per class: in an if/else chain on class names, or in a switch whose cases are all
        strings (a switch on conditions picks by load or the like, not by class)."""
        if self._class_chain(lit) is not None:
            return True
        switch = _switch_of(lit)
        if switch is None or switch.child_by_field_name("value") is None:
            return False
        cases = [c for c in named(switch) if c.type == "expression_case"]
        return bool(cases) and all(
            (v := c.child_by_field_name("value")) is not None
            and all(i.type == "interpreted_string_literal" for i in named(v))
            for c in cases
        )

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


def class_comparisons(cond: Node | None, t) -> list[tuple[Node, str]]:
    """(what is compared, the name) of each ``x == "name"`` comparison of ``cond`` when it is only such
    comparisons joined by ``||``, else none. ``t`` reads a node's text."""
    while cond is not None and cond.type == "parenthesized_expression":
        cond = named(cond)[0]
    if cond is None or cond.type != "binary_expression":
        return []
    op = t(cond.child_by_field_name("operator"))
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if op == "||":
        a, b = class_comparisons(left, t), class_comparisons(right, t)
        return a + b if a and b else []
    lit = next((x for x in (left, right) if x is not None and x.type == "interpreted_string_literal"), None)
    if op != "==" or lit is None:
        return []
    word = t(lit)[1:-1]
    return [(right if lit == left else left, word if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", word) else "")]


def chain_links(head: Node, t) -> dict[Node, list[str]] | None:
    """Each ``if`` of the chain from ``head`` on, with the class names its condition compares with; None when
    a condition compares anything else."""
    links: dict[Node, list[str]] = {}
    node: Node | None = head
    while node is not None and node.type == "if_statement":
        words = [w for _, w in class_comparisons(node.child_by_field_name("condition"), t)]
        if not words:
            return None
        links[node] = words
        node = node.child_by_field_name("alternative")
    return links


def class_fallback(head: Node, t) -> tuple[Node, Node, Node, set[str]] | None:
    """(its first statement or block, its last, the expression compared, the names compared with) of the
    fallback of the if/else chain starting at ``head`` when the chain compares one expression with class names
    and names every class the adapter produces: its last ``else``, or the statements after it when every branch
    returns (``if c == "critical" { return 0.9 } ...; return 0.5``). Only such a class's request skips every
    branch, and llm-d sends none: the fallback never runs there. None for any other chain, and for an ``else
    if`` (a chain is read from its head)."""
    parent = head.parent
    if head.type != "if_statement" or (
        parent is not None and parent.type == "if_statement" and parent.child_by_field_name("alternative") == head
    ):
        return None
    links = chain_links(head, t)
    if links is None:
        return None
    compared = [c for i in links for c in class_comparisons(i.child_by_field_name("condition"), t)]
    names = {w for _, w in compared}
    if len({t(subject) for subject, _ in compared}) != 1 or not set(REACHABLE_CLASSES) <= names:
        return None
    last = list(links)[-1].child_by_field_name("alternative")
    if last is not None:
        return last, last, compared[0][0], names
    after = [s for s in _siblings_after(head) if s.type != "comment"]
    if not after or not all(_returns(b) for b in _branches(links)):
        return None
    return after[0], after[-1], compared[0][0], names


def _siblings_after(node: Node) -> list[Node]:
    """The statements after ``node`` in its block."""
    out = []
    n = node.next_named_sibling
    while n is not None:
        out.append(n)
        n = n.next_named_sibling
    return out


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


def _branches(links: dict[Node, list[str]]) -> list[Node]:
    """The blocks of an if/else chain: each ``if``'s consequence and the last ``else``."""
    out = [b for i in links if (b := i.child_by_field_name("consequence")) is not None]
    last = list(links)[-1].child_by_field_name("alternative")
    return out + ([last] if last is not None else [])


def _returns(block: Node) -> bool:
    """``block`` ends in a ``return``: what follows its ``if`` runs only when the condition is false."""
    stmts = [s for s in named(block) if s.type != "comment"]
    last = stmts[-1] if stmts else None
    if last is not None and last.type == "statement_list":
        inner = [s for s in named(last) if s.type != "comment"]
        last = inner[-1] if inner else None
    return last is not None and last.type == "return_statement"


def _switch_of(lit: Node) -> Node | None:
    """The switch whose case (or default) ``lit`` is in, when that is its nearest branch."""
    n = lit.parent
    while n is not None and n.type not in ("expression_case", "default_case", "func_literal", "if_statement"):
        n = n.parent
    return n.parent if n is not None and n.type in ("expression_case", "default_case") else None


def _field(walker, selector: Node) -> str:
    return walker.t(selector.child_by_field_name("field"))


def _result_types(walker, result: Node | None, count: int) -> list[str | None]:
    """The Go type of each of ``count`` results (``(kvW, queueW float64)`` or ``(float64, float64)``)."""
    out: list[str | None] = []
    for d in named(result) if result is not None and result.type == "parameter_list" else []:
        typ = d.child_by_field_name("type")
        out += [walker.t(typ).strip() if typ is not None else None] * max(
            1, sum(c.type == "identifier" for c in d.children)
        )
    return out if len(out) == count else [None] * count


def _returned_name(walker, func: Node) -> str:
    """What a function returns, by its name: ``weightFor``/``getWeight``/``weightOf`` give ``weight``; a
    function literal is named by the variable it is assigned to (``weight := func(c string) float64 {...}``)."""
    name_node = func.child_by_field_name("name")
    if func.type == "func_literal":
        holder = func.parent.parent if func.parent is not None else None
        left = holder.child_by_field_name("left") if holder is not None else None
        name_node = named(left)[0] if left is not None and len(named(left)) == 1 else None
    name = walker.t(name_node).strip() if name_node is not None else "value"
    stem = re.sub(r"^(get|compute|pick)(?=[A-Z])", "", name)
    stem = re.sub(r"(?<=[a-z0-9])(For|Of|By|Per)(Class|SLO|Tier)?$", "", stem)
    return (stem[:1].lower() + stem[1:]) or "value"
