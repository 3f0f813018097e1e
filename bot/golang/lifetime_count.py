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

A generated test must not assert what such a count decides on a long-silent client (``sequences.choose``:
``STALE_US``, ``stale_row``): the row would pin the defect as the intended behaviour.
"""

from __future__ import annotations

import re

from bot.golang import client_draw
from bot.golang.analysis_types import COMPARE, Analysis, Node
from bot.golang.gotree import text_of, walk
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
    funcs = [f for f in [an.host_info, *an.helpers] if f is not None and f.receiver_var]
    keys: dict[str, set[str]] = {}
    for kind, _, info in nodes:
        if kind == "keyed-write":
            keys.setdefault(info["field"], set()).update(info["signals"])
    for field in sorted(an.client_keyed_maps):
        read = _first_decision(src, funcs, lambda n, v, f=field: _is_len_of(src, n, f"{v}.{f}"))
        if read is not None:
            an.findings.append(_map_finding(src, read, field, _client_keys(d, keys.get(field, set()))))
    for field, ftype in sorted(an.receiver_fields.items()):
        grows = _only_grows(src, funcs, field) if _NUMERIC.match(ftype.strip()) else None
        if not grows:
            continue
        read = _first_decision(src, funcs, lambda n, v, f=field: _is_read_of(src, n, f"{v}.{f}"))
        if read is not None:
            an.findings.append(_counter_finding(src, read, field, grows))


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


def _first_decision(src: EvolvedSource, funcs, is_read) -> Node | None:
    """The first read (``is_read(node, receiver_var)``) whose value reaches a comparison, directly or through
    locals assigned from it (a fixed point over the function's assignments, in any order: loops carry values)."""
    for fn in funcs:
        for read in (n for n in walk(fn.node) if is_read(n, fn.receiver_var)):
            if _reaches_comparison(src, fn.node, read):
                return read
    return None


def _reaches_comparison(src: EvolvedSource, body: Node, read: Node) -> bool:
    tainted: set[str] = set()

    def carries(expr: Node) -> bool:
        return any(
            (n.start_byte, n.end_byte) == (read.start_byte, read.end_byte)
            or (n.type == "identifier" and text_of(src, n) in tainted)
            for n in walk(expr)
        )

    changed = True
    while changed:
        changed = False
        for stmt in walk(body):
            if stmt.type not in _ASSIGN:
                continue
            left, right = stmt.child_by_field_name("left"), stmt.child_by_field_name("right")
            if stmt.type == "var_spec":
                left, right = stmt.child_by_field_name("name"), stmt.child_by_field_name("value")
            if left is None or right is None or not carries(right):
                continue
            names = [left] if left.type == "identifier" else left.named_children  # locals, not `r.field`
            for name in (text_of(src, c) for c in names if c.type == "identifier"):
                if name not in tainted:
                    tainted.add(name)
                    changed = True
    for n in walk(body):
        op = n.child_by_field_name("operator") if n.type == "binary_expression" else None
        if op is not None and text_of(src, op) in COMPARE and carries(n):
            return True
    return False


def _only_grows(src: EvolvedSource, funcs, field: str) -> list[int] | None:
    """The Go lines (of the carried text) that increment the field, when every write increments it; else None."""
    grows: list[int] = []
    for fn in funcs:
        target = f"{fn.receiver_var}.{field}"
        for n in walk(fn.node):
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


def _map_finding(src: EvolvedSource, read: Node, field: str, keys: str) -> Finding:
    line, snippet = _line_of(src, read)
    return Finding(
        severity=Severity.IMPORTANT,
        check=CHECK,
        source_line=line,
        message=(
            f"`{snippet}` decides on `{text_of(src, read)}`, the number of distinct {keys} the map `{field}` has "
            "ever been written with: no carried code deletes an entry. In BLIS that was one run's clients (a fixed "
            "handful, all active); in llm-d the plugin keeps one receiver for the EPP's life, so it counts every "
            "client since the EPP started: one silent for hours still counts, and a share divided by the count "
            "shrinks (a limit compared with it moves) for as long as the EPP runs (the plugin's memory cap acts "
            "only past thousands of entries, and bounds memory, not the count). The differential harness and the generated tests cannot "
            "show it: their sequences last minutes"
        ),
        fix=(
            f"count only the clients seen within a window (keep a last-seen time per key in `{field}` and count "
            "those within it, or delete a key once its decayed value falls to nothing), or decay or reset the "
            "count with the rest of the windowed state; then re-run the evolution (or the fidelity check)"
        ),
    )


def _counter_finding(src: EvolvedSource, read: Node, field: str, grows: list[int]) -> Finding:
    line, snippet = _line_of(src, read)
    at = ", ".join(str(src.to_original_line(g)) for g in sorted(set(grows)))
    return Finding(
        severity=Severity.IMPORTANT,
        check=CHECK,
        source_line=line,
        message=(
            f"`{snippet}` decides on `{text_of(src, read)}`, a receiver counter the carried code only ever "
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
