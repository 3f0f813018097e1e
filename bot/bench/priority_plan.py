"""The priority mix a plan adds for a policy that decides by the request's class.

Every workload the plan writes sends its requests with no InferenceObjective, so every request
has priority 0 (the EPP's default). An admitter is then measured on one class only: it never
sees a sheddable request (priority < 0), so whether it sheds batch traffic first and keeps
critical traffic admitted is never measured, and that is what people who promote an admitter
want to know. A scheduler or router whose evolved logic reads the class (``CLASS_SIGNALS``) has
the same problem.

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
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bot.model import Hypothesis, PolicyKind, PromotionRequest, Track
from bot.yaml_safe import load_yaml

#: The signals that carry a request's class (bot.review.gate2 names them too).
CLASS_SIGNALS = ("SLOClass", "Priority")
WORKLOAD = "priority-mix"
HARNESS = "priority-mix"
UPSTREAM_PROFILE = Path(__file__).resolve().parent / "profiles" / "priority-mix" / "priority_mix.yaml.in"
#: Runs per arm. The verdict pools each class's requests over the runs; three runs show whether the
#: shedding is steady from run to run (the seed's repetitions, ``bot.bench.plan.NAIVE_REPETITIONS``).
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
    untranslatable ones, which it holds constant. What stage 4 passes ``make_plan`` and gate 2 checks."""
    return [s for s in summary.signals if s not in summary.untranslatable]


def signals_of_json(text: str | None) -> list[str]:
    """``translated_signals`` of a translation.json text (stage 2's, on the branch); [] when there is none or it
    does not parse (stage 4 would have failed on it first). What every planning caller passes ``make_plan``."""
    from pydantic import ValidationError

    from bot.model import TranslationSummary

    if not text:
        return []
    try:
        return translated_signals(TranslationSummary.model_validate_json(text))
    except ValidationError:
        return []


def priority_mix_reason(
    request: PromotionRequest, hypotheses: Sequence[Hypothesis], signals: Iterable[str] = ()
) -> str | None:
    """Why this promotion needs a priority mix (None: it does not).

    An admitter always decides by class (shedding needs sheddable requests); a scheduler or router does
    when its evolved logic reads a class signal (``signals``, the translation's) or a benchmarked Track A
    claim's mechanism does.
    """
    if request.kind is PolicyKind.ADMISSION:
        return "an admitter: whether it sheds sheddable (priority < 0) traffic first needs traffic of several classes"
    read = sorted(set(signals) & set(CLASS_SIGNALS))
    claims = [h.id for h in hypotheses if h.track is Track.A and h.benchmarked and set(h.signals) & set(CLASS_SIGNALS)]
    if not read and not claims:
        return None
    said = [f"its evolved logic reads {', '.join(read)}"] if read else []
    said += [f"{', '.join(claims)} claim a class-dependent mechanism"] if claims else []
    return f"a {request.kind.value} policy that decides by the request's class ({'; '.join(said)})"


def plan_priority_mix(
    reason: str, *, gpus_per_stack: int, standup_minutes: float, run_overhead_minutes: float
) -> PriorityMixPlan:
    """Upstream's load and classes, REPETITIONS runs per arm, priced like the plan's cells (its own stand-ups)."""
    load = upstream_profile()["load"]
    rate, duration = float(load["rate_per_second"]), float(load["duration_seconds"])
    runs = REPETITIONS * 2
    minutes = 2 * standup_minutes + runs * (duration / 60.0 + run_overhead_minutes)
    return PriorityMixPlan(
        reason=reason,
        rate=rate,
        duration_s=duration,
        repetitions=REPETITIONS,
        classes=list(DEFAULT_CLASSES),
        standups=2,
        runs=runs,
        gpu_minutes=round(minutes * gpus_per_stack, 3),
    )


def priority_mix_for(
    request: PromotionRequest, hypotheses: Sequence[Hypothesis], signals: Iterable[str], params
) -> PriorityMixPlan | None:
    """The mix ``make_plan`` adds (None: the policy does not decide by class), priced with the plan's
    ``params`` (``bot.bench.plan.CostParameters``: GPUs per stack, stand-up and run overhead minutes)."""
    reason = priority_mix_reason(request, hypotheses, signals)
    if reason is None:
        return None
    return plan_priority_mix(
        reason,
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
