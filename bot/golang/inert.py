"""What in the carried logic can never act in llm-d, so the plugin's docs do not present it as live.

A signal llm-d cannot provide stays at its zero value (the dictionary's fallback), so a number that acts only on
such signals changes no decision: it is no parameter but a constant of evolved.go, with the reason beside it
(``dead_branches.demote``). The evolved code keeps it (carried verbatim is a design choice; the differential check
against BLIS switches the signal back on).
A comparison ``signal > threshold`` on such a signal never holds (the threshold is >= 0, Validate() sees to it), so a
signal read only in a condition that also requires one (``req.SessionID != "" && snap.CacheHitRate > 0.35``) changes
no decision either: its fidelity is not rated as if it did.
"""

from __future__ import annotations

from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.gotree import text_of, walk


def inert_signals(th: Threshold, d) -> list[str]:
    """The signals of a parameter that acts only on signals llm-d cannot provide; empty when it acts. The class
    that picks a per-class entry (``th.chosen_by``) is not one it acts on: ``cacheW`` returned per class and
    multiplying CacheHitRate changes no decision, whichever class chose it."""
    acting = [s for s in th.signals if s not in th.chosen_by]
    entries = [d.signal(s) for s in acting]
    if th.param and entries and all(e is not None and e.llmd is None for e in entries):
        return acting
    return []


def no_source(signals) -> str:
    """Why a number on ``signals`` (none of which llm-d provides) changes no decision: the report's, evolved.go's
    and gate 1's words for it."""
    return f"acts only on {', '.join(signals)}, which llm-d cannot provide"


def _root(src, node):
    """The condition ``node`` belongs to, reached through ``&&`` and parentheses only (None through ``||``, ``!``
    or anything else that can turn a false part into a true whole)."""
    while node.parent is not None:
        parent = node.parent
        if parent.type == "parenthesized_expression":
            node = parent
            continue
        if parent.type == "binary_expression":
            if text_of(src, parent.child_by_field_name("operator")).strip() != "&&":
                return None
            node = parent
            continue
        return node if parent.type == "if_statement" and parent.child_by_field_name("condition") == node else None
    return None


def never_true(an: Analysis, d) -> dict[int, str]:
    """Conditions (by node id) that require ``signal > threshold`` on a signal llm-d cannot provide, with it."""
    out: dict[int, str] = {}
    if an.src is None:
        return out
    for th in an.thresholds:
        signals = list(th.inert) or inert_signals(th, d)  # demoted to a constant (dead_branches.demote), or not yet
        if not signals or th.value < 0:
            continue
        for occ in th.occurrences:
            node = an.cond_nodes.get(occ.cond_id) if occ.cond_id is not None else None
            root = _root(an.src, node) if node is not None and occ.role == "threshold" and occ.op == ">" else None
            if root is not None:
                out[root.id] = ", ".join(signals)
    return out


def dead_reads(an: Analysis, d, scope_fields: list[str]) -> dict[str, str]:
    """Fields among ``scope_fields`` every read of which is a part of a condition that never holds in llm-d, each
    with the signals that make it so: the value read changes no decision there."""
    roots = never_true(an, d)
    src = an.src
    if not roots or src is None:
        return {}
    out: dict[str, str] = {}
    fns = [f for f in [an.host_info, *an.helpers] if f is not None]
    for name in scope_fields:
        reads = [
            n
            for f in fns
            for n in walk(f.node)
            if n.type == "selector_expression" and text_of(src, n.child_by_field_name("field")) == name
        ]
        found = [_ancestor_root(src, n, roots) for n in reads]
        if reads and all(r is not None for r in found):
            out[name] = roots[found[0]]  # type: ignore[index]
    return out


def _ancestor_root(src, node, roots: dict[int, str]) -> int | None:
    """The id of the never-true condition ``node`` is read in, as an operand of one of its ``&&`` parts."""
    while node.parent is not None and node.parent.type not in ("if_statement", "block", "expression_statement"):
        node = node.parent
        if node.id in roots:
            return node.id
        if node.type == "binary_expression" and text_of(src, node.child_by_field_name("operator")).strip() == "||":
            return None
        if node.type == "unary_expression" and text_of(src, node.child_by_field_name("operator")).strip() == "!":
            return None
    return None
