"""`promote run` carries the bundled example through all 7 stages and 3 gates."""

from __future__ import annotations

import json
import re

import yaml

from bot.cli import main
from bot.model import PipelineState, Status
from tests.conftest import BRANCH, FULL_RUN_PLANS, REQUEST, RESULTS, branch_tree, git


def test_run_exits_zero_and_finishes(full_run, capsys):
    code, work, _fork = full_run
    assert code == 0
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.status is Status.DONE
    assert [d.gate for d in state.decisions] == [1, 2, 3]
    assert all(d.actor == "alice" for d in state.decisions)


def test_the_run_makes_its_benchmark_plan_once(full_run):
    """Gate 2's brief prices the plan stage 4 writes: one plan, made once (its simulations are seconds)."""
    assert full_run[0] == 0
    assert FULL_RUN_PLANS["misses"] == 1 and FULL_RUN_PLANS["hits"] >= 1, FULL_RUN_PLANS


def test_one_commit_per_stage(full_run):
    _, _, fork = full_run
    subjects = git(fork, "log", "--reverse", "--format=%s", f"main..{BRANCH}").splitlines()
    stages = [int(re.match(r"stage (\d):", s).group(1)) for s in subjects]
    assert stages == [1, 2, 3, 4, 5, 6, 7], subjects


def test_branch_holds_every_artifact(full_run):
    _, _, fork = full_run
    files = list(branch_tree(fork))

    def some(pattern: str) -> list[str]:
        return [f for f in files if re.fullmatch(pattern, f)]

    assert "docs/promotion/translation-dictionary.md" in files
    assert some(r"pkg/epp/framework/plugins/.+/evolvedadaptivescorer/[^/]+\.go"), files
    assert some(r"pkg/epp/framework/plugins/.+_test\.go")
    assert some(r"docs/promotion/.+/hypotheses/[ABC]\d+\.md")
    assert some(r"benchmarks/promotion/.+\.yaml")
    assert some(r"docs/promotion/.+/findings/[ABC]\d+\.md")
    assert some(r"docs/promotion/.+/report\.md")
    runner = git(fork, "show", f"{BRANCH}:cmd/epp/runner/runner.go")
    assert "StabilityAlpha" in runner and "evolved" in runner.lower()


def test_pr_record_has_every_section(full_run):
    _, work, _ = full_run
    pr = (work / "pr" / "pull-request.md").read_text()
    for heading in (
        "## Enable and roll back",
        "## Claims (Track A: ",
        "## Known issues",
        "**Track B, sim-to-real gaps**",
        "**Track C, regressions**",
        "**Feedback for BLIS:**",
        "## Links (pinned to ",
    ):
        assert heading in pr, heading
    m = re.search(r"Claims \(Track A: (\d+) of (\d+) transferred, 1 not testable as translated\)", pr)
    track_a = [f for f in branch_tree(full_run[2]) if re.search(r"/hypotheses/A\d+\.md$", f)]
    assert m and int(m.group(2)) == len(track_a) >= 3 and int(m.group(1)) <= len(track_a)
    assert "blis_router/routing" in pr and "-3859.2" in pr
    assert "docs/promotion/evolved-adaptive-scorer/report.md" in pr


def test_issue_thread_has_status_and_three_review_reports(full_run):
    _, work, _ = full_run
    thread = (work / "issue" / "thread.md").read_text()
    assert thread.count("<!-- promotion-bot:status -->") == 1
    for gate in (1, 2, 3):
        assert f"<!-- promotion-bot:review-gate-{gate} -->" in thread
    assert "done: all 7 stages finished" in thread


def test_verdicts_are_real_and_mixed(full_run):
    """The sample data plant strong effects on the evolved-for workload and none on the guards."""
    _, _, fork = full_run
    verdicts = json.loads(
        git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/validation/verdicts.json")
    )
    statuses = {v["hypothesis_id"]: v["status"] for v in verdicts}
    assert set(statuses.values()) <= {"confirmed", "refuted", "inconclusive", "not testable as translated"}
    a_ids = [h for h in statuses if h.startswith("A")]
    assert any(statuses[h] == "confirmed" for h in a_ids)
    assert all(v["effects"] for v in verdicts if v["status"] in ("confirmed", "refuted"))


def test_generated_config_and_experiment_parse(full_run):
    _, _, fork = full_run
    cfg = yaml.safe_load(git(fork, "show", f"{BRANCH}:deploy/config/evolved-adaptive-scorer-epp-config.yaml"))
    assert cfg["kind"] == "EndpointPickerConfig"
    exp = yaml.safe_load(git(fork, "show", f"{BRANCH}:benchmarks/promotion/evolved-adaptive-scorer/experiment.yaml"))
    assert {t["name"] for t in exp["setup"]["treatments"]} >= {"baseline", "evolved"}


def test_the_fault_treatments_are_experiments_that_record_their_condition(full_run):
    """Consistency finding 2: the committed experiment carried `load-spikes+metric-staleness-...` run treatments
    under the plain arms, with no refresh-interval flag: run by hand, it measured the plain load."""
    _, _, fork = full_run
    root = "benchmarks/promotion/evolved-adaptive-scorer"
    main = yaml.safe_load(git(fork, "show", f"{BRANCH}:{root}/experiment.yaml"))
    assert not any("+" in r["name"] for r in main["treatments"])
    stale = yaml.safe_load(git(fork, "show", f"{BRANCH}:{root}/metric-staleness/experiment.yaml"))
    assert [t["name"] for t in stale["setup"]["treatments"]] == [
        "baseline+metric-staleness",
        "evolved+metric-staleness",
    ]
    assert all(t["router.epp.flags.refresh-metrics-interval"] == "1s" for t in stale["setup"]["treatments"])
    for arm in ("baseline", "evolved"):  # one file per arm, each recording its arm and the condition
        pod = git(fork, "show", f"{BRANCH}:{root}/pod-failure/{arm}.yaml")
        assert "An experiment file cannot say this" in pod
        [treatment] = yaml.safe_load(pod)["setup"]["treatments"]
        assert treatment["name"] == arm and treatment["description.keywords"][-1] == "condition:pod-failure"
    findings = git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/findings/B3.md")
    assert f"`{root}/metric-staleness/experiment.yaml` with llm-d-benchmark (as its header says" in findings
    pod_findings = git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/findings/B5.md")
    # a fault applied during runs is judged only from the runner's manifest.json: no by-hand route is offered
    assert f"`promote bench run`: it runs `{root}/pod-failure/baseline.yaml`, `{root}/pod-failure/evolved.yaml`" in (
        pod_findings
    )
    assert "with llm-d-benchmark" not in pod_findings.split("## Reproducing")[1].split("promote evaluate")[0]
    plain = git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/findings/A1.md")
    assert f"Run `{root}/experiment.yaml` with llm-d-benchmark, or the whole plan" in plain


def test_running_again_is_a_no_op(full_run, capsys):
    _code, work, fork = full_run
    before = git(fork, "rev-parse", BRANCH)
    assert (
        main(
            [
                "run",
                str(REQUEST),
                "--results",
                str(RESULTS),
                "--allow-sample-data",
                "--work",
                str(work),
                "--fork",
                str(fork),
                "--approve",
                "all",
                "--quiet",
            ]
        )
        == 0
    )
    assert git(fork, "rev-parse", BRANCH) == before
    assert "promotion finished" in capsys.readouterr().out


def test_report_says_the_sample_reports_gpu_time_was_not_recorded(full_run):
    """The bundled sample reports have no run manifest: the report must not claim a spend of zero."""
    _, _, fork = full_run
    report = git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/report.md")
    section = report.split("## GPU time", 1)[1].split("\n## ", 1)[0]
    assert "not recorded" in section and not re.search(r"(?<![\d.])0 GPU-minutes", section)
    spent = json.loads(git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/validation/gpu-time.json"))
    assert spent["judged"] is True and spent["spent"] is None
    # what the plan promised is known from what stage 4 committed (consistency finding 9), said alike everywhere
    limits = json.loads(git(fork, "show", f"{BRANCH}:benchmarks/promotion/evolved-adaptive-scorer/run-limits.json"))
    assert (spent["planned"], spent["budget"]) == (limits["planned_gpu_minutes"], limits["budget_gpu_minutes"])
    assert f"(the plan: {spent['planned']:g} GPU-minutes in all, at most {spent['budget']:g})" in section
    plan = git(fork, "show", f"{BRANCH}:benchmarks/promotion/evolved-adaptive-scorer/README.md")
    assert f"At most **{spent['budget']:g} GPU-minutes**" in plan


def test_an_openevolve_hypothesis_that_repeats_a_claim_is_tested_once(full_run):
    """Found by a new user: the example's HYPOTHESIS-1/2 comments repeated claims A1/A2 as A4/A5, counting the same
    evidence twice and taking two more shares of the error correction."""
    from bot.hypotheses import parse_hypothesis

    _, _, fork = full_run
    prefix = "docs/promotion/evolved-adaptive-scorer/hypotheses/"
    paths = [f for f in branch_tree(fork) if re.fullmatch(re.escape(prefix) + r"A\d+\.md", f)]
    track_a = [parse_hypothesis(git(fork, "show", f"{BRANCH}:{p}"), p) for p in sorted(paths)]
    tested = [(h.prediction.metric, h.prediction.direction, tuple(h.workloads)) for h in track_a if h.prediction]
    assert len(tested) == len(set(tested)) == 3, tested
    assert sum("OpenEvolve's HYPOTHESIS-" in (h.mechanism or "") for h in track_a) == 2


def test_hypotheses_are_distinct_and_untestable_claims_are_said_so(full_run):
    """Issue 13: six freshness hypotheses judged on the same cells with nothing varying freshness, C2 implied by
    C1, and A2 / B8 (whose mechanism reads CacheHitRate, which the plugin holds at 0) judged as if it ran."""
    from bot.hypotheses import parse_hypothesis

    _, _, fork = full_run
    prefix = "docs/promotion/evolved-adaptive-scorer/"
    hyps = {
        h.id: h
        for h in (
            parse_hypothesis(git(fork, "show", f"{BRANCH}:{p}"), p)
            for p in branch_tree(fork)
            if re.fullmatch(re.escape(prefix) + r"hypotheses/[ABC]\d+\.md", p)
        )
    }
    by_track = {t: sorted(i for i in hyps if i[0] == t) for t in "ABC"}
    assert [len(by_track[t]) for t in "ABC"] == [3, 8, 6], by_track
    # every Map B freshness hypothesis is either decided under the treatment that varies it, or one line
    stale = next(h for h in hyps.values() if h.source == "metric-staleness")
    assert all(w.endswith("+metric-staleness") for w in stale.workloads)
    assert stale.signals == ["BatchSize", "EffectiveLoad", "KVUtilization", "QueueDepth"]
    fresh = [h for h in hyps.values() if h.track.value == "B" and h.signals and h is not stale]
    assert [(h.id, h.signals, h.prediction is None) for h in fresh] == [
        ("B7", ["InFlightRequests"], True),
        ("B8", ["CacheHitRate"], False),
    ]
    # the implied no-regression hypotheses are named where they went
    readme = git(fork, "show", f"{BRANCH}:{prefix}hypotheses/README.md")
    assert "No regression of mean TTFT beyond 5% on optimized-baseline: implied by C1" in readme
    assert "17 distinct hypotheses" in readme
    # A2 and B8 are not testable as translated, with the signal and the evolved line, everywhere it is read
    verdicts = {
        v["hypothesis_id"]: v for v in json.loads(git(fork, "show", f"{BRANCH}:{prefix}validation/verdicts.json"))
    }
    for hid in ("A2", "B8"):
        assert verdicts[hid]["status"] == "not testable as translated", verdicts[hid]
        assert "`CacheHitRate`" in verdicts[hid]["summary"] and "line 194" in verdicts[hid]["summary"]
        assert verdicts[hid]["effects"] == []
    assert [i for i, v in verdicts.items() if v["status"] == "not testable as translated"] == ["A2", "B8"]
    plan = git(fork, "show", f"{BRANCH}:benchmarks/promotion/evolved-adaptive-scorer/README.md")
    assert "Not decided by benchmarks: A2, B2, B4, B7, B8." in plan
    report = git(fork, "show", f"{BRANCH}:{prefix}report.md")
    assert "more repetitions or a quieter cluster" not in git(fork, "show", f"{BRANCH}:{prefix}findings/A2.md")
    # feedback for BLIS: one line each, the not-testable claim names only the signal llm-d cannot supply
    assert (
        "\n- (re-evolution, from A2) This claim could not be tested: its mechanism reads `CacheHitRate`, which"
        in report
    )
    log = git(fork, "log", "--format=%s", BRANCH)
    assert "stage 3: hypothesize: 17 distinct hypotheses (Track A 3, B 8, C 6)" in log


def test_the_status_says_sample_data_and_which_gates_were_approved_unconverged(full_run):
    """Found by a new user: the checklist showed gate 1 'approved by alice' though it opened with open findings,
    and nothing on it said the verdicts rest on sample data."""
    _, work, _ = full_run
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    thread = (work / "issue" / "thread.md").read_text()
    status = thread.split("<!-- promotion-bot:status", 1)[1]
    assert "Sample data allowed" in status
    for gate in (1, 2, 3):
        row = next(line for line in status.splitlines() if f"**gate {gate}**" in line)
        assert ("unconverged" in row) == (gate in state.unconverged), row
    assert state.unconverged, "the bundled example opens a gate unconverged (see README)"


def test_promote_status_says_sample_data_and_unconverged_approvals(full_run, capsys):
    _, work, fork = full_run
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    capsys.readouterr()
    assert main(["status", "--work", str(work)]) == 0
    out = capsys.readouterr().out
    assert "sample data allowed" in out
    for gate in state.unconverged:
        assert any(f"gate {gate} approve" in ln and "unconverged" in ln for ln in out.splitlines()), out
    # `--approve all` decided every gate: status, the status comment and the PR's gate table say so.
    assert all(f"gate {g} approve by --approve (alice's run" in out for g in (1, 2, 3)), out
    thread = (work / "issue" / "thread.md").read_text()
    assert thread.count("approved by --approve (alice's run; no person decided at the open gate)") == 3
    pr = (work / "pr" / "pull-request.md").read_text()
    assert pr.count("| alice via `--approve` (not a person at the open gate) |") == 3
    assert "decided by a person" not in pr
    report = git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/report.md")
    assert "gate 3 approve by --approve (alice's run; no person decided at the open gate)" in report


def test_the_reports_first_screen_answers_did_it_transfer(full_run):
    """Issue 13: the first 25 lines hold the headline, the testbed recorded in the reports and the complete claims
    table (one row per Track A hypothesis); the sample-data warning sits right under the headline."""
    _, _, fork = full_run
    report = git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/report.md")
    lines = report.splitlines()
    screen = "\n".join(lines[:25])
    headline = lines[2]
    assert re.fullmatch(
        r"\*\*(Transferred|Partly transferred|Not transferred|Not shown): .+; .*regression.* (?:found|shown).*\.\*\*",
        headline,
    )
    assert "SAMPLE DATA" in "\n".join(lines[3:6])
    testbed = next(line for line in lines[:25] if line.startswith("**Testbed"))
    for recorded in (
        "meta-llama/Llama-3.1-8B-Instruct",
        "NVIDIA-H100-80GB-HBM3",
        "llm-d-cuda:v0.5.1",
        "inference-perf",
    ):
        assert recorded in testbed, recorded
    assert "| Claim | BLIS predicted | llm-d measured (90% CI) | Verdict |" in screen
    track_a = sorted(
        re.search(r"/(A\d+)\.md$", f).group(1) for f in branch_tree(fork) if re.search(r"/hypotheses/A\d+\.md$", f)
    )
    rows = [line for line in lines[:25] if re.match(r"\| \*\*A\d+\*\* ", line)]
    assert [re.match(r"\| \*\*(A\d+)\*\*", r).group(1) for r in rows] == track_a
    assert all(re.search(r"[−+]\d+\.\d% \[[−+]\d+\.\d%, [−+]\d+\.\d%\]", r) for r in rows if "not measured" not in r)
    confirmed = sum(r.rstrip(" |").endswith("confirmed") for r in rows)
    assert f"{confirmed} of {len(rows)} claims confirmed" in headline or (confirmed == len(rows) and "all" in headline)


def test_nothing_committed_or_recorded_names_a_local_path(full_run):
    """The results directory is a path on someone's machine: verdicts.md once committed it."""
    _, work, fork = full_run
    local = [str(RESULTS.resolve()), str(RESULTS), str(work), str(fork), "/tmp/"]
    for path in branch_tree(fork):
        if not path.endswith((".md", ".json", ".yaml")):
            continue
        text = git(fork, "show", f"{BRANCH}:{path}")
        assert not [p for p in local if p in text], path


def test_gate_3_reads_the_same_headline_and_claims_table_at_the_top_of_verdicts_md(full_run):
    """Gate 3 decides before the report exists: verdicts.md opens with the report's headline and claims table."""
    _, _, fork = full_run
    docs = "docs/promotion/evolved-adaptive-scorer"
    report = git(fork, "show", f"{BRANCH}:{docs}/report.md").splitlines()
    verdicts = git(fork, "show", f"{BRANCH}:{docs}/validation/verdicts.md").splitlines()
    assert verdicts[2] == report[2]  # the headline
    start = report.index("| Claim | BLIS predicted | llm-d measured (90% CI) | Verdict |")
    end = next(i for i in range(start, len(report)) if not report[i].startswith("| "))
    assert "\n".join(report[start:end]) in "\n".join(verdicts[:25])


def test_a_whole_rehearsal_translates_the_program_once(tmp_path, monkeypatch):
    """Issue 11: stages 2 and 4 and the gate reviews share one translation (cached by its inputs), so a full
    `promote run --approve all` of the bundled example runs the translator, and its harness, once."""
    import bot.golang.translate as translator
    from bot.stages import translate as stage

    monkeypatch.setattr(stage, "_CACHE", {})
    calls = []
    real = translator.translate

    def counted(*args, **kwargs):
        calls.append(kwargs.get("feedback"))
        return real(*args, **kwargs)

    monkeypatch.setattr(translator, "translate", counted)
    args = ["--work", str(tmp_path / "w"), "--fork", str(tmp_path / "f"), "--approve", "all", "--quiet"]
    assert main(["run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", *args]) == 0
    assert len(calls) == 1, calls


def test_the_pr_gate_3_report_and_verdicts_give_each_unjudged_hypothesis_its_verdicts_own_reason(full_run):
    """newuser4 #8: the PR body said B2/B4 were 'not judged: no run of this plan decides it' and verdicts.md said
    'no run of this plan can decide them', while gate 3 and report.md said 'not runnable on this cluster'; the
    two call for different fixes (another run vs another cluster), so every page gives the verdict's own reason."""
    _, work, fork = full_run
    docs = "docs/promotion/evolved-adaptive-scorer"
    verdicts = json.loads(git(fork, "show", f"{BRANCH}:{docs}/validation/verdicts.json"))
    said = ("not runnable on this cluster", "no planned run varies it")  # the flags bot.stats.unjudged records
    reasons = {v["hypothesis_id"]: f for v in verdicts for f in v["flags"] if f in said}
    assert reasons["B2"] == reasons["B4"] == "not runnable on this cluster", reasons
    body = json.loads((work / "pr" / "pr.json").read_text())["body"]
    thread = (work / "issue" / "thread.md").read_text()
    report = git(fork, "show", f"{BRANCH}:{docs}/report.md")
    page = git(fork, "show", f"{BRANCH}:{docs}/validation/verdicts.md")
    count = re.search(r"inconclusive are not judged: (.+?); each says", page).group(1)
    in_count = {i: why for ids, why in re.findall(r"((?:B\d+, )*B\d+) \(([^)]+)\)", count) for i in ids.split(", ")}
    assert in_count == reasons
    for hid, why in reasons.items():
        assert re.search(rf"\b{hid} \S+ \(not judged: {re.escape(why)}\)", body), (hid, why)
        gate3 = next(ln for ln in thread.splitlines() if ln.startswith(f"- {hid} inconclusive ("))
        assert gate3.endswith(f": {why}") or f"): {why}" in gate3, gate3
        untested = next(ln for ln in report.splitlines() if ln.startswith(f"- **{hid}** "))
        assert f": {why}" in untested, untested
    for text in (body, thread, report, page):
        assert "no run of this plan" not in text


def test_the_pr_record_says_each_decided_gate_was_decided_as_the_issue_report_does(full_run):
    """newuser4 #9: after all three gates were approved, the PR record's reviews still read "the gate is open for a
    decision ... decide there"; each now says who decided it, how and when, in the issue report's words."""
    _, work, _ = full_run
    pr = (work / "pr" / "pull-request.md").read_text()
    thread = (work / "issue" / "thread.md").read_text()
    for gate in (1, 2, 3):
        [review] = [ln for ln in pr.splitlines() if ln.startswith(f"**Gate {gate} review (")]
        decided = re.search(r"\*\*Approved\*\* by alice .*? the gate takes no more decisions\.", review).group(0)
        assert decided in thread, gate  # the issue's report of the same gate says the same
        assert "open for a decision" not in review and "decide there" not in review, review
