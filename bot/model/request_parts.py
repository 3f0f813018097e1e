"""What each part of the request costs a promotion when it changes: the first stage that reads it, what people
call it, and what an edit throws away (``RequestChange``).

Here, not in ``bot.pipeline``, because the stages below the engine name a change too (the runner's restart and its
notice, ``bot.stages.restart_notice``); the engine's ``restart`` redoes the promotion from the stage this names.
Pure: it reads the state only.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.model.base import Stage
from bot.model.state import PipelineState

#: The first stage that reads each part of the request (``PromotionRequest.parts``): a changed part redoes the
#: promotion from there. Stage 1 reads the program; stage 2 translates it into the plugin type the branch is named
#: after; stage 3 turns the claims, workloads, baselines and stack into hypotheses, which stage 4's plan and stage
#: 5's verdicts build on; the OpenEvolve metadata is first cited by stage 6's report. The title is only shown (the
#: plugin type it may name is a part of its own). A part not listed here (a field added later) redoes everything.
FIRST_READ_BY: dict[str, Stage | None] = {
    "id": Stage.ANALYZE,
    "source": Stage.ANALYZE,
    "kind": Stage.ANALYZE,
    "plugin_type": Stage.ANALYZE,
    "fork": Stage.ANALYZE,
    "claims": Stage.HYPOTHESIZE,
    "workloads": Stage.HYPOTHESIZE,
    "baselines": Stage.HYPOTHESIZE,
    "evolved_for": Stage.HYPOTHESIZE,
    "stack": Stage.HYPOTHESIZE,
    "fidelity_floor": Stage.TRANSLATE,
    "origin": Stage.DOCUMENT,
    "plugin_name": None,
    "title": None,
}

#: What people call each part (the issue form's sections; ``stack`` comes from the repository's configuration).
PART_NAMES: dict[str, str] = {
    "id": "the request id",
    "source": "the evolved program",
    "kind": "the policy kind",
    "plugin_type": "the plugin type",
    "fork": "the target fork",
    "claims": "the BLIS claims",
    "workloads": "the workloads",
    "baselines": "the baseline scenarios",
    "evolved_for": "the workload the program was evolved on",
    "stack": "the stack (`stack:` configuration)",
    "fidelity_floor": "the agreement floor (`fidelity_floor:`)",
    "origin": "the OpenEvolve metadata",
    "plugin_name": "the plugin name",
    "title": "the title",
}


@dataclass(frozen=True)
class RequestChange:
    """What an edit changed in the request, and what it costs the promotion."""

    changed: tuple[str, ...]  # the parts that differ (``FIRST_READ_BY`` order); empty: the state cannot tell
    stage: Stage | None  # the first stage that reads one of them; None: no stage does (the title)
    redo: bool  # work at or after ``stage`` exists, and is thrown away

    def what(self) -> str:
        if not self.changed:
            return "every part of it, as the saved state does not record which parts the stages ran on"
        names = [PART_NAMES.get(p, p) for p in self.changed]
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]

    def detail(self, why: str) -> str:
        """The audit trail's words: "the request changed: the BLIS claims changed"."""
        parts = "; the saved state does not record the request's parts, so all of it counts as changed"
        return f"{why}{parts}" if not self.changed else f"{why}: {self.what()} changed"


def request_change(state: PipelineState, parts: dict[str, str]) -> RequestChange:
    """Compare the request the stages ran on with ``parts`` (``PromotionRequest.parts``)."""
    if not state.request_parts:
        return RequestChange((), Stage.ANALYZE, _reached(state, Stage.ANALYZE))
    order = {p: i for i, p in enumerate(FIRST_READ_BY)}
    keys = sorted(set(parts) | set(state.request_parts), key=lambda p: (order.get(p, len(order)), p))
    changed = tuple(p for p in keys if parts.get(p) != state.request_parts.get(p))
    read_by = [FIRST_READ_BY.get(p, Stage.ANALYZE) for p in changed]
    stage = min((s for s in read_by if s is not None), default=None)
    return RequestChange(changed, stage, stage is not None and _reached(state, stage))


def _reached(state: PipelineState, stage: Stage) -> bool:
    """Whether any stage from ``stage`` on has finished (its work would be thrown away)."""
    return any(n >= int(stage) for n in state.stages)


def work_done(state: PipelineState) -> bool:
    """Whether restarting would throw away work a person has seen (anything past the dictionary)."""
    return any(n >= int(Stage.TRANSLATE) for n in state.stages)
