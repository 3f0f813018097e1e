"""The pipeline state a run saves and a resumed run (or the GitHub handler) reads back: stages, gates, audit, LLM usage."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from bot.model.base import DecidedVia, Decision, Stage, Strict
from bot.model.findings import ReviewRound

# --------------------------------------------------------------------------
# Pipeline state
# --------------------------------------------------------------------------


class Artifact(Strict):
    path: str = Field(description="path on the promotion branch")
    sha256: str
    stage: Stage


class StageRecord(Strict):
    stage: Stage
    inputs_hash: str = Field(description="hash of everything the stage read; equal hash = nothing to redo")
    artifacts: list[Artifact] = Field(default_factory=list)
    commit: str | None = None
    feedback: str | None = Field(
        default=None, description="the change-request reasons the stage ran with (every one at its gate so far)"
    )
    review: str | None = Field(default=None, description="review findings the author-fix rerun was given")
    summary: str = ""
    problems: list[str] = Field(
        default_factory=list,
        description="what the stage's own checks found wrong (e.g. failing Go tests); its gate's review raises "
        "them as blocking findings, and no status shows this stage as passed",
    )
    finished_at: datetime
    made_by: dict[str, str] = Field(
        default_factory=dict,
        description="what made the artifacts: the dictionary version and digest, the translator's digest, the "
        "prompt versions on the Claude path (empty: saved by a bot that did not record it), so a resume by "
        "another bot redoes what it would make differently (``bot.recheck``)",
    )


class Recheck(Strict):
    """A re-check in progress: the bot that made some finished stages differs from this one, so those stages run
    again, and a gate's decision is kept only when the artifacts it approved come out byte-identical."""

    why: str = Field(description="one line: what changed and what is redone")
    redo: list[int] = Field(description="the stages still to run again, in order")
    dirty: list[int] = Field(
        default_factory=list,
        description="unused: a stage that comes out different reopens its gate at once (kept so saved states load)",
    )
    kept: list[int] = Field(default_factory=list, description="gates whose decision stays (artifacts identical)")
    resume_stage: Stage | None = Field(description="where the promotion was: the stage due")
    resume_gate: int | None = Field(description="where the promotion was: the open gate")
    resume_status: str = Field(description="where the promotion was: its status")
    resume_round: int = 0


#: What is said of a decision whose ``via`` is None: a person's or the --approve flag's cannot be told apart, so
#: it is never shown as a person's (the PR stays a draft over it, ``bot.stages.pull_request.draft_reasons``).
HOW_NOT_RECORDED = "how it was decided is not recorded (saved by an older bot)"


class GateDecision(Strict):
    gate: int = Field(ge=1, le=3)
    decision: Decision
    actor: str
    at: datetime
    reason: str | None = None
    via: DecidedVia | None = Field(
        default=None, description="a person's command or label, or the --approve flag (None: saved before it was kept)"
    )
    open_critical: list[str] = Field(
        default_factory=list,
        description="an approval's record of the CRITICAL findings open at the gate: each one's check id",
    )
    critical_count: int | None = Field(
        default=None,
        description="how many CRITICAL findings were open, when more than ``open_critical`` lists: a bounded "
        "round counts a check's many findings in one (``findings.bounded``); None: one per entry",
    )
    round: int | None = Field(
        default=None, description="the review round decided on (rounds count from 1 again after a change request)"
    )
    written_at: datetime | None = Field(
        default=None,
        description="when the person wrote the command, by GitHub's clock (None: not a comment), so a decision "
        "written before this one and handled after it is known to have been made on an earlier review",
    )
    comment: int | None = Field(
        default=None,
        description="the id of the issue comment whose command made it (GitHub, via command), so a saved state's "
        "decision is checked against that comment (``bot.github.vouch``); None: not a command, or saved before it "
        "was kept, and an older state's command decision is then matched to its writer's comment written at "
        "``written_at`` (none found: an approval is refused until the gate's label is applied again, a change "
        "request or a rejection until the promotion starts over)",
    )

    def critical_note(self) -> str:
        """'2 CRITICAL findings were open when approved: G1.unknown-signal, hazard.unmapped-signal', or ''.

        Approving over them is the person's call; every place that shows the approval says it was made over them.
        """
        if not self.open_critical:
            return ""
        n = self.critical_count or len(self.open_critical)
        checks = ", ".join(dict.fromkeys(self.open_critical))
        return f"{n} CRITICAL finding{'s' if n != 1 else ''} {'were' if n != 1 else 'was'} open when approved: {checks}"

    def how(self) -> str:
        """Who decided and how, for people: "by alice", or "by alice's --approve flag (nobody read the review)"."""
        if self.via is DecidedVia.APPROVE_FLAG:
            return f"by --approve ({self.actor}'s run; no person decided at the open gate)"
        if self.via is None:
            return f"by {self.actor}; {HOW_NOT_RECORDED}"
        return f"by {self.actor}" + (" (label)" if self.via is DecidedVia.LABEL else "")


class AuditEntry(Strict):
    at: datetime
    actor: str
    event: str
    detail: str = ""
    role: str | None = Field(default=None, description="the actor's role on the repository when they acted (GitHub)")
    delivery: str | None = Field(
        default=None,
        description="the GitHub event (run or delivery id) that carried it; comment-<id>: a command a later run "
        "answered, its own run dropped; labeled-<id>: a gate label a later run decided (the issue event's id)",
    )


class Status(StrEnum):
    RUNNING = "running"  # a stage or a review is due
    AWAITING_DECISION = "awaiting-decision"  # a gate's review converged; a human decides
    FAILED = "failed"  # a stage could not finish; a retry runs it again
    CANCELLED = "cancelled"  # a person stopped the promotion; a retry continues where it stopped
    DONE = "done"  # stage 7 finished
    REJECTED = "rejected"


class StageFailure(Strict):
    """Why the due stage could not finish, and what a person does about it."""

    stage: Stage
    reason: str
    fix: str = Field(default="", description="what to change before retrying, when the reason alone does not say")
    reports: bool = Field(
        default=False,
        description="stage 5 failed on the benchmark reports on the promotion branch, none usable: a plain retry "
        "judges the same reports again; a new benchmark run (`/retry 5` on GitHub) replaces them",
    )
    at: datetime


class BenchmarkDispatch(Strict):
    """The GPU benchmark the GitHub home dispatched for stage 5, kept until stage 5 finishes or fails.

    Every run that finds stage 5 due while this names the branch's commit waits instead of dispatching again: an
    edit or a `/retry` during the wait used to queue a copy behind the running benchmark, which then failed on the
    moved branch (or ran the whole plan again). A person re-dispatches on purpose with `/retry 5`. The run GitHub
    started is kept when GitHub names it (``return_run_details``), so a cancel, a restart or `/retry 5` stops that
    run instead of leaving it on the GPU runners (a needs-info edit does not: the issue's author needs no role), and
    a run that ended without its reports is noticed (``bot.events.benchmark.ended``).
    """

    commit: str = Field(description="the commit benchmarked (the branch's commit gate 2 approved)")
    at: datetime = Field(description="when the bot asked for it")
    runs_url: str = Field(default="", description="where its run shows: the benchmark workflow's runs page")
    run_id: int | None = Field(
        default=None,
        description="the workflow run the dispatch started (None: GitHub did not name it; an older GitHub "
        "Enterprise Server answers the dispatch with 204, and then nobody but a person can cancel it)",
    )
    run_url: str = Field(default="", description="that run's page, when GitHub named it")
    runner_labels: list[str] = Field(
        default_factory=list, description="the runner labels the dispatch asked for (`gpu.runner_labels`)"
    )
    run_status: str = Field(
        default="",
        description="the run's status when the bot last looked (queued, pending, in_progress, ...; '' not seen)",
    )

    def labels(self) -> str:
        """The runner labels as code spans (Markdown; `gpu.runner_labels` admits no backtick or `|`)."""
        return ", ".join(f"`{label}`" for label in self.runner_labels)

    def queue_note(self) -> str:
        """What the wait adds while GitHub holds the run in its queue ("" otherwise): a fork without a runner
        that has the labels sees only "waits" for up to 24 hours, with nothing saying why. A pending run waits
        for an earlier benchmark run of the promotion to end (benchmark.yml's concurrency group), not for a runner."""
        if self.run_status == "pending":
            return "; its run is pending: it waits for an earlier benchmark run of this promotion to end"
        if self.run_status not in ("queued", "requested"):
            return ""
        return f"; its run is queued: no runner with the labels {self.labels()} has picked it up yet"

    def link(self) -> str:
        """Where its run shows (Markdown): the run itself when GitHub named it, else the workflow's runs page."""
        if self.run_id is not None and self.run_url:
            return f"[benchmark run {self.run_id}]({self.run_url})"
        return f"[benchmark runs]({self.runs_url})" if self.runs_url else ""

    def still_running(self) -> str:
        """What a cancel, a restart or a needs-info reply must not hide when the bot could not stop the GPU job
        (GitHub did not name its run, or refused to cancel it): it goes on, and a person can cancel it (Markdown)."""
        if self.run_id is not None and self.run_url:
            where = f" ({self.link()})"
        else:
            where = f" on the {self.link()} page" if self.runs_url else ""
        return (
            f"The GPU benchmark of `{self.commit[:12]}` (dispatched {self.at:%Y-%m-%d %H:%M} UTC) is not stopped by "
            "this: it keeps the GPU runners until its plan ends and then pushes its reports to the promotion branch. "
            f"If you do not want them, cancel its run{where} (**Cancel workflow**)."
        )


class LLMCall(Strict):
    """One call to the Claude API: what it was for and what it cost, from the response's usage fields."""

    role: Literal["author", "reviewer"]
    prompt: str = Field(description="template id@version")
    model: str
    stage: int | None = None
    gate: int | None = None
    round: int | None = None
    attempt: int = Field(default=1, ge=1, description="2 = the re-ask after a reply that did not validate")
    input_tokens: int = Field(default=0, ge=0, description="uncached input tokens")
    output_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    usd: float | None = Field(default=None, description="estimated list-price cost; None when the model is unpriced")
    valid: bool = True
    count: int = Field(
        default=1,
        ge=1,
        description="calls this entry stands for: a state too large for the status comment folds a step's calls "
        "into one entry, their tokens and cost summed (``LLMUsage.folded``)",
    )

    @property
    def step(self) -> str:
        return f"gate {self.gate}" if self.gate is not None else f"stage {self.stage}"

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens


class LLMTotals(Strict):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    usd: float | None = 0.0

    def add(self, call: LLMCall) -> None:
        self.calls += call.count
        self.input_tokens += call.input_tokens
        self.output_tokens += call.output_tokens
        self.cache_write_tokens += call.cache_write_tokens
        self.cache_read_tokens += call.cache_read_tokens
        self.usd = None if self.usd is None or call.usd is None else self.usd + call.usd

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens

    @property
    def tokens(self) -> int:
        """Everything processed: what the promotion's token budget counts."""
        return self.total_input + self.output_tokens

    @property
    def cache_share(self) -> float | None:
        """Share of input tokens read from the prompt cache."""
        return self.cache_read_tokens / self.total_input if self.total_input else None


class LLMUsage(Strict):
    """Every Claude call of a promotion, kept in the state so cost is visible per call, step and promotion."""

    calls: list[LLMCall] = Field(default_factory=list)

    def totals(self) -> LLMTotals:
        t = LLMTotals()
        for c in self.calls:
            t.add(c)
        return t

    def folded(self) -> LLMUsage:
        """One entry per step, role, prompt, model and validity, with the calls' tokens and cost summed.

        The totals, per step and per promotion, are unchanged, so the token budget and the cost table read the
        same; only which round or attempt each call was goes. For a state that would not fit otherwise.
        """
        merged: dict[tuple, LLMCall] = {}
        for c in self.calls:
            key = (c.role, c.prompt, c.model, c.stage, c.gate, c.valid)
            if key not in merged:
                merged[key] = c.model_copy(update={"round": None, "attempt": 1})
                continue
            m = merged[key]
            merged[key] = m.model_copy(
                update={
                    "count": m.count + c.count,
                    "input_tokens": m.input_tokens + c.input_tokens,
                    "output_tokens": m.output_tokens + c.output_tokens,
                    "cache_write_tokens": m.cache_write_tokens + c.cache_write_tokens,
                    "cache_read_tokens": m.cache_read_tokens + c.cache_read_tokens,
                    "usd": None if m.usd is None or c.usd is None else m.usd + c.usd,
                }
            )
        return LLMUsage(calls=list(merged.values()))

    def by_step(self) -> dict[str, LLMTotals]:
        """'stage N' / 'gate N' -> totals, in pipeline order."""
        out: dict[str, LLMTotals] = {}
        order = {f"stage {s}": (s, 0) for s in range(1, 8)} | {"gate 1": (2, 1), "gate 2": (3, 1), "gate 3": (5, 1)}
        for c in sorted(self.calls, key=lambda c: order.get(c.step, (9, 9))):
            out.setdefault(c.step, LLMTotals()).add(c)
        return out


#: Bump it (and the Literal below) when a change would make an older bot misread a state this one saves: a field
#: removed or renamed, a meaning changed, a new field without a default. A new field with a default needs no bump
#: (an older bot refuses its name, ``extra="forbid"``, and says a newer bot saved the state); an older bot's state
#: must still load here, so give every new field a default. See the README's "Contributing".
SCHEMA_VERSION = 1


class PipelineState(Strict):
    """Everything needed to resume a promotion. Saved after every step."""

    schema_version: Literal[1] = 1  # SCHEMA_VERSION: when to bump it is said there
    request_id: str
    request_fingerprint: str
    request_parts: dict[str, str] = Field(
        default_factory=dict,
        description="PromotionRequest.parts() of the request the stages ran on (empty: a state saved before they "
        "were kept), so a changed request says what changed and redoes only what reads it",
    )
    branch: str
    status: Status = Status.RUNNING
    next_stage: Stage | None = Stage.ANALYZE
    open_gate: int | None = Field(default=None, description="gate whose review/decision is due")
    review_round: int = Field(default=0, description="review rounds run at the open gate since its last decision")
    opened_at: datetime | None = Field(
        default=None,
        description="when the open gate's review was shown for a decision, by GitHub's clock: the status comment "
        "update that showed it (filled in by the GitHub state store; None until then, and in the local home), so "
        "a decision written before it (on an earlier review, or before a restart) is told apart",
    )
    author_changed: bool = Field(default=False, description="an author-fix pass at the open gate changed an artifact")
    stages: dict[int, StageRecord] = Field(default_factory=dict)
    reviews: dict[int, list[ReviewRound]] = Field(default_factory=dict)
    unconverged: list[int] = Field(default_factory=list, description="gates whose review ran out of rounds")
    decisions: list[GateDecision] = Field(default_factory=list)
    pending_feedback: dict[int, str] = Field(
        default_factory=dict,
        description="stage -> every change-request reason at its gate so far, oldest first (their directives "
        "accumulate); kept until the gate is decided again",
    )
    review_findings: dict[int, str] = Field(
        default_factory=dict, description="stage -> blocking review findings for its author-fix rerun"
    )
    failure: StageFailure | None = Field(default=None, description="set while status is failed")
    head: str | None = Field(
        default=None,
        description="the commit the bot last left the promotion branch at (None: a state saved before it was kept)",
    )
    cancelled_from: Status | None = Field(default=None, description="the status a cancel interrupted")
    benchmark: BenchmarkDispatch | None = Field(
        default=None, description="the GPU benchmark dispatched for stage 5 and not yet judged (GitHub home)"
    )
    benchmark_again: bool = Field(
        default=False,
        description="a person asked for stage 5's benchmark to run again (`/retry 5`): the reports on the branch "
        "are not judged until that run, dispatched when stage 5 is next due, publishes its own in their place",
    )
    llm: LLMUsage = Field(default_factory=LLMUsage, description="Claude calls and their cost (empty offline)")
    handled_events: list[str] = Field(
        default_factory=list,
        description="ids of the GitHub events already acted on (the last 200), so a replay is a no-op",
    )
    answered_comment: int | None = Field(
        default=None,
        description="the id of the newest issue comment the bot answered, by its own run or a later one (GitHub "
        "home; None: a state saved before it was kept), so a command whose run GitHub dropped is answered once",
    )
    audit: list[AuditEntry] = Field(default_factory=list)
    recheck: Recheck | None = Field(
        default=None, description="set while stages made by another bot run again (``bot.recheck``)"
    )

    def change_requests(self, gate: int) -> str:
        """What a rerun of ``gate``'s stages is given: the reason of every change request at that gate in this
        promotion, oldest first, a blank line apart.

        The directives are read line by line over the whole text (``bot.directives``), so they accumulate: an
        ``exclude:`` stays when a later request adds a ``guard:``, and a later line for the same key wins (the
        same ``param`` name, the same ``margin`` id, a new ``scorers:``). Given only the last reason, a rerun
        silently undid the earlier requests. A gate is decided again only until it is approved, and a changed
        request (``restart``) starts a fresh state, so "this promotion" is this request's run.
        """
        return "\n\n".join(
            d.reason.strip()
            for d in self.decisions
            if d.gate == gate and d.decision is Decision.REQUEST_CHANGES and d.reason and d.reason.strip()
        )

    def judged_on_other_inputs(self, gate: int, stage: Stage, inputs_hash: str) -> bool:
        """Whether the open ``gate`` decides on what ``stage`` made from other inputs than it would read now
        (``inputs_hash``: stage 5 with the reports a later ``run --results`` gave). A finished stage is not rerun
        at an open gate, so the person must be told the verdicts predate those inputs, and how to have them judged."""
        rec = self.stages.get(int(stage))
        at_gate = self.status is Status.AWAITING_DECISION and self.open_gate == gate
        return at_gate and rec is not None and rec.inputs_hash != inputs_hash

    def artifact_index(self) -> list[Artifact]:
        return [a for s in sorted(self.stages) for a in self.stages[s].artifacts]
