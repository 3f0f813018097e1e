"""`issues` events: a promotion is filed, edited, labelled with a gate approval, or closed."""

from __future__ import annotations

from bot import pipeline
from bot.events import benchmark, lost_state
from bot.events.promotion import NeedsInfo, Result, needs_fixing
from bot.events.stale import written_before
from bot.github.client import IssueInfo
from bot.github.labels import Label, open_gate_approval
from bot.model import DecidedVia, Decision, PipelineState, Status


def _issue(event) -> IssueInfo:
    raw = event.issue
    return IssueInfo(
        number=raw.number,
        title=raw.title or "",
        body=raw.body or "",
        author=raw.user.login if raw.user else "",
        labels=frozenset(label.name for label in (raw.labels or []) if label is not None),
        state=str(raw.state or "open"),
        is_pull_request=bool(getattr(raw, "pull_request", None)),  # githubkit: UNSET when absent (falsy)
    )


def opened(session, event) -> Result:
    promotion = session.promotion(_issue(event))
    if promotion is None:
        return Result("ignored: not a promotion issue")
    try:
        promotion.request()
    except NeedsInfo as exc:
        return promotion.needs_info(exc.problems)
    promotion.clear_needs_info()
    return promotion.advance()


def edited(session, event) -> Result:
    """An edited request is read again; a change redoes the stages that read it (``Runner.restart``), and says so."""
    promotion = session.promotion(_issue(event))
    if promotion is None:
        return Result("ignored: not a promotion issue")
    try:
        request = promotion.request()
    except NeedsInfo as exc:
        return promotion.needs_info(exc.problems)
    promotion.clear_needs_info()
    from bot.events.comments import catch_up

    catch_up(session, promotion)  # commands written before the edit, whose runs it replaced, come first
    state = promotion.load()
    if state is not None and state.request_fingerprint != request.fingerprint():
        if state.status in (Status.DONE, Status.REJECTED):
            promotion.notice(
                f"edit-{session.env.event_id}",
                f"This promotion is {state.status.value}; the edit changes nothing. File a new issue to promote "
                "the changed request.",
            )
            return Result("ignored: finished promotion", state)
        promotion.restart(state, actor=event.sender.login, why=f"@{event.sender.login} edited the issue")
    return promotion.advance()


def labeled(session, event) -> Result:
    """`gate-N-approved` passes gate N, if an authorized person applied it while gate N is open."""
    gate = Label.approval_gate(event.label.name if event.label else "")
    issue = _issue(event)
    promotion = session.promotion(issue)
    if promotion is None:
        return Result("ignored: not a promotion issue")
    from bot.events.comments import catch_up

    catch_up(session, promotion)  # a person's command whose run this label's run replaced in the queue, first
    if gate is None:  # this run may have displaced the bot's continuation in the issue's group, like a comment's
        return promotion.heal(Result("ignored: not a gate label"))
    label = str(Label.approved(gate))
    fresh = promotion.current_issue()  # the payload is a snapshot: the label may be gone by now
    if label not in fresh.labels:
        state = promotion.load()
        if state is None or promotion.handled(state) or _approved(state, gate) or open_gate_approval(state) == label:
            return promotion.heal(Result("ignored: the label was already removed"))  # by the person who applied it
        # another run of the issue read the labels first and removed it: its gate is not open (cancelled, passed)
        return _refuse(promotion, label, event, f"gate {gate} is not open: {pipeline.describe(state)}", state, False)
    state = promotion.load()
    try:
        promotion.request()
    except NeedsInfo as exc:  # nothing can be decided (or saved) on a request the bot cannot read
        if promotion.handled(state) or (state is not None and _approved(state, gate)):
            return promotion.needs_info(exc.problems)  # decided before the issue broke: the label stays
        promotion.needs_info(exc.problems)
        return _refuse(promotion, label, event, f"{needs_fixing(exc.problems)}; apply it again once it is")
    if promotion.handled(state):
        return promotion.advance()
    if state is None:  # never started, or its status comment was deleted: the reply says which
        why = lost_state.missing(promotion) or f"this promotion has not started, so gate {gate} is not open"
        return _refuse(promotion, label, event, why)
    if _approved(state, gate):
        return promotion.heal(Result(f"gate {gate} is already approved", state))
    if state.open_gate == gate:  # a label applied before this review was shown (a queued or re-run run) is stale
        stale = written_before(state, gate, event.issue.updated_at, "apply the label again", issue.labels)
        if stale is not None:
            return _refuse(promotion, label, event, stale, state)
    sender = event.sender
    actor, verdict = session.authorize(sender.login, str(sender.type or "User"), "decide")
    if not verdict.allowed:
        return _refuse(promotion, label, event, verdict.why, state)
    try:
        new = promotion.apply_once(
            state,
            lambda s: pipeline.decide(
                s, gate, Decision.APPROVE, actor=actor.login, now=promotion.runner().clock(), via=DecidedVia.LABEL
            ),
            role=actor.role,
        )
    except pipeline.IllegalTransition as exc:
        return _refuse(promotion, label, event, str(exc), state)
    promotion.save(new)
    promotion.runner().publish_decision(state, new)  # the gate's review report says it was decided
    return promotion.advance()


def closed(session, event) -> Result:
    """Closing the issue cancels the promotion, so it needs what `/cancel` needs (the one rule, ``authorize``).

    Anyone else's close is undone as their gate label would be: the issue is reopened, with a comment saying
    why. A `/retry` from someone who may retry continues a cancelled promotion and reopens the issue (comments.py).
    """
    issue = _issue(event)
    promotion = session.promotion(issue)
    if promotion is None:
        return Result("ignored: not a promotion issue")
    state = promotion.load()
    if state is None or state.status in (Status.DONE, Status.REJECTED, Status.CANCELLED):
        return Result("nothing to cancel", state)
    if promotion.handled(state):
        return Result("already handled", state)  # a re-run: the close was decided
    sender = event.sender
    actor, verdict = session.authorize(sender.login, str(sender.type or "User"), "cancel", issue_author=issue.author)
    if not verdict.allowed:
        session.client.reopen_issue(issue.number)
        promotion.notice(
            f"close-{session.env.event_id}",
            f"@{sender.login} the issue was reopened: closing it cancels the promotion, and {verdict.why}.",
        )
        promotion.refused(state)
        return promotion.heal(Result("refused close", state, notes=[verdict.why]))
    now = promotion.runner().clock()
    state = promotion.apply_once(
        state, lambda s: pipeline.cancel(s, actor=actor.login, now=now, reason="issue closed"), role=actor.role
    )
    state, said = benchmark.stop(session.client, state, now=now, actor=actor.login)  # its GPU run stops too
    if said:
        promotion.notice(
            f"close-{session.env.event_id}", f"@{sender.login} closing the issue cancelled the promotion. {said}"
        )
    promotion.save(state)
    promotion.sync_labels(state)
    promotion.runner().close_if_stopped(state)  # the draft PR must not look alive, nor promise stage 7
    return Result("cancelled", state)


def reopened(session, event) -> Result:
    """Reopening an issue whose close cancelled the promotion does not continue it (a `/retry` does, from someone
    who may retry: the one rule, ``authorize``); the person who reopened it is told so, once per event."""
    issue = _issue(event)
    promotion = session.promotion(issue)
    if promotion is None:
        return Result("ignored: not a promotion issue")
    state = promotion.load()
    if state is None or state.status is not Status.CANCELLED:
        return Result("ignored: nothing was cancelled", state)
    promotion.notice(
        f"reopen-{session.env.event_id}",
        f"@{event.sender.login} reopening the issue does not continue the promotion: it stays cancelled "
        f"({pipeline.describe(state)}). Comment `/retry` to continue it from where it stopped.",
    )
    return Result("reopened: told how to continue", state)


def _approved(state: PipelineState, gate: int) -> bool:
    return any(d.gate == gate and d.decision is Decision.APPROVE for d in state.decisions) and state.open_gate != gate


def _refuse(promotion, label: str, event, why: str, state: PipelineState | None = None, remove: bool = True) -> Result:
    """Take the label off again (unless it is gone) and say why, once per event; the event is decided (a re-run
    changes nothing)."""
    if remove:
        promotion.client.remove_label(promotion.issue.number, label)
    promotion.notice(
        f"label-{promotion.env.event_id}",
        f"@{event.sender.login} the `{label}` label was removed: {why}.",
    )
    promotion.refused(state)
    return promotion.heal(Result(f"refused {label}", notes=[why]))
