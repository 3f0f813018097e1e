"""`issue_comment` events: slash commands on a promotion issue, from people the one rule authorizes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from bot import pipeline
from bot.events import benchmark, lost_state
from bot.events.benchmark import benchmark_out
from bot.events.edits import EditedByAnother, as_it_is_now, author_edited
from bot.events.issue_request import NeedsInfo
from bot.events.issues import _issue, dropped_label
from bot.events.promotion import Promotion, Result
from bot.events.pull_comments import on_pull_request
from bot.events.request_texts import needs_fixing, waiting_line
from bot.events.retry import retry
from bot.events.stale import written_before
from bot.forge import markers
from bot.github import commands
from bot.github.authz import Actor
from bot.github.client import IssueInfo
from bot.github.commands import Name
from bot.github.labels import Label
from bot.model import Decision, PipelineState


@dataclass(frozen=True)
class Said:
    """A person's comment on the issue: the event's own, or one whose run GitHub dropped (``catch_up``)."""

    id: int
    body: str
    login: str
    type: str
    written: datetime | None  # when it was written, by GitHub's clock


def created(session, event) -> Result:
    comment, sender = event.comment, event.sender
    issue = _issue(event)
    if str(sender.type or "") == "Bot" or sender.login.lower() in session.client.bot_logins:
        # Our own comments, and other bots', never act; but the run may have displaced the bot's continuation in
        # the issue's group (a welcome or CI bot's comment, ours with an App token), so it continues what is due.
        promotion = None if issue.is_pull_request else session.promotion(issue)
        ignored = Result("ignored: a bot's comment")
        return ignored if promotion is None else promotion.heal(ignored)
    if issue.is_pull_request:
        return on_pull_request(session, event, issue)
    said = Said(
        comment.id, comment.body or "", sender.login, str(sender.type or "User"), getattr(comment, "created_at", None)
    )
    promotion = session.promotion(issue)
    late = catch_up(session, promotion, own=said) if promotion is not None else []
    if promotion is not None and promotion.store.held is not None and _is_command(said.body):
        # older commands were left for a later run (``catch_up``'s bound): this one waits its turn behind them
        return Result("left for a later run: older commands come first", notes=late)
    result = answer(session, promotion, issue, said)
    result.notes = [*late, *result.notes]
    return result


def answer(session, promotion, issue: IssueInfo, said: Said, *, late: bool = False, deferred: bool = False) -> Result:
    """Act on one person's comment: a command is applied or answered, once; anything else may continue what is due.

    ``late``: the comment's own run was dropped and this run answers it (``catch_up``): it then neither continues
    the promotion (the run's own event does, after it) nor trusts labels of the time it was written (unknown);
    ``deferred``: a late one this run answers because an earlier run left it (the bound per run), not GitHub.
    What a command does is its handler's (``HANDLERS``); the checks every command meets are here."""
    try:
        command = commands.parse(said.body)
    except commands.CommandError as exc:
        if promotion is None:
            return Result("malformed command", notes=[str(exc)])
        promotion.notice(markers.reply_key(said.id), f"@{said.login} {exc}")
        return _then(promotion, Result("malformed command", notes=[str(exc)]), late)
    if promotion is None:
        return Result("ignored: no command" if command is None else "ignored: not a promotion issue")
    if command is None:
        return _then(promotion, Result("ignored: no command"), late)  # "thanks!" may be what cancelled the bot's run

    def reply(text: str) -> None:
        promotion.notice(markers.reply_key(said.id), f"@{said.login} {text}")

    try:
        promotion.request()
    except NeedsInfo as exc:
        if command.name is Name.CANCEL:
            return _cancel_unreadable(session, promotion, issue, said, command.argument, exc.problems, reply)
        if not command.name.read_only and not promotion.handled(promotion.load()):
            reply(f"`/{command.name}` was not applied: {needs_fixing(exc.problems)}; comment it again once it is.")
        return promotion.needs_info(exc.problems)
    state = promotion.load()
    if promotion.handled(state) or answered(state, said.id):  # a re-run, or a later run answered it
        return Result("already answered", state) if late else promotion.advance()  # what follows may be left
    promotion.store.answered = max(promotion.store.answered, said.id)  # the save of its outcome records it
    asked = Asked(promotion, issue, said, command, state, late, reply)
    if command.name.read_only:  # changes nothing: anyone may give it, as it was written
        return HANDLERS[command.name](asked)
    if not late:  # a late one's text was read just now (``catch_up``)
        try:
            command = as_it_is_now(session.client, issue.number, said.id, said.login, said.body)
        except commands.CommandError as exc:
            reply(str(exc))
            promotion.refused(state)
            return promotion.heal(Result("malformed command", state, notes=[str(exc)]))
        except EditedByAnother as exc:
            reply(str(exc))
            promotion.refused(state)
            return promotion.heal(Result("ignored: the command was edited by someone else", state, notes=[str(exc)]))
        if command is None or command.name.read_only:
            return promotion.heal(Result("ignored: the command was deleted or edited away", state))
    actor, verdict = session.authorize(said.login, said.type, command.name.action, issue_author=issue.author)
    if not verdict.allowed:
        reply(f"`/{command.name}` was not applied: {verdict.why}.")
        promotion.refused(state)
        return _then(promotion, Result(f"refused /{command.name}", state, notes=[verdict.why]), late)
    if state is None:
        return _without_state(promotion, command.name, reply)
    now = promotion.runner().clock()
    asked = replace(asked, command=command, actor=actor, now=now)
    try:
        handled = HANDLERS[command.name](asked)
        if isinstance(handled, Result):
            return handled
        if handled.base is not None:
            state = handled.base
        new = promotion.apply_once(state, handled.apply, role=actor.role)
    except pipeline.IllegalTransition as exc:
        reply(f"`/{command.name}` was not applied: {exc}.")
        promotion.refused(state)
        return _then(promotion, Result(f"refused /{command.name}", state, notes=[str(exc)]), late)
    if new is state:  # changed nothing (a `/cancel` of a cancelled promotion): answered once, recorded
        return _no_change(promotion, asked, handled, state)
    news = ""
    if new is not state and handled.after is not None:
        new, news = handled.after(state, new)
    if news and (handled.said is None or late):
        reply(news)
    reopened = ""
    if new is not state and issue.state == "closed" and handled.reopens:
        reopened = _reopen(promotion, new, command.name, reply)  # before the save: a failed reopen is applied again
    if new is not state:
        promotion.save(new)
        promotion.runner().publish_decision(state, new)  # the gate's review report says it was decided
        if late:
            reply(f"`/{command.name}` was applied by a later run{_LATE_WHY[deferred]}")
    if handled.stops:
        promotion.sync_labels(new)
        promotion.runner().close_if_stopped(new)  # the draft PR must not look alive, nor promise stage 7
        return Result("cancelled", new)
    if late:
        return Result(f"applied /{command.name}", new)
    result = promotion.advance()
    if handled.said is not None:  # one reply per comment: what it did comes after the reopen it said at once
        reply(" ".join(x for x in (reopened, news, handled.said(state, result)) if x))
    return result


#: Why a late command's reply comes from a later run (``answer``'s ``deferred``): GitHub replaced its run, or an
#: earlier run of the bot left it for this one (``LATE_ACTS``).
_LATE_WHY = {
    False: " of this issue: GitHub keeps one waiting run per issue, so a newer event replaced the one that would "
    "have answered your comment.",
    True: ": older commands on this issue were answered first (at most one per run).",
}


def _no_change(promotion, asked: Asked, handled: Move, state: PipelineState) -> Result:
    """A command that changes nothing is answered as such and recorded (``answered_comment``) on its first run.

    Left unrecorded, every later run took it for a missed command (``catch_up``), acted on it again and spent its
    bound on it, pushing an approver's command behind it. A `/retry` of a running promotion in its own run starts
    the due step again (``advance``, whose saves record it)."""
    name = asked.command.name
    if not handled.stops and not asked.late:
        result = promotion.advance()
        if handled.said is not None:
            asked.reply(handled.said(state, result))
        return result
    asked.reply(f"{changes_nothing(name, None, state) or f'`/{name}` changed nothing: {pipeline.describe(state)}'}.")
    promotion.refused(state)
    if handled.stops and not asked.late:  # its own run settles the labels and the draft PR, as a cancel's does
        promotion.sync_labels(state)
        promotion.runner().close_if_stopped(state)
    return Result(f"answered /{name}: it changed nothing", state)


def changes_nothing(name: Name, argument: str | None, state: PipelineState | None) -> str | None:
    """Why a command its writer may give would change nothing now, known without a call; None otherwise."""
    if state is None:
        return None
    if name is Name.CANCEL and state.status.value == "cancelled":
        return "`/cancel` changed nothing: the promotion is already cancelled (`/retry` continues it)"
    if name is Name.RETRY and not argument and state.status.value == "running" and not benchmark_out(state):
        return f"`/retry` changed nothing: {pipeline.describe(state)}, and the bot continues it on its own"
    return None


@dataclass(frozen=True)
class Asked:
    """A command being answered: what its handler (``HANDLERS``) acts on."""

    promotion: Promotion
    issue: IssueInfo
    said: Said
    command: commands.Command
    state: PipelineState | None  # None only for a read-only command: any other is answered by ``_without_state``
    late: bool
    reply: Callable[[str], None]
    actor: Actor | None = None  # the person, authorized, with their role; None for a read-only command
    now: datetime | None = None


@dataclass(frozen=True)
class Move:
    """What a command that changes the promotion does: ``apply`` (given to ``Promotion.apply_once``) and what goes
    with it."""

    apply: Callable[[PipelineState], PipelineState]
    #: the state ``apply`` starts from, when the handler moved it first (a GPU run that ended fails stage 5)
    base: PipelineState | None = None
    #: on a change, before it is saved: (the state to save, news for the reply) from (the state before, after)
    after: Callable[[PipelineState, PipelineState], tuple[PipelineState, str]] | None = None
    #: a change continues a promotion that closing its issue cancelled, so the issue is reopened
    reopens: bool = False
    #: the promotion is cancelled: its labels and draft PR are settled now, and nothing is continued
    stops: bool = False
    #: the reply once the promotion went on (from the state before the command and what ``advance`` did), with the
    #: news of ``after`` before it: a command the status comment alone would not show was done (`/retry`)
    said: Callable[[PipelineState, Result], str] | None = None


def _status(asked: Asked) -> Result:
    """`/status`: the checklist re-rendered (with this run's links), or why it cannot be shown."""
    promotion, state = asked.promotion, asked.state
    if state is None:  # only a missing state is "lost"; an ended benchmark run was saved just now
        if lost := lost_state.missing(promotion):
            asked.reply(f"the checklist cannot be shown: {lost}.")
    elif promotion.benchmark_ended(state) is state:
        promotion.save(state)  # re-render the checklist with this run's links
    return _then(promotion, Result("status refreshed", state), asked.late)


_DECISIONS = {
    Name.APPROVE: Decision.APPROVE,
    Name.REQUEST_CHANGES: Decision.REQUEST_CHANGES,
    Name.REJECT: Decision.REJECT,
}


def _decide(asked: Asked) -> Move | Result:
    """`/approve`, `/request-changes`, `/reject`: a decision of the gate open now, made while it was the open one."""
    promotion, state, command, said, late = asked.promotion, asked.state, asked.command, asked.said, asked.late
    if state.open_gate is None:
        raise pipeline.IllegalTransition(f"no gate is open: {pipeline.describe(state)}")
    gate = state.open_gate
    if command.argument and command.name is Name.APPROVE and int(command.argument) != gate:
        raise pipeline.IllegalTransition(f"gate {command.argument} is not open: {pipeline.describe(state)}")
    # the gate the issue showed waiting when the comment was made (unknown for a late one: its time is)
    shown = None if late else Label.pending_gate(asked.issue.labels)
    if shown is not None and shown != gate:
        raise pipeline.IllegalTransition(
            f"it was written while gate {shown} was waiting, and a decision counts only for the gate it was "
            f"made at; gate {gate} is open now: comment again to decide it"
        )
    labels = frozenset() if late else asked.issue.labels
    stale = written_before(state, gate, said.written, f"comment `/{command.name}` again", labels)
    if stale is not None:
        raise pipeline.IllegalTransition(stale)
    decision = _DECISIONS[command.name]
    reason = command.argument if decision is not Decision.APPROVE else (command.note or None)
    if decision is Decision.REQUEST_CHANGES:  # one that would reopen the gate unchanged is answered now
        why = _over_budget(state, gate, reason or "") or _unchanged(promotion, state, gate, reason)
        if why is not None:
            asked.reply(f"`/request-changes` was not applied: {why}.")
            promotion.refused(state)
            return _then(promotion, Result("refused /request-changes", state, notes=[why]), late)
    login, now = asked.actor.login, asked.now

    def move(s: PipelineState) -> PipelineState:  # the comment is recorded: a later load checks it (``vouch``)
        new = pipeline.decide(s, gate, decision, actor=login, now=now, reason=reason, written=said.written)
        new.decisions[-1] = new.decisions[-1].model_copy(update={"comment": said.id})
        return new

    return Move(move)


def _adopt_branch(asked: Asked) -> Move:
    """`/adopt-branch`: build on the commits a person added to the promotion branch, after checking them."""
    runner, login, now = asked.promotion.runner(), asked.actor.login, asked.now

    def move(s):
        adopted = runner.adopted(s, actor=login)
        if adopted is s:
            raise pipeline.IllegalTransition("the promotion branch is where the bot left it: nothing to adopt")
        return pipeline.retry(adopted, actor=login, now=now) if adopted.status.value == "failed" else adopted

    return Move(move, reopens=True)


def _cancel(asked: Asked) -> Move:
    """`/cancel [reason]`: the promotion stops, and its GPU benchmark run with it."""
    promotion, login, now, reason = asked.promotion, asked.actor.login, asked.now, asked.command.argument
    return Move(
        lambda s: pipeline.cancel(s, actor=login, now=now, reason=reason),
        after=lambda _old, new: benchmark.stop(promotion.client, new, now=now, actor=login),
        stops=True,
    )


#: Each command's handler: a read-only one answers (a Result); any other returns its Move, or the Result of
#: answering without one. Every ``commands.Name`` has one (tests/github/test_command_table.py): a command without
#: a handler is a KeyError, never another command's action.
HANDLERS: dict[Name, Callable[[Asked], Move | Result]] = {
    Name.APPROVE: _decide,
    Name.REQUEST_CHANGES: _decide,
    Name.REJECT: _decide,
    Name.RETRY: retry,
    Name.STATUS: _status,
    Name.CANCEL: _cancel,
    Name.ADOPT_BRANCH: _adopt_branch,
}


def _cancel_unreadable(session, promotion, issue: IssueInfo, said: Said, reason, problems: list[str], reply) -> Result:
    """`/cancel` while the issue needs information: nothing else is decided on a request the bot cannot read, but
    the promotion and the GPU benchmark it keeps running (``benchmark.kept_running``) can be stopped.

    The state is saved under the checklist shown (rendering one needs the request); the draft PR is closed by the
    next run that can read the request, as a cancel's own run would."""
    from datetime import UTC, datetime

    state = promotion.load()
    over = state is None or state.status.value in ("done", "rejected", "cancelled")
    if over or promotion.handled(state) or answered(state, said.id):
        return promotion.needs_info(problems)
    actor, verdict = session.authorize(said.login, said.type, Name.CANCEL.action, issue_author=issue.author)
    if not verdict.allowed:
        reply(f"`/cancel` was not applied: {verdict.why}.")
        return promotion.needs_info(problems)
    now = datetime.now(UTC)
    new = promotion.apply_once(
        state, lambda s: pipeline.cancel(s, actor=actor.login, now=now, reason=reason), role=actor.role
    )
    new, news = benchmark.stop(promotion.client, new, now=now, actor=actor.login)
    promotion.store.answered = max(promotion.store.answered, said.id)
    promotion.store.save_under_shown(
        new, f"Cancelled by @{actor.login} while the issue needs information; `/retry` continues it once it is fixed."
    )
    promotion.sync_labels(new)
    reply(f"`/cancel` cancelled the promotion. {news}".strip())
    promotion.needs_info(problems)
    return Result("cancelled", new)


def _then(promotion, result: Result, late: bool) -> Result:
    """After a comment that moved nothing, continue what is due (``Promotion.heal``); a late one leaves that to
    the run's own event."""
    return result if late else promotion.heal(result)


def answered(state, comment_id: int) -> bool:
    """A later run answered this comment already (its own run was dropped, or delivered after that run)."""
    return state is not None and state.answered_comment is not None and comment_id <= state.answered_comment


def catch_up(
    session, promotion, *, own: Said | None = None, own_label: str | None = None, deferred: bool = False
) -> list[str]:
    """Answer the commands whose own workflow runs GitHub dropped, oldest first, each once, then decide the open
    gate's approval label whose run was dropped (``issues.dropped_label``; ``own_label``: this run's own label,
    left to it); what it did, per one.

    GitHub keeps one pending run per concurrency group, so a newer event of the issue can cancel the run that
    would have answered a person's `/approve` or `/retry`; the next run's self-heal went on with the promotion
    but never answered the command. Every run that reads the state looks at the people's comments newer than the
    last one answered (``PipelineState.answered_comment``; ``own``: the run's own comment, answered after
    these) and answers each command through the same path as its own run would have (``answer``: the one
    ``authorize`` rule, and a decision written before the review now open decides nothing), a bounded number per
    run (``_late_commands``; ``deferred``: this run is the one an earlier run dispatched to take up what its
    bound left). A bot's comment and one already replied to are skipped; an edited one counts as its author's
    edit left it (``edits.author_edited``), never as another person's.
    A finished promotion, or one whose request needs fixing, is not read: no command could act on it.
    """
    if {str(Label.DONE), str(Label.REJECTED), str(Label.NEEDS_INFO)} & set(promotion.issue.labels):
        return []
    done = _late_commands(session, promotion, own, deferred)
    label = dropped_label(session, promotion, own=own_label)
    return [*done, label] if label else done


#: The most missed commands one run acts on, and the most people it answers: a burst of comments costs a bounded
#: number of REST calls (README: at most 30 per event; the token's 1,000 an hour serve every promotion). The rest
#: wait, oldest first, for the run this one dispatches (``Promotion.continue_later``) or any later run.
LATE_ACTS = 1
LATE_PEOPLE = 3


def _late_commands(session, promotion, own: Said | None, deferred: bool) -> list[str]:
    """Answer the missed commands oldest first (``catch_up``), within ``LATE_ACTS`` and ``LATE_PEOPLE``.

    A command its writer may give is answered on its own (``answer``); the refused and malformed ones of one
    person are answered together, in one reply (``_fold``), so an outsider's burst costs one comment. The first
    command past a bound stops the run's reading: it and every newer one are left unanswered for a later run
    (``GitHubStateStore.held``), never skipped. A command that would change nothing (a `/cancel` of a cancelled
    promotion) is answered with the refused ones: it spends no act of the bound. Its text counts as its author
    wrote or edited it (``edits.author_edited``: one GraphQL call, REST's whole seconds hide a same-second edit)."""
    state = promotion.load()
    if state is None or state.answered_comment is None:
        return []  # a state saved before it was kept: the next command answered by its own run starts it
    client, number = session.client, promotion.issue.number
    before = own.id if own is not None else None
    missed = [
        c
        for c in client.comments(number)
        if state.answered_comment < c.id < (before or c.id + 1)
        and c.login.lower() not in client.bot_logins
        and c.type != "Bot"
        and _is_command(c.body)
        and client.bot_comment(number, markers.reply(c.id)) is None
    ]
    done: dict[int, str] = {}
    refused: dict[str, list[tuple[int, str]]] = {}
    people: set[str] = set()
    acting: list[tuple[object, datetime | None]] = []  # acted on once the refusals around them are recorded
    asked = 0
    how = "deferred by an earlier run (older commands first)" if deferred else "whose run was dropped"
    left = None
    for c in missed:
        if c.login.lower() not in people and len(people) == LATE_PEOPLE:
            left = c
            break
        people.add(c.login.lower())
        # a no-op is known from the state before this run's act only; one after it is a command to act on
        action, why = _refusal(session, promotion, c, None if acting else state)
        if why is None:
            if asked == LATE_ACTS:
                left = c
                break
            asked += 1
            try:  # its text as it reads now, which counts only when its author wrote it (one GraphQL call)
                acting.append((c, author_edited(session.client, c, changed=None)))
                continue
            except EditedByAnother as exc:
                action, why = "ignored: the command was edited by someone else", str(exc)
        refused.setdefault(c.login, []).append((c.id, why))
        done[c.id] = f"answered comment {c.id} {how}: {action}"
    if left is not None:  # it and every newer command (the run's own too) wait for the run dispatched now
        held = [(c.login, c.body) for c in missed[missed.index(left) :]]
        held += [(own.login, own.body)] if own is not None and _is_command(own.body) else []
        promotion.hold(left.id, waiting_line(held))
        session.waiting = promotion.waiting  # the job summary says it too
    # the replies come in the order the commands were given: the people refused before the act first (recorded by
    # its save too), those after it once it is answered, recorded by the run's next save or at its end
    acted = acting[0][0].id if acting else None
    older = {login: said for login, said in refused.items() if acted is None or said[0][0] < acted}
    _fold(promotion, older)
    for c, written in acting:
        promotion.delivery = f"comment-{c.id}"  # recorded under its own id: its run, re-run later, finds it
        try:
            said = Said(c.id, c.body, c.login, c.type or "User", written or c.created_at)
            result = answer(session, promotion, promotion.issue, said, late=True, deferred=deferred)
        finally:
            promotion.delivery = session.env.event_id
        done[c.id] = f"answered comment {c.id} {how}: {result.action}"
    later = {login: said for login, said in refused.items() if login not in older}
    _fold(promotion, later)
    if later:  # a save of its own would cost two calls past the bound: a reply already posted is never repeated
        session.unrecorded = promotion
    else:
        record_answered(promotion)
    bound = f"left {len(missed) - len(done)} command(s) from comment {left.id} on for a later run" if left else ""
    return [*(done[k] for k in sorted(done)), *([f"{bound} (the bound per run)"] if bound else [])]


def _refusal(session, promotion, c, state) -> tuple[str, str | None]:
    """What answering a missed command comes to when nobody may act on it (malformed, or its writer may not give
    it, or it would change nothing in ``state``) and the reply's text; (``""``, None) for one to act on."""
    try:
        command = commands.parse(c.body)
    except commands.CommandError as exc:
        return "malformed command", str(exc)
    _, verdict = session.authorize(c.login, c.type or "User", command.name.action, issue_author=promotion.issue.author)
    if not verdict.allowed:
        return f"refused /{command.name}", f"`/{command.name}` was not applied: {verdict.why}."
    nothing = changes_nothing(command.name, command.argument, state)
    return ("", None) if nothing is None else (f"answered /{command.name}: it changed nothing", f"{nothing}.")


def _fold(promotion, refused: dict[str, list[tuple[int, str]]]) -> None:
    """One reply per person to their refused or malformed commands (under the first one's key), recorded answered
    by the run's next save (``PipelineState.answered_comment``): later runs neither repeat nor re-judge them."""
    for login, said in refused.items():
        whys = list(dict.fromkeys(why for _, why in said))
        lines = [f"- {why} ({sum(w == why for _, w in said)} of them)" for why in whys]
        text = (
            whys[0] if len(said) == 1 else "\n".join([f"none of your {len(said)} commands here was applied:", *lines])
        )
        promotion.notice(markers.reply_key(said[0][0]), f"@{login} {text}")
        promotion.store.answered = max(promotion.store.answered, said[-1][0])


def record_answered(promotion) -> None:
    """One save recording what this run answered, unless a save of the run (an act's) recorded it already."""
    state = promotion.load()
    if state is not None and promotion.store.answered > (state.answered_comment or 0):
        promotion.save(state)


def _is_command(body: str) -> bool:
    """A command, or a malformed one (answered with what is wrong), other than a read-only one (`/status`): a late
    one has nothing left to refresh, the run's own save shows the state."""
    try:
        command = commands.parse(body)
    except commands.CommandError:
        return True
    return command is not None and not command.name.read_only


def _without_state(promotion, name: Name, reply) -> Result:
    """A command on an issue with no saved state: its first run never got going (the command starts it), or the
    status comment holding the state is gone (``lost_state``): nothing is decided then, and a `/retry` starts
    over from stage 1, saying so. That restart is this event's move: a re-run of its run continues it."""
    lost = lost_state.missing(promotion)
    if lost is None:
        return promotion.advance()
    if name is not Name.RETRY:
        reply(f"`/{name}` was not applied: {lost}.")
        return Result(f"refused /{name}", notes=[lost])
    reply(lost_state.restarted(promotion))
    # the gates passed before are not remembered: their approval labels would read as decisions of the new reviews
    promotion.drop_labels({name for name in promotion.issue.labels if Label.approval_gate(name) is not None})
    result = promotion.advance()
    promotion.refused(promotion.load())  # recorded as handled: a re-run does not retry the new promotion
    return result


def _reopen(promotion, state, name: str, reply) -> str:
    """A retry that continues a promotion its issue's close cancelled reopens the issue, as it reopens the PR.

    Closing the issue is a `/cancel`; a `/retry` from someone who may retry undoes a cancel, so it undoes the
    close too: left closed, the issue would hide a promotion that runs and waits at a gate for a decision.
    """
    if state.status.value in ("cancelled", "rejected", "done"):
        return ""
    promotion.client.reopen_issue(promotion.issue.number)
    said = (
        f"the issue was reopened: closing it had cancelled the promotion, and `/{name}` continues it (the status "
        "comment says where)."
    )
    reply(said)
    return said


#: The most text a gate's change requests may hold together. The rerun is given all of them (their directives
#: accumulate), and the state keeps them up to three times (the decisions, the pending feedback, the rerun
#: stage's copy) in one GitHub comment; with ``commands.REASON_CHARS`` per reason this keeps it bounded.
CHANGE_REQUESTS_CHARS = 3_000


def _over_budget(state, gate: int, reason: str) -> str | None:
    """Why one more change request at ``gate`` would make its change requests too long to keep, or None."""
    earlier = state.change_requests(gate)
    total = len(earlier) + (2 if earlier else 0) + len(reason.strip())
    if total <= CHANGE_REQUESTS_CHARS:
        return None
    return (
        f"gate {gate}'s change requests would hold {total:,} characters with this one ({len(earlier):,} already), "
        f"and they may hold at most {CHANGE_REQUESTS_CHARS:,} (the rerun reads them all, and the promotion's state "
        "keeps them in one GitHub comment); put it in fewer words, or approve or reject the gate"
    )


def _unchanged(promotion, state, gate: int, reason: str | None) -> str | None:
    from bot.review.change_request import refusal_on_branch
    from bot.stages.plan_reports import unusable_results

    runner = promotion.runner()
    return refusal_on_branch(
        gate, reason, runner.context(state), author=runner.agents is not None, results_problem=unusable_results
    )
