"""Evidence belongs to this promotion: arm, EPP config, stack, image; sample data only when asked for."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import yaml

from bot.bench.evidence import SAMPLE_FLAG, EvidencePolicy, config_digest, load_evidence, mark_sample
from bot.bench.reports import ReportError
from bot.model import Verdict, VerdictStatus
from tests.bench.bench_helpers import make_doc

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "weighted-adaptive"
BASELINE = {
    "apiVersion": "llm-d.ai/v1alpha1",
    "kind": "EndpointPickerConfig",
    "plugins": [{"type": "queue-scorer"}, {"type": "prefix-cache-scorer"}],
    "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "queue-scorer", "weight": 2}]}],
}
EVOLVED = {
    "apiVersion": "llm-d.ai/v1alpha1",
    "kind": "EndpointPickerConfig",
    "plugins": [{"type": "evolved-adaptive-scorer", "parameters": {"loadDeltaThreshold": 0.2}}],
    "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "evolved-adaptive-scorer"}]}],
}


def _doc(arm_config: dict, *, model="m/x", replicas=4, keywords=None, ttft=50.0) -> dict:
    doc = make_doc(ttft_ms=ttft)
    doc["scenario"]["stack"] = [
        {
            "metadata": {"label": "vllm", "cfg_id": "c1"},
            "standardized": {
                "kind": "inference_engine",
                "tool": "vllm",
                "tool_version": "v",
                "role": "replica",
                "replicas": replicas,
                "model": {"name": model},
                "accelerator": {"model": "H100", "count": 1, "parallelism": {"tp": 1}},
            },
            "native": {"args": {}, "envars": {}},
        },
        {
            "metadata": {"label": "Inference Scheduler (EPP)", "cfg_id": "c2"},
            "standardized": {"kind": "generic", "tool": "inference_scheduler", "tool_version": ""},
            "native": {"config": copy.deepcopy(arm_config)},
        },
    ]
    if keywords is not None:
        doc["run"]["keywords"] = keywords
    return doc


def _policy(**kw) -> EvidencePolicy:
    base = {"promotion": "7", "arms": {"baseline": BASELINE, "evolved": EVOLVED}, "model": "m/x", "replicas": 4}
    return EvidencePolicy(**(base | kw))


def test_reports_of_this_plans_arms_count(results_factory):
    root, write = results_factory
    for rep in (1, 2):
        write("baseline", "w", 10, rep, _doc(BASELINE, keywords=["promotion:7", "arm:baseline"]))
        write("evolved", "w", 10, rep, _doc(EVOLVED, ttft=40.0))
    rs = load_evidence(root, _policy())
    assert rs.rejected == [] and len(rs.loaded) == 4 and rs.notes == []


def test_a_report_that_measured_something_else_is_rejected_with_the_reason(results_factory):
    root, write = results_factory
    write("baseline", "w", 10, 1, _doc(BASELINE))
    write("evolved", "w", 10, 1, _doc(EVOLVED))
    other = copy.deepcopy(EVOLVED)
    other["plugins"][0]["parameters"]["loadDeltaThreshold"] = 0.25
    write("evolved", "w", 10, 2, _doc(other))
    write("evolved", "w", 10, 3, _doc(BASELINE))  # the other arm's config, filed under evolved
    foreign = copy.deepcopy(EVOLVED)
    foreign["plugins"] = [{"type": "some-other-scorer"}]
    write("evolved", "w", 10, 4, _doc(foreign))
    write("evolved", "w", 10, 5, _doc(EVOLVED, model="Qwen/Qwen3-32B"))
    write("evolved", "w", 10, 6, _doc(EVOLVED, replicas=2))
    write("evolved", "w", 10, 7, _doc(EVOLVED, keywords=["promotion:99"]))
    write("evolved", "w", 10, 8, _doc(EVOLVED, keywords=["arm:baseline"]))
    no_epp = _doc(EVOLVED)
    no_epp["scenario"]["stack"] = no_epp["scenario"]["stack"][:1]
    write("evolved", "w", 10, 9, no_epp)
    write(
        "evolved",
        "w",
        10,
        10,
        _doc(EVOLVED, keywords=["epp-image:ghcr.io/o/epp:t@sha256:" + "b" * 64]),
    )
    rs = load_evidence(root, _policy(image_digest="sha256:" + "a" * 64))
    reasons = {p.split("/")[3]: r for p, r in rs.rejected}
    assert reasons["rep-2"] == (
        "EPP config differs from the evolved arm's in this plan: plugin 'evolved-adaptive-scorer' parameter "
        "'loadDeltaThreshold' is 0.25, the plan's is 0.2"
    )
    assert reasons["rep-3"] == "its EPP config is the baseline arm's, but it is filed under evolved"
    assert reasons["rep-4"].startswith("EPP config differs from the evolved arm's in this plan: plugins ['some-other")
    assert reasons["rep-5"] == "measured model Qwen/Qwen3-32B, but the plan's stack serves m/x"
    assert reasons["rep-6"] == "2 model-server replicas, but the plan's stack has 4"
    assert reasons["rep-7"] == "belongs to promotion '99' (run.keywords), not '7'"
    assert reasons["rep-8"] == "run.keywords says arm 'baseline', but it is filed under 'evolved'"
    assert reasons["rep-9"].startswith("records no EPP config")
    assert (
        reasons["rep-10"].startswith("EPP image ghcr.io/o/epp:t@sha256:bbbb")
        and "not the one built" in reasons["rep-10"]
    )
    assert rs.loaded == [
        "baseline/w/rate-10/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml",
        "evolved/w/rate-10/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml",
    ]


def test_a_report_on_a_bigger_stack_or_one_serving_a_second_model_is_rejected(results_factory):
    """The stack must be the plan's, not merely contain it: a cell measured on 8 replicas against a plan of 4 has
    half the load per replica, and an engine serving another model beside the planned one shares the cluster."""
    root, write = results_factory
    write("baseline", "w", 10, 1, _doc(BASELINE))
    write("evolved", "w", 10, 1, _doc(EVOLVED))
    write("evolved", "w", 10, 2, _doc(EVOLVED, replicas=8))
    two_models = _doc(EVOLVED, replicas=2)
    second = copy.deepcopy(two_models["scenario"]["stack"][0])
    second["metadata"]["cfg_id"], second["standardized"]["model"] = "c3", {"name": "Qwen/Qwen3-32B"}
    two_models["scenario"]["stack"].insert(1, second)  # 2 + 2 replicas: only the model differs from the plan
    write("evolved", "w", 10, 3, two_models)
    rs = load_evidence(root, _policy())
    reasons = {p.split("/")[3]: r for p, r in rs.rejected}
    assert reasons == {
        "rep-2": "8 model-server replicas, but the plan's stack has 4",
        "rep-3": "measured model Qwen/Qwen3-32B, m/x, but the plan's stack serves m/x",
    }, rs.rejected
    assert len(rs.loaded) == 2


def test_the_bundled_sample_data_is_refused_without_the_flag(tmp_path):
    with pytest.raises(ReportError) as exc:
        load_evidence(EXAMPLE / "results", EvidencePolicy())
    assert "every report there is sample data" in str(exc.value) and "--allow-sample-data" in str(exc.value)
    # One real-looking report among sample ones: the sample ones are listed, one by one.
    root = tmp_path / "results"
    shutil.copytree(EXAMPLE / "results" / "baseline" / "load-spikes", root / "baseline" / "load-spikes")
    real = yaml.safe_load(
        (
            root / "baseline/load-spikes/rate-30/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
        ).read_text()
    )
    real["run"]["keywords"], real["run"]["description"], real["run"]["uid"] = [], "a run", "real-1"
    (root / "baseline/load-spikes/rate-30/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml").write_text(
        yaml.safe_dump(real)
    )
    rs = load_evidence(root, EvidencePolicy())
    assert len(rs.loaded) == 1 and rs.notes == []
    assert all("sample data, not a measurement" in r for _, r in rs.rejected) and rs.rejected


def test_stage_5_refuses_sample_data_committed_to_the_branch_without_the_flag(tmp_path):
    """On GitHub no `promote run` pre-check reads the reports: stage 5's own rules (``run_validate.judge``, from
    the context's flag) must refuse sample reports a benchmark job committed to the promotion branch."""
    from bot.forge.local import LocalForge
    from bot.model import PipelineState, PromotionRequest
    from bot.stages.context import StageContext
    from bot.stages.run_validate import judge

    request = PromotionRequest.load(EXAMPLE / "promotion.yaml")
    forge = LocalForge(tmp_path / "fork", tmp_path / "work")
    forge.ensure_branch(request.branch, "main")
    state = PipelineState(request_id=request.id, request_fingerprint="f", branch=request.branch)
    prefix = f"{StageContext(request, forge, state).paths.benchmarks}/results/"
    results = EXAMPLE / "results"
    rels = [p.relative_to(results).as_posix() for p in results.rglob("*") if p.is_file()]
    files = {
        prefix + rel: (results / rel).read_bytes() for rel in rels if "+" not in rel
    }  # no fault cells: plain paths
    forge.commit_files(request.branch, files, message="the benchmark job's reports")
    with pytest.raises(ReportError) as exc:
        judge(StageContext(request, forge, state), [])
    assert "every report there is sample data" in str(exc.value) and "--allow-sample-data" in str(exc.value)
    assert str(exc.value).startswith(f"`{prefix}` on the promotion branch: "), exc.value  # not its temporary copy
    # a rehearsal that asked for sample data gets the same reports judged, flagged as such
    _, reports, _, _ = judge(StageContext(request, forge, state, allow_sample_data=True), [])
    assert reports.loaded and reports.notes == [SAMPLE_FLAG]


def test_with_the_flag_every_verdict_says_sample_data():
    rs = load_evidence(EXAMPLE / "results", EvidencePolicy(allow_sample_data=True))
    assert rs.notes == [SAMPLE_FLAG] and rs.rejected == []
    v = Verdict(hypothesis_id="A1", status=VerdictStatus.CONFIRMED, summary="A1 held.")
    [marked] = mark_sample([v], rs)
    assert marked.summary.startswith("[SAMPLE DATA]") and SAMPLE_FLAG in marked.flags


# The bundled routing example's evolved image: what item 13's scheduler promotion was shown as its testbed.
OTHER_PLUGIN_IMAGE = "ghcr.io/example-org/llm-d-router:v0.10.0-evolved-adaptive-scorer"
PINNED = "ghcr.io/acme/llm-d-router:promotion-7-evolved-adaptive-scorer"


def _with_image(doc: dict, image: str) -> dict:
    doc["scenario"]["stack"][1]["standardized"]["tool_version"] = image
    return doc


def test_an_epp_image_digest_recorded_only_in_tool_version_is_checked(results_factory):
    """llm-d-benchmark records the EPP image in ``scenario.stack[].standardized.tool_version``; a run made outside
    `promote bench run` carries no ``epp-image:`` keyword, so another build's digest there must still be caught."""
    root, write = results_factory
    mine, other = "ghcr.io/o/epp:t@sha256:" + "a" * 64, "ghcr.io/o/epp:t@sha256:" + "b" * 64
    write("baseline", "w", 10, 1, _with_image(_doc(BASELINE), mine))
    write("evolved", "w", 10, 1, _with_image(_doc(EVOLVED), mine))
    write("evolved", "w", 10, 2, _with_image(_doc(EVOLVED, ttft=41.0), other))
    rs = load_evidence(root, _policy(image_digest="sha256:" + "a" * 64))
    assert [(p.split("/")[3], r) for p, r in rs.rejected] == [
        ("rep-2", f"EPP image {other} is not the one built for this promotion (@sha256:{'a' * 64})")
    ]
    assert len(rs.loaded) == 2


def test_an_evolved_report_that_ran_another_plugins_image_is_left_out_naming_both_images(results_factory):
    """Found by a new user: a scheduler promotion's evolved reports said they ran the routing example's image,
    and gate 3 approved them with no finding; the report printed that image as the testbed."""
    from bot.bench import testbed

    root, write = results_factory
    for rep in (1, 2):
        write("baseline", "w", 10, rep, _with_image(_doc(BASELINE), PINNED))
    write("evolved", "w", 10, 1, _with_image(_doc(EVOLVED, ttft=40.0), PINNED))
    # The runner pushes to a configured registry: the tag names the build, the registry does not.
    write("evolved", "w", 10, 2, _with_image(_doc(EVOLVED, ttft=41.0), "reg.local:5000/x/epp:" + PINNED.split(":")[-1]))
    write("evolved", "w", 10, 3, _with_image(_doc(EVOLVED, ttft=42.0), OTHER_PLUGIN_IMAGE))
    write(
        "evolved", "w", 10, 4, _doc(EVOLVED, ttft=43.0, keywords=[f"epp-image:{OTHER_PLUGIN_IMAGE}@sha256:" + "c" * 64])
    )
    rs = load_evidence(root, _policy(evolved_image=PINNED))
    reasons = {p.split("/")[3]: r for p, r in rs.rejected if p.startswith("evolved/")}
    assert sorted(reasons) == ["rep-3", "rep-4"], rs.rejected
    assert reasons["rep-3"] == (
        f"its evolved EPP image {OTHER_PLUGIN_IMAGE} is not the one this plan pins for both arms ({PINNED}): "
        "tag 'v0.10.0-evolved-adaptive-scorer', the plan's is 'promotion-7-evolved-adaptive-scorer', so it "
        "measured another build or plugin"
    )
    assert OTHER_PLUGIN_IMAGE in reasons["rep-4"] and PINNED in reasons["rep-4"]
    assert len(rs.loaded) == 4
    # The testbed line names only images a kept report ran.
    line = testbed.testbed_markdown(testbed.summarize(rs.testbeds))
    assert PINNED in line and OTHER_PLUGIN_IMAGE not in line


def test_a_baseline_report_that_ran_another_router_image_is_left_out_like_an_evolved_one(results_factory):
    """Found by the evidence audit: only the evolved arm's image was checked, so a baseline measured on another
    router build (a two-year-older project) was compared with the evolved plugin as if only the config differed.
    The plan runs one EPP image for both arms; a report without a tag (a bare version) is not held against."""
    root, write = results_factory
    old_router = "ghcr.io/llm-d/llm-d-inference-scheduler:v0.3.0"
    write("baseline", "w", 10, 1, _with_image(_doc(BASELINE), PINNED))
    write("baseline", "w", 10, 2, _with_image(_doc(BASELINE, ttft=51.0), old_router))
    write("baseline", "w", 10, 3, _doc(BASELINE, ttft=52.0, keywords=[f"epp-image:{old_router}"]))
    write("baseline", "w", 10, 4, _with_image(_doc(BASELINE, ttft=53.0), "v0.10.0"))
    write("evolved", "w", 10, 1, _with_image(_doc(EVOLVED, ttft=40.0), PINNED))
    rs = load_evidence(root, _policy(evolved_image=PINNED))
    reasons = {p.split("/")[3]: r for p, r in rs.rejected}
    assert sorted(reasons) == ["rep-2", "rep-3"], rs.rejected
    assert reasons["rep-2"] == (
        f"its baseline EPP image {old_router} is not the one this plan pins for both arms ({PINNED}): tag 'v0.3.0', "
        "the plan's is 'promotion-7-evolved-adaptive-scorer', so it measured another build or plugin"
    )
    assert old_router in reasons["rep-3"]
    assert sorted((p.split("/")[0], p.split("/")[3]) for p in rs.loaded) == [
        ("baseline", "rep-1"),
        ("baseline", "rep-4"),
        ("evolved", "rep-1"),
    ]


def test_the_evolved_image_binding_comes_from_the_plan_or_the_runner():
    """The spec's pin binds reports run from experiment.yaml; a run by `promote bench run` is bound to the image
    its manifest records (its tag names the commit, not the slug), or by digest alone."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import policy_from_spec
    from bot.bench.experiment import render_experiment
    from bot.bench.plan import make_plan
    from tests.bench.test_bench_plan import EPP_BASELINE, EPP_EVOLVED, _example_hypotheses, _request

    req = _request()
    files = render_experiment(make_plan(req, _example_hypotheses()), req, EPP_BASELINE, EPP_EVOLVED)
    spec = load_evaluation_spec(files["benchmarks/promotion/evolved-adaptive-scorer/evaluation.yaml"])
    constants = yaml.safe_load(files["benchmarks/promotion/evolved-adaptive-scorer/experiment.yaml"])["setup"][
        "constants"
    ]
    pinned = "{}/{}:{}".format(*(constants[f"router.epp.image.{k}"] for k in ("registry", "repository", "tag")))
    assert spec.evolved_image == pinned == "ghcr.io/example-org/llm-d-router:promotion-7-evolved-adaptive-scorer"
    assert policy_from_spec(spec, allow_sample_data=False).evolved_image == pinned
    built = "ghcr.io/example-org/llm-d-router-epp:promotion-7-0123456789ab"
    digest = "sha256:" + "a" * 64
    assert policy_from_spec(spec, allow_sample_data=False, image_digest=digest, image_ref=built).evolved_image == built
    assert policy_from_spec(spec, allow_sample_data=False, image_digest=digest).evolved_image is None


def test_a_config_mismatch_names_every_difference_not_only_the_first():
    """Gate 1 changed two values and the scorers: a report of the earlier plan is left out naming all three."""
    from bot.bench.evidence import config_difference

    plan = copy.deepcopy(EVOLVED)
    plan["plugins"][0]["parameters"] = {"loadThreshold": 60.0, "qdCoeff": 1.2}
    plan["schedulingProfiles"][0]["plugins"].append({"pluginRef": "queue-scorer", "weight": 1})
    plan["plugins"].append({"type": "queue-scorer"})
    measured = copy.deepcopy(EVOLVED)
    measured["plugins"][0]["parameters"] = {"loadThreshold": 10.0, "qdCoeff": 0.8}
    assert config_difference(measured, plan) == (
        "plugins ['evolved-adaptive-scorer'] instead of ['evolved-adaptive-scorer', 'queue-scorer']; "
        "plugin 'evolved-adaptive-scorer' parameter 'loadThreshold' is 10.0, the plan's is 60.0; "
        "plugin 'evolved-adaptive-scorer' parameter 'qdCoeff' is 0.8, the plan's is 1.2; "
        "schedulingProfiles differ (plugin weights or order)"
    )
    assert config_difference(plan, copy.deepcopy(plan)) is None


#: An admitter's plan: the config hands admission to the plugin's saturation detector (flowControl).
ADMITTER = {
    "apiVersion": "llm-d.ai/v1alpha1",
    "kind": "EndpointPickerConfig",
    "plugins": [
        {"type": "evolved-admitter", "parameters": {"x": 1}},
        {"type": "utilization-detector", "parameters": {"queueDepthThreshold": 1000000}},
        {"type": "max-score-picker"},
    ],
    "flowControl": {"saturationDetector": {"pluginRef": "utilization-detector"}},
    "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "max-score-picker"}]}],
}


def test_a_recorded_config_without_the_plans_flow_control_or_with_other_feature_gates_does_not_bind(
    results_factory,
):
    """Redteam7 item 5: only plugins and profiles were compared, so a run that left flowControl out (the built-in
    detector shed first) bound to the evolved arm from its stack, while its epp-config digest was refused. Every
    top-level key but apiVersion counts now, named down to the leaf that differs."""
    from bot.bench.evidence import config_difference

    no_flow = copy.deepcopy(ADMITTER)
    del no_flow["flowControl"]
    other_ref = copy.deepcopy(ADMITTER)
    other_ref["flowControl"]["saturationDetector"]["pluginRef"] = "builtin"
    gated = copy.deepcopy(ADMITTER) | {"featureGates": ["prepareDataPlugins"]}
    for recorded in (no_flow, other_ref, gated):  # both ways of binding agree
        assert config_difference(recorded, ADMITTER) is not None
        assert config_digest(recorded) != config_digest(ADMITTER)
    assert config_difference(no_flow, ADMITTER) == (
        'flowControl is absent, the plan\'s is {"saturationDetector": {"pluginRef": "utilization-detector"}}'
    )
    assert config_difference(other_ref, ADMITTER) == (
        'flowControl.saturationDetector.pluginRef is "builtin", the plan\'s is "utilization-detector"'
    )
    assert config_difference(gated, ADMITTER) == 'featureGates is ["prepareDataPlugins"], the plan\'s is absent'
    respelled = copy.deepcopy(ADMITTER) | {"apiVersion": "inference.networking.x-k8s.io/v1alpha1"}
    assert config_difference(respelled, ADMITTER) is None  # the schema's spelling decides nothing

    root, write = results_factory
    write("evolved", "w", 10, 1, _doc(ADMITTER))
    write("evolved", "w", 10, 2, _doc(no_flow))
    rs = load_evidence(root, _policy(arms={"baseline": BASELINE, "evolved": ADMITTER}))
    assert [p.split("/")[3] for p in rs.loaded] == ["rep-1"]
    assert rs.rejected[0][1].startswith("EPP config differs from the evolved arm's in this plan: flowControl is absent")


#: A report as llm-d-benchmark writes it (its converter's own output; how it was made is in the file's header).
UPSTREAM = Path(__file__).resolve().parent / "fixtures" / "upstream_driver_report_v0_2.yaml"


def _upstream(uid: str, *, keywords: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> dict:
    """The upstream report with its run.uid and some keywords (``name`` -> value) replaced or dropped."""
    doc = yaml.safe_load(UPSTREAM.read_text(encoding="utf-8"))
    doc["run"]["uid"] = uid
    kws = [k for k in doc["run"]["keywords"] if k.split(":", 1)[0] not in {*drop, *(keywords or {})}]
    doc["run"]["keywords"] = kws + [f"{k}:{v}" for k, v in (keywords or {}).items()]
    return doc


def test_a_report_as_llm_d_benchmark_writes_it_binds_to_its_arm_by_the_runners_keywords(results_factory):
    """Upstream finding 1: llm-d-benchmark never records the EndpointPickerConfig (scenario.stack[].native.config
    is filled from an environment variable nothing sets, and `run --analyze` re-converts with no scenario.stack at
    all), so every real report was refused. What survives is run.keywords: the epp-config digest binds it."""
    root, write = results_factory
    real = yaml.safe_load(UPSTREAM.read_text(encoding="utf-8"))
    assert "stack" not in real["scenario"] and f"epp-config:{config_digest(EVOLVED)}" in real["run"]["keywords"]
    write("evolved", "w", 1, 1, real)
    in_pod = _upstream("u2")  # the in-pod conversion: an EPP component whose config is {}
    in_pod["scenario"]["stack"] = [
        {
            "metadata": {"label": "Inference Scheduler (EPP)", "cfg_id": "x"},
            "standardized": {"kind": "generic", "tool": "inference_scheduler", "tool_version": ""},
            "native": {"config": {}},
        }
    ]
    write("evolved", "w", 1, 2, in_pod)
    base = {"arm": "baseline", "epp-config": config_digest(BASELINE)}
    write("baseline", "w", 1, 1, _upstream("b1", keywords=base))
    write("evolved", "w", 1, 3, _upstream("u3", keywords=base))  # the baseline's run, filed under evolved
    write("evolved", "w", 1, 4, _upstream("u4", keywords={"epp-config": config_digest(BASELINE)}))
    changed = copy.deepcopy(EVOLVED)
    changed["plugins"][0]["parameters"]["loadDeltaThreshold"] = 0.25
    write("evolved", "w", 1, 5, _upstream("u5", keywords={"epp-config": config_digest(changed)}))
    write("evolved", "w", 1, 6, _upstream("u6", drop=("epp-config",)))
    stack_says_baseline = _upstream("u7")
    stack_says_baseline["scenario"]["stack"] = _doc(BASELINE)["scenario"]["stack"]
    write("evolved", "w", 1, 7, stack_says_baseline)  # both records are there: both must be the arm's
    write("evolved", "w", 1, 8, _upstream("u8", keywords={"epp-image": "ghcr.io/acme/llm-d-router:other-build"}))
    rs = load_evidence(root, _policy(evolved_image=PINNED))
    reasons = {p.split("/")[0] + "/" + p.split("/")[3]: r for p, r in rs.rejected}
    evolved = config_digest(EVOLVED)
    assert reasons == {
        "evolved/rep-3": "run.keywords says arm 'baseline', but it is filed under 'evolved'",
        "evolved/rep-4": f"run.keywords epp-config:{config_digest(BASELINE)} is the baseline arm's EPP config, but "
        "it is filed under evolved",
        "evolved/rep-5": f"run.keywords epp-config:{config_digest(changed)} is not the evolved arm's EPP config in "
        f"this plan ({evolved}): it ran another config (the plan changed since, or another program's)",
        "evolved/rep-6": "records no EPP config: neither an EndpointPickerConfig in scenario.stack[].native.config "
        "(llm-d-benchmark leaves it empty) nor an epp-config: keyword in run.keywords, so it cannot show which arm "
        "it measured; run the plan with `promote bench run` or from its experiment.yaml (both record it), or by "
        f"hand one arm at a time with `llmdbenchmark --run-keywords promotion:7,arm:evolved,epp-config:{evolved} "
        "...` for the evolved arm",
        "evolved/rep-7": "its EPP config is the baseline arm's, but it is filed under evolved",
        "evolved/rep-8": "its evolved EPP image ghcr.io/acme/llm-d-router:other-build is not the one this plan pins "
        f"for both arms ({PINNED}): tag 'other-build', the plan's is 'promotion-7-evolved-adaptive-scorer', so it "
        "measured another build or plugin",
    }, rs.rejected
    assert sorted(rs.loaded) == [
        f"{arm}/w/rate-1/rep-{n}/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
        for arm, n in (("baseline", 1), ("evolved", 1), ("evolved", 2))
    ]


def test_the_config_digest_ignores_key_order_and_yaml_layout_but_not_values():
    from bot.yaml_safe import load_yaml

    reordered = load_yaml(yaml.safe_dump(EVOLVED, sort_keys=True, default_flow_style=True))
    assert config_digest(reordered) == config_digest(EVOLVED) != config_digest(BASELINE)
    changed = copy.deepcopy(EVOLVED)
    changed["plugins"][0]["parameters"]["loadDeltaThreshold"] = 0.2000001
    assert config_digest(changed) != config_digest(EVOLVED)


def test_a_copy_filed_under_the_wrong_arm_is_refused_and_the_genuine_report_still_counts(results_factory):
    """Bound first, then deduplicated: the copy is refused for its arm, named as a copy, and the genuine report
    counts once (it used to be called the copy's duplicate, so neither counted)."""
    root, write = results_factory
    write("baseline", "w", 10, 1, _doc(BASELINE, keywords=["promotion:7", "arm:baseline"]))
    genuine = write("evolved", "w", 10, 1, _doc(EVOLVED, keywords=["promotion:7", "arm:evolved"]))
    misfiled = root / "baseline" / "w" / "rate-10" / "rep-2" / genuine.name
    misfiled.parent.mkdir(parents=True)
    shutil.copy(genuine, misfiled)
    rs = load_evidence(root, _policy())
    rel = genuine.relative_to(root).as_posix()
    assert rel in rs.loaded and len(rs.loaded) == 2
    assert rs.rejected == [
        (
            misfiled.relative_to(root).as_posix(),
            (
                f"run.keywords says arm 'evolved', but it is filed under 'baseline' (a copy of {rel}, which is counted "
                "there)"
            ),
        )
    ]


def test_without_the_run_manifest_a_report_of_this_promotions_runner_build_binds_by_its_tag_and_commit(
    results_factory,
):
    """Found by the admission end-to-end pass (item 6): with manifest.json gone (copied or merged results) every
    report of the runner's own image was "another build or plugin", because experiment.yaml pins the slug's tag
    and the runner tags its build ``promotion-<id>-<commit>``. That tag, with the commit the run records, binds a
    report to this promotion's runner build; another promotion's build, or a tag naming another commit than the
    run records, is still refused, and the reason says the manifest is missing and what to do."""
    root, write = results_factory
    commit = "0123456789ab" + "c" * 28
    mine = f"reg.local:5000/acme/llm-d-router-epp:promotion-7-{commit[:12]}@sha256:" + "a" * 64
    other_promotion = mine.replace("promotion-7-", "promotion-8-")
    other_commit = mine.replace(commit[:12], "fedcba987654")

    def run(config: dict, image: str, *, ttft: float, commit_kw: str | None = commit) -> dict:
        kws = [f"epp-image:{image}", *([f"commit:{commit_kw}"] if commit_kw else [])]
        return _doc(config, ttft=ttft, keywords=["promotion:7", *kws])

    write("baseline", "w", 10, 1, run(BASELINE, mine, ttft=50.0))
    write("evolved", "w", 10, 1, run(EVOLVED, mine, ttft=40.0))
    write("evolved", "w", 10, 2, run(EVOLVED, other_promotion, ttft=41.0))
    write("evolved", "w", 10, 3, run(EVOLVED, other_commit, ttft=42.0))
    write("evolved", "w", 10, 4, run(EVOLVED, mine, ttft=43.0, commit_kw=None))
    write("evolved", "w", 10, 5, run(EVOLVED, OTHER_PLUGIN_IMAGE + "@sha256:" + "c" * 64, ttft=44.0))

    rs = load_evidence(root, _policy(evolved_image=PINNED, no_manifest=True))
    assert sorted((p.split("/")[0], p.split("/")[3]) for p in rs.loaded) == [
        ("baseline", "rep-1"),
        ("evolved", "rep-1"),
    ]
    reasons = {p.split("/")[3]: r for p, r in rs.rejected}
    assert sorted(reasons) == ["rep-2", "rep-3", "rep-4", "rep-5"], rs.rejected
    for rep in ("rep-2", "rep-3", "rep-4"):
        assert "these results have no manifest.json" in reasons[rep], reasons[rep]
        assert "put back the manifest.json of the run that wrote it" in reasons[rep]
    assert "it is promotion 8's runner build, not promotion 7's" in reasons["rep-2"]
    assert f"its tag names commit fedcba987654, but the run records commit:{commit}" in reasons["rep-3"]
    assert "records no commit: keyword" in reasons["rep-4"]
    assert "measured another build or plugin" in reasons["rep-5"]  # not a runner build: the pin decides

    # With a manifest, the image it records is the pin (run_evidence): a runner tag it does not name is refused.
    with pytest.raises(ReportError, match="promotion-7-0123456789ab', the plan's is .* another build or plugin"):
        load_evidence(root, _policy(evolved_image=PINNED))


def test_without_the_run_manifest_reports_of_two_runner_commits_are_all_refused_unless_the_plugin_check_decides(
    results_factory,
):
    """Found by the review of 283090e: bound by their tag alone, reports of two runner builds of one promotion
    (an older commit's run, before a gate-1 change, merged with the current one's) all counted, though a run
    measures one commit and only the manifest said which plugin code it held. Without it, reports of two commits
    are refused with both named and the fix; where stage 5 can read the commit's plugin code (``plugin_commit``),
    the build whose code is not the branch's is refused for that and the other run's reports count, and the set's
    notes say they were bound by tag and commit, not by a manifest (no sample-data mark on the verdicts)."""
    root, write = results_factory
    old, new = "0123456789ab" + "c" * 28, "fedcba987654" + "d" * 28

    def run(config: dict, commit: str, *, ttft: float) -> dict:
        image = f"reg.local:5000/acme/llm-d-router-epp:promotion-7-{commit[:12]}@sha256:" + "a" * 64
        return _doc(config, ttft=ttft, keywords=["promotion:7", f"epp-image:{image}", f"commit:{commit}"])

    for rep, commit in ((1, new), (2, new), (3, old)):
        write("baseline", "w", 10, rep, run(BASELINE, commit, ttft=50.0))
        write("evolved", "w", 10, rep, run(EVOLVED, commit, ttft=40.0))

    with pytest.raises(ReportError, match="runner builds of 2 commits"):
        load_evidence(root, _policy(evolved_image=PINNED, no_manifest=True))
    write("baseline", "w", 10, 9, _doc(BASELINE, ttft=50.0, keywords=["promotion:7"]))  # no image: the pin decides
    write("evolved", "w", 10, 9, _doc(EVOLVED, ttft=40.0, keywords=["promotion:7"]))
    rs = load_evidence(root, _policy(evolved_image=PINNED, no_manifest=True))
    assert sorted(p.split("/")[3] for p in rs.loaded) == ["rep-9", "rep-9"]
    assert len(rs.rejected) == 6 and rs.notes == []
    for _rel, reason in rs.rejected:
        assert "no manifest.json and hold reports of runner builds of 2 commits (0123456789ab, fedcba987654)" in reason
        assert "keep only one run's results in the results directory, or put back the manifest.json" in reason

    asked: list[str] = []

    def plugin_commit(commit: str) -> str | None:
        asked.append(commit)
        return (
            None
            if commit == new
            else f"measured on plugin code that differs from this branch's, built from {commit[:12]}"
        )

    rs = load_evidence(root, _policy(evolved_image=PINNED, no_manifest=True, plugin_commit=plugin_commit))
    assert sorted(asked) == [old, new]  # once per commit
    assert sorted(p.split("/")[3] for p in rs.loaded) == ["rep-1", "rep-1", "rep-2", "rep-2", "rep-9", "rep-9"]
    assert sorted(p.split("/")[3] for p, _ in rs.rejected) == ["rep-3", "rep-3"]
    for _rel, reason in rs.rejected:
        assert "these results have no manifest.json: measured on plugin code that differs" in reason, reason
    [note] = rs.notes
    assert "bound without the run's manifest.json" in note and "commit fedcba987654" in note
    assert "promotion-7-fedcba987654" in note and "its plugin code is this branch's" in note
    verdict = Verdict(hypothesis_id="A1", status=VerdictStatus.CONFIRMED, summary="s")
    assert mark_sample([verdict], rs) == [verdict]  # a note, not sample data
