"""Scheduler artifacts say what a scheduler reads and orders by (sched-e2e #9: admission and routing wording left
in them). s01/s03's SLOClass source named "the probabilistic-admitter rule" above code mapping three levels; s01's
metric-staleness cause named RunningRequestsSize and KVCacheUsagePercent, which a scheduler never reads; s02's
profile note said "its highest class" of an order with no classes; s03's G2.priority-exercised said "class weight"
of an order by class targets.
"""

from __future__ import annotations

from .conftest import translate_path
from .test_scheduling_plugin import S01, S02, S03


def _text(tr) -> str:
    return tr.report_markdown + "\n".join(tr.files.values())


def test_the_slo_class_source_names_the_three_levels_the_adapter_maps(dictionary):
    for path in (S01, S03):
        _, _, tr = translate_path(path, dictionary)
        text = _text(tr)
        assert "probabilistic-admitter rule" not in text
        [row] = [line for line in tr.report_markdown.splitlines() if line.startswith("| `SLOClass`")]
        assert ">0 critical, 0 standard, &lt;0 sheddable" in row
        adapter = next(t for p, t in tr.files.items() if p.endswith("/adapter.go"))
        assert "// SLOClass: req.Objectives.Priority (InferenceObjective): >0 critical, 0 standard, <0" in adapter


def test_the_staleness_cause_names_only_the_gauges_the_scheduler_reads(dictionary):
    from bot.golang.harness_build import mapping_why

    _, _, tr = translate_path(S01, dictionary)
    [row] = [line for line in tr.report_markdown.splitlines() if line.startswith("| `metric-staleness`")]
    assert "llm-d reads WaitingQueueSize as of the last scrape" in row
    assert "RunningRequestsSize" not in row and "KVCacheUsagePercent" not in row
    # a router reading the batch and the cache still has them named; a cause with no scraped signal is as it was
    both = mapping_why("metric-staleness", ["BatchSize", "KVUtilization"], producer=False)
    assert both.startswith("llm-d reads RunningRequestsSize and KVCacheUsagePercent as of the last scrape")
    assert "WaitingQueueSize, RunningRequestsSize and" in mapping_why("metric-staleness", [], producer=False)


def test_a_length_order_is_not_said_to_have_a_highest_class(dictionary):
    _, _, tr = translate_path(S02, dictionary)
    text = _text(tr)
    assert "its highest class" not in text
    assert "puts ahead of every modelled waiting request gets position 0 everywhere" in text


def test_a_deadline_scheduler_on_one_priority_is_not_said_to_weigh_classes():
    from bot.review.gate2_traffic import _class_exercised
    from tests.review.test_gate2_scheduling import ctx_for, hypotheses, scheduling_request, summary_for

    req = scheduling_request()
    summary = summary_for("scheduling", ["ArrivalTime", "InputTokens", "SLOClass", "SLOTargetUs"])
    [f] = _class_exercised(ctx_for(req), hypotheses(req, summary), summary)
    assert "every request is of one class (so gets the same class weight or target)" in f.message


def test_gate_1_names_the_queue_scorer_control_the_plan_lacks(dictionary):
    """sched-e2e #2: gate 1 advised "benchmark it only against queue-scorer" and "against queue-scorer at a higher
    weight", arms stage 4 never plans (its evolved arm is the baseline plus the plugin, so it holds queue-scorer and
    cannot lose to it). The fixes now say the control is not planned, and which one to run by hand."""
    from bot.golang.plugin_docs import BASELINE_WEIGHTS, profile_weights
    from bot.model import PolicyKind

    assert profile_weights(PolicyKind.SCHEDULING, False, None) == {"evolved": 2.0, **BASELINE_WEIGHTS}
    _, _, tr = translate_path(S01, dictionary)
    by_check = {f.check: f for f in tr.findings}
    for check in ("translate.fidelity-below-reference", "translate.queue-order-as-score"):
        fix = by_check[check].fix
        assert "only against queue-scorer" not in fix and "at a higher weight" not in fix
        assert "stage 4 plans two arms only" in fix and "cannot lose to it" in fix
        assert "queue-scorer at weight 4 (its 2 plus this scorer's 2) and no evolved scorer, run by hand" in fix
