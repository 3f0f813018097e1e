"""Track B run conditions ("fault treatments"): the runs that decide the Map C gaps the standard plan cannot.

A condition is carried in a cell's workload name after ``+`` (``load-spikes+pod-failure``,
see ``bot.bench.layout``), so the statistics compare baseline and evolved under the same
condition exactly as they compare them on a plain workload. Each condition says which
Map C gap it decides, whether it acts during a run (the runner deletes a pod) or on the
stand-up (other EPP flags, another model-server topology), and whether the request's
cluster can run it; when it cannot, the hypothesis is reported as not runnable with the
reason instead of silently inconclusive.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.bench.layout import TREATMENTS
from bot.model import StackSpec
from bot.model.evidence import CONDITION_NOT_RECORDED

#: The EPP metrics refresh interval under the metric-staleness condition (llm-d-router's
#: --refresh-metrics-interval, default 50 ms, which is also BLIS's snapshot refresh).
STALE_METRICS_INTERVAL = "1s"
#: The Map B signals llm-d reads from the endpoint metrics metrics-data-source scrapes on that
#: interval (vLLM's waiting / running / KV-usage / LoRA gauges and what is derived from them). Not
#: InFlightRequests: inflight-load-producer counts dispatches synchronously, whatever the interval.
SCRAPED_SIGNALS = frozenset(
    {"QueueDepth", "BatchSize", "KVUtilization", "FreeKVBlocks", "KvTokensInUse", "ResidentAdapters"}
)
#: The EPP plugin that counts dispatches per endpoint as they happen (llm-d's InFlightRequests).
INFLIGHT_PRODUCER = "inflight-load-producer"


def scraped_signals(epp_plugins: Iterable[str] | None = None) -> frozenset[str]:
    """The Map B signals whose freshness the metric-staleness condition changes, for a deployed EndpointPickerConfig
    running ``epp_plugins`` (None: not known, the generated config's producer assumed). Without
    inflight-load-producer, InFlightRequests falls back to the scraped queued + running gauges, so it is scraped too."""
    if epp_plugins is not None and INFLIGHT_PRODUCER not in epp_plugins:
        return SCRAPED_SIGNALS | {"InFlightRequests"}
    return SCRAPED_SIGNALS


#: Condition name -> the Map B signals whose freshness it changes, given the deployed EPP plugins. The one source
#: of which run can decide which freshness gap: Track B folds a gap into the hypothesis run under the condition
#: (bot.hypotheses.track_b), the translation report points each gap at it (bot.golang.report).
FRESHNESS_CONDITIONS = {"metric-staleness": scraped_signals}


def conditions_changing(parts: Iterable[str], epp_plugins: Iterable[str] | None = None) -> list[str]:
    """The names of the conditions that change the freshness of any of ``parts`` (a signal, or a method
    signal's components) in a deployment running ``epp_plugins``; [] when no condition does."""
    wanted = set(parts)
    plugins = list(epp_plugins) if epp_plugins is not None else None
    return [name for name, of in FRESHNESS_CONDITIONS.items() if wanted & of(plugins)]


@dataclass(frozen=True)
class Condition:
    name: str
    gap: str
    level: Literal["run", "setup"]
    what: str
    overrides: dict[str, Any] = field(default_factory=dict)
    #: Map B signals whose freshness in llm-d this condition changes (a method signal such as
    #: EffectiveLoad counts when one of its components is here): a Map B freshness hypothesis on
    #: them is decided under this condition (bot.hypotheses.track_b), the others need another run. This is the
    #: set for the generated config; ``conditions_changing`` answers for a known deployed one.
    freshness_of: frozenset[str] = frozenset()

    @property
    def epp_only(self) -> bool:
        """Differs from the plain stack only in the EPP: the model servers can stay up (fast swap)."""
        return all(k.startswith("router.epp.") for k in self.overrides)


def conditions_for(stack: StackSpec) -> dict[str, Condition | str]:
    """Condition name -> the Condition, or the reason this cluster cannot run it."""
    cluster = stack.cluster
    out: dict[str, Condition | str] = {}
    out["pod-failure"] = (
        Condition(
            "pod-failure",
            "pod-health",
            "run",
            "one model-server pod deleted (kubectl delete pod) at t = duration/2 of each run, in both arms",
        )
        if cluster.pod_deletion
        else "the request's stack.cluster.pod_deletion is false: the runner may not delete model-server pods"
    )
    out["metric-staleness"] = (
        Condition(
            "metric-staleness",
            "metric-staleness",
            "setup",
            f"the EPP restarted with --refresh-metrics-interval={STALE_METRICS_INTERVAL} (default 50ms), in both arms",
            {"router.epp.flags.refresh-metrics-interval": STALE_METRICS_INTERVAL},
            scraped_signals(),
        )
        if cluster.metrics_interval
        else "the request's stack.cluster.metrics_interval is false: the EPP's refresh interval may not be changed"
    )
    pd = cluster.pd_disaggregation
    out["pd-split"] = (
        Condition(
            "pd-split",
            "pd-role-split",
            "setup",
            f"a prefill/decode split ({pd.prefill_replicas} prefill, {pd.decode_replicas} decode pods)",
            {"prefill.enabled": True, "prefill.replicas": pd.prefill_replicas, "decode.replicas": pd.decode_replicas},
        )
        if pd is not None
        else "the request's stack.cluster declares no pd_disaggregation (prefill/decode replicas) for this cluster"
    )
    lora = cluster.lora
    out["lora"] = (
        Condition("lora", "lora-affinity", "setup", f"LoRA adapters {', '.join(lora.adapters)} loaded", dict(lora.set))
        if lora is not None
        else (
            "llm-d-benchmark ships no LoRA scenario and the request's stack.cluster declares no lora adapters "
            "(adapters and the overrides that load them)"
        )
    )
    return out


def per_arm(found: Condition | str | None) -> bool:
    """A condition applied during a run has one experiment per arm (``bot.bench.condition_experiment``: a file's
    setup treatments all run, and their keywords replace ``--run-keywords``); the others one."""
    return isinstance(found, Condition) and found.level == "run"


def condition_files(root: str, name: str, found: Condition | str | None) -> list[str]:
    """The committed experiment files of condition ``name`` (``found``: what ``conditions_for`` says of it)."""
    home = f"{root}/{name}"
    return [f"{home}/{arm}.yaml" for arm in TREATMENTS] if per_arm(found) else [f"{home}/experiment.yaml"]


#: Map C gap id -> the condition that decides it.
GAP_CONDITION = {
    "pod-health": "pod-failure",
    "metric-staleness": "metric-staleness",
    "pd-role-split": "pd-split",
    "lora-affinity": "lora",
}


def condition_replicas(stack: StackSpec) -> dict[str, int]:
    """Model-server replicas under conditions that change them (for evidence binding)."""
    pd = stack.cluster.pd_disaggregation
    return {"pd-split": pd.prefill_replicas + pd.decode_replicas} if pd is not None else {}


#: EPP arguments that by themselves show a setup-level condition was in force (llm-d-router's flag -> value).
_EPP_ARGS = {"metric-staleness": ("--refresh-metrics-interval", STALE_METRICS_INTERVAL)}


def _keywords(doc: dict) -> list[str]:
    kws = (doc.get("run") or {}).get("keywords") or []
    return [str(k) for k in kws] if isinstance(kws, list) else []


def recorded_conditions(doc: dict) -> list[str]:
    """The Track B conditions a report's ``run.keywords`` name (``condition:<name>``, as ``promote bench run`` and
    the sample generator write them)."""
    return [k.removeprefix("condition:") for k in _keywords(doc) if k.startswith("condition:")]


def _epp_args(doc: dict) -> dict:
    for comp in (doc.get("scenario") or {}).get("stack") or []:
        native = (comp or {}).get("native") if isinstance(comp, dict) else None
        config = (native or {}).get("config")
        if isinstance(config, dict) and config.get("kind") == "EndpointPickerConfig":
            args = native.get("args")
            return args if isinstance(args, dict) else {}
    return {}


def condition_reason(doc: dict, rel: str, condition: str | None) -> str | None:
    """Why a report is no evidence about the condition its directory names (None: it records that condition).

    A cell ``<workload>+<condition>`` is believed only from what the run recorded: the ``condition:<name>``
    keyword, a setup treatment ``<arm>+<condition>`` (llm-d-benchmark's layout), or, for metric staleness, the
    EPP's ``--refresh-metrics-interval``. A directory name alone is a label anyone can give the plain
    workload's runs, and a Track B claim confirmed on runs where no fault happened closes a sim-to-real gap
    that was never measured. A report that records a condition its directory does not name ran another load.
    """
    recorded = recorded_conditions(doc)
    if condition is None:
        if recorded:
            return (
                f"run.keywords says it ran under condition {recorded[0]!r}, but it is filed under a plain workload: "
                "it measured another load"
            )
        return None
    if recorded:
        if condition in recorded:
            return None
        return f"run.keywords says condition {recorded[0]!r}, but it is filed under {condition!r}"
    setup = next((p for p in rel.split("/") if p.startswith("setup-treatment-")), "")
    if setup.endswith(f"+{condition}"):
        return None
    arg = _EPP_ARGS.get(condition)
    if arg is not None and str(_epp_args(doc).get(arg[0])) == arg[1]:
        return None
    return (
        f"{CONDITION_NOT_RECORDED}: filed under condition {condition!r}, but the report records no such run "
        f"(run.keywords condition:{condition}, or a setup treatment <arm>+{condition}), so nothing shows the "
        "condition was applied; run the cell with `promote bench run` (it applies and records it) or add the "
        "keyword to the runs that did have it"
    )
