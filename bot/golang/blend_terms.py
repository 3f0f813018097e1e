"""The weights of a sum of weighted terms are parameters together: ``0.6*scores[snap.ID] - 0.25*snap.KVUtilization
- 0.15*load/(load+8.0)``, a power-of-k router's blend, once made the two weights on signals parameters and left the
0.6 on the scorer composite a literal (it meets no signal the analysis follows), so one weight of one choice could
be tuned and its mate could not.

``weigh_terms`` lifts each literal weight of such a sum beside one the walk made a parameter, as ``pair_weights``
(param_names.py) does for the two weights of a blend that sums to one: named by the term it weighs
(``scoresCoeff``), with the signals of its mates, which the sum reads.
"""

from __future__ import annotations

from dataclasses import replace

from bot.golang.analysis_types import Analysis, Node
from bot.golang.gotree import named, parse_number, text_of
from bot.golang.short_locals import plain_name
from bot.golang.source import EvolvedSource

_SUM = ("+", "-")


def weigh_terms(src: EvolvedSource, an: Analysis) -> None:
    """Each literal weight of a sum whose other weights include a coefficient parameter is one too (module doc)."""
    text = lambda n: text_of(src, n)  # noqa: E731
    for th in list(an.thresholds):
        if th.role != "coefficient" or th.reason is not None or not th.occurrences:
            continue
        first = th.occurrences[0]
        lit = src.tree.root_node.descendant_for_byte_range(first.start, first.end)
        top = _sum_of(lit, text) if lit is not None else None
        if top is None:
            continue
        for weight, term in (w for t in _terms(top, text) if (w := _weight(t, text)) is not None):
            if weight.start_byte in an.literal_nodes or weight.start_byte == lit.start_byte:
                continue
            value = parse_number(text(weight))
            if value is None or value in (0.0, 1.0):
                continue
            line = an.line_of(weight)
            mate = replace(
                th,
                value=value,
                literal=text(weight).strip(),
                subject=text(term),
                base=plain_name(term, text) or th.base,
                line=line,
                occurrences=[replace(first, start=weight.start_byte, end=weight.end_byte, line=line, divisor=False)],
                blend=None,
                moving_average=None,
                const_decl=None,
                signals=sorted({s for t in an.thresholds if _in(t, top) for s in t.signals}),
            )
            an.thresholds.insert(an.thresholds.index(th), mate)
            an.literal_nodes[weight.start_byte] = mate


def _up(n: Node | None) -> Node | None:
    while n is not None and n.type == "parenthesized_expression":
        n = n.parent
    return n


def _down(n: Node) -> Node:
    while n.type == "parenthesized_expression" and named(n):
        n = named(n)[0]
    return n


def _op(n: Node | None, text) -> str | None:
    return text(n.child_by_field_name("operator")) if n is not None and n.type == "binary_expression" else None


def _sum_of(lit: Node, text) -> Node | None:
    """The outermost ``+``/``-`` chain whose term ``lit`` weighs (``lit * x``, ``lit * x / y``), else None."""
    n = _up(lit.parent)
    if _op(n, text) != "*":
        return None
    while _op(_up(n.parent), text) in ("*", "/"):
        n = _up(n.parent)
    top = None
    while _op(_up(n.parent), text) in _SUM:
        n = top = _up(n.parent)
    return top


def _terms(top: Node, text) -> list[Node]:
    """The terms of the ``+``/``-`` chain ``top``, in order."""
    if _op(top, text) not in _SUM:
        return [top]
    left, right = _down(top.child_by_field_name("left")), _down(top.child_by_field_name("right"))
    return _terms(left, text) + _terms(right, text)


def _weight(term: Node, text) -> tuple[Node, Node] | None:
    """(the literal, what it weighs) of a term ``lit * x`` or ``x * lit`` (then divided, ``lit * x / y``), else None."""
    while _op(term, text) == "/":
        term = _down(term.child_by_field_name("left"))
    if _op(term, text) != "*":
        return None
    a, b = _down(term.child_by_field_name("left")), _down(term.child_by_field_name("right"))
    if a.type in ("float_literal", "int_literal"):
        return a, b
    if b.type in ("float_literal", "int_literal"):
        return b, a
    return None


def _in(th, top: Node) -> bool:
    return th.reason is None and any(top.start_byte <= o.start < top.end_byte for o in th.occurrences)
