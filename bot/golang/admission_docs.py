"""What an admitter's config, README, Go doc comment and PR say that only an admitter needs (llm-d-router v0.10.0).

Three facts of v0.10.0 decide how an Admitter plugin behaves in a real EPP, and no text of the bot may say otherwise:

- its rejection reaches the client as HTTP 500: ``pkg/epp/requestcontrol/director.go`` wraps an Admitter's error
  as ``errcommon.Internal`` ("request cannot be admitted: ..."), whatever code the plugin returned;
- the built-in admission runs first: with flow control off (its default) the legacy admission controller rejects
  every request of priority < 0 with 429 whenever the saturation detector reads saturation >= 1, before any
  Admitter runs. The default ``utilization-detector`` computes the mean over endpoints of
  max(WaitingQueueSize / 5, KVCacheUsagePercent / 0.8), an endpoint without fresh metrics scoring 1.0 (fail
  closed). An admitter that sheds from the same saturation would only ever see the requests that control left,
  in both arms. So the plugin's config sets the detector's thresholds as upstream's
  ``deploy/config/probabilistic-admitter-epp-config.yaml`` does "to let it own admission exclusively", and the
  benchmark's baseline arm runs that same config without the plugin (``baseline_config``): the arms differ in
  the plugin alone. Those thresholds keep the queue out of reach but not a full KV cache (``DETECTOR_SHEDS``),
  and its ``metricsStalenessThreshold`` is the EPP's own 2s, not the detector's 200ms (``STALENESS``);
- the in-tree ``probabilistic-admitter`` computes that saturation itself and sheds priority < 0 with probability
  min(saturation^power * k, 1), counting an endpoint without metrics as 1.0: a maintainer's first question to
  an admitter that reads the same gauges is why not that one (``upstream_alternative``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import yaml

from bot.golang.gonames import comment_lines
from bot.model.evidence import ADMITTER_REJECT_STATUS
from bot.yaml_safe import load_yaml

#: The saturation detector the config names (flowControl.saturationDetector), and its parameters: queueDepthThreshold
#: and kvCacheUtilThreshold as upstream's probabilistic-admitter config sets them (the queue out of reach, the KV cache
#: at the largest value v0.10.0 accepts, (0, 1]; a larger one is refused, not clamped, and a full cache still reads
#: 1.0), metricsStalenessThreshold as ``STALENESS`` says.
DETECTOR = "utilization-detector"
#: The detector's metricsStalenessThreshold: the EPP's own --metrics-staleness-threshold default (2s,
#: pkg/epp/server/options.go), twice the longest refresh interval a planned run uses (the metric-staleness
#: condition's 1s, bot.bench.conditions). At the detector's 200ms default an endpoint scraped more than 200ms ago
#: reads saturation 1.0, so every endpoint's scrape lagging 200ms at once (under that 1s interval each one's does four
#: fifths of the time; a GC pause, a busy EPP) shed priority < 0 that the plugin would admit: the benchmark measured
#: llm-d's shedding, not the plugin. Not switched off (a far larger value): the plugin, like BLIS (which has no
#: staleness) and probabilistic-admitter, decides on the last scraped gauges however old, so a scrape outage is left
#: to llm-d to fail closed on, as upstream does.
STALENESS = "2s"
DETECTOR_PARAMETERS = {
    "queueDepthThreshold": 999999999,
    "kvCacheUtilThreshold": 1.0,
    "metricsStalenessThreshold": STALENESS,
}
#: The one line the config writes above a detector parameter that upstream's config leaves at its default.
DETECTOR_COMMENTS = {
    "metricsStalenessThreshold": f"not the default 200ms: a scrape lag shorter than {STALENESS} on every pod no "
    "longer sheds requests"
}
#: The in-tree admitter that computes the same saturation (pkg/epp/framework/plugins/requestcontrol/admitter/
#: probabilisticadmitter at v0.10.0).
UPSTREAM_ADMITTER = "probabilistic-admitter"
#: The gauges its saturation reads, as BLIS signals (dictionary Map B: WaitingQueueSize, KVCacheUsagePercent).
SATURATION_SIGNALS = ("QueueDepth", "KVUtilization")
#: Its defaults (the utilization-detector's too): queue depth 5, KV cache 0.8.
UPSTREAM_THRESHOLDS = (5.0, 0.8)

REJECTION = (
    f"A rejection reaches the client as HTTP {ADMITTER_REJECT_STATUS}, not 429: llm-d-router v0.10.0's director "
    'wraps an Admitter\'s error as errcommon.Internal ("request cannot be admitted: ..."), whatever code the '
    "plugin returns (errcommon.ResourceExhausted here, as probabilistic-admitter returns)."
)

#: When the built-in shedding still fires under ``DETECTOR_PARAMETERS``: every endpoint reads at most 1.0 there
#: (the queue term stays far below it), so their mean reaches 1.0 only when every one reads exactly 1.0.
DETECTOR_SHEDS = f"every candidate endpoint has a full KV cache or no metrics scraped in the last {STALENESS}"

CONFIG_NOTE = (
    "Admission: llm-d-router v0.10.0's built-in admission (the legacy admission controller; flow control is off by "
    "default) rejects every request of priority < 0 with HTTP 429 whenever the saturation detector reads "
    "saturation >= 1, before any Admitter runs. The utilization-detector this config names reads saturation as "
    "the mean over the candidate endpoints (1.0 with none) of max(WaitingQueueSize / queueDepthThreshold, "
    "KVCacheUsagePercent / kvCacheUtilThreshold), an endpoint whose metrics are missing or older than the "
    f"detector's metricsStalenessThreshold ({STALENESS} here) counting 1.0. Its thresholds are those of upstream's "
    "deploy/config/probabilistic-admitter-epp-config.yaml: queueDepthThreshold 999999999 puts the queue term out "
    "of reach, but kvCacheUtilThreshold 1.0, the largest value v0.10.0 accepts (a larger one is refused at "
    "startup, not clamped), does not switch the KV cache term off: an endpoint whose KV cache is full "
    "(KVCacheUsagePercent 1.0) reads 1.0. So the built-in admission still sheds priority < 0 before the plugin "
    f"runs when {DETECTOR_SHEDS} (right after an EPP restart, with none scraped, too); short of that the plugin "
    "owns admission. The benchmark's baseline arm runs this config without the plugin. " + REJECTION
)

BASELINE_NOTE = (
    "Baseline arm of an admitter's benchmark: the evolved arm's EndpointPickerConfig without the admitter "
    "(the arms differ in the plugin alone). Its utilization-detector (queueDepthThreshold 999999999, "
    f"kvCacheUtilThreshold 1.0, the largest value llm-d-router v0.10.0 accepts, metricsStalenessThreshold {STALENESS}) "
    "keeps the built-in shedding "
    "(priority < 0 rejected with HTTP 429 at saturation >= 1) to one case: it still sheds when there is no "
    f"candidate endpoint or {DETECTOR_SHEDS}; short of that every request is admitted."
)

#: The translation report's one line on llm-d's own shedding (a mapping decision of every admitter).
SHEDDING_DECISION = (
    "llm-d's own shedding",
    (
        "the EndpointPickerConfig's utilization-detector (queueDepthThreshold 999999999, kvCacheUtilThreshold 1.0, "
        f"metricsStalenessThreshold {STALENESS}, in both arms) leaves llm-d's own shedding of priority < 0 (HTTP 429, "
        f"before the plugin runs) to a pool whose every endpoint has a full KV cache or no metrics scraped in the "
        f"last {STALENESS}."
    ),
)

UNSCRAPED = (
    "An endpoint the EPP has not scraped yet (no metrics, or never updated) is left out of what the admission "
    "logic sees, so the plugin decides on the scraped endpoints alone and, with none scraped, on an empty pool "
    "(fail open). Upstream fails closed: probabilistic-admitter and the utilization-detector count an endpoint "
    "without metrics as saturation 1.0. The config keeps the detector, so with no endpoint scraped (right after "
    "an EPP restart) llm-d's built-in admission still sheds priority < 0 (HTTP 429) before the plugin runs; with "
    "some scraped, the plugin sees a pool emptier than probabilistic-admitter would."
)


#: The fail-open beside upstream's fail-closed, in one sentence for the PR's opening paragraph (``UNSCRAPED`` says
#: it in full in the plugin README).
FAIL_OPEN = (
    "An endpoint the EPP has not scraped yet is left out of what the plugin sees, so it fails open (with none "
    "scraped it decides on an empty pool), where upstream fails closed (probabilistic-admitter and the "
    "utilization-detector count such an endpoint as saturation 1.0, so right after an EPP restart the built-in "
    "admission still sheds priority < 0 with HTTP 429 before the plugin runs)."
)


def upstream_alternative(signals: Sequence[str], thresholds: Mapping[str, object] | None = None) -> str:
    """The nearest in-tree admitter, in words, for an admitter whose saturation reads the gauges probabilistic-
    admitter's does ("" otherwise); with both of upstream's thresholds among its parameters, it says so."""
    if not set(SATURATION_SIGNALS) <= set(signals):
        return ""
    values = {v for v in (thresholds or {}).values() if isinstance(v, int | float) and not isinstance(v, bool)}
    same = all(v in values for v in UPSTREAM_THRESHOLDS)
    return (
        f"Nearest upstream alternative: llm-d-router v0.10.0's in-tree `{UPSTREAM_ADMITTER}`, which reads two of "
        "the gauges this plugin reads, llm-d's WaitingQueueSize and KVCacheUsagePercent "
        f"({' and '.join(SATURATION_SIGNALS)} here)"
        + (", with the same thresholds" if same else "")
        + ": its saturation is the mean over endpoints of max(WaitingQueueSize / 5, KVCacheUsagePercent / 0.8), an "
        "endpoint without metrics counted 1.0, and it rejects priority < 0 with probability "
        "min(saturation^power * k, 1); "
        "tuning its `power` and `k` may give the same shedding without a new plugin."
    )


def baseline_config(evolved_config: str, plugin_type: str) -> str:
    """The baseline arm of an admitter: the evolved arm's EndpointPickerConfig with the plugin taken out (of the
    plugins and of every scheduling profile), everything else as it is, so the arms differ in the plugin alone.
    ValueError when the text is no EndpointPickerConfig that lists the plugin."""
    doc = load_yaml(evolved_config)
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    if not isinstance(plugins, list) or not any(isinstance(p, dict) and p.get("type") == plugin_type for p in plugins):
        raise ValueError(f"not an EndpointPickerConfig that lists the plugin type {plugin_type}")
    names = {p.get("name") or p.get("type") for p in plugins if isinstance(p, dict) and p.get("type") == plugin_type}
    doc["plugins"] = [p for p in plugins if not (isinstance(p, dict) and p.get("type") == plugin_type)]
    for profile in doc.get("schedulingProfiles") or []:
        if isinstance(profile, dict) and isinstance(profile.get("plugins"), list):
            profile["plugins"] = [
                r for r in profile["plugins"] if not (isinstance(r, dict) and r.get("pluginRef") in names)
            ]
    head = "".join(f"# {c}\n" for c in comment_lines(BASELINE_NOTE, indent=0))
    return head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True)
