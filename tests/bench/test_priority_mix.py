"""priority-mix results (upstream's results.json + run_metadata.yaml): per-class counts, both layouts, binding."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from bot.bench.errors import ReportError
from bot.bench.evidence import SAMPLE_FLAG, EvidencePolicy
from bot.bench.priority_mix import (
    load_priority_mix,
    load_priority_mix_evidence,
    load_priority_mix_results,
    parse_results,
    split_keywords,
)
from bot.model.evidence import SHED_STATUS

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "priority_mix"
BOT_RUN = "{arm}/priority-mix/rate-10/rep-{n}"
UPSTREAM_RUN = "setup-treatment-{arm}/results/priority-mix-priority-mix-rate-10-rep-{n}-17600000{n}0-ab{n}c"


def _copy(root: Path, arm: str, run: str = BOT_RUN, n: int = 1, source: str | None = None) -> Path:
    dest = root / run.format(arm=arm, n=n)
    dest.mkdir(parents=True)
    for name in ("results.json", "run_metadata.yaml"):
        shutil.copy(FIXTURES / (source or arm) / name, dest / name)
    return dest


def _edit_meta(run_dir: Path, **changes) -> None:
    path = run_dir / "run_metadata.yaml"
    meta = yaml.safe_load(path.read_text())
    meta.update(changes)
    path.write_text(yaml.safe_dump(meta, sort_keys=False))


def _doc(arm: str = "evolved") -> dict:
    return json.loads((FIXTURES / arm / "results.json").read_text())


def test_upstream_results_give_per_class_counts_with_the_429s_as_shed():
    classes = {c.name: c for c in load_priority_mix(FIXTURES / "evolved" / "results.json")}
    assert set(classes) == {"critical", "normal", "batch"}
    batch, critical = classes["batch"], classes["critical"]
    assert (batch.priority, batch.objective) == (-10, "app-batch")
    assert (batch.requests, batch.successes, batch.errors, batch.shed) == (4, 2, 2, 2)
    assert batch.admit_rate == 0.5
    assert (critical.priority, critical.requests, critical.successes, critical.shed) == (100, 4, 4, 0)
    assert classes["normal"].requests == 12
    assert SHED_STATUS == 429


def test_a_503_is_an_error_but_not_shed():
    doc = _doc("baseline")
    first = next(r for r in doc["requests"] if r["traffic_class"] == "normal")
    first["status_code"] = 503
    doc["summary"]["traffic_classes"]["normal"]["successes"] -= 1
    doc["summary"]["traffic_classes"]["normal"]["errors"] += 1
    normal = {c.name: c for c in parse_results(json.dumps(doc))}["normal"]
    assert (normal.errors, normal.shed) == (1, 0)


def test_a_refusal_is_counted_as_v0_10_0_sends_it_and_other_failures_are_not():
    """On llm-d-router v0.10.0 an Admitter's refusal reaches the client as 500 (director.go rewrites it to
    errcommon.Internal) and the built-in admission's as 429: both are shed. A 500 after tokens, a 500 the harness
    recorded a transport error for, a 503 and a timeout are the stack failing. The 500s are counted apart."""
    doc = _doc("evolved")
    normal = [r for r in doc["requests"] if r["traffic_class"] == "normal"]
    assert len(normal) >= 6
    normal[0].update(status_code=429)
    normal[1].update(status_code=500)  # a refusal: no token, no transport error
    normal[2].update(status_code=500, ttft_ms=12.5, output_tokens=3)  # failed mid-stream: not a refusal
    normal[3].update(status_code=500, error="ChunkedEncodingError: connection broken")
    normal[4].update(status_code=503)  # no endpoint: an outage
    normal[5].update(status_code=0, error="ReadTimeout")
    summary = doc["summary"]["traffic_classes"]["normal"]
    summary.update(successes=summary["successes"] - 6, errors=summary["errors"] + 6)
    counts = {c.name: c for c in parse_results(json.dumps(doc))}["normal"]
    assert (counts.errors, counts.shed, counts.shed_500) == (6, 2, 1)
    batch = {c.name: c for c in parse_results(json.dumps(doc))}["batch"]
    assert (batch.shed, batch.shed_500) == (2, 0)  # the fixture's 429s


@pytest.mark.parametrize("run", [BOT_RUN, UPSTREAM_RUN])
def test_both_layouts_load_into_one_table(tmp_path, run):
    for arm in ("baseline", "evolved"):
        _copy(tmp_path, arm, run)
    pm = load_priority_mix_results(tmp_path)
    assert pm.rejected == []
    t = pm.table.set_index(["treatment", "traffic_class"])
    assert set(t["workload"]) == {"priority-mix"} and set(t["rate"]) == {10.0}
    assert t.loc[("evolved", "batch"), "shed"] == 2 and t.loc[("baseline", "batch"), "shed"] == 0
    assert t.loc[("baseline", "critical"), "priority"] == 100


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda d: "{not json", "not JSON (line 1"),
        (lambda d: d.pop("summary") and d, "no summary.traffic_classes"),
        (lambda d: d["summary"]["traffic_classes"]["batch"].update(errors=-1) or d, "batch.errors is -1"),
        (lambda d: d["summary"]["traffic_classes"]["batch"].update(requests=5) or d, "the requests list has 4"),
        (lambda d: d.pop("requests") and d, f"shed (HTTP {SHED_STATUS} or 500) requests cannot be counted"),
        (lambda d: d["summary"]["traffic_classes"]["critical"].update(successes=9) or d, "exceed its 4 requests"),
    ],
)
def test_malformed_results_name_the_file_and_the_problem(tmp_path, mutate, reason):
    out = mutate(_doc())
    path = tmp_path / "results.json"
    path.write_text(out if isinstance(out, str) else json.dumps(out))
    with pytest.raises(ReportError) as exc:
        load_priority_mix(path)
    assert str(exc.value).startswith(f"{path}: ") and reason in str(exc.value)


def test_a_malformed_run_is_left_out_with_its_reason_and_the_rest_are_used(tmp_path):
    _copy(tmp_path, "baseline")
    bad = _copy(tmp_path, "evolved")
    (bad / "results.json").write_text("[]")
    pm = load_priority_mix_results(tmp_path)
    assert pm.loaded == ["baseline/priority-mix/rate-10/rep-1/results.json"]
    assert pm.rejected == [("evolved/priority-mix/rate-10/rep-1/results.json", pm.rejected[0][1])]
    assert "no summary.traffic_classes" in pm.rejected[0][1]
    (tmp_path / BOT_RUN.format(arm="baseline", n=1) / "results.json").write_text("{")
    with pytest.raises(ReportError, match="no usable priority-mix results"):
        load_priority_mix_results(tmp_path)


def test_other_harnesses_results_json_is_not_read_as_a_priority_mix(tmp_path):
    _copy(tmp_path, "baseline")
    guidellm = tmp_path / "setup-treatment-evolved/results/guidellm-priority-mix-rate-10-rep-1-1760000000-zz9"
    guidellm.mkdir(parents=True)
    (guidellm / "results.json").write_text(json.dumps({"benchmarks": []}))
    bare = tmp_path / "evolved/chat/rate-1/rep-1"
    bare.mkdir(parents=True)
    (bare / "results.json").write_text(json.dumps({"benchmarks": []}))
    pm = load_priority_mix_results(tmp_path)
    assert pm.loaded == ["baseline/priority-mix/rate-10/rep-1/results.json"] and pm.rejected == []
    shutil.rmtree(tmp_path / "baseline")
    with pytest.raises(ReportError, match="no priority-mix results found"):
        load_priority_mix_results(tmp_path)


def test_a_copied_run_counts_once(tmp_path):
    _copy(tmp_path, "evolved", n=1)
    _copy(tmp_path, "evolved", n=2)
    pm = load_priority_mix_results(tmp_path)
    assert pm.loaded == ["evolved/priority-mix/rate-10/rep-1/results.json"]
    assert "duplicate: byte-identical" in pm.rejected[0][1]


def test_keywords_split_as_upstream_splits_them():
    assert split_keywords("promotion:7, arm:evolved ,,") == ("promotion:7", "arm:evolved")
    assert split_keywords(None) == ()


# --------------------------------------------------------------------------
# Binding: evidence belongs to this promotion's arm
# --------------------------------------------------------------------------


def _policy(**kw) -> EvidencePolicy:
    return EvidencePolicy(promotion="7", **kw)


def test_runs_recording_this_promotion_and_their_arm_are_evidence(tmp_path):
    _copy(tmp_path, "baseline")
    _copy(tmp_path, "evolved", UPSTREAM_RUN)
    pm = load_priority_mix_evidence(tmp_path, _policy())
    assert len(pm.loaded) == 2 and pm.rejected == [] and pm.notes == []


def test_a_run_filed_under_the_other_arm_or_another_promotion_is_left_out(tmp_path):
    _copy(tmp_path / "a", "baseline")
    _copy(tmp_path / "a", "baseline", n=2, source="evolved")  # the evolved arm's run, filed under baseline
    pm = load_priority_mix_evidence(tmp_path / "a", _policy())
    assert pm.loaded == ["baseline/priority-mix/rate-10/rep-1/results.json"]
    assert "says arm 'evolved', but it is filed under 'baseline'" in pm.rejected[0][1]
    _copy(tmp_path / "b", "baseline")
    _edit_meta(_copy(tmp_path / "b", "evolved"), description_keywords="promotion:8,arm:evolved")
    pm = load_priority_mix_evidence(tmp_path / "b", _policy())
    assert pm.rejected == [("evolved/priority-mix/rate-10/rep-1/results.json", pm.rejected[0][1])]
    assert "belongs to promotion '8' (run.keywords), not '7'" in pm.rejected[0][1]


def test_a_copy_filed_under_the_wrong_arm_leaves_the_genuine_run_counted(tmp_path):
    """Bound first, then deduplicated: the evolved run copied into the baseline's directory is refused as a
    misfiled copy, and the evolved run itself still counts (it used to be called the copy's duplicate, so neither
    counted)."""
    _copy(tmp_path, "baseline", n=2)
    _copy(tmp_path, "evolved")
    _copy(tmp_path, "baseline", source="evolved")  # baseline/…/rep-1 sorts before evolved/…/rep-1
    pm = load_priority_mix_evidence(tmp_path, _policy())
    assert pm.loaded == [
        "baseline/priority-mix/rate-10/rep-2/results.json",
        f"{BOT_RUN.format(arm='evolved', n=1)}/results.json",
    ]
    assert pm.rejected == [
        (
            "baseline/priority-mix/rate-10/rep-1/results.json",
            (
                "run.keywords says arm 'evolved', but it is filed under 'baseline' "
                "(a copy of evolved/priority-mix/rate-10/rep-1/results.json, which is counted there)"
            ),
        )
    ]


def test_a_run_that_records_no_promotion_or_arm_cannot_be_bound(tmp_path):
    _copy(tmp_path, "baseline")
    bare = _copy(tmp_path, "evolved")
    _edit_meta(bare, description_keywords="")
    (tmp_path / BOT_RUN.format(arm="baseline", n=1) / "run_metadata.yaml").unlink()
    with pytest.raises(ReportError, match="no usable priority-mix results") as exc:
        load_priority_mix_evidence(tmp_path, _policy())
    assert "cannot be bound to this promotion's baseline arm" in str(exc.value)
    # without a plan (a local evaluation) nothing says which promotion to hold it to: it is used
    assert len(load_priority_mix_evidence(tmp_path, EvidencePolicy()).loaded) == 2


def test_the_evolved_run_of_another_epp_image_is_left_out(tmp_path):
    run = _copy(tmp_path, "evolved")
    _edit_meta(
        run, description_keywords="promotion:7,arm:evolved,epp-image:ghcr.io/o/r:promotion-7-abc@sha256:" + "1" * 64
    )
    _copy(tmp_path, "baseline")
    pm = load_priority_mix_evidence(tmp_path, _policy(image_digest="sha256:" + "2" * 64))
    assert pm.loaded == ["baseline/priority-mix/rate-10/rep-1/results.json"]
    assert "is not the one built for this promotion" in pm.rejected[0][1]


def test_a_run_counts_only_for_the_arm_config_its_epp_config_keyword_records(tmp_path):
    """The runner passes epp-config:<digest> for priority-mix runs as for cells, but only reports checked it: a mix
    run recorded for the baseline's config and filed under evolved was used as the evolved arm's. And a run that
    records no config at all (a researcher's trial: gate 1 changed a parameter, every cell report made for the old
    plan was left out, and the mix runs made for it, with only promotion: and arm:, confirmed the shedding order) is
    left out as a cell report with no config record is: nothing in it shows which arm config it measured."""
    from bot.bench.evidence import config_digest

    arms = {
        "baseline": {"kind": "EndpointPickerConfig", "plugins": [{"type": "max-score-picker"}]},
        "evolved": {"kind": "EndpointPickerConfig", "plugins": [{"type": "evolved-admitter"}]},
    }
    old = {"kind": "EndpointPickerConfig", "plugins": [{"type": "evolved-admitter", "parameters": {"x": 2}}]}
    reasons = {}
    for name, config in (("same", arms["evolved"]), ("other-arm", arms["baseline"]), ("old-plan", old), ("none", None)):
        root = tmp_path / name  # one run each: a copied results.json counts once
        _edit_meta(
            _copy(root, "baseline"),
            description_keywords=f"promotion:7,arm:baseline,epp-config:{config_digest(arms['baseline'])}",
        )
        keywords = "promotion:7,arm:evolved" + (f",epp-config:{config_digest(config)}" if config else "")
        _edit_meta(_copy(root, "evolved"), description_keywords=keywords)
        pm = load_priority_mix_evidence(root, _policy(arms=arms))
        assert "baseline/priority-mix/rate-10/rep-1/results.json" in pm.loaded
        reasons[name] = pm.rejected[0][1] if pm.rejected else None
    assert reasons["same"] is None
    assert reasons["other-arm"] == (
        f"run.keywords epp-config:{config_digest(arms['baseline'])} is the baseline arm's EPP config, but it is "
        "filed under evolved"
    )
    assert reasons["old-plan"].startswith(f"run.keywords epp-config:{config_digest(old)} is not the evolved arm's")
    # the cell reports' reason for no config record, and how to run the mix so that it has one
    assert reasons["none"].startswith("records no EPP config: "), reasons["none"]
    assert "it cannot show which arm it measured" in reasons["none"]
    assert f"promotion:7,arm:evolved,epp-config:{config_digest(arms['evolved'])}" in reasons["none"]
    assert "priority-mix/experiment.yaml" in reasons["none"]
    # without the plan's arms (a local evaluation with no spec) there is no config to hold it to
    assert len(load_priority_mix_evidence(tmp_path / "none", _policy()).loaded) == 2


def test_sample_data_is_refused_unless_asked_for_and_then_flagged(tmp_path):
    for arm in ("baseline", "evolved"):
        _edit_meta(_copy(tmp_path, arm), description_keywords=f"promotion:7,arm:{arm},sample-data")
    with pytest.raises(ReportError, match="every priority-mix result in the results directory is sample data"):
        load_priority_mix_evidence(tmp_path, _policy())
    pm = load_priority_mix_evidence(tmp_path, _policy(allow_sample_data=True))
    assert len(pm.loaded) == 2 and pm.notes == [SAMPLE_FLAG]


def _plan(**changes):
    """The priority mix a plan adds (upstream's classes and load), with ``changes`` (e.g. the fixtures' rate 10)."""
    from bot.bench.priority_plan import plan_priority_mix

    plan = plan_priority_mix("an admitter", gpus_per_stack=1, standup_minutes=10, run_overhead_minutes=1)
    return plan.model_copy(update=changes)


def _rename(run_dir: Path, renames: dict[str, tuple[str, int, str]]) -> None:
    """Every class renamed, reprioritised and re-objectived in summary and requests (another profile's mix)."""
    path = run_dir / "results.json"
    doc = json.loads(path.read_text())
    classes = doc["summary"]["traffic_classes"]
    for old, (new, prio, objective) in renames.items():
        c = classes.pop(old)
        c["configured_priority"] = prio
        c["headers"]["x-llm-d-inference-objective"] = objective
        classes[new] = c
    for r in doc["requests"]:
        r["traffic_class"] = renames.get(r["traffic_class"], (r["traffic_class"],))[0]
    path.write_text(json.dumps(doc))


def test_a_run_of_another_mix_than_the_plans_is_left_out_with_the_difference(tmp_path):
    """F4 #5: a mix of gold/silver/bronze at 5/3/-1 (app-gold...) decided the shedding order the plan sized for
    critical/normal/batch at 100/0/-10; a run whose classes, priorities or objectives differ is not evidence."""
    plan = _plan(rate=10)
    root = tmp_path
    _copy(root, "baseline")
    foreign = _copy(root, "evolved")
    _rename(
        foreign,
        {
            "critical": ("gold", 5, "app-gold"),
            "normal": ("silver", 3, "app-silver"),
            "batch": ("bronze", -1, "app-bronze"),
        },
    )
    pm = load_priority_mix_evidence(root, _policy(), plan)
    assert pm.loaded == ["baseline/priority-mix/rate-10/rep-1/results.json"]
    [(rel, reason)] = pm.rejected
    assert rel.startswith("evolved/") and "not the plan's priority mix: classes bronze, gold, silver" in reason
    assert "run the plan's priority-mix/experiment.yaml with its profile and rate unchanged" in reason
    # one class's priority and another's objective changed, the names kept
    _rename(
        foreign,
        {
            "gold": ("critical", 100, "app-critical"),
            "silver": ("normal", 3, "app-normal"),
            "bronze": ("batch", -10, "app-bulk"),
        },
    )
    [(_, reason)] = load_priority_mix_evidence(root, _policy(), plan).rejected
    assert "normal has configured_priority 3, the plan's is 0" in reason
    assert "batch sends x-llm-d-inference-objective 'app-bulk', the plan's is 'app-batch'" in reason
    # the plan's own mix is used
    _rename(foreign, {"normal": ("normal", 0, "app-normal"), "batch": ("batch", -10, "app-batch")})
    assert len(load_priority_mix_evidence(root, _policy(), plan).loaded) == 2


def _set_weights(run_dir: Path, weights: dict[str, float]) -> None:
    path = run_dir / "results.json"
    doc = json.loads(path.read_text())
    for name, w in weights.items():
        doc["summary"]["traffic_classes"][name]["configured_weight"] = w
    path.write_text(json.dumps(doc))


def test_a_run_of_another_load_than_the_plans_is_left_out_with_the_difference(tmp_path):
    """N2 #4: runs at another rate than the plan's priority_mix.rate, or with other class weights, decided the
    shedding order: how much an admitter sheds depends on how saturated the stack is, so they measured another
    question."""
    plan = _plan(rate=10)
    _copy(tmp_path, "baseline")
    _edit_meta(_copy(tmp_path, "evolved", "{arm}/priority-mix/rate-80/rep-{n}"), experiment_id="rate-80")
    weighted = _copy(tmp_path, "evolved", n=2)
    _set_weights(weighted, {"critical": 0.05, "normal": 0.05, "batch": 0.9})
    pm = load_priority_mix_evidence(tmp_path, _policy(), plan)
    assert pm.loaded == ["baseline/priority-mix/rate-10/rep-1/results.json"]
    reasons = dict(pm.rejected)
    assert (
        "rate 80 req/s, the plan's is 10 (priority_mix.rate)"
        in reasons["evolved/priority-mix/rate-80/rep-1/results.json"]
    )
    weights = reasons["evolved/priority-mix/rate-10/rep-2/results.json"]
    assert "batch has configured_weight 0.9, the plan's is 0.2" in weights and "not the plan's priority mix" in weights
    # the same shares, written unnormalised, are the plan's mix
    _set_weights(weighted, {"critical": 2, "normal": 6, "batch": 2})
    assert (
        "evolved/priority-mix/rate-10/rep-2/results.json"
        in load_priority_mix_evidence(tmp_path, _policy(), plan).loaded
    )
    # a run with no plan (a local evaluation) is not held to one load
    assert len(load_priority_mix_evidence(tmp_path, _policy()).loaded) == 3


def test_a_weight_that_differs_is_named_alone(tmp_path):
    """GPU operator finding: one class's weight changed named every class ("critical has configured_weight 0.2, the
    plan's is 0.2"), since one weight moves every class's share; a reviewer hunted for differences that were not."""
    _copy(tmp_path, "baseline")
    _set_weights(_copy(tmp_path, "evolved"), {"batch": 0.3})
    [(_, reason)] = load_priority_mix_evidence(tmp_path, _policy(), _plan(rate=10)).rejected
    assert "batch has configured_weight 0.3, the plan's is 0.2" in reason
    assert "critical has" not in reason and "normal has" not in reason


def test_repetitions_beyond_the_plans_count_are_not_used(tmp_path):
    """GPU operator finding: a 4th evolved run (the plan runs 3) was counted, so running the mix more often and
    keeping the best runs would go unseen; the first `repetitions` decide."""
    plan = _plan(rate=10)
    for n in range(1, plan.repetitions + 2):
        for arm in ("baseline", "evolved"):
            _edit_meta(_copy(tmp_path, arm, n=n), experiment_id=f"{arm}-{n}")
            _set_weights(tmp_path / BOT_RUN.format(arm=arm, n=n), {"batch": 0.2 + n / 1e9})  # not byte-identical
    pm = load_priority_mix_evidence(tmp_path, _policy(), plan)
    assert len(pm.loaded) == 2 * plan.repetitions
    beyond = plan.repetitions + 1
    assert dict(pm.rejected) == {
        BOT_RUN.format(arm=arm, n=beyond) + "/results.json": (
            f"repetition {beyond} is beyond the plan's {plan.repetitions} (priority_mix.repetitions): repetitions "
            f"1-{plan.repetitions} of each arm decide, and the runs past them are not used"
        )
        for arm in ("baseline", "evolved")
    }


def test_a_run_that_records_another_model_than_the_plans_stack_is_left_out(tmp_path):
    """GPU operator finding: mix runs recording Qwen/Qwen3-0.6B decided the shedding order of a plan whose stack
    serves Llama-3.1-8B, while a cell report on another model is left out."""
    _copy(tmp_path, "baseline")  # the fixture records Qwen/Qwen3-0.6B
    _edit_meta(_copy(tmp_path, "evolved"), model="m/plan")
    second = _copy(tmp_path, "evolved", n=2)
    _edit_meta(second, model=None, experiment_id="no-model")  # records none: not held to it
    _set_weights(second, {})  # rewritten: not byte-identical to rep-1
    pm = load_priority_mix_results(tmp_path, binder=None)
    assert len(pm.loaded) == 3
    pm = load_priority_mix_evidence(tmp_path, _policy(model="m/plan"))
    assert sorted(pm.loaded) == [BOT_RUN.format(arm="evolved", n=n) + "/results.json" for n in (1, 2)]
    [(rel, reason)] = pm.rejected
    assert rel.startswith("baseline/") and reason.startswith(
        "measured model Qwen/Qwen3-0.6B (run_metadata.yaml model), but the plan's stack serves m/plan"
    )
