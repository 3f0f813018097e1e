"""`promote run | status | approve | request-changes | reject | resume`: a promotion rehearsed locally.

The work directory holds the state (``state.json``), the run's settings
(``run.json``: request, fork, results), the issue thread and the PR record.
Decisions continue the run to the next gate, as a gate label does on GitHub.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from bot.bench.layout import RESULTS_HELP
from bot.cli import PathHelpFormatter
from bot.cli.files import output_dir
from bot.cli.workdir import RUN_FILE, crash_of, holder_of, read_settings, work_lock, write_settings
from bot.escape import line, sh
from bot.model import Decision, RequestError

WORK_HELP = "the promotion's work directory (default .promote)"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="start (or continue) a promotion from a promotion.yaml, on a local forge",
        formatter_class=PathHelpFormatter,
    )
    p.add_argument("request", type=Path, help="promotion.yaml")
    p.add_argument("--results", type=Path, help=RESULTS_HELP)
    p.add_argument(
        "--fork",
        type=Path,
        help="local git repository standing in for the llm-d-router fork (created if missing; default WORK/fork)",
    )
    p.add_argument("--work", type=Path, default=Path(".promote"), help=WORK_HELP)
    p.add_argument("--approve", default=None, metavar="all|1,2,3", help="approve these gates without stopping")
    p.add_argument(
        "--allow-sample-data",
        action="store_true",
        help="let sample/synthetic reports count (a rehearsal: every verdict, the report and the PR say so)",
    )
    _common(p)
    p.set_defaults(func=cmd_run, writes=True)

    p = sub.add_parser("status", help="where the promotion stands")
    p.add_argument("--work", type=Path, default=Path(".promote"), help=WORK_HELP)
    p.add_argument("--json", action="store_true", help="print the saved state as JSON")
    p.set_defaults(func=cmd_status, home=False)

    for name, decision, helptext in (
        ("approve", Decision.APPROVE, "approve the open gate and continue to the next one"),
        (
            "request-changes",
            Decision.REQUEST_CHANGES,
            "send the gate's stage back with a reason; it reruns and is reviewed again",
        ),
        ("reject", Decision.REJECT, "end the promotion, with a reason on record"),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("gate", type=int, choices=[1, 2, 3])
        p.add_argument(
            "--reason", required=decision is not Decision.APPROVE, help="why (recorded, and given to the author)"
        )
        p.add_argument("--work", type=Path, default=Path(".promote"), help=WORK_HELP)
        p.add_argument(
            "--approve", default=None, metavar="all|1,2,3", help="also approve these later gates without stopping"
        )
        _common(p)
        p.set_defaults(func=cmd_decide, decision=decision, writes=True)

    p = sub.add_parser("resume", help="continue an interrupted promotion without redoing finished stages")
    p.add_argument("--work", type=Path, default=Path(".promote"), help=WORK_HELP)
    p.add_argument("--approve", default=None, metavar="all|1,2,3", help="approve these gates without stopping")
    p.add_argument(
        "--adopt-branch",
        action="store_true",
        help="build on the commits others added to the promotion branch (after you checked them)",
    )
    _common(p)
    p.set_defaults(func=cmd_resume, writes=True)


def _common(p: argparse.ArgumentParser) -> None:
    from bot.agents.settings import add_llm_arguments

    p.add_argument("--actor", default=None, help="who decides (default: your user name)")
    p.add_argument("--max-rounds", type=int, default=3, help="review rounds before a gate opens unconverged")
    p.add_argument(
        "--quiet",
        action="store_true",
        help="leave out the stage-by-stage progress (stderr) and the decision's echo; where the promotion "
        "stopped, warnings, errors and a re-check's lines (stages another bot version made) are still printed",
    )
    add_llm_arguments(p)


# ----------------------------------------------------------------- commands
def cmd_run(args) -> int:
    approve = parse_approve(args.approve)
    request, results = preflight(args.request, args.results, allow_sample_data=args.allow_sample_data)
    if args.fork is not None:
        fork_parent(args.fork)
    work = args.work.resolve()
    read_settings(work, missing_ok=True)  # a broken or copied work directory is refused before it is touched
    output_dir(work, "--work")
    with work_lock(work, "run"):
        saved = read_settings(work, missing_ok=True)
        settings = {"request": str(args.request.resolve()), "results": str(results) if results else None}
        if saved and saved["request"] != settings["request"]:
            raise RequestError(
                f"{work} holds the promotion of {saved['request']}; use another --work for a different request"
            )
        fork = args.fork.resolve() if args.fork else Path(saved["fork"]) if saved else work / "fork"
        if saved and Path(saved["fork"]) != fork:
            raise RequestError(
                f"{work} drives the fork {saved['fork']}, not --fork {fork}; leave --fork out to continue, "
                "or use another --work"
            )
        settings["fork"] = str(fork)
        if args.allow_sample_data:
            settings["allow_sample_data"] = True
        llm = _llm_settings(args, saved)
        settings["llm"] = _llm_record(llm)
        if saved:
            _note_move(saved)
            settings = {"id": saved.get("id"), **settings} if saved.get("id") else settings
        write_settings(work, settings)
        return _drive(_runner(request, work, fork, results, approve, args, llm))


def cmd_resume(args) -> int:
    work = args.work.resolve()
    read_settings(work)
    _check_saved_state(work)
    with work_lock(work, "resume"):
        return _resume(args, work, _settings_here(work))


def _resume(args, work: Path, settings: dict) -> int:
    request, results = _reload(settings)
    llm = _llm_kept(args, work, settings)
    args.allow_sample_data = settings.get("allow_sample_data", False)
    runner = _runner(request, work, Path(settings["fork"]), results, parse_approve(args.approve), args, llm)
    if args.adopt_branch:
        runner.adopt_branch()
    state = runner.load_state()
    if state is not None and state.status.value in ("failed", "cancelled"):
        runner.retry()  # resuming is what a person does once the reason for the halt is fixed
    return _drive(runner)


def cmd_decide(args) -> int:
    work = args.work.resolve()
    read_settings(work)
    _check_saved_state(work)
    with work_lock(work, args.decision.value):
        return _decide(args, work, _settings_here(work))


def _decide(args, work: Path, settings: dict) -> int:
    request, results = _reload(settings)
    llm = _llm_kept(args, work, settings)
    args.allow_sample_data = settings.get("allow_sample_data", False)
    runner = _runner(request, work, Path(settings["fork"]), results, parse_approve(args.approve), args, llm)
    if args.decision is Decision.REQUEST_CHANGES:
        _refuse_unchanged(runner, args.gate, args.reason)
    state = runner.decide(args.gate, args.decision, args.reason)
    _say(
        args,
        f"gate {args.gate}: {args.decision.value} by {line(runner.actor)}"
        + (f" ({line(args.reason, sep='; ')})" if args.reason else ""),
    )
    note = state.decisions[-1].critical_note()
    if note:  # the person's call, made over blocking findings: said even with --quiet, and kept with the decision
        print(f"promote: warning: gate {args.gate}: {line(note)} (recorded with the approval)", file=sys.stderr)
    if state.status.value == "rejected":
        _say(args, f"the promotion is rejected; the record is in {runner.forge.locations()['issue thread']}")
        return 0
    return _drive(runner)


def _refuse_unchanged(runner, gate: int, reason: str | None) -> None:
    """A change request that would reopen the gate unchanged is answered now, and nothing is recorded."""
    from bot.review.change_request import refusal_on_branch
    from bot.stages.plan_reports import unusable_results

    state = runner.load_state()
    if state is None or state.open_gate != gate or state.status.value != "awaiting-decision":
        return  # not open: the decision itself says why
    why = refusal_on_branch(
        gate, reason, runner.context(state), author=runner.agents is not None, results_problem=unusable_results
    )
    if why is not None:
        raise RequestError(line(why))


def cmd_status(args) -> int:
    from bot import pipeline
    from bot.forge.state_file import STATE_FILE, read_state

    state = read_state(args.work.resolve() / STATE_FILE)
    if state is None:
        if (args.work / RUN_FILE).exists():  # started, then stopped before its first step was saved
            raise RequestError(
                f"{args.work}: the promotion started here stopped before its first step was saved; "
                f"`promote resume --work {sh(args.work)}` continues it"
            )
        raise RequestError(f"{args.work}: no promotion here; start one with `promote run REQUEST --work {args.work}`")
    if args.json:
        print(state.model_dump_json(indent=2))
        return 0
    # Saved text came from people (actors, reasons) and programs: one terminal line each (bot.escape.line).
    print(f"promotion {state.request_id} on {state.branch}: {line(pipeline.describe(state))}")
    try:
        settings = read_settings(args.work.resolve(), missing_ok=True) or {}
    except RequestError:
        settings = {}
    if settings.get("allow_sample_data"):
        print("  sample data allowed (--allow-sample-data): verdicts may rest on synthetic reports, not measurements")
    for n, rec in sorted(state.stages.items()):
        if rec.problems:  # finished, but its checks failed: never reported as done
            print(f"  stage {n} checks FAIL: {line('; '.join(rec.problems))} (raised as CRITICAL at the gate's review)")
        elif state.failure is None or n != int(state.failure.stage):
            print(f"  stage {n} done: {line(rec.summary)}")
    if state.failure is not None:
        fix = f"; fix: {state.failure.fix}" if state.failure.fix else ""
        print(f"  stage {int(state.failure.stage)} FAILED: {line(state.failure.reason + fix)}")
    for d in state.decisions:
        unconverged = " (its review's findings were open: unconverged)" if d.gate in state.unconverged else ""
        print(
            f"  gate {d.gate} {d.decision.value} {line(d.how())}"
            + (f": {line(d.reason, sep='; ')}" if d.reason else "")
            + (unconverged if d.decision.value == "approve" else "")
            + (f"; {line(d.critical_note())}" if d.critical_note() else "")
        )
    from bot.agents.cost import cost_lines

    for cost in cost_lines(state.llm):
        print(f"  claude {cost}")
    holder = holder_of(args.work.resolve())
    if holder is not None:
        print(
            f"  in progress: `promote {line(holder.get('command'))}` (pid {holder['pid']}) since {line(holder.get('since'))}"
        )
    crash = crash_of(args.work.resolve()) if holder is None else None
    if crash is not None:  # the same state makes the same error: resuming is no way out
        print(
            f"  stopped by an error in `promote {line(crash.get('command'))}`: {line(crash.get('error'))}; "
            "`promote resume` stops the same way on this state: this is a bug in the promotion bot, report it "
            "with that command's output (or finish with the bot version that started this promotion)"
        )
    elif holder is None and isinstance(pipeline.next_step(state), pipeline.RunStage | pipeline.RunReview):
        print(f"  interrupted: run `promote resume --work {sh(args.work)}` to continue where it stopped")
    if state.status.value == "awaiting-decision":
        fork, base = _fork_and_base(settings)
        for text in _gate_brief(state, state.open_gate, fork=fork, base=base):
            print(text)
        print(_decide_hint(state.open_gate, args.work))
    return 0


def _fork_and_base(settings: dict) -> tuple[str, str]:
    """Where `git` finds the promotion branch, for the read-first commands (best effort: status never fails)."""
    base = "main"
    try:
        from bot.model import PromotionRequest

        base = PromotionRequest.load(Path(settings["request"])).fork.base_branch
    except (RequestError, KeyError, TypeError, OSError):
        pass
    return str(settings.get("fork") or "FORK"), base


# ------------------------------------------------------------------ helpers
def parse_approve(text: str | None) -> frozenset[int]:
    """The gates ``--approve`` names; left out (None) approves none. An empty value is refused like any other bad
    one: ``--approve "$GATES"`` with the variable unset would otherwise stop at gate 1 without a word. ``ALL``
    is ``all``, as ``/approve`` is on GitHub in any case."""
    if text is None:
        return frozenset()
    value = text.strip()
    if value.lower() == "all":
        return frozenset({1, 2, 3})
    try:
        gates = frozenset(int(x) for x in value.split(","))
    except ValueError:
        gates = frozenset({0})
    if not gates <= {1, 2, 3}:
        raise RequestError(f"--approve {text!r}: give 'all' or a comma-separated list of gates 1, 2, 3")
    return gates


def fork_parent(fork: Path) -> None:
    """``--fork`` names a directory the run creates (a git repository), in a directory that exists: a
    mistyped path would otherwise be created with all its parents, at the filesystem root if need be."""
    parent = fork.resolve().parent
    if not fork.exists() and not parent.is_dir():
        raise RequestError(
            f"--fork {fork}: {parent} does not exist; pass a path in an existing directory (the run creates the "
            "fork there), or create the directory first"
        )


def _reload(settings: dict):
    """The request and results a saved run was started with. `run` validated every report already, and
    stage 5 reads them again, so decisions and resumes only check the directory is still there."""
    results = Path(settings["results"]) if settings["results"] else None
    return preflight(Path(settings["request"]), results, check_reports=False)


def preflight(request_path: Path, results: Path | None, *, check_reports: bool = True, allow_sample_data: bool = False):
    """Everything that can be wrong with the input is found here, before anything touches the fork."""
    from bot.hypotheses import HypothesisError
    from bot.model import PromotionRequest
    from bot.stages.preflight import (
        KindMismatch,
        MagnitudeMismatch,
        OriginMismatch,
        check_magnitudes,
        check_metrics,
        check_origin,
        check_program,
    )

    request = PromotionRequest.load(request_path)
    try:
        check_metrics(request)
        check_magnitudes(request)
        check_program(request)
        check_origin(request, request_path.name)
    except (KindMismatch, MagnitudeMismatch, OriginMismatch, HypothesisError) as exc:
        raise RequestError(f"{request_path}: {exc}") from None
    if results is not None:
        from bot.bench.evidence import load_evidence
        from bot.bench.mix_only import only_mix_results
        from bot.bench.reports import ReportError

        if check_reports and not only_mix_results(results):  # raises ReportError naming the problem
            try:
                load_evidence(results, _early_policy(request, results, allow_sample_data))
            except ReportError as exc:
                if not allow_sample_data:
                    raise
                raise ReportError(
                    f"{exc}. To rehearse with sample data, make it for this request: .venv/bin/python "
                    f"examples/weighted-adaptive/make_sample_reports.py --request {request_path} --out DIR"
                ) from None
        elif not results.is_dir():
            raise ReportError(f"--results {results}: the directory this promotion was started with is gone; restore it")
        results = results.resolve()
    return request, results


def _early_policy(request, results: Path, allow_sample_data: bool):
    """What the reports are held to before stage 1: this promotion, and, for results without a run manifest, the
    image stage 4 pins for a local run (``default_evolved_image``: its tag names the promotion and the plugin), or
    the runner's own build of this promotion, as stage 5 binds them. Another plugin's reports (the bundled sample
    reports in a rehearsal of one's own plugin) were judged only at stage 5, after stages 1-4 were committed.
    Results with a manifest are bound to the image it records, which only stage 5 reads."""
    from bot.bench.evaluation_spec import default_evolved_image
    from bot.bench.evidence import EvidencePolicy
    from bot.bench.run.manifest import MANIFEST

    if (results / MANIFEST).is_file():
        return EvidencePolicy(promotion=request.id, allow_sample_data=allow_sample_data)
    return EvidencePolicy(
        promotion=request.id,
        allow_sample_data=allow_sample_data,
        evolved_image=default_evolved_image(request),
        no_manifest=True,
    )


def _llm_settings(args, saved: dict | None):
    """This run's Claude settings: the promotion's saved ones (run.json), overridden by flags given now."""
    from bot.agents.settings import settings_from_args

    return settings_from_args(args, (saved or {}).get("llm")).resolved()


def _llm_record(llm) -> dict:
    """What run.json keeps of the Claude settings: the fields set away from their defaults, and the engine."""
    return llm.model_dump(mode="json", exclude_defaults=True) | {"engine": llm.engine}


def _llm_kept(args, work: Path, settings: dict):
    """This command's Claude settings, saved with the run when its flags changed them: `--token-budget` or
    `--llm offline` given to `resume` or a decision (the budget error's two remedies) hold for the promotion's
    later commands, as they do when given to `run`."""
    llm = _llm_settings(args, settings)
    if settings.get("llm") != _llm_record(llm):
        settings["llm"] = _llm_record(llm)
        write_settings(work, settings)
    return llm


def _runner(request, work: Path, fork: Path, results, approve, args, llm):
    from bot import PROJECT_ROOT
    from bot.agents import build_agents
    from bot.forge.local import LocalForge
    from bot.forge.state_file import FileStateStore
    from bot.stages.runner import Runner

    forge = LocalForge(
        fork,
        work,
        seed_dir=PROJECT_ROOT / "gomirror" / "llm-d-router",
        base_branch=request.fork.base_branch,
        own=fork == work / "fork",  # the default fork is the bot's; one given with --fork is never re-made
    )
    say = lambda line: print(f"  {line}", file=sys.stderr)  # noqa: E731
    log = (lambda line: None) if args.quiet else say
    return Runner(
        request,
        forge,
        FileStateStore(work, forge),
        status_context={"home": "local", "work": str(work)},
        results_dir=results,
        allow_sample_data=bool(getattr(args, "allow_sample_data", False)),
        approve=approve,
        actor=args.actor or _whoami(),
        max_rounds=args.max_rounds,
        log=log,
        notify=say,  # a re-check changes what a person decided on: said even with --quiet
        agents=build_agents(llm, log=log),
    )


def _drive(runner) -> int:
    outcome = runner.run()
    loc = runner.forge.locations()
    if outcome.state.llm.calls:
        from bot.agents.cost import line

        print("claude " + line("promotion so far", outcome.state.llm.totals()))
    if outcome.waiting_gate is not None:
        gate = outcome.waiting_gate
        print(f"stopped at gate {gate}")
        if gate == 3 and runner.judged_on_other_results(outcome.state):
            print(_not_judged_note(runner.results_dir, runner.store.work))
        for text in _gate_brief(outcome.state, gate, fork=loc["fork"], base=runner.request.fork.base_branch):
            print(text)
        print(f"  the review report is in {loc['issue thread']}")
        print(_decide_hint(gate, runner.store.work))
        return 0
    if outcome.state.status.value == "rejected":
        print(f"the promotion was rejected; the record is in {loc['issue thread']}")
        return 0
    if outcome.halted is not None:
        from bot import pipeline

        print(f"promotion halted: {pipeline.describe(outcome.state)}", file=sys.stderr)
        failure = outcome.state.failure
        if failure is not None and failure.fix:
            print(f"  fix: {failure.fix}", file=sys.stderr)
        print(f"  then: promote resume --work {runner.store.work}", file=sys.stderr)
        return 1
    print("promotion finished: all 7 stages, 3 gates")
    print(f"  PR record:   {loc['pull request']}")
    print(f"  fork branch: {runner.request.branch} in {loc['fork']}")
    print(f"  issue thread: {loc['issue thread']}")
    return 0


def _not_judged_note(results: Path | None, work: Path) -> str:
    """Gate 3 stays open on the verdicts stage 5 drew before these reports: a finished stage is not rerun
    behind the person's back (the rerun is gate 3's ``rejudge`` change request), but the verdicts printed
    next must not read as the judgement of the results just given."""
    from bot.review.gate3 import REJUDGE_RESULTS

    given = f"the reports now in {sh(results)}" if results else "no --results: run.json now records none"
    return (
        f"  NOT JUDGED YET: gate 3's verdicts below are stage 5's from before this run, drawn from other reports "
        f"(or none) than this run gives it ({line(given)}); a stage is not rerun at an open gate. run.json keeps "
        f"them for the next judgement; to judge them now:\n"
        f"    promote request-changes 3 --reason {sh(REJUDGE_RESULTS)} --work {sh(work)}"
    )


def _gate_brief(state, gate: int, *, fork, base: str) -> list[str]:
    """What the person decides at the open gate: headline, counts, what to read first, the directives.

    The same facts as the status comment and the review report (saved with the review round, registry in
    bot.directives); saved text is one terminal line each (bot.escape.line)."""
    from bot import directives
    from bot.golang.translate import CHECK_BELOW_FLOOR

    rounds = state.reviews.get(gate) or []
    out = []
    if rounds:
        review = rounds[-1]
        if review.headline:
            out.append(f"  deciding on {line(review.headline)}")
            out += [f"    {line(x)}" for x in review.headline_lines]  # the figures behind it, one a line
        open_ = " (the review did not converge: the blocking ones are open)" if gate in state.unconverged else ""
        out.append(f"  findings: {review.tally()}{open_}")
        out += [
            f"  below the fidelity floor: {line(f.fix)}"
            for f in review.blocking
            if f.check == CHECK_BELOW_FLOOR and f.fix
        ]
        if review.read_first:
            out.append("  read first:")
            for label, path in review.read_first.items():
                where = (
                    f"git -C {sh(fork)} diff {sh(base)}...{sh(state.branch)} -- {sh(path)}"
                    if path.endswith("/")
                    else f"git -C {sh(fork)} show {sh(f'{state.branch}:{path}')}"
                )
                out.append(f"    {line(label)}: {where}")
    forms = directives.for_gate(gate, rounds[-1].directive_examples if rounds else None)
    if forms:
        out.append("  request changes with one of these per line of --reason (prose alone is answered, not recorded):")
        width = max(len(d.syntax) for d in forms)
        out.extend(f"    {d.syntax:<{width}}  e.g. {d.example}" for d in forms)
        if stuck := directives.none_clears(gate, rounds[-1].findings if rounds else []):
            out.append(f"  {stuck}")
    return out


def _decide_hint(gate: int | None, work: Path) -> str:
    return (
        f"decide gate {gate}:\n"
        f"  promote approve {gate} --work {sh(work)}\n"
        f'  promote request-changes {gate} --reason "..." --work {sh(work)}\n'
        f'  promote reject {gate} --reason "..." --work {sh(work)}'
    )


def _settings_here(work: Path) -> dict:
    """run.json read again under the lock; a moved work directory records its new place (with a note)."""
    settings = read_settings(work)
    if settings.get("moved_from"):
        _note_move(settings)
        write_settings(work, settings)
    return settings


def _note_move(settings: dict) -> None:
    if settings.get("moved_from"):
        print(
            f"promote: note: this work directory was at {settings['moved_from']}; it goes on here "
            f"with the fork {settings['fork']}",
            file=sys.stderr,
        )


def _check_saved_state(work: Path) -> None:
    """An unreadable state.json is one line before anything (a fork, a lock, a translation) is touched."""
    from bot.forge.state_file import STATE_FILE, read_state

    read_state(work / STATE_FILE)


def _whoami() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry in some containers
        return "local-user"


def _say(args, line: str) -> None:
    if not getattr(args, "quiet", False):
        print(line)
