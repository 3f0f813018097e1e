"""A report counts for a cell only if it ran that cell's load (bot.bench.load_binding), and a Track B cell only if
its runs record their condition (bot.bench.conditions.condition_reason): misfiled runs never decide a claim."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from bot.bench import fault_runs
from bot.bench.evidence import EvidencePolicy, load_evidence
from bot.bench.load_binding import planned_loads
from bot.model import PromotionRequest
from bot.model.evidence import CONDITION_NOT_RECORDED
from bot.stats.verdicts import evaluate
from tests.bench.bench_helpers import make_doc
from tests.bench.test_bench_plan import _h

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "weighted-adaptive"
REPORT = "benchmark_report*"


@pytest.fixture(scope="module")
def plan_loads():
    return planned_loads(PromotionRequest.load(EXAMPLE / "promotion.yaml"))


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    shutil.copytree(EXAMPLE / "results", root)
    return root


def _edit(root: Path, pattern: str, fn) -> None:
    for p in sorted(root.glob(f"{pattern}/{REPORT}")):
        doc = yaml.safe_load(p.read_text())
        fn(doc)
        p.write_text(yaml.safe_dump(doc, sort_keys=False))


def _reasons(rs, prefix: str) -> set[str]:
    return {r for p, r in rs.rejected if p.startswith(prefix)}


def test_the_bundled_sample_results_still_bind_to_the_plans_loads(plan_loads):
    rs = load_evidence(EXAMPLE / "results", EvidencePolicy(allow_sample_data=True, workloads=plan_loads))
    assert rs.rejected == [] and len(rs.loaded) == 140


def test_another_workloads_runs_filed_under_a_cell_are_left_out_naming_the_workload(tmp_path, plan_loads):
    root = _copy(tmp_path)
    for arm in ("baseline", "evolved"):
        shutil.rmtree(root / arm / "optimized-baseline")
        shutil.move(root / arm / "sanity-random", root / arm / "optimized-baseline")
    for policy in (
        EvidencePolicy(allow_sample_data=True),
        EvidencePolicy(allow_sample_data=True, workloads=plan_loads),
    ):
        rs = load_evidence(root, policy)
        assert not any("/optimized-baseline/" in p for p in rs.loaded)
        assert _reasons(rs, "evolved/optimized-baseline/") == {
            (
                "run.keywords says workload 'sanity-random', but it is filed under 'optimized-baseline': it measured "
                "another load"
            )
        }

    # Without the keyword, the load description and the profile still name it (against the plan's workloads).
    _edit(root, "*/optimized-baseline/rate-*/rep-*", lambda d: d["run"]["keywords"].pop())
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True, workloads=plan_loads))
    assert _reasons(rs, "baseline/optimized-baseline/") == {
        (
            "its load description names workload 'sanity-random', but it is filed under 'optimized-baseline': it "
            "measured another load"
        )
    }
    _edit(root, "*/optimized-baseline/rate-*/rep-*", lambda d: d["scenario"]["load"]["metadata"].pop("description"))
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True, workloads=plan_loads))
    [reason] = _reasons(rs, "evolved/optimized-baseline/")
    assert reason.startswith(
        "its load differs from the plan's 'optimized-baseline' workload: profile 'sanity_random', the plan's is "
        "'guide_optimized-baseline_1'"
    )


def _lighter(doc: dict) -> None:
    load = doc["scenario"]["load"]
    load["standardized"]["output_seq_len"]["value"] = 16
    load["native"]["config"]["overrides"]["data.shared_prefix.output_len"] = 16


def test_an_arm_that_ran_a_lighter_load_decides_nothing(tmp_path, plan_loads):
    root = _copy(tmp_path)
    _edit(root, "evolved/cache-warmup/rate-*/rep-*", _lighter)

    # Against the plan: the evolved runs are the ones that differ, and the override is named.
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True, workloads=plan_loads))
    assert _reasons(rs, "evolved/cache-warmup/") == {
        (
            "its load differs from the plan's 'cache-warmup' workload: override data.shared_prefix.output_len is 16, "
            "the plan's is 80; run the plan's profile (stage 4's workloads/*.yaml)"
        )
    }
    assert _reasons(rs, "baseline/") == set()

    # Without the plan the two arms still must have run one load: neither arm's runs of the cell count.
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True))
    assert not any("/cache-warmup/" in p for p in rs.loaded)
    [reason] = _reasons(rs, "baseline/cache-warmup/rate-20/")
    assert reason.startswith("the arms of cache-warmup @ 20 req/s recorded different loads (baseline vs evolved: ")
    assert "data.shared_prefix.output_len 80 vs 16" in reason and "the load, not the plugin" in reason

    # One evolved run of another load among runs both arms share: only that one is left out.
    root = _copy(tmp_path / "one")
    _edit(root, "evolved/cache-warmup/rate-20/rep-3", _lighter)
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True))
    [(path, reason)] = rs.rejected
    assert path.startswith("evolved/cache-warmup/rate-20/rep-3/")
    assert reason.startswith("its load differs from the one both arms ran at cache-warmup @ 20 req/s: ")


def test_without_rate_qps_the_harness_stage_rate_binds_the_directory(results_factory):
    root, write = results_factory

    def doc(rate: float) -> dict:
        d = make_doc(rate=None, total=round(rate * 120))  # the requests a 120 s stage at that rate sends
        d["scenario"]["load"]["standardized"].pop("stage", None)
        d["scenario"]["load"]["native"]["config"]["load"]["stages"] = [{"rate": rate, "duration": 120}]
        return d

    write("baseline", "w", 35, 1, doc(20.0))
    write("baseline", "w", 20, 1, doc(20.0))
    rs = load_evidence(root, EvidencePolicy())
    assert rs.rejected == [
        (
            "baseline/w/rate-35/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml",
            "rate mismatch: the directory says rate-35 but scenario.load.native.config.load.stages[0].rate is 20",
        )
    ]
    assert rs.loaded == ["baseline/w/rate-20/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"]


def _plain_runs_as_faults(tmp_path: Path) -> Path:
    """The ordinary load-spikes runs moved under the fault cells: no fault happened in any of them."""
    root = _copy(tmp_path)
    for arm in ("baseline", "evolved"):
        for c in ("pod-failure", "metric-staleness"):
            shutil.rmtree(root / arm / f"load-spikes+{c}")
            (root / arm / f"load-spikes+{c}").mkdir()
        shutil.move(root / arm / "load-spikes/rate-30", root / arm / "load-spikes+pod-failure/rate-30")
        shutil.move(root / arm / "load-spikes/rate-45", root / arm / "load-spikes+metric-staleness/rate-45")
    return root


def test_a_fault_cell_counts_only_for_runs_that_record_their_condition(tmp_path, plan_loads):
    root = _plain_runs_as_faults(tmp_path)
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True, workloads=plan_loads))
    assert not any("+" in p for p in rs.loaded)
    [reason] = _reasons(rs, "evolved/load-spikes+pod-failure/")
    assert reason.startswith(
        f"{CONDITION_NOT_RECORDED}: filed under condition 'pod-failure', but the report records no such run "
        "(run.keywords condition:pod-failure"
    )

    # The claim about it is left "condition not recorded" with the reason, never confirmed.
    claim = _h("B5", ["load-spikes+pod-failure"], "e2e_p95", direction="no-worse", rates=[30.0])
    plain = _h("A1", ["load-spikes"], "e2e_p95", rates=[45.0])
    judged, flags = fault_runs.unrecorded([plain, claim], rs)
    assert judged[0] == plain and flags == {}
    assert judged[1].prediction is None and (judged[1].not_in_plan or "").startswith(
        f"{CONDITION_NOT_RECORDED}: no baseline or evolved report of its cells records the pod-failure condition"
    )
    [verdict] = [v for v in evaluate(judged, rs) if v.hypothesis_id == "B5"]
    assert verdict.status.value == "inconclusive" and verdict.flags == [CONDITION_NOT_RECORDED]
    assert "Run its cells with `promote bench run`" in verdict.summary

    # A run that records the condition (the keyword `promote bench run` writes) counts; a fault run filed under
    # a plain workload measured another load.
    _edit(
        root, "*/load-spikes+pod-failure/rate-30/rep-*", lambda d: d["run"]["keywords"].append("condition:pod-failure")
    )
    _edit(root, "evolved/cache-warmup/rate-20/rep-1", lambda d: d["run"]["keywords"].append("condition:pod-failure"))
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True, workloads=plan_loads))
    assert sum("/load-spikes+pod-failure/" in p for p in rs.loaded) == 14
    assert _reasons(rs, "evolved/cache-warmup/") == {
        (
            "run.keywords says it ran under condition 'pod-failure', but it is filed under a plain workload: it "
            "measured another load"
        )
    }
    judged, flags = fault_runs.unrecorded([claim], rs)
    assert judged == [claim] and flags == {}


def _requests(total: int):
    def edit(doc: dict) -> None:
        doc["results"]["request_performance"]["aggregate"]["requests"]["total"] = total

    return edit


def test_a_run_cut_short_is_no_repetition_and_says_both_counts(tmp_path, plan_loads):
    """Found by a statistician: seven evolved runs that recorded 6 requests each (the harness stopped) still
    confirmed a latency claim at load-spikes@30, n = 4 vs 4, with no flag: the p95 of six requests stood as the
    cell's. A run under half the requests its load plans (rate x duration) is left out, naming both counts."""
    root = _copy(tmp_path)
    _edit(root, "evolved/load-spikes/rate-30/rep-*", _requests(6))
    _edit(root, "baseline/load-spikes/rate-45/rep-2", _requests(2600))  # 48% of 45 x 120: cut short too
    _edit(root, "baseline/load-spikes/rate-45/rep-3", _requests(2800))  # 52%: a slow harness, still the load

    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True, workloads=plan_loads))
    assert _reasons(rs, "evolved/load-spikes/rate-30/") == {
        (
            "cut short: it recorded 6 requests (results.request_performance.aggregate.requests.total), its load plans "
            "about 3600 (30 req/s x 120 s, the plan's 'load-spikes' workload), and under 50% of that is no repetition "
            "of the cell: the run stopped early (the harness or the gateway), so its percentiles describe a few "
            "requests, not the cell's load; re-run the cell"
        )
    }
    assert [p.split("/rep-")[1][0] for p, _ in rs.rejected if p.startswith("baseline/")] == ["2"]
    assert "baseline/load-spikes/rate-45/rep-3/" in " ".join(rs.loaded)
    assert len(rs.loaded) == 140 - 8

    # Without the plan, the stage the harness config records says how many requests the run should have sent.
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True))
    [reason] = _reasons(rs, "evolved/load-spikes/rate-30/")
    assert (
        "recorded 6 requests" in reason and "about 3600 (30 req/s x 120 s, the load stage its harness config" in reason
    )

    # Nor that: the other arm's runs of the cell are the yardstick.
    _edit(root, "*/load-spikes/rate-30/rep-*", lambda d: d["scenario"]["load"]["native"]["config"].pop("load"))
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True))
    [reason] = _reasons(rs, "evolved/load-spikes/rate-30/")
    assert reason.startswith("cut short: it recorded 6 requests")
    assert re.search(r"the baseline arm's 7 run\(s\) of load-spikes @ 30 req/s recorded 3\d{3} \(median\)", reason)
    assert _reasons(rs, "baseline/load-spikes/rate-30/") == set()


def test_the_yardstick_is_the_stage_the_plan_renders_with_its_overrides(tmp_path):
    """Red team 10 item 4: a workload whose stage length is set through ``overrides`` (``load.stages.0.duration``,
    which the plan accepts and renders) had every full-length run rejected as "cut short" against ``duration_s``.
    The yardstick is the stage ``workload_profile`` renders: a 40 s run's requests count, and against a 600 s
    stage a run that sent 200 s worth is cut short although it clears half of ``duration_s``'s 120 s."""
    from bot.bench.experiment import workload_profile

    def loads(seconds: int) -> dict:
        raw = yaml.safe_load((EXAMPLE / "promotion.yaml").read_text())
        w = next(w for w in raw["workloads"] if w["name"] == "load-spikes")
        w["overrides"]["load.stages.0.duration"] = seconds
        request = PromotionRequest.model_validate(raw)
        assert workload_profile(request, "load-spikes")["load"]["stages"] == [{"rate": 30.0, "duration": seconds}]
        return planned_loads(request)

    def ran(seconds: int, share: float):
        def edit(doc: dict) -> None:
            config = doc["scenario"]["load"]["native"]["config"]
            config["load"]["stages"][0]["duration"] = seconds
            config.setdefault("overrides", {})["load.stages.0.duration"] = seconds
            aggregate = doc["results"]["request_performance"]["aggregate"]["requests"]
            aggregate["total"] = round(aggregate["total"] * share)

        return edit

    root = _copy(tmp_path)
    _edit(root, "*/load-spikes/rate-*/rep-*", ran(40, 1 / 3))  # what full 40 s runs record
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True, workloads=loads(40)))
    assert _reasons(rs, "baseline/load-spikes/") | _reasons(rs, "evolved/load-spikes/") == set()

    root = _copy(tmp_path / "long")
    _edit(root, "*/load-spikes/rate-30/rep-*", ran(600, 5 / 3))  # 200 s of a 600 s stage: stopped early
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True, workloads=loads(600)))
    reasons = _reasons(rs, "baseline/load-spikes/rate-30/")
    assert reasons and all("cut short" in r and "(30 req/s x 600 s, the plan's 'load-spikes'" in r for r in reasons)
