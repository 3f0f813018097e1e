"""Whether the promotion branch is still where the bot left it, before the bot builds on it again.

The branch lives on a fork people can push to. A commit someone adds while a
gate waits would otherwise ship in the PR under the bot's name, and a branch
reset under the bot would make the next stage read files that are gone. So the
state records the commit the bot last left the branch at (``PipelineState.head``)
and, before each step, the branch head is compared with it. The bot builds only
on commits it wrote or a person adopted (``promote resume --adopt-branch``).

Two differences are the bot's own. A run killed between its commit and the state
save leaves one commit on top whose ``Promotion-Inputs`` trailer is exactly the
inputs hash of the step that is due again; that commit is the interrupted write
of this very step, and the rerun goes on from it. And where stage 5 reads its
reports from the branch (the GitHub home), the benchmark job delivers them there:
commits that only add files under the plan's ``results/`` directory, while stage 5
is due, are that delivery (stage 5 validates every report it reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.escape import commit_block, commit_subject
from bot.forge.base import Forge
from bot.model import PipelineState, Stage


@dataclass(frozen=True)
class BranchMoved:
    branch: str
    recorded: str  # where the bot left the branch
    head: str | None  # where it is now (None: deleted)
    added: list[tuple[str, str]]  # (sha, subject) on top of ``recorded``, oldest first
    rewritten: bool  # ``recorded`` is no longer on the branch: reset, rebased, force-pushed or deleted
    stage: int | None  # the stage whose commit ``recorded`` is, if any

    @property
    def reason(self) -> str:
        left = f"{self.recorded[:12]}" + (f" (stage {self.stage}'s commit)" if self.stage else "")
        if self.rewritten:
            now = f"is at {self.head[:12]}" if self.head else "was deleted"
            return (
                f"the promotion branch {self.branch} was reset or rewritten: it {now} and no longer holds "
                f"{left}, where the bot left it"
            )
        shown = "; ".join(f'{sha[:12]} "{subject}"' for sha, subject in self.added[:3])
        more = f" and {len(self.added) - 3} more" if len(self.added) > 3 else ""
        return (
            f"the promotion branch {self.branch} moved: the bot left it at {left}, and "
            f"{len(self.added)} commit(s) it did not write are on top: {shown}{more}; the bot builds only on "
            "commits it wrote or a person adopted"
        )

    @property
    def fix(self) -> str:
        back = f"move the branch back to the bot's commit (in the fork: git update-ref refs/heads/{self.branch} {self.recorded})"
        if self.rewritten:
            return (
                f"{back}, then resume (`/retry` on the promotion issue, or `promote resume` in a local rehearsal); "
                "the commit is still in the fork's objects"
            )
        return (
            "check those commits, then adopt them to build on them (comment `/adopt-branch` on the promotion "
            f"issue, or `promote resume --adopt-branch` in a local rehearsal); or {back} and resume"
        )


def check_branch(
    forge: Forge,
    state: PipelineState,
    branch: str,
    base: str,
    *,
    due_inputs: str | None = None,
    delivery: str | None = None,
) -> BranchMoved | None:
    """None when the branch is where ``state`` says the bot left it (or the state predates ``head``).

    ``due_inputs``: the inputs hash of the stage about to run, to recognise that stage's own interrupted write.
    ``delivery``: a directory the due stage expects others to deliver into (stage 5's reports on GitHub).
    """
    recorded = state.head
    if recorded is None:
        return None
    head = forge.branch_head(branch)
    if head == recorded:
        return None
    on_branch = forge.commits(branch, base) if head is not None else []
    shas = [sha for sha, _ in on_branch]
    committed = {rec.commit: int(n) for n, rec in state.stages.items() if rec.commit}
    if recorded in shas:
        added, rewritten = on_branch[shas.index(recorded) + 1 :], False
    elif head is not None and not committed:
        added, rewritten = on_branch, False  # the bot has not committed yet: it left the branch at the base
    else:
        added, rewritten = [], True
    if (
        not rewritten
        and due_inputs is not None
        and len(added) == 1
        and forge.find_commit(branch, f"Promotion-Inputs: {due_inputs}") == head
    ):
        return None  # the due step's own commit, written just before an interrupted state save
    if (
        not rewritten
        and delivery
        and added
        and all(p.startswith(delivery) for sha, _ in added for p in forge.changed_paths(sha) or [""])
    ):
        return None  # the benchmark's reports, delivered where the due stage reads them
    return BranchMoved(branch, recorded, head, added, rewritten, committed.get(recorded))


def stage_commit_message(stage: Stage, summary: str, feedback: str | None, review: str | None, inputs: str) -> str:
    """A stage's commit, with the trailers the guard reads (``Promotion-Inputs``: a rerun recognises its own
    interrupted write). Subject and quoted text escaped (bot.escape): a reason cannot add lines that pass for
    our trailers."""
    title = f"stage {int(stage)}: {stage.title}"
    first = summary.splitlines()[0] if summary else ""
    subject = commit_subject(f"{title}: {first}" if first else title)
    body = []
    if feedback:
        body.append("Rerun with feedback:\n" + commit_block(feedback.strip("\n")))
    if review:
        body.append("Author fix for:\n" + commit_block(review.strip("\n")))
    body.append(f"Promotion-Stage: {int(stage)}\nPromotion-Inputs: {inputs}")
    return subject + "\n\n" + "\n\n".join(body) + "\n"
