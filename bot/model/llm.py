"""How the Claude author and reviewer are called and what they may spend: ``LLMSettings``.

One pydantic model serves the CLI flags (``--llm``, ``--model``, ...; ``bot.agents.settings``), the run's
saved settings (``run.json``) and the GitHub config file (``.github/promotion-bot.yml``, key ``llm``), so the
three cannot drift apart. It lives in the model, below both ``bot.agents`` (which calls Claude with it) and
``bot.github.config`` (which validates the config file with it), so the GitHub port need not import a
capability. The engine defaults to ``offline`` (the deterministic path, no network) unless
``ANTHROPIC_API_KEY`` is set, so the README's first command needs no key.

Prices are the published per-million-token list prices (platform.claude.com,
"Model pricing"): cache writes cost 1.25x input (5-minute TTL) or 2x (1 hour),
cache reads 0.1x. A model missing from the table gets no dollar estimate
(``None``, shown as "n/a") unless its prices are configured; a wrong number
is worse than none.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.model.base import RequestError

Engine = Literal["offline", "anthropic"]

DEFAULT_MODEL = "claude-sonnet-4-6"

#: model prefix -> (input, output, cache read) in USD per million tokens (platform.claude.com pricing page).
PRICES: dict[str, tuple[float, float, float]] = {
    "claude-fable-5-1": (10.0, 50.0, 0.25),
    "claude-mythos-5-1": (10.0, 50.0, 0.25),
    "claude-fable-5": (10.0, 50.0, 1.0),
    "claude-mythos-5": (10.0, 50.0, 1.0),
    "claude-opus-5": (5.0, 25.0, 0.5),
    "claude-opus-4-8": (5.0, 25.0, 0.5),
    "claude-opus-4-7": (5.0, 25.0, 0.5),
    "claude-opus-4-6": (5.0, 25.0, 0.5),
    "claude-opus-4-5": (5.0, 25.0, 0.5),
    "claude-opus-4-1": (15.0, 75.0, 1.5),
    "claude-opus-4": (15.0, 75.0, 1.5),
    "claude-sonnet-4-6": (3.0, 15.0, 0.3),
    "claude-sonnet-4-5": (3.0, 15.0, 0.3),
    "claude-sonnet-4": (3.0, 15.0, 0.3),
    "claude-haiku-4-5": (1.0, 5.0, 0.1),
    "claude-3-5-haiku": (0.8, 4.0, 0.08),
}

CACHE_WRITE_FACTOR = {"5m": 1.25, "1h": 2.0}


class LLMConfigError(RequestError):
    """The LLM settings cannot be used as given."""


class LLMSettings(BaseModel):
    """How the Claude author and the independent reviewer run. Embeddable in the GitHub config file."""

    model_config = ConfigDict(extra="forbid")

    engine: Engine | None = Field(
        default=None, description="offline (deterministic only) or anthropic; default: anthropic iff ANTHROPIC_API_KEY"
    )
    model: str = Field(default=DEFAULT_MODEL, min_length=3, description="Claude model for author and reviewer")
    max_tokens: int = Field(default=8192, ge=256, le=128_000, description="output tokens per call")
    rounds: int = Field(default=3, ge=1, le=10, description="review rounds at a gate before it opens unconverged")
    token_budget: int = Field(
        default=3_000_000,
        ge=1_000,
        description="hard cap on tokens (input, cache writes, cache reads, output) per promotion",
    )
    max_retries: int = Field(default=4, ge=0, le=10, description="retries on 429, 529, 5xx and timeouts (SDK backoff)")
    timeout_s: float = Field(default=300.0, gt=0, description="per-request timeout in seconds")
    cache_ttl: Literal["5m", "1h"] = "5m"
    perspectives: Literal["per-item", "single"] = Field(
        default="per-item",
        description="per-item: one reviewer call per checklist item over the same cached artifacts (BLIS "
        "convergence-review perspectives); single: one call for the whole checklist",
    )
    input_usd_per_mtok: float | None = Field(default=None, ge=0, description="override the price table")
    output_usd_per_mtok: float | None = Field(default=None, ge=0)
    cache_read_usd_per_mtok: float | None = Field(default=None, ge=0)

    def resolved(self, env: dict[str, str] | None = None) -> LLMSettings:
        """The settings with the engine decided: explicit, else anthropic when a key is present."""
        env = os.environ if env is None else env
        if self.engine is not None:
            return self
        return self.model_copy(update={"engine": "anthropic" if env.get("ANTHROPIC_API_KEY") else "offline"})

    @property
    def uses_model(self) -> bool:
        return self.engine == "anthropic"

    def prices(self) -> tuple[float, float, float] | None:
        """(input, output, cache read) USD per million tokens, or None when unknown."""
        table = next(
            (p for prefix, p in sorted(PRICES.items(), key=lambda kv: -len(kv[0])) if self.model.startswith(prefix)),
            None,
        )
        inp = self.input_usd_per_mtok if self.input_usd_per_mtok is not None else (table[0] if table else None)
        out = self.output_usd_per_mtok if self.output_usd_per_mtok is not None else (table[1] if table else None)
        read = self.cache_read_usd_per_mtok
        if read is None:
            read = table[2] if table else (inp * 0.1 if inp is not None else None)
        if inp is None or out is None or read is None:
            return None
        return inp, out, read

    def dollars(self, *, input_tokens: int, output_tokens: int, cache_write: int, cache_read: int) -> float | None:
        p = self.prices()
        if p is None:
            return None
        inp, out, read = p
        write = inp * CACHE_WRITE_FACTOR[self.cache_ttl]
        return (input_tokens * inp + output_tokens * out + cache_write * write + cache_read * read) / 1_000_000
