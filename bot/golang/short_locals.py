"""Names for numbers on locals of one or two letters (``n``, ``w``): the letter says nothing of the number's role,
so the name comes from what the local holds (``n := len(r.InputTokens)``, then ``n > 2048`` is an input-tokens
threshold) or, for a local the evolved code sets to numbers, from where it is used (``w`` in ``score -= w * load``
is the load's weight)."""

from __future__ import annotations

from collections.abc import Callable

from bot.golang.analysis_types import Node
from bot.golang.gotree import named, walk

Text = Callable[[Node], str]

_SETS = ("short_var_declaration", "var_spec", "assignment_statement")


def short(name: str) -> bool:
    """A local name too short to say what it holds."""
    return len(name) <= 2


def held_by(fn: Node, name: str, text: Text) -> Node | None:
    """What a local of one or two letters (``n := len(r.InputTokens)``) is set from, when it is set once in the
    function ``fn``: its name says nothing of what it holds, the expression does."""
    if not short(name):
        return None
    found: list[Node] = []
    for n in walk(fn):
        if n.type not in _SETS:
            continue
        left = n.child_by_field_name("left") or n.child_by_field_name("name")
        right = n.child_by_field_name("right") or n.child_by_field_name("value")
        lefts = named(left) if left is not None and left.type == "expression_list" else [left]
        rights = named(right) if right is not None and right.type == "expression_list" else [right]
        for i, target in enumerate(lefts):
            if target is not None and text(target).strip() == name:
                found.append(rights[i] if len(rights) == len(lefts) and rights[i] is not None else n)
    held = found[0] if len(found) == 1 else None
    if held is None or held.type in _SETS:
        return None
    return None if any(c.type == "identifier" and text(c) == name for c in walk(held)) else held
