"""Whether a scheduler's cells formed waiting queues, read from the reports' `vllm_num_requests_waiting`.

Found end to end (sched-e2e 4): a queue-position scorer acts only where pods have waiting requests, which exist only
under saturation, and nothing read whether the cells formed queues (`grep num_requests_waiting bot/` found a
comment). The v0.2 reports can carry the gauge per pod; a report without it says nothing, and nothing is invented.
"""

from __future__ import annotations

from types import SimpleNamespace

from bot.bench.reports import load_results
from bot.bench.waiting import WAITING_KEY, cell_queues, peak_waiting, queues_markdown
from bot.model import Direction, PromotionRequest
from bot.stages.run_validate import queues_markdown_for
from tests.bench.bench_helpers import example_doc, make_doc
from tests.stats.stats_synth import hypothesis


def _doc(level: float | None, rate: float = 10.0) -> dict:
    doc = make_doc(rate=rate)
    obs = doc["results"]["observability"]
    if level is None:
        obs.pop(WAITING_KEY)
    else:
        stats = {"mean": level / 2, "p50": 0.0, "p99": level, "stddev": 1.0, "units": "count"}
        obs[WAITING_KEY] = {"components": [{"component_id": "e", "pod": f"p{i}", "statistics": stats} for i in (0, 1)]}
    return doc


def test_the_peak_is_the_highest_level_any_pod_recorded_and_none_without_the_gauge():
    assert peak_waiting(example_doc()) == 18.0  # the upstream example: p99 18 on its one pod
    assert peak_waiting(_doc(0.0)) == 0.0
    assert peak_waiting(_doc(None)) is None


def test_each_cell_says_whether_queues_formed_from_what_its_reports_recorded(results_factory):
    root, write = results_factory
    for arm in ("baseline", "evolved"):
        for rep in (1, 2):
            write(arm, "load-spikes", 30, rep, _doc(0.0, 30))  # never a waiting request
            write(arm, "load-spikes", 45, rep, _doc(4.0, 45))
            write(arm, "chat", 10, rep, _doc(None))  # reports without the gauge
        write(arm, "mixed", 10, 1, _doc(0.0))
        write(arm, "mixed", 10, 2, _doc(None))  # one run silent: no claim either way
    rs = load_results(root)
    cells = {(c.workload, c.rate): c for c in cell_queues(rs.waiting, rs.runs())}
    assert cells["load-spikes", 30].formed is False and cells["load-spikes", 45].formed is True
    assert cells["chat", 10].formed is None and cells["mixed", 10].formed is None
    judged = {("load-spikes", 30.0): ["A1"], ("load-spikes", 45.0): ["A1", "B7"], ("chat", 10.0): ["C1"]}
    text = queues_markdown(list(cells.values()), judged)
    assert "| load-spikes | 30 | peak 0 (2 of 2 runs) | peak 0 (2 of 2 runs) | **queues never formed** | A1 |" in text
    assert "| load-spikes | 45 | peak 4 (2 of 2 runs) | peak 4 (2 of 2 runs) | queues formed | A1, B7 |" in text
    assert "| chat | 10 | not reported (0 of 2 runs) | not reported (0 of 2 runs) | not reported | C1 |" in text
    assert "**Queues never formed** at load-spikes @ 30 req/s" in text and "What A1 measured there" in text


def test_stage_5_writes_the_section_for_a_scheduler_only_and_invents_nothing_without_the_gauge(results_factory):
    root, write = results_factory
    for arm in ("baseline", "evolved"):
        write(arm, "load-spikes", 30, 1, _doc(None, 30))
    rs = load_results(root)
    verdicts = [SimpleNamespace(hypothesis_id="A1", effects=[SimpleNamespace(workload="load-spikes", rate=30.0)])]
    s01 = PromotionRequest.load("examples/corpus/promote/s01-scheduling.yaml")
    a1 = hypothesis("A1", workloads=["load-spikes"], rates=[30])
    text = queues_markdown_for(s01, rs, [a1], verdicts)
    assert "| not reported | A1 |" in text and "**queues never formed**" not in text.lower()
    assert f"No report carries `{WAITING_KEY}`" in text
    router = s01.model_copy(update={"kind": "routing"})
    assert queues_markdown_for(router, rs, [a1], verdicts) == ""


def test_the_section_covers_the_cells_gate_2_named_and_leaves_the_low_load_guards_out(results_factory):
    """CF2 (consistency3 4): the section listed only cells some verdict measured, so with A1 and B7 set aside it
    dropped load-spikes @ 30 (the cell gate 2's G2.cells-saturate told the user to check first), and it called the
    guards' low-load cells "queues never formed ... not the evolved order", as if a guard there were a defect."""
    from bot.review.saturation import cells_saturate

    root, write = results_factory
    for arm in ("baseline", "evolved"):
        for rep in (1, 2):
            write(arm, "load-spikes", 30, rep, _doc(4.0, 30))
            write(arm, "load-spikes", 45, rep, _doc(4.0, 45))
            write(arm, "sanity-random", 10, rep, _doc(0.0))  # a guard's low load: no queue, as expected
    rs = load_results(root)
    s01 = PromotionRequest.load("examples/corpus/promote/s01-scheduling.yaml")
    a1 = hypothesis("A1", workloads=["load-spikes"])  # the order's claims, planned: no measured cell
    b7 = hypothesis("B7", direction=Direction.INCREASE, workloads=["load-spikes"], rates=[45])
    b1 = hypothesis("B1", direction=Direction.NO_WORSE, workloads=["load-spikes"], rates=[45])
    c4 = hypothesis("C4", direction=Direction.EQUIVALENT, workloads=["sanity-random"], rates=[10])
    guards = [
        SimpleNamespace(hypothesis_id=h, effects=[SimpleNamespace(workload=w, rate=r)])
        for h, w, r in (("B1", "load-spikes", 45.0), ("C4", "sanity-random", 10.0))
    ]
    text = queues_markdown_for(s01, rs, [a1, b1, b7, c4], guards)
    assert "| load-spikes | 30 | peak 4 (2 of 2 runs) | peak 4 (2 of 2 runs) | queues formed | A1 |" in text
    assert "| load-spikes | 45 | peak 4 (2 of 2 runs) | peak 4 (2 of 2 runs) | queues formed | A1, B7 |" in text
    assert "sanity-random" not in text.split("|---|")[-1] and "never formed" not in text.split("|---|")[-1]
    paths = SimpleNamespace(hypotheses_dir="docs/hypotheses", epp_config=lambda t: f"deploy/{t}.yaml")
    ctx = SimpleNamespace(request=s01, paths=paths, read=lambda path: None)
    (named,) = cells_saturate(ctx, [(None, h) for h in (a1, b1, b7, c4)], _summary(["ArrivalTime", "QueueDepth"]))
    assert "the cells A1, B7 are judged on" in named.message and "`load-spikes` @ 30 and 45 req/s" in named.message
    no_runs = SimpleNamespace(runs=list, waiting={})  # reports none of which ran the planned cells
    planned_only = queues_markdown_for(s01, no_runs, [a1], [])
    assert "| load-spikes | 30 | no runs | no runs | no runs | A1 |" in planned_only


def _summary(signals: list[str]):
    """s01's translation as far as the set-aside reads it: the signals its evolved order reads."""
    from bot.model import PolicyKind, TranslationSummary

    return TranslationSummary(
        kind=PolicyKind.SCHEDULING, plugin_type="slo-aging-scheduler", package_dir="pkg/x", signals=signals
    )


def test_claims_set_aside_as_planned_have_no_row_and_no_saturation_check(results_factory):
    """DH2 (verify2 #2): with s01's order claims A1 and B7 set aside at planning time (one priority: their cells
    are not run), the section still had a `load-spikes @ 30` row, "no runs" on every real run of the plan, and
    gate 2's G2.cells-saturate sent the user to check saturation at 30 req/s for claims nothing judges. Both now
    read the set-aside stage 4 planned with (``unexercised_by``): no row, and no check."""
    from bot.bench.set_aside import unexercised_by
    from bot.review.saturation import cells_saturate

    root, write = results_factory
    for arm in ("baseline", "evolved"):
        write(arm, "load-spikes", 45, 1, _doc(4.0, 45))
    rs = load_results(root)
    s01 = PromotionRequest.load("examples/corpus/promote/s01-scheduling.yaml")
    a1 = hypothesis("A1", workloads=["load-spikes"])
    b7 = hypothesis("B7", direction=Direction.INCREASE, workloads=["load-spikes"], rates=[45])
    b1 = hypothesis("B1", direction=Direction.NO_WORSE, workloads=["load-spikes"], rates=[45])
    a1 = a1.model_copy(update={"signals": ["SLOClass"]})
    b7 = b7.model_copy(update={"source": "queue-ordering-authority"})
    hyps = [a1, b1, b7]
    summary = _summary(["ArrivalTime", "QueueDepth", "SLOClass"])
    unexercised = unexercised_by(s01.kind, summary, s01, None, hyps)
    assert unexercised is not None and set(unexercised.why) == {"A1", "B7"}
    assert queues_markdown_for(s01, rs, hyps, [], unexercised) == ""
    assert "| load-spikes | 30 |" in queues_markdown_for(s01, rs, hyps, [])  # as before, when nothing is set aside
    paths = SimpleNamespace(hypotheses_dir="docs/hypotheses", epp_config=lambda t: f"deploy/{t}.yaml")
    ctx = SimpleNamespace(request=s01, paths=paths, read=lambda path: None)
    assert cells_saturate(ctx, [(None, h) for h in hyps], summary) == []
