"""`issues` events: a promotion is filed, edited, labelled with a gate approval, or closed."""

from __future__ import annotations

from bot import pipeline
from bot.events import benchmark, lost_state
from bot.events.issue_request import NeedsInfo
from bot.events.promotion import Result
from bot.events.request_texts import needs_fixing
from bot.events.stale import written_before
from bot.forge import markers
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
    issue = _issue(event)
    promotion = session.promotion(issue)
    if promotion is None:
        return Result("ignored: not a promotion issue")
    try:
        promotion.request()
    except NeedsInfo as exc:
        return promotion.needs_info(exc.problems)
    promotion.clear_needs_info()
    result = promotion.advance()
    filed_approvals(promotion, issue)
    return result


def filed_approvals(promotion, issue: IssueInfo) -> None:
    """Say why a gate's approval label the issue was filed with (``gh issue create -l``) is gone: no review
    existed to approve, so the run's labels (``sync_labels``) took it off. Its own run, queued behind this one
    (or dropped by the issue's group), would find it gone and say nothing; its author would believe the gate
    pre-approved. The reply is the one any refused label gets, once per label (``filed_key``)."""
    for name in sorted(issue.labels - promotion.issue.labels):
        gate = Label.approval_gate(name)
        if gate is not None:
            promotion.notice(
                filed_key(name),
                f"@{issue.author} the `{name}` label was removed: it was applied before gate {gate}'s review "
                "existed; apply it again once you have read the review.",
            )


def filed_key(label: str) -> str:
    return f"label-filed-{label}"


def _answered_when_filed(promotion, label: str, event) -> bool:
    """Whether the label of this event was one the issue was filed with, already answered by the opened run
    (``filed_approvals``): that reply was written after the label was applied."""
    said = promotion.client.bot_comment(promotion.issue.number, markers.notice(filed_key(label)))
    applied = event.issue.updated_at
    return said is not None and (applied is None or said.created_at is None or applied <= said.created_at)


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

    own = event.label.name if event.label else None  # this label is this run's to decide: not a dropped one
    catch_up(session, promotion, own_label=own)  # a person's command or label whose run this one replaced, first
    if gate is None:  # this run may have displaced the bot's continuation in the issue's group, like a comment's
        return promotion.heal(Result("ignored: not a gate label"))
    label = str(Label.approved(gate))
    fresh = promotion.current_issue()  # the payload is a snapshot: the label may be gone by now
    if label not in fresh.labels:
        state = promotion.load()
        if _answered_when_filed(promotion, label, event):
            return promotion.heal(Result("ignored: the label the issue was filed with was answered"))
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
    applied = _current_application(promotion, label, event, fresh)
    if applied is None:
        return promotion.heal(Result("ignored: the label was already removed"))  # since the labels were read
    login, user_type, written, delivery = applied
    promotion.delivery = delivery
    try:
        # a label applied before this review was shown (a queued or re-run run) is stale: its time says
        new, why = _decision(session, promotion, state, gate, login, user_type, written, issue.labels)
        if new is None:
            _removed(promotion, label, login, why, state)
        else:
            promotion.save(new)
            promotion.runner().publish_decision(state, new)  # the gate's review report says it was decided
    finally:
        promotion.delivery = session.env.event_id
    if new is None:
        return promotion.heal(Result(f"refused {label}", notes=[why]))
    return promotion.advance()


def _current_application(promotion, label: str, event, fresh: IssueInfo):
    """Who applied the label now on the issue, when, and the delivery to decide it under: (login, user type,
    time, delivery), or None when it was taken off since the labels were read.

    The run's own event says who applied the label then; by the time the run reads the issue, that person may have
    taken it off and someone else put it back (a queued or re-run run). Judging the label by the event's sender
    would pass the gate in the name of someone who withdrew. So when the issue changed after the event (its
    ``updated_at``), GitHub is asked who applied the label last (one call, as ``dropped_label`` asks), and a later
    application is decided as that one: its actor, its time, its event's id (``labeled-<id>``, decided once).
    An unchanged issue needs no call: the label on it is the event's."""
    sender = event.sender
    mine = (sender.login, str(sender.type or "User"), event.issue.updated_at, promotion.delivery)
    at = event.issue.updated_at
    if at is not None and fresh.updated_at is not None and fresh.updated_at <= at:
        return mine
    seen = promotion.client.label_event(fresh.number, label)
    if seen is None:
        return mine  # GitHub lists no label event: nothing says anyone else applied it
    if seen.event != "labeled":
        return None
    if at is not None and seen.at is not None and seen.at <= at and seen.login == sender.login:
        return mine  # the event's own application (GitHub's clock: the payload was stamped after it)
    return seen.login, seen.type, seen.at, f"labeled-{seen.id}"


def _decision(session, promotion, state, gate: int, login: str, user_type: str, written, labels):
    """(``state`` with gate ``gate`` approved by its label, None), or (None, why not): a label applied before the
    review now open was shown (``written_before``), by someone the one rule (``authorize``) refuses, or at a gate
    that is not open. The label's own run and a later one that decides it for a dropped run (``dropped_label``)
    judge it alike."""
    if state.open_gate == gate:
        stale = written_before(state, gate, written, "apply the label again", labels)
        if stale is not None:
            return None, stale
    actor, verdict = session.authorize(login, user_type, "decide")
    if not verdict.allowed:
        return None, verdict.why
    try:
        new = promotion.apply_once(
            state,
            lambda s: pipeline.decide(
                s, gate, Decision.APPROVE, actor=actor.login, now=promotion.runner().clock(), via=DecidedVia.LABEL
            ),
            role=actor.role,
        )
    except pipeline.IllegalTransition as exc:
        return None, str(exc)
    return new, None


def dropped_label(session, promotion, *, own: str | None = None) -> str | None:
    """Decide the open gate's approval label whose own run GitHub dropped, as that run would have; what it did.

    GitHub keeps one pending run per concurrency group, so another event of the issue queued right after a person
    applied `gate-N-approved` can cancel the label's run before it starts; ``sync_labels`` leaves that label to
    its run, so the gate would wait with it for good. A run that reads the state and finds the open gate's label
    on the issue (``own``: this run's own label, left to it) asks GitHub who applied it and when (one call, made
    only then: the issue's labels are in the payload) and judges it alike (``_decision``): a label applied
    before the review now open was shown, or by someone ``authorize`` refuses, is removed with the same reply.
    The decision is recorded under the label event's id (``labeled-<id>``), so it is decided once, and its audit
    says a later run decided it. Nothing is decided on a request the bot cannot read: the label waits for it.
    """
    state = promotion.load()
    label = open_gate_approval(state) if state is not None else None
    if state is None or label is None or label == own or label not in promotion.issue.labels:
        return None
    seen = promotion.client.label_event(promotion.issue.number, label)
    if seen is None or seen.event != "labeled":  # removed since: by its own run (refused), or by a person
        return None
    delivery = f"labeled-{seen.id}"
    if delivery in state.handled_events:
        return None
    try:
        promotion.request()
    except NeedsInfo:
        return None  # the run's own event says what to fix
    gate = state.open_gate
    promotion.delivery = delivery
    try:
        new, why = _decision(session, promotion, state, gate, seen.login, seen.type, seen.at, frozenset())
        if new is None:
            _removed(promotion, label, seen.login, why, state)
            return f"refused {label}, whose run was dropped: {why}"
        last = new.audit[-1]
        later = "decided by a later run of this issue: the label's own run was dropped"
        new.audit[-1] = last.model_copy(update={"detail": "; ".join(x for x in (last.detail, later) if x)})
        promotion.save(new)
        promotion.runner().publish_decision(state, new)
        promotion.notice(
            f"label-{delivery}",
            f"@{seen.login} `{label}` passed gate {gate}, decided by a later run of this issue: GitHub keeps one "
            "waiting run per issue, so a newer event replaced the one that would have decided your label.",
        )
    finally:
        promotion.delivery = session.env.event_id
    return f"decided {label}, whose run was dropped: gate {gate} approved by {seen.login}"


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
    _removed(promotion, label, event.sender.login, why, state, remove)
    return promotion.heal(Result(f"refused {label}", notes=[why]))


def _removed(promotion, label: str, login: str, why: str, state: PipelineState | None, remove: bool = True) -> None:
    """The label taken off (unless it is gone) with the reply saying why, keyed by the event it came with."""
    if remove:
        promotion.client.remove_label(promotion.issue.number, label)
    promotion.notice(f"label-{promotion.delivery}", f"@{login} the `{label}` label was removed: {why}.")
    promotion.refused(state)
