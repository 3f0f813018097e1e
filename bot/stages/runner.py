"""Drives the engine: asks what is due, does it through the stages and the forge, saves state.

The only place where the pure state machine meets I/O. State is written to
``<work>/state.json`` after every step, so a killed run resumes where it
stopped; a stage interrupted between its commit and the state save reruns,
produces the same bytes, and adds no commit (the forge skips empty commits).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot import pipeline
from bot.execution import Executor
from bot.forge.base import Forge
from bot.model import (
    Artifact,
    Decision,
    PipelineState,
    PromotionRequest,
    RequestError,
    ReviewRound,
    Stage,
    StageRecord,
    sha256_text,
)
from bot.stages import STAGE_MODULES
from bot.stages.context import StageContext

STATUS_MARKER = "promotion-bot:status"


def review_marker(gate: int) -> str:
    return f"promotion-bot:review-gate-{gate}"


class StateError(RequestError):
    """The saved state cannot be used as asked."""


@dataclass
class Outcome:
    state: PipelineState
    waiting_gate: int | None

    @property
    def done(self) -> bool:
        return self.waiting_gate is None


class Runner:
    def __init__(
        self,
        request: PromotionRequest,
        forge: Forge,
        work_dir: Path,
        *,
        results_dir: Path | None = None,
        approve: frozenset[int] = frozenset(),
        actor: str = "local-user",
        max_rounds: int = pipeline.DEFAULT_MAX_ROUNDS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        log: Callable[[str], None] = lambda line: None,
        executor: Executor | None = None,
    ):
        self.request = request
        self.forge = forge
        self.work = Path(work_dir)
        self.results_dir = results_dir
        self.approve = approve
        self.actor = actor
        self.max_rounds = max_rounds
        self.clock = clock
        self.log = log
        self.executor = executor

    # ------------------------------------------------------------ state I/O
    @property
    def state_file(self) -> Path:
        return self.work / "state.json"

    def load_state(self) -> PipelineState | None:
        if not self.state_file.exists():
            return None
        try:
            return PipelineState.model_validate_json(self.state_file.read_text())
        except ValueError:
            raise StateError(f"{self.state_file}: saved state is unreadable; move it away and start again") from None

    def save_state(self, state: PipelineState) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(state.model_dump_json(indent=2))
        tmp.replace(self.state_file)

    def start_or_resume(self) -> PipelineState:
        state = self.load_state()
        if state is None:
            state = pipeline.new_state(
                self.request.id, self.request.fingerprint(), self.request.branch, actor=self.actor, now=self.clock()
            )
            self.forge.ensure_branch(self.request.branch, self.request.fork.base_branch)
            self.save_state(state)
        elif state.request_fingerprint != self.request.fingerprint():
            raise StateError(
                f"{self.work}: this promotion was started from a different request or source; "
                "use a new --work directory (or delete its state.json) to start over"
            )
        return state

    # ----------------------------------------------------------------- loop
    def run(self) -> Outcome:
        state = self.start_or_resume()
        while True:
            step = pipeline.next_step(state)
            match step:
                case pipeline.Finished():
                    self._post_status(state)
                    return Outcome(state, None)
                case pipeline.AwaitDecision(gate):
                    if gate in self.approve:
                        state = pipeline.decide(state, gate, Decision.APPROVE, actor=self.actor, now=self.clock())
                        self.save_state(state)
                        self.log(f"gate {gate}: approved by {self.actor} (--approve)")
                        continue
                    self._post_status(state)
                    return Outcome(state, gate)
                case pipeline.RunStage(stage, feedback, review):
                    state = self._run_stage(state, stage, feedback, review)
                    self.save_state(state)
                    self._post_status(state)
                case pipeline.RunReview(gate, rnd):
                    state = self._run_review(state, gate, rnd)
                    self.save_state(state)

    def decide(self, gate: int, decision: Decision, reason: str | None) -> PipelineState:
        state = self.load_state()
        if state is None:
            raise StateError(
                f"{self.work}: no promotion has been started here; run `promote run REQUEST --work {self.work}`"
            )
        try:
            state = pipeline.decide(state, gate, decision, actor=self.actor, now=self.clock(), reason=reason)
        except pipeline.IllegalTransition as exc:
            raise StateError(str(exc)) from None
        self.save_state(state)
        self._post_status(state)
        return state

    # --------------------------------------------------------------- stages
    def context(self, state: PipelineState, feedback: str | None = None, review: str | None = None) -> StageContext:
        return StageContext(
            self.request,
            self.forge,
            state,
            feedback=feedback,
            review=review,
            results_dir=self.results_dir,
            executor=self.executor,
        )

    def inputs_hash(self, state: PipelineState, stage: Stage, feedback: str | None, review: str | None = None) -> str:
        earlier = [a.model_dump(mode="json") for a in state.artifact_index() if a.stage < stage]
        parts = {
            "request": self.request.fingerprint(),
            "stage": int(stage),
            "feedback": feedback or "",
            "review": review or "",
            "earlier": earlier,
            "results": _dir_hash(self.results_dir) if stage == Stage.RUN_VALIDATE else "",
        }
        return sha256_text(json.dumps(parts, sort_keys=True))

    def _run_stage(self, state: PipelineState, stage: Stage, feedback: str | None, review: str | None) -> PipelineState:
        why = " (author fix for the review's findings)" if review else (" (with feedback)" if feedback else "")
        self.log(f"stage {int(stage)}: {stage.title}{why}")
        module = importlib.import_module(STAGE_MODULES[stage])
        output = module.run(self.context(state, feedback, review))
        files = output.encoded()
        previous = state.stages.get(int(stage))
        stale = tuple(a.path for a in previous.artifacts if a.path not in files) if previous else ()
        inputs = self.inputs_hash(state, stage, feedback, review)
        message = _commit_message(stage, output.summary, feedback, review, inputs)
        commit = self.forge.commit_files(self.request.branch, files, message=message, remove=stale)
        if commit is None:  # identical content: a resumed or no-op rerun
            commit = self.forge.find_commit(self.request.branch, f"Promotion-Stage: {int(stage)}")
        artifacts = [Artifact(path=p, sha256=sha256_text(b), stage=stage) for p, b in sorted(files.items())]
        changed = previous is None or {a.path: a.sha256 for a in previous.artifacts} != {
            a.path: a.sha256 for a in artifacts
        }
        record = StageRecord(
            stage=stage,
            inputs_hash=inputs,
            artifacts=artifacts,
            commit=commit,
            feedback=feedback,
            review=review,
            summary=output.summary,
            finished_at=self.clock(),
        )
        state = pipeline.stage_finished(state, record, changed=changed, now=self.clock())
        if state.status.value == "awaiting-decision" and state.open_gate in state.unconverged:
            # The author's rerun changed nothing: the last review report now says the gate opened unconverged.
            self._publish_review(state, state.reviews[state.open_gate][-1])
        return state

    def _run_review(self, state: PipelineState, gate: int, rnd: int) -> PipelineState:
        from bot.review import review_gate

        ctx = self.context(state)
        findings = review_gate(gate, ctx)
        review = ReviewRound(gate=gate, round=rnd, findings=sorted(findings, key=lambda f: f.sort_key()))
        self.log(f"gate {gate} review round {rnd}: {len(review.blocking)} blocking of {len(findings)} findings")
        state = pipeline.review_finished(state, review, now=self.clock(), max_rounds=self.max_rounds)
        self._publish_review(state, review)
        return state

    def _publish_review(self, state: PipelineState, review: ReviewRound) -> None:
        from bot.review import render_review_report

        self.forge.upsert_comment(review_marker(review.gate), render_review_report(review, self.context(state), state))

    def _post_status(self, state: PipelineState) -> None:
        from bot.render import render

        body = render(
            "status_comment.md.j2",
            state=state,
            request=self.request,
            describe=pipeline.describe(state),
            Stage=Stage,
            gates=pipeline.GATE_COVERS,
            work=str(self.work),
        )
        self.forge.upsert_comment(STATUS_MARKER, body)


def _commit_message(stage: Stage, summary: str, feedback: str | None, review: str | None, inputs: str) -> str:
    title = f"stage {int(stage)}: {stage.title}"
    first = summary.splitlines()[0] if summary else ""
    subject = f"{title}: {first}" if first else title
    body = []
    if feedback:
        body.append("Rerun with feedback:\n" + "\n".join(f"  {line}" for line in feedback.splitlines()))
    if review:
        body.append("Author fix for:\n" + "\n".join(f"  {line}" for line in review.splitlines()))
    body.append(f"Promotion-Stage: {int(stage)}\nPromotion-Inputs: {inputs}")
    return subject[:120] + "\n\n" + "\n\n".join(body) + "\n"


def _dir_hash(path: Path | None) -> str:
    if path is None:
        return "none"
    digest = []
    for f in sorted(p for p in Path(path).rglob("*") if p.is_file()):
        digest.append(f"{f.relative_to(path)}:{sha256_text(f.read_bytes())}")
    return sha256_text("\n".join(digest))
