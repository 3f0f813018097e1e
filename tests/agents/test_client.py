"""The structured-call client against the fake Messages API, with the real anthropic SDK over HTTP."""

from __future__ import annotations

import time
from dataclasses import dataclass

import anthropic
import pytest

from bot.agents.client import LLMBudgetExceeded, LLMClient, LLMOverloaded, LLMRefused, LLMSchemaError, LLMUnavailable
from bot.agents.prompts import PromptRequest, load, reference
from bot.agents.schemas import ReviewReport
from bot.model.llm import LLMConfigError
from tests.agents.conftest import agents_for, settings
from tests.agents.fake_anthropic import Reply

GOOD = {"rationale": "r", "findings": [], "responses": [], "summary": "fine"}
ARTIFACTS = "# Artifacts\n\n" + "\n".join(f"{i:>4}| func f{i}() int {{ return {i} }}" for i in range(1, 400))


def request(context: str = ARTIFACTS, task: str = "Review item 1.") -> PromptRequest:
    prompt = load("reviewer/gate1.md.j2")
    return PromptRequest(
        prompt=prompt.tag,
        role="reviewer",
        role_text=prompt.render_block("system", gate=1),
        context=context,
        task=task,
        output=ReviewReport,
        gate=1,
        round=1,
        label="gate 1 test",
    )


def test_valid_structured_output_with_cache_breakpoints_and_usage(fake):
    llm = agents_for(fake).llm
    report = llm.ask(request())
    assert report.summary
    body = fake.calls[0].body
    # the output model's JSON schema travels as output_config.format
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert body["output_config"]["format"]["schema"]["title"] == "ReviewReport"
    # breakpoints: reference, role, artifacts; the task is not cached
    assert [("cache_control" in b) for b in body["system"]] == [True, True]
    assert [("cache_control" in b) for b in body["messages"][0]["content"]] == [True, False]
    (call,) = llm.take_calls()
    assert call.cache_write_tokens > 10_000 and call.cache_read_tokens == 0
    assert call.prompt == "reviewer/gate1@1" and call.usd and call.usd > 0


def test_repeated_prefix_is_read_from_cache_and_a_layout_that_varies_early_is_not(fake):
    llm = agents_for(fake).llm
    llm.ask(request(task="item 1"))
    llm.ask(request(task="item 2"))
    second = llm.take_calls()[1]
    assert second.cache_read_tokens > 10_000 and second.cache_write_tokens == 0
    assert second.cache_read_tokens / second.total_input > 0.95
    # a layout that puts per-call text before the shared reference misses every time
    for task in ("item 1", "item 2"):
        llm.ask(VaryingFirst(**request(task=task).__dict__))
    assert all(c.cache_read_tokens == 0 for c in llm.take_calls())


@dataclass(frozen=True)
class VaryingFirst(PromptRequest):
    """A broken layout: the task first, then the reference (what the fake must punish)."""

    def system_blocks(self) -> list[str]:
        return [self.task, reference()[0]]


def test_invalid_json_is_asked_for_again_once_with_the_error(fake):
    fake.then(Reply.raw('{"rationale": "r", "findings": [ oops'))
    llm = agents_for(fake).llm
    assert llm.ask(request()).summary == "No further problems found from this perspective."
    first, second = llm.take_calls()
    assert (first.attempt, first.valid, second.attempt, second.valid) == (1, False, 2, True)
    reask = fake.calls[1].body["messages"]
    assert [m["role"] for m in reask] == ["user", "assistant", "user"]
    assert "not valid JSON" in reask[2]["content"][0]["text"]
    # the re-ask reuses the cached prefix
    assert fake.calls[1].usage["cache_read_input_tokens"] > 10_000


def test_a_reply_that_never_validates_ends_the_step_naming_the_schema_error(fake):
    fake.then(
        Reply.json({"rationale": "r", "findings": []}), Reply.json({"rationale": "r", "findings": [], "extra": 1})
    )
    llm = agents_for(fake).llm
    with pytest.raises(LLMSchemaError) as err:
        llm.ask(request())
    msg = str(err.value)
    assert "ReviewReport schema twice" in msg and "summary: Field required" in msg
    assert "extra: Extra inputs are not permitted" in msg
    assert "changed only by the calls already paid for" in msg
    assert [c.valid for c in llm.take_calls()] == [False, False]  # their usage is still counted


def test_caller_checks_count_as_validation(fake):
    fake.then(Reply.json(GOOD))
    llm = agents_for(fake).llm
    seen = []

    def check(report):
        seen.append(report)
        return ["findings: the file is not one of the artifacts"] if len(seen) == 1 else []

    llm.ask(request(), check)
    assert len(fake.calls) == 2 and "not one of the artifacts" in fake.calls[1].text


def test_overload_is_retried_by_the_sdk_with_backoff(fake):
    fake.then(Reply.error(529), Reply.error(529))
    llm = agents_for(fake, max_retries=2).llm
    assert llm.ask(request()).summary
    assert fake.http_requests == 3 and len(fake.calls) == 1


def test_a_run_of_529s_names_the_overload_and_how_to_retry(fake):
    fake.then(*[Reply.error(529)] * 3)
    llm = agents_for(fake, max_retries=2).llm
    with pytest.raises(LLMOverloaded) as err:
        llm.ask(request())
    assert "overloaded (HTTP 529)" in str(err.value) and "promote resume" in str(err.value)
    assert fake.http_requests == 3 and not llm.take_calls()


def test_rate_limits_and_server_errors_are_retried_honouring_retry_after(fake):
    fake.then(Reply.error(429, retry_after_ms=300), Reply.error(500))
    llm = agents_for(fake, max_retries=2).llm
    start = time.monotonic()
    assert llm.ask(request()).summary
    assert time.monotonic() - start >= 0.3
    assert fake.http_requests == 3


def test_timeouts_are_retried_then_reported(fake):
    fake.then(Reply.slow(1.5), Reply.slow(1.5))
    llm = agents_for(fake, max_retries=1, timeout_s=0.3).llm
    with pytest.raises(LLMUnavailable) as err:
        llm.ask(request())
    assert "did not answer within 0.3 s" in str(err.value)
    assert fake.http_requests == 2


def test_refusal_and_missing_key_and_unknown_model(fake, monkeypatch):
    fake.then(Reply.refusal())
    with pytest.raises(LLMRefused):
        agents_for(fake).llm.ask(request())
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY"):
        LLMClient(settings()).ask(request())
    fake.then(Reply.error(404, retry_after_ms=None))
    with pytest.raises(LLMConfigError, match="does not know model"):
        agents_for(fake).llm.ask(request())


def test_budget_is_checked_before_a_call(fake):
    llm = agents_for(fake, token_budget=20_000).llm
    llm.begin_step(spent_before=5_000)
    with pytest.raises(LLMBudgetExceeded) as err:
        llm.ask(request())
    assert "--token-budget" in str(err.value) and "5,000 used" in str(err.value)
    assert fake.http_requests == 0


def test_base_url_comes_from_the_environment(fake, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    llm = LLMClient(settings())
    assert llm.ask(request()).summary
    assert isinstance(llm.client, anthropic.Anthropic) and len(fake.calls) == 1


def test_a_replies_store_replays_the_same_request_without_a_call(fake, tmp_path):
    from bot.agents.client import FileReplies

    store = FileReplies(tmp_path / "replies.json")
    first = agents_for(fake).llm
    first.replies = store
    answer = first.ask(request())
    (paid,) = first.take_calls()
    # a rerun of the step (a new process, the same store) gets the same answer and records the same usage
    again = agents_for(fake).llm
    again.replies = FileReplies(tmp_path / "replies.json")
    assert again.ask(request()) == answer
    (replayed,) = again.take_calls()
    assert replayed == paid and len(fake.calls) == 1
    # a different request is not served from the store
    again.ask(request(task="another item"))
    assert len(fake.calls) == 2
