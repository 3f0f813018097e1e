"""The benchmark loop: image, stand-up, cells, swaps, teardown, with the manifest as the only memory.

Guarantees, each tested against fake ``llmdbenchmark`` / ``kubectl`` / ``make`` / ``docker``:

- **teardown always**: every stand-up that was attempted is torn down, whether the run
  finished, failed, timed out, hit the budget or was cancelled (SIGTERM/SIGINT); a job
  killed outright (SIGKILL) is torn down by ``promote bench teardown`` (benchmark.yml runs
  it in an ``if: always()`` step) and by the next ``--resume``'s own teardown;
- **no finished cell twice**: a cell is finished when its report is in the results layout
  and in the manifest; ``--resume`` skips it, adopts a run llm-d-benchmark finished but the
  runner did not record (the job died in between), and discards anything half-written;
- **nothing silently dropped**: a report that fails validation is set aside under
  ``rejected/`` and listed in the manifest;
- **the budget**: no step starts that its estimate says would cross the GPU-minute cap;
- **the sequential design** (``rounds``): with a sequential rule in the evaluation spec the cells run
  in rounds and stop once decided; ``fixed`` runs every planned repetition;
- **no raw tool output in the manifest**: it is committed to a branch that may be public, and
  llm-d-benchmark prints the cluster's inference route (a ``curl`` line with its URL), kube contexts and
  workspace paths. Each step's output goes to the step log under ``--workspace`` (``STEP_LOG``), which
  stays on the machine that ran it; the manifest keeps kind, time, GPU-minutes, ok and a reason the bot writes.

The files each run reads and leaves (overrides, profiles, keywords, its report) are ``bot.bench.run.run_files``'.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bot.bench.evaluation_spec import EvaluationSpec
from bot.bench.layout import TREATMENTS
from bot.bench.mix_only import MIX_ONLY
from bot.bench.plan_model import BenchmarkPlan
from bot.bench.run import commands, found, lock, run_files, tools
from bot.bench.run import manifest as mf
from bot.bench.run.budget import Budget, remaining_text
from bot.bench.run.faults import PodDeletion
from bot.bench.run.procs import Cancelled, Procs, cancel_on_signals
from bot.bench.run.schedule import CellRun, Group, SetupRun, build_schedule
from bot.bench.run.stops import BudgetStop, StepFailed
from bot.model import PromotionRequest, RequestError

#: A cell that runs longer than duration x this (plus the slack) is killed as hung.
CELL_TIMEOUT_FACTOR = 3.0
CELL_TIMEOUT_SLACK_S = 900.0
#: Every step's raw output, appended under --workspace: it stays on the runner, never in the manifest.
STEP_LOG = "promote-bench-steps.log"


class BenchRunError(RequestError):
    """A benchmark run that cannot start as asked (exit 2)."""


@dataclass
class RunConfig:
    request: PromotionRequest
    plan: BenchmarkPlan
    epp_configs: dict[str, str]
    results: Path
    target: commands.Target
    commit: str
    image_repo: str
    fork: Path | None = None
    image: str | None = None  # an already built registry/repository:tag@sha256:... (skips the build)
    budget_gpu_minutes: float | None = None
    resume: bool = False
    dry_run: bool = False
    arm_order: tuple[str, ...] = TREATMENTS
    fast_swap: bool = True
    warmup_s: int = 60
    env: dict[str, str] | None = None
    log: Callable[[str], None] = print
    executor: object | None = None
    cell_timeout_s: float | None = None
    run_overhead_minutes: float | None = None  # budget estimates; default: the plan's cost parameters
    standup_minutes: float | None = None
    spec: EvaluationSpec | None = None  # evaluation.yaml; with a sequential rule the runner runs in rounds
    fixed: bool = False  # run every cell to the fixed plan's repetitions even when the spec is sequential
    plugin_files: dict[str, str] | None = None  # the plugin code's fingerprint at the commit (manifest.plugin_code)
    github_run: int | None = None  # the Actions run doing this (benchmark.yml's), kept in manifest.runs


@dataclass
class Outcome:
    status: str  # finished | budget | failed | cancelled | dry-run
    message: str
    manifest: mf.Manifest | None = None
    remaining: list[CellRun] = field(default_factory=list)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class BenchRunner:
    def __init__(self, cfg: RunConfig):
        self.cfg = cfg
        self.procs = Procs(cfg.log, env=cfg.env, dry_run=cfg.dry_run)
        self.gpus = cfg.plan.parameters.gpus_per_stack
        self.budget = Budget(
            cap=cfg.budget_gpu_minutes,
            gpus=self.gpus,
            run_overhead_minutes=(
                cfg.run_overhead_minutes
                if cfg.run_overhead_minutes is not None
                else cfg.plan.parameters.run_overhead_minutes
            ),
            standup_minutes=cfg.standup_minutes
            if cfg.standup_minutes is not None
            else cfg.plan.parameters.standup_minutes,
        )
        self.manifest: mf.Manifest | None = None
        self.up: dict[str, SetupRun] = {}  # group -> setup treatment the stack currently runs
        self.stack: tuple[Group, SetupRun] | None = None  # the stack that is up and the setup it serves
        self.round_cells: list[CellRun] | None = None  # a sequential round's runs (what a budget stop leaves)

    # ------------------------------------------------------------------ entry
    def run(self) -> Outcome:
        """The whole run with the namespace locked (bot.bench.run.lock): refused while another benchmark holds it."""
        if self.cfg.image and self.cfg.spec is not None:  # refused before the cluster is touched
            from bot.bench.run.image import given_image_problem

            if problem := given_image_problem(self.cfg.image, self.cfg.spec.evolved_image):
                raise BenchRunError(problem)
        results = self.cfg.results
        existing = mf.load(results) if results.is_dir() else None
        builds = not self.cfg.image and (existing is None or existing.image is None)  # as _image decides
        if not self.cfg.dry_run and (
            problem := tools.missing_problem(self.cfg.target, self._all_cells(), self.cfg.env, builds_image=builds)
        ):
            raise BenchRunError(problem)  # before the lock, the manifest, the image build and the first stand-up
        if problem := mf.results_problem(results, existing, resume=self.cfg.resume, commit=self.cfg.commit):
            raise BenchRunError(problem)  # before the lock: a --resume with nothing to resume takes over no lock
        with lock.held(self.cfg):
            return self._run()

    def _run(self) -> Outcome:
        cfg = self.cfg
        self.manifest = self._open_manifest()
        self.budget.spent = self.manifest.spent_gpu_minutes
        image = self._image()
        groups = build_schedule(
            cfg.plan, cfg.request, cfg.epp_configs, image, arm_order=cfg.arm_order, fast_swap=cfg.fast_swap
        )
        if self.sequential:
            from bot.bench.run.rounds import RoundLoop

            loop = RoundLoop(self, image)
            body: Callable[[], str] = loop.dry_run if cfg.dry_run else loop.run
        else:
            body = lambda: self._fixed(groups)  # noqa: E731
        if cfg.plan.priority_mix is not None:  # first: its cost is fixed, so the rounds then see what is left
            from bot.bench.run.mix import MixRuns

            cells, mix = body, MixRuns(self, image)
            body = lambda: f"{mix.run()}; {cells()}"  # noqa: E731
        # A dry-run goes through the same stops: its steps count at their estimates (Budget.assume), so a cap
        # stops it where it would stop the real run, with the same message and exit status.
        with cancel_on_signals(self.procs):
            try:
                try:
                    message = body()
                finally:
                    self._release()
            except Cancelled:
                return self._end("cancelled", "cancelled (SIGTERM/SIGINT); the stack was torn down")
            except BudgetStop as stop:
                text = str(stop) or remaining_text(self.budget, self._serves(), dry_run=cfg.dry_run)
                return self._end("budget", f"stopped before the GPU budget would be exceeded: {text}")
            except StepFailed as exc:
                return self._end("failed", str(exc))
        return self._end("dry-run" if cfg.dry_run else "finished", message)

    @property
    def sequential(self) -> bool:
        """Run in rounds: the evaluation spec has a sequential rule and --fixed was not asked for."""
        spec = self.cfg.spec
        return spec is not None and spec.decision.sequential is not None and not self.cfg.fixed

    def _fixed(self, groups: list[Group]) -> str:
        """Every cell to its planned repetitions, one group's stack at a time."""
        pending = [c for g in groups for c in g.cells if not self._finished(c)]
        for group in groups:
            self._run_setups(group, group.setups)
            self._release()
        if not self.cfg.plan.cells:  # a mix-only plan (bot.bench.mix_only): the mix was the whole run
            done = f"no cell is planned ({MIX_ONLY})"
            return f"{done}, {self.budget.dry_run_text()}" if self.cfg.dry_run else done
        if self.cfg.dry_run:
            return f"{len(pending)} cell run(s) would run, {self.budget.dry_run_text()}"
        return f"all {len([c for g in groups for c in g.cells])} cell runs are in {self.cfg.results}"

    def _end(self, status: str, message: str) -> Outcome:
        assert self.manifest is not None
        how = (
            ""
            if status in ("finished", "dry-run")
            else " Nothing ran (dry-run)."
            if self.cfg.dry_run
            else f" Resume with the same command plus --resume (finished cells are kept: {len(self.manifest.cells)})."
        )
        if status not in ("finished", "dry-run") and not self.cfg.dry_run:
            self._event("stop", status, _now(), ok=False, detail=message)
        text = f"{message.rstrip().rstrip('.')}.{how}" if how else message  # a sentence, then how to go on
        return Outcome(status, text, self.manifest, self.budget.remaining)

    # --------------------------------------------------------------- manifest
    def _open_manifest(self) -> mf.Manifest:
        cfg = self.cfg
        results = cfg.results
        existing = mf.load(results) if results.is_dir() else None
        if problem := mf.results_problem(results, existing, resume=cfg.resume, commit=cfg.commit):
            raise BenchRunError(problem)  # checked before the lock too (run); again here, under it
        manifest = existing or mf.Manifest(
            promotion=cfg.request.id,
            slug=cfg.request.slug,
            commit=cfg.commit,
            budget_gpu_minutes=cfg.budget_gpu_minutes,
            planned_gpu_minutes=cfg.plan.total_gpu_minutes,
            plugin_files=cfg.plugin_files or {},
        )
        manifest.budget_gpu_minutes = cfg.budget_gpu_minutes
        if cfg.github_run is not None and cfg.github_run not in manifest.runs:
            manifest.runs.append(cfg.github_run)
        if not cfg.dry_run:
            results.mkdir(parents=True, exist_ok=True)
            run_files.discard_unrecorded(results, manifest, cfg.log)
            mf.save(results, manifest)
        return manifest

    def _save(self) -> None:
        if not self.cfg.dry_run:
            assert self.manifest is not None
            mf.save(self.cfg.results, self.manifest)

    def _event(
        self, kind: str, what: str, start: str, *, minutes: float = 0.0, ok: bool = True, detail: str = ""
    ) -> None:
        assert self.manifest is not None
        cost = self.budget.charge(minutes) if minutes else 0.0
        self.manifest.events.append(
            mf.EventRecord(
                kind=kind, what=what, start=start, end=_now(), gpu_minutes=cost, ok=ok, detail=self._tidy(detail)
            )
        )
        self._save()

    def _tidy(self, detail: str) -> str:
        paths = {"--results": self.cfg.results, "--workspace": self.cfg.target.workspace}
        return mf.without_local_paths(detail, paths)[-500:]

    def _finished(self, cell: CellRun) -> bool:
        assert self.manifest is not None
        if self.manifest.finished(cell.run_treatment, cell.arm) is not None:
            return True
        return any(r.cell == f"{cell.arm}/{cell.run_treatment}" for r in self.manifest.rejected)

    # ------------------------------------------------------------------ image
    def _image(self) -> str:
        cfg, manifest = self.cfg, self.manifest
        assert manifest is not None
        if manifest.image is not None:
            return f"{manifest.image.ref}@{manifest.image.digest}" if manifest.image.digest else manifest.image.ref
        from bot.bench.run.image import build_epp_image, image_ref

        if cfg.image:  # not built here: no commit is claimed for it (stage 5 binds to the plan's pin instead)
            ref, _, digest = cfg.image.partition("@")
            manifest.image = mf.ImageRecord(ref=ref, digest=digest or None, commit=None, built=False)
            cfg.log(f"using the given image {cfg.image}: not built from {cfg.commit[:12]} (manifest: commit null)")
        else:
            ref = image_ref(cfg.image_repo, cfg.request.id, cfg.commit)
            start = _now()
            argv = [commands.image_build(cfg.fork or Path("FORK"), ref, cfg.target.container_runtime)]
            argv += [commands.image_push(cfg.fork or Path("FORK"), ref, cfg.target.container_runtime)]
            for a in argv:
                cfg.log(f"$ {' '.join(a)}  (in a worktree of the fork at {cfg.commit})")
            if cfg.dry_run:
                return f"{ref}@sha256:DIGEST"
            if cfg.fork is None:
                raise BenchRunError("--fork is needed to build the EPP image (or pass --image REF@sha256:DIGEST)")
            built = build_epp_image(cfg.fork, cfg.commit, ref, cfg.target.container_runtime, cfg.executor)
            manifest.image = mf.ImageRecord(ref=built["ref"], digest=built["digest"], commit=built["commit"])
            self._event("image", ref, start, detail=f"built from {cfg.commit}, digest {built['digest']}")
        self._save()
        image = manifest.image
        return f"{image.ref}@{image.digest}" if image.digest else image.ref

    # ------------------------------------------------------------------ stacks
    def _run_setups(self, group: Group, setups: list[SetupRun]) -> None:
        """Run the unfinished cells of ``setups`` (of ``group``) in order, standing up or swapping as needed.

        The stack is left up for the caller to release: a sequential round ends on the arm the next round
        starts with."""
        for setup in setups:
            cells = [c for c in setup.cells if not self._finished(c)]
            if not cells:
                continue
            self._serve(group, setup, cells[0])
            for cell in cells:
                if not self.budget.fits(self.budget.cell_estimate(cell)):
                    self._stop_budget(group)
                self._cell(setup, cell)

    def _serve(self, group: Group, setup: SetupRun, first: CellRun) -> None:
        """Make ``setup`` the one serving: nothing if it already is (and is warm), an EPP swap and re-warm on the
        same stack, or a stand-up (after tearing down another group's stack) and warm-up."""
        if self.stack is not None and self.stack[0].name == group.name:
            if self.stack[1].name == setup.name:
                return
            self.stack = (group, setup)
            self._swap(group, setup)
        else:
            self._release()
            if not self.budget.fits(self.budget.standup_estimate() + self.budget.cell_estimate(first)):
                self._stop_budget(group)
            self.stack = (group, setup)  # before the stand-up: a failed stand-up is torn down too
            self._standup(group, setup)
        self._warmup(setup, first)

    def _release(self) -> None:
        """Tear down the stack that is up, if any."""
        if self.stack is not None:
            group, setup = self.stack
            self.stack = None
            self._teardown(group, setup)

    def _stop_budget(self, group: Group) -> None:
        del group
        assert self.manifest is not None
        cells = self.round_cells if self.round_cells is not None else self._all_cells()
        self.budget.stop([c for c in cells if not self._finished(c)], "budget")
        raise BudgetStop

    def _all_cells(self) -> list[CellRun]:
        cfg = self.cfg
        groups = build_schedule(
            cfg.plan, cfg.request, cfg.epp_configs, "r/r:t", arm_order=cfg.arm_order, fast_swap=cfg.fast_swap
        )
        return [c for g in groups for c in g.cells]

    def _overrides(self, setup: SetupRun) -> Path:
        return run_files.overrides_file(self.cfg.target, setup, write=not self.cfg.dry_run)

    def _step(self, argv: list[str], what: str, kind: str, *, timeout: float | None = None) -> None:
        start, t0 = _now(), time.monotonic()
        result = self.procs.run(argv, timeout=timeout)
        # a dry run ran nothing: its wall time (the bot's own, longer on a loaded machine) is no GPU time
        minutes = 0.0 if self.cfg.dry_run else (time.monotonic() - t0) / 60.0
        ok = result.code == 0
        said = self._keep(kind, what, result)
        self._event(kind, what, start, minutes=minutes, ok=ok, detail=said)
        if not ok:
            raise StepFailed(f"{kind} of {what} failed ({said})")

    @property
    def step_log(self) -> Path:
        return self.cfg.target.workspace / STEP_LOG

    def _keep(self, kind: str, what: str, result) -> str:
        """Append a step's raw output to the step log (on this machine) and return what the manifest says of it."""
        if self.cfg.dry_run:
            return ""
        self._to_step_log(f"{kind} {what}: exit {result.code}", f"$ {shlex.join(result.argv)}\n{result.output}")
        if result.code == 0:
            return ""
        timed_out = " (timed out)" if result.code == 124 else ""
        return f"exit {result.code}{timed_out}; its output is in {STEP_LOG} under --workspace on the runner"

    def _to_step_log(self, header: str, text: str) -> None:
        self.step_log.parent.mkdir(parents=True, exist_ok=True)
        with self.step_log.open("a", encoding="utf-8") as fh:
            fh.write(f"=== {_now()} {header}\n{text.rstrip()}\n")

    def _standup(self, group: Group, setup: SetupRun) -> None:
        self.up[group.name] = setup
        self._step(commands.standup(self.cfg.target, setup.name, self._overrides(setup)), setup.name, "standup")
        if self.cfg.dry_run:
            self.budget.assume(self.budget.standup_estimate())

    def _swap(self, group: Group, setup: SetupRun) -> None:
        self.up[group.name] = setup
        self._step(commands.swap_epp(self.cfg.target, setup.name, self._overrides(setup)), setup.name, "swap")

    def _teardown(self, group: Group, setup: SetupRun) -> None:
        """Always; a second SIGTERM does not interrupt it."""
        previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
        for s in previous:
            with contextlib.suppress(ValueError):
                signal.signal(s, signal.SIG_IGN)
        was = self.procs.cancelled
        self.procs.cancelled = False
        try:
            start, t0 = _now(), time.monotonic()
            result = self.procs.run(commands.teardown(self.cfg.target, setup.name, self._overrides(setup)))
            if not self.cfg.dry_run:
                self._event(
                    "teardown",
                    group.name,
                    start,
                    minutes=(time.monotonic() - t0) / 60.0,
                    ok=result.code == 0,
                    detail=self._keep("teardown", group.name, result),
                )
            self.up.pop(group.name, None)
        finally:
            self.procs.cancelled = was
            for s, h in previous.items():
                with contextlib.suppress(ValueError, TypeError):
                    signal.signal(s, h)

    def _warmup(self, setup: SetupRun, first: CellRun) -> None:
        """Re-warm after a stand-up or an EPP swap: one discarded run at the first cell's rate."""
        if self.cfg.warmup_s <= 0:
            return
        name = f"warmup-{setup.name.replace('+', '-')}"
        profile = run_files.profile_file(
            self.cfg.target, self.cfg.request, first, write=not self.cfg.dry_run, duration_s=self.cfg.warmup_s
        )
        treatments = self._treatments(setup, name, first.rate)
        argv = commands.run_cell(
            self.cfg.target, setup.name, self._overrides(setup), profile, treatments, [f"warmup:{setup.name}"]
        )
        self._step(argv, name, "warmup", timeout=self._timeout(self.cfg.warmup_s))

    # ------------------------------------------------------------------- cells
    def _treatments(self, setup: SetupRun, name: str, rate: float) -> Path:
        return run_files.treatments_file(self.cfg.target, setup, name, rate, write=not self.cfg.dry_run)

    def _keywords(self, setup: SetupRun, cell: CellRun) -> list[str]:
        assert self.manifest is not None
        cfg = self.cfg
        return run_files.run_keywords(cfg.request, cfg.epp_configs, cfg.commit, self.manifest.image, cell)

    def _timeout(self, duration_s: float) -> float:
        return self.cfg.cell_timeout_s or duration_s * CELL_TIMEOUT_FACTOR + CELL_TIMEOUT_SLACK_S

    def _ran(self, setup: SetupRun, cell: CellRun, result, start: str, t0: float) -> float | None:
        """The minutes a finished harness run took, or None in a dry run (its estimate is charged instead);
        a run that failed is recorded and stops the benchmark. Shared by the cells and the priority mix."""
        if self.cfg.dry_run:
            self.budget.assume(self.budget.cell_estimate(cell), cell)
            return None
        minutes = (time.monotonic() - t0) / 60.0
        said = self._keep("run", f"{setup.name}/{cell.run_treatment}", result)
        if result.code != 0:
            self._event("stop", cell.run_treatment, start, minutes=minutes, ok=False, detail=said)
            raise StepFailed(f"run of {setup.name}/{cell.run_treatment} failed ({said})")
        return minutes

    def _cell(self, setup: SetupRun, cell: CellRun) -> None:
        cfg = self.cfg
        adopted = self._adopt(setup, cell)
        start, t0 = _now(), time.monotonic()
        fault = None
        if adopted is None:
            profile = run_files.profile_file(cfg.target, cfg.request, cell, write=not cfg.dry_run)
            treatments = self._treatments(setup, cell.run_treatment, cell.rate)
            argv = commands.run_cell(
                cfg.target, setup.name, self._overrides(setup), profile, treatments, self._keywords(setup, cell)
            )
            # What an earlier attempt left in this workspace is never this run's report (found.report_of).
            before = set(found.run_dirs(cfg.target, setup.name, cell.run_treatment))
            if cell.condition == "pod-failure" and not cfg.dry_run:
                fault = PodDeletion(cfg.target, cell.duration_s, cfg.log, env=cfg.env)
                fault.start()
            try:
                result = self.procs.run(argv, timeout=self._timeout(cell.duration_s))
            finally:
                if fault is not None:
                    fault.stop()
                    fault.join(timeout=30)
                    if fault.notes:  # kubectl failed: its words stay on this machine
                        self._to_step_log(f"fault {setup.name}/{cell.run_treatment}", "\n".join(fault.notes))
            minutes = self._ran(setup, cell, result, start, t0)
            if minutes is None:
                return
            report = found.report_of(cfg.target, setup.name, cell.run_treatment, self.procs, before)
            code = result.code
        else:
            report, minutes, code = adopted, 0.0, 0
            cfg.log(f"adopting {report}: llm-d-benchmark finished {cell.run_treatment} before the job stopped")
        self._record(setup, cell, report, start, minutes, code, fault.record if fault else None)

    def _adopt(self, setup: SetupRun, cell: CellRun) -> Path | None:
        """A run llm-d-benchmark finished whose report parses, left by a job that died before recording it."""
        if not self.cfg.resume:
            return None
        return found.adoptable(self.cfg.target, setup.name, cell.arm, cell.run_treatment, self.cfg.commit)

    def _record(
        self, setup: SetupRun, cell: CellRun, report: Path | None, start: str, minutes: float, code: int, fault
    ) -> None:
        assert self.manifest is not None
        cost = self.budget.charge(minutes)
        self.budget.observe(cost, cell.duration_s)
        reason = run_files.file_report(
            self.cfg.results,
            self.manifest,
            setup,
            cell,
            report,
            commit=self.cfg.commit,
            start=start,
            cost=cost,
            code=code,
            fault=fault,
            now=_now,
        )
        if reason is not None:
            self.cfg.log(f"set aside {cell.arm}/{cell.run_treatment}: {reason}")
            self._event("stop", cell.run_treatment, start, ok=False, detail=f"report set aside: {reason}")
            return
        self._save()

    def _serves(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for h in self.cfg.plan.hypotheses:
            for c in h.cells:
                out.setdefault(c.label(), []).append(h.id)
        return out
