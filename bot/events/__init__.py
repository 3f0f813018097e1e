"""GitHub events, routed: (event, action) -> one handler each, in the style of python/bedevere.

``handle`` is the GitHub home's only entry into the engine. It parses the
payload with githubkit's typed webhook models, builds the REST client and
configuration once, and calls the handler the table names; anything not in the
table is logged and ignored. Handlers live in one module per event.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable

from bot.events.env import EventEnv
from bot.events.issue_request import is_promotion
from bot.events.promotion import Result
from bot.forge import markers
from bot.model import RequestError

#: (event name, action or None) -> "module:function". The only place that says what the bot reacts to.
ROUTES: dict[tuple[str, str | None], str] = {
    ("issues", "opened"): "bot.events.issues:opened",
    ("issues", "edited"): "bot.events.issues:edited",
    ("issues", "labeled"): "bot.events.issues:labeled",
    ("issues", "closed"): "bot.events.issues:closed",
    ("issues", "reopened"): "bot.events.issues:reopened",
    ("issue_comment", "created"): "bot.events.comments:created",
    ("pull_request_review", "submitted"): "bot.events.pull_comments:review_submitted",
    ("pull_request_review_comment", "created"): "bot.events.pull_comments:line_comment_created",
    ("workflow_dispatch", None): "bot.events.dispatch:dispatched",
}


class PayloadError(RequestError):
    """The event payload is not what GitHub sends for this event."""


def route(event_name: str, action: str | None) -> Callable | None:
    target = ROUTES.get((event_name, action)) or ROUTES.get((event_name, None))
    if target is None:
        return None
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def parse_payload(event_name: str, raw: dict):
    """The payload as githubkit's typed model (validated against GitHub's webhook schema)."""
    from githubkit.webhooks import parse_obj
    from pydantic import ValidationError

    try:
        return parse_obj(event_name, raw)
    except ValidationError as exc:
        raise PayloadError(
            f"the {event_name} payload does not match GitHub's webhook schema: {exc.errors()[0]['msg']}"
        ) from None
    except Exception as exc:  # githubkit's WebhookTypeNotFound for an unknown event name
        raise PayloadError(f"unknown event {event_name!r}: {exc}") from None


def handle(env: EventEnv, *, client_factory: Callable | None = None) -> Result:
    """Handle the event the job was started for."""
    try:
        raw = json.loads(env.event_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PayloadError(f"{env.event_path}: cannot read the event payload ({type(exc).__name__})") from None
    action = raw.get("action") if isinstance(raw, dict) else None
    handler = route(env.event_name, action if isinstance(action, str) else None)
    if handler is None:
        print(f"promote: ignoring {env.event_name}.{action}: not an event the promotion bot handles", file=sys.stderr)
        return Result("ignored")
    event = parse_payload(env.event_name, raw)
    from bot.events.session import Session
    from bot.forge.state_file import NewerState
    from bot.github.state import ForeignEdit, Unvouched

    session = Session.open(env, client_factory=client_factory)
    session.sent_by(event)
    not_installed(session, event)
    try:
        result = handler(session, event)
        if session.unrecorded is not None:  # unless a save of the handler's recorded them already
            from bot.events.comments import record_answered

            record_answered(session.unrecorded)
        result.waiting = result.waiting or session.waiting  # said in the job summary, not only in the log
        return result
    except ForeignEdit as exc:  # the status comment's state is a person's: act on none of it, say so once
        from bot.events.lost_state import foreign_edit

        session.client.upsert_comment(exc.issue, markers.FOREIGN_EDIT, foreign_edit(exc))
        return Result("refused: the status comment was not saved by the bot", notes=[str(exc)])
    except Unvouched as exc:  # an approval GitHub's record does not show: act on none of the state, say so once
        from bot.events.lost_state import unvouched

        session.client.upsert_comment(exc.issue, markers.UNVOUCHED, unvouched(exc))
        return Result("refused: the state holds an approval GitHub's record does not show", notes=[str(exc)])
    except NewerState as exc:  # a rollback of the workflow's bot: say so on the issue, once; change nothing
        if exc.issue is None:
            raise
        from bot.escape import md

        session.client.upsert_comment(
            exc.issue,
            markers.NEWER_STATE,
            f"The promotion bot did nothing on this event: {md(str(exc))}. The state is not damaged: do not delete "
            "the status comment. A maintainer points the workflow at that bot version or a newer one; then "
            "`/retry`, or doing again what was done here, continues the promotion.",
        )
        return Result("refused: the state was saved by a newer promotion bot", notes=[str(exc)])


def not_installed(session, event) -> None:
    """Stop here, before any work, when the bot's install lacks its data (``bot.home``): say so on the promotion
    issue the event is about, as the job's log is not where its people look, and fail the job (exit 2).

    Said once per issue (one comment, updated); nothing else is touched, so the event is handled as usual once
    the action is fixed and the run re-run (or the next comment, label or edit comes)."""
    from bot import PROJECT_ROOT
    from bot.home import problem

    said = problem(PROJECT_ROOT)
    if said is None:
        return
    issue = _event_issue(session, event)
    if issue is not None and is_promotion(issue):
        from bot.escape import md

        session.client.upsert_comment(
            issue.number,
            markers.NOT_INSTALLED,
            "The promotion bot cannot handle this issue: its installation in this repository's workflow is "
            f"incomplete. {md(said)}. A maintainer fixes the action (docs/github-setup.md, step 1) and re-runs "
            "the failed workflow run; nothing about this promotion was changed.",
        )
    raise RequestError(said)


def _event_issue(session, event):
    """The issue the event is about: the payload's (an issue or a comment on one), or the one a dispatch names."""
    if getattr(event, "issue", None) is not None:
        from bot.events.issues import _issue

        return _issue(event)
    number = str(dict(getattr(event, "inputs", None) or {}).get("issue", "")).strip()
    return session.client.issue(int(number)) if number.isdigit() and int(number) > 0 else None
