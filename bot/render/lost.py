"""Requests the evolved plugin lost beyond the baseline's: a regression whatever the latencies say.

The verdicts judge each guard on its metric (latency, throughput), and the shedding
guard (``bot.stats.guards``) only keeps lost requests from faking a latency gain. A
router whose evolved arm fails one request in five, with latencies and throughput as
before, was therefore "0 regressed" and "no regression shown" with gate 3 silent. So
every page that counts regressions reads the cells' recorded shares of failed or
incomplete requests (``Effect.lost_baseline`` / ``lost_evolved``, over the runs each
cell judged) and names a cell where the evolved arm lost more than the shedding
guard's tolerance (1 percentage point) more of its requests than the baseline: the
headline and the PR's Track C line say so instead of "no regression", and gate 3
raises it (``G3.requests-lost``). A few failed requests in tens of thousands (the
bundled example's 8 in 37,758) stay what they were: at most a flag beside a verdict.

Pure: verdicts in, cells and plain text out (workload names are ``[a-z0-9-]``, and
escaped where they reach markdown).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.escape import md
from bot.model import Verdict


@dataclass(frozen=True)
class LostCell:
    """One (workload, rate) where the evolved arm lost more requests, with the hypotheses whose runs show it."""

    workload: str
    rate: float
    baseline: float  # share of the baseline arm's requests failed or incomplete
    evolved: float
    hypotheses: tuple[str, ...]


def tolerance() -> float:
    """The extra share of lost requests a cell may show: the shedding guard's (``guards.SHED_TOLERANCE``)."""
    from bot.stats.guards import SHED_TOLERANCE

    return SHED_TOLERANCE


def lost_cells(verdicts: Iterable[Verdict]) -> list[LostCell]:
    """Every cell whose evolved arm lost more than ``tolerance()`` more of its requests than the baseline, in
    (workload, rate) order; the shares are the largest gap any verdict recorded there (each records the runs it
    judged)."""
    limit = tolerance()
    worst: dict[tuple[str, float], tuple[float, float]] = {}
    ids: dict[tuple[str, float], list[str]] = {}
    for v in verdicts:
        for e in v.effects:
            if e.lost_baseline is None or e.lost_evolved is None or e.lost_evolved - e.lost_baseline <= limit:
                continue
            key = (e.workload, e.rate)
            if key not in worst or e.lost_evolved - e.lost_baseline > worst[key][1] - worst[key][0]:
                worst[key] = (e.lost_baseline, e.lost_evolved)
            if v.hypothesis_id not in ids.setdefault(key, []):
                ids[key].append(v.hypothesis_id)
    return [LostCell(w, r, *worst[(w, r)], tuple(ids[(w, r)])) for w, r in sorted(worst)]


def cell_words(c: LostCell) -> str:
    """'sanity-random at 10 req/s: 20.0% of requests lost vs 0.0% for baseline'."""
    return f"{md(c.workload)} at {c.rate:g} req/s: {c.evolved:.1%} of requests lost vs {c.baseline:.1%} for baseline"


def lost_words(cells: Sequence[LostCell], of: int | None = None) -> str:
    """'requests lost more often with the evolved plugin (sanity-random at 10 req/s: 20.0% ... for baseline)', the
    words the headline, the PR and gate 3 give; '' when no cell lost more. Over several cells a summary ("in all 10
    cells: 20.0% of requests lost vs 0.0% for baseline", "in 3 of 10 cells, up to ...": ``of`` is how many cells
    were measured) instead of a clause per cell: the headline is the one line a maintainer reads, and the cells are
    listed in the report's detail and in gate 3's G3.requests-lost findings."""
    if not cells:
        return ""
    if len(cells) == 1:
        return f"requests lost more often with the evolved plugin ({cell_words(cells[0])})"
    worst = max(cells, key=lambda c: c.evolved - c.baseline)
    shares = f"{worst.evolved:.1%} of requests lost vs {worst.baseline:.1%} for baseline"
    alike = len({(f"{c.evolved:.1%}", f"{c.baseline:.1%}") for c in cells}) == 1
    if of is None:
        where = f"in {len(cells)} cells"
    elif of > len(cells):
        where = f"in {len(cells)} of {of} cells"
    else:
        where = f"in all {len(cells)} cells"
    if alike:
        return f"requests lost more often with the evolved plugin ({where}: {shares})"
    place = f"{md(worst.workload)} at {worst.rate:g} req/s"
    return f"requests lost more often with the evolved plugin ({where}, up to {shares} at {place})"


def lost_summary(verdicts: Iterable[Verdict]) -> str:
    """``lost_words`` over the verdicts' cells, with how many cells were measured (for "in all N cells")."""
    vs = list(verdicts)
    measured = {(e.workload, e.rate) for v in vs for e in v.effects}
    return lost_words(lost_cells(vs), of=len(measured))


__all__ = ["LostCell", "cell_words", "lost_cells", "lost_summary", "lost_words", "tolerance"]
