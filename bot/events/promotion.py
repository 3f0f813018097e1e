"""One promotion issue as an event handler sees it: read the request, drive the engine, show the result.

This is the GitHub home's adapter around the same Runner the local rehearsal
uses. It adds only what GitHub needs: the request comes from the issue form,
state lives in the status comment, the fork is on GitHub, evolved code is run
by a sandboxed job (answers replayed through a RecordedExecutor), stage 5
waits for the GPU workflow, and labels mirror the state.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

from bot import pipeline
from bot.agents.client import LLMError
from bot.events import benchmark, handoff, same_plugin
from bot.events.env import EventEnv
from bot.events.issue_request import NeedsInfo, read_request
from bot.events.request_texts import branch_change, changed_under
from bot.execution import ExecutionNeeded, RecordedExecutor
from bot.forge import markers
from bot.github.authz import approvers_text
from bot.github.client import GitHub, IssueInfo
from bot.github.config import BotConfig
from bot.github.labels import Label, changes, desired, open_gate_approval, to_create
from bot.github.setup_check import fix_for
from bot.model import PipelineState, PromotionRequest, RequestError, Stage, Status, request_parts


@dataclass
class Result:
    """What one handled event did, for the job summary, the action's outputs and tests."""

    action: str
    state: PipelineState | None = None
    pull_url: str = ""
    notes: list[str] = field(default_factory=list)
    status: str = ""  # the checklist as the status comment shows it
    waiting: str = ""  # the commands this run left for a later one (``Promotion.hold``), as markdown


class Promotion:
    def __init__(
        self, env: EventEnv, client: GitHub, config: BotConfig, issue: IssueInfo, *, current=False, actor="bot"
    ):
        """``issue`` as the event's payload shows it, or as read from GitHub in this run (``current``); ``actor``:
        the person whose event this is, whom the audit names for the GPU benchmark it dispatches."""
        self.env = env
        self.actor = actor
        self.client = client
        self.config = config
        self.issue = issue
        self._current = current
        self._request: PromotionRequest | None = None
        self._forge = None
        self._runner = None
        self._dispatch_benchmark = True
        self._rechecked = False  # this run re-checked stages another bot version made: the issue is told
        self.store = _store(client, issue.number, config)
        #: what a person's move is recorded under (``handled_events``): this run's event, or ``comment-<id>`` while
        #: a command whose own run GitHub dropped is answered (``bot.events.comments.catch_up``), ``labeled-<id>``
        #: while such a gate label is decided (``bot.events.issues.dropped_label``)
        self.delivery = env.event_id
        #: the commands this run left for a later one (``hold``), as the status comment names them; "" for none
        self.waiting = ""
        self.plugin_others = None  # the other open promotions of this plugin, once asked (``same_plugin.others``)

    # ------------------------------------------------------------- request
    def current_issue(self) -> IssueInfo:
        """The issue as it is now on GitHub (read once per run; one call), not the payload's snapshot.

        A run may start long after its event (queued behind another run of the issue, or re-run): the payload
        then shows a body since edited, and a request read from it would restart the promotion onto the old
        program. The labels read here are current too; the payload's stay the record of what the event saw.
        """
        if not self._current:
            self.issue = self.client.issue(self.issue.number)
            self._current = True
        return self.issue

    def request(self) -> PromotionRequest:
        """The request the issue describes now; NeedsInfo listing every problem when it cannot be used."""
        if self._request is None:
            request = read_request(self.env, self.client, self.config, self.current_issue())
            state = self.load()
            if state is not None and state.status not in (Status.DONE, Status.REJECTED):
                problem = branch_change(state.branch, request)
                if problem:
                    raise NeedsInfo([problem])
            self._request = request
        return self._request

    # --------------------------------------------------------------- pieces
    def forge(self):
        from bot.github.forge import GitHubForge

        if self._forge is None:
            request = self.request()
            self._forge = GitHubForge(
                self.client,
                issue=self.issue.number,
                fork=request.fork.repo,
                server_url=self.env.server_url,
                token=self.env.write_token,
                clone_dir=self.env.work / "fork.git",
                base_branch=request.fork.base_branch,
                branch=request.branch,
                feedback_repository=self.config.blis_repository,
            )
        return self._forge

    def runner(self):
        import shutil

        from bot.agents import build_agents
        from bot.agents.client import FileReplies
        from bot.events.dropped import recheck_reopened
        from bot.stages.runner import Runner

        if self._runner is None:
            self.env.work.mkdir(parents=True, exist_ok=True)
            if self.env.replies_in is not None and self.env.replies_in.is_file():
                shutil.copyfile(self.env.replies_in, self.env.replies_path)  # the interrupted step replays them
            log = lambda line: print(f"  {line}", file=sys.stderr)  # noqa: E731
            self._runner = Runner(
                self.request(),
                self.forge(),
                self.store,
                actor="promotion-bot",
                max_rounds=self.config.llm.rounds,
                allow_sample_data=self.config.allow_sample_data,
                executor=RecordedExecutor(handoff.load_results(self.env.execution_results)),
                status_context=self.status_context(),
                log=log,
                notify=self._recheck_line,
                on_reopen=lambda before, after: recheck_reopened(self, before, after),
                home_findings=lambda gate: same_plugin.gate_findings(self, gate),
                agents=build_agents(self.config.llm, log=log, replies=FileReplies(self.env.replies_path)),
            )
        return self._runner

    def status_context(self) -> dict:
        request = self.request()
        server = self.env.server_url.rstrip("/")
        links = {"branch": f"{server}/{request.fork.repo}/tree/{request.branch}"}
        if self._forge is not None and self._forge._pull is not None:
            links["pull request"] = self._forge._pull.url
        links["this run"] = self.env.run_url
        approvers = approvers_text(self.config)
        context = {"home": "github", "run_url": self.env.run_url, "links": links, "approvers": approvers}
        return {**context, "waiting": self.waiting} if self.waiting else context

    # ---------------------------------------------------------------- moves
    def load(self) -> PipelineState | None:
        return self.store.load()

    def handled(self, state: PipelineState | None) -> bool:
        """This event was acted on already (a re-run replays the same event): act on it no more."""
        return state is not None and self.delivery in state.handled_events

    def refused(self, state: PipelineState | None) -> None:
        """A person's event that was refused is decided too: recorded as handled, so a re-run of its workflow run
        is a no-op instead of being judged again against a later state (a later gate, a role granted since)."""
        if state is None or self.handled(state):
            return
        state = state.model_copy(deep=True)
        state.handled_events = [*state.handled_events, self.delivery][-200:]
        self.save(state)

    def apply_once(self, state: PipelineState, move, *, role: str | None) -> PipelineState:
        """A person's move, applied once per event: a replayed event finds its id recorded and changes nothing."""
        if self.handled(state):
            return state
        new = move(state)
        if new is state:
            return state
        new = new.model_copy(deep=True)
        new.handled_events = [*new.handled_events, self.delivery][-200:]
        last = new.audit[-1]
        new.audit[-1] = last.model_copy(update={"role": role, "delivery": self.delivery})
        return new

    def save(self, state: PipelineState) -> None:
        runner = self.runner()
        runner.status_context = self.status_context()
        runner.save(state)

    def restart(self, state: PipelineState, *, actor: str, why: str) -> PipelineState:
        """The request changed under a running promotion: redo it from the first stage that reads the change
        (``Runner.restart``), and say what changed and where the promotion was when work is thrown away."""
        from bot.events.dropped import undo_dropped
        from bot.stages.restart_notice import restart_notice

        # Not once per event: a replay finds the fingerprints equal and does not come here; and the event that
        # changed the configuration may already have applied a person's move (its id is recorded).
        before = state
        state, change = self.runner().restart(state, actor=actor, why=why)
        restarted = state  # who set the benchmark's cancel off: the person whose edit changed the request
        state, said, _ = undo_dropped(self, before, state, actor=actor, why="the request changed", say=benchmark.cancel)
        if state is not restarted:
            self.save(state)
        # stage 1 done and stage 2 under way (before gate 1) counts too: the edit was taken and work thrown away,
        # and a researcher who fixed a typo then must not wonder whether the bot saw it
        if change.redo and (request_parts.work_done(before) or before.stages):
            gpu = ""
            if before.benchmark and not state.benchmark:  # the redone plan needs a new run: the old one went
                gpu = f" {said or before.benchmark.still_running()}"
            self.notice(
                f"restart-{self.env.event_id}",
                f"{why[:1].upper()}{why[1:]}. {restart_notice(change, before, state)}{gpu}",
            )
        return state

    def drop_labels(self, names: set[str]) -> list[str]:
        """Take these labels off the issue now (those it carries), before a step that must not read them; which."""
        dropped = names & set(self.issue.labels)
        for name in sorted(dropped):
            self.client.remove_label(self.issue.number, name)
        self.issue = _with_labels(self.issue, set(self.issue.labels) - dropped)
        return sorted(dropped)

    def heal(self, result: Result) -> Result:
        """After an event that moved nothing (a plain comment, a refused command or label, a `/status`), run what
        is due, so a promotion whose continuation run was lost goes on.

        The bot chains its steps with its own dispatched runs, in the issue's concurrency group, and GitHub keeps
        one pending run per group: a person's event queued after the bot's continuation cancels it (and the other
        way round), which would leave "stage N is due" for good. No other run of this issue runs now (the group),
        and advancing is idempotent, so a later duplicate finds nothing to do. The payload's labels say first
        whether anything can be due: a promotion at rest (finished, failed, cancelled, needs-info) costs no call.
        Stage 5's benchmark is never dispatched from here: it runs on GPU runners in another workflow, which no
        person's event cancels; its reports, when on the branch, are judged.
        """
        if not may_be_due(self.issue.labels):
            return result
        state = self.load()
        if state is None or not isinstance(pipeline.next_step(state), (pipeline.RunStage, pipeline.RunReview)):
            return result
        print(
            f"promote: {pipeline.describe(state)}, and no other run of this issue is under way: continuing",
            file=sys.stderr,
        )
        try:
            self.request()
            ended = self.benchmark_ended(state)  # nobody tells the bot when GitHub cancels its benchmark run
            if ended is not state and ended.benchmark is None:
                return self._finish(Result(f"{result.action}; the benchmark run ended without its reports", ended))
            healed = self.advance(dispatch_benchmark=False)
        except NeedsInfo as exc:
            return self.needs_info(exc.problems)
        healed.action = f"{result.action}; then continued what was due: {healed.action}"
        healed.notes = [*result.notes, *healed.notes]
        return healed

    def benchmark_ended(self, state: PipelineState) -> PipelineState:
        """``state``, or stage 5 failed when the benchmark run it waits for ended without its reports (one call,
        ``bot.events.benchmark.ended``): saved, and said once per run, so a `/retry` dispatches it again; or the
        wait with the run's status (queued, picked up) when that changed, saved so the checklist says it."""
        sent = state.benchmark
        if sent is None or sent.run_id is None:
            return state
        new, said = benchmark.ended(self.client, state, now=self.runner().clock())
        if new is not state:  # ended, or queued / picked up since the bot last looked
            self.save(new)
        if said:
            self.notice(f"benchmark-{sent.run_id}", said)
        return new

    def advance(self, *, dispatch_benchmark: bool = True) -> Result:
        """Run what is due until a gate, a halt, the end, the GPU workflow or the sandboxed job is needed."""
        self._dispatch_benchmark = dispatch_benchmark
        runner = self.runner()
        state = self.load()
        request = self.request()
        if (
            state is not None
            and state.request_fingerprint != request.fingerprint()
            and state.status not in (Status.DONE, Status.REJECTED)
        ):  # not an edit's own run (that restarts first): the configuration, the bot, or an edit it did not see
            self.restart(state, actor="bot", why=changed_under(state, request))
        try:
            started = state is None
            state = runner.start_or_resume()
        except RequestError as exc:  # the request changed under a running promotion: handled by `edited`
            raise NeedsInfo([str(exc)]) from None
        if started:
            same_plugin.say(self)
        if (no_key := self._without_claude(state)) is not None:
            return no_key
        outcome = None
        try:
            outcome = runner.run(pause_before=self._pause)
        except ExecutionNeeded:
            self._request_sandbox(runner.executor)
            state = runner.load_state() or state
            return self._finish(Result("waiting for the sandboxed checks", state))
        except LLMError as exc:  # Claude failed for now: nothing was committed; the state holds the paid calls
            self.notice(
                f"llm-{self.env.event_id}", f"Claude could not finish this step: {exc}. Comment `/retry` to try again."
            )
            return self._finish(
                Result("claude failed; only its paid calls saved", runner.load_state() or state, notes=[str(exc)])
            )
        except RequestError as exc:  # the forge refused (the branch moved), the input is unusable, GitHub failed
            state = runner.load_state() or state
            step = pipeline.next_step(state)
            if not isinstance(step, pipeline.RunStage):
                raise
            state = pipeline.stage_failed(state, step.stage, str(exc), now=runner.clock(), fix=fix_for(str(exc)))
            runner.save(state)
            return self._finish(Result("failed", state, notes=[str(exc)]))
        return self._finish(Result(outcome.paused or pipeline.describe(outcome.state), outcome.state))

    def _without_claude(self, state: PipelineState) -> Result | None:
        """Fail the due stage at once when the configuration asks for Claude and the job has no key; not while a
        benchmark run is out (its reports are judged without Claude, and failing would drop the run)."""
        missing, step = self.env.no_anthropic_key(self.config.llm.engine), pipeline.next_step(state)
        if missing is None or not isinstance(step, pipeline.RunStage) or state.benchmark is not None:
            return None
        state = pipeline.stage_failed(state, step.stage, missing[0], now=self.runner().clock(), fix=missing[1])
        self.runner().save(state)
        return self._finish(Result("failed", state, notes=[missing[0]]))

    def _pause(self, state: PipelineState, step):
        """Stage 5 runs on GPU runners: dispatch the benchmark workflow for the plan gate 2 approved, unless the
        branch holds reports for it (``benchmark_due``) or it was dispatched for this commit already (an edit, a
        `/retry` or `/status` during the wait), and wait for it to come back."""
        if not isinstance(step, pipeline.RunStage) or step.stage is not Stage.RUN_VALIDATE:
            return None
        from bot.model import BenchmarkDispatch
        from bot.stages.branch_history import other_runs
        from bot.stages.run_validate import benchmark_due

        request, ctx = self.request(), self.runner().context(state)
        if not benchmark_due(ctx):
            return None
        commit = self.forge().repo.rev(request.branch) or ""
        workflow = self.config.benchmark_workflow
        sent = state.benchmark
        if sent is not None and sent.commit == commit:
            return f"stage 5 waits for the benchmark on GPU runners ({workflow} at {commit[:12]}, dispatched {sent.at:%Y-%m-%d %H:%M} UTC); not dispatched again"
        if not self._dispatch_benchmark:  # a self-heal: the benchmark was dispatched when stage 5 became due
            return f"stage 5 waits for the benchmark on GPU runners ({workflow} at {commit[:12]})"
        self._schedule(
            workflow,
            {
                "issue": str(self.issue.number),
                "branch": request.branch,
                "commit": commit,
                "resume": "false",
                **self.config.gpu.dispatch_inputs(),
            },
            benchmark=True,
        )
        if sent is not None and (runs := other_runs(ctx, sent.run_id)):  # `/retry 5` replaced a run that went on
            self.notice(f"benchmark-outrun-{sent.run_id}", benchmark.outrun(self.client, sent, runs, commit))
        now = self.runner().clock()
        sent = BenchmarkDispatch(
            commit=commit, at=now, runs_url=self.benchmark_runs(), runner_labels=list(self.config.gpu.runner_labels)
        )
        state = pipeline.benchmark_sent(state, sent, now=now, actor=self.actor)
        return f"stage 5 waits for the benchmark on GPU runners ({workflow} at {commit[:12]})", state

    def benchmark_runs(self) -> str:
        """The benchmark workflow's runs page (where its run shows until `promote dispatch-next` names it)."""
        return f"{self.env.server_url.rstrip('/')}/{self.env.repository}/actions/workflows/{self.config.benchmark_workflow}"

    def _request_sandbox(self, executor: RecordedExecutor) -> None:
        """Hand the executions to the sandboxed job of the next run (as data), and ask for that run."""
        import shutil

        requests = [r.to_json() for r in executor.needed.values()]
        self.env.handoff_dir.mkdir(parents=True, exist_ok=True)
        self.env.requests_path.write_text(json.dumps({"requests": requests}, sort_keys=True))
        if self.env.replies_path.is_file():
            shutil.copyfile(self.env.replies_path, self.env.handoff_dir / "replies.json")
        self._schedule(
            self.config.workflow, {"issue": str(self.issue.number), "step": "continue", "requests_run": self.env.run_id}
        )

    def continue_later(self) -> None:
        """A run of this issue's workflow takes up what this one left (``comments.catch_up``'s bound on a burst of
        commands); a dispatch this run sends after it (the sandboxed job's, the benchmark's) starts a run that does."""
        self._schedule(self.config.workflow, {"issue": str(self.issue.number), "step": "continue"})

    def hold(self, first: int, waiting: str) -> None:
        """Leave the command ``first`` and every newer one for the run dispatched now (``continue_later``) or a later
        one, and say so on every save of this run: ``waiting`` (markdown) names them in the status comment.

        Said in the run log only, a command past the bound looked ignored: its author could not tell it was seen,
        least of all when GitHub dropped the continuation too. The next save without a held command drops the line."""
        self.store.held = first
        self.waiting = waiting
        if self._runner is not None:  # its own saves (``advance``) render the checklist with the line too
            self._runner.status_context = self.status_context()
        self.continue_later()

    def _schedule(self, workflow: str, inputs: dict[str, str], *, benchmark: bool = False) -> None:
        """The dispatch `promote dispatch-next` sends after this job uploaded what the next run needs (for the
        ``benchmark``, it then records the run GitHub started: ``bot.events.benchmark.record_run``). The runs this
        job cancelled go with it (``skip_runs``): `/retry 5`'s dispatch replaces them, never adopts one."""
        self.env.work.mkdir(parents=True, exist_ok=True)
        spec = {"workflow": workflow, "ref": self.env.ref, "inputs": inputs, "benchmark": benchmark}
        if benchmark:
            spec["skip_runs"] = sorted(self.client.cancelled_runs)
        self.env.dispatch_path.write_text(json.dumps(spec))

    # ---------------------------------------------------------- presentation
    def needs_info(self, problems: list[str]) -> Result:
        from bot.render import render

        state = self.load()  # a promotion under way keeps what it did: the reply must not say nothing was done
        where = ""
        if state is not None:
            at = (
                f"gate {state.open_gate}"
                if state.open_gate
                else (f"before stage {state.next_stage.value}" if state.next_stage else "")
            )
            where = ", ".join(x for x in (state.status.value, at) if x)
        gpu = ""
        if state is not None and state.benchmark is not None:  # it keeps going: an unchanged request judges it
            from bot.events.benchmark import kept_running

            gpu = kept_running(state.benchmark)
        body = render(
            "needs_info.md.j2",
            problems=problems,
            number=self.issue.number,
            started=state is not None,
            where=where,
            benchmark=gpu,
        )
        self.client.upsert_comment(self.issue.number, markers.NEEDS_INFO, body)
        self.client.add_labels(
            self.issue.number, [str(Label.NEEDS_INFO)] if Label.NEEDS_INFO not in self.issue.labels else []
        )
        self.issue = _with_labels(self.issue, self.issue.labels | {str(Label.NEEDS_INFO)})
        return Result("needs-info", notes=problems)

    def clear_needs_info(self) -> None:
        if Label.NEEDS_INFO in self.issue.labels:
            self.client.remove_label(self.issue.number, str(Label.NEEDS_INFO))
            self.issue = _with_labels(self.issue, self.issue.labels - {str(Label.NEEDS_INFO)})
        if self.client.bot_comment(self.issue.number, markers.NEEDS_INFO) is not None:
            self.client.upsert_comment(
                self.issue.number, markers.NEEDS_INFO, "Resolved: the request can be used as it stands now."
            )

    def notice(self, key: str, text: str) -> None:
        """A short reply to one event (found again by its key, so a replay updates instead of repeating)."""
        self.client.upsert_comment(self.issue.number, markers.notice(key), text)

    def sync_labels(self, state: PipelineState) -> None:
        """Make the bot's labels show ``state``; a person's approval label for the gate open now is left to its
        own run (or, that run dropped, to a later one: ``issues.dropped_label``). One for a gate not open is
        removed, and its run, finding it gone, says why (``issues.labeled``)."""
        mine = open_gate_approval(state)
        add, remove = changes(set(self.issue.labels), desired(state), frozenset({mine} if mine else ()))
        if add:
            self.client.ensure_labels({n: (Label(n).color, Label(n).description) for n in to_create(add)})
        self.client.add_labels(self.issue.number, add)
        for name in remove:
            self.client.remove_label(self.issue.number, name)
        self.issue = _with_labels(self.issue, (set(self.issue.labels) | set(add)) - set(remove))

    def _recheck_line(self, line: str) -> None:
        print(f"  {line}", file=sys.stderr)
        self._rechecked = True

    def recheck_notice(self, state: PipelineState) -> None:
        """A re-check this run did (``bot.recheck``) changes what people decided on: one notice on the issue, keyed
        by when the re-check began, so its later lines (a later run's) update it and a replay repeats nothing."""
        from bot.escape import md
        from bot.recheck import report

        got = report(state) if self._rechecked else None
        self._rechecked = False
        if got is None:
            return
        key, (first, *rest) = got
        steps = "".join(f"\n- {md(x)}" for x in rest)
        # what the person does now: the status comment's headline, as this run left the promotion
        after = f"\n\n**Next:** {md(pipeline.describe(state))}."
        self.notice(key, f"**Re-check:** this promotion's stages were {md(first)}.\n{steps}{after}")

    def _finish(self, result: Result) -> Result:
        if result.state is not None:
            self.recheck_notice(result.state)
            self.sync_labels(result.state)
            result.status = self.runner().status_markdown(result.state)
        if self._forge is not None and self._forge._pull is not None:
            result.pull_url = self._forge._pull.url
        return result


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def may_be_due(labels) -> bool:
    """Whether the issue's labels leave room for a stage or a review being due (``desired`` shows a due stage as
    its ``stage-N-…`` label, a due review as ``gate-N-pending``, like a gate waiting for a decision)."""
    names = {str(n) for n in labels}
    at_rest = {Label.NEEDS_INFO, Label.FAILED, Label.CANCELLED, Label.DONE, Label.REJECTED}
    if names & {str(x) for x in at_rest}:
        return False
    return any(n.startswith("stage-") or (n.startswith("gate-") and n.endswith("-pending")) for n in names)


def _store(client: GitHub, number: int, config: BotConfig):
    from bot.github.state import GitHubStateStore

    return GitHubStateStore(client, number, config)


def _with_labels(issue: IssueInfo, labels) -> IssueInfo:
    return IssueInfo(**{**issue.__dict__, "labels": frozenset(labels)})
