"""The plan's priority mix in ``promote bench run``: per arm, a stand-up with the classes' InferenceObjectives,
the priority-mix harness the planned number of times, teardown.

The plan adds the mix for an admitter, whose shedding is decided by the class (``bot.bench.priority_plan``), as its own
experiment: llm-d-benchmark fixes one harness per experiment, and the mix's stack declares one InferenceObjective
per traffic class (``router.inferenceObjectives``) so each class's ``x-llm-d-inference-objective`` header resolves
to its priority. So each arm gets its own stand-up (the plan prices two), with the same stack, image and EPP config
as the cells' plus the objectives, and no warm-up: the plan prices none, and both arms start equally cold.

**Before the cells.** The mix's cost is fixed (its planned runs), the cells' is not (a sequential design judges
how many rounds it still needs against the GPU-minutes left), so the mix runs first and the rounds then see what
is really left of the cap; the cells' stack stays up across rounds without a mix stand-up in between.

Each run's ``results.json`` + ``run_metadata.yaml`` (``workload/harnesses/priority_mix.py`` writes them into
``setup-treatment-<setup>/results/priority-mix-<run treatment>-<ts>-<rand>_<n>/``) is copied into the layout
``bot.bench.priority_mix`` reads (``<arm>/priority-mix/rate-<rate>/rep-<n>/``), with the run keywords that bind
it to its arm, promotion and image (``--run-keywords``, which the harness records as ``description_keywords``).
The copy leaves out the stack's endpoint URL: the results directory is committed, and llm-d-benchmark's route
is the cluster's. A run whose results.json is missing or does not parse is set aside under ``rejected/`` with
the reason, as reports are. The manifest lists every mix run (``MixRunRecord``); ``--resume`` never runs a kept
one twice, adopts a run llm-d-benchmark finished that a killed job did not record, and runs a set-aside one
again (within the budget; the manifest keeps both attempts).
"""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.bench.errors import ReportError
from bot.bench.experiment import stack_constants
from bot.bench.layout import CONDITION_SEP, MIX_CONDITION, TREATMENTS, run_dir
from bot.bench.priority_mix import METADATA_FILE, RESULTS_FILE
from bot.bench.priority_plan import inference_objectives, priority_mix_profile
from bot.bench.run import commands, found
from bot.bench.run import manifest as mf
from bot.bench.run.budget import minutes_text
from bot.bench.run.schedule import CONFIG_FILES, CellRun, Group, SetupRun, image_overrides
from bot.bench.run.stops import BudgetStop
from bot.bench.yaml_dump import dump_yaml

if TYPE_CHECKING:
    from bot.bench.priority_plan import PriorityMixPlan
    from bot.bench.run.runner import BenchRunner

#: The setup treatment of an arm's mix stack (its own llm-d-benchmark workspace beside the cells').
SUFFIX = f"{CONDITION_SEP}{MIX_CONDITION}"


def mix_setups(pm: PriorityMixPlan, cfg, image: str) -> list[tuple[Group, SetupRun]]:
    """Per arm (in the run's arm order): the mix's stand-up group and setup, its runs 1..repetitions as cells."""
    constants = {
        **stack_constants(cfg.request),
        **image_overrides(image),
        "router.epp.flags.allow-experimental-plugins": True,
        "router.epp.pluginsCustomConfig": {CONFIG_FILES[a]: cfg.epp_configs[a] for a in TREATMENTS},
        "router.inferenceObjectives": inference_objectives(pm),
    }
    out = []
    for arm in cfg.arm_order:
        setup = SetupRun(f"{arm}{SUFFIX}", arm, None, {**constants, "router.epp.pluginsConfigFile": CONFIG_FILES[arm]})
        setup.cells = [CellRun(arm, pm.workload, pm.rate, n, int(pm.duration_s)) for n in range(1, pm.repetitions + 1)]
        out.append((Group(setup.name, [setup]), setup))
    return out


def scrub_endpoint(text: str, endpoint: str) -> str:
    """``text`` without the stack's endpoint (its URL, then its host): the results directory is committed."""
    host = urlsplit(endpoint).hostname if "://" in endpoint else None
    for secret in (endpoint.rstrip("/"), host):
        if secret:
            text = text.replace(secret, "ENDPOINT")
    return text


class MixRuns:
    """The mix on a ``BenchRunner`` (which owns the stack, the budget, the manifest and the signals)."""

    def __init__(self, runner: BenchRunner, image: str):
        self.runner = runner
        self.cfg = runner.cfg
        pm = self.cfg.plan.priority_mix
        assert pm is not None
        self.pm = pm
        self.image = image
        self.target = dataclasses.replace(self.cfg.target, harness=pm.harness)  # -l priority-mix

    # ---------------------------------------------------------------- state
    def records_of(self, cell: CellRun) -> list[mf.MixRunRecord]:
        """Every recorded attempt at this mix run (set aside ones, then at most one kept), oldest first."""
        manifest = self.runner.manifest
        assert manifest is not None
        return [r for r in manifest.priority_mix if r.arm == cell.arm and r.run_treatment == cell.run_treatment]

    def pending(self) -> list[CellRun]:
        """The mix runs with no kept results: never run, or (on --resume) set aside. A set-aside run is run again,
        not replaced by another repetition: the plan fixes the mix's repetitions (no look is taken at a partial
        count, as in the sequential design), and its unusable results were never judged, so a second attempt
        selects nothing."""
        cells = [c for _, s in mix_setups(self.pm, self.cfg, self.image) for c in s.cells]
        return [c for c in cells if not any(r.ok for r in self.records_of(c))]

    # ------------------------------------------------------------------ run
    def run(self) -> str:
        """Every unrecorded mix run, arm by arm; returns what was done (the dry-run: what would be)."""
        runner, budget = self.runner, self.runner.budget
        todo = self.pending()
        planned = len(todo)
        for group, setup in mix_setups(self.pm, self.cfg, self.image):
            cells = [c for c in setup.cells if c in todo]
            if not cells:
                continue
            if not budget.fits(budget.standup_estimate() + budget.cell_estimate(cells[0])):
                raise BudgetStop(self._stop_text(todo))
            runner.stack = (group, setup)  # before the stand-up: a failed stand-up is torn down too
            runner._standup(group, setup)
            for cell in cells:
                if not budget.fits(budget.cell_estimate(cell)):
                    raise BudgetStop(self._stop_text(todo))
                self._run(setup, cell)
                todo.remove(cell)
            runner._release()
        manifest = runner.manifest
        assert manifest is not None
        if self.cfg.dry_run:
            return f"the priority mix: {planned} run(s) would run on {len(TREATMENTS)} stand-ups"
        kept = sum(r.ok for r in manifest.priority_mix)
        return f"the priority mix: {kept} of {len(manifest.priority_mix)} run(s) kept"

    def _stop_text(self, todo: list[CellRun]) -> str:
        budget = self.runner.budget
        arms = sorted({c.arm for c in todo})
        more = sum(budget.cell_estimate(c) for c in todo) + len(arms) * budget.standup_estimate()
        return (
            f"the priority mix's {len(todo)} remaining run(s) ({', '.join(arms)}) need about {minutes_text(more)} "
            f"more GPU-minutes with their stand-ups (spent {budget.spent:g} of the cap {budget.cap:g}); the cells "
            "wait for it. Raise --budget-gpu-minutes" + ("." if self.cfg.dry_run else " and pass --resume.")
        )

    def _profile(self) -> Path:
        path = self.cfg.target.workspace / "profiles" / self.pm.harness / f"{self.pm.workload}.yaml"
        if not self.cfg.dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(dump_yaml(priority_mix_profile(self.pm)[0]), encoding="utf-8")
        return path

    def _treatments(self, setup: SetupRun, cell: CellRun) -> Path:
        path = commands.setup_workspace(self.target, setup.name) / "treatments" / f"{cell.run_treatment}.yaml"
        if not self.cfg.dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            doc = {
                "reset_caches": True,
                "treatments": [{"name": cell.run_treatment, "load.rate_per_second": cell.rate}],
            }
            path.write_text(dump_yaml(doc), encoding="utf-8")
        return path

    def _run(self, setup: SetupRun, cell: CellRun) -> None:
        runner, cfg = self.runner, self.cfg
        start, t0 = _now(), time.monotonic()
        if earlier := self.records_of(cell):
            cfg.log(f"running {cell.arm}/{cell.run_treatment} again: it was set aside ({earlier[-1].reason})")
        adopted = (
            found.adoptable_mix(self.target, setup.name, cell.arm, cell.run_treatment, cfg.commit)
            if cfg.resume
            else None
        )
        if adopted is not None:
            cfg.log(f"adopting {adopted}: llm-d-benchmark finished {cell.run_treatment} before the job stopped")
            self._record(setup, cell, adopted, start, 0.0)
            return
        argv = commands.run_cell(
            self.target,
            setup.name,
            runner._overrides(setup),
            self._profile(),
            self._treatments(setup, cell),
            runner._keywords(setup, cell),
        )
        before = set(
            found.run_dirs(self.target, setup.name, cell.run_treatment)
        )  # an earlier attempt's: not this run's
        result = runner.procs.run(argv, timeout=runner._timeout(cell.duration_s))
        minutes = runner._ran(setup, cell, result, start, t0)
        if minutes is None:
            return
        dirs = found.new_run_dirs(self.target, setup.name, cell.run_treatment, before)
        self._record(setup, cell, dirs[-1] if dirs else None, start, minutes)

    def _record(self, setup: SetupRun, cell: CellRun, where: Path | None, start: str, minutes: float) -> None:
        """Copy a run's results into the layout, or set it aside with the reason; either way the manifest lists it."""
        manifest, results = self.runner.manifest, self.cfg.results
        assert manifest is not None
        cost = self.runner.budget.charge(minutes)
        rel_dir = run_dir(cell.arm, cell.workload, cell.rate, cell.repetition)
        attempt = len(self.records_of(cell))  # earlier attempts, set aside: each keeps its own rejected/ file
        aside_dir = f"{mf.REJECTED_DIR}/{rel_dir}" + (f"/attempt-{attempt + 1}" if attempt else "")
        record = mf.MixRunRecord(
            arm=cell.arm,
            run_treatment=cell.run_treatment,
            repetition=cell.repetition,
            setup_treatment=setup.name,
            start=start,
            end=_now(),
            gpu_minutes=cost,
            ok=False,
        )
        try:
            text, meta = found.read_mix_run(where)
        except ReportError as exc:
            record.reason = str(exc)
            if where is not None and (where / RESULTS_FILE).is_file():
                aside = f"{aside_dir}/{RESULTS_FILE}.rejected"
                mf.atomic_write(results / aside, (where / RESULTS_FILE).read_bytes())
            else:
                aside = f"{aside_dir}/{RESULTS_FILE}"
            manifest.rejected.append(
                mf.RejectedRecord(cell=f"{cell.arm}/{cell.run_treatment}", path=aside, reason=record.reason)
            )
            manifest.priority_mix.append(record)
            self.cfg.log(f"set aside {cell.arm}/{cell.run_treatment}: {record.reason}")
            self.runner._event(
                "stop", cell.run_treatment, start, ok=False, detail=f"results set aside: {record.reason}"
            )
            return
        endpoint = str(meta.get("endpoint_url") or "")
        meta["endpoint_url"] = ""  # the cluster's route: never committed
        data = scrub_endpoint(text, endpoint).encode("utf-8") if endpoint else text.encode("utf-8")
        mf.atomic_write(results / rel_dir / METADATA_FILE, dump_yaml(meta).encode("utf-8"))
        mf.atomic_write(results / rel_dir / RESULTS_FILE, data)
        record.ok = True
        record.results, record.metadata = f"{rel_dir}/{RESULTS_FILE}", f"{rel_dir}/{METADATA_FILE}"
        record.sha256 = mf.sha256_bytes(data)
        manifest.priority_mix.append(record)
        self.runner._save()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
