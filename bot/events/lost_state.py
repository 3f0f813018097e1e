"""A promotion whose status comment is gone: the issue shows it under way, but the bot cannot read its state.

The status comment holds the promotion's whole state (``bot.github.state``). A person tidying the thread may
delete it; the labels, the review reports, the branch and the PR stay. The bot then finds no state, as on an
issue whose promotion never started, and a reply saying "this promotion has not started" contradicts everything
on the page, while a `/retry` quietly starts over from stage 1 and forgets the gates already passed. These say
what happened instead, and what `/retry` will do.
"""

from __future__ import annotations

from bot.forge import markers
from bot.github.client import carries
from bot.github.labels import Label
from bot.model import Decision, Stage

#: Labels only the bot sets, from a saved state (``labels.desired``); ``gate-N-approved`` is a person's too.
_BOT_ONLY = frozenset(
    {str(Label.stage(s)) for s in Stage}
    | {str(Label.pending(g)) for g in (1, 2, 3)}
    | {str(x) for x in (Label.FAILED, Label.CANCELLED, Label.DONE, Label.REJECTED)}
)


def was_started(promotion) -> bool:
    """The issue shows a promotion the bot ran: its labels, its review reports on the issue, or its PR.

    Called only when no state was found. The labels are the payload's and the comments were read to look for
    the state, so these cost nothing; the PR is looked up (one call) only when neither shows anything."""
    if _BOT_ONLY & {str(n) for n in promotion.issue.labels}:
        return True
    number = promotion.issue.number
    if any(promotion.client.bot_comment(number, markers.review(g)) is not None for g in (1, 2, 3)):
        return True
    return promotion.client.find_pull(promotion.request().branch) is not None


def missing(promotion) -> str | None:
    """Why nothing can be decided when the state is missing from an issue that shows a promotion under way
    (a clause, for "… was not applied: <why>."), or None when the promotion really has not started."""
    if not was_started(promotion):
        return None
    return (
        "the status comment that holds this promotion's state is missing (deleted?), so the bot cannot tell where "
        f"the promotion stands, although this issue shows it under way. {_not_listed(promotion)}"
        f"`/retry` starts it over from stage 1: {_what_retry_does(promotion)}"
    )


def _not_listed(promotion) -> str:
    """The other way a status comment goes missing: the bot wrote it as an account it no longer writes as (the
    action's `app-token:` added or removed mid-promotion). A bot account's status comment is named with the fix
    (that token again: listing the account in `bot_logins` would not do, as GitHub lets only a review's author
    edit it); a person's never is: it is not the bot's state."""
    client = promotion.client
    found = [
        c.login
        for c in client.comments(promotion.issue.number)
        if carries(c.body, markers.STATUS) and c.login.lower().endswith("[bot]") and not client.is_mine(c.login)
    ]
    if found:
        return (
            f"A status comment by `{found[-1]}` is here, but the bot writes as another account now: if the bot "
            "wrote it with another token (the action's `app-token:` added or removed since), give the action that "
            "token again and the promotion continues where it stood. "
        )
    return (
        "(A status comment the bot wrote as an account it no longer writes as, and that `bot_logins` in "
        f"{promotion.env.config_path} does not list, counts as missing too.) "
    )


def restarted(promotion) -> str:
    """What a `/retry` on an issue whose status comment is missing did."""
    does = _what_retry_does(promotion)
    return (
        "`/retry` started the promotion over from stage 1: the status comment that held its state is missing "
        f"(deleted?), so the bot could not continue where it stood. {does[:1].upper()}{does[1:]}."
    )


def foreign_edit(exc) -> str:
    """What the issue is told when its status comment was last saved by a person (``bot.github.state.ForeignEdit``):
    who, that the bot did nothing, and how to start over."""
    who = f"@{exc.editor}" if exc.editor else "an account since deleted"
    where = f"[status comment]({exc.comment.url})" if exc.comment.url else "status comment"
    return (
        f"The promotion bot did nothing on this event, and will do nothing until this is resolved: its {where} "
        f"was last edited by {who}, not by the bot. That comment holds the promotion's state (its gates' "
        "decisions and who made them), and the bot acts only on a state it saved itself, so a gate cannot be "
        "passed by editing it.\n\n"
        "To go on, an admin deletes the status comment and comments `/retry`: the promotion starts over from "
        "stage 1, the gates passed before are not remembered (each is reviewed and decided again), and its "
        "branch and pull request are kept."
    )


def unvouched(exc) -> str:
    """What the issue is told when the state holds a gate decision GitHub's own record does not show, or stands
    past a gate with no approval of it (``bot.github.state.Unvouched``): which gate, whom it names, what the
    record lacks, and the one fix: a maintainer's gate label when only approvals are unshown (each is confirmed
    by it), else starting over (a change request, a rejection or a passed gate no label confirms)."""
    from bot.escape import md
    from bot.github.state import DECIDED

    where = f"[status comment]({exc.comment.url})" if exc.comment.url else "status comment"
    lines = "\n".join(
        f"- gate {r.gate}, {DECIDED[r.decision]} by {md('@' + r.actor)}: {md(r.lacks)}."
        if r.decision is not None
        else f"- gate {r.gate}: the state has moved past it, but records no approval of it that still stands "
        f"({md(r.lacks)})."
        for r in exc.refused
    )
    said = (
        f"The promotion bot did nothing on this event, and will do nothing until this is resolved: its {where} "
        f"records gate decisions that GitHub's own record does not show, or passes a gate with none:\n\n{lines}\n\n"
        "That comment holds the promotion's state, and a workflow running with this repository's token can save "
        "it as the bot; a gate decision counts only from an authorized person's gate label or command that GitHub "
        "itself shows, and a gate is passed only by an approval, so the bot does not act on this state.\n\n"
    )
    if any(r.decision is not Decision.APPROVE for r in exc.refused):
        return said + (
            "To go on, an admin deletes the status comment and comments `/retry`: the promotion starts over from "
            "stage 1, the gates passed before are not remembered (each is reviewed and decided again), and its "
            "branch and pull request are kept."
        )
    labels = " and ".join(f"`gate-{g}-approved`" for g in sorted({r.gate for r in exc.refused}))
    return said + (
        f"If the approval is genuine, a maintainer who may decide gates applies {labels} to this issue again "
        "(remove it first if it is on): the bot then records the approval as theirs and goes on. Nothing else "
        "needs touching: the status comment, the branch and the pull request stay as they are."
    )


def _what_retry_does(promotion) -> str:
    branch = promotion.request().branch
    return (
        "the gates passed before are not remembered (each is reviewed and decided again), and the branch "
        f"`{branch}` and its pull request are kept, each stage writing its files there again as it reruns"
    )
