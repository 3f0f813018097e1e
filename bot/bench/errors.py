"""The error every benchmark-report check raises: one line naming the problem and the fix."""

from __future__ import annotations

from bot.model import RequestError


class ReportError(RequestError):
    """A benchmark report, or a results directory, that cannot be used."""
