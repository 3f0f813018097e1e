"""A scheduler's claims need cells where queues form: which cells those are, and the diagnostic that says so first.

A scheduling plugin as translated is a queue-position scorer (bot/golang/templates/scorer.go.j2): it models each
endpoint's waiting requests from its scraped ``WaitingQueueSize`` and prefers the endpoints where the evolved
order would serve the request earlier. When no pod has a waiting request (vLLM queues requests only when it is
saturated), every position is 0 and every endpoint scores alike: the plugin does nothing, whatever the order.
So a claim that the plugin changes a metric is only tested on saturated cells, and when it fails, unsaturated
cells are the first suspect, before any sim-to-real gap. Gate 2 names the cells that must saturate
(``bot.review.saturation``); stage 5 reports whether queues formed in each (``bot.bench.waiting``).
"""

from __future__ import annotations

from bot.hypotheses.operating_points import cells
from bot.model import Direction, Hypothesis, PolicyKind, PromotionRequest, Track

_PREFIX = "If this fails, it would indicate "


def needs_queues(kind: PolicyKind, h: Hypothesis) -> bool:
    """A scheduler's benchmarked Track A or B prediction of a change: one only saturated cells can show (an
    equivalence or no-regression holds trivially where the plugin does nothing, so it needs no queue)."""
    return (
        kind is PolicyKind.SCHEDULING
        and h.track in (Track.A, Track.B)
        and h.benchmarked
        and h.prediction.direction in (Direction.DECREASE, Direction.INCREASE)
    )


def queue_cells(req: PromotionRequest, hs: list[Hypothesis]) -> dict[str, list[float]]:
    """workload -> the rates at which ``hs`` are judged (sorted), in the request's workload order."""
    found: dict[str, set[float]] = {}
    for h in hs:
        for w, r in cells(req, h):
            found.setdefault(w, set()).add(r)
    order = {w.name: i for i, w in enumerate(req.workloads)}
    return {w: sorted(found[w]) for w in sorted(found, key=lambda w: (order.get(w.split("+")[0], len(order)), w))}


def cells_text(by_workload: dict[str, list[float]]) -> str:
    """`load-spikes` @ 30 and 45 req/s; `x` @ 10 req/s."""

    def rates(rs: list[float]) -> str:
        words = [f"{r:g}" for r in rs]
        return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"

    return "; ".join(f"`{w}` @ {rates(rs)} req/s" for w, rs in by_workload.items())


def saturation_first(req: PromotionRequest, h: Hypothesis) -> Hypothesis:
    """``h`` with a diagnostic that names unsaturated cells as the first suspect (``needs_queues`` only)."""
    text = h.diagnostic
    rest = text[len(_PREFIX) :] if text.startswith(_PREFIX) else text
    rest = rest.replace("are the first suspects", "are the next suspects")  # bot.hypotheses.generate._diagnostic_a
    where = cells_text(queue_cells(req, [h]))
    first = (
        f"{_PREFIX}first that its cells ({where}) did not saturate: vLLM queues requests only when saturated, and "
        "with no waiting request every endpoint scores alike, so the plugin never acted (stage 5's waiting-queue "
        "section says whether queues formed in each cell; a cell where they never formed decides nothing about "
        "the evolved order). Only where queues formed would it indicate "
    )
    return h.model_copy(update={"diagnostic": first + rest})
