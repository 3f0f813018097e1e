"""Whether a hypothesis's mechanism rests on evolved logic gate 1 found dead in the plugin.

Stage 2 records what cannot act in llm-d (``TranslationSummary.dead_logic``, from ``bot.golang.dead_branches``):
a branch for an SLO class llm-d never sends the plugin (``case "batch":``, its ``batchLimit``), and a number
that acts only on a signal llm-d cannot provide. A claim whose mechanism is that logic ("batch requests are shed
above batchLimit") cannot be tested by a benchmark of the plugin: no batch request arrives, a measured change
comes from other logic and no result counts against the claim. So it is "not testable as translated", as a claim
reading a signal the plugin holds constant is (``bot.hypotheses.signals``), with a reason naming the logic and its
evolved line, and never "confirmed".

Deterministic, from the words: a mechanism or statement names such logic by a number's name written as code
(``batchLimit``, or a plain word only in backticks or its access form: `limit`, ``a.limit``), or by its class
named as a class ("batch requests", "the batch class", ``"batch"``; "batch size" is no class). One that also
names logic that acts in llm-d (a class llm-d sends, "sheddable and batch requests"; a plugin parameter) rests on
that too: the dead part is named in passing and the benchmark still tests the rest, so it stays testable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.model import DeadLogic, Hypothesis, TranslationSummary

#: How a reason set aside for dead logic starts (``blis_feedback`` tells it from a held signal's by this).
LEAD = "the mechanism rests on logic gate 1 found dead in the plugin"
#: How such a reason ends.
DEAD_END = ", so it cannot act in llm-d as it did in BLIS"
#: How a mechanism's note on the values a person re-calibrated at gate 1 starts (``generate._deployed_mechanism``):
#: it names live parameters, not what the claim rests on, so it is not read.
AS_DEPLOYED = "As deployed, the plugin runs with"
#: The classes the plugin receives (it reads the class from the request's llm-d priority).
LIVE_CLASSES = ("critical", "standard", "sheddable")

_CLASS = r"(?:critical|standard|sheddable|batch|background)"
_JOIN = r"(?:\s*,\s*(?:and\s+|or\s+)?|\s*/\s*|\s+(?:and|or)\s+)"
_NOUN = r"[\s-]+(?:slo[\s-]+)?(?:class(?:es)?|requests?|traffic|tiers?|jobs?|ones|priority|priorities)\b"
#: "batch requests", "sheddable and batch requests", "the batch-class", "batch SLO class"
_RUN = re.compile(rf"(?<![\w-])({_CLASS}(?:{_JOIN}{_CLASS})*){_NOUN}", re.IGNORECASE)
#: "class batch", "SLO classes batch and background", "class \"batch\""
_CLASS_OF = re.compile(rf"\bclass(?:es)?\s+(?:of\s+)?[\"'`]?({_CLASS}(?:[\"'`]?{_JOIN}[\"'`]?{_CLASS})*)", re.I)
#: '"batch"', `batch`
_QUOTED = re.compile(rf"[\"'`]({_CLASS})[\"'`]", re.IGNORECASE)
_WORD = re.compile(_CLASS, re.IGNORECASE)


def classes_named(text: str) -> set[str]:
    """The SLO classes ``text`` names as classes (lowercase)."""
    runs = [m.group(1) for rx in (_RUN, _CLASS_OF, _QUOTED) for m in rx.finditer(text)]
    return {w.lower() for run in runs for w in _WORD.findall(run)}


def _written(name: str, text: str) -> bool:
    """Whether ``text`` names the identifier ``name`` as code: as it is when it cannot be a plain word
    (``batchLimit``, ``max_q``), else only inside backticks or in its access form (``a.limit``)."""
    bare = rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"
    if any(c.isupper() or c.isdigit() or c == "_" for c in name[1:]):
        return re.search(bare, text) is not None
    quoted = " ".join(re.findall(r"`([^`]*)`", text))
    return re.search(bare, quoted) is not None or re.search(rf"\.{re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def named_dead_logic(texts: Iterable[str | None], summary: TranslationSummary) -> list[DeadLogic]:
    """The dead logic of the translation that ``texts`` name (by a number's name, or a class its branch serves)."""
    text = "\n".join(t for t in texts if t)
    classes = classes_named(text)
    return [
        d
        for d in summary.dead_logic
        if any(_written(n, text) for n in d.names) or any(c and c in classes for c in d.classes)
    ]


def names_live_logic(texts: Iterable[str | None], summary: TranslationSummary) -> bool:
    """Whether ``texts`` also name logic that acts in llm-d: a class the plugin receives, or a plugin parameter."""
    text = "\n".join(t for t in texts if t)
    return bool(classes_named(text) & set(LIVE_CLASSES)) or any(_written(p, text) for p in summary.thresholds)


def rests_on_dead_logic(texts: Iterable[str | None], summary: TranslationSummary) -> list[DeadLogic]:
    """The dead logic a mechanism rests on: what ``texts`` name of it, when they name no logic that acts."""
    texts = list(texts)
    found = named_dead_logic(texts, summary)
    return [] if not found or names_live_logic(texts, summary) else found


def hypothesis_texts(h: Hypothesis) -> list[str]:
    """What a hypothesis's document says its claim rests on: its mechanism (without the re-calibration note) and
    BLIS's statement. Stage 3 decides on these and gate 2 reads them back, so both see the same words."""
    return [t for t in ((h.mechanism or "").split(AS_DEPLOYED)[0], h.blis_statement or "") if t]


def where(d: DeadLogic, source: str = "") -> str:
    """'`case "batch"` (evolved line 167 of a01.go)': how a reason and gate 2 name the logic (``cited`` finds the
    logic a reason names by it)."""
    return f"`{d.code}` (evolved line {d.line}" + (f" of {source}" if source else "") + ")"


def dead_logic_reason(texts: Iterable[str | None], summary: TranslationSummary, source: str = "") -> str | None:
    """Why the plugin cannot exercise a mechanism resting on dead logic (None when it does not rest on any)."""
    texts = [t for t in texts if t]
    found = rests_on_dead_logic(texts, summary)
    if not found:
        return None
    text = "\n".join(texts)
    parts = []
    for d in found:
        names = [f"`{n}`" for n in d.names if _written(n, text)]
        acting = f"; {', '.join(names)} act{'s' if len(names) == 1 else ''} only there" if names else ""
        parts.append(f"{where(d, source)[:-1]}{acting}): {d.why}")
    return f"{LEAD}, " + "; and ".join(parts) + DEAD_END


def described(logic: list[DeadLogic], source: str = "") -> str:
    """The dead logic as gate 2 names it: '`case "batch"` (evolved line 167): the branch serves only ...'."""
    return "; and ".join(f"{where(d, source)}: {d.why}" for d in logic)


def cited(reason: str | None, summary: TranslationSummary) -> list[DeadLogic]:
    """The dead logic a not-testable reason cites (a reason naming logic the translation does not record as dead
    cites none)."""
    if not reason or LEAD not in reason:
        return []
    return [d for d in summary.dead_logic if re.search(re.escape(where(d)[:-1]) + r"[ );]", reason)]


def join_reasons(*reasons: str | None) -> str | None:
    """One not-testable reason from a held signal's and dead logic's (None when neither holds)."""
    return "; and ".join(r for r in reasons if r) or None
