"""The priority mix a plan adds for an admitter.

Every workload the plan writes sends its requests with no InferenceObjective, so every request
has priority 0 (the EPP's default). An admitter is then measured on one class only: it never
sees a sheddable request (priority < 0), so whether it sheds batch traffic first and keeps
critical traffic admitted is never measured, and that is what people who promote an admitter
want to know.

A scheduler or router that reads the class (``CLASS_SIGNALS``) gets no mix: the mix is judged by
per-class admit rate only (``bot.stats.admission``: the shedding order of ``bot.stats.shedding``),
which decides nothing for a policy that sheds nothing, and no hypothesis of such a policy is judged
on it. It used to get one: two stand-ups and six runs (348 GPU-minutes on a four-GPU stack) that decided
nothing, then gate 3's ``G3.priority-mix`` about shedding when no result came. Its class-dependent
latency is judged on the single-priority cells, and gate 2 says so (``G2.priority-exercised``).

So the plan adds one workload run with llm-d-benchmark's ``priority-mix`` harness
(``workload/profiles/priority-mix/priority_mix.yaml.in``): traffic classes with their own
``x-llm-d-inference-objective`` header, resolved to priorities by the InferenceObjectives the
scenario declares (``router.inferenceObjectives``, the llm-d-router chart's list of
``{name, priority}``). Upstream's harness is fixed per experiment, so the mix is its own
experiment: two more stand-ups, priced in the plan's GPU-minutes. Stage 5 judges it per class
(``bot.bench.priority_mix`` reads the results).
"""

from __future__ import annotations

import copy
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bot.model import PolicyKind, PromotionRequest
from bot.yaml_safe import load_yaml

#: The signals that carry a request's class (bot.review.gate2 names them too).
CLASS_SIGNALS = ("SLOClass", "Priority")
WORKLOAD = "priority-mix"
HARNESS = "priority-mix"
UPSTREAM_PROFILE = Path(__file__).resolve().parent / "profiles" / "priority-mix" / "priority_mix.yaml.in"
#: Runs per arm. The verdict pools each class's requests over the runs; three runs show whether the
#: shedding is steady from run to run (the seed's repetitions, ``bot.bench.plan_model.NAIVE_REPETITIONS``).
REPETITIONS = 3


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrafficClass(_Model):
    """One class of the mix: its share of the requests, its priority and the objective that carries it."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    weight: float = Field(gt=0)
    priority: int
    objective: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$", description="InferenceObjective name (a DNS label)")
    fairness_id: str

    @property
    def sheddable(self) -> bool:
        """The EPP sheds only requests of negative priority (``requtil.IsSheddable``)."""
        return self.priority < 0


#: Upstream's classes (priority_mix.yaml.in): critical 100, normal 0, batch -10 (sheddable).
DEFAULT_CLASSES = (
    TrafficClass(name="critical", weight=0.2, priority=100, objective="app-critical", fairness_id="tenant-critical"),
    TrafficClass(name="normal", weight=0.6, priority=0, objective="app-normal", fairness_id="tenant-normal"),
    TrafficClass(name="batch", weight=0.2, priority=-10, objective="app-batch", fairness_id="tenant-batch"),
)


class PriorityMixPlan(_Model):
    """The priority-mix workload of a plan: its load, classes, repetitions and what it costs."""

    reason: str = Field(description="why the plan includes it")
    policy_kind: PolicyKind | None = Field(
        default=None, description="the kind of policy it was planned for (None: a plan from before this was recorded)"
    )
    workload: str = WORKLOAD
    harness: str = HARNESS
    profile: str = "priority_mix"
    rate: float = Field(gt=0, description="requests per second (upstream's load.rate_per_second)")
    duration_s: float = Field(gt=0, description="upstream's load.duration_seconds")
    repetitions: int = Field(ge=2)
    classes: list[TrafficClass]
    standups: int
    runs: int
    gpu_minutes: float

    def run_treatment(self, n: int) -> str:
        from bot.bench.layout import run_treatment_name

        return run_treatment_name(self.workload, self.rate, n)


def upstream_profile() -> dict:
    """llm-d-benchmark's priority_mix.yaml.in as a mapping (copied unchanged, profiles/NOTICE.md)."""
    return load_yaml(UPSTREAM_PROFILE.read_text(encoding="utf-8"))


def translated_signals(summary) -> list[str]:
    """The signals a translation's plugin really reads (a ``bot.model.TranslationSummary``): its signals less the
    untranslatable ones, which it holds constant. The class signals gate 2 checks (``G2.priority-exercised``)."""
    return [s for s in summary.signals if s not in summary.untranslatable]


#: What to change so the cells measure an admitter that never sheds their priority-0 traffic.
UNEXERCISED_FIX = (
    "benchmark it on traffic it can shed: workloads whose requests name an InferenceObjective of negative priority "
    "(inference-perf `api.headers` with x-llm-d-inference-objective, the objective declared in the scenario's "
    "router.inferenceObjectives), or a priority mix judged by per-class latency"
)


def sheds_nothing(summary) -> str | None:
    """Why the single-priority cells cannot measure this admitter, when its translation shows it: None otherwise.

    Every planned cell sends priority 0 (no InferenceObjective). The translation's behaviour states
    (``TranslationSummary.behaviour``) record what a fresh plugin decides on an idle and on an overloaded pool;
    one that admits priority 0 on both never sheds on these cells, so it measures like the baseline and any
    difference the cells show is noise or a confound, not the plugin (a02: only sheddable traffic is shed).
    A stateful admitter can reject after a history the fresh plugin never saw, so nothing is established for it,
    nor when the harness did not run (no behaviour recorded).
    """
    if summary.kind is not PolicyKind.ADMISSION or summary.stateful:
        return None
    if not all(summary.behaviour.get(f"{pool}:0") == "admit" for pool in ("idle", "overloaded")):
        return None
    return (
        "the admitter admits priority 0 even on an overloaded pool (32 waiting requests and a 97%-full KV cache on "
        "every endpoint, the generated behaviour test), and every planned cell sends priority 0 (no "
        "InferenceObjective), so on these cells it sheds nothing, like the baseline"
    )


#: Why an admitter's plan has a priority mix (``PriorityMixPlan.reason``): the only reason a plan gets one.
ADMITTER_REASON = (
    "an admitter: whether it sheds sheddable (priority < 0) traffic first needs traffic of several classes"
)


def priority_mix_reason(request: PromotionRequest) -> str | None:
    """Why this promotion needs a priority mix (None: it does not): only an admitter's shedding order is judged
    on it (``bot.stats.shedding.shedding_hypothesis``), so only an admitter gets one, whatever else reads the
    class. One rule for every planner (stage 4, `promote plan`, `promote bench run`, gate 2's brief)."""
    if request.kind is PolicyKind.ADMISSION:
        return ADMITTER_REASON
    return None


def planned_for(pm: PriorityMixPlan) -> PolicyKind | None:
    """The kind of policy a plan's mix was planned for, as the plan records it, so a reader with the evaluation
    spec but no request (`promote evaluate --spec`) judges the mix as stage 5 does. A plan from before the kind
    was recorded is an admitter's when its reason is the admitter's; None for a mix such a plan gave a scheduler
    or router (its reason names the class signals it read): nothing then says it decides a claim."""
    if pm.policy_kind is not None:
        return pm.policy_kind
    return PolicyKind.ADMISSION if pm.reason == ADMITTER_REASON else None


def plan_priority_mix(
    reason: str,
    *,
    gpus_per_stack: int,
    standup_minutes: float,
    run_overhead_minutes: float,
    policy_kind: PolicyKind | None = PolicyKind.ADMISSION,
) -> PriorityMixPlan:
    """Upstream's load and classes, REPETITIONS runs per arm, priced like the plan's cells (its own stand-ups)."""
    load = upstream_profile()["load"]
    rate, duration = float(load["rate_per_second"]), float(load["duration_seconds"])
    runs = REPETITIONS * 2
    minutes = 2 * standup_minutes + runs * (duration / 60.0 + run_overhead_minutes)
    return PriorityMixPlan(
        reason=reason,
        policy_kind=policy_kind,
        rate=rate,
        duration_s=duration,
        repetitions=REPETITIONS,
        classes=list(DEFAULT_CLASSES),
        standups=2,
        runs=runs,
        gpu_minutes=round(minutes * gpus_per_stack, 3),
    )


def priority_mix_for(request: PromotionRequest, params) -> PriorityMixPlan | None:
    """The mix ``make_plan`` adds (None: not an admitter), priced with the plan's ``params``
    (``bot.bench.plan_model.CostParameters``: GPUs per stack, stand-up and run overhead minutes)."""
    reason = priority_mix_reason(request)
    if reason is None:
        return None
    return plan_priority_mix(
        reason,
        policy_kind=request.kind,
        gpus_per_stack=params.gpus_per_stack,
        standup_minutes=params.standup_minutes,
        run_overhead_minutes=params.run_overhead_minutes,
    )


def priority_mix_profile(pm: PriorityMixPlan) -> tuple[dict, list[str]]:
    """(profile, what differs from upstream's): the plan's load and classes; each class keeps upstream's request."""
    doc = copy.deepcopy(upstream_profile())
    changes = []
    load = doc["load"]
    for key, value in (("rate_per_second", pm.rate), ("duration_seconds", pm.duration_s)):
        if load.get(key) != value:
            changes.append(f"load.{key}: {load.get(key)!r} -> {value!r}")
            load[key] = value
    upstream = {c.get("name"): c for c in doc.get("trafficClasses") or []}
    classes = []
    for c in pm.classes:
        entry = copy.deepcopy(upstream.get(c.name) or {})
        entry.update(name=c.name, weight=c.weight, priority=c.priority, objective=c.objective, fairnessID=c.fairness_id)
        if entry != upstream.get(c.name):
            changes.append(
                f"trafficClasses {c.name}: weight {c.weight:g}, priority {c.priority}, objective {c.objective}"
            )
        classes.append(entry)
    doc["trafficClasses"] = classes
    return doc, changes


def inference_objectives(pm: PriorityMixPlan) -> list[dict]:
    """``router.inferenceObjectives`` (the llm-d-router chart's list): one per class, so its header resolves to its
    priority instead of falling back to 0."""
    return [{"name": c.objective, "priority": c.priority} for c in pm.classes]
