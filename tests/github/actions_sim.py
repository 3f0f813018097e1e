"""GitHub Actions, played by the test: each event becomes a run of promotion.yml's two jobs against the fake.

What the workflow file says, the simulator does: the `sandbox` job (only when
the run was dispatched with `requests_run`) answers the execution requests the
earlier run uploaded, with no token in its environment; the `advance` job runs
`promote handle-event` with GITHUB_TOKEN, then the action's upload step and
`promote dispatch-next`. Dispatches the bot makes become the next runs; a
dispatch of benchmark.yml is answered by ``gpu`` (the test's stand-in for the
GPU job). Every run records which event it handled, so a test can replay it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot import PROJECT_ROOT
from bot.cli.github import dispatch_next, handle_event
from bot.events.env import EventEnv
from bot.events.promotion import Result
from bot.github.client import GitHub
from bot.github.labels import Label
from tests.github.fake_github import FakeGitHub
from tests.github.state import Dispatch

REPO = "acme/llm-d-router"


@dataclass
class Run:
    id: int
    event: str
    payload: dict[str, Any]
    requests_run: str = ""
    result: Result | None = None
    sandbox_ran: bool = False
    calls: int = 0  # REST calls made by this run's jobs
    summary: str = ""  # what the job wrote to the Actions job summary
    outputs: dict[str, str] = field(default_factory=dict)  # the action's outputs
    dispatched: int = 0  # `promote dispatch-next`'s exit status (not 0: the step, and so the run, failed)


@dataclass
class ActionsSim:
    fake: FakeGitHub
    root: Path
    repo: str = REPO
    gpu: Callable[[dict[str, str]], None] | None = None  # answers benchmark.yml dispatches
    runs: list[Run] = field(default_factory=list)
    seen_dispatches: int = 0
    sleeps: list[float] = field(default_factory=list)
    benchmark_runs: dict[int, Dispatch] = field(default_factory=dict)  # id(inputs handed to gpu) -> its run
    app_token: str = ""  # the action's `app-token:` input (PROMOTION_APP_TOKEN): the bot then writes with it

    def benchmark_run(self, inputs: dict[str, str]) -> Dispatch:
        """The fake's run of the benchmark dispatch whose inputs ``gpu`` was handed (a cancel ends it)."""
        return self.benchmark_runs[id(inputs)]

    # ----------------------------------------------------------------- events
    def event(self, event: str, action: str | None, number: int | None = None, **kw) -> Run:
        """A person's event (the webhook GitHub would deliver), run through the workflow, then every follow-up."""
        payload = self.fake.webhook(event, action, self.repo, number, **kw)
        run = self._run(event, payload)
        self.drain()
        return run

    def deliver(self, event: str, payload: dict) -> Run:
        """A run of an event GitHub delivered earlier (``fake.webhook`` then), starting only now: one queued
        behind others, or cancelled and re-run later; then every follow-up."""
        run = self._run(event, payload)
        self.drain()
        return run

    def replay(self, run: Run) -> Run:
        """A re-run of an earlier workflow run: GitHub replays the same event with the same run id."""
        replayed = Run(run.id, run.event, run.payload, run.requests_run)
        self._execute(replayed)
        return replayed

    def drain(self, limit: int = 40) -> None:
        """Follow the bot's own dispatches until none is pending."""
        for _ in range(limit):
            pending = self.fake.dispatches[self.seen_dispatches :]
            if not pending:
                return
            self.seen_dispatches += len(pending)
            for d in pending:
                inputs = {k: str(v) for k, v in (d.inputs or {}).items()}
                if d.workflow.endswith("benchmark.yml"):
                    assert self.gpu is not None, f"the bot dispatched the GPU benchmark: {inputs}"
                    self.benchmark_runs[id(inputs)] = d
                    self.gpu(inputs)
                    continue
                payload = self.fake.webhook(
                    "workflow_dispatch",
                    None,
                    self.repo,
                    inputs=inputs,
                    ref=d.ref,
                    workflow=d.workflow,
                    sender=self.fake.BOT,
                )
                self._run("workflow_dispatch", payload, requests_run=inputs.get("requests_run", ""))
                self.fake.finish_run(d.run_id)
        raise AssertionError("the bot kept dispatching runs")

    # ------------------------------------------------------------------- jobs
    def _run(self, event: str, payload: dict, requests_run: str = "") -> Run:
        run = Run(len(self.runs) + 1000, event, payload, requests_run)
        self.runs.append(run)
        self._execute(run)
        return run

    def _execute(self, run: Run) -> None:
        before = self.fake.count_calls()
        work = self.root / f"run-{run.id}"
        if work.exists():
            shutil.rmtree(work)  # a re-run starts on a fresh runner
        work.mkdir(parents=True)
        results = replies = None
        if run.requests_run:
            results = self._sandbox_job(run, work)
            replies = self.root / "artifacts" / run.requests_run / "replies.json"
        event_path = work / "event.json"
        event_path.write_text(json.dumps(run.payload))
        env = EventEnv.from_environ(
            {
                **self.fake.env(self.repo),
                "GITHUB_EVENT_NAME": run.event,
                "GITHUB_EVENT_PATH": str(event_path),
                "GITHUB_RUN_ID": str(run.id),
                "GITHUB_REF_NAME": "main",
                "PROMOTION_WORK": str(work / "promotion-bot"),
                "PROMOTION_CONFIG": str(self.root / "config.yml"),
                "PROMOTION_EXECUTION_RESULTS": str(results) if results else "",
                "PROMOTION_REPLIES": str(replies) if replies and replies.is_file() else "",
                "GITHUB_STEP_SUMMARY": str(work / "summary.md"),
                "GITHUB_OUTPUT": str(work / "output.txt"),
                "PROMOTION_APP_TOKEN": self.app_token,
                # action.yml passes the `anthropic-api-key` input (the repository secret) as ANTHROPIC_API_KEY
                "ANTHROPIC_API_KEY": os.environ.get("ANTHROPIC_API_KEY", ""),
            }
        )
        run.result = handle_event(env, client_factory=self._client)
        run.summary = (work / "summary.md").read_text() if (work / "summary.md").is_file() else ""
        outputs = (work / "output.txt").read_text() if (work / "output.txt").is_file() else ""
        run.outputs = dict(line.split("=", 1) for line in outputs.splitlines() if "=" in line)
        # The action's next steps: upload the requests (if the step said so), then start the next run.
        if run.outputs.get("requests") == "true":
            artifacts = self.root / "artifacts" / str(run.id)
            shutil.copytree(env.handoff_dir, artifacts, dirs_exist_ok=True)
        run.dispatched = dispatch_next(env, client_factory=self._client)
        run.calls = self.fake.count_calls() - before

    def _sandbox_job(self, run: Run, work: Path) -> Path:
        """The sandboxed job: no token anywhere in reach; requests in, results out, as data."""
        from bot.cli import main

        requests = self.root / "artifacts" / run.requests_run / "execution-requests.json"
        assert requests.is_file(), f"run {run.requests_run} uploaded no execution requests"
        out = work / "results" / "results.json"
        assert main(["sandbox-exec", "--requests", str(requests), "--out", str(out)]) == 0
        run.sandbox_ran = True
        return out

    def _client(self, token: str, repository: str, **kw) -> GitHub:
        return GitHub(token, repository, throttle=False, sleep=self.sleeps.append, **kw)


def seed_fork(root: Path) -> Path:
    """The fork as an adopter has it: llm-d-router (our mirror) with the bot's workflows and form."""
    seed = root / "seed"
    shutil.copytree(PROJECT_ROOT / "gomirror" / "llm-d-router", seed)
    shutil.copytree(PROJECT_ROOT / ".github", seed / ".github")
    bench = seed / ".github" / "workflows" / "benchmark.yml"
    if not bench.exists():  # until the GPU workflow lands: its dispatch contract, nothing else
        inputs = "".join(
            f"      {k}:\n        required: true\n        type: string\n"
            for k in ("issue", "branch", "commit", "resume")
        )
        bench.write_text(
            "name: benchmark\non:\n  workflow_dispatch:\n    inputs:\n" + inputs + "permissions: {}\n"
            "jobs:\n  run:\n    runs-on: [self-hosted, gpu]\n    permissions: {}\n    steps:\n      - run: 'true'\n"
        )
    return seed


def standard_sim(fake: FakeGitHub, tmp: Path) -> ActionsSim:
    """The fork, three people (a researcher, a maintainer, a triager), a BLIS repository, and a GPU stand-in."""
    fake.add_repo(REPO, seed_dir=seed_fork(tmp))
    fake.add_repo("acme/blis")
    fake.add_user("researcher", role="read")
    fake.add_user("maria", role="maintain")
    fake.add_user("tom", role="triage")
    # The label the form applies, as the bot creates it (with its description: GitHub's schema for a PR's labels
    # has no null description, and the bot labels its PRs `promotion` too).
    promotion = Label.PROMOTION
    GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False).ensure_labels(
        {str(promotion): (promotion.color, promotion.description)}
    )
    root = tmp / "actions"
    root.mkdir()
    # The GPU stand-in below commits the bundled sample reports, so this demonstration repository admits them.
    (root / "config.yml").write_text("blis_repository: acme/blis\nallow_sample_data: true\n")
    sim = ActionsSim(fake, root)

    def gpu(inputs: dict[str, str]) -> None:
        """benchmark.yml's contract: it commits the reports under benchmarks/promotion/<slug>/results/ on the
        branch it was given, at the commit it was given, then dispatches stage 5's evaluation."""
        publish_sample(sim, inputs, promotion=inputs["issue"])

    sim.gpu = gpu
    return sim


def publish_sample(sim: ActionsSim, inputs: dict[str, str], *, promotion: str) -> None:
    """What benchmark.yml's publish job does, with the bundled sample reports tagged for ``promotion`` (they ship
    tagged for promotion 1: a promotion filed as another issue number would fail stage 5 on them): it replaces
    benchmarks/promotion/<slug>/results/ (``rm -rf`` then the run's files), pushes only onto the commit it was
    given, and dispatches stage 5's evaluation. A run the bot cancelled publishes nothing."""
    fake = sim.fake
    run = sim.benchmark_run(inputs)
    if run.conclusion == "cancelled":
        return  # the bot cancelled the run: its jobs never publish
    assert fake.branch_sha(REPO, inputs["branch"]) == inputs["commit"], "the branch moved"
    slug = inputs["branch"].split("/", 1)[1].split("-", 1)[1]
    dest = f"benchmarks/promotion/{slug}/results/"
    sample = PROJECT_ROOT / "examples" / "weighted-adaptive" / "results"
    tags = {
        b"- promotion:1\n": f"- promotion:{promotion}\n".encode(),
        b":promotion-1-": f":promotion-{promotion}-".encode(),
    }
    files: dict[str, str | bytes | None] = dict.fromkeys(_files_under(fake, inputs["commit"], dest))
    files |= {
        f"{dest}{p.relative_to(sample)}": _retagged(p.read_bytes(), tags)
        for p in sorted(sample.rglob("*"))
        if p.is_file()
    }
    fake.git_commit(REPO, inputs["branch"], files, "benchmark results (sample data stands in for the GPUs)")
    fake.finish_run(run.run_id)
    GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False).dispatch(
        "promotion.yml", "main", {"issue": inputs["issue"], "step": "benchmark-finished"}
    )


def _retagged(report: bytes, tags: dict[bytes, bytes]) -> bytes:
    """A sample report tagged for another promotion: its ``promotion:<id>`` keyword and its EPP image's tag."""
    for old, new in tags.items():
        report = report.replace(old, new)
    return report


def _files_under(fake: FakeGitHub, commit: str, prefix: str) -> list[str]:
    from tests.github import gitrepo

    out = gitrepo.git(fake.git_dir(REPO), "ls-tree", "-r", "--name-only", commit, "--", prefix)
    return out.decode().splitlines()


GH_CLI = """#!{python}
# What `gh workflow run WORKFLOW -f key=value ...` does: POST a workflow_dispatch to the API, as GH_TOKEN.
import json, os, sys, urllib.request
args = sys.argv[1:]
assert args[:2] == ["workflow", "run"], args
inputs = dict(a.split("=", 1) for a in args[3:] if a != "-f")
req = urllib.request.Request(
    f"{{os.environ['GITHUB_API_URL']}}/repos/{{os.environ['GITHUB_REPOSITORY']}}/actions/workflows/{{args[2]}}/dispatches",
    data=json.dumps({{"ref": "main", "inputs": inputs}}).encode(),
    headers={{"Authorization": f"Bearer {{os.environ['GH_TOKEN']}}", "Accept": "application/vnd.github+json"}},
    method="POST",
)
urllib.request.urlopen(req).read()
"""


def benchmark_workflow_gpu(
    sim: ActionsSim, *, effect: float = -0.2, mix: dict | None = None
) -> Callable[[dict[str, str]], None]:
    """The GPU runners, played by running benchmark.yml's own jobs (plan, benchmark, publish) with bash: the
    fake cluster behind `llmdbenchmark`/`kubectl`, the fork on the fake GitHub, and `gh` against its API, as the
    fake's run of the dispatch (its GITHUB_RUN_ID). ``mix``: what the fake's priority-mix harness admits per arm
    and class (tests/bench/fakes)."""
    import sys

    from tests.bench import fakes
    from tests.bench.workflow_runner import Runner, checkout, run_job

    fake, root = sim.fake, sim.root

    def gpu(inputs: dict[str, str]) -> None:
        base = root / f"gpu-{len(list(root.glob('gpu-*')))}"
        extra = {"mix": mix} if mix else {}
        env = fakes.install(base, effect={"evolved": effect}, seconds_per_run_second=0.0, **extra)  # no wall time
        (base / "bin" / "gh").write_text(GH_CLI.format(python=sys.executable))
        (base / "bin" / "gh").chmod(0o755)
        runner_temp = base / "runner-temp"
        (runner_temp / "promote-venv" / "bin").mkdir(parents=True)
        (runner_temp / "promote-venv" / "bin" / "promote").symlink_to(Path(sys.executable).parent / "promote")
        remote = f"{fake.server_url}/{REPO}.git"
        env.update(
            RUNNER_TEMP=str(runner_temp),
            BENCHMARK_REMOTE=remote,
            PROMOTION_BENCH_STATE=str(base / "state"),
            GITHUB_SERVER_URL=fake.server_url,
            GITHUB_API_URL=fake.api_url,
            GITHUB_REPOSITORY=REPO,
            GITHUB_RUN_ID=str(sim.benchmark_run(inputs).run_id),
        )
        r = Runner(base, env, inputs, token=fake.bot_token)
        auth = tuple(fake.git_auth_args())
        run_job(r, "plan", checkout(base, remote, inputs["commit"], "ws-plan", auth), {})
        assert r.outcomes["check"] == "success", r.last.stdout + r.last.stderr
        needs = {"plan": r.outputs["plan"]}
        run_job(r, "benchmark", checkout(base, remote, inputs["commit"], "ws-gpu", auth), needs)
        assert r.outcomes["run"] == "success", r.last.stdout + r.last.stderr
        run_job(r, "publish", checkout(base, remote, inputs["commit"], "ws-publish", auth), needs)
        assert r.last.returncode == 0, r.last.stdout + r.last.stderr

    return gpu
