"""`promote handle-event | sandbox-exec | dispatch-next | check-config`: the GitHub home's commands.

``handle-event`` is what the workflow's write job runs; ``sandbox-exec`` is all
the sandboxed job runs (it holds no secrets and writes nothing but a results
file); ``dispatch-next`` starts the run the write job asked for, after the
workflow uploaded what that run needs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bot.model import counted_noun


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("handle-event", help="handle the GitHub event this Actions job was started for")
    p.set_defaults(func=cmd_handle_event, home=False)  # checked in bot.events.handle, to say it on the issue

    p = sub.add_parser("sandbox-exec", help="run execution requests (evolved/generated code) in the sandbox")
    p.add_argument("--requests", type=Path, required=True, help="execution-requests.json from the write job")
    p.add_argument("--out", type=Path, required=True, help="where to write the results (JSON)")
    p.set_defaults(func=cmd_sandbox_exec)

    p = sub.add_parser("dispatch-next", help="start the workflow run the last handle-event asked for")
    p.set_defaults(func=cmd_dispatch_next, home=False)

    p = sub.add_parser("check-config", help="check a repository's bot setup through the API and say what to fix")
    p.add_argument("--repo", required=True, metavar="OWNER/NAME")
    p.set_defaults(func=cmd_check_config, home=False)  # reports it with the rest


def cmd_handle_event(args) -> int:
    from bot.events.env import EventEnv

    handle_event(EventEnv.from_environ())
    return 0


def handle_event(env, *, client_factory=None):
    """What the action's step does: handle the event, then the job summary and the step's outputs."""
    from bot.events import handle

    result = handle(env, client_factory=client_factory)
    print(f"promote: {env.event_name}: {result.action}")
    for note in result.notes:
        print(f"  {note}")
    _write_summary(env, result)
    _write_outputs(env, result)
    return result


def _write_summary(env, result) -> None:
    if env.summary_path is None:
        return
    text = result.status or f"**promotion bot**: {result.action}\n"
    if result.waiting and result.waiting not in text:  # the checklist names them already when it was rendered
        text = f"{text.rstrip()}\n\n{result.waiting}\n"
    with env.summary_path.open("a", encoding="utf-8") as fh:
        fh.write(text.rstrip() + "\n")


def _write_outputs(env, result) -> None:
    if env.output_path is None:
        return
    state = result.state
    stage = ""
    if state is not None:
        stage = str(int(state.next_stage)) if state.next_stage else (str(max(state.stages)) if state.stages else "")
    values = {
        "action": result.action,
        "stage": stage,
        "gate": str(state.open_gate or "") if state is not None else "",
        "status": state.status.value if state is not None else "",
        "pr-url": result.pull_url,
        "requests": "true" if env.requests_path.is_file() else "false",
    }
    totals = state.llm.totals() if state is not None else None
    values["tokens"] = str(totals.total_input + totals.output_tokens) if totals else "0"
    values["cost-usd"] = f"{totals.usd:.4f}" if totals and totals.usd is not None else ""
    with env.output_path.open("a", encoding="utf-8") as fh:
        for key, value in values.items():
            fh.write(f"{key}={' '.join(str(value).split())}\n")


def cmd_sandbox_exec(args) -> int:
    import os

    from bot import sandbox
    from bot.events.handoff import requests_from_file
    from bot.execution import run_all

    sandbox.require()  # this code came from an issue: never build it without the sandbox
    requests = requests_from_file(args.requests) if args.requests.is_file() else []
    previous = os.environ.get(sandbox.REQUIRE_ENV)
    os.environ[sandbox.REQUIRE_ENV] = "1"
    try:
        results = run_all(requests)
    finally:
        if previous is None:
            os.environ.pop(sandbox.REQUIRE_ENV, None)
        else:
            os.environ[sandbox.REQUIRE_ENV] = previous
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"results": results}, sort_keys=True))
    print(f"promote: ran {counted_noun(len(requests), 'execution request')} in the sandbox; results in {args.out}")
    return 0


def cmd_dispatch_next(args) -> int:
    from bot.events.env import EventEnv

    return dispatch_next(EventEnv.from_environ(command="dispatch-next"))


def dispatch_next(env, *, client_factory=None) -> int:
    """What the action's last step does: start the run the write job asked for, and for the GPU benchmark keep
    the run GitHub started in the promotion's state (so a cancel can stop it). The exit status: 1 when GitHub
    refused the dispatch, after saying so on the issue (``dispatch_failed``), so the run shows red."""
    from bot.github.client import GitHub, GitHubError

    if not env.dispatch_path.is_file():
        print("promote: nothing to dispatch")
        return 0
    spec = json.loads(env.dispatch_path.read_text(encoding="utf-8"))
    inputs = {k: str(v) for k, v in spec["inputs"].items()}
    client = (client_factory or GitHub)(env.write_token, env.repository, api_url=env.api_url)
    try:
        skip = [int(r) for r in spec.get("skip_runs") or []]  # runs the write job cancelled: never this dispatch's
        run = client.dispatch(spec["workflow"], spec["ref"], inputs, title=_title(spec, inputs), skip=skip)
    except GitHubError as exc:
        env.dispatch_path.unlink()  # what the run was to do is the failed step now: its `/retry` asks again
        print(f"promote: could not dispatch {spec['workflow']}: {exc}", file=sys.stderr)
        print(f"promote: {_say_failed(env, spec, exc, client_factory)}", file=sys.stderr)
        return 1
    env.dispatch_path.unlink()
    print(f"promote: dispatched {spec['workflow']} with {spec['inputs']}", file=sys.stderr)
    if spec.get("benchmark"):
        from bot.events.benchmark import record_run
        from bot.events.session import Session

        session = Session.open(env, client_factory=client_factory)
        print(f"promote: {record_run(session, int(inputs['issue']), inputs['commit'], run)}", file=sys.stderr)
    return 0


def _title(spec: dict, inputs: dict[str, str]) -> str:
    """The title GitHub gives the benchmark run (its ``run-name``), by which an unclear dispatch answer is checked
    against the runs GitHub lists before anything is sent again; "" for the bot's own continuation."""
    from bot.github.runs import benchmark_run_title

    return benchmark_run_title(inputs["issue"], inputs["commit"]) if spec.get("benchmark") else ""


def _say_failed(env, spec: dict, error, client_factory) -> str:
    """The refused dispatch, said on the issue; or why it could not be (GitHub failing for this call too)."""
    from bot.events.dispatch_failed import record_failed_dispatch
    from bot.events.session import Session
    from bot.model import RequestError

    try:
        return record_failed_dispatch(Session.open(env, client_factory=client_factory), spec, error)
    except RequestError as exc:  # GitHub failing here too, or the configuration broke: the red run is all
        return f"could not say so on the issue either: {exc}"


def cmd_check_config(args) -> int:
    from bot.github.setup_check import check_repository

    report = check_repository(args.repo)
    for line in report.problems:
        print(f"  - {line}")
    for line in report.notes:
        print(f"  note: {line}")
    if not report.ready:
        print(f"promote: {args.repo}: {counted_noun(len(report.problems), 'thing')} to fix (see docs/github-setup.md)")
        return 1
    print(f"promote: {args.repo} is set up for the promotion bot")
    return 0
