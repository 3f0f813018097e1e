"""A number passed to a helper that compares a signal with it: ``ws.overloaded(snap, 0.85)`` where ``overloaded``
tests ``s.KVUtilization > limit``, or ``busy(snap.QueueDepth, 12)`` where ``busy`` tests ``q >= max``.

It is the threshold an operator most wants to tune, yet it once kept its literal with a finding, since the branch it
decides lies in another function than the number. The walk now makes it a threshold parameter as if it were written
in the helper's comparison (``flow_args.ArgMixin.lift_args``), read where the caller passes it (``ws.overloaded(snap,
ws.params.KVUtilizationLimit)``). This module says what is particular to it: its name, from the helper's parameter
and the signal compared (``kvUtilizationLimit``, ``maxQueueDepth``; ``name_of``), its doc, which names the helper and
the comparison's direction (``doc_part``), and the harness's watch at the helper's comparison (``watch``): a helper
called at two sites with two numbers compares one subject with each, so each parameter's watch records the subject
only in the calls that pass its number.
"""

from __future__ import annotations

import re

from bot.golang.analysis_types import Node, Occurrence, Threshold
from bot.golang.gonames import exported, lower_camel
from bot.golang.gotree import named, text_of, walk
from bot.golang.source import EvolvedSource

#: A parameter named by its role alone (``limit``, ``max``): the parameter says what it limits, by the signal compared.
_BARE = re.compile(r"(?i:limit|threshold|cap|ceiling|floor|max|min|bound|cutoff|knee)")
#: A parameter's name that says its role already (``kvLimit``, ``maxQueue``): the plugin's parameter keeps it.
_SAYS_ROLE = re.compile(r"(?i:limit|threshold|cap|ceiling|floor|max|min|bound|cutoff|knee)$|^(?:max|min)(?=[A-Z0-9])")

#: Where the compared value stands for the comparison to hold, by its operator with that value on its left.
_HOLDS = {
    ">": "is above it",
    ">=": "is at or above it",
    "<": "is below it",
    "<=": "is at or below it",
    "==": "equals it",
    "!=": "differs from it",
}


def name_of(pname: str, subject: Node, signals: list[str], text) -> tuple[str, str | None]:
    """(stem, role word) of the parameter for the number passed as the helper's ``pname``: a bare role word after the
    signal compared (``limit`` on ``s.KVUtilization``: kvUtilizationLimit; ``max`` before it: maxQueueDepth), a name
    that says its role kept (``kvLimit``), a letter or two the signal's threshold (``t``: kvUtilizationThreshold),
    and any other name its threshold (``busyAt``: busyAtThreshold)."""
    stem = _signal_stem(subject, signals, text)
    if _BARE.fullmatch(pname):
        return (pname.lower() + exported(stem), "") if pname.lower() in ("max", "min") else (stem, exported(pname))
    if _SAYS_ROLE.search(pname):
        return pname, ""
    return (stem, None) if len(pname) <= 2 else (pname, None)


def _signal_stem(subject: Node, signals: list[str], text) -> str:
    """The signal's field where the subject reads one (``s.KVUtilization``: kvUtilization), else its first signal."""
    for n in walk(subject):
        if n.type == "selector_expression" and (field := text(n.child_by_field_name("field"))) in signals:
            return lower_camel(field)
    return lower_camel(signals[0]) if signals else "evolved"


def note_passed(th: Threshold, occ: Occurrence, helper: str, pname: str, comparison: str) -> None:
    """Mark ``th`` and its occurrence at the call as passed to ``helper``'s ``pname``, compared in ``comparison``."""
    occ.param = pname
    th.passed = (helper, pname, " ".join(comparison.split()))
    th.subject_words = None  # the caller's words for a value the helper compares would not be the helper's


def doc_part(th: Threshold, subject: str) -> str:
    """What the parameter is, for its doc: the threshold the subject is compared with in the helper, the
    parameter it is passed as and when the comparison holds (``s.KVUtilization > limit`` holds when
    ``s.KVUtilization`` is above it)."""
    helper, pname, comparison = th.passed or ("", "", "")
    op = next((o.op for o in th.occurrences if o.param and o.op), None)
    compared = _compared_side(comparison, pname)
    holds = f" (`{comparison}` holds when `{compared}` {_HOLDS[op]})" if op in _HOLDS and compared else ""
    return f"the threshold `{subject}` is compared with in `{helper}`, passed to it as `{pname}`{holds}"


def _compared_side(comparison: str, pname: str) -> str:
    """The side of ``comparison`` that is not ``pname`` (``s.KVUtilization`` of ``s.KVUtilization > limit``)."""
    m = re.fullmatch(r"(.+?)\s*(>=|<=|==|!=|>|<)\s*(.+)", comparison)
    if m is None:
        return ""
    left, right = m.group(1).strip(), m.group(3).strip()
    return left if right == pname else right if left == pname else ""


def watch(src: EvolvedSource, watches: list[tuple[Node, Occurrence, str, str]]) -> list[tuple[int, str]]:
    """(byte, text) insertions that watch the side of one helper comparison that is not the parameter a number is
    passed as, once per (comparison, occurrence, watch id, the number's literal) in ``watches``, each recorded only in
    a call that passes its number (``promotionWatchIf("kvLimit@52", s.KVUtilization, limit == 0.92)``): the
    harness's probe then reads the values its own parameter is compared with, not those of another call's. Nested
    one inside the next when two numbers are passed there."""
    opens, closes, seen = [], [], set()
    for cond, occ, watch_id, literal in watches:
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if left is None or right is None or watch_id in seen:
            continue
        names = [text_of(src, _bare(side)) if _bare(side).type == "identifier" else None for side in (left, right)]
        if occ.param not in names:
            continue
        seen.add(watch_id)
        subject = right if names[0] == occ.param else left
        opens.append((subject.start_byte, f'promotionWatchIf("{watch_id}", '))
        closes.append((subject.end_byte, f", {occ.param} == {literal})"))
    if not opens:
        return []
    return [(opens[0][0], "".join(t for _, t in opens)), (closes[0][0], "".join(t for _, t in reversed(closes)))]


def _bare(node: Node) -> Node:
    while node.type == "parenthesized_expression" and named(node):
        node = named(node)[0]
    return node
