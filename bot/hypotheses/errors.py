"""The one error type of the hypotheses package, kept apart so every module can raise it."""

from __future__ import annotations

from bot.model import RequestError


class HypothesisError(RequestError):
    """A hypothesis input or document is wrong: the message names the file (or request field) and the fix."""
