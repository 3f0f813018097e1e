"""The CLI flags of the Claude author and reviewer (``--llm``, ``--model``, ...) and ``settings_from_args``.

The settings themselves (``LLMSettings``, prices) live in ``bot.model.llm``: the GitHub config file embeds them
too, and the GitHub port may not import a capability. The flags have the same names as the model's fields.
"""

from __future__ import annotations

import argparse

from bot.model.llm import DEFAULT_MODEL, LLMConfigError, LLMSettings

__all__ = ["add_llm_arguments", "settings_from_args"]


# --------------------------------------------------------------------------
# CLI flags (the same names as the model's fields)
# --------------------------------------------------------------------------


def add_llm_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Claude author and reviewer")
    g.add_argument(
        "--llm",
        choices=["offline", "anthropic"],
        default=None,
        help="offline: deterministic only (default without ANTHROPIC_API_KEY); anthropic: Claude writes and "
        "reviews (ANTHROPIC_BASE_URL points the client elsewhere, e.g. at a test server)",
    )
    g.add_argument("--model", default=None, help=f"Claude model (default {DEFAULT_MODEL})")
    g.add_argument("--max-tokens", type=int, default=None, help="output tokens per call (default 8192)")
    g.add_argument(
        "--token-budget", type=int, default=None, help="hard token cap for the whole promotion (default 3,000,000)"
    )


def settings_from_args(args: argparse.Namespace, saved: dict | None = None) -> LLMSettings:
    """Saved settings (run.json), overridden by the flags given now; raises LLMConfigError on bad values."""
    from pydantic import ValidationError

    from bot.model import describe_validation_error

    data = dict(saved or {})
    for flag, field in (
        ("llm", "engine"),
        ("model", "model"),
        ("max_tokens", "max_tokens"),
        ("token_budget", "token_budget"),
    ):
        value = getattr(args, flag, None)
        if value is not None:
            data[field] = value
    rounds = getattr(args, "max_rounds", None)
    if rounds is not None:
        data["rounds"] = rounds
    try:
        return LLMSettings.model_validate(data)
    except ValidationError as exc:
        raise LLMConfigError(f"LLM settings: {describe_validation_error(exc)}") from None
