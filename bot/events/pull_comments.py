"""A slash command on a promotion's pull request: answered there, once, with a link to the issue it belongs on.

Three ways to write on a PR reach the bot: a conversation comment (``issue_comment``), a review
(``pull_request_review: submitted``, "Request changes" with `/request-changes` as its body) and a line comment
(``pull_request_review_comment: created``). Each is answered alike; none decides anything.
"""

from __future__ import annotations

import re

from bot.events.promotion import Result
from bot.forge import markers
from bot.github import commands
from bot.github.client import IssueInfo


def on_pull_request(session, event, pull: IssueInfo) -> Result:
    """A command in a PR conversation comment (``comments.created`` routes it here)."""
    comment = event.comment
    return _answer(session, pull, event.sender, comment.body, markers.reply(comment.id), "comment")


def review_submitted(session, event) -> Result:
    """A review whose body is a command: people review on the PR, so "Request changes" is where they type
    `/request-changes`; left unanswered, the review would stand on the PR while the gate passed over it."""
    review = event.review
    return _answer(session, _pull(event), event.sender, review.body, markers.reply_to_review(review.id), "review")


def line_comment_created(session, event) -> Result:
    """A line comment whose body is a command (`/request-changes` about that line)."""
    comment = event.comment
    return _answer(session, _pull(event), event.sender, comment.body, markers.reply_to_line(comment.id), "comment")


def _answer(session, pull: IssueInfo, sender, body: str | None, marker: str, what: str) -> Result:
    """A command on a promotion's PR decides nothing: it is answered there, once, with a link to the issue.

    People review on the PR, so that is where they type `/approve`; silence would leave them waiting for a
    decision nobody recorded. The PR is the bot's (``_bots_pull``) and names its issue (``Refs #N``); no other PR
    is answered, nor a bot's text (the bot's own review among them), nor text without a command.
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
    and the PR also carries the `promotion` label and names its issue; the answer is only a link to that issue."""
    author = (pull.author or "").lower()
    return author.endswith("[bot]") or session.client.is_mine(author)


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
