"""A slash command on a promotion's pull request: answered there, once, with a link to the issue it belongs on.

Three ways to write on a PR reach the bot: a conversation comment (``issue_comment``), a review
(``pull_request_review: submitted``, "Request changes" with `/request-changes` as its body) and a line comment
(``pull_request_review_comment: created``). Each is answered alike; none decides anything.
"""

from __future__ import annotations

import re

from bot.events.promotion import Result
from bot.forge import markers
from bot.forge.state_file import StateError
from bot.github import commands
from bot.github.client import GitHub, IssueInfo, carries
from bot.github.errors import GitHubError
from bot.github.records import Comment
from bot.github.state import decode_state


def on_pull_request(session, event, pull: IssueInfo) -> Result:
    """A command in a PR conversation comment (``comments.created`` routes it here)."""
    comment = event.comment
    return _answer(session, pull, event.sender, comment.body, markers.reply(comment.id), "comment")


def review_submitted(session, event) -> Result:
    """A review whose body is a command: people review on the PR, so "Request changes" is where they type
    `/request-changes`; left unanswered, the review would stand on the PR while the gate passed over it."""
    review = event.review
    marker = markers.reply_to_review(review.id)
    return _answer(session, _pull(event), event.sender, review.body, marker, "review", _head(event))


def line_comment_created(session, event) -> Result:
    """A line comment whose body is a command (`/request-changes` about that line)."""
    comment = event.comment
    marker = markers.reply_to_line(comment.id)
    return _answer(session, _pull(event), event.sender, comment.body, marker, "comment", _head(event))


def _answer(
    session, pull: IssueInfo, sender, body: str | None, marker: str, what: str, head: tuple[str, str] | None = None
) -> Result:
    """A command on a promotion's PR decides nothing: it is answered there, once, with a link to the issue.

    People review on the PR, so that is where they type `/approve`; silence would leave them waiting for a
    decision nobody recorded. The PR is the bot's (``_bots_pull``), names its issue (``Refs #N``) and is that
    promotion's own (``_promotions_own``); no other PR is answered, nor a bot's text (the bot's own review among
    them), nor text without a command. ``head``: the PR's head branch and repository, when the payload names them.
    """
    if str(sender.type or "") == "Bot" or sender.login.lower() in session.client.bot_logins:
        return Result(f"ignored: a bot's pull request {what}")
    try:
        command = commands.parse(body or "")
    except commands.CommandError:
        command = None
    refs = re.search(r"^Refs #([1-9][0-9]*)$", pull.body, re.M)
    if command is None or refs is None or not _bots_pull(session, pull):
        return Result(f"ignored: a pull request {what}")
    number = refs.group(1)
    if not _promotions_own(session.client, pull, int(number), head):
        return Result(f"ignored: a pull request {what} of no promotion")
    url = f"{session.env.server_url.rstrip('/')}/{session.env.repository}/issues/{number}"
    session.client.upsert_comment(
        pull.number,
        marker,
        f"@{sender.login} `/{command.name}` was not applied: commands and gate labels count only on the promotion "
        f"issue, [#{number}]({url}). Comment it there (the issue holds the full report and the status).",
    )
    return Result(f"answered: a command in a pull request {what}", notes=[f"decisions belong on #{number}"])


def _bots_pull(session, pull: IssueInfo) -> bool:
    """Whether the bot opened ``pull``: its author is the bot (``is_mine``) or a GitHub App's ``[bot]`` account.

    The `pr-reply` job answers with ``GITHUB_TOKEN`` (it holds no secret, so no App token), and writes as
    github-actions[bot]: an App the `advance` job writes as (docs/github-setup.md section 3, where `bot_logins`
    needs no change) is neither that account nor listed, and every review and line comment on its PR went
    unanswered. A ``[bot]`` account is an App the repository's admins installed (no person can open a PR as one),
    and the PR also carries the `promotion` label and names its issue; the answer is only a link to that issue.
    Any App may open a PR whose body has a `Refs #N` line (dependabot, renovate), so this only sorts out, with no
    call, the PRs no App opened; ``_promotions_own`` says whether it is the promotion's."""
    author = (pull.author or "").lower()
    return author.endswith("[bot]") or session.client.is_mine(author)


def _promotions_own(client: GitHub, pull: IssueInfo, issue: int, head: tuple[str, str] | None) -> bool:
    """Whether ``pull`` is the PR promotion ``issue`` opened: the issue's status comment, written by the account
    that opened the PR, holds a state the bot saved whose branch is the PR's head.

    Stage 7 records no PR number: the bot's PR is the one on the promotion branch (``GitHubForge._find_pull``),
    and the state records that branch. The payload of a review or a line comment names the head (no call); a
    conversation comment's does not, so the PR the bot finds on that branch must be this one (one call). The
    status comment is matched by its author, not by ``is_mine``: the `pr-reply` job writes as
    github-actions[bot], and the comment and the PR are an App's when the `advance` job writes with one; another
    App cannot write a comment as that App. Costs: the issue's comments (one call), who last saved the status
    comment (``GitHub.last_editor``: a GraphQL call once the bot has saved it again), and the head (above).

    A status comment a person edited last is not vouched for (``bot.github.state.trusted``): its branch could
    name any PR, so the PR is not answered, whoever opened it (the issue says why the promotion stopped). An
    issue that does not exist, holds no state, or holds one this bot cannot read, is no promotion: not answered.
    """
    author = (pull.author or "").lower()
    try:
        comments = client.comments(issue)
    except GitHubError as exc:
        if exc.status in (404, 410):  # no such issue, or deleted: a `Refs #N` naming nothing
            return False
        raise
    status = next((c for c in comments if carries(c.body, markers.STATUS) and _same(client, c.login, author)), None)
    if status is None:
        return False
    try:
        state = decode_state(status.body)
    except StateError:  # damaged, or saved by a newer bot (NewerState)
        return False
    if state is None or not _saved_by(client, status, author):
        return False
    if head is not None:
        branch, repository = head
        return branch == state.branch and repository.lower() == client.repository.lower()
    found = client.find_pull(state.branch)
    return found is not None and found.number == pull.number


def _same(client: GitHub, login: str, author: str) -> bool:
    """``login`` wrote as the PR's ``author``: the same account, or both the bot's (``bot_logins``)."""
    low = (login or "").lower()
    return low == author or (client.is_mine(low) and client.is_mine(author))


def _saved_by(client: GitHub, status: Comment, author: str) -> bool:
    """The status comment was last saved by the account that opened the PR (``trusted``'s rule, the bot being
    that account); not when it changed while it was read."""
    editor = client.last_editor(status)
    if editor is None:
        return True
    if editor.updated_at is not None and status.updated_at is not None and editor.updated_at > status.updated_at:
        return False
    return _same(client, editor.login, author)


def _head(event) -> tuple[str, str] | None:
    """The head branch and repository of a review's or line comment's PR, as its payload names them; None when it
    does not (a deleted fork), and the PR the bot finds on the promotion branch is compared instead."""
    head = event.pull_request.head
    repo = getattr(head, "repo", None)
    if not head.ref or repo is None:
        return None
    return head.ref, repo.full_name


def _pull(event) -> IssueInfo:
    """The pull request of a review or line-comment event, as the bot reads issues (its payload, no call)."""
    raw = event.pull_request
    return IssueInfo(
        number=raw.number,
        title=raw.title or "",
        body=raw.body or "",
        author=raw.user.login if raw.user else "",
        labels=frozenset(label.name for label in (raw.labels or []) if label is not None),
        state=str(raw.state or "open"),
        is_pull_request=True,
    )
