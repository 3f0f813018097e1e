"""What a person asks for: the promotion request, from ``promotion.yaml`` or the GitHub issue form, and its parts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import Field, ValidationError, field_validator, model_validator

from bot.model.base import (
    BRANCH_NAME,
    VVUQ,
    Family,
    HypothesisType,
    PolicyKind,
    Rate,
    RequestError,
    RequestPart,
    describe_validation_error,
    read_yaml_mapping,
    sha256_text,
    slugify,
)

# --------------------------------------------------------------------------
# Promotion request
# --------------------------------------------------------------------------

#: What an evolved program's file name ends in (bot.golang.source reads both); never a request.
PROGRAM_SUFFIXES = (".go", ".py")
_GO_PACKAGE = re.compile(r"^package\s+[A-Za-z_]\w*\s*$", re.MULTILINE)


def _looks_like_go(path: Path) -> bool:
    """A Go file under another name: a ``package`` clause on a line of its own, which no request holds."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return False
    return bool(_GO_PACKAGE.search(head))


def _program_not_request(path: Path) -> str:
    return (
        f"{path}: this looks like the evolved program, not the request; pass the promotion.yaml (request) whose "
        "`source:` names it (see examples/weighted-adaptive/promotion.yaml)"
    )


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


class EvolvedOn(NamedTuple):
    """What the request says about the BLIS copy the program was evolved on, read once by the caller so the Go
    analysis reads no file (``bot.golang.blis_era`` weighs it against the program's own names)."""

    #: best_program_info.json's ``timestamp`` (Unix seconds, when OpenEvolve recorded the program), if any
    timestamp: float | None = None
    #: ``origin.blis_version`` as written (free text: a commit, a date, "after 9a603bca")
    blis_version: str | None = None
    #: ``origin.metadata_file``, to name the timestamp's file in a finding
    metadata_file: str | None = None


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
    signals: list[str] | None = Field(
        default=None,
        # Left out of the request's hashes while unset, as every field added after the first release must be, so
        # requests written before it keep their fingerprints (tests/model/test_request_fingerprint.py).
        exclude_if=lambda v: v is None,
        description=(
            "the BLIS signals the mechanism reads, e.g. [EffectiveLoad] (canonical names or older aliases); "
            "when absent, the signals the mechanism and statement name are used"
        ),
    )
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
        description="short metric names, see bot.model.metrics",
    )


class ForkTarget(RequestPart):
    repo: str = Field(default="llm-d/llm-d-router", pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    base_branch: str = Field(default="main", description="a git branch name (git check-ref-format)")
    router_version: str = "v0.10.0"

    @field_validator("base_branch")
    @classmethod
    def _branch_name(cls, v: str) -> str:
        if not BRANCH_NAME.fullmatch(v) or re.search(r"\.\.|//|@\{|\.lock$|/$|^/|\.$|(^|/)[.-]", v):
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


def reference_problems(
    workloads: list[str], claims: list[tuple[str, str]], baselines: list[tuple[str, str]], evolved_for: str | None
) -> list[str]:
    """Every name that points at no workload, or that is not unique, each message starting with its field.

    Plain values in, so the issue form can list these next to the field errors of the same submission (pydantic
    runs the model's own check only once every field is valid, which would cost the person one more round)."""
    names = set(workloads)
    out = []
    if len(names) != len(workloads):
        out.append("workloads: names must be unique")
    for cid, workload in claims:
        if workload not in names:
            out.append(f"claims[{cid}].workload: {workload!r} is not one of workloads {sorted(names)}")
    for name, workload in baselines:
        if workload not in names:
            out.append(f"baselines[{name}].workload: {workload!r} is not one of workloads {sorted(names)}")
    if evolved_for is not None and evolved_for not in names:
        out.append(
            f"evolved_for: {evolved_for!r} is not one of workloads {sorted(names)}; name the workload "
            "the program was evolved on, or leave evolved_for out"
        )
    if len({cid for cid, _ in claims}) != len(claims):
        out.append("claims: ids must be unique")
    return out


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
    fidelity_floor: float | None = Field(
        default=None,
        ge=0.5,
        le=1.0,
        # Left out of the request's hashes while unset, so requests written before it keep their fingerprints.
        exclude_if=lambda v: v is None,
        description="gate 1's agreement floor (the share of sampled states where the plugin must decide like the "
        "BLIS original); default 0.99 when every signal the logic reads is high-fidelity, else 0.95",
    )
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
        problems = reference_problems(
            [w.name for w in self.workloads],
            [(c.id, c.workload) for c in self.claims],
            [(b.name, b.workload) for b in self.baselines],
            self.evolved_for,
        )
        if problems:
            raise ValueError(problems[0])
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

    def parts(self) -> dict[str, str]:
        """A content hash per part of the request: each field, the program (``source`` with its text) and the
        plugin type the branch and the plugin are named after. Comparing them says *what* an edit changed, so
        a promotion redoes only the stages that read it (``bot.model.request_parts.request_change``)."""
        dumped = self.model_dump(mode="json")
        out = {k: sha256_text(json.dumps(v, sort_keys=True)) for k, v in dumped.items()}
        out["source"] = sha256_text(json.dumps([self.source, self.source_text]))
        out["plugin_type"] = sha256_text(self.plugin_type)
        return out

    @classmethod
    def load(cls, path: str | Path) -> PromotionRequest:
        """Read and validate promotion.yaml. Raises RequestError with a one-line, actionable message."""
        path = Path(path)
        if path.is_dir():  # "no such file" would send people looking for a file that is not missing
            inside = path / "promotion.yaml"
            fix = f"pass {inside}" if inside.is_file() else "pass the path of a promotion.yaml (see examples/)"
            raise RequestError(f"{path}: is a directory, not a request file; {fix}")
        if path.suffix in PROGRAM_SUFFIXES and path.is_file():
            raise RequestError(_program_not_request(path))
        try:
            raw = read_yaml_mapping(
                path,
                RequestError,
                missing="no such file; pass the path of a promotion.yaml (see examples/)",
                what="request fields",
            )
        except RequestError:
            if _looks_like_go(path):  # a YAML error at a tab on line 4 would send people editing their program
                raise RequestError(_program_not_request(path)) from None
            raise
        try:
            request = cls.model_validate(raw)
        except ValidationError as exc:
            raise RequestError(f"{path}: {describe_validation_error(exc)}") from None
        src = (path.parent / request.source).resolve()
        if src.is_dir():  # "does not exist" would send people looking for something that is there
            raise RequestError(
                f"{path}: field 'source': {request.source!r} is a directory; name the evolved program file in it"
            )
        if not src.is_file():
            raise RequestError(f"{path}: field 'source': {request.source!r} does not exist next to the request file")
        try:
            text = src.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise RequestError(f"{src}: the evolved source is not UTF-8 text; pass a .go or .py program") from None
        return request.model_copy(update={"source_text": text, "base_dir": str(path.parent.resolve())})

    def evolved_on(self) -> EvolvedOn:
        """``origin.blis_version`` and the metadata file's ``timestamp``. An absent or unreadable file gives no
        timestamp: preflight (``check_origin``) refuses a request whose metadata file is missing or not JSON before
        any stage runs, so here it only means "no date"."""
        origin = self.origin
        if origin is None:
            return EvolvedOn()
        stamp = None
        if origin.metadata_file:
            try:
                info = json.loads((Path(self.base_dir) / origin.metadata_file).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError):
                info = None
            value = info.get("timestamp") if isinstance(info, dict) else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                stamp = float(value)
        return EvolvedOn(stamp, origin.blis_version, origin.metadata_file)

    @property
    def source_path(self) -> Path:
        return Path(self.base_dir) / self.source
