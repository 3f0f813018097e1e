"""The labels the bot owns: an enum whose values are the labels, and the set a state should show.

Labels mirror the promotion for people and for search (`is:issue label:gate-2-pending`).
People pass a gate with ``gate-N-approved``; every other bot label is recomputed
from the state on each event, so a stale one is removed and a missing one added.
Labels the bot does not own are never touched.
"""

from __future__ import annotations

from enum import StrEnum

from bot.model import Decision, PipelineState, Stage, Status


def _stage_label(stage: Stage) -> str:
    return f"stage-{int(stage)}-{stage.title.replace(' ', '-')}"


class Label(StrEnum):
    PROMOTION = "promotion"
    NEEDS_INFO = "needs-info"
    REJECTED = "promotion-rejected"
    FAILED = "promotion-failed"
    CANCELLED = "promotion-cancelled"
    DONE = "promotion-done"
    STAGE_1 = _stage_label(Stage.ANALYZE)
    STAGE_2 = _stage_label(Stage.TRANSLATE)
    STAGE_3 = _stage_label(Stage.HYPOTHESIZE)
    STAGE_4 = _stage_label(Stage.IMPLEMENT_TESTS)
    STAGE_5 = _stage_label(Stage.RUN_VALIDATE)
    STAGE_6 = _stage_label(Stage.DOCUMENT)
    STAGE_7 = _stage_label(Stage.PR)
    GATE_1_PENDING = "gate-1-pending"
    GATE_2_PENDING = "gate-2-pending"
    GATE_3_PENDING = "gate-3-pending"
    GATE_1_APPROVED = "gate-1-approved"
    GATE_2_APPROVED = "gate-2-approved"
    GATE_3_APPROVED = "gate-3-approved"

    @classmethod
    def stage(cls, stage: Stage) -> Label:
        return cls(_stage_label(stage))

    @classmethod
    def pending(cls, gate: int) -> Label:
        return cls(f"gate-{gate}-pending")

    @classmethod
    def approved(cls, gate: int) -> Label:
        return cls(f"gate-{gate}-approved")

    @classmethod
    def approval_gate(cls, name: str) -> int | None:
        """The gate an approval label is for (``gate-2-approved`` -> 2), None for any other label."""
        for gate in (1, 2, 3):
            if name == cls.approved(gate):
                return gate
        return None

    @classmethod
    def pending_gate(cls, names) -> int | None:
        """The gate the labels show waiting (``gate-2-pending`` -> 2); None when they show none, or several."""
        gates = [gate for gate in (1, 2, 3) if str(cls.pending(gate)) in set(names)]
        return gates[0] if len(gates) == 1 else None

    @property
    def color(self) -> str:
        if self.value.startswith("gate-") and self.value.endswith("-approved"):
            return "0e8a16"
        if self.value.startswith("gate-"):
            return "fbca04"
        if self.value.startswith("stage-"):
            return "c5def5"
        return {"promotion": "5319e7", "needs-info": "d93f0b", "promotion-done": "0e8a16"}.get(self.value, "b60205")

    @property
    def description(self) -> str:
        if self.value.startswith("gate-") and self.value.endswith("-approved"):
            return f"Approvers apply this to pass gate {self.value[5]} (the bot checks who applied it)"
        if self.value.startswith("gate-"):
            return f"Gate {self.value[5]} is waiting for an approver's decision"
        if self.value.startswith("stage-"):
            return f"The promotion is at stage {self.value[6]}"
        return {
            "promotion": "A promotion of a BLIS-evolved policy into llm-d (managed by the promotion bot)",
            "needs-info": "The promotion request cannot be used as filed; the bot's comment says what to fix",
            "promotion-rejected": "A gate rejected this promotion",
            "promotion-failed": "A stage failed; the status comment says why and how to retry",
            "promotion-cancelled": "Cancelled; /retry continues where it stopped",
            "promotion-done": "All 7 stages and 3 gates passed; the PR is ready for review",
        }[self.value]


def desired(state: PipelineState) -> set[str]:
    """The bot labels this state should show."""
    labels = {Label.PROMOTION}
    for d in state.decisions:
        if d.decision is Decision.APPROVE:
            labels.add(Label.approved(d.gate))
    match state.status:
        case Status.DONE:
            labels.add(Label.DONE)
        case Status.REJECTED:
            labels.add(Label.REJECTED)
        case Status.FAILED:
            labels.add(Label.FAILED)
            if state.failure is not None:
                labels.add(Label.stage(state.failure.stage))
        case Status.CANCELLED:
            labels.add(Label.CANCELLED)
        case Status.AWAITING_DECISION:
            assert state.open_gate is not None
            labels.add(Label.pending(state.open_gate))
        case Status.RUNNING:
            if state.next_stage is not None:
                labels.add(Label.stage(state.next_stage))
            elif state.open_gate is not None:  # the gate's review is due
                labels.add(Label.pending(state.open_gate))
    return {str(x) for x in labels}


def open_gate_approval(state: PipelineState) -> str | None:
    """The approval label of the gate open now (its review shown or under way), which only its own run may remove.

    A person's `gate-N-approved` for that gate is not in ``desired`` until its run, queued behind the run that
    reads the labels, decides it or refuses it with a reply; removed by the other run, it vanished unanswered.
    """
    if state.open_gate is None or state.status not in (Status.AWAITING_DECISION, Status.RUNNING):
        return None
    return str(Label.approved(state.open_gate))


def changes(current: set[str], want: set[str], keep: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    """(labels to add, labels to remove): only bot-owned labels are ever removed, and never those in ``keep``."""
    owned = {str(x) for x in Label} - {str(Label.NEEDS_INFO)}
    return sorted(want - current), sorted((current & owned) - want - keep)


def to_create(add: list[str]) -> list[str]:
    """The repository labels to make sure exist before ``add`` goes on the issue: the bot's own among them, and
    with a gate's pending label its approval label. GitHub's sidebar offers only labels that exist, and the status
    comment tells approvers to apply `gate-N-approved`, which the bot otherwise created only after a decision."""
    mine = {str(x) for x in Label}
    gates = [gate for gate in (1, 2, 3) if str(Label.pending(gate)) in add]
    return sorted({n for n in add if n in mine} | {str(Label.approved(gate)) for gate in gates})
