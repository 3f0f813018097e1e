"""The promotion branch as the runner keeps it: whether it is still where the bot left it before a step
(``_branch_moved``, through ``bot.stages.branch_guard``), the commits others added that a person adopts
(``adopted``) or the guard accepts (``_note_accepted_commits``), and the files a restart or a re-check's reopened
gate takes off it (``_remove_redone``).

A mixin of ``bot.stages.runner.Runner``, apart from the loop that drives the engine: it needs the runner's
``forge``, ``request``, ``results_dir``, ``actor``, ``clock``, ``log``, ``context`` and ``apply``.
"""

from __future__ import annotations

from bot import pipeline
from bot.escape import commit_block, commit_subject
from bot.model import AuditEntry, PipelineState, Stage
from bot.stages.branch_guard import BranchMoved, check_branch


class BranchUpkeep:
    """What the runner does to and about the promotion branch (see the module's docstring)."""

    def adopt_branch(self) -> PipelineState:
        """A person checked the commits others added on the promotion branch: the bot may build on them."""
        return self.apply(self.adopted)

    def adopted(self, state: PipelineState, actor: str | None = None) -> PipelineState:
        """``state`` with the commits added on top of the bot's adopted (IllegalTransition for a rewritten branch).

        The GitHub home applies it through its once-per-event guard; the local home through ``adopt_branch``.
        """
        moved = self._branch_moved(state)
        if moved is None:
            return state
        if moved.rewritten or moved.head is None:
            raise pipeline.IllegalTransition(
                f"{moved.reason}; only commits added on top of the bot's can be adopted: {moved.fix}"
            )
        s = state.model_copy(deep=True)
        s.head = moved.head
        detail = ", ".join(f"{sha[:12]} {subject}" for sha, subject in moved.added)
        s.audit.append(
            AuditEntry(at=self.clock(), actor=actor or self.actor, event="adopted branch commits", detail=detail)
        )
        self.log(f"adopted {len(moved.added)} commit(s) on {moved.branch}: {detail}")
        return s

    def _note_accepted_commits(self, state: PipelineState) -> PipelineState:
        """The branch guard let the due stage build on commits the state does not record (the stage's own
        interrupted write, or the benchmark's delivered reports): say which in the audit trail, so nothing on the
        branch is there without a record of why the bot accepted it."""
        if state.head is None:
            return state
        head = self.forge.branch_head(self.request.branch)
        if head is None or head == state.head:
            return state
        shas = [sha for sha, _ in self.forge.commits(self.request.branch, self.request.fork.base_branch)]
        added = shas[shas.index(state.head) + 1 :] if state.head in shas else shas
        s = state.model_copy(deep=True)
        s.audit.append(
            AuditEntry(
                at=self.clock(),
                actor="bot",
                event="built on commits the guard accepted",
                detail=", ".join(sha[:12] for sha in added),
            )
        )
        return s

    def _branch_moved(
        self, state: PipelineState, due_inputs: str | None = None, stage: Stage | None = None
    ) -> BranchMoved | None:
        delivery = None
        if stage == Stage.RUN_VALIDATE and self.results_dir is None:  # the reports come on the branch
            delivery = f"{self.context(state).paths.benchmarks}/results/"
        return check_branch(
            self.forge,
            state,
            self.request.branch,
            self.request.fork.base_branch,
            due_inputs=due_inputs,
            delivery=delivery,
        )

    def _remove_redone(self, old: PipelineState, new: PipelineState, start: Stage | None = None) -> PipelineState:
        """``new`` after one commit that removes the files of the stages ``old`` had and ``new`` redoes (from
        ``start``, by default the stage due: a re-check that reopened a gate redoes them after the decision).

        Nothing is committed on a branch that moved under the bot (the next step halts on the branch guard, as for
        any move): removing files on top of commits nobody checked would adopt them."""
        start = start or new.next_stage
        assert start is not None
        kept = {a.path for a in new.artifact_index()}
        stale = {a.path for n, r in old.stages.items() if n not in new.stages for a in r.artifacts} - kept
        paths = self.context(new).paths
        if start <= Stage.IMPLEMENT_TESTS:  # the plan is redone: reports measured for the old one are not evidence
            stale |= set(self.forge.list_files(self.request.branch, f"{paths.benchmarks}/results/"))
        if not stale or self._branch_moved(old, stage=old.next_stage) is not None:
            return new
        # A fork file a stage changed (the registration in runner.go, .gitattributes) goes back to the base's.
        base = self.request.fork.base_branch
        restore = {p: data for p in sorted(stale) if (data := self.forge.read_file(base, p)) is not None}
        recheck = new.audit[-1].event.endswith("reopened by the re-check")  # else an edit's restart
        how = ("re-check", "Recheck") if recheck else ("restart", "Restart")
        message = (
            commit_subject(f"{how[0]} from stage {int(start)}: remove the files of the stages redone")
            + "\n\n"
            + commit_block(new.audit[-1].detail)
            + f"\n\nPromotion-{how[1]}: {int(start)}\n"
        )
        remove = tuple(sorted(stale - set(restore)))
        commit = self.forge.commit_files(self.request.branch, restore, message=message, remove=remove)
        if commit is None:
            return new
        s = new.model_copy(deep=True)
        s.head = commit
        detail = f"{commit[:12]}: {len(stale)} files"
        s.audit.append(
            AuditEntry(at=self.clock(), actor="bot", event="removed the files of the stages redone", detail=detail)
        )
        return s
