"""Who wrote a command's text: a command counts only as its author wrote it (or edited it themselves).

Any write collaborator may edit anyone's comment, and REST names only the author: a `/reject` turned into
`/approve` by someone the maintainers chose not to trust with gates would pass it in the author's name. GraphQL
names who saved a comment last (``GitHub.last_editor``); REST's whole-second timestamps cannot tell an edit made
in the second the comment was written, so the text itself (the event's payload against the comment now) says
whether it was edited, and a comment whose written text the run does not have (``comments.catch_up``) is asked
about."""

from __future__ import annotations

from datetime import datetime

from bot.github import commands
from bot.github.client import GitHubError
from bot.github.records import Comment


class EditedByAnother(Exception):
    """A command comment whose text was last saved by someone other than its author: it decides nothing."""

    def __init__(self, editor: str, *, again: bool = False, unnamed: bool = False):
        who = f"@{editor}" if editor else "an account since deleted"
        how = "was edited again while the bot read it" if again else f"was last edited by {who}, not by you"
        if unnamed:
            how = "reads otherwise than when it was written, and GitHub does not (yet) say who edited it"
        super().__init__(
            f"your comment {how}, so nothing in it was applied: a command counts only as its author wrote it. "
            "To decide, post the command again in a new comment (so does anyone else who wants to decide)."
        )
        self.editor = editor


def as_it_is_now(client, number: int, comment_id: int, login: str, written: str) -> commands.Command | None:
    """The command the comment holds now, None when it was deleted or no longer holds one; EditedByAnother when
    someone other than its author saved the text it holds now.

    The run may start long after the comment (queued behind the issue's other runs): a `/approve` deleted or
    corrected into `/request-changes` by then must not pass the gate, as a gate label removed by then does not.
    ``written``: the text the event's payload holds (as written); a comment that reads otherwise now was edited,
    whatever REST's timestamps show, and GraphQL is asked who saved it: only the author's own edit counts. One
    call for an edited comment, none for one never edited.
    """
    try:
        now = client.get_comment(number, comment_id)
    except GitHubError as exc:
        if exc.status == 404:
            return None
        raise
    if now.login.lower() != login.lower():
        return None
    author_edited(client, now, changed=(now.body or "") != written)
    return commands.parse(now.body or "")


def author_edited(client, comment: Comment, *, changed: bool | None) -> datetime | None:
    """When the comment's author last edited it (None: nobody edited it); EditedByAnother when someone else did,
    or when it was edited again while the bot read it.

    ``changed``: its text differs from the one written (GraphQL is asked), or None when the run does not have the
    text written (a command whose own run was dropped or deferred: GraphQL is asked too, one call); False: REST's
    timestamps decide whether to ask."""
    editor = client.last_editor(comment, ask=changed is not False)
    if editor is None:
        if changed:  # the text is not the one written, and GitHub names nobody who changed it
            raise EditedByAnother("", unnamed=True)
        return None
    if editor.updated_at is not None and comment.updated_at is not None and editor.updated_at > comment.updated_at:
        raise EditedByAnother(editor.login, again=True)
    if editor.login.lower() != comment.login.lower():
        raise EditedByAnother(editor.login)
    return comment.updated_at or comment.created_at
