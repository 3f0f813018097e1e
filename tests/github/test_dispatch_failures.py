"""A dispatch GitHub refuses, on the fake GitHub through the Actions simulator (admin findings, item 4): the run
that would go on never starts, so the issue says why and what fixes it, the job is red, nothing still reads
"running", and a `/retry` once fixed dispatches again."""

from __future__ import annotations

import pytest

import tests.github.actions as actions
from tests.github.actions_sim import REPO
from tests.github.forms import example_body
from tests.github.state import ApiError
from tests.github.test_github_benchmark_wait import _benchmark_out, _reply, _state, _status
from tests.github.test_github_flow import TITLE, _comment, _label

pytestmark = pytest.mark.slow

DISPATCHES = f"/repos/{REPO}/actions/workflows/{{}}/dispatches"

REFUSALS = [
    (404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, ".github/workflows/"),
    (403, {"message": "Resource not accessible by integration"}, "Actions: write"),
    (422, {"message": 'Unexpected inputs provided: ["step"]'}, "workflow_dispatch"),
]


def _open(sim) -> int:
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    return number


def _failure(status: str) -> str:
    return status.split("### Stage", 1)[1]


@pytest.mark.parametrize(("code", "answer", "fix"), REFUSALS, ids=[str(r[0]) for r in REFUSALS])
def test_a_refused_dispatch_fails_the_stage_saying_why_and_a_retry_dispatches_again(sim, code, answer, fix):
    sim.fake.fail("POST", DISPATCHES.format("promotion.yml"), status=code, body=answer)
    number = _open(sim)
    first = sim.runs[0]
    assert first.dispatched != 0, "the job that could not start the next run exited 0"
    assert len(sim.runs) == 1 and not sim.fake.dispatches, [r.event for r in sim.runs]
    assert first.calls <= 30, first.calls  # perf/github_calls.py's bound, the failure written on the issue too
    status = _status(sim, number)
    assert "[running](" not in status and "▶️" not in status, status
    assert "### Stage 2 failed" in status, status
    failure = _failure(status)
    assert f"GitHub answered {code}: {answer['message']}" in failure.replace("\\", ""), failure
    assert "could not start" in failure and "promotion.yml" in failure, failure
    line = next(x for x in failure.splitlines() if x.startswith("Fix:"))
    assert fix in line, line
    assert "Then comment `/retry` to run stage 2 again." in failure
    for secret in (sim.fake.bot_token, sim.fake.env(REPO)["GITHUB_TOKEN"], "Bearer", "Authorization"):
        assert secret not in status, secret
    labels = set(sim.fake.issue(REPO, number).labels)
    assert "promotion-failed" in labels or any("failed" in x for x in labels), labels
    # fixed (the fault answered once): an approver's `/retry` runs stage 2 again, and its dispatch goes through
    _comment(sim, number, "maria", "/retry")
    assert sim.fake.dispatches, "the /retry dispatched nothing"
    assert all(r.dispatched == 0 for r in sim.runs[1:]), [(r.event, r.dispatched) for r in sim.runs]
    state = _state(sim, number)
    assert state.status.value == "awaiting-decision" and state.open_gate == 1, state.status


def test_a_server_error_on_every_try_says_github_may_be_down(sim):
    sim.fake.fail("POST", DISPATCHES.format("promotion.yml"), status=502, times=10)
    number = _open(sim)
    assert sim.runs[0].dispatched != 0
    failure = _failure(_status(sim, number))
    assert "GitHub answered 502" in failure and "GitHub may be down" in failure, failure
    assert "[running](" not in _status(sim, number)


def test_a_refused_benchmark_dispatch_fails_stage_5_and_a_retry_dispatches_the_benchmark_again(sim):
    sim.fake.fail("POST", DISPATCHES.format("benchmark.yml"), status=403, body={"message": "Must have admin rights"})
    number, held, answer = _benchmark_out_refused(sim)
    status = _status(sim, number)
    assert "### Stage 5 failed" in status and "benchmark.yml" in status, status
    assert "waits for the GPU benchmark" not in status and "[running](" not in status, status
    assert _state(sim, number).benchmark is None  # nothing half-written: no dispatch the state still waits for
    assert "Actions: write" in next(x for x in status.splitlines() if x.startswith("Fix:"))
    _comment(sim, number, "maria", "/retry")
    assert len(held) == 1 and _state(sim, number).benchmark is not None
    answer(held[0])
    sim.drain()
    assert _state(sim, number).open_gate == 3


def _benchmark_out_refused(sim):
    """``test_github_benchmark_wait._benchmark_out``, with the benchmark's dispatch refused: no benchmark run is held."""
    held: list[dict[str, str]] = []
    answer, sim.gpu = sim.gpu, held.append
    number = _open(sim)
    _label(sim, number, "gate-1-approved", "maria")
    _label(sim, number, "gate-2-approved", "maria")
    assert not held and sim.runs[-1].dispatched != 0 and sim.runs[-1].calls <= 30, sim.runs[-1].calls
    return number, held, answer


def test_a_refused_continuation_with_nothing_due_is_said_in_a_notice_and_any_later_comment_takes_it_up(sim):
    """A run's bound on a burst of commands (``comments.LATE_PEOPLE``) leaves the rest to the run it dispatches; at
    a waiting gate nothing is "running", so a notice says the run never started, and the next comment's run
    answers what was left."""
    from bot.events.comments import LATE_PEOPLE
    from tests.github.test_github_flow import _as, _to_gate_1

    number = _to_gate_1(sim)
    for i in range(LATE_PEOPLE + 1):
        sim.fake.add_user(f"reader{i}", role="read")
        _as(sim, f"reader{i}").get_issue(number).create_comment("/approve")
    sim.fake.fail("POST", DISPATCHES.format("promotion.yml"), status=403, body={"message": "Forbidden"})
    runs = len(sim.runs)
    _comment(sim, number, "maria", "/approve")
    [run] = sim.runs[runs:]
    assert run.dispatched != 0 and not _state(sim, number).decisions, run.result.action
    [notice] = [c.body for c in sim.fake.comments(REPO, number) if "notice:dispatch-" in c.body]
    assert notice.split("\n", 1)[1].startswith(
        "The bot could not start its next run (promotion.yml): GitHub answered 403: Forbidden"
    ), notice
    assert notice.count("could not start") == 1, notice  # said once (red team 8, item 7)
    status = _status(sim, number)  # the waiting line agrees with the notice (item 6): no run is said to be dispatched
    assert "wait for the next run" in status and "dispatched the next run" not in status, status
    assert "if GitHub does not start it, a notice below says so" in status, status
    assert "Actions: write" in notice and "`/status`" in notice, notice
    assert "[running](" not in _status(sim, number)
    _comment(sim, number, "maria", "/status")
    assert [(d.gate, d.actor) for d in _state(sim, number).decisions] == [(1, "maria")]


# --- a dispatch GitHub carried out but gave no clear answer for (red team 8, item 1) ------------------------------
RUNS = f"/repos/{REPO}/actions/workflows/benchmark.yml/runs"


def _benchmarks(sim) -> list:
    return [d for d in sim.fake.dispatches if d.workflow.endswith("benchmark.yml")]


def test_a_benchmark_dispatch_github_started_but_answered_502_for_is_adopted_not_sent_again(sim):
    """GitHub started the run and then answered 502 (an edge timeout): the bot finds that run by its title and
    waits for it, instead of sending the dispatch again (which started 4 GPU runs, said "could not start" and
    forgot them); a `/retry` meanwhile dispatches nothing."""
    sim.fake.fail("POST", DISPATCHES.format("benchmark.yml"), status=502, times=10, after_write=True)
    held: list[dict[str, str]] = []
    answer, sim.gpu = sim.gpu, held.append
    number = _open(sim)
    _label(sim, number, "gate-1-approved", "maria")
    _label(sim, number, "gate-2-approved", "maria")
    [run] = _benchmarks(sim)
    assert run.title == f"benchmark #{number} {run.inputs['commit']}", run.title  # benchmark.yml's run-name
    assert sim.runs[-1].dispatched == 0 and sim.runs[-1].calls <= 30, (sim.runs[-1].dispatched, sim.runs[-1].calls)
    state = _state(sim, number)
    assert state.benchmark is not None and state.benchmark.run_id == run.run_id, state.benchmark
    status = _status(sim, number)
    assert "### Stage 5 failed" not in status and "could not start" not in status, status
    sim.fake.faults.clear()
    _comment(sim, number, "maria", "/retry")
    assert len(_benchmarks(sim)) == 1 and _state(sim, number).benchmark.run_id == run.run_id
    answer(held[0])
    sim.drain()
    assert _state(sim, number).open_gate == 3


def test_a_benchmark_dispatch_answered_502_before_github_took_it_is_sent_again_once(sim):
    """No run of the issue is listed after the 502: the dispatch did not land, so it is sent again, once."""
    sim.fake.fail("POST", DISPATCHES.format("benchmark.yml"), status=502, times=1)
    sim.gpu = lambda inputs: None
    number = _open(sim)
    _label(sim, number, "gate-1-approved", "maria")
    _label(sim, number, "gate-2-approved", "maria")
    [run] = _benchmarks(sim)
    assert _state(sim, number).benchmark.run_id == run.run_id


def test_a_benchmark_dispatch_nobody_can_confirm_says_it_may_have_started_and_stage_5_keeps_waiting(sim):
    """The dispatch landed but GitHub answered 502, and listing the runs fails too: the bot cannot know, so it
    neither says nothing started nor fails stage 5 (whose `/retry` would start a second run); it says where to
    look, and stage 5 keeps waiting for the run."""
    sim.fake.fail("POST", DISPATCHES.format("benchmark.yml"), status=502, times=10, after_write=True)
    sim.fake.fail("GET", RUNS, status=502, times=100)
    sim.gpu = lambda inputs: None
    number = _open(sim)
    _label(sim, number, "gate-1-approved", "maria")
    _label(sim, number, "gate-2-approved", "maria")
    assert len(_benchmarks(sim)) == 1
    assert sim.runs[-1].dispatched != 0 and sim.runs[-1].calls <= 30, sim.runs[-1].calls
    state = _state(sim, number)
    assert state.benchmark is not None and state.benchmark.run_id is None, state.benchmark
    status = _status(sim, number)
    assert "### Stage 5 failed" not in status, status
    [notice] = [c.body for c in sim.fake.comments(REPO, number) if "notice:benchmark-unconfirmed-" in c.body]
    assert "GitHub did not confirm that the bot started the GPU benchmark run (benchmark.yml)" in notice, notice
    assert "may have started" in notice and "could not start" not in notice, notice
    assert f"benchmark #{number} " in notice and "`/retry 5` dispatches the benchmark" in notice, notice


def _cancel_as_github_does(repo, run_id):
    """GitHub's cancel is asynchronous: 202, and the run stays in progress while its runner stops the job
    (benchmark.yml's `if: always()` teardown and artifact upload still run); the test ends it later."""
    record = actions.run(repo, run_id)
    if record.status == "completed":
        raise ApiError(409, "Cannot cancel a workflow run that is completed.")
    record.status = "in_progress"


def test_a_retry_5_whose_dispatch_gets_a_502_starts_a_new_run_instead_of_adopting_the_one_it_cancelled(
    sim, monkeypatch
):
    """red team 9, item 1: `/retry 5` cancels the running benchmark and dispatches it anew in the same job; the
    new dispatch is answered 502 before GitHub took it. The cancelled run still lists as in progress with the same
    title: it is not taken for the new one (which left stage 5 waiting on a dying run, then failing it with a false
    cause); the dispatch is sent again, and the new run's reports pass stage 5."""
    monkeypatch.setattr(actions, "cancel", _cancel_as_github_does)
    number, held, answer = _benchmark_out(sim)
    old = sim.benchmark_run(held[0])
    old.status = "in_progress"
    sim.fake.fail("POST", DISPATCHES.format("benchmark.yml"), status=502, times=1)
    retry = _comment(sim, number, "maria", "/retry 5")
    assert "was cancelled" in _reply(sim, number, retry) and "dispatches the benchmark anew" in _reply(
        sim, number, retry
    )
    assert len(_benchmarks(sim)) == 2, "no new benchmark run started: the bot adopted the run it had just cancelled"
    new = sim.benchmark_run(held[1])
    assert new.run_id != old.run_id and _state(sim, number).benchmark.run_id == new.run_id
    assert sim.runs[-1].dispatched == 0 and sim.runs[-1].calls <= 30, (sim.runs[-1].dispatched, sim.runs[-1].calls)
    sim.fake.finish_run(old.run_id, "cancelled")  # the old run's teardown ends
    _comment(sim, number, "maria", "/status")
    status = _status(sim, number)
    assert "### Stage 5 failed" not in status and "was cancelled" not in status, status
    answer(held[1])
    sim.drain()
    assert _state(sim, number).open_gate == 3
