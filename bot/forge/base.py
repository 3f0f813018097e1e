"""The Forge protocol: what a stage may do to the fork, the issue and the PR."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ReviewComment:
    """A review comment anchored to a file and line on the promotion branch."""

    path: str
    line: int
    body: str


@dataclass(frozen=True)
class PullRequestRecord:
    number: int | str
    url: str
    title: str


class Forge(Protocol):
    # --- the fork -------------------------------------------------------
    def ensure_branch(self, branch: str, base: str) -> str:
        """Create ``branch`` from ``base`` if missing; return its head commit."""

    def commit_files(
        self, branch: str, files: dict[str, bytes], *, message: str, remove: tuple[str, ...] = ()
    ) -> str | None:
        """One atomic commit of ``files`` (and removals) on ``branch``; None when nothing changed."""

    def read_file(self, branch: str, path: str) -> bytes | None: ...

    def list_files(self, branch: str, prefix: str = "") -> list[str]: ...

    def find_commit(self, branch: str, trailer: str) -> str | None:
        """The newest commit on ``branch`` whose message carries ``trailer`` (used to resume)."""

    def commits(self, branch: str, base: str) -> list[tuple[str, str]]:
        """(sha, subject) of the commits on ``branch`` that are not on ``base``, oldest first."""

    # --- the issue thread ----------------------------------------------
    def upsert_comment(self, marker: str, body: str) -> None:
        """Create or update the one bot comment carrying the hidden ``marker``."""

    # --- the pull request ----------------------------------------------
    def open_or_update_pr(self, branch: str, base: str, title: str, body: str) -> PullRequestRecord: ...

    def set_review_comments(self, pr: PullRequestRecord, marker: str, comments: list[ReviewComment]) -> None:
        """Replace the bot's review comments (those carrying ``marker``) on the PR."""

    def locations(self) -> dict[str, str]:
        """Human-readable places to look (fork, branch, issue thread, PR)."""
