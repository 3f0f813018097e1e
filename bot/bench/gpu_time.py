"""Planned against actual GPU-minutes: the figure users weigh a promotion's evidence against.

GPU hours are what a promotion costs its users, so the status comment, the validation page
and the promotion report all say what the plan expected and what the benchmark actually
spent, and why it stopped if it did not finish. The figures come from the run manifest
`promote bench run` writes next to the reports (``bot.bench.run.manifest``); reports made
any other way (by hand, or the bundled sample data) have no manifest, and then the page
says the spend was not recorded rather than showing zero. What the plan promised is known either way:
stage 4 commits it (``run-limits.json``: the fixed plan and the cap the runner applies), so the record
carries those figures whenever the plan is committed, with or without a spend.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from bot.bench import custody
from bot.bench.run import manifest as mf
from bot.bench.units import gpu_minutes


@dataclass(frozen=True)
class GpuTime:
    planned: float | None  # the stage 4 plan's GPU-minutes
    budget: float | None  # the cap the run was given
    spent: float | None  # None: the reports came without a run manifest
    cell_runs: int = 0  # runs whose report is still the one the manifest recorded (``bot.bench.custody``)
    unmatched: int = 0  # recorded runs whose report is gone or was changed since: no GPU time vouches for it
    mix_runs: int = 0  # kept priority-mix runs whose results.json is still the one the manifest recorded
    set_aside: int = 0  # reports kept aside as invalid
    stopped: str = ""  # how the run ended early ("budget", "failed", "cancelled"); "" if it finished
    stop_reason: str = ""
    judged: bool = True  # False: stage 5 had no reports to judge, or read none of those it had
    sequential_expected: float | None = None  # a sequential run: what its design expected to spend
    rounds: int = 0  # a sequential run: rounds run

    @property
    def recorded(self) -> bool:
        return self.spent is not None

    def line(self) -> str:
        """One line for the status comment and the stage summary."""
        if not self.recorded and not self.judged:  # nothing was read (bot.stages.run_validate.judge)
            text = "GPU-minutes: none counted (no report or run was read)"
            return text + (f"; the plan: {self.plan_words()}" if self.plan_words() else "")
        if not self.recorded:
            text = "GPU-minutes not recorded (the reports came without a `promote bench run` manifest)"
            return text + (f"; the plan: {self.plan_words()}" if self.plan_words() else "")
        text = f"GPU-minutes: {gpu_minutes(self.spent)} spent"
        if self.planned is not None:
            text += f" of {gpu_minutes(self.planned)} planned"
        if self.sequential_expected is not None:
            text += f" (sequential design, {self.rounds} round(s); expected {gpu_minutes(self.sequential_expected)})"
        if self.budget is not None and self.budget != self.planned:
            text += f" (cap {gpu_minutes(self.budget)})"
        if self.stopped:
            text += f"; the run ended early ({self.stopped})"
        return text

    def plan_words(self) -> str:
        """What the plan promised, in words ("3040 planned, at most 3120"); "" when no plan figure is known."""
        parts = [f"{gpu_minutes(self.planned)} planned"] if self.planned is not None else []
        if self.budget is not None and self.budget != self.planned:
            parts.append(f"at most {gpu_minutes(self.budget)}")
        return ", ".join(parts)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> GpuTime:
        data = json.loads(text)
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def with_plan(spent: GpuTime, limits_text: str | None) -> GpuTime:
    """``spent`` with the plan's figures from the committed ``run-limits.json`` where the manifest gave none (no
    manifest, or none at all because nothing ran): the fixed plan (``planned_gpu_minutes``) and the cap the runner
    applies (``budget_gpu_minutes``). A manifest's own figures win: they are what that run was given."""
    try:
        limits = json.loads(limits_text) if limits_text else {}
    except ValueError:
        limits = {}
    if not isinstance(limits, dict):
        limits = {}

    def number(key: str) -> float | None:
        value = limits.get(key)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    planned = spent.planned if spent.planned is not None else number("planned_gpu_minutes")
    budget = spent.budget if spent.budget is not None else number("budget_gpu_minutes")
    return replace(spent, planned=planned, budget=budget)


def from_manifest(manifest: mf.Manifest | None, results: Path | None = None) -> GpuTime:
    """What a run manifest says was planned and spent (not recorded without one). With ``results``, the cell and
    priority-mix runs credited are those whose report (the mix's results.json) is still there as recorded; the
    others are counted apart."""
    if manifest is None:
        return GpuTime(planned=None, budget=None, spent=None)
    stops = [e for e in manifest.events if e.kind == "stop"]
    last = stops[-1] if stops else None
    # A stop followed by more cells was resumed; only a stop nothing ran after says the run ended early.
    if last is not None and any(c.start > last.start for c in manifest.cells):
        last = None
    unmatched = (
        [] if results is None else [c for c in manifest.cells if not custody.in_place(results, c.report, c.sha256)]
    )
    mix = custody.kept_mix(manifest)
    mix_unmatched = [] if results is None else [r for r in mix if not custody.in_place(results, r.results, r.sha256)]
    return GpuTime(
        planned=manifest.planned_gpu_minutes,
        budget=manifest.budget_gpu_minutes,
        spent=manifest.spent_gpu_minutes,
        cell_runs=len(manifest.cells) - len(unmatched),
        unmatched=len(unmatched) + len(mix_unmatched),
        mix_runs=len(mix) - len(mix_unmatched),
        set_aside=len(manifest.rejected),
        stopped=last.what if last else "",
        stop_reason=last.detail if last else "",
        sequential_expected=manifest.sequential.expected_gpu_minutes if manifest.sequential else None,
        rounds=len(manifest.sequential.rounds) if manifest.sequential else 0,
    )


def read(results: Path, promotion: str | None = None) -> GpuTime:
    """The GPU time of the reports under ``results``: an unreadable manifest, or one another promotion's run wrote
    (a copied results directory), counts as none."""
    try:
        manifest = mf.load(results)
    except (OSError, ValueError):
        manifest = None
    if manifest is not None and promotion is not None and manifest.promotion != promotion:
        manifest = None
    return from_manifest(manifest, results)
