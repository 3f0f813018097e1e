"""The promotion state machine: 7 stages, 3 gates, and every legal move between them.

Pure: no I/O, no clock (callers pass ``now``), no knowledge of git or GitHub.
The runner (``bot.stages.runner``) asks ``next_step`` what is due, does it,
and reports back with ``stage_finished`` / ``review_finished`` /
``decide``; each returns a new state, which the runner saves at once.

```
1 analyze → 2 translate → [gate 1] → 3 hypothesize → [gate 2]
  → 4 implement tests → 5 run and validate → [gate 3] → 6 document → 7 PR
```

At a gate the independent review runs first. Blocking findings (CRITICAL or
IMPORTANT) send the gate's stages back to the author with the findings as
input, and the review runs again, up to ``max_rounds``. If the author's
rerun changes nothing (same content hashes), or a round repeats the previous
round's blocking findings (a stall), another review would say the same thing,
so the gate opens at once, marked unconverged. Only then may a
person decide: approve (next stage), request changes (the gate's first stage
runs again with the reason), or reject (the promotion ends).

A stage that cannot finish (its checks cannot run, its input is gone) leaves the promotion *failed* at that
stage with the reason; ``retry`` runs it again. A person may *cancel* a promotion (nothing runs until a retry
continues it) or the request may change under it: ``restart`` redoes the promotion from the first stage that
reads a changed part (``bot.model.request_parts``), keeping the stages, reviews and gate decisions before it and the
history; a part no stage reads (the title) is only recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.model import (
    AuditEntry,
    BenchmarkDispatch,
    DecidedVia,
    Decision,
    Finding,
    GateDecision,
    PipelineState,
    ReviewRound,
    Severity,
    Stage,
    StageFailure,
    StageRecord,
    Status,
    counted,
)

# The gates: the stage each follows (GATE_AFTER) and the stages each covers (GATE_COVERS). They live in
# ``bot.model.gates``, with the invariant the GitHub home checks a loaded state against; the engine's are those.
from bot.model.gates import GATE_AFTER, GATE_COVERS
from bot.model.request_parts import request_change

DEFAULT_MAX_ROUNDS = 3


class IllegalTransition(ValueError):
    """A move the state machine refuses; the message says what is possible instead."""


# ------------------------------------------------------------ What is due next


@dataclass(frozen=True)
class RunStage:
    stage: Stage
    feedback: str | None  # a person's reason ("request changes"), for the whole review cycle
    review: str | None = None  # the blocking findings an author-fix rerun must address


@dataclass(frozen=True)
class RunReview:
    gate: int
    round: int


@dataclass(frozen=True)
class AwaitDecision:
    gate: int


@dataclass(frozen=True)
class Finished:
    status: Status  # DONE or REJECTED


@dataclass(frozen=True)
class Halted:
    """Nothing runs until a person retries: the due stage failed, or the promotion was cancelled."""

    status: Status  # FAILED or CANCELLED
    stage: Stage | None
    reason: str


Step = RunStage | RunReview | AwaitDecision | Finished | Halted


def new_state(
    request_id: str,
    fingerprint: str,
    branch: str,
    *,
    actor: str,
    now: datetime,
    parts: dict[str, str] | None = None,
) -> PipelineState:
    state = PipelineState(
        request_id=request_id,
        request_fingerprint=fingerprint,
        request_parts=dict(parts or {}),
        branch=branch,
        answered_comment=0,  # every command on the issue from here on is answered (bot.events.comments.catch_up)
    )
    return _log(state, now, actor, "started", f"branch {branch}")


def next_step(state: PipelineState) -> Step:
    if state.status in (Status.DONE, Status.REJECTED):
        return Finished(state.status)
    if state.status is Status.FAILED:
        assert state.failure is not None
        return Halted(Status.FAILED, state.failure.stage, state.failure.reason)
    if state.status is Status.CANCELLED:
        last = next((a for a in reversed(state.audit) if a.event == "cancelled"), None)
        why = f" ({last.detail})" if last and last.detail else ""
        return Halted(Status.CANCELLED, state.next_stage, f"cancelled by {last.actor}{why}" if last else "cancelled")
    if state.status is Status.AWAITING_DECISION:
        assert state.open_gate is not None
        return AwaitDecision(state.open_gate)
    if state.next_stage is not None:
        n = int(state.next_stage)
        if state.recheck is not None and n in state.stages:  # redone as it last ran (bot.recheck)
            return RunStage(state.next_stage, state.stages[n].feedback, state.stages[n].review)
        return RunStage(state.next_stage, state.pending_feedback.get(n), state.review_findings.get(n))
    if state.open_gate is not None:
        return RunReview(state.open_gate, state.review_round + 1)
    raise IllegalTransition("corrupt state: nothing is due but the promotion is not finished")  # pragma: no cover


#: How stage 7's summary starts (bot.stages.pull_request): whether the PR is ready for review, or a draft and why.
_PR_OUTCOMES = ("PR stays a draft", "PR ready for review")


def describe(state: PipelineState) -> str:
    """One line for people: where the promotion stands."""
    step = next_step(state)
    match step:
        case Finished(Status.DONE):
            rec = state.stages.get(Stage.PR.value)
            pr = rec.summary.splitlines()[0] if rec and rec.summary.startswith(_PR_OUTCOMES) else "the PR is open"
            return f"done: all 7 stages finished; {pr}"
        case Finished(_):
            gate = next((d.gate for d in reversed(state.decisions) if d.decision is Decision.REJECT), "?")
            return f"rejected at gate {gate}"
        case AwaitDecision(gate):
            tag = " (review did not converge)" if gate in state.unconverged else ""
            return f"waiting for a decision at gate {gate}{tag}"
        case Halted(Status.FAILED, stage, reason):
            assert stage is not None
            return f"stage {int(stage)} ({stage.title}) failed: {reason}"
        case Halted(_, _, reason):
            return f"{reason}; a retry continues where it stopped"
        case RunReview(gate, rnd):
            return f"gate {gate} review round {rnd} is due"
        case RunStage(stage, feedback, review) if state.benchmark and stage is Stage.RUN_VALIDATE:
            sent = state.benchmark
            return f"stage 5 ({stage.title}) waits for the GPU benchmark of {sent.commit[:12]} (dispatched {sent.at:%Y-%m-%d %H:%M} UTC){sent.queue_note()}"
        case RunStage(stage, feedback, review):
            again = " again, with the review's findings" if review else (" again, with feedback" if feedback else "")
            return f"stage {int(stage)} ({stage.title}) is due{again}"
    raise AssertionError(step)  # pragma: no cover


# ----------------------------------------------------------------- Transitions


def stage_finished(state: PipelineState, record: StageRecord, *, changed: bool, now: datetime) -> PipelineState:
    """Record a finished stage. ``changed`` is False when its artifacts hash the same as before."""
    step = next_step(state)
    if not isinstance(step, RunStage) or step.stage != record.stage:
        raise IllegalTransition(f"stage {int(record.stage)} finished, but {describe(state)}")
    s = state.model_copy(deep=True)
    s.stages[int(record.stage)] = record
    s.review_findings.pop(int(record.stage), None)
    s.benchmark, s.benchmark_again = None, False  # stage 5 judged what came back; a rerun dispatches anew
    s = _log(s, now, "bot", f"stage {int(record.stage)} finished", record.summary)

    gate = GATE_AFTER.get(record.stage)
    fixing = s.open_gate is not None  # an author-fix pass inside a gate's review loop
    if fixing:
        s.author_changed = s.author_changed or changed
    if record.stage == Stage.PR:
        s.next_stage = None
        s.status = Status.DONE
        return _log(s, now, "bot", "done")
    if gate is None:
        s.next_stage = Stage(int(record.stage) + 1)
        return s
    # The gate's last stage finished: its review is due, unless the author fix changed nothing.
    s.next_stage = None
    if fixing and not s.author_changed:
        return _open_for_decision(s, gate, now, converged=False, why="the author's rerun changed nothing")
    s.open_gate = gate
    return s


def review_finished(
    state: PipelineState, review: ReviewRound, *, now: datetime, max_rounds: int = DEFAULT_MAX_ROUNDS
) -> PipelineState:
    step = next_step(state)
    if not isinstance(step, RunReview) or step.gate != review.gate:
        raise IllegalTransition(f"a gate {review.gate} review finished, but {describe(state)}")
    s = state.model_copy(deep=True)
    s.reviews.setdefault(review.gate, []).append(review)
    s.review_round += 1
    s = _log(s, now, review.reviewer, f"gate {review.gate} review round {s.review_round}", _count(review))
    if not review.for_author:  # none blocks, or only what a person settles: no author's round could change it
        why = "only a person can settle them" if review.blocking else "no blocking findings"
        return _open_for_decision(s, review.gate, now, converged=not review.blocking, why=why)
    if s.review_round >= max_rounds:
        return _open_for_decision(
            s, review.gate, now, converged=False, why=f"{max_rounds} round{'s' * (max_rounds != 1)} ran out"
        )
    if s.review_round >= 2 and _stalled(review, s.reviews[review.gate][-2]):
        return _open_for_decision(
            s, review.gate, now, converged=False, why="the same blocking findings twice: the author's fix did not help"
        )
    # Back to the author: rerun the gate's stages with the findings as input.
    first = GATE_COVERS[review.gate][0]
    s.next_stage = first
    s.author_changed = False
    s.review_findings[int(first)] = render_findings_feedback(review)
    return s


def decide(
    state: PipelineState,
    gate: int,
    decision: Decision,
    *,
    actor: str,
    now: datetime,
    reason: str | None = None,
    via: DecidedVia = DecidedVia.COMMAND,
    written: datetime | None = None,
) -> PipelineState:
    """A person's decision at a gate (or the --approve flag's). Refuses anything but one on the open, reviewed gate.

    ``written`` is when the person wrote it (a GitHub comment's ``created_at``), kept so a decision written
    earlier but handled later is told apart from one made on the review now open (``written_before``)."""
    if gate not in GATE_COVERS:
        raise IllegalTransition(f"there is no gate {gate}; gates are 1 (translation), 2 (hypotheses), 3 (validation)")
    if decision is not Decision.APPROVE and not (reason and reason.strip()):
        raise IllegalTransition(
            f"{decision.value} needs a reason (--reason TEXT) so the author and the record know why"
        )
    if state.status is Status.DONE:
        raise IllegalTransition(f"the promotion is finished; gate {gate} can no longer be decided")
    if state.status is Status.REJECTED:
        raise IllegalTransition("the promotion was rejected; nothing is left to decide")
    if state.status in (Status.FAILED, Status.CANCELLED):
        raise IllegalTransition(f"gate {gate} is not open: {describe(state)}")
    earlier = [d for d in state.decisions if d.gate == gate and d.decision is Decision.APPROVE]
    if state.open_gate != gate or state.status is not Status.AWAITING_DECISION:
        if state.open_gate == gate:
            raise IllegalTransition(
                f"gate {gate}'s review has not finished yet ({describe(state)}); run `promote resume` first"
            )
        if earlier and (state.open_gate is None or state.open_gate > gate):
            last = earlier[-1]
            raise IllegalTransition(f"gate {gate} was already approved by {last.actor} at {last.at:%Y-%m-%d %H:%M}")
        raise IllegalTransition(f"gate {gate} is not open: {describe(state)}")

    s = state.model_copy(deep=True)
    critical = open_critical(state, gate) if decision is Decision.APPROVE else []
    record = GateDecision(
        gate=gate,
        decision=decision,
        actor=actor,
        at=now,
        reason=reason,
        via=via,
        open_critical=[f.check for f in critical],
        critical_count=counted(critical) if counted(critical) > len(critical) else None,  # a bounded round's
        round=state.review_round or None,
        written_at=written,
    )
    s.decisions.append(record)
    how = "via the --approve flag, not at the open gate" if via is DecidedVia.APPROVE_FLAG else ""
    s = _log(
        s,
        now,
        actor,
        f"gate {gate} {decision.value}",
        "; ".join(t for t in (reason or how, record.critical_note()) if t),
    )
    s.status = Status.RUNNING
    s.open_gate, s.opened_at = None, None
    s.review_round = 0
    for stage in GATE_COVERS[gate]:
        s.pending_feedback.pop(int(stage), None)
        s.review_findings.pop(int(stage), None)
    if decision is Decision.APPROVE:
        s.next_stage = Stage(int(GATE_COVERS[gate][-1]) + 1)
    elif decision is Decision.REQUEST_CHANGES:
        first = GATE_COVERS[gate][0]
        s.next_stage = first
        s.pending_feedback[int(first)] = s.change_requests(gate)
        if gate in s.unconverged:
            s.unconverged.remove(gate)
    else:
        s.status = Status.REJECTED
        s.next_stage = None
    return s


def open_critical(state: PipelineState, gate: int) -> list[Finding]:
    """Each CRITICAL finding of the gate's last review round: what is open while the gate waits (one may stand
    for many: ``Finding.count``)."""
    rounds = state.reviews.get(gate) or []
    if not rounds:
        return []
    return [f for f in sorted(rounds[-1].findings, key=lambda f: f.sort_key()) if f.severity is Severity.CRITICAL]


def stage_failed(
    state: PipelineState, stage: Stage, reason: str, *, now: datetime, fix: str = "", reports: bool = False
) -> PipelineState:
    """The due stage could not finish. Nothing it did is recorded; a retry runs it again (``StageFailure.reports``)."""
    step = next_step(state)
    if not isinstance(step, RunStage) or step.stage != stage:
        raise IllegalTransition(f"stage {int(stage)} failed, but {describe(state)}")
    s = state.model_copy(deep=True)
    s.status, s.benchmark = Status.FAILED, None
    s.failure = StageFailure(stage=stage, reason=reason, fix=fix, reports=reports, at=now)
    return _log(s, now, "bot", f"stage {int(stage)} failed", reason)


def review_halted(state: PipelineState, gate: int, reason: str, *, now: datetime, fix: str = "") -> PipelineState:
    """The gate's review cannot run (the branch moved under the bot): the promotion halts, failed at the gate's
    last stage; a retry runs the review again, once the reason is dealt with."""
    step = next_step(state)
    if not isinstance(step, RunReview) or step.gate != gate:
        raise IllegalTransition(f"gate {gate}'s review halted, but {describe(state)}")
    s = state.model_copy(deep=True)
    s.status = Status.FAILED
    s.failure = StageFailure(stage=GATE_COVERS[gate][-1], reason=reason, fix=fix, at=now)
    return _log(s, now, "bot", f"gate {gate} review halted", reason)


def retry(state: PipelineState, *, actor: str, now: datetime, stage: int | None = None) -> PipelineState:
    """Run the failed stage again, or continue a cancelled promotion where it stopped.

    ``stage``, when given, must be the stage a retry would run: a retry never skips
    work or reruns a stage whose output a gate has already accepted.
    """
    if state.status in (Status.DONE, Status.REJECTED):
        raise IllegalTransition(f"the promotion is {state.status.value}; there is nothing to retry")
    due = state.failure.stage if state.status is Status.FAILED and state.failure else state.next_stage
    if stage is not None and (due is None or stage != int(due)):
        what = f"stage {int(due)} ({due.title}) is the one to retry" if due else describe(state)
        raise IllegalTransition(f"stage {stage} cannot be retried now: {what}")
    if state.status not in (Status.FAILED, Status.CANCELLED):
        if state.status is Status.AWAITING_DECISION:
            raise IllegalTransition(f"nothing failed: {describe(state)}; decide the gate instead")
        return state  # already running: the caller just starts the due step again
    s = state.model_copy(deep=True)
    if s.status is Status.FAILED:
        s.status, s.failure = Status.RUNNING, None
        return _log(s, now, actor, "retry", f"stage {int(due)}" if due else "")
    s.status, s.cancelled_from = s.cancelled_from or Status.RUNNING, None
    return _log(s, now, actor, "continued", describe(s))


def benchmark_sent(
    state: PipelineState, sent: BenchmarkDispatch | None, *, now: datetime, actor: str = "bot"
) -> PipelineState:
    """Record the GPU benchmark dispatched for stage 5 (``sent``), or forget it and ask for a new run (None: `/retry 5`,
    which stage 5 dispatches instead of judging the reports on the branch: ``PipelineState.benchmark_again``)."""
    s = state.model_copy(deep=True)
    s.benchmark, s.benchmark_again = sent, sent is None
    if sent is not None:
        return _log(s, now, actor, "benchmark dispatched", f"for {sent.commit[:12]}")
    return _log(s, now, actor, "benchmark asked for again", "stage 5")


def benchmark_stopped(state: PipelineState, *, now: datetime, actor: str, detail: str) -> PipelineState:
    """The dispatched benchmark's run is over (the bot cancelled it, or it had finished): stage 5 no longer waits
    for it, and dispatches anew when it runs again (reports it published are judged instead)."""
    s = state.model_copy(deep=True)
    s.benchmark = None
    return _log(s, now, actor, "benchmark run stopped", detail)


def cancel(state: PipelineState, *, actor: str, now: datetime, reason: str = "") -> PipelineState:
    """Stop the promotion where it stands; nothing is lost, and a retry continues it."""
    if state.status in (Status.DONE, Status.REJECTED):
        raise IllegalTransition(f"the promotion is already {state.status.value}")
    if state.status is Status.CANCELLED:
        return state
    s = state.model_copy(deep=True)
    s.cancelled_from = Status.RUNNING if s.status is Status.FAILED else s.status
    s.status, s.failure = Status.CANCELLED, None
    return _log(s, now, actor, "cancelled", reason)


def restart(
    state: PipelineState,
    fingerprint: str,
    parts: dict[str, str] | None = None,
    *,
    actor: str,
    now: datetime,
    why: str,
) -> PipelineState:
    """The request changed: redo the promotion from the first stage that reads a changed part, on the same
    branch, keeping what came before it and the audit trail.

    The stages from there on, their gates' reviews and decisions, and any feedback for them were made on the old
    request, so none of them carries over. A change no finished stage has read yet (the title, or the claims
    while gate 1 waits) is only recorded: the promotion goes on where it stands, and a stage that failed on the
    old request runs again.
    """
    if state.status in (Status.DONE, Status.REJECTED):
        raise IllegalTransition(f"the promotion is {state.status.value}; open a new one for a changed request")
    change = request_change(state, parts or {})
    s = state.model_copy(deep=True)
    s.request_fingerprint, s.request_parts = fingerprint, dict(parts or {})
    what = change.detail(why)
    if not change.redo:
        if s.failure is not None and change.stage is not None and s.failure.stage >= change.stage:
            s.status, s.failure = Status.RUNNING, None  # it failed on the old request: the new one may pass
        return _log(s, now, actor, "request updated", f"{what}; no finished stage read it")
    start = change.stage
    assert start is not None
    kept = {g for g, covers in GATE_COVERS.items() if covers[-1] < start}
    s.stages = {n: r for n, r in s.stages.items() if n < start}
    s.reviews = {g: r for g, r in s.reviews.items() if g in kept}
    s.decisions = [d for d in s.decisions if d.gate in kept]
    s.unconverged = [g for g in s.unconverged if g in kept]
    s.pending_feedback = {n: f for n, f in s.pending_feedback.items() if n < start}
    s.review_findings = {n: f for n, f in s.review_findings.items() if n < start}
    s.next_stage, s.open_gate, s.review_round, s.author_changed, s.failure = start, None, 0, False, None
    s.opened_at, s.benchmark, s.recheck = None, None, None
    if s.status is Status.CANCELLED:
        s.cancelled_from = Status.RUNNING  # still cancelled: a retry continues from the restart
    else:
        s.status = Status.RUNNING
    # head, handled events, LLM usage and the audit trail carry over: where the bot left the branch, the events
    # already acted on and what the promotion has cost do not depend on the request.
    return _log(s, now, actor, f"restarted from stage {int(start)}", what)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def _open_for_decision(s: PipelineState, gate: int, now: datetime, *, converged: bool, why: str) -> PipelineState:
    s.open_gate = gate
    s.opened_at = None  # a new review is shown: the GitHub store stamps when (``GitHubStateStore.load``)
    s.next_stage = None
    s.status = Status.AWAITING_DECISION
    if not converged and gate not in s.unconverged:
        s.unconverged.append(gate)
    if converged and gate in s.unconverged:
        s.unconverged.remove(gate)
    state = "converged" if converged else "did not converge"
    return _log(s, now, "bot", f"gate {gate} open for decision", f"review {state}: {why}")


def _stalled(review: ReviewRound, previous: ReviewRound) -> bool:
    """This round repeats the previous round's blocking findings (by ``Finding.key``): another round would too."""
    return {f.key() for f in review.blocking} == {f.key() for f in previous.blocking}


#: How long the author-fix rerun's list of findings may grow: it goes into the state (twice) and the commit
#: message, while the author reads the findings themselves from the review round; the rest is counted.
FEEDBACK_CHARS = 8_000


def render_findings_feedback(review: ReviewRound) -> str:
    lines = [f"Gate {review.gate} review round {review.round}: fix these blocking findings."]
    found = zip(review.findings, review.ids(), strict=True)  # each finding as the review report names it
    blocking = sorted(((f, ref) for f, ref in found if f.for_author()), key=lambda fr: fr[0].sort_key())
    size = len(lines[0])
    for i, (f, ref) in enumerate(blocking):
        where = f" ({f.file}:{f.line})" if f.file and f.line else (f" ({f.file})" if f.file else "")
        message = f.message if len(f.message) <= 1_500 else f.message[:1_500].rstrip() + " [cut; see the review]"
        line = f"- [{f.severity.value}] {ref}{where}: {message}"
        if size + len(line) > FEEDBACK_CHARS:
            lines.append(f"- and {len(blocking) - i} more blocking finding(s): see gate {review.gate}'s review report")
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _count(review: ReviewRound) -> str:
    by = {}
    for f in review.findings:
        by[f.severity.value] = by.get(f.severity.value, 0) + f.count
    return ", ".join(f"{n} {k}" for k, n in sorted(by.items())) or "no findings"


def _log(state: PipelineState, now: datetime, actor: str, event: str, detail: str = "") -> PipelineState:
    state.audit.append(AuditEntry(at=now, actor=actor, event=event, detail=detail))
    return state
