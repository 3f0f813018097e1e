"""`promote bench run` following the plan's sequential design in rounds, against the fake cluster (tests/bench/fakes).

Every expectation is checked against ``bot.stats.sequential.assess`` on the results the run left (the design
itself is tested in tests/stats/test_stats_sequential.py), and the results are judged by stage 5's replay.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from bot.bench.run import manifest as mf
from bot.bench.run.rounds import ordered, round_runs, short_cells
from bot.bench.run.schedule import Group, SetupRun
from bot.stats.sequential import RoundCell
from tests.bench import fakes
from tests.bench.bench_branch import SLUG, make_branch
from tests.bench.test_bench_run import _args, _events, _promote, _reports


def _spec(bench: Path):
    from bot.bench.evaluation_spec import load_evaluation_spec

    return load_evaluation_spec((bench / "evaluation.yaml").read_text())


def _evidence(bench: Path, results: Path):
    from bot.bench.evidence import load_evidence, policy_from_spec

    m = mf.load(results)
    return load_evidence(results, policy_from_spec(_spec(bench), allow_sample_data=False, image_digest=m.image.digest))


def _assess(bench: Path, results: Path):
    from bot.stats.sequential import assess

    return assess(_spec(bench), _evidence(bench, results))


def _fixed_runs(bench: Path) -> int:
    return 2 * sum(_spec(bench).repetitions_by_cell.values())


def _run(tmp_path: Path, *extra, **fake) -> tuple[subprocess.CompletedProcess, Path, Path]:
    env = fakes.install(tmp_path, **{"noise": 0.02, "seconds_per_run_second": 0.05, **fake})
    bench, commit = make_branch(tmp_path)
    return _promote(env, *_args(bench, commit, tmp_path, *extra)), bench, tmp_path / "results"


def _finished_runs(root: Path) -> Counter:
    return Counter((c["setup"], c["name"]) for c in _events(root, "run-finished") if not c["name"].startswith("warmup"))


def test_a_large_effect_stops_at_an_early_look_and_stage5_replays_the_same_decisions(tmp_path):
    from bot.hypotheses import load_hypotheses
    from bot.stats.verdicts import evaluate

    proc, bench, results = _run(tmp_path, effect={"evolved": -0.3})
    assert proc.returncode == 0, proc.stderr
    m = mf.load(results)
    seq = _spec(bench).decision.sequential
    # strictly fewer runs than the fixed plan, every cell stopped before its horizon
    assert 0 < len(m.cells) < _fixed_runs(bench)
    final = _assess(bench, results)
    assert final.done and not final.deferred
    for cell in final.cells:
        assert cell.done and cell.reason.startswith("every hypothesis")
        assert max(cell.runs.values()) < seq.looks[cell.label][-1]
    # the manifest says where each cell stopped and why, beside the fixed plan's count
    assert m.sequential is not None and m.sequential.hypotheses == final.hypotheses
    stops = {c.cell: c for c in m.sequential.cells}
    assert set(stops) == set(seq.looks)
    assert all(c.reason.startswith("every hypothesis") and min(c.runs.values()) < c.fixed_plan for c in stops.values())
    assert all(r.complete for r in m.sequential.rounds)
    # stage 5's replay judges the reports to the decisions the runner acted on
    hyps = load_hypotheses(bench.parents[2] / f"docs/promotion/{SLUG}/hypotheses")
    verdicts = {
        v.hypothesis_id: v.status.value
        for v in evaluate(hyps, _evidence(bench, results), decision=_spec(bench).decision)
    }
    assert final.hypotheses == {"A1": "confirmed"}
    assert {h: s.replace("inconclusive", "undecided") for h, s in verdicts.items()} == final.hypotheses
    # one stand-up, one teardown; the final line gives the fixed plan's, the expected and the spent GPU-minutes
    assert len(_events(tmp_path, "standup")) == 1 and len(_events(tmp_path, "teardown")) == 1
    assert all(n == 1 for n in _finished_runs(tmp_path).values())
    last = proc.stdout.strip().splitlines()[-1]
    assert f"{m.spent_gpu_minutes:g} spent" in last and f"fixed plan {m.planned_gpu_minutes:g}" in last
    assert f"sequential plan expected {m.sequential.expected_gpu_minutes:g}" in last
    assert json.loads((tmp_path / "cluster" / "state.json").read_text())["up"] is False


@pytest.mark.slow
def test_no_effect_runs_each_cell_as_far_as_the_rule_says(tmp_path):
    # carry_over: a run right after an EPP swap without a re-warm would be off by 30% (the fake records it)
    proc, bench, results = _run(tmp_path, effect={"evolved": 0.0}, carry_over=-0.3)
    assert proc.returncode == 0, proc.stderr
    m = mf.load(results)
    seq = _spec(bench).decision.sequential
    final = _assess(bench, results)
    assert final.done and not final.deferred
    by = {c.label: c for c in final.cells}
    for label, cell in by.items():
        schedule = seq.looks[label]
        if cell.reason == "horizon reached":
            assert cell.runs == {"baseline": schedule[-1], "evolved": schedule[-1]} and cell.looks == schedule
        else:  # decided (e.g. refuted) at a look: no run beyond it
            assert max(cell.runs.values()) == cell.looks[-1] < schedule[-1]
    # every run the runner made is one the design asked for, each once, and the rounds match the looks
    assert len(m.cells) == sum(sum(c.runs.values()) for c in final.cells)
    assert len(m.sequential.rounds) == max(len(c.looks) for c in final.cells)
    assert all(n == 1 for n in _finished_runs(tmp_path).values())
    # the stack stays up across rounds: one stand-up, one teardown, and one EPP swap per round
    assert len(_events(tmp_path, "standup")) == 1 and len(_events(tmp_path, "teardown")) == 1
    assert len(_events(tmp_path, "swap")) == len(m.sequential.rounds)
    # ... and the arm that continues into the next round was never swapped out: no run carries another arm's state
    assert not any(c["carry"] for c in _events(tmp_path, "run-finished"))


@pytest.mark.slow
def test_kills_mid_round_then_resume_finish_the_same_rounds_and_run_no_cell_twice(tmp_path):
    ref_root, kill_root = tmp_path / "ref", tmp_path / "kill"
    for r in (ref_root, kill_root):
        r.mkdir()
    bench, commit = make_branch(tmp_path)
    fake = {"effect": {"evolved": 0.0}, "noise": 0.02, "seconds_per_run_second": 0.1}
    env_ref = fakes.install(ref_root, **fake)
    assert _promote(env_ref, *_args(bench, commit, ref_root)).returncode == 0
    ref = mf.load(ref_root / "results")
    assert len(ref.sequential.rounds) >= 2  # there is a later round to kill in
    env = fakes.install(kill_root, **fake)
    results = kill_root / "results"
    # kill in round 2 once some but not all of its runs are recorded, then at the start of round 3 (if any)
    targets = [(2, 1), (len(ref.sequential.rounds), 0), None]
    kills = 0
    for attempt, target in enumerate(targets):
        argv = _args(bench, commit, kill_root, *(["--resume"] if attempt else []))
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "promote"), *map(str, argv)],
            env=env,
            start_new_session=True,
            stderr=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        if target is None:
            break
        round_no, done = target
        deadline = time.time() + 120
        while proc.poll() is None:
            m = mf.load(results) if (results / mf.MANIFEST).is_file() else None
            rounds = m.sequential.rounds if m and m.sequential else []
            if len(rounds) >= round_no and not rounds[-1].complete:
                planned = {(r.arm, r.workload, r.rate, r.repetition) for r in rounds[-1].runs}
                recorded = sum((c.treatment, c.workload, c.rate, c.repetition) in planned for c in m.cells)
                if recorded >= done:
                    os.killpg(proc.pid, signal.SIGKILL)  # the job and everything it started
                    kills += 1
                    break
            assert time.time() < deadline
            time.sleep(0.02)
        proc.wait()
    assert proc.wait(timeout=300) == 0
    assert kills == 2
    m = mf.load(results)
    assert _reports(kill_root) == _reports(ref_root)
    rounds = lambda mm: [r.model_dump(exclude={"budget_left"}) for r in mm.sequential.rounds]  # noqa: E731
    assert rounds(m) == rounds(ref)  # the same rounds, each finished as it was planned
    assert m.sequential.cells == ref.sequential.cells and m.sequential.hypotheses == ref.sequential.hypotheses
    assert len({(c.treatment, c.run_treatment) for c in m.cells}) == len(m.cells)
    finished = _finished_runs(kill_root)
    assert all(n == 1 for n in finished.values()), finished  # a finished run is adopted, never run again
    assert json.loads((kill_root / "cluster" / "state.json").read_text())["up"] is False


@pytest.mark.slow
def test_a_budget_that_fits_only_the_first_round_stops_naming_the_deferred_cells(tmp_path):
    # Planned estimate per run: 1 s of load x 2 GPUs = 0.033 GPU-minutes, so the first round (2 cells x 3 runs x 2
    # arms, 0.4) fits a cap of 0.75. Its first run in each arm takes 4 wall seconds (>= 0.137 GPU-minutes), and
    # the runner's estimate per run becomes what that run cost: round 1 spends at least 2 x 0.137 plus the other
    # steps, and the <= 0.45 GPU-minutes left cannot pay for the next round's 4 runs on either cell (>= 0.55
    # each), so assess defers both. (Within round 1 each run still fits: about 0.3 of slack.)
    slow = {"spikes-rate-10-rep-1": 4.0}
    extra = ["--budget-gpu-minutes", "0.75", "--estimate-standup-minutes", "0", "--estimate-run-overhead-minutes", "0"]
    proc, bench, results = _run(tmp_path, *extra, effect={"evolved": 0.0}, slow=slow)
    assert proc.returncode == 3, proc.stderr
    m = mf.load(results)
    assert [r.complete for r in m.sequential.rounds] == [True]
    assert len(m.cells) == sum(len(r.runs) for r in m.sequential.rounds)
    assert "stopped before the GPU budget would be exceeded: the next round does not fit" in proc.stderr
    for label in _spec(bench).decision.sequential.looks:
        assert label in proc.stderr.split("deferred:")[1]
    assert "serves A1" in proc.stderr and "--resume" in proc.stderr
    assert all(c.reason == "undecided: the budget ran out" for c in m.sequential.cells)
    assert json.loads((tmp_path / "cluster" / "state.json").read_text())["up"] is False
    # more budget and --resume carry on from the next round; nothing is run twice
    env = fakes.install(tmp_path, effect={"evolved": 0.0}, noise=0.02, seconds_per_run_second=0.05)
    commit = json.loads((results / mf.MANIFEST).read_text())["commit"]
    again = _promote(env, *_args(bench, commit, tmp_path, "--resume", "--budget-gpu-minutes", "100"))
    assert again.returncode == 0, again.stderr
    assert all(n == 1 for n in _finished_runs(tmp_path).values())
    assert _assess(bench, results).done


def test_dry_run_prints_the_first_round_and_says_later_rounds_are_unknown(tmp_path):
    env = fakes.install(tmp_path)
    bench, commit = make_branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--dry-run"))
    assert proc.returncode == 0, proc.stderr
    seq = _spec(bench).decision.sequential
    first = 2 * sum(looks[0] for looks in seq.looks.values())
    runs = [ln for ln in proc.stderr.splitlines() if ln.startswith("$ ") and "cell:" in ln]
    assert len(runs) == first
    assert f"{first} cell run(s) would run in round 1" in proc.stdout and "only the first round" in proc.stdout
    assert fakes.calls(tmp_path) == []
    fixed = _promote(env, *_args(bench, commit, tmp_path, "--dry-run", "--fixed"))
    assert fixed.returncode == 0 and f"{_fixed_runs(bench)} cell run(s) would run" in fixed.stdout


def test_round_runs_take_the_next_repetitions_and_skip_runs_set_aside():
    rc = RoundCell("spikes", 10.0, 5, {"baseline": 2, "evolved": 3})
    attempted = {(arm, "spikes", 10.0, n) for arm in ("baseline", "evolved") for n in (1, 2, 3)}
    attempted.add(("evolved", "spikes", 10.0, 4))  # run but set aside: its number is never reused
    runs = [(r.arm, r.repetition) for r in round_runs([rc], attempted)]
    assert runs == [("baseline", 4), ("baseline", 5), ("evolved", 5), ("evolved", 6), ("evolved", 7)]
    # never a number beyond the horizon: with a horizon of 6 the evolved arm's look at 5 cannot be formed
    capped = RoundCell("spikes", 10.0, 5, {"baseline": 2, "evolved": 3}, horizon=6)
    runs = round_runs([capped], attempted)
    assert [(r.arm, r.repetition) for r in runs] == [("baseline", 4), ("baseline", 5), ("evolved", 5), ("evolved", 6)]
    assert short_cells([capped], runs) == [capped] and short_cells([rc], round_runs([rc], attempted)) == []


def test_the_next_round_starts_with_the_group_and_arm_that_are_up():
    def group(name, *setups):
        return Group(name, [SetupRun(s, s.split("+")[0], None, {}) for s in setups])

    groups = [group("stack", "baseline", "evolved"), group("stack+pd", "baseline+pd", "evolved+pd")]
    names = lambda order: [s.name for _, setups in order for s in setups]  # noqa: E731
    assert names(ordered(groups, None)) == ["baseline", "evolved", "baseline+pd", "evolved+pd"]
    assert names(ordered(groups, ("stack", "evolved"))) == ["evolved", "baseline", "baseline+pd", "evolved+pd"]
    assert names(ordered(groups, ("stack+pd", "evolved+pd"))) == ["evolved+pd", "baseline+pd", "baseline", "evolved"]


def _round_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("round ")]


@pytest.mark.parametrize(
    ("bad", "why"),
    [("wrong-rate", "rate mismatch: the directory says rate-20"), ("no-ttft", "its reports lack metric ttft_mean")],
)
def test_a_cell_whose_runs_add_no_usable_report_is_dropped_while_the_others_go_on(tmp_path, bad, why):
    proc, bench, results = _run(tmp_path, effect={"evolved": 0.0}, bad={"spikes-rate-20": bad})
    assert proc.returncode == 0, proc.stderr
    m = mf.load(results)
    seq = _spec(bench).decision.sequential
    first = seq.looks["spikes@20"][0]
    # spikes@20 ran its first round only, and is dropped saying why; spikes@10 went on to later rounds
    per_cell = Counter((c.treatment, f"{c.workload}@{c.rate:g}") for c in m.cells)
    assert per_cell[("baseline", "spikes@20")] == per_cell[("evolved", "spikes@20")] == first
    assert len(m.sequential.rounds) >= 2 and all("spikes@20" not in r.targets for r in m.sequential.rounds[1:])
    assert list(m.sequential.dropped) == ["spikes@20"] and why in m.sequential.dropped["spikes@20"]
    assert f"dropping spikes@20: round 1 added no usable report: {why}" in proc.stderr
    stop = next(c for c in m.sequential.cells if c.cell == "spikes@20")
    assert why in stop.reason and stop.runs == {"baseline": 0, "evolved": 0}
    assert f"spikes@20: 0 of at most {seq.looks['spikes@20'][-1]} runs per arm" in proc.stdout and why in proc.stdout
    if bad == "no-ttft":  # a report without the metric is said to be one, not counted silently as no run
        assert f"not evidence for spikes@20: {2 * first} usable report(s) lack metric ttft_mean" in proc.stderr
    # no repetition beyond a horizon; each round line names the real target, above what the cell has
    assert all(c.repetition <= seq.looks[f"{c.workload}@{c.rate:g}"][-1] for c in m.cells)
    for line in _round_lines(proc.stderr):
        for have, target in re.findall(r"from (\d+) to (\d+)", line):
            assert int(have) < int(target), line


def test_a_run_set_aside_is_replaced_up_to_the_first_planned_look(tmp_path):
    from bot.hypotheses import load_hypotheses
    from bot.stats.verdicts import evaluate

    proc, bench, results = _run(tmp_path, effect={"evolved": -0.3}, bad={"evolved/spikes-rate-10-rep-2": "corrupt"})
    assert proc.returncode == 0, proc.stderr
    m = mf.load(results)
    first = _spec(bench).decision.sequential.looks["spikes@10"][0]
    assert [r.cell for r in m.rejected] == ["evolved/spikes-rate-10-rep-2"]
    # round 2 replaces the lost run (its number is never reused) and the cell reaches its first look, no other
    assert [(r.arm, r.workload, r.rate, r.repetition) for r in m.sequential.rounds[1].runs] == [
        ("evolved", "spikes", 10.0, first + 1)
    ]
    assert "round 2: 1 run(s) bringing spikes@10 from 2 to 3 usable runs per arm" in proc.stderr
    evolved = sorted(c.repetition for c in m.cells if c.treatment == "evolved" and c.rate == 10.0)
    assert evolved == [n for n in range(1, first + 2) if n != 2]
    stops = {c.cell: c for c in m.sequential.cells}
    assert stops["spikes@10"].looks == [first] and stops["spikes@10"].runs == {"baseline": first, "evolved": first}
    # stage 5 judges the look the plan scheduled
    hyps = load_hypotheses(bench.parents[2] / f"docs/promotion/{SLUG}/hypotheses")
    (a1,) = evaluate(hyps, _evidence(bench, results), decision=_spec(bench).decision)
    at10 = next(e for e in a1.effects if e.rate == 10.0)
    assert at10.n_baseline == at10.n_evolved == first and f"looks at [{first}]" in at10.test


def test_a_round_in_which_no_cell_gains_a_usable_report_stops_the_run_saying_why(tmp_path):
    proc, _, results = _run(tmp_path, effect={"evolved": 0.0}, bad={"spikes": "corrupt"})
    assert proc.returncode == 1, proc.stderr
    m = mf.load(results)
    assert len(m.sequential.rounds) == 1 and not m.sequential.dropped  # the cause is the run's: --resume retries
    assert "round 1 added no usable report to any of its cells: spikes@10: " in proc.stderr
    assert "fix the cause, then --resume" in proc.stderr
    assert json.loads((tmp_path / "cluster" / "state.json").read_text())["up"] is False


def test_a_stop_because_no_report_is_evidence_keeps_the_machines_paths_out_of_the_manifest(tmp_path):
    """Found by a fixer: every report of round 1 records another rate than its directory, so the loader's
    "<results dir>: no valid benchmark report" became the stop event's detail in the committed manifest."""
    proc, _, results = _run(tmp_path, effect={"evolved": 0.0}, bad={"spikes": "wrong-rate"})
    assert proc.returncode == 1, proc.stderr
    assert "not usable evidence, so no round can be judged: --results: no valid benchmark report" in proc.stderr
    text = (results / mf.MANIFEST).read_text()
    assert str(tmp_path) not in text and str(tmp_path.resolve()) not in text
    (stop,) = [e for e in mf.load(results).events if e.kind == "stop"]
    assert "--results: no valid benchmark report" in stop.detail and "rate mismatch" in stop.detail


def test_local_paths_become_the_options_that_name_them():
    ws, res = Path("/srv/run/ws"), Path("/srv/run")
    text = "/srv/run/ws/setup-treatment-baseline failed; /srv/run: no valid report; results/rate-10 stays"
    out = mf.without_local_paths(text, {"--results": res, "--workspace": ws, "--other": Path("results")})
    assert out == "--workspace/setup-treatment-baseline failed; --results: no valid report; results/rate-10 stays"


#: Budget estimates for the dry-run tests: a stand-up is 10 min x 2 GPUs = 20 GPU-minutes, a run (1 s of load + 1 min)
#: x 2 GPUs = 2.03; round 1 is 2 cells x 3 runs x 2 arms = 12 runs, the fixed plan 20.
ESTIMATES = ("--estimate-standup-minutes", "10", "--estimate-run-overhead-minutes", "1")


def _cell_lines(stderr: str) -> int:
    return sum(ln.startswith("$ ") and "cell:" in ln for ln in stderr.splitlines())


def test_a_fixed_dry_run_below_one_stand_up_gives_the_budget_stop_not_a_traceback(tmp_path):
    env = fakes.install(tmp_path)
    bench, commit = make_branch(tmp_path)
    proc = _promote(
        env, *_args(bench, commit, tmp_path, "--dry-run", "--fixed", "--budget-gpu-minutes", "15", *ESTIMATES)
    )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and _cell_lines(proc.stderr) == 0
    assert (
        "promote bench run: budget: stopped before the GPU budget would be exceeded: the cap allows 0 of 20 runs"
        in (proc.stderr)
    )
    assert "raise --budget-gpu-minutes." in proc.stderr and "--resume" not in proc.stderr
    assert fakes.calls(tmp_path) == []


def test_the_dry_run_applies_the_budget_where_the_real_run_would(tmp_path):
    env = fakes.install(tmp_path, seconds_per_run_second=0.05)
    bench, commit = make_branch(tmp_path)

    def dry(*extra):
        return _promote(env, *_args(bench, commit, tmp_path, "--dry-run", *ESTIMATES, *extra))

    # fixed: 20 + 5 x 2.03 fit under 31, a sixth run does not: only those 5 are listed, and it exits as a stop
    fixed = dry("--fixed", "--budget-gpu-minutes", "31")
    assert fixed.returncode == 3 and _cell_lines(fixed.stderr) == 5, fixed.stderr
    assert "the cap allows 5 of 20 runs: 15 cell run(s) remain" in fixed.stderr
    roomy = dry("--fixed", "--budget-gpu-minutes", "100")
    assert roomy.returncode == 0 and "20 cell run(s) would run, about 61 GPU-minutes at the estimates" in roomy.stdout
    # sequential: round 1's estimate is shown; a cap that fits one cell's round defers the other
    part = dry("--budget-gpu-minutes", "35")
    assert part.returncode == 0 and _cell_lines(part.stderr) == 6, part.stderr
    assert "6 cell run(s) would run in round 1, about 32 GPU-minutes at the estimates" in part.stdout
    assert "the cap allows 6 of the 12 runs the design wants now, deferred: spikes@20" in part.stdout
    # nothing fits: the budget stop and exit 3, as the real run gives (after building the image)
    none = dry("--budget-gpu-minutes", "10")
    assert none.returncode == 3 and _cell_lines(none.stderr) == 0, none.stderr
    assert "the cap allows 0 of the 12 runs the design wants now: the next round does not fit" in none.stderr
    assert "plus 20 for the stand-up" in none.stderr and "Nothing ran (dry-run)" in none.stderr
    assert fakes.calls(tmp_path) == []
    real = _promote(env, *_args(bench, commit, tmp_path, *ESTIMATES, "--budget-gpu-minutes", "10"))
    assert real.returncode == 3 and "the next round does not fit" in real.stderr, real.stderr


def test_runs_whose_pod_deletion_never_happened_decide_no_fault_cell_and_no_fault_claim(tmp_path):
    """Found by a GPU-runner operator: RBAC forbade every pod deletion, yet the rounds counted those runs, stopped
    the fault cell as decided and printed "B2 confirmed", while stage 5 left every one of them out."""
    from bot.forge.local import LocalForge
    from bot.model import PipelineState
    from bot.stages.context import StageContext
    from bot.stages.run_validate import judge
    from tests.bench.bench_branch import git, hypotheses, small_request
    from tests.bench.test_bench_plan import _h

    faulty = {f"spikes+pod-failure-rate-10-rep-{n}": 1.2 for n in range(1, 6)}  # long enough to try the deletion
    env = fakes.install(
        tmp_path, effect={"evolved": -0.3}, noise=0.02, seconds_per_run_second=0.01, forbid_delete=True, slow=faulty
    )
    request = small_request(
        workloads=[{"name": "spikes", "profile": "shared_prefix_synthetic", "rates": [10], "duration_s": 1}]
    )
    hyps = hypotheses([_h("B2", ["spikes+pod-failure"], "e2e_p95", direction="no-worse")])
    bench, commit = make_branch(tmp_path, request, hyps)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--warmup-seconds", "0"))
    assert proc.returncode == 0, proc.stderr
    m = mf.load(tmp_path / "results")
    fault_runs = [c for c in m.cells if c.fault is not None]
    assert fault_runs and all(not c.fault.ok and "delete pod exited 1" in (c.fault.detail or "") for c in fault_runs)
    # the fault cell gained no usable run: dropped after its first round, not decided on runs stage 5 throws away
    assert "spikes+pod-failure@10" in m.sequential.dropped
    assert m.sequential.hypotheses["B2"] != "confirmed" and "B2 confirmed" not in proc.stdout
    assert m.sequential.hypotheses["A1"] == "confirmed"  # the plain cell goes on as before
    # stage 5 gives the verdicts the runner acted on
    repo = bench.parents[2]
    git(repo, "branch", "-f", request.branch)
    forge = LocalForge(repo, tmp_path / "work", base_branch=git(repo, "rev-parse", "--abbrev-ref", "HEAD"))
    state = PipelineState(request_id=request.id, request_fingerprint="f", branch=request.branch)
    verdicts, *_ = judge(StageContext(request, forge, state, results_dir=tmp_path / "results"), hyps)
    said = {v.hypothesis_id: v.status.value.replace("inconclusive", "undecided") for v in verdicts}
    assert said == m.sequential.hypotheses
