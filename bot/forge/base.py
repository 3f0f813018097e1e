"""The ports a promotion writes through: the Forge (fork, issue, PR) and the StateStore.

Each home implements both: the local rehearsal with a git repository and files,
the GitHub home with the fork's remote, the promotion issue and its draft PR.
Every bot comment carries a hidden marker (``bot.forge.markers``) so it is found
and updated, never duplicated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bot.model import RequestError

if TYPE_CHECKING:
    from bot.model import PipelineState


class FeedbackNotFiled(RequestError):
    """The feedback issue could not be filed in ``repository`` (``why``), and what lets the next ones be
    (``fix``, "" when nothing needs changing). Stage 6 goes on without it: the promotion's work is not lost over
    its side product."""

    def __init__(self, repository: str, why: str, fix: str = ""):
        super().__init__(why)
        self.repository = repository
        self.why = why
        self.fix = fix


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

    def branch_head(self, branch: str) -> str | None:
        """The commit ``branch`` points at now; None if it does not exist."""

    def changed_paths(self, commit: str) -> list[str]:
        """The paths ``commit`` adds, changes or removes."""

    def read_file(self, branch: str, path: str) -> bytes | None: ...

    def list_files(self, branch: str, prefix: str = "") -> list[str]: ...

    def files_at(self, commit: str, prefix: str) -> dict[str, bytes] | None:
        """The files under ``prefix`` as they are in ``commit``; None when the fork's history holds no such commit
        (stage 5 reads the plugin code a report's runner build was made from, when no run manifest records it)."""

    def find_commit(self, branch: str, trailer: str) -> str | None:
        """The newest commit on ``branch`` whose message carries ``trailer`` (used to resume)."""

    def commits(self, branch: str, base: str) -> list[tuple[str, str]]:
        """(sha, subject) of the commits on ``branch`` that are not on ``base``, oldest first."""

    def blob_url(self, commit: str, path: str) -> str:
        """An absolute link to ``path`` as it is in ``commit``: it resolves from anywhere the text is read
        (a PR body does not resolve relative links) and keeps pointing at what was reviewed. Never a path
        on the machine that ran the promotion."""

    # --- the issue thread ----------------------------------------------
    def upsert_comment(self, marker: str, body: str) -> None:
        """Create or update the one bot comment carrying the hidden ``marker``."""

    # --- the pull request ----------------------------------------------
    def pull_request(self, branch: str) -> PullRequestRecord | None:
        """The promotion's PR, if it has been opened."""

    def open_or_update_pr(self, branch: str, base: str, title: str, body: str) -> PullRequestRecord:
        """Open the promotion's PR as a draft, or update its title and body."""

    def mark_ready(self, pr: PullRequestRecord) -> None:
        """Take the PR out of draft: every stage and gate has passed."""

    def close_pr(self, pr: PullRequestRecord) -> None:
        """Close the PR unmerged: a person rejected or cancelled the promotion (the branch stays, for the record)."""

    def reopen_pr(self, pr: PullRequestRecord) -> None:
        """Reopen the PR a cancel or a person closed: the promotion continues (nothing when it is open); a home
        where people close PRs says so to them (``GitHubForge.reopen_pr``)."""

    def set_review_comments(
        self, pr: PullRequestRecord, marker: str, comments: list[ReviewComment], *, body: str = ""
    ) -> None:
        """Post one review (``body`` and ``comments`` anchored to lines) replacing the bot's earlier one for ``marker``.

        A comment whose line is not part of the PR's diff moves into the body instead of failing the review.
        """

    def edit_review_summary(self, pr: PullRequestRecord, marker: str, summary: str) -> None:
        """Replace the first line (the summary) of the bot's review for ``marker`` with ``summary``, keeping its
        comments and the findings listed under it: a decided gate's review then says so. No such review: nothing."""

    # --- elsewhere -----------------------------------------------------
    def file_feedback(self, marker: str, title: str, body: str) -> str:
        """Create or update one feedback issue for the simulator's maintainers; returns where it is, "" when
        none is filed by design; raises FeedbackNotFiled when the place it goes refuses it."""

    def locations(self) -> dict[str, str]:
        """Human-readable places to look (fork, branch, issue thread, PR)."""


class StateStore(Protocol):
    """Where a promotion's state lives between steps: a file locally, the status comment on GitHub."""

    def load(self) -> PipelineState | None:
        """The saved state, None if the promotion has not started; raises RequestError if unreadable."""

    def save(self, state: PipelineState, status: str) -> None:
        """Save ``state`` and show people ``status`` (the checklist) where they look."""
