"""Whether the benchmarked cells formed waiting queues, read from the reports' per-pod vLLM observability.

A scheduling plugin as translated is a queue-position scorer: it acts only where endpoints' waiting counts
(``WaitingQueueSize``, vLLM's ``num_requests_waiting``) differ. vLLM queues requests only when it is saturated;
on a cell where no pod ever had a waiting request, every endpoint scores alike and the cell measures the rest
of the profile, not the evolved order. So stage 5 says, beside a scheduler's verdicts, whether queues formed
in each cell, from what the reports recorded: llm-d-benchmark's v0.2 reports may carry
``results.observability.vllm_num_requests_waiting`` (per pod under ``components[].statistics``, and an
``aggregated`` block; an ad-hoc key the schema allows, see the upstream example report). A report without it
says nothing, and nothing is assumed for it: the cell is "not reported", never "no queue".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bot.escape import md

#: The observability key of vLLM's waiting-request gauge in a v0.2 report.
WAITING_KEY = "vllm_num_requests_waiting"
#: Statistics that are not a level of the gauge (a spread, a unit, a file).
_NOT_LEVELS = ("stddev", "units", "graph_path")


def _levels(stats: Any) -> list[float]:
    if not isinstance(stats, dict):
        return []
    return [
        float(v)
        for k, v in stats.items()
        if k not in _NOT_LEVELS and isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    ]


def peak_waiting(doc: dict) -> float | None:
    """The highest level of ``vllm_num_requests_waiting`` any pod (or the aggregate) recorded in one report
    (mean, percentiles, max: whichever the report has), or None when the report does not carry the gauge."""
    obs = ((doc.get("results") or {}).get("observability")) or {}
    entry = obs.get(WAITING_KEY) if isinstance(obs, dict) else None
    if not isinstance(entry, dict):
        return None
    levels = [x for c in entry.get("components") or [] if isinstance(c, dict) for x in _levels(c.get("statistics"))]
    levels += _levels(entry.get("aggregated"))
    return max(levels) if levels else None


@dataclass(frozen=True)
class CellQueues:
    """One cell's waiting-queue fact: per arm, the runs that reported the gauge and the highest level seen."""

    workload: str
    rate: float
    runs: dict[str, int]  # arm -> runs of the cell
    reported: dict[str, int]  # arm -> runs whose report carries the gauge
    peak: dict[str, float | None]  # arm -> highest level over those runs, None when none reported it

    @property
    def formed(self) -> bool | None:
        """True when a pod of the evolved arm (the one the plugin scores) had a waiting request; False when
        every run of that arm reported the gauge and it stayed 0; None when that arm's reports do not say."""
        runs, reported, peak = self.runs.get("evolved", 0), self.reported.get("evolved", 0), self.peak.get("evolved")
        if peak is not None and peak > 0:
            return True
        if runs and reported == runs:
            return False
        return None


def cell_queues(waiting: dict, runs: list) -> list[CellQueues]:
    """Every cell of ``runs`` (``RunKey``) with its waiting-queue fact from ``waiting`` (RunKey -> peak)."""
    cells: dict[tuple[str, float], dict[str, list]] = {}
    for key in runs:
        cells.setdefault((key.workload, float(key.rate)), {}).setdefault(key.treatment, []).append(waiting.get(key))
    out = []
    for (workload, rate), arms in sorted(cells.items()):
        seen = {arm: [p for p in peaks if p is not None] for arm, peaks in arms.items()}
        out.append(
            CellQueues(
                workload=workload,
                rate=rate,
                runs={arm: len(peaks) for arm, peaks in arms.items()},
                reported={arm: len(s) for arm, s in seen.items()},
                peak={arm: max(s) if s else None for arm, s in seen.items()},
            )
        )
    return out


def never_formed(cells: list[CellQueues]) -> list[CellQueues]:
    return [c for c in cells if c.formed is False]


def _arm(c: CellQueues, arm: str) -> str:
    runs, reported, peak = c.runs.get(arm, 0), c.reported.get(arm, 0), c.peak.get(arm)
    if not runs:
        return "no runs"
    if peak is None:
        return f"not reported (0 of {runs} runs)"
    return f"peak {peak:g} ({reported} of {runs} runs)"


_FORMED = {True: "queues formed", False: "**queues never formed**", None: "not reported"}


def queues_markdown(
    cells: list[CellQueues],
    planned: dict[tuple[str, float], list[str]],
    measured: dict[tuple[str, float], list[str]] | None = None,
) -> str:
    """verdicts.md's waiting-queue section for a scheduler: one row per cell of the claims that predict a change
    from the evolved order (``planned``: cell -> their ids, gate 2's G2.cells-saturate), and what a cell without
    queues means for those of them judged there (``measured``, default ``planned``). A guard's cells are not
    given: at low load a guard is expected to see no queue, which says nothing against it. '' when no cell."""
    if not cells:
        return ""
    measured = planned if measured is None else measured
    rows = [
        f"| {md(c.workload)} | {c.rate:g} | {_arm(c, 'baseline')} | {_arm(c, 'evolved')} | "
        f"{_FORMED[c.formed] if c.runs else 'no runs'} | "
        f"{', '.join(planned.get((c.workload, c.rate), [])) or '—'} |"
        for c in cells
    ]
    out = [
        "## Waiting queues (vLLM `num_requests_waiting`, per pod)",
        "",
        (
            "The plugin is a queue-position scorer: it acts only where endpoints' waiting counts differ, and vLLM "
            "queues requests only when saturated. Where queues never formed, every endpoint scored alike and the "
            "cell measured the rest of the profile, not the evolved order. The cells below are those of the claims "
            "that predict a change from the order (gate 2's G2.cells-saturate named them), judged here or not; a "
            "guard's no-regression or equivalence needs no queue, and at its low loads none is expected, so its "
            "cells are not listed. A fact beside the verdicts, from the reports' "
            f"`results.observability.{WAITING_KEY}` (highest level any pod recorded, evolved arm decides)."
        ),
        "",
        "| Workload | Rate (req/s) | Baseline arm | Evolved arm | Queues | Order claims planned here |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    dry = never_formed(cells)
    if dry:
        where = ", ".join(f"{md(c.workload)} @ {c.rate:g} req/s" for c in dry)
        ids = sorted({i for c in dry for i in measured.get((c.workload, c.rate), [])})
        on = f" What {', '.join(ids)} measured there is the rest of the profile, not the evolved order." if ids else ""
        out += ["", f"**Queues never formed** at {where}: no pod had a waiting request in any evolved run.{on}"]
    if all(c.formed is None for c in cells) and any(c.runs for c in cells):
        out += [
            "",
            (
                f"No report carries `{WAITING_KEY}`, so whether queues formed is not known: run the cells with "
                "llm-d-benchmark's metrics collection on, or check the pods' `vllm:num_requests_waiting` by hand."
            ),
        ]
    return "\n".join(out)
