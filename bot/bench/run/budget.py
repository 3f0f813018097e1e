"""The GPU budget: a cap in GPU-minutes the runner never knowingly crosses.

Every minute the stack stands, its GPUs are held, so stand-ups, EPP swaps, warm-ups,
cells and teardowns all count (wall minutes × GPUs of the stack). Before each step the
runner asks whether its estimate still fits; a cell that would cross the cap is not
started, and the runner says which cells remain, which hypotheses they serve and how
many more GPU-minutes would run them.

A dry-run spends nothing, so it counts each stand-up and run at its estimate instead
(``assume``): the same checks then stop it where they would stop the real run, and it
says how many runs the cap allows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.bench.run.schedule import CellRun


@dataclass
class Budget:
    cap: float | None  # GPU-minutes; None = no cap
    gpus: int
    spent: float = 0.0
    run_overhead_minutes: float = 3.0
    standup_minutes: float = 30.0
    stopped: str | None = None
    remaining: list[CellRun] = field(default_factory=list)
    observed: list[float] = field(default_factory=list)  # GPU-minutes per second of load, of cells run so far
    assumed: list[CellRun] = field(default_factory=list)  # dry-run: the runs counted at their estimates
    assumed_minutes: float = 0.0  # dry-run: what the steps counted at their estimates add up to

    def cell_estimate(self, cell: CellRun) -> float:
        """The plan's estimate, or what cells of this run actually cost per second of load if that is more."""
        planned = (cell.duration_s / 60.0 + self.run_overhead_minutes) * self.gpus
        if not self.observed:
            return planned
        return max(planned, max(self.observed) * cell.duration_s)

    def observe(self, cost: float, duration_s: float) -> None:
        if duration_s > 0:
            self.observed.append(cost / duration_s)

    def standup_estimate(self) -> float:
        return self.standup_minutes * self.gpus

    def charge(self, minutes: float) -> float:
        cost = round(minutes * self.gpus, 4)
        self.spent = round(self.spent + cost, 4)
        return cost

    def fits(self, estimate: float) -> bool:
        return self.cap is None or self.spent + estimate <= self.cap + 1e-9

    def assume(self, estimate: float, cell: CellRun | None = None) -> None:
        """A dry-run's step (a stand-up, or ``cell``), counted at its estimate as if it had been spent."""
        self.spent = round(self.spent + estimate, 4)
        self.assumed_minutes = round(self.assumed_minutes + estimate, 4)
        if cell is not None:
            self.assumed.append(cell)

    def dry_run_text(self) -> str:
        """What a dry-run's steps come to at their estimates, beside the cap."""
        cap = "no cap" if self.cap is None else f"the cap is {self.cap:g}"
        return f"about {minutes_text(self.assumed_minutes)} GPU-minutes at the estimates (stand-ups and runs; {cap})"

    def stop(self, cells: Iterable[CellRun], why: str) -> None:
        done = set(self.assumed)
        self.remaining = [c for c in cells if c not in done]
        self.stopped = why

    def more_needed(self) -> float:
        return round(sum(self.cell_estimate(c) for c in self.remaining), 3)


def remaining_text(budget: Budget, serves: dict[str, list[str]], *, dry_run: bool = False) -> str:
    """One paragraph: what is left, what it would decide, and what it would cost (a dry-run: how many runs fit)."""
    if not budget.remaining:
        return ""
    cells = sorted({(c.workload, c.rate) for c in budget.remaining})
    hyps = sorted({h for wl, rate in cells for h in serves.get(f"{wl}@{rate:g}", [])})
    fits, wanted = len(budget.assumed), len(budget.assumed) + len(budget.remaining)
    return (
        (f"the cap allows {fits} of {wanted} runs: " if dry_run else "")
        + f"{len(budget.remaining)} cell run(s) remain on {len(cells)} cell(s) "
        f"({', '.join(f'{w}@{r:g}' for w, r in cells)}); they serve {', '.join(hyps) or 'no hypothesis'}. "
        f"About {minutes_text(budget.more_needed())} more GPU-minutes would run them "
        + (
            f"(at the estimates, {minutes_text(budget.standup_estimate())} per stand-up; "
            f"{minutes_text(budget.assumed_minutes)} counted before them, of the cap {budget.cap:g}); "
            "raise --budget-gpu-minutes."
            if dry_run
            else f"(spent {budget.spent:g} of the cap {budget.cap:g}); raise --budget-gpu-minutes and pass --resume."
        )
    )


def minutes_text(x: float) -> str:
    """GPU-minutes as people read them: 1,760 rather than 1.76e+03; small amounts keep two digits."""
    return f"{x:,.0f}" if x >= 10 else f"{x:.2g}"
