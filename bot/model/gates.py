"""Where the gates stand between the stages, and the invariant every state the engine saves keeps about them.

A gate stands after the stages it covers: gate 1 after stage 2 (translate), gate 2 after stage 3 (hypothesize),
gate 3 after stage 5 (run and validate). The engine (``bot.pipeline``) moves past a gate only by an approval of
it (``decide``), and each move that takes an approval back takes back what stands past it too: a re-check that
reopens a gate drops its decisions and the stages after it (``bot.recheck``), a restart drops the decisions of
the gates it redoes with their stages (``pipeline.restart``), and a gate is decided again only while it is open,
so nothing stands past it then. Hence the invariant: **each gate that anything in the state stands past has, as
its last decision, an approval** (``unapproved`` names the gates where that fails).

A state that breaks it was not saved by the engine's moves. The GitHub home refuses one
(``bot.github.state.GitHubStateStore.vouched``): a workflow's GITHUB_TOKEN saves the status comment as the bot,
and could move the promotion past a gate (stage 5's benchmark dispatched, gate 3 open) recording no approval of it.
Pure, and free: it reads the state only.

Here, not in ``bot.pipeline``, because the GitHub home (a lower layer) checks it; the engine imports the gates
from here.
"""

from __future__ import annotations

from typing import NamedTuple

from bot.model.base import Decision, Stage
from bot.model.state import PipelineState, Status

#: The gate that follows each gated stage.
GATE_AFTER: dict[Stage, int] = {Stage.TRANSLATE: 1, Stage.HYPOTHESIZE: 2, Stage.RUN_VALIDATE: 3}

#: The stages each gate reviews, and that its author step and "request changes" rerun.
#: Stage 1 is the one-time dictionary (versioned data, not changed by feedback);
#: stage 4 has no gate of its own, so gate 3 covers it with stage 5.
GATE_COVERS: dict[int, tuple[Stage, ...]] = {
    1: (Stage.TRANSLATE,),
    2: (Stage.HYPOTHESIZE,),
    3: (Stage.IMPLEMENT_TESTS, Stage.RUN_VALIDATE),
}


class Unapproved(NamedTuple):
    """A gate the state stands past with no approval of it that still stands, and what stands past it (words)."""

    gate: int
    past: str


def unapproved(state: PipelineState) -> list[Unapproved]:
    """Each gate ``state`` stands past (``reached``) whose last recorded decision is not an approval: none was
    made, or a later change request or rejection of the gate took it back. Empty for every state the engine saves."""
    last = {d.gate: d.decision for d in state.decisions}  # in the order they were made
    out = []
    for gate, covers in GATE_COVERS.items():
        past = reached(state, covers[-1]) if last.get(gate) is not Decision.APPROVE else None
        if past is not None:
            out.append(Unapproved(gate, past))
    return out


def reached(state: PipelineState, stage: Stage) -> str | None:
    """What in ``state`` stands past ``stage`` (a stage after it done, due or failed; a gate after it open; the
    benchmark dispatched; the promotion done; where a re-check resumes), in words; None when nothing does."""
    after = int(stage)
    done = [n for n in sorted(state.stages) if n > after]
    if done:
        return f"stage {done[-1]} ({Stage(done[-1]).title}) is done"
    if state.status is Status.DONE:
        return "the promotion is marked done"
    rc = state.recheck
    for gate, said in ((state.open_gate, "is open"), (rc and rc.resume_gate, "is where the re-check resumes")):
        if gate in GATE_COVERS and int(GATE_COVERS[gate][0]) > after:
            return f"gate {gate} {said}"
    for due, said in ((state.next_stage, "is due"), (state.failure and state.failure.stage, "failed")):
        if due is not None and int(due) > after:
            return f"stage {int(due)} ({due.title}) {said}"
    if rc is not None and rc.resume_stage is not None and int(rc.resume_stage) > after:
        return f"stage {int(rc.resume_stage)} ({rc.resume_stage.title}) is where the re-check resumes"
    if (state.benchmark is not None or state.benchmark_again) and int(Stage.RUN_VALIDATE) > after:
        return "stage 5's GPU benchmark is dispatched"
    return None
