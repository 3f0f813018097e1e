"""Which receiver fields the carried evolved code keeps state in between requests.

The plugin serialises calls into the evolved receiver with a mutex only when the receiver holds state: llm-d
scores concurrently, and a lock held across an evolved call serialises every scheduling cycle of the EPP. A field
the evolved code only reads (a number set at construction, like ``GuardedSJF.MaxWaitUs``) is configuration, not
state, and needs no lock. Anything the analysis cannot prove read-only counts as state: a field assigned,
incremented or whose address is taken in a method with a pointer receiver, a field of any type other than a plain
number, string or bool (a map or slice can change through an index or a call), and every field when the receiver
itself is used as a value (passed on, copied, dereferenced).
"""

from __future__ import annotations

from bot.golang.analysis_types import Analysis, FuncInfo, Node
from bot.golang.gotree import text_of, walk
from bot.golang.source import EvolvedSource

#: Receiver fields that are the plugin's plumbing, not the evolved logic's state.
PLUMBING = {"scorers", "weights", "observers", "params", "rng"}

_SCALARS = {
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "string",
    "bool",
    "time.Duration",
}


def stateful_fields(src: EvolvedSource, an: Analysis) -> set[str]:
    """The receiver fields the carried host and helpers may change between requests (empty: stateless)."""
    fields = {f: (t or "").strip() for f, t in an.receiver_fields.items() if f not in PLUMBING}
    if not fields or an.host_info is None:
        return set()
    state: set[str] = set()
    for fn in [an.host_info, *an.helpers]:
        if fn.receiver_var is None:
            continue
        for node in walk(fn.node):
            if node.type != "identifier" or text_of(src, node) != fn.receiver_var:
                continue
            parent = node.parent
            if parent is None or parent.type == "parameter_declaration":
                continue  # the receiver's own declaration (or a parameter shadowing it)
            if parent.type != "selector_expression" or parent.child_by_field_name("operand") != node:
                return set(fields)  # the receiver itself escapes: any field may change through it
            name = text_of(src, parent.child_by_field_name("field"))
            if name not in fields:
                continue  # a method of the receiver: carried and walked itself
            if fields[name] not in _SCALARS or (_mutated(parent) and _persists(fn)):
                state.add(name)
    return state


def _persists(fn: FuncInfo) -> bool:
    """A write through a value receiver changes the method's copy only."""
    return fn.receiver_pointer


def _mutated(sel: Node) -> bool:
    """``sel`` (``r.Field``) is assigned, incremented or has its address taken."""
    parent = sel.parent
    if parent is None:
        return False
    if parent.type in ("inc_statement", "dec_statement"):
        return True
    if parent.type == "unary_expression" and parent.child_by_field_name("operator") is not None:
        return parent.child_by_field_name("operator").type == "&"
    if parent.type == "expression_list" and parent.parent is not None:
        stmt = parent.parent
        if stmt.type in ("assignment_statement", "range_clause") and stmt.child_by_field_name("left") == parent:
            return True
    return False
