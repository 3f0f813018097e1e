"""The fake Anthropic API, and the real client pointed at it."""

from __future__ import annotations

import anthropic
import pytest

from bot.agents import Agents
from bot.model.llm import LLMSettings
from tests.agents.fake_anthropic import FakeAnthropic


@pytest.fixture()
def fake():
    with FakeAnthropic() as server:
        yield server


def settings(**overrides) -> LLMSettings:
    return LLMSettings(engine="anthropic", **({"max_retries": 2, "timeout_s": 5.0} | overrides))


def agents_for(server: FakeAnthropic, **overrides) -> Agents:
    """Agents whose SDK client speaks HTTP to the fake, with the settings' retries and timeout."""
    s = settings(**overrides)
    client = anthropic.Anthropic(
        base_url=server.url, api_key="test-key", max_retries=s.max_retries, timeout=s.timeout_s
    )
    return Agents(s, client=client)
