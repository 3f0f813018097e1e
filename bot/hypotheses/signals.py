"""Which signals a hypothesis's mechanism reads, and whether the translated plugin can exercise them.

A BLIS claim is about an *outcome* (lower mean TTFT on multiturn) *because of a
mechanism* (a session bonus gated on ``CacheHitRate``). When the translation
cannot supply a signal the mechanism reads (Map B ``llmd: null``: the adapter
sets it to its zero value, see ``bot.golang.adapter``), the mechanism never acts
in llm-d, so a benchmark of the plugin cannot test the claim: a measured change
comes from other terms, and no result counts against the mechanism. Such a
hypothesis is "not testable as translated" (``Hypothesis.not_testable``), never
"inconclusive, add repetitions" and never "confirmed".

The link is explicit and kept on the hypothesis (``Hypothesis.signals``, shown in
its document at gate 2): the signals of the translation (``summary.signals``)
that the claim's mechanism or statement names, by canonical name or older alias
(``PendingRequests`` -> ``InFlightRequests``). An all-capitals name that is also
a metric word (``TTFT``, ``ITL``, ``ID``) counts only in its access form
(``snap.TTFT``): "lowers TTFT" is about the outcome, not about reading the signal.
The reason names the signal and the evolved lines that read it, so the researcher
sees the branch that goes dead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from bot.hypotheses.errors import HypothesisError
from bot.model import TranslationSummary

_COMMENT = re.compile(r"^\s*(?://|#|/\*|\*)")
_MAX_CODE = 100
#: A field in its access form in prose (``ws.sessionHome``, not ``0.25`` or a sentence's full stop).
_FIELD = re.compile(r"(?<![A-Za-z0-9_.])[A-Za-z_][A-Za-z0-9_]*\.([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_(])")


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


def _names(signal: str, dictionary: Any) -> list[str]:
    """The spellings that count as naming ``signal`` in prose: canonical name, aliases, access form."""
    entry = dictionary.signal(signal) if dictionary is not None else None
    bare = [signal, *(entry.aliases if entry is not None else [])]
    access = [entry.blis_access.removesuffix("()")] if entry is not None and entry.blis_access else []
    return [n for n in bare if not n.isupper()] + access


def named_signals(
    texts: Iterable[str | None], summary: TranslationSummary, dictionary: Any, source_text: str = ""
) -> list[str]:
    """The translation's signals that ``texts`` name, in the order ``summary.signals`` lists them: by name, or
    through a state field they name in its access form (``_field_signals``)."""
    text = "\n".join(t for t in texts if t)
    via = _field_signals(text, source_text, summary, dictionary)
    return [s for s in summary.signals if s in via or any(_pattern(n).search(text) for n in _names(s, dictionary))]


def _field_signals(text: str, source_text: str, summary: TranslationSummary, dictionary: Any) -> set[str]:
    """The signals read on the evolved lines that use a field ``text`` names in its access form.

    A mechanism names the program's own state, not the signal that keys it: "a bonus on the session home
    (ws.sessionHome)" reads ``req.SessionID`` through ``ws.sessionHome[req.SessionID]``. Missing it made such
    a claim's signals read as only what it mentions in passing. A field that is itself a signal's name
    (``snap.QueueDepth``) or a call (``req.InputLen()``) is left to the name match: it would drag in every
    signal read beside it on the same line."""
    fields = {
        f
        for f in _FIELD.findall(text)
        if len(f) > 1 and (dictionary is None or dictionary.signal(f) is None) and f not in summary.signals
    }
    if not fields or not source_text:
        return set()
    uses = re.compile(r"\.(?:" + "|".join(map(re.escape, sorted(fields))) + r")(?![A-Za-z0-9_(])")
    return {
        s for s in summary.signals if any(uses.search(code) for _, code in evolved_reads(source_text, s, dictionary))
    }


def declared_signals(claim_id: str, declared: list[str] | None, reads: list[str], dictionary: Any) -> list[str] | None:
    """The signals a claim declares (``claims[].signals``), as canonical names in the order of ``reads`` (the
    signals the plugin reads: ``TranslationSummary.signals``);
    None when it declares none. A name the dictionary does not know, or a signal the evolved logic does not
    read, is refused: a wrong list would mark a claim testable or not for the wrong reason."""
    if declared is None:
        return None
    canonical = []
    for name in declared:
        entry = dictionary.signal(name) if dictionary is not None else None
        if entry is None or entry.name not in reads:
            what = "is not a signal the dictionary knows" if entry is None else "is not read by the evolved program"
            raise HypothesisError(
                f"claims[{claim_id}].signals: {name} {what}; the program reads "
                f"{', '.join(reads) or 'no signal'}. Fix the list, or leave `signals` out to have them "
                "read from the mechanism"
            )
        canonical.append(entry.name)
    return [s for s in reads if s in canonical]


def evolved_reads(source_text: str, signal: str, dictionary: Any) -> list[tuple[int, str]]:
    """(1-based line, code) of every code line in the EVOLVE-BLOCK (the whole file without markers) reading ``signal``."""
    entry = dictionary.signal(signal) if dictionary is not None else None
    names = [signal, *(entry.aliases if entry is not None else [])]
    lines = source_text.splitlines()
    start = next((i for i, ln in enumerate(lines) if "EVOLVE-BLOCK-START" in ln), -1)
    end = next((i for i, ln in enumerate(lines) if "EVOLVE-BLOCK-END" in ln), len(lines))
    out = []
    for i in range(start + 1, end):
        code = lines[i]
        if _COMMENT.match(code) or not any(_pattern(n).search(code) for n in names):
            continue
        code = " ".join(code.split()).replace("`", "'")
        out.append((i + 1, code if len(code) <= _MAX_CODE else code[: _MAX_CODE - 1] + "…"))
    return out


def _constant(dictionary: Any, signal: str) -> str:
    from bot.golang.adapter import zero_value

    entry = dictionary.signal(signal) if dictionary is not None else None
    return zero_value(entry.blis_type if entry is not None else "float64")


def not_testable_reason(
    signals: Iterable[str], summary: TranslationSummary, dictionary: Any, source_text: str, source: str = ""
) -> str | None:
    """Why the plugin cannot exercise a mechanism reading ``signals`` (None when it can)."""
    dead = [s for s in dict.fromkeys(signals) if s in summary.untranslatable]
    if not dead:
        return None
    parts = []
    for s in dead:
        reads = evolved_reads(source_text, s, dictionary)
        held = f"`{s}`, which llm-d cannot supply: the plugin holds it at {_constant(dictionary, s)}"
        if reads:
            n, code = reads[0]
            of = f" of {source}" if source else ""
            more = f" (and {len(reads) - 1} more line{'s' if len(reads) > 2 else ''})" if len(reads) > 1 else ""
            held += f", so evolved line {n}{of} `{code}`{more} cannot act as it did in BLIS"
        parts.append(held)
    return "the mechanism reads " + "; and ".join(parts)
