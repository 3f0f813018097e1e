"""What a queue-position scorer's generated TestQueueBehaviour states: its behaviour in llm-d terms, not its scores.

Found by an llm-d maintainer: the test pinned each endpoint's exact score per priority "as the compiled plugin gave
it", a snapshot nobody can check against the design. It now states relations a person can check: a busier endpoint
never scores higher, an idle endpoint scores highest and the busiest lowest, a higher priority never sees an
endpoint as worse than a lower one does, a shorter prompt (or a longer one) never sees one as worse, and past
maxPseudoQueue 1000 waiting scores like 256. Each candidate is checked on the scores the compiled plugin gave at
generation time (``probes.queue_behaviour``'s rows) and stated only where it held, so the generated test passes on
the plugin as generated and fails when its behaviour changes.

Two statements are what llm-d expects of any queue-position scorer: a busier endpoint never scores higher, and a
higher priority never sees an endpoint as worse. Where one does not hold, the rows it is about are pinned beside
the statements, in a test named for that (TestQueueScoresAsGenerated), and a busier endpoint scoring higher is a
finding:

- ``translate.busier-scores-higher`` (SUGGESTION): for some request the compiled plugin scored a busier endpoint
  higher than a less busy one; anchored at the plugin's Score method.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from bot.model import Finding, Severity

CHECK_BUSIER_HIGHER = "translate.busier-scores-higher"

#: Statement kinds. One request: its scores never rise with the waiting count (BUSIER); the idle endpoint scores
#: highest and the busiest lowest, below it (SPREAD); every endpoint scores alike (ALIKE). Two requests a, b: a never
#: sees an endpoint as worse than b does (NEVER_WORSE), and also sees one as better (BETTER). The cap row: the
#: longest queue scores like the one at maxPseudoQueue (CAP).
BUSIER, SPREAD, ALIKE, NEVER_WORSE, BETTER, CAP = "busier", "spread", "alike", "never-worse", "better", "cap"

#: A behaviour row's identity: (is the cap row, priority, prompt tokens or None when the order reads none).
Key = tuple[bool, int, int | None]


@dataclass(frozen=True)
class Statement:
    """One thing the generated test states: its kind and the rows it is about (one, or the pair compared)."""

    kind: str
    about: tuple[Key, ...]


@dataclass(frozen=True)
class Pinned:
    """A row pinned because an expected statement did not hold on it: why, and the scores as generated."""

    key: Key
    why: str
    scores: tuple[float, ...]


@dataclass(frozen=True)
class Decided:
    """The statements that held on the generation-time rows, and the rows pinned where an expected one did not."""

    statements: tuple[Statement, ...]
    pinned: tuple[Pinned, ...]


def key(row: dict) -> Key:
    return (bool(row["cap"]), int(row["priority"]), row["tokens"])


def label(k: Key, read: frozenset[str]) -> str:
    """The request in llm-d terms, naming only the inputs the plugin reads (a priority it ignores would suggest it
    ranks by one): "priority 1", "a 64-token prompt", both, or "any request"."""
    _, priority, tokens = k
    said = [
        *([f"priority {priority}"] if "Objectives" in read else []),
        *([f"a {tokens}-token prompt"] if tokens is not None and "RequestSizeBytes" in read else []),
    ]
    return ", ".join(said) or "any request"


def holds(kind: str, scores: list[tuple[float, ...]]) -> bool:
    """Whether the statement of ``kind`` holds on these scores (one row's, or the pair's, by waiting count)."""
    a = scores[0]
    if kind == BUSIER:
        return all(busier <= idler for idler, busier in pairwise(a))
    if kind == SPREAD:
        return a[0] == max(a) and a[-1] == min(a) and a[-1] < a[0]
    if kind == ALIKE:
        return len(set(a)) == 1
    if kind == CAP:
        return a[-1] == a[-2]
    never_worse = all(x >= y for x, y in zip(a, scores[1], strict=True))
    return never_worse and (kind == NEVER_WORSE or any(x > y for x, y in zip(a, scores[1], strict=True)))


def _pairs(keys: list[Key]) -> tuple[list[tuple[Key, Key]], list[tuple[Key, Key]]]:
    """(priority pairs: the higher priority first, at one prompt length; prompt pairs: shorter first, at one
    priority), each between neighbours."""
    by_priority = sorted({k[1] for k in keys}, reverse=True)
    by_tokens = sorted({k[2] for k in keys if k[2] is not None})
    present = set(keys)
    priority = [
        ((False, hi, t), (False, lo, t)) for t in dict.fromkeys(k[2] for k in keys) for hi, lo in pairwise(by_priority)
    ]
    prompt = [((False, p, short), (False, p, long)) for p in by_priority for short, long in pairwise(by_tokens)]
    return [q for q in priority if set(q) <= present], [q for q in prompt if set(q) <= present]


def _pair_kind(a: tuple[float, ...], b: tuple[float, ...]) -> str | None:
    """BETTER or NEVER_WORSE, the stronger that holds for a over b, or None."""
    return next((kind for kind in (BETTER, NEVER_WORSE) if holds(kind, [a, b])), None)


def decide(rows: list[dict]) -> Decided:
    """The statements that hold on ``rows`` (``probes.queue_behaviour``), in reading order: per request, then the
    priority and prompt pairs, then the cap; and the rows pinned where an expected statement does not hold."""
    scores = {key(r): tuple(r["scores"]) for r in rows}
    queues = [k for k in scores if not k[0]]
    statements: list[Statement] = []
    pinned: dict[Key, str] = {}
    for k in queues:
        statements += [Statement(kind, (k,)) for kind in (BUSIER, SPREAD, ALIKE) if holds(kind, [scores[k]])]
        if not holds(BUSIER, [scores[k]]):
            pinned.setdefault(k, "a busier endpoint scores higher here")
    priority, prompt = _pairs(queues)
    for a, b in priority:
        if kind := _pair_kind(scores[a], scores[b]):
            statements.append(Statement(kind, (a, b)))
        else:
            for k in (a, b):
                pinned.setdefault(k, "a higher priority sees an endpoint as worse here")
    for short, long in prompt:  # no direction is expected: the one that held, the shorter prompt first if both
        for a, b in ((short, long), (long, short)):
            if kind := _pair_kind(scores[a], scores[b]):
                statements.append(Statement(kind, (a, b)))
                break
    for k in (k for k in scores if k[0]):
        if holds(CAP, [scores[k]]):
            statements.append(Statement(CAP, (k,)))
        else:
            pinned.setdefault(k, "past maxPseudoQueue a longer queue does not score like the cap here")
    return Decided(tuple(statements), tuple(Pinned(k, why, scores[k]) for k, why in pinned.items()))


def prompt_moves(rows: list[dict]) -> bool | None:
    """Whether some endpoint scored differently for two prompt lengths at one priority (neighbouring lengths: a
    difference anywhere shows between two of them); None: the rows hold no two prompt lengths at one priority."""
    scores = {key(r): tuple(r["scores"]) for r in rows}
    _, prompt = _pairs([k for k in scores if not k[0]])
    return any(scores[a] != scores[b] for a, b in prompt) if prompt else None


def still_hold(decided: Decided, rows: list[dict]) -> bool:
    """Whether the generated test would pass on these rows: every statement holds and every pinned row is as
    pinned (a row missing from ``rows`` is not asserted on them)."""
    scores = {key(r): tuple(r["scores"]) for r in rows}
    stated = all(
        holds(s.kind, [scores[k] for k in s.about]) for s in decided.statements if all(k in scores for k in s.about)
    )
    return stated and all(scores.get(p.key, p.scores) == p.scores for p in decided.pinned)


def findings(rows: list[dict], read: frozenset[str]) -> list[Finding]:
    """``translate.busier-scores-higher`` for each request on which the compiled plugin scored a busier endpoint
    higher: llm-d's own queue-scorer never does, so a reviewer asks why."""
    out = []
    for r in rows:
        if r["cap"] or holds(BUSIER, [tuple(r["scores"])]):
            continue
        waiting, scores = r["waiting"], r["scores"]
        i = next(i for i in range(1, len(scores)) if scores[i] > scores[i - 1])
        out.append(
            Finding(
                severity=Severity.SUGGESTION,
                check=CHECK_BUSIER_HIGHER,
                message=(
                    f"for {label(key(r), read)} the plugin scores an endpoint with {waiting[i]} waiting "
                    f"{scores[i]:g} and one with {waiting[i - 1]} waiting {scores[i - 1]:g}: a busier endpoint "
                    "scores higher, which llm-d's queue-scorer never does; TestQueueScoresAsGenerated pins these "
                    "scores as generated"
                ),
                fix="check whether the evolved ordering should put a request later behind more waiting requests (and "
                "whether the incumbent* parameters describe the waiting requests); if a busier endpoint should win, "
                "say why in the pull request",
            )
        )
    return out
