"""The plan as the runner executes it: stand-up groups, setup treatments in arm order, cells in plan order.

Setup treatments that differ only in the EPP (the baseline and evolved arms run the same
image with another plugin config; the metric-staleness condition adds an EPP flag) share
one stand-up: the runner swaps the EPP between them and re-warms, instead of tearing the
model servers down and standing them up again (llm-d-benchmark's roadmap lists this "fast
treatment" as not done yet). A condition that changes the model servers (P/D split, LoRA)
gets a stand-up of its own.

Within a setup treatment the cells run in the experiment's order: repetition-major (every
cell once, then again while it still needs repetitions), so drift spreads over all cells.
A sequential round (``bot.bench.run.rounds``) passes the repetitions it runs per arm and
cell (``runs``) and keeps the same order among them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.bench.conditions import Condition, conditions_for
from bot.bench.experiment import stack_constants, stage_seconds
from bot.bench.layout import TREATMENTS, run_treatment_name, split_condition, with_condition
from bot.bench.plan import BASELINE_CONFIG_FILE, EVOLVED_CONFIG_FILE, PlanError
from bot.bench.plan_model import BenchmarkPlan
from bot.model import PromotionRequest

CONFIG_FILES = {"baseline": BASELINE_CONFIG_FILE, "evolved": EVOLVED_CONFIG_FILE}


@dataclass(frozen=True)
class CellRun:
    arm: str
    workload: str  # with its condition, e.g. load-spikes+pod-failure
    rate: float
    repetition: int
    duration_s: int

    @property
    def run_treatment(self) -> str:
        return run_treatment_name(self.workload, self.rate, self.repetition)

    @property
    def base_workload(self) -> str:
        return split_condition(self.workload)[0]

    @property
    def condition(self) -> str | None:
        return split_condition(self.workload)[1]

    def key(self) -> tuple[str, str]:
        return (self.arm, self.run_treatment)


@dataclass
class SetupRun:
    name: str  # setup treatment: arm or arm+condition
    arm: str
    condition: Condition | None
    overrides: dict[str, Any]  # dotted llm-d-benchmark scenario overrides
    cells: list[CellRun] = field(default_factory=list)


@dataclass
class Group:
    """Setup treatments that share one stand-up (their model servers are the same)."""

    name: str
    setups: list[SetupRun]

    @property
    def cells(self) -> list[CellRun]:
        return [c for s in self.setups for c in s.cells]


def image_overrides(image_ref: str) -> dict[str, Any]:
    """router.epp.image.* for ``registry/repository:tag[@sha256:...]``; a digest pins the exact build."""
    name, _, digest = image_ref.partition("@")
    repo_part, _, tag = name.rpartition(":")
    if not repo_part or "/" not in repo_part:
        raise PlanError(f"EPP image {image_ref!r}: expected registry/repository:tag")
    registry, repository = repo_part.split("/", 1)
    return {
        "router.epp.image.registry": registry,
        "router.epp.image.repository": repository,
        "router.epp.image.tag": f"{tag}@{digest}" if digest else tag,
    }


def build_schedule(
    plan: BenchmarkPlan,
    request: PromotionRequest,
    epp_configs: dict[str, str],
    image_ref: str,
    *,
    arm_order: tuple[str, ...] = TREATMENTS,
    fast_swap: bool = True,
    runs: Mapping[tuple[str, str], Sequence[int]] | None = None,
) -> list[Group]:
    """The stand-up groups in order; ``runs`` ((arm, cell label) -> repetitions) replaces the plan's 1..n per
    cell with exactly these repetitions (a sequential round); groups and setups with nothing to run are left out."""
    if sorted(arm_order) != sorted(TREATMENTS):
        raise PlanError(f"arm order {arm_order}: give each of {', '.join(TREATMENTS)} once")
    available = conditions_for(request.stack)
    seconds = {w.name: math.ceil(stage_seconds(request, w.name)) for w in request.workloads}  # what each run sends
    constants = {
        **stack_constants(request),
        **image_overrides(image_ref),
        "router.epp.flags.allow-experimental-plugins": True,
        "router.epp.pluginsCustomConfig": {CONFIG_FILES[a]: epp_configs[a] for a in TREATMENTS},
    }
    by_cell = plan.repetitions_by_cell
    if runs is None:
        order = [(c, n) for n in range(1, plan.repetitions + 1) for c in plan.cells if n <= by_cell[c]]
    else:
        top = max((n for ns in runs.values() for n in ns), default=0)
        wanted = {
            (c.label(), n) for (_, label), ns in runs.items() for n in ns for c in plan.cells if c.label() == label
        }
        order = [(c, n) for n in range(1, top + 1) for c in plan.cells if (c.label(), n) in wanted]
    setup_conditions: list[str | None] = [None]
    for c in plan.cells:
        cond = split_condition(c.workload)[1]
        if cond is None:
            continue
        found = available.get(cond)
        if not isinstance(found, Condition):
            raise PlanError(f"cell {c.label()}: condition {cond!r} cannot run here: {found or 'unknown condition'}")
        if found.level == "setup" and cond not in setup_conditions:
            setup_conditions.append(cond)

    groups: dict[str, Group] = {}
    for cond_name in setup_conditions:
        cond = available[cond_name] if cond_name else None
        assert cond is None or isinstance(cond, Condition)
        for arm in arm_order:
            name = with_condition(arm, cond_name)
            overrides = {
                **constants,
                "router.epp.pluginsConfigFile": CONFIG_FILES[arm],
                **(cond.overrides if cond else {}),
            }
            setup = SetupRun(name, arm, cond, overrides)
            for cell, n in order:
                if runs is not None and n not in runs.get((arm, cell.label()), ()):
                    continue
                wl_cond = split_condition(cell.workload)[1]
                runs_here = (
                    (wl_cond == cond_name) if cond_name else (wl_cond is None or available[wl_cond].level == "run")
                )  # type: ignore[union-attr]
                if runs_here:
                    base = split_condition(cell.workload)[0]
                    setup.cells.append(CellRun(arm, cell.workload, cell.rate, n, seconds[base]))
            shared = cond is None or cond.epp_only
            group_name = ("stack" if shared else f"stack+{cond_name}") if fast_swap else name
            group = groups.setdefault(group_name, Group(group_name, []))
            if setup.cells or runs is None:
                group.setups.append(setup)
    return [g for g in groups.values() if g.cells]


def standups_saved(
    plan: BenchmarkPlan, request: PromotionRequest, epp_configs: dict[str, str]
) -> tuple[int, int, float]:
    """(stand-ups with the fast EPP swap, without it, GPU-minutes the swap saves at the plan's stand-up cost)."""
    fast = build_schedule(plan, request, epp_configs, "r/r:t", fast_swap=True)
    slow = build_schedule(plan, request, epp_configs, "r/r:t", fast_swap=False)
    p = plan.parameters
    return len(fast), len(slow), round((len(slow) - len(fast)) * p.standup_minutes * p.gpus_per_stack, 3)


def nested_overrides(flat: dict) -> dict:
    """Dotted llm-d-benchmark overrides as the nested YAML --cluster-config deep-merges."""
    out: dict = {}
    for key in sorted(flat):
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = flat[key]
    return out
