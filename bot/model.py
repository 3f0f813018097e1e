"""The promotion bot's shared vocabulary.

Every layer (CLI, engine, stages, capabilities, forges) speaks these pydantic
types, so a promotion request built from a local ``promotion.yaml`` and one
built from a GitHub issue form are the same object, and state written by one
run can be read back by a resumed run or by the GitHub handler.

Nothing here does I/O except ``PromotionRequest.load`` (which reads the
request file and the evolved source it points at), kept here so that every
entry point validates a request the same way.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.yaml_safe import YamlInputError, load_yaml, read_yaml_text


class Strict(BaseModel):
    """Unknown keys are errors: a typo in promotion.yaml must not be ignored."""

    model_config = ConfigDict(extra="forbid")


class RequestPart(Strict):
    """Part of what a person asks for: numbers are finite (YAML reads ``.nan`` and ``.inf`` as floats).

    Not for measured results (``Effect``), where a NaN can be a truthful answer.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


_BRANCH = re.compile(r"[A-Za-z0-9._/-]+")

#: A request rate in req/s: a positive, finite number (``-5``, ``0``, ``.nan`` and ``.inf`` are refused).
Rate = Annotated[float, Field(gt=0, allow_inf_nan=False)]


# --------------------------------------------------------------------------
# Enumerations
# --------------------------------------------------------------------------


class PolicyKind(StrEnum):
    ROUTING = "routing"
    ADMISSION = "admission"
    SCHEDULING = "scheduling"


class Severity(StrEnum):
    """BLIS convergence-protocol severities. CRITICAL and IMPORTANT block a gate."""

    CRITICAL = "CRITICAL"
    IMPORTANT = "IMPORTANT"
    SUGGESTION = "SUGGESTION"

    @property
    def blocking(self) -> bool:
        return self is not Severity.SUGGESTION


class Stage(IntEnum):
    ANALYZE = 1
    TRANSLATE = 2
    HYPOTHESIZE = 3
    IMPLEMENT_TESTS = 4
    RUN_VALIDATE = 5
    DOCUMENT = 6
    PR = 7

    @property
    def title(self) -> str:
        return _STAGE_TITLES[self]


_STAGE_TITLES = {
    Stage.ANALYZE: "analyze",
    Stage.TRANSLATE: "translate",
    Stage.HYPOTHESIZE: "hypothesize",
    Stage.IMPLEMENT_TESTS: "implement tests",
    Stage.RUN_VALIDATE: "run and validate",
    Stage.DOCUMENT: "document",
    Stage.PR: "pull request",
}


class Decision(StrEnum):
    APPROVE = "approve"
    REQUEST_CHANGES = "request-changes"
    REJECT = "reject"


class Family(StrEnum):
    """The six BLIS hypothesis families (docs/contributing/standards/experiments.md)."""

    WORKLOAD_ARRIVAL = "workload-arrival"
    SCHEDULER_INVARIANTS = "scheduler-invariants"
    PERFORMANCE_REGIME = "performance-regime"
    STRUCTURAL_MODEL = "structural-model"
    ROBUSTNESS = "robustness-failure-mode"
    CROSS_POLICY = "cross-policy-comparative"


class VVUQ(StrEnum):
    VERIFICATION = "verification"
    VALIDATION = "validation"
    UQ = "uq"


class HypothesisType(StrEnum):
    DETERMINISTIC = "deterministic"
    DOMINANCE = "statistical/dominance"
    MONOTONICITY = "statistical/monotonicity"
    EQUIVALENCE = "statistical/equivalence"
    PARETO = "statistical/pareto"


class Track(StrEnum):
    A = "A"  # transfer: a BLIS claim rewritten for llm-d
    B = "B"  # gap: a sim-to-real difference (Map B freshness, Map C concern)
    C = "C"  # regression: equivalence / no-regression on baseline scenarios


class Direction(StrEnum):
    """What the evolved treatment should do to a metric, relative to baseline."""

    DECREASE = "decrease"
    INCREASE = "increase"
    EQUIVALENT = "equivalent"  # |change| within the margin (TOST)
    NO_WORSE = "no-worse"  # not worse than the margin in the bad direction (one-sided)


class VerdictStatus(StrEnum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"


# --------------------------------------------------------------------------
# Promotion request
# --------------------------------------------------------------------------


class Origin(RequestPart):
    """Where the evolved program came from, so the PR can cite it."""

    framework: str = "openevolve"
    run: str = Field(description="OpenEvolve run or experiment name")
    iteration: int = Field(ge=0)
    program_id: str | None = None
    fitness: float = Field(description="combined_score of the evolved program")
    baseline_fitness: float | None = None
    blis_version: str | None = Field(default=None, description="BLIS commit or tag the program was evolved on")
    metadata_file: str | None = Field(default=None, description="best_program_info.json, relative to the request file")


class BlisClaim(RequestPart):
    """One BLIS finding that validated the evolved program; becomes a Track A hypothesis."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    statement: str
    metric: str = Field(description="BLIS metric name, e.g. ttft_mean_ms, e2e_p95_ms, tokens_per_sec")
    direction: Literal["decrease", "increase"]
    magnitude: float | None = Field(
        default=None, gt=-1, description="BLIS relative change, e.g. -0.12 for 12% lower (a decrease stops at -1)"
    )
    workload: str = Field(description="name of a workload in `workloads`")
    rate: Rate | None = Field(default=None, description="BLIS request rate (req/s) of the claim")
    family: Family = Family.CROSS_POLICY
    vvuq: VVUQ = VVUQ.VALIDATION
    type: HypothesisType = HypothesisType.DOMINANCE
    mechanism: str | None = None
    seeds: list[int] = Field(default_factory=lambda: [42, 123, 456])

    @model_validator(mode="after")
    def _magnitude_matches_direction(self) -> BlisClaim:
        if (
            self.magnitude is not None
            and self.magnitude != 0
            and (self.magnitude < 0) != (self.direction == "decrease")
        ):
            raise ValueError(
                f"magnitude {self.magnitude:g} contradicts direction {self.direction!r}; a decrease is negative "
                "(e.g. -0.12 for 12% lower), an increase positive"
            )
        return self


class Workload(RequestPart):
    """A benchmark workload: the llm-d-benchmark harness profile it maps to and its operating points."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = ""
    harness: Literal["inference-perf", "guidellm", "vllm-benchmark"] = "inference-perf"
    profile: str = Field(description="llm-d-benchmark workload profile, e.g. shared_prefix_synthetic")
    rates: list[Rate] = Field(min_length=1, description="request rates (req/s) on real GPUs")
    duration_s: int = Field(default=120, gt=0, le=86_400, description="seconds per run; a day at most")
    blis_workload: str | None = Field(default=None, description="BLIS workload spec it corresponds to")
    overrides: dict[str, Any] = Field(default_factory=dict, description="dotted profile overrides")

    @field_validator("rates")
    @classmethod
    def _rates_unique(cls, rates: list[float]) -> list[float]:
        repeated = sorted({r for r in rates if rates.count(r) > 1})
        if repeated:
            raise ValueError(f"rate {repeated[0]:g} is listed twice; each operating point once")
        return rates


class BaselineScenario(RequestPart):
    """An existing llm-d-benchmark scenario the evolved plugin must not regress (Track C)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    workload: str
    rate: Rate | None = None
    guarded_metrics: list[str] = Field(
        default_factory=lambda: ["ttft_mean", "e2e_p95", "throughput"],
        description="short metric names, see bot.bench.metrics",
    )


class ForkTarget(RequestPart):
    repo: str = Field(default="llm-d/llm-d-router", pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    base_branch: str = Field(default="main", description="a git branch name (git check-ref-format)")
    router_version: str = "v0.10.0"

    @field_validator("base_branch")
    @classmethod
    def _branch_name(cls, v: str) -> str:
        if not _BRANCH.fullmatch(v) or re.search(r"\.\.|//|@\{|\.lock$|/$|^/|\.$|(^|/)[.-]", v):
            raise ValueError(f"{v!r} is not a git branch name (letters, digits, '.', '_', '-', '/'; no '..')")
        return v


class PDSplit(RequestPart):
    """A prefill/decode split the cluster can stand up (llm-d-benchmark's guides/pd-disaggregation)."""

    prefill_replicas: int = Field(ge=1, le=256)
    decode_replicas: int = Field(ge=1, le=256)


class LoraSupport(RequestPart):
    """LoRA adapters the cluster can serve; llm-d-benchmark ships no LoRA scenario, so the request says how."""

    adapters: list[str] = Field(min_length=2, description="adapter names requests are sent to (model_name)")
    set: dict[str, Any] = Field(description="dotted scenario overrides that load the adapters on every vLLM pod")


class ClusterSupport(RequestPart):
    """What the benchmark cluster lets the runner do: decides which Track B fault treatments the plan holds."""

    pod_deletion: bool = Field(default=True, description="delete one model-server pod mid-run (kubectl delete pod)")
    metrics_interval: bool = Field(default=True, description="restart the EPP with a longer --refresh-metrics-interval")
    pd_disaggregation: PDSplit | None = None
    lora: LoraSupport | None = None


class StackSpec(RequestPart):
    """The model-server stack the plan's rates and GPU-minutes assume; the experiment pins every field.

    An llm-d-benchmark spec decides the stack otherwise (guides/optimized-baseline deploys
    Qwen3-32B on 2 pods), so a plan calibrated for another model would measure something else.
    """

    spec: str = Field(default="guides/optimized-baseline", description="llm-d-benchmark specification")
    model: str = Field(default="meta-llama/Llama-3.1-8B-Instruct", min_length=1)
    replicas: int = Field(default=4, ge=1, le=256, description="decode (model-server) pods")
    tensor_parallelism: int = Field(default=1, ge=1, le=64, description="GPUs per pod")
    accelerator: str = Field(default="NVIDIA-H100-80GB-HBM3", description="node label value the pods schedule on")
    accelerator_label: str = Field(default="nvidia.com/gpu.product")
    cluster: ClusterSupport = Field(default_factory=ClusterSupport)

    @property
    def gpus(self) -> int:
        return self.replicas * self.tensor_parallelism


class PromotionRequest(RequestPart):
    """What a researcher asks the bot to promote. Built from promotion.yaml or an issue form."""

    id: str = Field(pattern=r"^[0-9A-Za-z][0-9A-Za-z-]*$", description="issue number on GitHub; any short id locally")
    title: str = Field(min_length=3)
    kind: PolicyKind
    source: str = Field(description="path of the evolved program, relative to the request file")
    origin: Origin
    claims: list[BlisClaim] = Field(default_factory=list)
    workloads: list[Workload] = Field(min_length=1)
    evolved_for: str | None = Field(
        default=None, description="the workload the program was evolved on (mechanism check)"
    )
    baselines: list[BaselineScenario] = Field(default_factory=list)
    fork: ForkTarget = Field(default_factory=ForkTarget)
    stack: StackSpec = Field(default_factory=StackSpec, description="the stack the plan assumes and pins")
    plugin_name: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9-]*$",
        description="kebab-case plugin type; derived from the title if absent",
    )

    # Filled by ``load``: the evolved program's text, and where the request lives.
    source_text: str = Field(default="", exclude=True, repr=False)
    base_dir: str = Field(default=".", exclude=True, repr=False)

    @model_validator(mode="after")
    def _workloads_are_known(self) -> PromotionRequest:
        names = {w.name for w in self.workloads}
        if len(names) != len(self.workloads):
            raise ValueError("workloads: names must be unique")
        for claim in self.claims:
            if claim.workload not in names:
                raise ValueError(
                    f"claims[{claim.id}].workload: {claim.workload!r} is not one of workloads {sorted(names)}"
                )
        for b in self.baselines:
            if b.workload not in names:
                raise ValueError(
                    f"baselines[{b.name}].workload: {b.workload!r} is not one of workloads {sorted(names)}"
                )
        if self.evolved_for is not None and self.evolved_for not in names:
            raise ValueError(f"evolved_for: {self.evolved_for!r} is not one of workloads {sorted(names)}")
        if len({c.id for c in self.claims}) != len(self.claims):
            raise ValueError("claims: ids must be unique")
        return self

    @property
    def slug(self) -> str:
        return slugify(self.plugin_name or self.title)

    @property
    def branch(self) -> str:
        return f"promotion/{self.id}-{self.slug}"

    @property
    def plugin_type(self) -> str:
        """kebab-case llm-d plugin type, e.g. ``evolved-adaptive-scorer``."""
        return self.plugin_name or self.slug

    def workload(self, name: str) -> Workload:
        return next(w for w in self.workloads if w.name == name)

    def fingerprint(self) -> str:
        """Content hash of the request and its source: a changed request invalidates finished stages."""
        payload = self.model_dump_json() + "\0" + self.source_text
        return sha256_text(payload)

    @classmethod
    def load(cls, path: str | Path) -> PromotionRequest:
        """Read and validate promotion.yaml. Raises RequestError with a one-line, actionable message."""
        path = Path(path)
        raw = read_yaml_mapping(
            path,
            RequestError,
            missing="no such file; pass the path of a promotion.yaml (see examples/)",
            what="request fields",
        )
        try:
            request = cls.model_validate(raw)
        except ValidationError as exc:
            raise RequestError(f"{path}: {describe_validation_error(exc)}") from None
        src = (path.parent / request.source).resolve()
        if not src.is_file():
            raise RequestError(f"{path}: field 'source': {request.source!r} does not exist next to the request file")
        try:
            text = src.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise RequestError(f"{src}: the evolved source is not UTF-8 text; pass a .go or .py program") from None
        return request.model_copy(update={"source_text": text, "base_dir": str(path.parent.resolve())})

    @property
    def source_path(self) -> Path:
        return Path(self.base_dir) / self.source


class RequestError(ValueError):
    """Bad input from a person: the message names the problem and the fix; never a traceback."""


def describe_validation_error(exc: ValidationError) -> str:
    """The first pydantic error as 'field a.b: message', the form people can act on."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown field (check the spelling against examples/)"
    elif err["type"] == "enum":
        expected = err.get("ctx", {}).get("expected", "")
        msg = f"{err.get('input')!r} is not one of {expected}"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"field '{loc}': {msg}{more}"


# --------------------------------------------------------------------------
# Review findings
# --------------------------------------------------------------------------


class Finding(Strict):
    """One review finding, anchored to a file and line on the promotion branch when it has one."""

    severity: Severity
    check: str = Field(description="checklist item id, e.g. G1.signals-mapped or hazard.inv9-output-tokens")
    message: str
    file: str | None = None
    line: int | None = Field(default=None, ge=1)
    fix: str | None = Field(default=None, description="suggested fix")
    source_line: int | None = Field(default=None, ge=1, description="line in the evolved program it traces back to")
    by: str | None = Field(default=None, description="who raised it: None = the deterministic checklist, else a model")
    recurring: bool = Field(default=False, description="raised again after the author's fix round")

    def key(self) -> tuple:
        """What makes two rounds' findings 'the same finding'. A model words a repeat differently and lines
        move when code changes, so a model's finding is the same when check and file are; the checklist's
        findings are deterministic and must match exactly."""
        if self.by:
            return (self.check, self.file or "")
        return (self.check, self.file or "", self.line, self.source_line, self.message)

    def sort_key(self) -> tuple:
        order = {Severity.CRITICAL: 0, Severity.IMPORTANT: 1, Severity.SUGGESTION: 2}
        return (order[self.severity], self.check, self.file or "", self.line or 0, self.message)


class ReviewRound(Strict):
    gate: int = Field(ge=1, le=3)
    round: int = Field(ge=1)
    reviewer: str = "checklist"
    findings: list[Finding] = Field(default_factory=list)

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.severity.blocking]


# --------------------------------------------------------------------------
# Hypotheses and verdicts
# --------------------------------------------------------------------------


class Prediction(Strict):
    """What one hypothesis predicts, in llm-d-benchmark terms."""

    metric: str = Field(description="short metric name, see bot.bench.metrics (e.g. ttft_mean, e2e_p95)")
    direction: Direction
    margin: float = Field(default=0.05, gt=0, lt=1, description="equivalence / regression margin (relative)")
    blis_magnitude: float | None = Field(
        default=None, allow_inf_nan=False, description="relative change BLIS predicted, for attenuation checks"
    )


class Hypothesis(Strict):
    id: str = Field(pattern=r"^[ABC][0-9]+$")
    track: Track
    title: str
    statement: str
    family: Family
    vvuq: VVUQ
    type: HypothesisType
    diagnostic: str = Field(description='"If this fails, it would indicate ..."')
    workloads: list[str] = Field(min_length=1)
    rates: list[Rate] = Field(default_factory=list, description="empty = every rate of each workload")
    prediction: Prediction | None = Field(default=None, description="None for hypotheses not decided by benchmarks")
    source: str = Field(description="claim id, Map B signal, Map C gap id or baseline scenario it comes from")
    mechanism: str | None = None
    blis_statement: str | None = None
    not_in_plan: str | None = Field(
        default=None,
        description="why the benchmark plan cannot decide it (e.g. a run this cluster cannot do); None otherwise",
    )

    @field_validator("diagnostic")
    @classmethod
    def _diagnostic_clause(cls, v: str) -> str:
        if "if this fails" not in v.lower():
            raise ValueError('diagnostic must contain "If this fails, it would indicate ..."')
        return v


class Effect(Strict):
    """The measured effect of the evolved treatment on one (workload, rate, metric)."""

    workload: str
    rate: float
    metric: str
    baseline_mean: float
    evolved_mean: float
    rel_change: float
    ci_low: float
    ci_high: float
    p_value: float | None = Field(
        default=None, description="one-sided p of the test behind the cell's status (refutation test if refuted)"
    )
    p_adjusted: float | None = Field(
        default=None,
        description=(
            "p_value after promotion-wide multiplicity control, on the alpha scale: <= alpha exactly when the "
            "test behind the cell's status decides it"
        ),
    )
    test: str = ""
    cv_baseline: float
    t_eff: float
    n_baseline: int = Field(description="baseline repetitions used (outlier runs excluded)")
    n_evolved: int = Field(description="evolved repetitions used (outlier runs excluded)")
    excluded_runs: list[str] = Field(
        default_factory=list, description="outlier runs flagged by the robust rule and left out, with why"
    )
    status: VerdictStatus | None = Field(default=None, description="this cell's own verdict")
    reason: str = Field(default="", description="why this cell is confirmed, refuted or inconclusive")


class Verdict(Strict):
    hypothesis_id: str
    status: VerdictStatus
    summary: str
    effects: list[Effect] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list, description="mechanism, shedding, attenuation, noise warnings")


class FidelityCause(Strict):
    """One mapping between BLIS's view and llm-d's, and the disagreements switching it off removes."""

    mapping: str = Field(description="mapping id (bot.golang.harness_world.MAPPINGS) or a structural cause")
    title: str
    why: str = ""
    states: int = Field(ge=0, description="disagreeing states whose agreement rises when this mapping is switched off")
    agreement_without: float = Field(ge=0, le=1, description="agreement with only this mapping switched off")
    examples: list[str] = Field(default_factory=list, description="a few concrete disagreeing states, one line each")


class Fidelity(Strict):
    """How often the plugin, as llm-d runs it, decides like the BLIS original on sampled states."""

    measured: bool = True
    reason: str = Field(default="", description="why it was not measured, when measured is false")
    decision: str = Field(default="", description="what is compared: the chosen endpoint, or admit/reject")
    states: int = Field(default=0, ge=0)
    seed: int = 0
    agreement: float = Field(default=0.0, ge=0, le=1)
    agreement_all_off: float = Field(default=0.0, ge=0, le=1, description="with every mapping switched off")
    floor: float = Field(default=0.99, ge=0, le=1)
    all_high_fidelity: bool = False
    causes: list[FidelityCause] = Field(default_factory=list, description="largest first")
    unattributed: int = Field(default=0, ge=0, description="disagreements no mapping explains")
    errors: int = Field(default=0, ge=0, description="states where either side failed")
    notes: list[str] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict, description="plugin file -> sha256 of what was measured")

    @property
    def below_floor(self) -> bool:
        return self.measured and self.agreement < self.floor


class TranslationSummary(Strict):
    """What stage 2 hands to stage 3 (committed as translation.json beside the translation report)."""

    kind: PolicyKind
    plugin_type: str
    package_dir: str = Field(description="branch-relative directory of the generated plugin package")
    signals: list[str] = Field(description="canonical BLIS signals the evolved logic reads")
    freshness_gaps: list[str] = Field(default_factory=list, description="signals whose Map B entry has a freshness gap")
    touched_gaps: list[str] = Field(default_factory=list, description="Map C gap ids the policy touches")
    thresholds: dict[str, float] = Field(default_factory=dict, description="plugin parameter name -> evolved default")
    untranslatable: list[str] = Field(default_factory=list, description="signals with no llm-d source (fallback used)")
    registration_import: str = Field(default="", description="import for cmd/epp/runner/runner.go")
    registration_line: str = Field(default="", description="the plugin.Register(...) line in registerInTreePlugins()")
    findings: list[Finding] = Field(default_factory=list)
    fidelity: Fidelity | None = Field(default=None, description="the differential check against the BLIS original")


# --------------------------------------------------------------------------
# Pipeline state
# --------------------------------------------------------------------------


class Artifact(Strict):
    path: str = Field(description="path on the promotion branch")
    sha256: str
    stage: Stage


class StageRecord(Strict):
    stage: Stage
    inputs_hash: str = Field(description="hash of everything the stage read; equal hash = nothing to redo")
    artifacts: list[Artifact] = Field(default_factory=list)
    commit: str | None = None
    feedback: str | None = Field(default=None, description="a person's reason the stage ran with")
    review: str | None = Field(default=None, description="review findings the author-fix rerun was given")
    summary: str = ""
    problems: list[str] = Field(
        default_factory=list,
        description="what the stage's own checks found wrong (e.g. failing Go tests); its gate's review raises "
        "them as blocking findings, and no status shows this stage as passed",
    )
    finished_at: datetime


class GateDecision(Strict):
    gate: int = Field(ge=1, le=3)
    decision: Decision
    actor: str
    at: datetime
    reason: str | None = None


class AuditEntry(Strict):
    at: datetime
    actor: str
    event: str
    detail: str = ""
    role: str | None = Field(default=None, description="the actor's role on the repository when they acted (GitHub)")
    delivery: str | None = Field(default=None, description="the GitHub event (run or delivery id) that carried it")


class Status(StrEnum):
    RUNNING = "running"  # a stage or a review is due
    AWAITING_DECISION = "awaiting-decision"  # a gate's review converged; a human decides
    FAILED = "failed"  # a stage could not finish; a retry runs it again
    CANCELLED = "cancelled"  # a person stopped the promotion; a retry continues where it stopped
    DONE = "done"  # stage 7 finished
    REJECTED = "rejected"


class StageFailure(Strict):
    """Why the due stage could not finish, and what a person does about it."""

    stage: Stage
    reason: str
    fix: str = Field(default="", description="what to change before retrying, when the reason alone does not say")
    at: datetime


class LLMCall(Strict):
    """One call to the Claude API: what it was for and what it cost, from the response's usage fields."""

    role: Literal["author", "reviewer"]
    prompt: str = Field(description="template id@version")
    model: str
    stage: int | None = None
    gate: int | None = None
    round: int | None = None
    attempt: int = Field(default=1, ge=1, description="2 = the re-ask after a reply that did not validate")
    input_tokens: int = Field(default=0, ge=0, description="uncached input tokens")
    output_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    usd: float | None = Field(default=None, description="estimated list-price cost; None when the model is unpriced")
    valid: bool = True

    @property
    def step(self) -> str:
        return f"gate {self.gate}" if self.gate is not None else f"stage {self.stage}"

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens


class LLMTotals(Strict):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    usd: float | None = 0.0

    def add(self, call: LLMCall) -> None:
        self.calls += 1
        self.input_tokens += call.input_tokens
        self.output_tokens += call.output_tokens
        self.cache_write_tokens += call.cache_write_tokens
        self.cache_read_tokens += call.cache_read_tokens
        self.usd = None if self.usd is None or call.usd is None else self.usd + call.usd

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens

    @property
    def tokens(self) -> int:
        """Everything processed: what the promotion's token budget counts."""
        return self.total_input + self.output_tokens

    @property
    def cache_share(self) -> float | None:
        """Share of input tokens read from the prompt cache."""
        return self.cache_read_tokens / self.total_input if self.total_input else None


class LLMUsage(Strict):
    """Every Claude call of a promotion, kept in the state so cost is visible per call, step and promotion."""

    calls: list[LLMCall] = Field(default_factory=list)

    def totals(self) -> LLMTotals:
        t = LLMTotals()
        for c in self.calls:
            t.add(c)
        return t

    def by_step(self) -> dict[str, LLMTotals]:
        """'stage N' / 'gate N' -> totals, in pipeline order."""
        out: dict[str, LLMTotals] = {}
        order = {f"stage {s}": (s, 0) for s in range(1, 8)} | {"gate 1": (2, 1), "gate 2": (3, 1), "gate 3": (5, 1)}
        for c in sorted(self.calls, key=lambda c: order.get(c.step, (9, 9))):
            out.setdefault(c.step, LLMTotals()).add(c)
        return out


class PipelineState(Strict):
    """Everything needed to resume a promotion. Saved after every step."""

    schema_version: Literal[1] = 1
    request_id: str
    request_fingerprint: str
    branch: str
    status: Status = Status.RUNNING
    next_stage: Stage | None = Stage.ANALYZE
    open_gate: int | None = Field(default=None, description="gate whose review/decision is due")
    review_round: int = Field(default=0, description="review rounds run at the open gate since its last decision")
    author_changed: bool = Field(default=False, description="an author-fix pass at the open gate changed an artifact")
    stages: dict[int, StageRecord] = Field(default_factory=dict)
    reviews: dict[int, list[ReviewRound]] = Field(default_factory=dict)
    unconverged: list[int] = Field(default_factory=list, description="gates whose review ran out of rounds")
    decisions: list[GateDecision] = Field(default_factory=list)
    pending_feedback: dict[int, str] = Field(
        default_factory=dict,
        description="stage -> a person's reason (request changes); kept until the gate is decided again",
    )
    review_findings: dict[int, str] = Field(
        default_factory=dict, description="stage -> blocking review findings for its author-fix rerun"
    )
    failure: StageFailure | None = Field(default=None, description="set while status is failed")
    head: str | None = Field(
        default=None,
        description="the commit the bot last left the promotion branch at (None: a state saved before it was kept)",
    )
    cancelled_from: Status | None = Field(default=None, description="the status a cancel interrupted")
    llm: LLMUsage = Field(default_factory=LLMUsage, description="Claude calls and their cost (empty offline)")
    handled_events: list[str] = Field(
        default_factory=list,
        description="ids of the GitHub events already acted on (the last 200), so a replay is a no-op",
    )
    audit: list[AuditEntry] = Field(default_factory=list)

    def artifact_index(self) -> list[Artifact]:
        return [a for s in sorted(self.stages) for a in self.stages[s].artifacts]


# --------------------------------------------------------------------------
# Small shared helpers
# --------------------------------------------------------------------------


def read_yaml_mapping(path: Path, error: type[RequestError], *, missing: str, what: str = "fields") -> dict:
    """A YAML file whose top level is a mapping, or ``error`` with one line that says what is wrong and where."""
    if not path.is_file():
        raise error(f"{path}: {missing}")
    try:
        raw = load_yaml(read_yaml_text(path))
    except YamlInputError as exc:
        raise error(f"{path}: {exc}; fix the file") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not UTF-8 text; re-save it as UTF-8") from None
    if not isinstance(raw, dict):
        raise error(f"{path}: expected a mapping of {what} at the top level")
    return raw


def sha256_text(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def slugify(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:48].rstrip("-") or "promotion"
