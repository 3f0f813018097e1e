"""The benchmark plan's records: what stage 4 writes, gate 2 prices, the runner follows and stage 5 reads back.

Why a module of its own: ``bot.bench.plan`` decides the plan (which cells, how many runs, at what power);
these are the pydantic records it fills in and that the rest read (``bot.bench.experiment`` and
``bot.bench.evaluation_spec`` write them out, ``bot.bench.sequential_plan`` adds the sequential design,
``promote bench run`` follows them). Kept apart, a reader of the plan's shape does not read its sizing,
and the defaults of what a run costs sit beside the record that carries them (``CostParameters``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.bench import guard_power
from bot.bench.layout import TREATMENTS
from bot.bench.priority_plan import PriorityMixPlan
from bot.model import Direction
from bot.stats.design import DecisionRule, SequentialRule

#: GPUs held by one stack: 4 vLLM pods x 1 GPU (the bundled example's calibration: 4 pods on one H100 each).
DEFAULT_GPUS_PER_STACK = 4
#: Minutes a stack holds its GPUs for stand-up plus teardown (image pulls, model load, gateway, EPP ready).
DEFAULT_STANDUP_MINUTES = 30.0
#: Minutes per run on top of the load duration (harness pod start, cache reset, warm-up, result collection).
DEFAULT_RUN_OVERHEAD_MINUTES = 3.0
#: Minutes to swap the EPP between arms and re-warm (standup step 08 again plus a discarded warm-up run),
#: paid per arm for every round of a sequential design after the first.
DEFAULT_SWAP_MINUTES = 5.0
#: The seed's repetitions: BLIS claims are validated on 3 seeds, and the naive plan mirrors them.
NAIVE_REPETITIONS = 3
#: The GPU budget the plan is checked against: at most this share of the naive plan's GPU-minutes.
#: A plan above it says so in a note; decidable claims are never given up for it.
DEFAULT_MAX_RATIO = 0.5


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cell(_Model):
    """One operating point: a workload at a request rate (req/s)."""

    workload: str
    rate: float

    def key(self) -> tuple[str, float]:
        return (self.workload, self.rate)

    def label(self) -> str:
        return f"{self.workload}@{self.rate:g}"


class CostParameters(_Model):
    gpus_per_stack: int = Field(default=DEFAULT_GPUS_PER_STACK, gt=0)
    standup_minutes: float = Field(default=DEFAULT_STANDUP_MINUTES, ge=0, description="stand-up + teardown")
    run_overhead_minutes: float = Field(default=DEFAULT_RUN_OVERHEAD_MINUTES, ge=0)
    naive_repetitions: int = Field(default=NAIVE_REPETITIONS, gt=0)
    swap_minutes: float = Field(
        default=DEFAULT_SWAP_MINUTES, ge=0, description="EPP swap + re-warm of one arm between rounds"
    )


class PlanCost(_Model):
    standups: int
    runs: int
    gpu_minutes: float


class EvalHypothesis(_Model):
    """What stage 5 needs to decide one hypothesis from the shared runs (the evaluation spec's entry)."""

    track: str
    type: str
    metric: str
    statistic: str
    better: Literal["lower", "higher"]
    direction: Direction
    margin: float
    blis_magnitude: float | None = None
    cells: list[Cell]


class PlannedHypothesis(EvalHypothesis):
    """An evaluation-spec entry with the hypothesis id the plan keys it by."""

    id: str


Kind = Literal["decrease", "increase", "equivalent", "no-worse"]


class ClaimSizing(_Model):
    """One hypothesis on one cell: the effect it is planned at, the runs it needs and the power it gets there."""

    hypothesis: str
    track: str
    cell: Cell
    kind: Kind
    effect: float = Field(description="true relative change in the planned scenario (the metric's own scale)")
    need: int | None = Field(
        description="runs per arm this cell needs for its share of the hypothesis's power target; None when the "
        "hypothesis is under-powered"
    )
    power: float = Field(
        description="chance the whole verdict rule confirms this cell at `effect`, the planned runs and the "
        "hypothesis's level"
    )


class HypothesisPower(_Model):
    """What the plan promises for one hypothesis (every cell must confirm)."""

    hypothesis: str
    track: str
    kind: Kind
    decidable: bool = Field(description="reaches the power target within MAX_REPETITIONS at its level")
    level: float = Field(description="alpha x its weight: the level it is tested at when nothing else is confirmed")
    power_floor: float = Field(
        description="exact chance the whole verdict rule confirms it at the planned effects, at `level` (no alpha "
        "passed on from other hypotheses), under the plan's noise model"
    )
    power: float = Field(
        description="simulated chance it is confirmed with every claim of the promotion at its planned effect, "
        "under the plan's noise model (confirmed hypotheses pass their alpha on)"
    )
    power_equal_noise: float = Field(
        description="the same simulation with the evolved arm as steady as the baseline and no outlier runs"
    )
    refute: list[float] | None = Field(None, description=guard_power.REFUTE_FIELD)
    power_at_blis: tuple[float, float] | None = Field(
        None,
        description="(BLIS's magnitude, power_floor at it) for a directional claim BLIS predicts short of the "
        "2 x T_eff it is planned at",
    )


class CellRepetitions(_Model):
    """The repetitions one cell gets per treatment and the hypotheses that asked for that many."""

    cell: Cell
    repetitions: int = Field(ge=2)
    sized_by: list[str]


class SequentialPlan(_Model):
    """The sequential design the runner follows and stage 5 replays (``DecisionRule.sequential``)."""

    spending: str
    looks: dict[str, list[int]] = Field(description="cell label -> cumulative runs per arm at each look")
    decidable: list[str]
    power: dict[str, float] = Field(
        description="simulated chance each hypothesis is confirmed, every claim at its planned effect, under the "
        "noise the plan is sized for (evolved arm twice as noisy, outlier runs)"
    )
    expected_runs: dict[str, float] = Field(
        description="cell label -> expected runs per arm, planned effects, the noise as assumed (CV, no outliers)"
    )
    expected_rounds: float
    expected_gpu_minutes: float = Field(
        description="every claim at its planned effect, the noise as assumed (baseline CV in both arms, no outliers)"
    )
    expected_gpu_minutes_noisy: float = Field(
        description="planned effects under the noise the plan is sized for (evolved arm twice as noisy, outliers)"
    )
    expected_gpu_minutes_null: float = Field(description="the evolved plugin changes nothing (noise as assumed)")
    max_gpu_minutes: float = Field(description="every cell to its horizon")
    refute: dict[str, list[float]] = Field({}, description="Track C guard -> HypothesisPower.refute, sequentially")

    def rule(self) -> SequentialRule:
        return SequentialRule(spending=self.spending, looks=self.looks, decidable=self.decidable)


class BenchmarkPlan(_Model):
    request_id: str
    slug: str
    harness: str
    treatments: list[str] = Field(default_factory=lambda: list(TREATMENTS))
    cells: list[Cell]
    hypotheses: list[PlannedHypothesis]
    not_benchmarked: list[str] = Field(
        description="hypotheses without a benchmark prediction, or that the translated plugin cannot test"
    )
    not_measurable: dict[str, str] = Field({}, description="set aside as stage 5 does (unexercised_by): id -> why")
    repetitions: int = Field(description="the most repetitions any cell gets (per treatment); see cell_repetitions")
    cell_repetitions: list[CellRepetitions] = Field(description="per-cell repetitions, in the order of `cells`")
    claims: list[ClaimSizing] = Field(default_factory=list, description="per (hypothesis, cell) sizing")
    hypothesis_power: list[HypothesisPower] = Field(default_factory=list, description="per hypothesis, in id order")
    decision: DecisionRule = Field(description="alpha and the multiplicity weights stage 5 applies")
    max_ratio: float | None = DEFAULT_MAX_RATIO
    cv: float
    cv_source: str
    evolved_noise_ratio: float = Field(description="the evolved arm's spread the sizing allows for, x the baseline's")
    outlier_rate: float = Field(description="share of runs the sizing allows to be dropped as outliers")
    t_eff: float
    alpha: float
    power: float = Field(description="the power target of every decidable hypothesis")
    parameters: CostParameters
    cost: PlanCost
    naive_cost: PlanCost
    sequential: SequentialPlan | None = Field(
        default=None, description="the group-sequential design (bot.bench.sequential_plan); None: a fixed design"
    )
    priority_mix: PriorityMixPlan | None = Field(
        default=None, description="the priority-mix experiment for a class-deciding policy (bot.bench.priority_plan)"
    )
    decided_on_mix: list[str] = Field(default_factory=list, description="of not_benchmarked, those the mix decides")
    notes: list[str] = Field(default_factory=list)

    @property
    def total_gpu_minutes(self) -> float:
        """The hypotheses' cells plus the priority mix: what the plan spends in all (``cost`` is the cells')."""
        return round(self.cost.gpu_minutes + (self.priority_mix.gpu_minutes if self.priority_mix else 0.0), 3)

    @property
    def ratio(self) -> float:
        """GPU-minutes of this plan over the naive plan's."""
        return self.cost.gpu_minutes / self.naive_cost.gpu_minutes if self.naive_cost.gpu_minutes else 0.0

    @property
    def most_gpu_minutes(self) -> float:
        """The most the benchmark may spend unless its operator sets another cap: the fixed plan's GPU-minutes, or
        the sequential design's worst case (every cell to its horizon, which can pass the fixed count) when larger,
        plus the priority mix when planned (``promote bench run`` runs it too, and its runs count against the cap).

        One figure, said alike where money is promised and where it is enforced: gate 2's "GPU-minutes at
        most", the plan README, ``promote bench run``'s default cap and benchmark.yml's time limit.
        """
        cells = max(self.cost.gpu_minutes, self.sequential.max_gpu_minutes if self.sequential else 0.0)
        return round(cells + (self.priority_mix.gpu_minutes if self.priority_mix else 0.0), 3)

    @property
    def repetitions_by_cell(self) -> dict[Cell, int]:
        """Cell -> repetitions per treatment."""
        return {c.cell: c.repetitions for c in self.cell_repetitions}
