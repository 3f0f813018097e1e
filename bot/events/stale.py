"""Whether a gate decision was made on the review now open, by the records GitHub keeps of when.

A comment or a label is handled by a workflow run that may start late (queued behind others, cancelled and
re-run); by then the gate may show a later review. Both decide only the review their writer saw.
"""

from __future__ import annotations

from bot.escape import md
from bot.github.labels import Label
from bot.model import Decision, Stage
from bot.review import after_change_request


def written_before(state, gate: int, written, again: str, labels) -> str | None:
    """Why a decision written before the review now open must not decide it, or None when it was made on it.

    A decision counts for the review its writer saw. Tied only to the gate, a bare `/approve` written at round 1
    and run late (a queued or re-run workflow run) approved the review a later change request started, unseen;
    one written before an edit restarted the promotion approved the edited program's review. Three records say
    it was earlier, each by GitHub's clock or GitHub's own labels: a decision at this gate written after it
    (``GateDecision.written_at``), the time the review now open was shown (``PipelineState.opened_at``, the
    status comment's update), and labels that showed a stage running, not the gate waiting, when it was written.
    ``again`` says how to decide it now ("comment `/approve` again", "apply the label again").
    """
    again = f"read it, then {again} to decide it"
    now = f"round {state.review_round}{after_change_request(gate, state)}"
    for i, later in enumerate(state.decisions):
        if later.gate != gate or later.written_at is None or written is None or later.written_at <= written:
            continue
        before = state.model_copy(update={"decisions": state.decisions[:i]})
        seen = f"review round {later.round}{after_change_request(gate, before)}" if later.round else "an earlier review"
        what = "change request" if later.decision is Decision.REQUEST_CHANGES else later.decision.value
        return (
            f"it was written while gate {gate} showed {seen}, and {later.actor}'s {what} written after it started "
            f"the review now open ({now}); a decision counts only for the review it was made on: {again}"
        )
    if written is not None and state.opened_at is not None and written <= state.opened_at:
        return (
            f"it was written at {written:%Y-%m-%d %H:%M:%S} UTC, before gate {gate}'s review now open ({now}) was "
            f"shown at {state.opened_at:%Y-%m-%d %H:%M:%S} UTC{_since(state, gate)}; a decision counts only for "
            f"the review it was made on: {again}"
        )
    running = next((int(s) for s in Stage if str(Label.stage(s)) in set(labels)), None)
    if running is not None and Label.pending_gate(labels) is None:
        return (
            f"it was written while stage {running} was running, before gate {gate}'s review now open ({now}) was "
            f"shown; a decision counts only for the review it was made on: {again}"
        )
    return None


def _since(state, gate: int) -> str:
    """ ", after the promotion restarted from stage 1 (why)" when a restart came between the gate's last two
    openings (the audit's order, not its times: those are the runner's clock), else ""."""
    opened = f"gate {gate} open for decision"
    seen = 0
    for entry in reversed(state.audit):
        if entry.event == opened:
            seen += 1
            if seen == 2:
                break
        elif seen == 1 and entry.event.startswith("restarted from stage"):
            return f", after the promotion {entry.event} ({md(entry.detail)})"
    return ""
