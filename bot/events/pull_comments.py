"""A slash command on a promotion's pull request: answered there, once, with a link to the issue it belongs on."""

from __future__ import annotations

import re

from bot.events.promotion import Result
from bot.forge import markers
from bot.github import commands
from bot.github.client import IssueInfo


def on_pull_request(session, event, pull: IssueInfo) -> Result:
    """A command on a promotion's PR decides nothing: it is answered there, once, with a link to the issue.

    People review on the PR, so that is where they type `/approve`; silence would leave them waiting for a
    decision nobody recorded. The PR is the bot's and names its issue (``Refs #N``); no other PR is answered.
    """
    comment, sender = event.comment, event.sender
    try:
        command = commands.parse(comment.body or "")
    except commands.CommandError:
        command = None
    refs = re.search(r"^Refs #([1-9][0-9]*)$", pull.body, re.M)
    if command is None or refs is None or not session.client.is_mine(pull.author):
        return Result("ignored: a pull request comment")
    number = refs.group(1)
    url = f"{session.env.server_url.rstrip('/')}/{session.env.repository}/issues/{number}"
    session.client.upsert_comment(
        pull.number,
        markers.reply(comment.id),
        f"@{sender.login} `/{command.name}` was not applied: commands and gate labels count only on the promotion "
        f"issue, [#{number}]({url}). Comment it there (the issue holds the full report and the status).",
    )
    return Result("answered: a command on the pull request", notes=[f"decisions belong on #{number}"])
