"""Stage 5 on GitHub when the benchmark publishes reports none of which can be used (ghflow2 item 1): reports
tagged for another promotion stand in for any such publish (a wrong plan, a schema change in llm-d-benchmark, a
broken publish). The failure names the branch's results directory (not the runner's temporary copy), says what the
benchmark publishes there (not the CLI's `--results` layout) and gives advice that works: `/retry 5` dispatches the
benchmark again and its reports replace the unusable ones; a plain `/retry` says it judges the same reports again."""

from __future__ import annotations

import pytest

from tests.github.actions_sim import REPO, publish_sample
from tests.github.forms import example_body
from tests.github.test_github_benchmark_wait import _reply, _state, _status
from tests.github.test_github_flow import TITLE, _comment, _label

pytestmark = pytest.mark.slow


def _failed_on_unusable_reports(sim, *, later_runs_publish: bool = True):
    """Promotion #2 (an unrelated issue is #1) whose first benchmark run publishes promotion 1's reports; later
    runs publish the promotion's own at once, or (``later_runs_publish`` False) stay on the GPUs until the test
    publishes them."""
    published: list[dict[str, str]] = []

    def gpu(inputs: dict[str, str]) -> None:
        published.append(inputs)
        if len(published) == 1 or later_runs_publish:
            publish_sample(sim, inputs, promotion="1" if len(published) == 1 else inputs["issue"])

    sim.gpu = gpu
    sim.fake.create_issue(REPO, "unrelated bug report", "the EPP crashes", "researcher")
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    assert number == 2
    sim.event("issues", "opened", number, sender="researcher")
    _label(sim, number, "gate-1-approved", "maria")
    _comment(sim, number, "maria", "/approve")
    state = _state(sim, number)
    assert state.status.value == "failed" and int(state.failure.stage) == 5, state.status
    assert len(published) == 1
    return number, published, state


def test_unusable_reports_on_the_branch_fail_stage_5_naming_the_branch_and_what_the_benchmark_publishes(sim):
    number, _, state = _failed_on_unusable_reports(sim)
    results = f"benchmarks/promotion/{state.branch.split('/', 1)[1].split('-', 1)[1]}/results/"
    status = _status(sim, number)
    assert "promote-results-" not in status and "/tmp/" not in status, status  # the runner's throw-away copy
    assert results in state.failure.reason, state.failure.reason
    assert "belongs to promotion '1'" in state.failure.reason, state.failure.reason
    # GitHub's layout: what benchmark.yml publishes, not the local CLI's `--results` directory
    assert "RESULTS/" not in status and "--results" not in status, status
    assert "benchmark.yml" in state.failure.fix and "rate-<rate>/rep-<n>/" in state.failure.fix, state.failure.fix
    # the advice that works: `/retry 5`; the template's plain "comment `/retry`" would judge the same reports again
    assert "`/retry 5`" in state.failure.fix, state.failure.fix
    assert "Then comment `/retry` to run stage 5 again" not in status, status


def test_retry_5_benchmarks_again_and_judges_the_new_reports_and_a_plain_retry_says_it_would_not(sim):
    number, published, _ = _failed_on_unusable_reports(sim)
    plain = _comment(sim, number, "maria", "/retry")
    reply = _reply(sim, number, plain)
    assert "same reports" in reply and "`/retry 5`" in reply, reply
    assert len(published) == 1 and _state(sim, number).status.value == "failed"

    head = sim.fake.branch_sha(REPO, _state(sim, number).branch)
    again = _comment(sim, number, "maria", "/retry 5")
    assert len(published) == 2, "`/retry 5` did not dispatch the benchmark again"
    assert published[1]["commit"] == head  # the approved code with the unusable reports: publish replaces them
    reply = _reply(sim, number, again)
    assert "benchmark.yml" in reply and f"`{head[:12]}`" in reply, reply
    state = _state(sim, number)
    assert state.status.value == "awaiting-decision" and state.open_gate == 3, state.status
    assert any(a.event == "benchmark asked for again" and a.actor == "maria" for a in state.audit)


def test_after_retry_5_a_status_while_the_new_run_is_out_waits_for_it_and_its_reports_are_judged(sim):
    """redteam10 item 1: the first event after `/retry 5` (the `/status` the bot suggests while it waits) judged the
    unusable reports again, failed stage 5 and forgot the run still on the GPUs, whose publish was then ignored."""
    number, published, _ = _failed_on_unusable_reports(sim, later_runs_publish=False)
    _comment(sim, number, "maria", "/retry 5")
    assert len(published) == 2, "`/retry 5` did not dispatch the benchmark again"
    sent = _state(sim, number).benchmark
    assert sent is not None and sent.commit == published[1]["commit"]

    _comment(sim, number, "researcher", "/status")
    state = _state(sim, number)
    assert state.status.value == "running" and state.failure is None, (state.status, state.failure)
    kept = state.benchmark
    assert kept is not None and (kept.commit, kept.run_id) == (sent.commit, sent.run_id), (
        "the run `/retry 5` dispatched was dropped while it still runs"
    )
    assert f"waits for the GPU benchmark of `{sent.commit[:12]}`" in _status(sim, number)
    assert sim.benchmark_run(published[1]).conclusion is None  # neither cancelled nor dispatched a third time
    assert len(published) == 2

    publish_sample(sim, published[1], promotion=str(number))
    sim.drain()
    state = _state(sim, number)
    assert state.status.value == "awaiting-decision" and state.open_gate == 3, (state.status, state.failure)
    assert state.benchmark is None
