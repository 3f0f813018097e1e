"""Reports stage 5 loaded but does not use: moved from the used ones to the ones not used, with why.

A report can be valid evidence of this promotion's arms and still decide nothing: a run no look of its
group-sequential cell reached (``bot.stats.judged.runs_past_last_look``), or a run of a cell the plan does
not have (sample data made for every workload and rate, a run of an earlier plan). Counted as used, the page
said "72 reports used" where 60 were read, and reports-not-used.json said nothing of the other 12; the
testbed count and the arm tally are made from the used ones, so each such report is moved once, here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

#: Why a report of a cell the plan does not run is not used (the evaluation spec's ``cells``).
NOT_IN_PLAN = "cell not in the plan"


def set_aside(reports, reason_of: Callable[[object], str | None]) -> None:
    """Move every used report whose layout key (``bot.bench.layout.parse_layout``) ``reason_of`` gives a reason
    for to ``reports.rejected``, and out of the testbed records (one per used report, in order)."""
    from bot.bench.errors import ReportError
    from bot.bench.layout import parse_layout

    if not getattr(reports, "loaded", None):
        return
    aligned = len(reports.testbeds) == len(reports.loaded)
    testbeds = list(reports.testbeds) if aligned else [None] * len(reports.loaded)
    loaded, kept, aside = [], [], []
    for rel, tb in zip(reports.loaded, testbeds, strict=True):
        try:
            key = parse_layout(Path(rel))
        except ReportError:
            key = None
        reason = reason_of(key) if key is not None else None
        if reason:
            aside.append((rel, reason))
            continue
        loaded.append(rel)
        kept.append(tb)
    if not aside:
        return
    reports.loaded = loaded
    if aligned:
        reports.testbeds = kept
    reports.rejected = sorted([*reports.rejected, *aside])


def set_aside_unplanned(reports, cells) -> None:
    """Reports of a (workload, rate) that is none of the plan's ``cells`` (the evaluation spec's), not used: no
    hypothesis reads them. Their rows leave the table as well, so that nothing judged or tabled reads them."""
    from bot.stats.cells import rate_key

    planned = {(c.workload, rate_key(c.rate)) for c in cells}

    def reason_of(key) -> str | None:
        if (key.workload, rate_key(key.rate)) in planned:
            return None
        return f"{NOT_IN_PLAN}: no hypothesis reads its workload and rate"

    set_aside(reports, reason_of)
    for name in ("table", "requests"):
        frame = getattr(reports, name, None)
        if frame is not None and len(frame):
            keep = [(w, rate_key(r)) in planned for w, r in zip(frame["workload"], frame["rate"], strict=True)]
            setattr(reports, name, frame[keep].reset_index(drop=True))


def split_valid(rejected) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(reports that failed validation or are no evidence, valid reports of a cell not in the plan, valid reports
    past the last look of their cell): the two valid kinds are counted apart from the rejected ones, never called
    rejected (``bot.stats.judged.split_unreached`` splits off the second kind; this, the first). A mix-only plan
    has no cells (``bot.bench.mix_only.NO_CELLS``), so each of its cell reports is of a cell not in the plan."""
    from bot.stats.judged import split_unreached

    invalid, unreached = split_unreached(rejected)
    unplanned_reasons = _unplanned_reasons()
    unplanned = [(p, r) for p, r in invalid if r.startswith(unplanned_reasons)]
    return [(p, r) for p, r in invalid if not r.startswith(unplanned_reasons)], unplanned, unreached


def _unplanned_reasons() -> tuple[str, ...]:
    from bot.bench.mix_only import NO_CELLS

    return (NOT_IN_PLAN, NO_CELLS)


def valid_not_used_reasons() -> tuple[str, ...]:
    """How the reason of each kind of valid report that decides nothing starts (``split_valid``'s second and third
    groups): gate 3 blocks on none of them, and `promote evaluate` never calls them rejected."""
    from bot.stats.judged import PAST_LAST_LOOK

    return (*_unplanned_reasons(), PAST_LAST_LOOK)


def not_used_said(rejected) -> str:
    """`promote evaluate`'s summary-line clauses for the reports not used: the invalid ones as rejected, each kind
    of valid one as "valid ..., not used", worded from the reason it starts with (``NOT_IN_PLAN``)."""
    invalid, unplanned, unreached = split_valid(rejected)
    clauses = [
        (invalid, "report(s) rejected"),
        (unplanned, f"valid report(s) of a {NOT_IN_PLAN}, not used"),
        (unreached, "valid report(s) past the last look of their cell, not used"),
    ]
    return "".join(f"; {len(group)} {words} (listed in verdicts.md)" for group, words in clauses if group)
