"""Stage 5 waiting for the GPU benchmark on the fake GitHub: one dispatch per approved commit, and a status and a
`/retry` reply that say where the benchmark is (found by a maintainer driving promotions, ghuser2 items 3 and 5)."""

from __future__ import annotations

import pytest

from tests.github.actions_sim import REPO
from tests.github.forms import example_body
from tests.github.test_github_flow import TITLE, _as, _comment, _label

pytestmark = pytest.mark.slow

STATUS = "<!-- promotion-bot:status -->"


def _status(sim, number) -> str:
    [body] = [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith(STATUS)]
    return body


def _state(sim, number):
    from bot.github.state import decode_state

    return decode_state(_status(sim, number))


def _reply(sim, number, comment_id) -> str:
    [body] = [c.body for c in sim.fake.comments(REPO, number) if f"notice:reply-{comment_id}" in c.body]
    return body


def _benchmark_out(sim):
    """Gates 1 and 2 approved; the GPU job is running (its dispatches are held, not answered)."""
    held: list[dict[str, str]] = []
    answer, sim.gpu = sim.gpu, held.append
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    _label(sim, number, "gate-1-approved", "maria")
    _label(sim, number, "gate-2-approved", "maria")
    assert len(held) == 1
    return number, held, answer


def test_an_edit_or_a_retry_while_the_benchmark_runs_does_not_dispatch_it_again_and_the_retry_is_answered(sim):
    number, held, answer = _benchmark_out(sim)
    commit = held[0]["commit"]
    assert _state(sim, number).benchmark.commit == commit
    _as(sim, "maria").get_issue(number).edit(title=TITLE + " (retitled)")
    sim.event("issues", "edited", number, sender="maria", changes={"title": {"from": TITLE}})
    _comment(sim, number, "maria", "/status")
    assert len(held) == 1, "an edit or /status during the wait dispatched the GPU benchmark again"
    retry = _comment(sim, number, "maria", "/retry")
    assert len(held) == 1, "/retry during the wait dispatched the GPU benchmark again"
    reply = _reply(sim, number, retry)
    assert f"waits for the GPU benchmark of `{commit[:12]}`" in reply and "`/retry 5`" in reply, reply
    first = sim.benchmark_run(held[0])
    assert f"/actions/runs/{first.run_id})" in reply, reply  # the run itself, as GitHub named it
    # On purpose (the run failed or was cancelled): `/retry 5` dispatches it again, once, and cancels the old run.
    again = _comment(sim, number, "maria", "/retry 5")
    assert [h["commit"] for h in held] == [commit, commit]
    assert first.conclusion == "cancelled" and sim.benchmark_run(held[1]).status == "queued"
    assert f"benchmark run {first.run_id}" in _reply(sim, number, again) and "was cancelled" in _reply(
        sim, number, again
    )
    assert any(a.event == "benchmark asked for again" and a.actor == "maria" for a in _state(sim, number).audit)
    answer(held[-1])  # the benchmark publishes its reports: stage 5 judges them
    sim.drain()
    state = _state(sim, number)
    assert state.benchmark is None and state.open_gate == 3, state.status
    assert len(held) == 2


def test_the_status_says_stage_5_waits_for_the_benchmark_and_links_its_runs(sim):
    number, held, _ = _benchmark_out(sim)
    status = _status(sim, number)
    line = next(x for x in status.splitlines() if x.startswith("**Status:**"))
    assert "waits for the GPU benchmark of " + held[0]["commit"][:12] in line and "is due" not in line, line
    [row] = [x for x in status.splitlines() if "5. run and validate" in x]
    assert "waits for the GPU benchmark" in row and "[running]" not in row, row
    run = sim.benchmark_run(held[0]).run_id
    assert f"[benchmark run {run}]({sim.fake.server_url}/{REPO}/actions/runs/{run})" in row, row


def _broken_edit(sim, number):
    """The researcher edits the form so that it cannot be read: the issue needs information."""
    from tests.github.forms import example_values, render_form

    sim.fake.issue(REPO, number).body = render_form(example_values(), {"baselines": [0, 1], "consent": [0]}).replace(
        "### Evolved program", "### Evolved programme"
    )
    sim.event("issues", "edited", number, sender="researcher")
    [needs] = [c.body for c in sim.fake.comments(REPO, number) if "needs more information" in c.body]
    return needs


def test_a_cancel_during_the_wait_cancels_the_benchmark_run_which_then_publishes_nothing(sim):
    number, held, answer = _benchmark_out(sim)
    run = sim.benchmark_run(held[0])
    cancel = _comment(sim, number, "researcher", "/cancel wrong program, sorry")
    assert run.status == "completed" and run.conclusion == "cancelled"
    reply = _reply(sim, number, cancel)
    assert f"`{held[0]['commit'][:12]}` ([benchmark run {run.run_id}](" in reply and "was cancelled" in reply, reply
    state = _state(sim, number)
    assert state.status.value == "cancelled" and state.benchmark is None
    assert "keeps the GPU runners" not in _status(sim, number)
    branch = state.branch
    before = sim.fake.branch_sha(REPO, branch)
    answer(held[0])  # the cancelled run's jobs never get to publish
    sim.drain()
    assert sim.fake.branch_sha(REPO, branch) == before
    _comment(sim, number, "maria", "/retry")  # continues where it stopped: the benchmark runs anew
    assert len(held) == 2 and _state(sim, number).benchmark.run_id == sim.benchmark_run(held[1]).run_id


def test_closing_the_issue_during_the_wait_cancels_the_benchmark_run(sim):
    number, held, _ = _benchmark_out(sim)
    _as(sim, "researcher").get_issue(number).edit(state="closed")
    sim.event("issues", "closed", number, sender="researcher")
    second = sim.benchmark_run(held[0])
    assert second.conclusion == "cancelled" and _state(sim, number).status.value == "cancelled"
    [notice] = [c.body for c in sim.fake.comments(REPO, number) if "closing the issue cancelled" in c.body]
    assert f"benchmark run {second.run_id}" in notice and "was cancelled" in notice, notice


def test_a_cancel_after_the_benchmark_run_finished_says_so_and_is_no_error(sim):
    number, held, _ = _benchmark_out(sim)
    run = sim.fake.finish_run(sim.benchmark_run(held[0]).run_id, "failure")  # GitHub answers the cancel 409
    cancel = _comment(sim, number, "researcher", "/cancel")
    reply = _reply(sim, number, cancel)
    assert "had already finished, so there was nothing to cancel" in reply, reply
    assert run.conclusion == "failure"
    state = _state(sim, number)
    assert state.status.value == "cancelled" and state.benchmark is None


def test_without_run_details_a_cancel_or_a_needs_info_edit_says_the_benchmark_keeps_running_and_how_to_cancel_it(
    sim,
):
    """An older GHES answers the dispatch 204 even when asked for the run: the bot cannot cancel what it cannot
    name, and must not let people believe it did."""
    sim.fake.state.dispatch_run_details = False
    number, held, _ = _benchmark_out(sim)
    assert _state(sim, number).benchmark.run_id is None
    runs = f"[benchmark runs]({sim.fake.server_url}/{REPO}/actions/workflows/benchmark.yml)"
    _comment(sim, number, "researcher", "/cancel wrong program, sorry")
    cancelled = _status(sim, number)
    assert f"The GPU benchmark of `{held[0]['commit'][:12]}`" in cancelled and runs in cancelled, cancelled
    assert "keeps the GPU runners" in cancelled
    assert sim.benchmark_run(held[0]).status == "queued"
    _comment(sim, number, "maria", "/retry")  # continues where it stopped: waits for the same benchmark
    assert len(held) == 1 and _state(sim, number).status.value == "running"
    needs = _broken_edit(sim, number)
    assert "nothing\nmore is built, run or pushed by the bot" in needs and runs in needs, needs
    assert "keeps the GPU runners" in needs and sim.benchmark_run(held[0]).status == "queued"


def test_an_edit_that_redoes_the_plan_during_the_wait_cancels_the_benchmark_run_and_says_so(sim):
    from tests.github.forms import example_values, render_form

    number, held, _ = _benchmark_out(sim)
    values = example_values()
    values["source"] = values["source"].replace("adj *= 1.0 - 0.12*(load-4.5)", "adj *= 1.0 - 0.10*(load-4.5)")
    sim.fake.issue(REPO, number).body = render_form(values, {"baselines": [0, 1], "consent": [0]})
    sim.event("issues", "edited", number, sender="researcher")
    run = sim.benchmark_run(held[0])
    assert run.conclusion == "cancelled", run
    [notice] = [c.body for c in sim.fake.comments(REPO, number) if "restarted from stage 1" in c.body]
    assert f"benchmark run {run.run_id}" in notice and "was cancelled" in notice, notice


def test_reports_of_the_run_retry_5_replaced_are_not_judged_as_the_new_runs_when_github_would_not_cancel_it(sim):
    """`/retry 5` while GitHub refuses to cancel the run out: that run goes on and publishes onto the commit both
    runs were dispatched for. Its manifest names it (benchmark.yml's real jobs, `--github-run`), so stage 5 does
    not take its reports for the new run's: it says so, cancels the new run (it would find the branch moved) and
    dispatches the benchmark at the branch's new commit, whose reports it judges."""
    import json

    from tests.github.actions_sim import benchmark_workflow_gpu
    from tests.github.gitrepo import git

    gpu = benchmark_workflow_gpu(sim)
    number, held, _ = _benchmark_out(sim)
    old = sim.benchmark_run(held[0])
    sim.fake.fail("POST", f"/repos/{REPO}/actions/runs/{old.run_id}/cancel", status=403, body={"message": "Forbidden"})
    again = _comment(sim, number, "maria", "/retry 5")
    assert len(held) == 2 and old.conclusion is None, "the refused cancel ended the old run"
    assert "could not cancel" in _reply(sim, number, again)
    new = sim.benchmark_run(held[1])
    gpu(held[0])  # the replaced run goes on, publishes and dispatches stage 5
    sim.drain()
    state = _state(sim, number)
    assert state.open_gate != 3 and state.stages.get(5) is None, "the replaced run's reports were judged"
    assert len(held) == 3 and held[2]["commit"] != held[0]["commit"], [h["commit"] for h in held]
    assert state.benchmark is not None and state.benchmark.commit == held[2]["commit"]
    assert new.conclusion == "cancelled"
    [said] = [c.body for c in sim.fake.comments(REPO, number) if "benchmark-outrun" in c.body]
    assert f"made by benchmark run {old.run_id}, not by the run stage 5 waits for" in said, said
    assert "not judged" in said and f"`{held[2]['commit'][:12]}`" in said, said
    gpu(held[2])
    sim.drain()
    state = _state(sim, number)
    assert state.benchmark is None and state.open_gate == 3, state.status
    slug = state.branch.split("-", 1)[1]
    manifest = git(sim.fake.git_dir(REPO), "show", f"{state.branch}:benchmarks/promotion/{slug}/results/manifest.json")
    assert json.loads(manifest)["runs"] == [sim.benchmark_run(held[2]).run_id]
