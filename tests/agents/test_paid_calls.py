"""Calls paid in a step that then fails are kept: in the state's totals and against the token budget; and the
budget error's remedies (`--token-budget`, `--llm offline`) given to `resume` or a decision hold afterwards."""

from __future__ import annotations

import json

import pytest

from bot.cli import main
from bot.model import PipelineState
from tests.agents.fake_anthropic import FakeAnthropic, Reply, default_responder
from tests.conftest import REQUEST

pytestmark = pytest.mark.slow


def item_5_fails(call):
    """The gate-1 reviewer's fifth perspective always gets HTTP 500; every other call is answered."""
    if call.role == "reviewer" and "checklist item 5 only" in call.task:
        return Reply.error(500)
    return default_responder(call)


def state_of(work) -> PipelineState:
    return PipelineState.model_validate_json((work / "state.json").read_text())


@pytest.fixture()
def claude_env(monkeypatch):
    def point_at(fake: FakeAnthropic) -> None:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")

    return point_at


def test_a_failed_steps_paid_calls_are_saved_and_the_budget_counts_them(tmp_path, claude_env, capsys):
    work = tmp_path / "work"
    with FakeAnthropic(item_5_fails) as fake:
        claude_env(fake)
        assert main(["run", str(REQUEST), "--work", str(work), "--llm", "anthropic", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "HTTP 500" in err and "calls already paid for" in err
        state = state_of(work)
        # nothing of the review was saved, but every answered call is: stage 2's and gate 1's items 1-4
        assert state.open_gate == 1 and not state.reviews
        assert state.llm.totals().calls == len(fake.calls) == 5
        assert [c.gate for c in state.llm.calls] == [None, 1, 1, 1, 1]
        assert state.llm.totals().cache_read_tokens == fake.totals()["cache_read_input_tokens"]
        assert any(a.event == "claude calls of an unfinished step" for a in state.audit)

        # A budget that the saved calls leave no room in stops the next try before it pays anything.
        spent = state.llm.totals().tokens
        sent = fake.http_requests
        assert main(["resume", "--work", str(work), "--token-budget", str(spent + 8_000), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"token budget ({spent + 8_000:,}) would be exceeded: {spent:,} used" in err
        assert fake.http_requests == sent


def test_the_budget_errors_remedies_given_to_resume_or_a_decision_are_saved(tmp_path, claude_env, capsys):
    work = tmp_path / "work"
    with FakeAnthropic(default_responder) as fake:
        claude_env(fake)
        assert main(["run", str(REQUEST), "--work", str(work), "--llm", "anthropic", "--quiet"]) == 0
        assert main(["resume", "--work", str(work), "--token-budget", "2000000", "--quiet"]) == 0
        llm = json.loads((work / "run.json").read_text())["llm"]
        assert llm == {"engine": "anthropic", "token_budget": 2_000_000}

        # --llm offline given to resume holds for the decision after it: stage 3 and gate 2 call no model
        assert main(["resume", "--work", str(work), "--llm", "offline", "--quiet"]) == 0
        assert json.loads((work / "run.json").read_text())["llm"]["engine"] == "offline"
        sent = fake.http_requests
        assert main(["approve", "1", "--work", str(work), "--quiet"]) == 0
        assert fake.http_requests == sent
        assert state_of(work).open_gate == 2
    capsys.readouterr()
