"""The error every GitHub call raises when it failed for good (``bot.github.client``, ``bot.github.runs``)."""

from __future__ import annotations

from bot.model import RequestError


class GitHubError(RequestError):
    """A REST call failed for good; the message names the call, GitHub's answer and what to do.

    ``may_have_started``: a workflow dispatch GitHub may have carried out though it never said so (a 5xx or a
    dropped connection after the request was sent): whoever reports it must not say that nothing started."""

    def __init__(self, message: str, status: int | None = None, *, may_have_started: bool = False):
        super().__init__(message)
        self.status = status
        self.may_have_started = may_have_started
