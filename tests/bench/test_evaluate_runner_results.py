"""`promote evaluate --spec` judges the results of `promote bench run` as stage 5 does (bot.bench.run_evidence).

Found by a GPU-runner operator: every evolved report the runner wrote was "another build or plugin" to
`promote evaluate --spec` (the runner tags its image ``promotion-<id>-<commit>``, the plan pins another tag),
runs whose pod deletion never happened counted as pod-failure evidence, and the admitter's priority mix was
never judged, while stage 5 read all three from ``manifest.json``. Both now build their rules with one function.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.bench.errors import ReportError
from bot.bench.run import manifest as mf
from tests.bench import fakes
from tests.bench.bench_branch import SLUG, git, hypotheses, make_branch, small_request
from tests.bench.test_bench_plan import _h
from tests.bench.test_bench_run import _args, _promote
from tests.bench.test_bench_run_priority_mix import SHEDS_BATCH, _shedding_hypothesis


def _request():
    return small_request(
        kind="admission",
        workloads=[{"name": "spikes", "profile": "shared_prefix_synthetic", "rates": [10], "duration_s": 1}],
    )


def _stage5(tmp_path: Path, bench: Path, hyps: list, code: dict[str, str] | None = None):
    """Stage 5's verdicts and reports not used (``bot.stages.run_validate.judge``) on the promotion branch."""
    from bot.forge.local import LocalForge
    from bot.model import PipelineState
    from bot.stages.context import StageContext
    from bot.stages.run_validate import judge

    request = _request()
    repo = bench.parents[2]
    git(repo, "branch", "-f", request.branch)
    forge = LocalForge(repo, tmp_path / "work", base_branch=git(repo, "rev-parse", "--abbrev-ref", "HEAD"))
    state = PipelineState(request_id=request.id, request_fingerprint="f", branch=request.branch)
    ctx = StageContext(request, forge, state, results_dir=tmp_path / "results")
    verdicts, reports, _spent, mix = judge(ctx, hyps, code)
    return verdicts, [*reports.rejected, *(mix.rejected if mix else [])]


def test_promote_evaluate_with_the_spec_gives_stage_5s_verdicts_on_the_runners_results(tmp_path):
    from bot.cli import main

    env = fakes.install(
        tmp_path, noise=0.02, seconds_per_run_second=0.01, mix=SHEDS_BATCH, effect={"evolved": -0.2}, forbid_delete=True
    )
    hyps = hypotheses([_shedding_hypothesis(), _h("B2", ["spikes+pod-failure"], "e2e_p95", direction="no-worse")])
    request = _request()
    bench, commit = make_branch(tmp_path, request=request, hyps=hyps)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--fixed", "--warmup-seconds", "0"))
    assert proc.returncode == 0, proc.stderr
    results = tmp_path / "results"
    m = mf.load(results)
    assert m.image is not None and m.image.built and m.priority_mix
    assert any(c.fault is not None and not c.fault.ok for c in m.cells)  # RBAC forbade every pod deletion

    (tmp_path / "best_program.py").write_text("def f():\n    return 1\n")  # the request names its program
    (tmp_path / "promotion.yaml").write_text(json.dumps(request.model_dump(mode="json", exclude_none=True)))
    out = tmp_path / "ev"
    argv = ["evaluate", "--hypotheses", str(bench.parents[2] / f"docs/promotion/{SLUG}/hypotheses")]
    argv += ["--results", str(results), "--out", str(out), "--spec", str(bench / "evaluation.yaml")]
    assert main([*argv, "--request", str(tmp_path / "promotion.yaml")]) == 0
    by_hand = {v["hypothesis_id"]: v for v in json.loads((out / "verdicts.json").read_text())}

    verdicts, not_used = _stage5(tmp_path, bench, hyps)
    stage5 = {v.hypothesis_id: v for v in verdicts}
    assert set(by_hand) == set(stage5) == {"A1", "B1", "B2"}
    for hid, v in stage5.items():
        assert (by_hand[hid]["status"], by_hand[hid]["summary"], by_hand[hid]["flags"]) == (
            v.status.value,
            v.summary,
            v.flags,
        ), hid
    assert stage5["A1"].status.value == "confirmed"  # the runner's own image is this plan's evolved build
    assert stage5["B1"].status.value == "confirmed"  # the priority mix decided the shedding order
    assert "never happened" in (stage5["B2"].summary + " ".join(stage5["B2"].flags))
    # the same reports are left out, for the same reasons: only the runs whose fault never happened
    page = (out / "verdicts.md").read_text()
    assert not_used and all("fault of its run never happened" in why for _, why in not_used)
    assert all(rel in page for rel, _ in not_used) and "another build or plugin" not in page
    assert "## Priority mix" in page


def test_promote_evaluate_with_the_spec_alone_judges_the_mix_claim_as_stage_5_does(tmp_path):
    """Found by the evidence audit: without --request `promote evaluate --spec` left the admitter's shedding claim
    "not in plan" although the spec plans the mix, and the mix is planned for an admitter only
    (``priority_plan.planned_for``). A spec that does not say so (a plan from before that rule) says the claim
    was not judged and which flag judges it."""
    from bot.bench.priority_plan import ADMITTER_REASON
    from bot.bench.yaml_dump import dump_yaml
    from bot.cli import main
    from bot.cli.evidence import MIX_KIND_UNKNOWN
    from bot.yaml_safe import load_yaml
    from tests.bench.test_bench_run_priority_mix import _branch, _judge

    env, bench, commit, hyps = _branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--fixed"))
    assert proc.returncode == 0, proc.stderr
    stage5 = _judge(tmp_path, bench, hyps).verdict
    assert stage5 is not None and stage5.status.value == "confirmed"
    hyp_dir = bench.parents[2] / f"docs/promotion/{SLUG}/hypotheses"
    spec = bench / "evaluation.yaml"
    argv = ["evaluate", "--hypotheses", str(hyp_dir), "--results", str(tmp_path / "results"), "--spec", str(spec)]
    assert main([*argv, "--out", str(tmp_path / "ev")]) == 0
    [by_hand] = [v for v in json.loads((tmp_path / "ev" / "verdicts.json").read_text()) if v["hypothesis_id"] == "B1"]
    assert (by_hand["status"], by_hand["summary"], by_hand["flags"]) == (
        stage5.status.value,
        stage5.summary,
        stage5.flags,
    )
    assert MIX_KIND_UNKNOWN not in (tmp_path / "ev" / "verdicts.md").read_text()

    old = tmp_path / "old-evaluation.yaml"  # a scheduler's mix, planned before only admitters got one
    doc = load_yaml(spec.read_text())
    assert doc["priority_mix"]["reason"] == ADMITTER_REASON and doc["priority_mix"]["policy_kind"] == "admission"
    del doc["priority_mix"]["policy_kind"]  # not recorded before
    doc["priority_mix"]["reason"] = "a scheduling policy that decides by the request's class (it reads SLOClass)"
    old.write_text(dump_yaml(doc))
    argv[-1] = str(old)
    assert main([*argv, "--out", str(tmp_path / "ev-old")]) == 0
    [b1] = [v for v in json.loads((tmp_path / "ev-old" / "verdicts.json").read_text()) if v["hypothesis_id"] == "B1"]
    assert b1["status"] == "inconclusive" and b1["flags"] != stage5.flags
    assert MIX_KIND_UNKNOWN in (tmp_path / "ev-old" / "verdicts.md").read_text()


def test_without_manifest_json_the_runners_reports_are_still_its_own_build(tmp_path, capsys):
    """Found by the admission end-to-end pass (item 6): results copied without their manifest.json were all
    refused as "another build or plugin" (the runner tags its image ``promotion-<id>-<commit>``, the plan pins
    ``promotion-<id>-<slug>``). The tag and the run's ``commit:`` keyword bind them to this promotion's runner
    build; re-tagged for another promotion they are refused, and the reason says the manifest is missing."""
    from bot.cli import main

    env = fakes.install(tmp_path, noise=0.02, seconds_per_run_second=0.01, effect={"evolved": -0.2})
    request = _request()
    bench, commit = make_branch(tmp_path, request=request, hyps=hypotheses())
    proc = _promote(env, *_args(bench, commit, tmp_path, "--fixed", "--warmup-seconds", "0"))
    assert proc.returncode == 0, proc.stderr
    results = tmp_path / "results"
    (results / mf.MANIFEST).unlink()  # copied or merged results: the reports alone

    argv = ["evaluate", "--hypotheses", str(bench.parents[2] / f"docs/promotion/{SLUG}/hypotheses")]
    argv += ["--results", str(results), "--spec", str(bench / "evaluation.yaml")]
    assert main([*argv, "--out", str(tmp_path / "ev")]) == 0
    [a1] = json.loads((tmp_path / "ev" / "verdicts.json").read_text())
    assert a1["status"] == "confirmed", a1
    assert "another build or plugin" not in (tmp_path / "ev" / "verdicts.md").read_text()
    verdicts, not_used = _stage5(tmp_path, bench, hypotheses())
    assert [v.status.value for v in verdicts] == ["confirmed"] and not_used == []

    # The same reports, re-tagged as promotion 8's runner build, measured another promotion's plugin.
    for report in results.rglob("*.yaml"):
        report.write_text(report.read_text().replace(f"promotion-7-{commit[:12]}", f"promotion-8-{commit[:12]}"))
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "ev8")]) == 2
    said = capsys.readouterr().err
    assert "it is promotion 8's runner build, not promotion 7's" in said, said
    assert "these results have no manifest.json" in said and "put back the manifest.json" in said


def test_without_manifest_json_stage_5_reads_the_tag_commits_plugin_code_from_the_fork(tmp_path):
    """Found by the review of 283090e: without manifest.json a report of this promotion's runner build counted by
    its tag and commit: keyword alone, so a run of an older commit of the promotion (before a gate-1 change to the
    plugin) counted for the branch's new code. Stage 5 now reads the plugin code at the tag's commit from the fork
    (``Forge.files_at``) as the manifest's ``plugin_files`` are checked: the same code counts, other code is
    refused with the files and the fix, and a commit the fork does not hold is refused too."""
    from bot.model import sha256_text

    env = fakes.install(tmp_path, noise=0.02, seconds_per_run_second=0.01, effect={"evolved": -0.2})
    request = _request()
    bench, commit = make_branch(tmp_path, request=request, hyps=hypotheses(), signals=[])
    repo = bench.parents[2]
    plugin = repo / f"pkg/{SLUG}/plugin.go"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("package plugin\n\nconst Weight = 1\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "plugin v1")
    commit = git(repo, "rev-parse", "HEAD")
    proc = _promote(env, *_args(bench, commit, tmp_path, "--fixed", "--warmup-seconds", "0"))
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "results" / mf.MANIFEST).unlink()  # copied or merged results: the reports alone

    def code() -> dict[str, str]:
        return {f"pkg/{SLUG}/plugin.go": sha256_text(plugin.read_bytes())}

    verdicts, not_used = _stage5(tmp_path, bench, hypotheses(), code=code())
    assert [v.status.value for v in verdicts] == ["confirmed"] and not_used == []

    plugin.write_text("package plugin\n\nconst Weight = 2\n")  # a gate-1 change: the run measured the old code
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "plugin v2")
    with pytest.raises(ReportError) as refused:  # every report refused: stage 5 fails with the first reason
        _stage5(tmp_path, bench, hypotheses(), code=code())
    said = str(refused.value)
    assert "these results have no manifest.json: measured on plugin code that differs from this branch's" in said
    assert f"(pkg/{SLUG}/plugin.go), built from commit {commit[:12]}: benchmark this branch's commit" in said

    # A commit the fork's history does not hold (a rewritten branch): nothing shows which code it measured.
    gone = "f" * 40
    for report in (tmp_path / "results").rglob("*.yaml"):
        report.write_text(report.read_text().replace(commit, gone).replace(commit[:12], gone[:12]))
    with pytest.raises(ReportError, match=f"the fork's history holds no commit {gone[:12]}, so nothing shows"):
        _stage5(tmp_path, bench, hypotheses(), code=code())


def test_without_manifest_json_the_runners_pod_failure_reports_decide_no_claim_about_the_fault(tmp_path, capsys):
    """Found by the second re-verification (item 1, a regression of the fix above): with manifest.json gone, the
    runner's reports bound by their tag still counted under ``condition:pod-failure``, and a claim that the plugin
    is no worse under pod failure was confirmed on runs in which no pod was deleted. Only the manifest records
    whether each run's fault happened (``cells[].fault``), so those reports are left out with that reason and the
    fix (put the manifest back), and the claim is not decided, stage 5 and `promote evaluate` alike; the plain
    cell's reports still count."""
    from bot.cli import main
    from bot.model.evidence import CONDITION_NOT_RECORDED

    env = fakes.install(tmp_path, noise=0.02, seconds_per_run_second=0.01, effect={"evolved": -0.2}, forbid_delete=True)
    hyps = hypotheses([_h("B2", ["spikes+pod-failure"], "e2e_p95", direction="no-worse")])
    bench, commit = make_branch(tmp_path, request=_request(), hyps=hyps)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--fixed", "--warmup-seconds", "0"))
    assert proc.returncode == 0, proc.stderr
    results = tmp_path / "results"
    assert all(c.fault is None or not c.fault.ok for c in mf.load(results).cells)  # no pod was ever deleted
    (results / mf.MANIFEST).unlink()  # copied or merged results: the reports alone

    argv = ["evaluate", "--hypotheses", str(bench.parents[2] / f"docs/promotion/{SLUG}/hypotheses")]
    argv += ["--results", str(results), "--spec", str(bench / "evaluation.yaml"), "--out", str(tmp_path / "ev")]
    capsys.readouterr()
    assert main(argv) == 0
    by_hand = {v["hypothesis_id"]: v for v in json.loads((tmp_path / "ev" / "verdicts.json").read_text())}
    verdicts, not_used = _stage5(tmp_path, bench, hyps)
    for v in verdicts:
        assert (by_hand[v.hypothesis_id]["status"], by_hand[v.hypothesis_id]["summary"]) == (v.status.value, v.summary)
    stage5 = {v.hypothesis_id: v for v in verdicts}
    assert stage5["A1"].status.value == "confirmed"  # the plain cell: the runner's build, bound by its tag
    b2 = stage5["B2"]
    assert b2.status.value == "inconclusive" and CONDITION_NOT_RECORDED in b2.flags, b2
    assert (
        "not decided" in b2.summary and "no manifest.json" in b2.summary and "put back the manifest.json" in b2.summary
    )
    assert not_used and all("pod-failure" in rel for rel, _ in not_used)
    for _, why in not_used:
        assert "no record of whether the fault of its run happened" in why and "put back the manifest.json" in why


def test_without_manifest_json_pod_failure_reports_of_the_pinned_image_decide_no_claim_about_the_fault(tmp_path):
    """Red team 10 item 2: the refusal above sat in the runner-build branch only, so the runner given the image the
    plan pins (`--image <pin>`, which ``given_image_problem`` accepts) wrote pod-failure reports that, without
    manifest.json, confirmed a "no worse under pod failure" claim on runs in which no pod was deleted. Without the
    manifest no report under a run fault is evidence about it, whatever image it records."""
    import yaml

    from bot.model.evidence import CONDITION_NOT_RECORDED

    env = fakes.install(tmp_path, noise=0.02, seconds_per_run_second=0.01, effect={"evolved": -0.2}, forbid_delete=True)
    hyps = hypotheses([_h("B2", ["spikes+pod-failure"], "e2e_p95", direction="no-worse")])
    bench, commit = make_branch(tmp_path, request=_request(), hyps=hyps)
    pinned = yaml.safe_load((bench / "evaluation.yaml").read_text())["evolved_image"]
    proc = _promote(env, *_args(bench, commit, tmp_path, "--fixed", "--warmup-seconds", "0", "--image", pinned))
    assert proc.returncode == 0, proc.stderr
    results = tmp_path / "results"
    assert all(c.fault is None or not c.fault.ok for c in mf.load(results).cells)  # no pod was ever deleted
    (results / mf.MANIFEST).unlink()

    verdicts, not_used = _stage5(tmp_path, bench, hyps)
    stage5 = {v.hypothesis_id: v for v in verdicts}
    assert stage5["A1"].status.value == "confirmed"  # the plain cell of the pinned image still counts
    b2 = stage5["B2"]
    assert b2.status.value == "inconclusive" and CONDITION_NOT_RECORDED in b2.flags, b2
    assert not_used and all("pod-failure" in rel for rel, _ in not_used)
    for _, why in not_used:
        assert "no record of whether the fault of its run happened" in why and "put back the manifest.json" in why
