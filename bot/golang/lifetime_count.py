"""A decision on a count that only grows: ``hazard.lifetime-count``.

A BLIS run is short and has a fixed handful of clients (a workload's tenants, its sessions), all of them active
from the first second to the last, so evolved code can count them the simplest way: the entries of a map keyed
by the client's value (``tenants := len(t.tenantTokens)``), or a receiver counter bumped on every request
(``a.totalSeen++``). In BLIS either is "the clients (requests) of this run". The plugin keeps one receiver for
the life of the EPP, so the same count is every client (request) since the EPP started: a tenant silent for
hours still counts, and a fair share divided by that count shrinks for as long as the EPP runs, until an active
tenant is refused as "over its fair share" of a crowd that left long ago. Nothing in a BLIS run, or in the
differential harness (whose sequences last seconds to minutes), shows it.

Two shapes, each IMPORTANT, at the first evolved line where the count reaches a decision (a comparison, directly
or through the locals it is assigned to, divided into or multiplied by):

- ``len()`` of a receiver map written with a client-controlled key that no carried code deletes from, clears or
  reassigns (the maps ``hazards`` flags as ``hazard.unbounded-client-keyed-state``, ``an.client_keyed_maps``;
  the plugin's memory cap acts on such a map only past thousands of entries, which bounds memory, not the count);
- a numeric receiver field the carried code only ever increments (``++`` or ``+=``), never resets (``=``),
  decays (``*=``) or lowers (``-=``, ``--``).

Evolved admitters split their state into small methods of the receiver, so both are followed across the carried
methods (the host and the helpers it calls): a count grown in ``a.note(req)`` or ``a.remember(req.TenantID)``,
reset in ``a.roll(clock)`` or deleted from in ``a.forget(clock)`` counts as if the host did it, and a method that
returns the count (``func (a *A) active() int { return len(a.tenants) }``, through a local or another such
method) makes its call a read of it (``_Count``). One level further, a plain function of the file the carried
methods hand the receiver or one of its maps to (``activeTenants(a)``, ``record(a.counts, t)`` doing ``m[k]++``) is
followed the same way, once per map it is handed (``receiver_views``); its own calls of plain functions are not.

What caps a count is a comparison that guards its WRITE (``_Count.caps``): every write inside ``if <count> < cap``
(or an ``else`` of ``if <count> >= cap``), or after ``if <count> >= cap { return … }``, in the writing method or at
each call of it. A comparison whose branch only rejects or changes the decision, while the write still happens on
every request (``a.tenants[t]++`` then ``if len(a.tenants) > 4 { return false, … }``), caps nothing: the map grows
for life, and ``bounded`` says so to ``hazards`` (``hazard.unbounded-client-keyed-state``, and the plugin caps it).
A map capped only by a return from the host before its write (``if len(a.tenants) > 4 { return false, … }`` then
the write) stops growing, so ``bounded`` holds and the plugin adds no cap; but the return is the decision, and it
rests on the first clients since the EPP started, kept for its life: once they came, it refuses (or admits) every
request until the EPP restarts. So for this check only a cap that is bookkeeping clears the count: a guard around
the write, or an early return from the method that records the client. A cap is its own map's: ``if len(a.sample)
< 64 { record(a.sample, t) }`` bounds the sample, and ``record(a.counts, t)`` beside it still grows ``counts``.

A generated test must not assert what such a count decides on a long-silent client (``sequences.choose``:
``STALE_US``, ``stale_row``): the row would pin the defect as the intended behaviour.
"""

from __future__ import annotations

import re

from bot.golang import client_draw, receiver_views
from bot.golang.analysis_types import COMPARE, Analysis, Node
from bot.golang.gotree import text_of, walk
from bot.golang.receiver_views import View
from bot.golang.source import EvolvedSource
from bot.model import Finding, Severity

CHECK = "hazard.lifetime-count"
#: A client last seen longer ago than this is one a windowed count would no longer count: longer than the windows
#: and decays evolved admitters use (a01's 10 s window, a03's 5 s time constant), far shorter than an EPP's life.
STALE_US = 60_000_000
_NUMERIC = re.compile(r"^(u?int(8|16|32|64)?|float(32|64))$")
_ASSIGN = ("assignment_statement", "short_var_declaration", "var_spec")


def check(src: EvolvedSource, an: Analysis, d, nodes: list) -> None:
    """Append one finding per map or counter whose lifetime count a decision reads (after ``hazards.check``,
    which names the client-keyed maps no carried code evicts)."""
    funcs = receiver_views.views(src, an)
    keys: dict[str, set[str]] = {}
    for kind, _, info in [*nodes, *receiver_views.passed_writes(src, an, nodes)]:
        if kind == "keyed-write":
            keys.setdefault(info["field"], set()).update(info["signals"])
    capped = {f for f, s in keys.items() if _client_map(an, d, f, s) and not forgets(src, funcs, f)}
    for field in sorted(set(an.client_keyed_maps) | capped):
        count = _Count(src, an, funcs, field, lambda n, t: _is_len_of(src, n, t))
        if count.caps(lambda n, t: _writes_map(src, n, t), deciding=an.host_info):
            continue
        read = count.first_decision()
        if read is not None:
            who = _client_keys(d, keys.get(field, set()))
            an.findings.append(_map_finding(src, read, field, who, count, field not in an.client_keyed_maps))
    for field, ftype in sorted(an.receiver_fields.items()):
        grows = _only_grows(src, funcs, field) if _NUMERIC.match(ftype.strip()) else None
        if not grows:
            continue
        count = _Count(src, an, funcs, field, lambda n, t: _is_read_of(src, n, t), is_map=False)
        if count.caps(lambda n, t: _increments(src, n, t), deciding=an.host_info):
            continue
        read = count.first_decision()
        if read is not None:
            an.findings.append(_counter_finding(src, read, field, grows, count))


def bounded(src: EvolvedSource, an: Analysis, field: str) -> bool:
    """The receiver map ``field`` cannot grow for the EPP's life: carried code forgets its entries (``forgets``), or
    a comparison of its length guards every write (``_Count.caps``, an early return from the host included)."""
    funcs = receiver_views.views(src, an)
    count = _Count(src, an, funcs, field, lambda n, t: _is_len_of(src, n, t))
    return forgets(src, funcs, field) or count.caps(lambda n, t: _writes_map(src, n, t))


def forgets(src: EvolvedSource, funcs: list[View], field: str) -> bool:
    """Carried code drops entries of the receiver map: ``delete``/``clear`` on it (past a length or not), or a
    reassignment (a reset; not the lazy ``make`` that creates it once). A plain function handed the map as ``m``
    drops entries with ``delete(m, k)``; ``m = …`` there only rebinds its own parameter."""
    for view in funcs:
        target = view.target(field)
        if target is None:
            continue
        for node in walk(view.fn.node):
            if node.type == "call_expression":
                callee = text_of(src, node.child_by_field_name("function"))
                args = node.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                if callee in ("delete", "clear") and first is not None and text_of(src, first) == target:
                    return True
            elif node.type == "assignment_statement":
                left = node.child_by_field_name("left")
                if left is not None and target in (text_of(src, c) for c in left.named_children) and "." in target:
                    if not _lazy_init(src, node, target, funcs):
                        return True
    return False


def _lazy_init(src: EvolvedSource, node: Node, target: str, funcs: list[View] | None = None) -> bool:
    """``if r.m == nil { r.m = make(…) }`` creates the map once; it is not a reset. Nor is a map made beside
    another under that one's check (``if r.seen == nil { r.seen = make(…); r.counts = make(…) }``) when the other
    is itself only ever created so: that block runs once, on the first request."""
    while node is not None and node.type != "if_statement":
        node = node.parent
    cond = node.child_by_field_name("condition") if node is not None else None
    text = text_of(src, cond).replace(" ", "") if cond is not None else ""
    if text in (f"{target}==nil", f"nil=={target}"):
        return True
    other = text.removesuffix("==nil") if text.endswith("==nil") else text.removeprefix("nil==")
    receiver = target.rsplit(".", 1)[0]
    if funcs is None or other == text or other.rsplit(".", 1)[0] != receiver or not re.fullmatch(r"[\w.]+", other):
        return False
    body = node.child_by_field_name("consequence")
    made = any(
        n.type == "assignment_statement"
        and other in (text_of(src, c) for c in n.child_by_field_name("left").named_children)
        for n in walk(body)
    )
    return made and _made_once(src, funcs, other.rsplit(".", 1)[1])


def _made_once(src: EvolvedSource, funcs: list[View], field: str) -> bool:
    """Every assignment of the receiver field is its own lazy creation (``if r.f == nil { r.f = … }``)."""
    for view in funcs:
        target = view.target(field, is_map=False)
        for node in walk(view.fn.node) if target is not None else []:
            left = node.child_by_field_name("left") if node.type == "assignment_statement" else None
            if left is not None and target in (text_of(src, c) for c in left.named_children):
                if not _lazy_init(src, node, target):
                    return False
    return True


def _client_map(an: Analysis, d, field: str, signals: set[str]) -> bool:
    """``field`` is a receiver map written with a key the client controls (as ``hazards`` reads it)."""
    if not an.receiver_fields.get(field, "").strip().startswith("map["):
        return False
    return any(e is not None and client_draw.client_keyed(e) for e in (d.signal(n, "request") for n in signals))


def found(an: Analysis) -> bool:
    """The analysis flagged a lifetime count (the generated tests then keep clear of long-silent clients)."""
    return any(f.check == CHECK for f in an.findings)


def stale_window(an: Analysis) -> int:
    """µs after which an earlier request is one a windowed count would have forgotten: STALE_US, or longer when
    the evolved code itself closes a window on the clock after longer (its own memory, not the count's)."""
    clock = [th.value for th in an.thresholds if th.role == "threshold" and {"Clock", "ArrivalTime"} & set(th.signals)]
    return int(max([STALE_US, *(v for v in clock if v > 0)]))


def _is_len_of(src: EvolvedSource, node: Node, target: str) -> bool:
    if node.type != "call_expression" or text_of(src, node.child_by_field_name("function")) != "len":
        return False
    args = node.child_by_field_name("arguments")
    return args is not None and [text_of(src, a) for a in args.named_children] == [target]


def _is_read_of(src: EvolvedSource, node: Node, target: str) -> bool:
    """``node`` reads ``target`` (a receiver field), not as the left side of its own write."""
    if node.type != "selector_expression" or text_of(src, node) != target:
        return False
    parent = node.parent
    if parent is not None and parent.type == "inc_statement":
        return False
    if parent is not None and parent.type == "expression_list" and parent.parent is not None:
        stmt = parent.parent
        return not (stmt.type == "assignment_statement" and stmt.child_by_field_name("left") == parent)
    return True


class _Count:
    """Where one count (``is_read(node, target)``: ``len(r.m)`` or ``r.n``) is read across the receiver's views
    (``receiver_views``: its carried methods, and the plain functions they pass it or its map to): directly, or
    through a function that returns it (``func (a *A) active() int { return len(a.tenants) }``,
    ``activeTenants(a)``, or a local assigned from it, or another such call: a fixed point)."""

    def __init__(self, src: EvolvedSource, an: Analysis, funcs: list[View], field: str, is_read, is_map=True) -> None:
        self.src, self.an, self.is_read = src, an, is_read
        #: each view that can name the field, with the text it names it by (``a.tenants``, ``m``)
        self.targets = {v.key: t for v in funcs if (t := v.target(field, is_map)) is not None}
        self.funcs = [v for v in funcs if v.key in self.targets]
        self.returned_by: dict[tuple, View] = {}  # view key -> the view, when it returns the count
        changed = True
        while changed:
            changed = False
            for fn in self.funcs:
                reads = self.reads(fn)
                if fn.key not in self.returned_by and reads and self._carried(fn, reads, _returns):
                    self.returned_by[fn.key] = fn
                    changed = True

    def target(self, fn: View) -> str:
        return self.targets[fn.key]

    def reads(self, fn: View) -> list[Node]:
        """The count's reads in ``fn``: the field itself, or a call of a function returning it."""
        return [n for n in walk(fn.fn.node) if self.is_read(n, self.target(fn)) or self.via(fn, n) is not None]

    def via(self, fn: View, node: Node) -> View | None:
        """The view ``node`` calls from ``fn`` when it returns the count."""
        return self.returned_by.get(receiver_views.callee(self.src, self.an, fn, node))

    def first_decision(self) -> Node | None:
        """The first read whose value reaches a comparison, directly or through locals assigned from it."""
        for fn in self.funcs:
            for read in self.reads(fn):
                if self._carried(fn, [read], _compares):
                    return read
        return None

    def caps(self, writes, deciding=None) -> bool:
        """A cap keeps the count from growing for life: every write (``writes(node, target)``) sits where the
        count is below the cap (``_guarded``), in its own function or at every call of it that binds the same
        storage (one level). A cap guards the writes of its own map only: a guard on another map's length leaves
        this one's writes unguarded. An early return from ``deciding`` (the host) is no cap when given: there it is
        the decision itself."""
        calls: dict[tuple, list] = {}
        for fn in self.funcs:
            for node in walk(fn.fn.node):
                key = receiver_views.callee(self.src, self.an, fn, node)
                if key is not None:
                    calls.setdefault(key, []).append((fn, node))
        writes_at = [(fn, n) for fn in self.funcs for n in walk(fn.fn.node) if writes(n, self.target(fn))]

        def guarded(fn: View, node: Node) -> bool:
            return self._guarded(fn, node, returns=fn.fn is not deciding)

        def bounded(fn: View, node: Node) -> bool:
            sites = calls.get(fn.key, [])  # none for the host: nothing carried calls it
            return guarded(fn, node) or (bool(sites) and all(guarded(f, n) for f, n in sites))

        return bool(writes_at) and all(bounded(fn, n) for fn, n in writes_at)

    def _guarded(self, fn: View, node: Node, returns: bool) -> bool:
        """``node`` runs only while the count is below a bound: inside ``if <below> { … }`` (or the ``else`` of
        ``if <past> { … }``), or, when ``returns``, after ``if <past> { …; return }`` in the same block."""
        for stmt in (c for c in walk(fn.fn.node) if c.type == "if_statement"):
            cond, body = stmt.child_by_field_name("condition"), stmt.child_by_field_name("consequence")
            other = stmt.child_by_field_name("alternative")
            if _within(node, body) and self._bound(fn, cond, below=True):
                return True
            if _within(node, other) and self._bound(fn, cond, below=False):
                return True
            stmts = body.named_children if body is not None else []
            if len(stmts) == 1 and stmts[0].type == "statement_list":
                stmts = stmts[0].named_children
            after = stmt.end_byte <= node.start_byte and _within(node, stmt.parent)
            if returns and after and stmts and stmts[-1].type == "return_statement":
                if self._bound(fn, cond, below=False):
                    return True
        return False

    def _bound(self, fn: View, cond: Node | None, below: bool) -> bool:
        """``cond`` holding implies the count is below a bound (``below``: ``n < cap``, ``cap > n``, a clause of an
        ``&&``), or failing implies it (``n >= cap``, ``n == cap``, a clause of an ``||``): a ``||`` guard lets a
        write through past the cap, and a return on ``… && <other>`` lets every other request through to it."""
        while cond is not None and cond.type == "parenthesized_expression":
            cond = cond.named_children[0] if cond.named_children else None
        if cond is not None and cond.type == "unary_expression":
            negated = text_of(self.src, cond.child_by_field_name("operator")) == "!"
            return negated and self._bound(fn, cond.child_by_field_name("operand"), not below)
        if cond is None or cond.type != "binary_expression":
            return False
        op = text_of(self.src, cond.child_by_field_name("operator"))
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op in ("&&", "||"):
            sides = (self._bound(fn, left, below), self._bound(fn, right, below))
            return any(sides) if (op == "&&") == below else all(sides)
        counted = [left is not None and self._reads(fn, left), right is not None and self._reads(fn, right)]
        if op not in COMPARE or counted.count(True) != 1:
            return False
        if counted[1]:  # cap > n is n < cap
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
        return op in (("<", "<=") if below else (">", ">=", "=="))

    def _reads(self, fn: View, expr: Node) -> bool:
        return any(self.is_read(n, self.target(fn)) or self.via(fn, n) is not None for n in walk(expr))

    def _carried(self, fn: View, reads: list[Node], sink) -> bool:
        """Some of ``reads`` reaches a ``sink`` node of ``fn`` (a comparison, a return), directly or through the
        locals assigned from it (a fixed point over the function's assignments, in any order: loops carry values)."""
        spans = {(r.start_byte, r.end_byte) for r in reads}
        tainted: set[str] = set()

        def carries(expr: Node) -> bool:
            return any(
                (n.start_byte, n.end_byte) in spans or (n.type == "identifier" and text_of(self.src, n) in tainted)
                for n in walk(expr)
            )

        changed = True
        while changed:
            changed = False
            for stmt in walk(fn.fn.node):
                if stmt.type not in _ASSIGN:
                    continue
                left, right = stmt.child_by_field_name("left"), stmt.child_by_field_name("right")
                if stmt.type == "var_spec":
                    left, right = stmt.child_by_field_name("name"), stmt.child_by_field_name("value")
                if left is None or right is None or not carries(right):
                    continue
                names = [left] if left.type == "identifier" else left.named_children  # locals, not `r.field`
                for name in (text_of(self.src, c) for c in names if c.type == "identifier"):
                    if name not in tainted:
                        tainted.add(name)
                        changed = True
        return any(sink(self.src, n) and carries(n) for n in walk(fn.fn.node))


def _within(node: Node, outer: Node | None) -> bool:
    return outer is not None and outer.start_byte <= node.start_byte < outer.end_byte


def _compares(src: EvolvedSource, node: Node) -> bool:
    op = node.child_by_field_name("operator") if node.type == "binary_expression" else None
    return op is not None and text_of(src, op) in COMPARE


def _returns(src: EvolvedSource, node: Node) -> bool:
    return node.type == "return_statement"


def _writes_map(src: EvolvedSource, node: Node, target: str) -> bool:
    """``node`` adds or sets an entry of ``target`` (``r.m[k] = v``, ``r.m[k]++``, ``r.m[k] += v``)."""
    if node.type != "index_expression" or text_of(src, node.child_by_field_name("operand")) != target:
        return False
    parent = node.parent
    if parent is not None and parent.type in ("inc_statement", "dec_statement"):
        return True
    stmt = parent.parent if parent is not None and parent.type == "expression_list" else None
    return stmt is not None and stmt.type == "assignment_statement" and stmt.child_by_field_name("left") == parent


def _increments(src: EvolvedSource, node: Node, target: str) -> bool:
    if node.type == "inc_statement":
        return text_of(src, node.named_children[0]) == target
    if node.type != "assignment_statement" or text_of(src, node.child_by_field_name("operator")) != "+=":
        return False
    left = node.child_by_field_name("left")
    return left is not None and target in (text_of(src, c) for c in left.named_children)


def _only_grows(src: EvolvedSource, funcs: list[View], field: str) -> list[int] | None:
    """The Go lines (of the carried text) that increment the field, when every write increments it; else None."""
    grows: list[int] = []
    for view in funcs:
        target = view.target(field, is_map=False)
        if target is None:
            continue
        for n in walk(view.fn.node):
            if n.type in ("inc_statement", "dec_statement") and text_of(src, n.named_children[0]) == target:
                if n.type == "dec_statement":
                    return None
                grows.append(n.start_point[0] + 1)
            elif n.type == "assignment_statement":
                left = n.child_by_field_name("left")
                if left is None or target not in (text_of(src, c) for c in left.named_children):
                    continue
                if text_of(src, n.child_by_field_name("operator")) != "+=":
                    return None
                grows.append(n.start_point[0] + 1)
    return grows or None


def _client_keys(d, signals: set[str]) -> str:
    entries = [e for e in (d.signal(n, "request") for n in sorted(signals)) if e is not None]
    named = [f"{e.name} (llm-d: {e.llmd.source})" for e in entries if client_draw.client_keyed(e)]
    return " or ".join(named) or "client value"


def _line_of(src: EvolvedSource, node: Node) -> tuple[int, str]:
    line = node.start_point[0] + 1
    text = src.go_text.splitlines()[line - 1].strip()
    return src.to_original_line(line), text[:100]


def _read_text(src: EvolvedSource, read: Node, count: _Count, of: str) -> str:
    """The read as written, and the count it returns when it calls a function returning it (``of``: its text with
    ``{}`` for how that function names the field)."""
    method = next((m for fn in count.funcs if (m := count.via(fn, read)) is not None), None)
    if method is None:
        return f"`{text_of(src, read)}`"
    return f"`{text_of(src, read)}` (`{of.format(count.target(method))}`, returned by `{method.fn.name}`)"


def _map_finding(src: EvolvedSource, read: Node, field: str, keys: str, count: _Count, capped: bool) -> Finding:
    """``capped``: a return from the host before the write stops the map growing (``bounded``), at the decision."""
    line, snippet = _line_of(src, read)
    what = _read_text(src, read, count, "len({})")
    held = (
        ", though a return before the write stops it growing. In BLIS that was one run's clients (a fixed handful, "
        "all active); in llm-d the plugin keeps one receiver for the EPP's life, so the map holds the first clients "
        "since the EPP started, for its whole life: one silent for hours still counts, and once they have come, "
        "what the comparison decides holds for every request until the EPP restarts."
        if capped
        else ". In BLIS that was one run's clients (a fixed handful, all active); in llm-d the plugin keeps one "
        "receiver for the EPP's life, so it counts every client since the EPP started: one silent for hours still "
        "counts, and a share divided by the count shrinks (a limit compared with it moves) for as long as the EPP "
        "runs (the plugin's memory cap acts only past thousands of entries, and bounds memory, not the count)."
    )
    return Finding(
        severity=Severity.IMPORTANT,
        check=CHECK,
        source_line=line,
        message=(
            f"`{snippet}` decides on {what}, the number of distinct {keys} the map `{field}` has "
            f"ever been written with: no carried code deletes an entry{held} The differential harness and the "
            "generated tests cannot show it: their sequences last minutes"
        ),
        fix=(
            f"count only the clients seen within a window (keep a last-seen time per key in `{field}` and count "
            "those within it, or delete a key once its decayed value falls to nothing), or decay or reset the "
            "count with the rest of the windowed state; then re-run the evolution (or the fidelity check)"
        ),
    )


def _counter_finding(src: EvolvedSource, read: Node, field: str, grows: list[int], count: _Count) -> Finding:
    line, snippet = _line_of(src, read)
    what = _read_text(src, read, count, "{}")
    at = ", ".join(str(src.to_original_line(g)) for g in sorted(set(grows)))
    return Finding(
        severity=Severity.IMPORTANT,
        check=CHECK,
        source_line=line,
        message=(
            f"`{snippet}` decides on {what}, a receiver counter the carried code only ever "
            f"increments (line{'s' if ',' in at else ''} {at}) and never resets or decays. In BLIS it counted one "
            "run's requests; in llm-d the plugin keeps one receiver for the EPP's life, so it counts every request "
            "of every client since the EPP started, and what it is compared with or divided into drifts for as "
            "long as the EPP runs. The differential harness and the generated tests cannot show it: their "
            "sequences last minutes"
        ),
        fix=(
            f"count only the requests seen within a window (reset `{field}` when the window closes, with the rest "
            "of the windowed state), or decay it as the other state decays; then re-run the evolution (or the "
            "fidelity check)"
        ),
    )
