"""The testbed line: what the used reports recorded (model, accelerators, engine, harness), never invented."""

from __future__ import annotations

import copy
import json

from bot.bench import testbed
from bot.bench.reports import load_report
from tests.conftest import RESULTS

SAMPLE = next(RESULTS.rglob("benchmark_report_v0.2*.yaml"))


def test_a_v02_report_gives_model_accelerators_engine_harness_and_cluster():
    t = testbed.testbed_of(load_report(SAMPLE))
    (engine,) = t.engines
    assert engine.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert (engine.accelerator, engine.accelerators_per_replica, engine.replicas, engine.tp) == (
        "NVIDIA-H100-80GB-HBM3",
        1,
        4,
        1,
    )
    assert engine.image == "ghcr.io/llm-d/llm-d-cuda:v0.5.1"
    assert (t.harness, t.harness_version) == ("inference-perf", "0.3.0")
    assert t.cluster and len(t.cluster) == 32


def test_absent_fields_say_not_recorded():
    doc = copy.deepcopy(load_report(SAMPLE))
    del doc["scenario"]["load"]
    del doc["run"]["cid"]
    doc["scenario"]["stack"] = [c for c in doc["scenario"]["stack"] if c["standardized"]["kind"] != "inference_engine"]
    words = testbed.testbed_words(testbed.testbed_of(doc))
    assert words == ("model, accelerators and engine not recorded; harness not recorded; cluster not recorded")
    assert testbed.testbed_words(testbed.testbed_of({})) == words
    engine_only = testbed.engine_of({"kind": "inference_engine", "model": {"name": "m"}})
    assert testbed._engine_words(engine_only) == (
        "m on replicas not recorded × accelerator not recorded; engine not recorded"
    )


def test_one_testbed_is_one_line_and_several_are_a_finding():
    doc = load_report(SAMPLE)
    other = copy.deepcopy(doc)
    other["scenario"]["stack"][0]["standardized"]["accelerator"]["model"] = "NVIDIA-A100-SXM4-80GB"
    same = [testbed.record("baseline", doc), testbed.record("evolved", doc)]
    one = testbed.testbed_markdown(json.loads(json.dumps(testbed.summarize(same))))
    assert one.startswith(
        "**Testbed** (2 reports used): meta-llama/Llama-3.1-8B-Instruct on 4 replicas × 1 NVIDIA-H100"
    )
    assert "\n" not in one and "harness inference-perf 0.3.0" in one
    assert "Router image: baseline `ghcr.io/example-org/llm-d-router:promotion-1-evolved-adaptive-scorer`" in one
    mixed = testbed.summarize([*same, testbed.record("evolved", other)])
    text = testbed.testbed_markdown(mixed)
    assert text.startswith("**Testbeds: 2 different ones among the 3 reports.**")
    assert "- 2 reports (baseline, evolved):" in text and "- 1 reports (evolved):" in text
    assert "NVIDIA-A100-SXM4-80GB" in text
    baseline_only = testbed.testbed_markdown(testbed.summarize(same[:1]))
    assert baseline_only.startswith("**Testbed** (1 reports used, baseline only): meta")


def test_a_report_with_no_stack_shows_the_router_image_of_its_epp_image_keyword_and_says_so():
    """llm-d-benchmark's own reports have no scenario.stack, so testbed.json and verdicts.md showed no router image
    for any real report; the runner's epp-image: run keyword records it, and the page says it was read there."""
    from pathlib import Path

    import yaml

    fixture = Path(__file__).resolve().parent / "fixtures" / "upstream_driver_report_v0_2.yaml"
    real = yaml.safe_load(fixture.read_text(encoding="utf-8"))
    assert "stack" not in real["scenario"]
    image = "ghcr.io/acme/llm-d-router:promotion-7-abc@sha256:" + "a" * 64
    real["run"]["keywords"].append(f"epp-image:{image}")
    stacked = load_report(SAMPLE)
    summary = json.loads(
        json.dumps(testbed.summarize([testbed.record("evolved", real), testbed.record("baseline", stacked)]))
    )
    assert summary["router_images"]["evolved"] == [image]
    assert summary["router_image_sources"][image] == ["run.keywords epp-image"]
    line = testbed.testbed_markdown(summary)
    assert f"evolved `{image}` (from run.keywords epp-image)" in line
    assert (
        "baseline `ghcr.io/example-org/llm-d-router:promotion-1-evolved-adaptive-scorer` (from scenario.stack)" in line
    )
    real["run"]["keywords"].pop()  # neither record: not recorded, as before
    assert testbed.router_image_from(real) == (None, None)
    assert "evolved not recorded" in testbed.testbed_markdown(testbed.summarize([testbed.record("evolved", real)]))


def test_recorded_text_is_escaped():
    doc = copy.deepcopy(load_report(SAMPLE))
    doc["scenario"]["stack"][0]["standardized"]["model"]["name"] = "evil|<!-- promotion-bot:status -->"
    line = testbed.testbed_markdown(testbed.summarize([testbed.record("baseline", doc)]))
    assert "<!--" not in line and "evil\\|" in line


def test_no_reports_no_testbed():
    assert "no benchmark report was used" in testbed.testbed_markdown(testbed.summarize([]))
    assert "no benchmark report was used" in testbed.testbed_markdown(None)


def test_load_results_keeps_one_testbed_per_used_report():
    from bot.bench.reports import load_results

    reports = load_results(RESULTS)
    assert len(reports.testbeds) == len(reports.loaded) > 0
    assert {r.arm for r in reports.testbeds} == {"baseline", "evolved"}


def test_where_the_reports_came_from_names_no_local_path(tmp_path):
    """verdicts.md is committed: it once carried the --results directory, a path on someone's machine."""
    from types import SimpleNamespace

    from bot.stages.paths import PromotionPaths
    from bot.stages.run_validate import results_origin

    run = "chat/rate-10/rep-1/benchmark_report_v0.2,_x.yaml"
    reports = SimpleNamespace(loaded=[f"baseline/{run}", f"evolved/{run}"])
    local = SimpleNamespace(results_dir=tmp_path / "results", paths=PromotionPaths("x"), read=lambda _: None)
    said = results_origin(local, reports)
    assert str(tmp_path) not in said
    assert said.startswith("2 reports: baseline 1 used; evolved 1 used; supplied with `--results`")
    committed = SimpleNamespace(results_dir=None, paths=PromotionPaths("x"), read=lambda _: None)
    assert results_origin(committed, reports) == (
        "2 reports: baseline 1 used; evolved 1 used; committed under `benchmarks/promotion/x/results/` on this branch"
    )
    assert results_origin(local, None) is None


def test_the_reports_used_and_left_out_are_counted_per_arm_with_the_reason():
    """56 baseline reports used and all 56 evolved ones left out read "56 used" before: now each arm says so."""
    from bot.stages.run_validate import arm_tally

    why = "EPP config differs from the evolved arm's in this plan: plugin 'p' parameter 'loadThreshold' is 10.0"
    loaded = [f"baseline/chat/rate-10/rep-{n}/benchmark_report_v0.2,_x.yaml" for n in range(1, 4)]
    rejected = [(f"evolved/chat/rate-10/rep-{n}/benchmark_report_v0.2,_x.yaml", why) for n in range(1, 4)]
    assert arm_tally(loaded, rejected) == (
        f"6 reports: baseline 3 used; evolved 0 used, 3 left out ({why}; listed below)"
    )
    mixed = [*rejected[:2], (rejected[2][0], "duplicate of another report")]
    assert arm_tally(loaded, mixed).endswith("evolved 0 used, 3 left out (for 2 different reasons; listed below)")


def test_a_run_no_look_reached_is_counted_as_not_used_with_why(tmp_path):
    """Reanalysis finding 5: an 8th evolved sanity-random run, where the looks stop at 7, read "evolved 71 used" and
    reports-not-used.json was empty, while every cell on it said the run was not used. Stage 5's judgement (shared
    with `promote evaluate`) now lists it as not used, with why, and the testbed counts only the used reports."""
    import shutil

    import yaml

    from bot.bench.reports import load_results
    from bot.model import Direction
    from bot.stages.run_validate import verdicts_on
    from bot.stats.design import DecisionRule, SequentialRule
    from bot.stats.judged import PAST_LAST_LOOK
    from tests.stats.stats_synth import hypothesis

    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    cell = results / "evolved" / "sanity-random" / "rate-10"
    shutil.copytree(cell / "rep-7", cell / "rep-8")
    [extra] = (cell / "rep-8").glob("benchmark_report_v0.2*.yaml")
    doc = yaml.safe_load(extra.read_text())
    doc["run"]["uid"] = "deadbeef" * 4  # another run, not a copy of rep 7
    extra.write_text(yaml.safe_dump(doc, sort_keys=False))
    reports = load_results(results)
    assert extra.relative_to(results).as_posix() in reports.loaded
    looks = {"sanity-random@10": [4, 6, 7]}
    rule = DecisionRule(sequential=SequentialRule(spending="pocock", looks=looks, decidable=[]))
    guard = hypothesis("C5", metric="e2e_p95", direction=Direction.NO_WORSE, workloads=["sanity-random"])
    [v] = verdicts_on([guard], reports, None, None, evolved_for=None, decision=rule)
    assert any(f.startswith("runs past the last planned look reached not used") for f in v.flags)
    rel = extra.relative_to(results).as_posix()
    assert rel not in reports.loaded and len(reports.testbeds) == len(reports.loaded) == 140
    [(path, reason)] = reports.rejected
    assert path == rel and reason.startswith(f"{PAST_LAST_LOOK} (sanity-random @ 10 req/s)")
    assert testbed.summarize(reports.testbeds)["reports"] == 140


def test_a_testbed_other_than_the_most_used_names_its_reports_and_the_verdicts_they_enter():
    """Reanalysis finding 3: one evolved report of another engine image sat in A1's deciding cell; testbed.json and
    the page said "2 testbeds" and named neither the report nor the cell."""
    doc = load_report(SAMPLE)
    other = copy.deepcopy(doc)
    other["scenario"]["stack"][0]["standardized"]["tool_version"] = "vllm/vllm-openai:v0.6.0"
    rel = "{arm}/load-spikes/rate-{rate}/rep-{rep}/benchmark_report_v0.2,_x.yaml"
    same = [testbed.record(a, doc, rel.format(arm=a, rate=30, rep=r)) for a in ("baseline", "evolved") for r in (2, 3)]
    odd = testbed.record("evolved", other, rel.format(arm="evolved", rate=30, rep=1))
    cells = {("load-spikes", 30.0): ["A1", "B6"], ("load-spikes", 45.0): ["A1"]}
    summary = json.loads(json.dumps(testbed.summarize([*same, odd], cells)))
    first, second = summary["testbeds"]
    assert "report_paths" not in first and "cells" not in first  # the testbed most reports ran on
    assert second["report_paths"] == [odd.report]
    assert second["cells"] == [{"workload": "load-spikes", "rate": 30.0, "reports": 1, "hypotheses": ["A1", "B6"]}]
    said = testbed.entered_text(second)
    assert said == f"reports {odd.report}; they enter load-spikes @ 30 req/s (1 report, judged for A1, B6)"
    assert testbed.entered_text(first) == ""
    page = testbed.testbed_markdown(summary)
    assert "vllm/vllm-openai:v0.6.0" in page and "judged for A1, B6" in page
    assert f"Its reports {odd.report}; they enter" in page


def test_a_report_of_another_testbed_is_a_flag_and_a_caveat_on_each_verdict_it_enters():
    """bj2 3: one evolved report of another engine image entered A1's deciding cell; the testbed section named it,
    but A1's verdict, its claims-table row and the PR's row read a clean "confirmed"."""
    from bot.model import Verdict, VerdictStatus
    from bot.render.claims import verdict_text

    doc = load_report(SAMPLE)
    other = copy.deepcopy(doc)
    other["scenario"]["stack"][0]["standardized"]["tool_version"] = "vllm/vllm-openai:v0.6.0"
    same = [testbed.record("baseline", doc, "baseline/spikes/rate-30/rep-1/r.yaml")] * 2
    odd = testbed.record("evolved", other, "evolved/spikes/rate-30/rep-1/r.yaml")
    summary = json.loads(json.dumps(testbed.summarize([*same, odd], {("spikes", 30.0): ["A1", "B6"]})))
    flags = testbed.other_testbed_flags(summary)
    said = "another testbed: 1 evolved report at spikes @ 30 req/s ran on engine vllm/vllm-openai:v0.6.0"
    assert set(flags) == {"A1", "B6"} and flags["A1"][0].startswith(said), flags
    v = Verdict(hypothesis_id="A1", status=VerdictStatus.CONFIRMED, summary="x", flags=flags["A1"])
    assert verdict_text(v) == "✅ confirmed (with 1 report from another testbed)"
    assert testbed.other_testbed_flags(json.loads(json.dumps(testbed.summarize(same)))) == {}
