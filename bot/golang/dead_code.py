"""Carried code that never runs in the plugin, or whose result nothing reads: named for the reviewer, not deleted.

The evolved code is carried verbatim into evolved.go so a reviewer can read it line by line beside the BLIS
original (the line map and the fidelity harness rely on that too), so the bot never deletes from it. Some of it is
dead once it runs in llm-d, and an llm-d maintainer found it carried silently in the bundled example: the
receiver's ``observers`` (BLIS's constructor sets them; the plugin never does, llm-d having no router-side observers),
so a loop over ``ws.observers`` never runs; the fallback for a nil ``rng`` (BLIS's constructor passes its seeded
generator, and the plugin hands the evolved code a seeded one on every call it reads it in, drawSeeds), so the
``else`` of ``if ws.rng != nil`` or the body of ``if ws.rng == nil`` is never taken; a ``fmt.Sprintf`` whose text nothing reads (``_ = fmt.Sprintf(...)``, a local read only by ``_ = x``, a
routing decision's Reason, which the plugin never reads: it maps Scores or the target to endpoint scores); a
``panic`` under ``len(snapshots) == 0`` in a router, which the plugin never calls without a routable endpoint.

Each is a ``translate.dead-code`` finding (SUGGESTION: it changes no decision) at its evolved line, anchored to
evolved.go's; ``caveat`` sums them up in one line of the plugin README's Caveats, so a maintainer reading the
package is not surprised by code that looks live. A draw from math/rand's global source inside the nil-rng fallback
(a trial's ``else { i = rand.Intn(n) }``) never runs either: ``without_dead_draws`` takes its ``safety.global-rand``
out of the hazards (the safety check reads the source before any analysis, so it cannot tell), and the fallback's
own finding names it. Pure: analysis in, findings out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from bot.golang.analysis_types import Analysis, FuncInfo, Node
from bot.golang.gotree import named, text_of, walk
from bot.golang.safety import CHECK_GLOBAL_RAND
from bot.model import Finding, PolicyKind, Severity

CHECK_DEAD_CODE = "translate.dead-code"

FIX = (
    "nothing to change for the promotion: the bot keeps it so evolved.go reads line for line like the BLIS original; "
    "delete it in the upstream PR if the maintainers prefer (it changes no decision)"
)

#: fmt's functions that only build a string.
_SPRINT = re.compile(r"^fmt\.Sprint(f|ln)?$")
#: BLIS's decision constructors (carried under their own or a lowerCamel name); the reason is their second argument.
_DECISION_CTORS = {
    "NewRoutingDecision",
    "NewRoutingDecisionWithScores",
    "newRoutingDecision",
    "newRoutingDecisionWithScores",
}


def findings(an: Analysis) -> list[Finding]:
    """Every instance of dead carried code, in evolved-line order."""
    if an.src is None or an.host_info is None:
        return []
    fns = [f for f in (an.host_info, *an.helpers) if f is not None]
    out = _unset_observers(an, fns) + _nil_rng_fallbacks(an, fns) + _discarded_text(an, fns) + _empty_guard(an)
    return sorted(out, key=lambda f: (f.source_line or 0, f.message))


def _finding(an: Analysis, node: Node, what: str, why: str) -> Finding:
    return Finding(
        severity=Severity.SUGGESTION,
        check=CHECK_DEAD_CODE,
        source_line=an.line_of(node),
        message=f"{what}: {why}",
        fix=FIX,
    )


def _field(an: Analysis, f: FuncInfo, node: Node | None, name: str) -> bool:
    """Whether ``node`` is ``<receiver>.<name>``."""
    if node is None or node.type != "selector_expression" or not f.receiver_var:
        return False
    operand = node.child_by_field_name("operand")
    return text_of(an.src, operand) == f.receiver_var and text_of(an.src, node.child_by_field_name("field")) == name


def _assigned(an: Analysis, fns: Iterable[FuncInfo], name: str) -> bool:
    """Whether any carried function (the constructor included) sets, appends to or takes the address of
    ``<receiver>.<name>``."""
    for f in fns:
        for n in walk(f.node):
            if not _field(an, f, n, name):
                continue
            parent = n.parent
            if parent is not None and parent.type == "unary_expression" and text_of(an.src, parent).startswith("&"):
                return True
            stmt = parent.parent if parent is not None and parent.type == "expression_list" else None
            if stmt is not None and stmt.type == "assignment_statement" and stmt.child_by_field_name("left") == parent:
                return True
    return False


def _unset_observers(an: Analysis, fns: list[FuncInfo]) -> list[Finding]:
    """Loops over ``observers``, when no carried code sets the field (the plugin never does)."""
    setters = [*fns, *([an.constructor] if an.constructor is not None else [])]
    if _assigned(an, setters, "observers"):
        return []
    out: list[Finding] = []
    for f in fns:
        for n in walk(f.node):
            if n.type != "for_statement":
                continue
            clause = next((c for c in n.named_children if c.type == "range_clause"), None)
            ranged = clause.child_by_field_name("right") if clause is not None else None
            if _field(an, f, ranged, "observers"):
                out.append(
                    _finding(
                        an,
                        n,
                        f"the loop over `{text_of(an.src, ranged)}` never runs",
                        f"`{text_of(an.src, ranged)}` is never set in the plugin (BLIS's constructor fills it with "
                        "the scorers' post-decision hooks; llm-d has no router-side observers), so it is always empty",
                    )
                )
    return out


#: Why a fallback for a nil rng never runs in the plugin.
_RNG_SET = (
    "the plugin hands the evolved code a seeded rng on every call (as BLIS's constructor passes its seeded "
    "generator), so `{field}` is never nil"
)


def _nil_rng_fallbacks(an: Analysis, fns: list[FuncInfo]) -> list[Finding]:
    """The ``else`` of ``if ws.rng != nil`` and the body of ``if ws.rng == nil`` (alone or with ``&&``): the
    plugin sets the rng on every call that reads it, so the code for a nil one (math/rand's global source, the
    lowest index) never runs. A branch needing ``ws.rng != nil`` is live."""
    return [_finding(an, anchor, what, _RNG_SET.format(field=field)) for anchor, _, what, field in _nil_rng(an, fns)]


def _nil_rng(an: Analysis, fns: list[FuncInfo]) -> Iterator[tuple[Node, Node, str, str]]:
    """Each branch for a nil rng: the node its finding names, the block that never runs, what it is, the field.
    The one detection: the findings and ``without_dead_draws`` both read it."""
    for f in fns:
        for n in walk(f.node):
            if n.type != "if_statement":
                continue
            cond = n.child_by_field_name("condition")
            alternative = n.child_by_field_name("alternative")
            field = _rng_compared(an, f, cond, "!=")
            if field is not None and alternative is not None:
                yield alternative, alternative, f"the fallback when `{field}` is nil is never taken", field
            field = _requires_rng(an, f, cond, "==")
            consequence = n.child_by_field_name("consequence")
            if field is not None and consequence is not None:
                yield n, consequence, f"the branch on `{text_of(an.src, cond)}` is never taken", field


def without_dead_draws(found: Sequence[Finding], an: Analysis) -> list[Finding]:
    """``found`` less the draws from math/rand's global source (``safety.global-rand``) that sit on a line wholly
    inside a branch for a nil rng: the plugin never runs them, so they cannot make its choices irreproducible, and
    the branch's own dead-code finding already names them for the reviewer (one finding, not one per line). A
    line that also holds live code (the branch's first and last, ``} else {`` and ``}``) keeps its finding: the
    safety check reports lines, not columns, and errs towards the hazard."""
    if an.src is None or an.host_info is None:
        return list(found)
    fns = [f for f in (an.host_info, *an.helpers) if f is not None]
    dead = {
        an.src.to_original_line(row + 1)
        for _, block, _, _ in _nil_rng(an, fns)
        for row in range(block.start_point[0] + 1, block.end_point[0])
    }
    return [f for f in found if not (f.check == CHECK_GLOBAL_RAND and f.source_line in dead)]


def _rng_compared(an: Analysis, f: FuncInfo, cond: Node | None, op: str) -> str | None:
    """``<receiver>.rng`` when ``cond`` is exactly ``<receiver>.rng <op> nil`` (either way round, parenthesized)."""
    while cond is not None and cond.type == "parenthesized_expression" and cond.named_child_count == 1:
        cond = cond.named_children[0]
    if cond is None or cond.type != "binary_expression":
        return None
    if text_of(an.src, cond.child_by_field_name("operator")).strip() != op:
        return None
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    for a, b in ((left, right), (right, left)):
        if _field(an, f, a, "rng") and text_of(an.src, b).strip() == "nil":
            return text_of(an.src, a)
    return None


def _requires_rng(an: Analysis, f: FuncInfo, cond: Node | None, op: str) -> str | None:
    """``<receiver>.rng`` when ``cond`` requires ``<receiver>.rng <op> nil`` (alone or with ``&&``)."""
    while cond is not None and cond.type == "parenthesized_expression" and cond.named_child_count == 1:
        cond = cond.named_children[0]
    if cond is not None and cond.type == "binary_expression":
        if text_of(an.src, cond.child_by_field_name("operator")).strip() == "&&":
            left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
            return _requires_rng(an, f, left, op) or _requires_rng(an, f, right, op)
    return _rng_compared(an, f, cond, op)


def _sprint(an: Analysis, node: Node | None) -> Node | None:
    """The ``fmt.Sprintf(...)`` call in ``node`` (itself, or inside it)."""
    if node is None:
        return None
    for n in walk(node):
        if n.type == "call_expression" and _SPRINT.match(text_of(an.src, n.child_by_field_name("function")).strip()):
            return n
    return None


def _call_name(an: Analysis, call: Node) -> str:
    return text_of(an.src, call.child_by_field_name("function")).strip() + "(...)"


def _discarded_text(an: Analysis, fns: list[FuncInfo]) -> list[Finding]:
    """``fmt.Sprintf`` results nothing reads: assigned to ``_``, to a local read only by ``_ = x``, or (in a
    router) passed as the decision's Reason."""
    out: list[Finding] = []
    routing = an.kind == PolicyKind.ROUTING
    for f in fns:
        for n in walk(f.node):
            if n.type == "assignment_statement":
                left, right = named(n.child_by_field_name("left")), named(n.child_by_field_name("right"))
                for target, value in zip(left, right, strict=False):
                    call = _sprint(an, value) if text_of(an.src, target).strip() == "_" else None
                    if call is not None and value.type == "call_expression":
                        out.append(
                            _finding(
                                an,
                                n,
                                f"the text `{_call_name(an, call)}` builds is discarded",
                                "it is assigned to `_`, so it is computed on every call and never read",
                            )
                        )
            elif n.type in ("short_var_declaration", "var_spec"):
                out += _unread_locals(an, f, n)
            elif routing and n.type == "call_expression":
                fn = text_of(an.src, n.child_by_field_name("function")).strip()
                args = named(n.child_by_field_name("arguments"))
                call = _sprint(an, args[1]) if fn in _DECISION_CTORS and len(args) >= 2 else None
                if call is not None:
                    out.append(_reason(an, call))
            elif routing and n.type == "keyed_element":
                parts = n.named_children
                key = text_of(an.src, parts[0]).strip() if parts else ""
                call = _sprint(an, parts[-1]) if key == "Reason" and len(parts) == 2 else None
                if call is not None:
                    out.append(_reason(an, call))
    return out


def _reason(an: Analysis, call: Node) -> Finding:
    """Anchored at the formatting call: the text that is dropped."""
    return _finding(
        an,
        call,
        f"the decision's Reason (`{_call_name(an, call)}`) is never read",
        "the plugin maps the decision's Scores (or its target) to endpoint scores and reads nothing else of it, so "
        "the text is formatted on every request and dropped",
    )


def _unread_locals(an: Analysis, f: FuncInfo, decl: Node) -> list[Finding]:
    """A local declared with a ``fmt.Sprintf`` value whose every later use is a plain assignment to it or
    ``_ = x`` (Go refuses a local never used at all, so ``_ = x`` is how such code compiles)."""
    short = decl.type == "short_var_declaration"
    right = decl.child_by_field_name("right" if short else "value")
    if right is None:
        return []
    names = named(decl.child_by_field_name("left")) if short else list(decl.children_by_field_name("name"))
    out = []
    for target, value in zip(names, named(right), strict=False):
        call = _sprint(an, value)
        name = text_of(an.src, target).strip()
        if call is None or name == "_":
            continue
        uses = [
            n
            for n in walk(f.node)
            if n.type == "identifier" and text_of(an.src, n) == name and n.start_byte > target.end_byte
        ]
        if uses and all(_blank_read(an, u) or _overwritten(u) for u in uses):
            out.append(
                _finding(
                    an,
                    decl,
                    f"`{name}`, the text `{_call_name(an, call)}` builds, is never read",
                    f"the only read of `{name}` is `_ = {name}`, so it is computed on every call and dropped",
                )
            )
    return out


def _blank_read(an: Analysis, ident: Node) -> bool:
    """Whether ``ident`` is the value of ``_ = ident``."""
    rhs = ident.parent
    stmt = rhs.parent if rhs is not None and rhs.type == "expression_list" else None
    if stmt is None or stmt.type != "assignment_statement" or stmt.child_by_field_name("right") != rhs:
        return False
    return [text_of(an.src, t).strip() for t in named(stmt.child_by_field_name("left"))] == ["_"]


def _overwritten(ident: Node) -> bool:
    """Whether ``ident`` is the target of a plain ``=`` (a new value, the old one unread)."""
    lhs = ident.parent
    stmt = lhs.parent if lhs is not None and lhs.type == "expression_list" else None
    return (
        stmt is not None
        and stmt.type == "assignment_statement"
        and stmt.child_by_field_name("left") == lhs
        and stmt.child_by_field_name("operator") is not None
        and stmt.child_by_field_name("operator").type == "="
    )


_EMPTY = re.compile(r"^len\((?P<s>[\w.]+)\)\s*(==\s*0|<\s*1|<=\s*0)$|^0\s*==\s*len\((?P<r>[\w.]+)\)$")


def _empty_guard(an: Analysis) -> list[Finding]:
    """A router's ``if len(snapshots) == 0 {...}`` on the state's Snapshots: the plugin returns before calling
    the evolved code when no endpoint is routable, so the branch (BLIS's panic) is never reached."""
    host = an.host_info
    if an.kind != PolicyKind.ROUTING or host is None:
        return []
    states = [n for n, t in host.params if "RouterState" in t]
    aliases = _snapshot_aliases(an, host, states)
    out = []
    for n in walk(host.node):
        cond = n.child_by_field_name("condition") if n.type == "if_statement" else None
        m = _EMPTY.match(" ".join(text_of(an.src, cond).split())) if cond is not None else None
        subject = (m.group("s") or m.group("r")) if m else None
        if subject is None or not (subject in aliases or any(subject == f"{s}.Snapshots" for s in states)):
            continue
        body = n.child_by_field_name("consequence")
        raised = next((c for c in walk(body) if _is_panic(an, c)), None) if body is not None else None
        what = "the panic under" if raised is not None else "the branch on"
        out.append(
            _finding(
                an,
                n,
                f"{what} `{text_of(an.src, cond)}` is never reached",
                f"the plugin calls {host.label} only when at least one endpoint is routable (Score returns first when "
                "none is), so the state it passes always holds a snapshot",
            )
        )
    return out


def _is_panic(an: Analysis, node: Node) -> bool:
    return node.type == "call_expression" and text_of(an.src, node.child_by_field_name("function")).strip() == "panic"


def _snapshot_aliases(an: Analysis, host: FuncInfo, states: Sequence[str]) -> set[str]:
    """Locals declared as ``:= state.Snapshots`` and never assigned again."""
    declared: set[str] = set()
    reassigned: set[str] = set()
    for n in walk(host.node):
        if n.type == "short_var_declaration":
            left, right = named(n.child_by_field_name("left")), named(n.child_by_field_name("right"))
            for t, v in zip(left, right, strict=False):
                if text_of(an.src, v).strip() in {f"{s}.Snapshots" for s in states}:
                    declared.add(text_of(an.src, t).strip())
        elif n.type == "assignment_statement":
            reassigned |= {text_of(an.src, t).strip() for t in named(n.child_by_field_name("left"))}
    return declared - reassigned


def caveat(found: Sequence[Finding]) -> str | None:
    """One README caveat for the dead-code findings anchored in the package: where each is in evolved.go and what
    it is, and why it stays; None when there are none."""
    dead = sorted(
        (f for f in found if f.check == CHECK_DEAD_CODE and f.file and f.line), key=lambda f: (f.line, f.message)
    )
    if not dead:
        return None
    items = "; ".join(f"{f.file.rsplit('/', 1)[-1]} line {f.line}: {f.message.split(': ', 1)[0]}" for f in dead)
    return (
        "Dead code carried from the evolved program, kept verbatim so it reads line for line like the BLIS original "
        f"(it changes no decision; delete it here if you prefer): {items}"
    )
