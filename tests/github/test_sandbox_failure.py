"""A sandboxed job that raises: the issue says which stage failed, what failed and how to go on."""

from __future__ import annotations

import re

import pytest

from tests.github.actions_sim import REPO
from tests.github.forms import example_body
from tests.github.test_github_flow import TITLE, state_of

pytestmark = pytest.mark.slow


RAN = (
    r"could not run (the differential check against the BLIS original \(go-harness\)"
    r"|the Go checks \(gofmt, build, vet, test\) \(go-check\))"
)


def test_a_sandbox_job_that_raises_shows_stage_2_failed_with_the_reason_and_retry(sim, tmp_path, monkeypatch):
    """The runner's Go build cache cannot be made (its parent is a file): the sandboxed go-check raises at
    that boundary. Then the promotion must stop at stage 2 with a reason naming what failed and `/retry`, not
    a traceback, not a silent wait."""
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache directory should be\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked / "cache"))
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    assert any(r.sandbox_ran for r in sim.runs)  # the request reached the sandboxed job, which raised there
    state = state_of(sim, number)
    assert state.status.value == "failed" and int(state.failure.stage) == 2
    # which of the job's requests meets the broken cache first depends on what a warm harness cache already holds
    assert re.search(RAN, state.failure.reason), state.failure.reason
    assert "NotADirectoryError" in state.failure.reason and "not the evolved program" in state.failure.reason
    assert "$XDG_CACHE_HOME" in state.failure.reason and "a bug in the bot" not in state.failure.reason
    [status] = [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status -->")]
    assert re.search("stage 2 \\(translate\\) failed: the sandboxed job " + RAN, status)
    assert "`/retry`" in status and "Traceback" not in status
    assert "promotion-failed" in sim.fake.issue(REPO, number).labels
    assert not sim.fake.dispatches[sim.seen_dispatches :]  # nothing left waiting on a run that never comes
