"""Which way a text says a quantity moves: "TTFT p99 falls", "lower tail latency", "fewer 429s".

The rewording check (``bot.hypotheses.wording.claim_kept``) must catch a hypothesis reworded to claim the
opposite of its prediction. The generator words a prediction in fixed phrases ("better (lower) p95 end-to-end
latency"), but a Map C gap's Track B text comes from the dictionary and words its metric freely, and so does
the author's rewording. So a text is read as claims: a direction word ("rises", "higher", "more" / "falls",
"lower", "fewer", "reduces", ...; "better" / "worse") next to a quantity word ("TTFT", "latency",
"throughput", "429s", ...) in the same clause, unless a negation comes just before it ("not higher" says
no direction). Words are matched, not understood: a claim is only what such a pair says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.model.metrics import METRICS

UP = "up"
DOWN = "down"
GOOD = "good"
BAD = "bad"
_OPPOSITE = {UP: DOWN, DOWN: UP, GOOD: BAD, BAD: GOOD}

_WORDS: dict[str, tuple[str, ...]] = {
    UP: [
        "rise",
        "rises",
        "rising",
        "rose",
        "risen",
        "grow",
        "grows",
        "growing",
        "grew",
        "grown",
        "higher",
        "more",
        "increase",
        "increases",
        "increased",
        "increasing",
        "up",
        "larger",
        "greater",
        "climb",
        "climbs",
        "climbing",
        "climbed",
        "raise",
        "raises",
        "raised",
        "inflate",
        "inflates",
        "inflated",
        "spike",
        "spikes",
    ],
    DOWN: [
        "fall",
        "falls",
        "falling",
        "fell",
        "fallen",
        "drop",
        "drops",
        "dropping",
        "dropped",
        "lower",
        "lowers",
        "lowered",
        "lowering",
        "fewer",
        "less",
        "reduce",
        "reduces",
        "reduced",
        "reducing",
        "reduction",
        "decrease",
        "decreases",
        "decreased",
        "decreasing",
        "down",
        "smaller",
        "shrink",
        "shrinks",
        "shrinking",
        "shrank",
        "shorter",
        "cut",
        "cuts",
        "decline",
        "declines",
        "declining",
        "declined",
    ],
    GOOD: ["better", "improve", "improves", "improved", "improving"],
    BAD: [
        "worse",
        "worsen",
        "worsens",
        "worsened",
        "degrade",
        "degrades",
        "degraded",
        "regress",
        "regresses",
        "regressed",
        "hurts",
    ],
}
_DIRECTION = {w: d for d, words in _WORDS.items() for w in words}
_NEGATION = {"not", "no", "never", "without", "nor", "cannot"}

#: Multi-word names of a quantity, read as one word (longest first).
_PHRASES = {
    "time to first token": "ttft",
    "time-to-first-token": "ttft",
    "first-token latency": "ttft",
    "first token latency": "ttft",
    "time per output token": "tpot",
    "inter-token latency": "itl",
    "inter token latency": "itl",
    "end-to-end latency": "e2e",
    "end to end latency": "e2e",
    "end-to-end": "e2e",
    "response time": "e2e",
    "tokens per second": "throughput",
    "tokens/s": "throughput",
    "token rate": "throughput",
    "requests per second": "request_rate",
    "request rate": "request_rate",
    "req/s": "request_rate",
    "rejected requests": "429s",
    "too many requests": "429s",
}
#: Single words that name a quantity -> the quantity.
_QUANTITY = {
    "ttft": "ttft",
    "tpot": "tpot",
    "itl": "itl",
    "e2e": "e2e",
    "latency": "latency",
    "latencies": "latency",
    "throughput": "throughput",
    "goodput": "request_rate",
    "429": "429s",
    "429s": "429s",
    "rejections": "429s",
    "errors": "errors",
    "timeouts": "timeouts",
}
#: Quantities that name one metric; "latency" alone is any latency, and gives way to a named one nearby.
_SPECIFIC = {"ttft", "tpot", "itl", "e2e", "throughput", "request_rate"}
#: The quantity words a metric's direction can be stated in.
_PATH_QUANTITY = {
    "latency.time_to_first_token": "ttft",
    "latency.time_per_output_token": "tpot",
    "latency.inter_token_latency": "itl",
    "latency.request_latency": "e2e",
    "throughput.output_token_rate": "throughput",
    "throughput.request_rate": "request_rate",
}
_WINDOW = 4
_CLAUSE = re.compile(r"[.;:!?\n,]|\b(?:but|while|whereas|because|although|though|yet)\b")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9/_'-]*")


@dataclass(frozen=True)
class Claim:
    quantity: str  # "ttft", "latency", "429s", ...
    direction: str  # UP, DOWN, GOOD, BAD
    words: str  # the words that say it, as found (lowercase)


def claims(text: str) -> list[Claim]:
    """Every (quantity, direction) the text states, in order."""
    text = text.lower().replace("`", "")
    for phrase in sorted(_PHRASES, key=len, reverse=True):
        text = text.replace(phrase, f" {_PHRASES[phrase]} ")
    out: list[Claim] = []
    for clause in _CLAUSE.split(text):
        tokens = _TOKEN.findall(clause or "")
        for i, tok in enumerate(tokens):
            direction = _DIRECTION.get(tok)
            if direction is None or _negated(tokens, i):
                continue
            j = _nearest(tokens, i, range(max(0, i - _WINDOW), min(len(tokens), i + _WINDOW + 1)))
            if j is None:
                continue
            quantity = _QUANTITY[tokens[j]]
            if quantity == "latency":  # "TTFT latency", "p99 e2e latency": the named one
                k = _nearest(tokens, j, range(max(0, j - 2), min(len(tokens), j + 3)), specific=True)
                quantity = _QUANTITY[tokens[k]] if k is not None else quantity
            lo, hi = min(i, j), max(i, j)
            out.append(Claim(quantity, direction, " ".join(tokens[lo : hi + 1])))
    return out


def _nearest(tokens: list[str], i: int, span: range, *, specific: bool = False) -> int | None:
    """The quantity word in ``span`` closest to ``tokens[i]`` (the one after it on a tie)."""
    found = [
        j for j in span if j != i and tokens[j] in _QUANTITY and (not specific or _QUANTITY[tokens[j]] in _SPECIFIC)
    ]
    return min(found, key=lambda j: (abs(j - i), j < i)) if found else None


def _negated(tokens: list[str], i: int) -> bool:
    return any(t in _NEGATION or t.endswith("n't") for t in tokens[max(0, i - 3) : i])


def against_prediction(text: str, metric: str, direction: str) -> list[str]:
    """The words in ``text`` that say ``metric`` moves against an increase/decrease prediction."""
    d = METRICS.get(metric)
    if d is None or direction not in ("increase", "decrease"):
        return []
    quantities = {_PATH_QUANTITY.get(d.path, metric)} | ({"latency"} if d.path.startswith("latency.") else set())
    if d.path == "throughput.request_rate":
        quantities.add("throughput")
    wrong = DOWN if direction == "increase" else UP
    good_is = DOWN if d.better == "lower" else UP
    wrong_verdict = GOOD if wrong == good_is else BAD
    return [c.words for c in claims(text) if c.quantity in quantities and c.direction in (wrong, wrong_verdict)]


def reversed_claims(was: str, now: str) -> list[tuple[str, str]]:
    """(new words, old words) for each claim the old text made that the new one turns round and no longer makes."""
    old, new = claims(was), claims(now)
    stated = {(c.quantity, c.direction) for c in new}
    out = []
    for c in old:
        flip = next((n for n in new if (n.quantity, n.direction) == (c.quantity, _OPPOSITE[c.direction])), None)
        if flip is not None and (c.quantity, c.direction) not in stated and (flip.words, c.words) not in out:
            out.append((flip.words, c.words))
    return out
