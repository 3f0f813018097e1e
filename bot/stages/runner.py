"""Drives the engine: asks what is due, does it through the stages and the forge, saves state.

The only place where the pure state machine meets I/O, and the same in both homes: the caller hands in a Forge
and a StateStore (files locally, the issue's status comment on GitHub). State is saved after every step, so a
killed run resumes where it stopped; a stage interrupted between its commit and the state save reruns, produces
the same bytes, and adds no commit (the forge skips empty commits). A stage that cannot finish raises
``StageFailed``; the promotion is then *failed* at that stage with the reason, and a retry runs it again.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot import pipeline, recheck
from bot.execution import ExecutionNeeded, Executor
from bot.forge.base import Forge, StateStore
from bot.forge.state_file import StateError
from bot.model import (
    Artifact,
    AuditEntry,
    DecidedVia,
    Decision,
    Finding,
    PipelineState,
    PromotionRequest,
    ReviewRound,
    Stage,
    StageRecord,
    counted,
    sha256_text,
)
from bot.model.request_parts import RequestChange, request_change
from bot.stages import STAGE_MODULES
from bot.stages.branch_guard import stage_commit_message
from bot.stages.branch_upkeep import BranchUpkeep
from bot.stages.context import StageContext, StageFailed
from bot.stages.made_by import current, made_by
from bot.stages.restart_notice import restart_notice
from bot.stages.review_publish import publish_decision, publish_review

if TYPE_CHECKING:
    from bot.agents import Agents

__all__ = ["Outcome", "Runner", "StageFailed", "StateError"]


#: What a home's ``pause_before`` returns: None (go on), why it stops, or why and the state to save.
Pause = str | tuple[str, PipelineState] | None


@dataclass
class Outcome:
    state: PipelineState
    waiting_gate: int | None
    halted: pipeline.Halted | None = None
    paused: str | None = None  # why the home stopped before the next step (it resumes on its own)

    @property
    def done(self) -> bool:
        return self.waiting_gate is None and self.halted is None and self.paused is None


class Runner(BranchUpkeep):
    def __init__(
        self,
        request: PromotionRequest,
        forge: Forge,
        store: StateStore,
        *,
        results_dir: Path | None = None,
        allow_sample_data: bool = False,
        approve: frozenset[int] = frozenset(),
        actor: str = "local-user",
        max_rounds: int = pipeline.DEFAULT_MAX_ROUNDS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        log: Callable[[str], None] = lambda line: None,
        executor: Executor | None = None,
        status_context: dict[str, Any] | None = None,
        agents: Agents | None = None,
        notify: Callable[[str], None] | None = None,
        on_reopen: Callable[[PipelineState, PipelineState], tuple[PipelineState, str]] | None = None,
        home_findings: Callable[[int], list[Finding]] | None = None,
    ):
        self.request = request
        self.forge = forge
        self.store = store
        self.status_context = status_context or {}
        self.results_dir = results_dir
        self.allow_sample_data = allow_sample_data
        self.approve = approve
        self.actor = actor
        self.max_rounds = max_rounds
        self.clock = clock
        self.log = log
        self.notify = notify or log  # a re-check's lines: shown even with --quiet (they change what was decided)
        self.on_reopen = on_reopen  # the home's part of a gate the re-check reopened (GitHub: labels, GPU run)
        self.executor = executor
        self.home_findings = home_findings  # a gate's findings only the home makes (GitHub: ``same_plugin``)
        self.agents = agents  # the Claude author and reviewer; None with --llm offline

    # ------------------------------------------------------------ state I/O
    def load_state(self) -> PipelineState | None:
        return self.store.load()

    def save(self, state: PipelineState) -> None:
        """Save the state and show the checklist in the same step (one write on GitHub)."""
        self.store.save(state, self.status_markdown(state))

    def start_or_resume(self) -> PipelineState:
        state = self.load_state()
        if state is None:
            state = pipeline.new_state(
                self.request.id,
                self.request.fingerprint(),
                self.request.branch,
                actor=self.actor,
                now=self.clock(),
                parts=self.request.parts(),
            )
            head = self.forge.ensure_branch(self.request.branch, self.request.fork.base_branch)
            state = state.model_copy(update={"head": head})
            self.save(state)
        elif state.request_fingerprint != self.request.fingerprint():
            before = state
            state, change = self.restart(state, actor=self.actor, why="the request changed")
            self.log(restart_notice(change, before, state))
        elif not state.request_parts:  # saved before the parts were kept: the request it ran on is this one
            state = state.model_copy(update={"request_parts": self.request.parts()})
        state, line = recheck.begin(state, current(llm=self.agents is not None), actor=self.actor, now=self.clock())
        if line is not None:
            self.save(state)
            self.notify(f"re-check: this promotion's stages were {line}")
        return state

    def restart(self, state: PipelineState, *, actor: str, why: str) -> tuple[PipelineState, RequestChange]:
        """The request changed under the promotion: redo it from the first stage that reads the change
        (``pipeline.restart``), and take the files of the stages it redoes off the branch in one commit, with the
        benchmark reports when the plan is redone: a restarted stage must not build on (or test, or judge) what
        the old request produced. Both homes come here; the state is saved."""
        parts = self.request.parts()
        change = request_change(state, parts)
        try:
            new = pipeline.restart(state, self.request.fingerprint(), parts, actor=actor, now=self.clock(), why=why)
        except pipeline.IllegalTransition as exc:
            raise StateError(f"{exc}; use a new --work directory (or a new issue on GitHub)") from None
        if change.redo:
            new = self._remove_redone(state, new)
        self.save(new)
        if self.forge.pull_request(self.request.branch) is not None:  # its title and description follow the edit
            self._sync_pull_request(new)
        return new, change

    # ----------------------------------------------------------------- loop
    def run(self, pause_before: Callable[[PipelineState, pipeline.Step], Pause] | None = None) -> Outcome:
        """Do what is due until a person must decide, the promotion halts or ends, or ``pause_before`` says wait.

        ``pause_before`` lets a home hand a step to someone else (the GitHub home runs stage 5 on GPU
        runners): it returns why to stop before that step (with the state to save when the home recorded what it
        handed over), or None to go on.
        """
        state = self.start_or_resume()
        if state.status.value not in ("rejected", "cancelled", "done") and self.forge.pull_request(self.request.branch):
            self._sync_pull_request(state)  # a retry continued a cancelled promotion: its PR reopens and says so
        while True:
            step = pipeline.next_step(state)
            paused = pause_before(state, step) if pause_before is not None else None
            if paused:
                paused, state = paused if isinstance(paused, tuple) else (paused, state)
                self.log(paused)
                self.save(state)
                return Outcome(state, None, paused=paused)
            match step:
                case pipeline.Finished():
                    self.save(state)
                    self.close_if_stopped(state)
                    return Outcome(state, None)
                case pipeline.Halted():
                    self.save(state)
                    return Outcome(state, None, halted=step)
                case pipeline.AwaitDecision(gate):
                    if gate in self.approve:
                        before = state
                        state = pipeline.decide(
                            state,
                            gate,
                            Decision.APPROVE,
                            actor=self.actor,
                            now=self.clock(),
                            via=DecidedVia.APPROVE_FLAG,
                        )
                        self.save(state)
                        self.publish_decision(before, state)
                        note = state.decisions[-1].critical_note()
                        self.log(f"gate {gate}: approved by {self.actor} (--approve)" + (f"; {note}" if note else ""))
                        continue
                    self.save(state)
                    return Outcome(state, gate)
                case pipeline.RunStage(stage, feedback, review):
                    moved = self._branch_moved(state, self.inputs_hash(state, stage, feedback, review), stage)
                    if moved is not None:  # never build on a commit the bot did not write or a person adopt
                        self.log(f"stage {int(stage)} not run: {moved.reason}")
                        state = pipeline.stage_failed(state, stage, moved.reason, now=self.clock(), fix=moved.fix)
                        self.save(state)
                        continue
                    state = self._note_accepted_commits(state)
                    try:
                        state = self._run_stage(state, stage, feedback, review)
                    except StageFailed as exc:
                        self.log(f"stage {int(stage)} failed: {exc}")
                        state = pipeline.stage_failed(state, stage, str(exc), now=self.clock(), **exc.details)
                    except ExecutionNeeded:
                        raise  # it runs again after the sandboxed job and replays its replies (their usage too)
                    except BaseException:
                        self._keep_paid_calls(state, f"stage {int(stage)}")
                        raise
                    state = self._with_llm_calls(state)
                    self.save(state)
                case pipeline.RunReview(gate, rnd):
                    moved = self._branch_moved(state)
                    if moved is not None:  # a gate must not open on content the bot did not write
                        self.log(f"gate {gate} review not run: {moved.reason}")
                        state = pipeline.review_halted(state, gate, moved.reason, now=self.clock(), fix=moved.fix)
                        self.save(state)
                        continue
                    try:
                        state = self._with_llm_calls(self._run_review(state, gate, rnd))
                    except ExecutionNeeded:
                        raise
                    except BaseException:
                        self._keep_paid_calls(state, f"gate {gate} review")
                        raise
                    self.save(state)

    def decide(self, gate: int, decision: Decision, reason: str | None) -> PipelineState:
        before = self.load_state()
        state = self.apply(
            lambda s: pipeline.decide(s, gate, decision, actor=self.actor, now=self.clock(), reason=reason)
        )
        if before is not None:
            self.publish_decision(before, state)
        self.close_if_stopped(state)
        return state

    def close_if_stopped(self, state: PipelineState) -> None:
        """A rejected or cancelled promotion's PR says who stopped it and why, and is closed unmerged: left alone
        it read as an open draft whose full description would come at stage 7. Both homes come here (the local
        decision, the GitHub home's next ``run``, a cancel); doing it again changes nothing. A retry that
        continues a cancelled promotion reopens it (``_sync_pull_request``)."""
        if state.status.value not in ("rejected", "cancelled") or self.forge.pull_request(self.request.branch) is None:
            return
        self._sync_pull_request(state)
        pr = self.forge.pull_request(self.request.branch)
        if pr is not None:
            self.forge.close_pr(pr)

    def retry(self, stage: int | None = None) -> PipelineState:
        return self.apply(lambda s: pipeline.retry(s, actor=self.actor, now=self.clock(), stage=stage))

    def apply(self, move: Callable[[PipelineState], PipelineState]) -> PipelineState:
        """A person's move on the saved state (decide, retry, cancel); an illegal one is a StateError."""
        state = self.load_state()
        if state is None:
            raise StateError("no promotion has been started here; start one first")
        try:
            new = move(state)
        except pipeline.IllegalTransition as exc:
            raise StateError(str(exc)) from None
        if new is not state:
            self.save(new)
        return new

    # --------------------------------------------------------------- stages
    def context(self, state: PipelineState, feedback: str | None = None, review: str | None = None) -> StageContext:
        return StageContext(
            self.request,
            self.forge,
            state,
            feedback=feedback,
            review=review,
            results_dir=self.results_dir,
            allow_sample_data=self.allow_sample_data,
            executor=self.executor,
            agents=self.agents,
            home=self.status_context.get("home", "local"),
            work=self.status_context.get("work"),
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
        if stage == Stage.RUN_VALIDATE and self.allow_sample_data:
            parts["sample"] = "allowed"  # the same reports judged with and without sample data differ
        return sha256_text(json.dumps(parts, sort_keys=True))

    def judged_on_other_results(self, state: PipelineState) -> bool:
        """Whether the open gate 3 decides on verdicts stage 5 drew from other reports than it would read now
        (the ``results_dir`` given after it ran, or changed since): they are not judged until a person asks."""
        rec = state.stages.get(int(Stage.RUN_VALIDATE))
        if rec is None:
            return False
        now = self.inputs_hash(state, Stage.RUN_VALIDATE, rec.feedback, rec.review)
        return state.judged_on_other_inputs(pipeline.GATE_AFTER[Stage.RUN_VALIDATE], Stage.RUN_VALIDATE, now)

    def _with_llm_calls(self, state: PipelineState) -> PipelineState:
        """The state with the Claude calls of the step just finished (their cost belongs to the promotion)."""
        calls = self.agents.take_calls() if self.agents is not None else []
        if not calls:
            return state
        state = state.model_copy(deep=True)
        state.llm.calls.extend(calls)
        return state

    def _keep_paid_calls(self, state: PipelineState, step: str) -> None:
        """A step that stops on an error (Claude failed, the budget, the forge refused) commits nothing and its
        result is not saved, but the Claude calls it already paid for are: they count against the token budget
        and in every total, so retries cannot spend past the cap unseen. The original error is what the person
        sees; a failure to save this is only logged. (A step stopped for a sandboxed execution is not recorded
        here: it runs again and replays its replies, recording their usage then.)"""
        calls = self.agents.take_calls() if self.agents is not None else []
        if not calls:
            return
        s = state.model_copy(deep=True)
        s.llm.calls.extend(calls)
        s.audit.append(
            AuditEntry(
                at=self.clock(),
                actor="bot",
                event="claude calls of an unfinished step",
                detail=f"{step}: {len(calls)} paid call(s) recorded; the step did not finish and is not saved",
            )
        )
        try:
            self.save(s)
        except Exception as exc:
            self.log(f"{step}: the {len(calls)} paid Claude call(s) could not be recorded: {exc}")

    def _run_stage(self, state: PipelineState, stage: Stage, feedback: str | None, review: str | None) -> PipelineState:
        why = " (author fix for the review's findings)" if review else (" (with feedback)" if feedback else "")
        self.log(f"stage {int(stage)}: {stage.title}{why}")
        if self.agents is not None:
            self.agents.begin_step(state)
        module = importlib.import_module(STAGE_MODULES[stage])
        output = module.run(self.context(state, feedback, review))
        files = output.encoded()
        previous = state.stages.get(int(stage))
        stale = tuple(a.path for a in previous.artifacts if a.path not in files) if previous else ()
        inputs = self.inputs_hash(state, stage, feedback, review)
        message = stage_commit_message(stage, output.summary, feedback, review, inputs)
        commit = self.forge.commit_files(self.request.branch, files, message=message, remove=stale)
        head = commit or self.forge.branch_head(self.request.branch)  # where the bot leaves the branch
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
            problems=list(output.problems),
            finished_at=self.clock(),
            made_by=made_by(stage, llm=self.agents is not None),
        )
        if state.recheck is not None:  # another bot made it: kept or reopened by what came out (bot.recheck)
            before = state.model_copy(update={"head": head})
            state, line = recheck.stage_finished(state, record, now=self.clock())
            state, line = self._drop_reopened(before, state.model_copy(update={"head": head}), line)
            self.notify(f"  re-check: {line}")
        else:
            state = pipeline.stage_finished(state, record, changed=changed, now=self.clock())
            state = state.model_copy(update={"head": head})
        if Stage.TRANSLATE <= stage < Stage.PR:  # the draft PR carries the artifacts from stage 2 on
            self._sync_pull_request(state)
        if state.status.value == "awaiting-decision" and state.open_gate in state.unconverged:
            # The author's rerun changed nothing: the last review report now says the gate opened unconverged.
            self._publish_review(state, state.reviews[state.open_gate][-1])
        return state

    def _drop_reopened(self, before: PipelineState, after: PipelineState, line: str) -> tuple[PipelineState, str]:
        """A gate the re-check reopened: the files of the stages it dropped leave the branch in one commit, as a
        restart's do (they run again after the decision; meanwhile nothing may read, test or judge them), the
        home undoes what else it dropped (``on_reopen``: on GitHub the dropped decisions' approval labels and
        the benchmark run, as a restart does), and its line, kept in the audit trail, says so."""
        at = len(after.audit) - 1  # the reopening, said in full once all is done
        if not after.audit[at].event.endswith("reopened by the re-check"):
            return after, line
        dropped = sorted(set(before.stages) - set(after.stages))
        new = self._remove_redone(before, after, Stage(dropped[0])) if dropped else after
        if new is not after:
            line = recheck.removed(line, dropped, new.audit[-1].detail)
        if self.on_reopen is not None:
            new, said = self.on_reopen(before, new)
            line = f"{line}; {said}" if said else line
        new = new.model_copy(deep=True) if new is after else new
        new.audit[at] = new.audit[at].model_copy(update={"detail": line})
        return new, line

    def _run_review(self, state: PipelineState, gate: int, rnd: int) -> PipelineState:
        from bot.review import review_gate
        from bot.review.brief import brief, cost_breakdown
        from bot.review.change_request import gate_examples

        ctx = self.context(state)
        if self.agents is not None:
            self.agents.begin_step(state)
        findings = review_gate(gate, ctx) + (self.home_findings(gate) if self.home_findings else [])
        reviewer = "checklist" if self.agents is None else f"checklist + {self.agents.label}"
        headline, read_first = brief(gate, ctx)  # what the person decides on, and what to read first
        review = ReviewRound(
            gate=gate,
            round=rnd,
            reviewer=reviewer,
            findings=sorted(findings, key=lambda f: f.sort_key()),
            headline=headline,
            headline_lines=cost_breakdown(ctx) if gate == 2 else [],
            read_first=read_first,
            directive_examples=gate_examples(gate, ctx),
            places=ctx.id_places(),  # its ids do not depend on the plugin type (``Finding.identity``)
        )
        self.log(f"gate {gate} review round {rnd}: {counted(review.blocking)} blocking of {counted(findings)} findings")
        state = pipeline.review_finished(state, review, now=self.clock(), max_rounds=self.max_rounds)
        self._publish_review(state, review)
        return state

    def _publish_review(self, state: PipelineState, review: ReviewRound) -> None:
        publish_review(self.forge, self.request.branch, self.context(state), state, review)

    def publish_decision(self, before: PipelineState, after: PipelineState) -> None:
        """The decided gate's review, on the issue and on the PR, says who decided it (``review_publish``)."""
        publish_decision(self.forge, self.request.branch, self.context(before), before, after)

    def _sync_pull_request(self, state: PipelineState) -> None:
        from bot.stages.pull_request import draft_body, pr_title

        ctx = self.context(state)
        pr = self.forge.open_or_update_pr(
            self.request.branch, self.request.fork.base_branch, pr_title(ctx), draft_body(ctx)
        )
        if state.status.value not in ("rejected", "cancelled"):
            self.forge.reopen_pr(pr)  # a cancel or a person closed it; the promotion goes on

    def status_markdown(self, state: PipelineState) -> str:
        from bot.render import render

        return render(
            "status_comment.md.j2",
            state=state,
            request=self.request,
            describe=pipeline.describe(state),
            Stage=Stage,
            gates=pipeline.GATE_COVERS,
            home=self.status_context.get("home", "local"),
            sample_data=self.allow_sample_data,
            recheck=recheck.shown(state),
            recheck_due=recheck.due(state, current(llm=self.agents is not None)),
            **{k: v for k, v in self.status_context.items() if k not in ("home", "links")},
            links=self._links(),
        )

    def _links(self) -> dict[str, str]:
        """The home's links, with the PR's next to the branch once it exists: it is opened at stage 2, after the
        links were gathered, and a person on the issue should not have to search for it."""
        links = dict(self.status_context.get("links") or {})
        if not links or "pull request" in links:
            return links
        pr = self.forge.pull_request(self.request.branch)
        if pr is None:
            return links
        out = {}
        for name, url in links.items():
            out[name] = url
            if name == "branch":
                out["pull request"] = pr.url
        return out if "pull request" in out else {**out, "pull request": pr.url}


def _dir_hash(path: Path | None) -> str:
    if path is None:
        return "none"
    digest = []
    for f in sorted(p for p in Path(path).rglob("*") if p.is_file()):
        digest.append(f"{f.relative_to(path)}:{sha256_text(f.read_bytes())}")
    return sha256_text("\n".join(digest))
