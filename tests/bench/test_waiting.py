"""Whether a scheduler's cells formed waiting queues, read from the reports' `vllm_num_requests_waiting`.

Found end to end (sched-e2e 4): a queue-position scorer acts only where pods have waiting requests, which exist only
under saturation, and nothing read whether the cells formed queues (`grep num_requests_waiting bot/` found a
comment). The v0.2 reports can carry the gauge per pod; a report without it says nothing, and nothing is invented.
"""

from __future__ import annotations

from types import SimpleNamespace

from bot.bench.reports import load_results
from bot.bench.waiting import WAITING_KEY, cell_queues, peak_waiting, queues_markdown
from bot.model import PromotionRequest
from bot.stages.run_validate import queues_markdown_for
from tests.bench.bench_helpers import example_doc, make_doc


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
    text = queues_markdown_for(SimpleNamespace(request=s01), rs, verdicts)
    assert "| not reported | A1 |" in text and "**queues never formed**" not in text.lower()
    assert f"No report carries `{WAITING_KEY}`" in text
    router = s01.model_copy(update={"kind": "routing"})
    assert queues_markdown_for(SimpleNamespace(request=router), rs, verdicts) == ""
