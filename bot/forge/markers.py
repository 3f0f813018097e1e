"""The hidden markers on the bot's comments and issues, built here and only here.

Every bot comment carries one (``<!-- marker -->``, written by the forge) so a later run finds it and updates it
instead of adding another; the bot also reads them to decide (``bot.events.comments.catch_up`` takes a reply's
marker as "this command was answered"). A writer and a reader that spelled a marker each on its own would drift
apart silently, so both call these builders (tests/forge/test_markers.py holds every other module to it). The
texts are byte for byte those that existing issues carry: changing one orphans every comment written with it.
"""

from __future__ import annotations

#: The name every marker starts with; ``bot.github.sanitize`` refuses it in text people wrote.
BRAND = "promotion-bot"
_PREFIX = f"{BRAND}:"

#: The sticky status comment on the promotion issue: a checklist for people (and, on GitHub, the state).
STATUS = f"{_PREFIX}status"
#: The state a GitHub status comment hides (``bot.github.state``), then a space and its base64 data.
STATE = f"{_PREFIX}state v1"
#: The one comment that says what the request needs fixed (updated, never repeated).
NEEDS_INFO = f"{_PREFIX}needs-info"
#: The one comment that says the bot's install lacks its data (updated, never repeated).
NOT_INSTALLED = f"{_PREFIX}not-installed"


def review(gate: int) -> str:
    """The sticky comment holding a gate's latest review report."""
    return f"{_PREFIX}review-gate-{gate}"


def notice(key: str) -> str:
    """A short reply to one event, found again by its key, so a replay updates it instead of repeating it."""
    return f"{_PREFIX}notice:{key}"


def reply_key(comment_id: int) -> str:
    """The notice key of the bot's answer to a person's comment (``notice(reply_key(id))``)."""
    return f"reply-{comment_id}"


def reply(comment_id: int) -> str:
    """The marker of the bot's answer to a person's comment: its presence means the comment was answered."""
    return notice(reply_key(comment_id))


def reply_to_review(review_id: int) -> str:
    """The marker of the bot's answer to a person's review of its PR (reviews are numbered apart from comments)."""
    return notice(f"reply-review-{review_id}")


def reply_to_line(comment_id: int) -> str:
    """The marker of the bot's answer to a person's line comment on its PR (numbered apart from comments)."""
    return notice(f"reply-line-{comment_id}")


#: The notice a state the bot did not save gets (one per issue: a later event updates it, never repeats it).
FOREIGN_EDIT = notice("foreign-edit")
#: The notice a state saved by a newer bot gets (one per issue, updated).
NEWER_STATE = notice("newer-state")
#: The notice a state holding an approval GitHub's record does not show gets (one per issue, updated).
UNVOUCHED = notice("unvouched-approval")


def pr_closed(number: int, at: str) -> str:
    """The notice that a person closed the promotion's PR (``at``: when, "" if unknown) and the bot reopened it."""
    return notice(f"pr-closed-{number}-{at or 'unknown'}")


def feedback(request_id: str, hypothesis_id: str) -> str:
    """The feedback issue for BLIS about one refuted hypothesis of a request (one per hypothesis, found again)."""
    return f"{_PREFIX}feedback:{request_id}:{hypothesis_id}"
