"""The evaluation spec: what stage 4 promises stage 5 will decide, and from which runs.

Stage 4 writes it beside the experiment; stage 5 reads it back with
``load_evaluation_spec`` and refuses one it cannot use, naming the field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError

from bot.bench.plan import EVALUATION_SPEC_VERSION, RUN_TREATMENT_PATTERN, id_key
from bot.bench.plan_model import BenchmarkPlan, Cell, EvalHypothesis, _Model
from bot.bench.priority_plan import PriorityMixPlan
from bot.bench.reports import LAYOUT
from bot.bench.yaml_dump import dump_yaml
from bot.model import PromotionRequest, RequestError, StackSpec, describe_validation_error
from bot.model.metrics import METRICS
from bot.stats.design import DecisionRule
from bot.stats.power import MAX_CV, NOISE_FLOOR_CV_MULT, NOISE_FLOOR_MIN
from bot.yaml_safe import YamlInputError, load_yaml


class NoiseFloorRule(_Model):
    rule: str = "T_eff = max(min_effect, cv_multiplier x CV of the baseline repetitions), per cell and metric"
    min_effect: float = NOISE_FLOOR_MIN
    cv_multiplier: float = NOISE_FLOOR_CV_MULT
    halt_cv: float = Field(default=MAX_CV, description="baseline CV above this: inconclusive (cluster too noisy)")


class EvaluationSpec(_Model):
    version: Literal[1] = EVALUATION_SPEC_VERSION
    promotion: str
    slug: str
    plugin_type: str
    evolved_for: str | None = None
    harness: str
    results_layout: str = LAYOUT
    run_treatment_pattern: str = RUN_TREATMENT_PATTERN
    treatments: list[str]
    repetitions: int = Field(ge=0, description="the most repetitions any cell gets (0: no cells, the mix only)")
    cells: list[Cell]
    repetitions_by_cell: dict[str, int] = Field(
        default_factory=dict,
        description="cell label (workload@rate) -> repetitions; a cell not listed gets `repetitions`",
    )
    alpha: float = Field(gt=0, lt=0.5)
    power: float = Field(gt=0, lt=1)
    cv_planned: float
    evolved_noise_ratio_planned: float = Field(default=1.0, description="evolved/baseline spread the sizing allowed")
    outlier_rate_planned: float = Field(default=0.0, description="share of outlier runs the sizing allowed")
    noise_floor: NoiseFloorRule = Field(default_factory=NoiseFloorRule)
    multiple_comparisons: str = Field(
        default=DecisionRule().description, description="how alpha is shared; `decision` holds the exact rule"
    )
    decision: DecisionRule = Field(
        default_factory=DecisionRule,
        description="the rule stage 5 applies: alpha and the weighted-Holm weights the plan sized for",
    )
    hypotheses: dict[str, EvalHypothesis]
    not_benchmarked: list[str] = Field(default_factory=list)
    arms: dict[str, str] = Field(
        default_factory=dict,
        description="arm -> the EndpointPickerConfig it runs: a report counts for an arm only if it records this config",
    )
    stack: StackSpec | None = Field(default=None, description="the stack the plan pins (model, replicas ...)")
    condition_replicas: dict[str, int] = Field(
        default_factory=dict, description="Track B run condition -> model-server replicas, when it differs"
    )
    evolved_image: str | None = Field(
        default=None,
        description="the EPP image experiment.yaml pins (router.epp.image.*, registry/repository:tag): a report "
        "filed under evolved that records another tag measured another build, not this promotion's plugin",
    )
    priority_mix: PriorityMixPlan | None = Field(
        default=None,
        description="the priority-mix experiment (bot.bench.priority_plan): stage 5 judges the admitter's shedding "
        "order on it; None: the plan has none",
    )


class EvaluationSpecError(RequestError):
    """An evaluation.yaml that stage 5 cannot use."""


def default_evolved_image(request: PromotionRequest) -> str:
    """The EPP image the experiment pins for a promotion unless told otherwise: its tag names the promotion and
    its plugin (``promotion-<id>-<slug>``), so a report that records it measured this promotion's build."""
    return f"ghcr.io/{request.fork.repo.lower()}:promotion-{request.id}-{request.slug}"


def evaluation_spec(
    plan: BenchmarkPlan,
    request: PromotionRequest,
    arms: dict[str, str] | None = None,
    *,
    evolved_image: str | None = None,
) -> EvaluationSpec:
    return EvaluationSpec(
        arms=dict(sorted((arms or {}).items())),
        evolved_image=evolved_image or default_evolved_image(request),
        stack=request.stack,
        promotion=request.id,
        slug=plan.slug,
        plugin_type=request.plugin_type,
        evolved_for=request.evolved_for,
        harness=plan.harness,
        treatments=list(plan.treatments),
        repetitions=plan.repetitions,
        cells=plan.cells,
        repetitions_by_cell={c.cell.label(): c.repetitions for c in plan.cell_repetitions},
        alpha=plan.alpha,
        power=plan.power,
        cv_planned=plan.cv,
        evolved_noise_ratio_planned=plan.evolved_noise_ratio,
        outlier_rate_planned=plan.outlier_rate,
        multiple_comparisons=plan.decision.description,
        decision=plan.decision,
        hypotheses={
            h.id: EvalHypothesis(**h.model_dump(exclude={"id"}))
            for h in sorted(plan.hypotheses, key=lambda h: id_key(h.id))
        },
        not_benchmarked=sorted([*plan.not_benchmarked, *plan.not_measurable], key=id_key),
        priority_mix=plan.priority_mix,
    )


def render_evaluation_spec(
    plan: BenchmarkPlan,
    request: PromotionRequest,
    arms: dict[str, str] | None = None,
    *,
    evolved_image: str | None = None,
) -> str:
    doc = evaluation_spec(plan, request, arms, evolved_image=evolved_image).model_dump(mode="json")
    if doc["priority_mix"] is None:  # a plan without the mix reads as before
        del doc["priority_mix"]
    return (
        f"# Evaluation spec for promotion {request.id} ({plan.slug}): what stage 5 decides and from which runs.\n"
        + dump_yaml(doc, sort_keys=True)
    )


def load_evaluation_spec(text: str) -> EvaluationSpec:
    """Parse evaluation.yaml; EvaluationSpecError names the field."""
    try:
        raw = load_yaml(text)
    except YamlInputError as exc:
        raise EvaluationSpecError(f"evaluation spec: {exc}; regenerate it with `promote plan`") from None
    if not isinstance(raw, dict):
        raise EvaluationSpecError(
            "evaluation spec: expected a mapping at the top level; regenerate it with `promote plan`"
        )
    try:
        spec = EvaluationSpec.model_validate(raw)
    except ValidationError as exc:
        raise EvaluationSpecError(f"evaluation spec: {describe_validation_error(exc)}") from None
    if spec.cells and spec.repetitions < 2:
        raise EvaluationSpecError(
            f"evaluation spec: field 'repetitions': {spec.repetitions} is below 2; a plan with cells runs each "
            "at least twice per arm (0 is for a plan with no cells, the priority mix only)"
        )
    if not spec.cells and spec.priority_mix is None:
        raise EvaluationSpecError(
            "evaluation spec: no cells and no priority mix, so nothing to judge; regenerate it with `promote plan`"
        )
    cells = {c.key() for c in spec.cells}
    labels = {c.label() for c in spec.cells}
    unknown = sorted(set(spec.repetitions_by_cell) - labels)
    if unknown:
        raise EvaluationSpecError(f"evaluation spec: repetitions_by_cell names cells {unknown} that are not in `cells`")
    for label, n in sorted(spec.repetitions_by_cell.items()):
        if not 2 <= n <= spec.repetitions:
            raise EvaluationSpecError(
                f"evaluation spec: repetitions_by_cell[{label!r}] = {n}; expected 2..{spec.repetitions} (`repetitions`)"
            )
    for hid, h in spec.hypotheses.items():
        missing = [c.label() for c in h.cells if c.key() not in cells]
        if missing:
            raise EvaluationSpecError(f"evaluation spec: hypothesis {hid} uses cells {missing} that are not in `cells`")
        if h.metric not in METRICS:
            raise EvaluationSpecError(f"evaluation spec: hypothesis {hid}: unknown metric {h.metric!r}")
    unknown = sorted(set(spec.decision.weights) - set(spec.hypotheses))
    if unknown:
        raise EvaluationSpecError(f"evaluation spec: decision.weights names hypotheses {unknown} that are not planned")
    seq = spec.decision.sequential
    if seq is not None:
        unknown = sorted(set(seq.looks) - labels)
        if unknown:
            raise EvaluationSpecError(
                f"evaluation spec: decision.sequential.looks names cells {unknown} not in `cells`"
            )
        missing = sorted(labels - set(seq.looks))
        if missing:
            raise EvaluationSpecError(f"evaluation spec: decision.sequential.looks has no looks for cells {missing}")
        unknown = sorted(set(seq.decidable) - set(spec.hypotheses))
        if unknown:
            raise EvaluationSpecError(
                f"evaluation spec: decision.sequential.decidable names hypotheses {unknown} that are not planned"
            )
    if spec.decision.alpha != spec.alpha:
        raise EvaluationSpecError(
            f"evaluation spec: decision.alpha {spec.decision.alpha} differs from alpha {spec.alpha}; regenerate it "
            "with `promote plan`"
        )
    return spec
