"""Gate 2's feedback, read as directives: which hypotheses to drop, which margins to change, what to guard.

A person who requests changes at gate 2 writes prose; lines that look like the
directives below are applied by rule (so the same feedback always gives the same
hypotheses), and everything else reaches the hypotheses it names as a note.

Reviewer feedback ("request changes" reason or review findings) is honoured by
these line directives (case-insensitive, anywhere in the text)::

    exclude: C3, B2        drop these hypotheses (alias: drop); other ids stay stable
    margin: 0.03           margin of every equivalence / no-worse prediction (also "3%"; at most 0.5)
    margin C2: 0.03        margin of one hypothesis
    guard: e2e_p99         add a no-regression hypothesis on this metric for every Track C scenario
                           (appended after the existing Track C ids so they do not move)

Everything else is kept verbatim for the documents' "Reviewer feedback"
section (``feedback_notes``): on the hypotheses it names by id, or on all of
them when it names none. Directives that cannot apply are listed there too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot import directives
from bot.hypotheses.errors import HypothesisError
from bot.hypotheses.metrics import translate_metric
from bot.model import Direction, Hypothesis
from bot.model.metrics import METRICS

_ID = re.compile(r"\b([ABC][0-9]+)\b")
#: The list of ids a directive starts with: "A4, A5", "C3; C4", "C3/C4", "B1 & B2", "B1 and B2" (any case).
_ID_LIST = re.compile(r"\s*[ABC][0-9]+\b(?:\s*(?:[,;/&]|and)?\s*[ABC][0-9]+\b)*", re.IGNORECASE)
_DIRECTIVE = directives.HYPOTHESIS_LINE  # one registry (bot.directives) the gate comments list too


@dataclass
class Feedback:
    """Reviewer feedback split into directives the generator applies and free text it records."""

    text: str = ""
    exclude: list[str] = field(default_factory=list)
    exclude_why: dict[str, str] = field(default_factory=dict)  # id -> the reason written after its list
    margin: float | None = None
    margins: dict[str, float] = field(default_factory=dict)
    guards: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # free text, in order
    unapplied: list[str] = field(default_factory=list)  # directives that could not apply, with why
    not_ids: list[str] = field(default_factory=list)  # what an ``exclude:`` named instead of an id ("Z9")
    bad_margins: list[str] = field(default_factory=list)  # the ``margin:`` lines among them: refused outright


#: The widest margin a person may set: within ±50% a no-regression test passes a plugin half again as slow.
MARGIN_MAX = 0.5
#: Above this, gate 2 says what the margin makes vacuous (an IMPORTANT finding): a regression of 25% or less is
#: a real one to any reader, and "0.6" typed for 0.6% lands here.
MARGIN_PLAUSIBLE = 0.25


def _parse_margin(v: str) -> float | None:
    x = _margin_number(v)
    return x if x is not None and 0 < x <= MARGIN_MAX else None


def _margin_number(v: str) -> float | None:
    """``0.03`` and ``3%`` both as 0.03; None when it is not a number."""
    v = v.strip()
    try:
        return float(v[:-1]) / 100 if v.endswith("%") else float(v)
    except ValueError:
        return None


def margin_problem(line: str, value: str) -> str:
    """Why a ``margin:`` value is refused, saying how it was read: ``0.6`` is 60%, not 0.6%."""
    x = _margin_number(value)
    why = f"margin must be a fraction above 0 and at most {MARGIN_MAX:g}, e.g. 0.03 or 3%"
    if x is not None and x > MARGIN_MAX:
        shown = value.strip()
        why += (
            f"; `{shown}` reads as {x:.0%}, and within it a plugin {x:.0%} worse than the default would pass every "
            "equivalence and no-regression test"
            + (f"; for {shown}% write `{shown}%`" if not shown.endswith("%") else "")
        )
    return f"{line.strip()} ({why})"


def _why(text: str) -> str:
    """The reason after an exclusion's ids: "(no LoRA here)" -> "no LoRA here"; "" when none was written."""
    text = text.strip().lstrip(",;:-–— ").strip()
    if text.startswith("(") and text.endswith(")") and text.count("(") == 1:
        text = text[1:-1].strip()
    return text


def parse_feedback(text: str | None) -> Feedback:
    fb = Feedback(text=(text or "").strip())
    for line in fb.text.splitlines():
        m = _DIRECTIVE.match(line)
        if not m:
            if line.strip():
                fb.notes.append(line.rstrip())
            continue
        verb, value = m.group(1).lower(), m.group(3)
        target = m.group(2).upper() if m.group(2) else None
        if verb in ("exclude", "drop"):
            # The ids are the list at the start; what follows ("(duplicates of A1/A2)") is the reason, whose ids
            # must not be dropped too.
            listed = _ID_LIST.match(value)
            ids = (_ID.findall(listed.group(0).upper()) if listed else []) + ([target] if target else [])
            if not ids:
                word = (value.split() or [""])[0].strip(",;:()")
                fb.not_ids.append(word)
                named = f"{word} is not a hypothesis id" if word else "it names no hypothesis id"
                fb.unapplied.append(f"{line.strip()} ({named}; ids are a track letter and a number, e.g. A1, B2, C3)")
            fb.exclude.extend(ids)
            why = _why(value[listed.end() :] if listed else value)
            fb.exclude_why.update(dict.fromkeys(ids, why))
        elif verb == "margin":
            x = _parse_margin(value)
            if x is None:
                fb.unapplied.append(margin_problem(line, value))
                fb.bad_margins.append(fb.unapplied[-1])
            elif target:
                fb.margins[target] = x
            else:
                fb.margin = x
        else:
            for name in re.split(r"[,\s]+", value):
                if not name:
                    continue
                try:
                    t = translate_metric(name)
                except HypothesisError:
                    t = None
                if t is None or t.short is None:
                    fb.unapplied.append(
                        f"guard: {name} (not an llm-d-benchmark metric; use one of {', '.join(METRICS)})"
                    )
                elif t.short not in fb.guards:
                    fb.guards.append(t.short)
    return fb


def feedback_notes(hypotheses: list[Hypothesis], feedback: str | None) -> dict[str, str]:
    """Hypothesis id -> the reviewer feedback its document must show (empty dict without feedback).

    Free-text lines that name ids go to those hypotheses; lines that name none
    go to every hypothesis. Directives are shown too, so the reader sees why
    the document changed.
    """
    fb = parse_feedback(feedback)
    if not fb.text:
        return {}
    ids = {h.id for h in hypotheses}
    unknown = sorted(set(fb.margins) - ids, key=_id_key)  # (excluded ids are gone from ``hypotheses`` by design)
    if unknown:  # a typo must not pass for an applied directive
        fb.unapplied.append(f"margin {', '.join(unknown)}: no such hypothesis")
    named = {i for line in fb.notes for i in _ID.findall(line) if i in ids}
    out: dict[str, str] = {}
    for h in hypotheses:
        lines = [ln for ln in fb.notes if not named or h.id in _ID.findall(ln) or not (set(_ID.findall(ln)) & ids)]
        applied = []
        tolerant = h.prediction is not None and h.prediction.direction in (Direction.EQUIVALENT, Direction.NO_WORSE)
        if tolerant and (fb.margin is not None or h.id in fb.margins):
            applied.append(f"margin set to {fb.margins.get(h.id, fb.margin):g} by the reviewer")
        if h.source.startswith("guard:"):
            applied.append("added by the reviewer's `guard:` directive")
        body = "\n".join(lines)
        if fb.exclude:
            applied.append(f"excluded by the reviewer: {', '.join(sorted(set(fb.exclude), key=_id_key))}")
        if fb.unapplied:
            applied.extend(f"not applied: {u}" for u in fb.unapplied)
        text = "\n".join(filter(None, [body, *(f"- {a}" for a in applied)]))
        if text:
            out[h.id] = text
    return out


def _id_key(hid: str) -> tuple[str, int]:
    return hid[0], int(hid[1:])
