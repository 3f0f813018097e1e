"""Stage 5 waiting for the GPU benchmark on the fake GitHub: one dispatch per approved commit, and a status and a
`/retry` reply that say where the benchmark is (found by a maintainer driving promotions, ghuser2 items 3 and 5)."""

from __future__ import annotations

import pytest

from tests.github.actions_sim import REPO, standard_sim
from tests.github.forms import example_body
from tests.github.test_github_flow import TITLE, _as, _comment, _label

pytestmark = pytest.mark.slow

STATUS = "<!-- promotion-bot:status -->"


@pytest.fixture
def sim(fake_github, tmp_path):
    return standard_sim(fake_github, tmp_path)


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
    assert "/actions/workflows/benchmark.yml" in reply
    # On purpose (the run failed or was cancelled): `/retry 5` dispatches it again, once.
    _comment(sim, number, "maria", "/retry 5")
    assert [h["commit"] for h in held] == [commit, commit]
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
    assert f"[benchmark runs]({sim.fake.server_url}/{REPO}/actions/workflows/benchmark.yml)" in row, row


def test_a_cancel_or_a_needs_info_edit_during_the_wait_says_the_benchmark_keeps_running_and_how_to_cancel_it(sim):
    """The bot cannot cancel the run (the dispatch API does not name it): it must not let people believe it did."""
    from tests.github.forms import example_values, render_form

    number, held, _ = _benchmark_out(sim)
    runs = f"[benchmark runs]({sim.fake.server_url}/{REPO}/actions/workflows/benchmark.yml)"
    _comment(sim, number, "researcher", "/cancel wrong program, sorry")
    cancelled = _status(sim, number)
    assert f"The GPU benchmark of `{held[0]['commit'][:12]}`" in cancelled and runs in cancelled, cancelled
    assert "keeps the GPU runners" in cancelled
    _comment(sim, number, "maria", "/retry")  # continues where it stopped: waits for the same benchmark
    assert len(held) == 1 and _state(sim, number).status.value == "running"
    sim.fake.issue(REPO, number).body = render_form(example_values(), {"baselines": [0, 1], "consent": [0]}).replace(
        "### Evolved program", "### Evolved programme"
    )
    sim.event("issues", "edited", number, sender="researcher")
    [needs] = [c.body for c in sim.fake.comments(REPO, number) if "needs more information" in c.body]
    assert "nothing\nmore is built, run or pushed by the bot" in needs and runs in needs, needs
