"""The sequential design in the runner (issue 10, item 4): run in rounds, stop each cell once it is decided.

Each round the runner reads the reports finished so far with stage 5's own evidence rules
(``bot.bench.evidence``), asks ``bot.stats.sequential.assess`` what the design wants next
(with the GPU-minutes left and what one run costs), and runs exactly that: per arm, the next
repetitions up to the round's target. Stage 5 replays the same looks from the reports alone
(the first ``n`` repetitions of each arm form the look at ``n``), so the verdicts are the
decisions the runner acted on.

**Resume.** A round is written to the manifest (``RoundRecord``: every run it will make)
before its first run. ``--resume`` after a kill finishes that round as written and only then
judges again: judging the partial round would take a look the design never scheduled, and
could stop a cell at a count an uninterrupted run never looks at. Everything is derived from
the results directory (reports + manifest), never from the job that died.

**Order, the cheapest correct one.** A round's runs keep the schedule's structure: one
stand-up per group of model servers, the arms of a group one after the other with the
fast EPP swap and a re-warm between them, cells repetition-major within an arm. Across
rounds the stack is *not* torn down: the next round starts with the group and the arm that
is still up (no stand-up, no swap, no warm-up: its runs simply continue that arm's), then
the others in schedule order. With one group this alternates the arm order round by round
(baseline, evolved | evolved, baseline | ...), which costs one EPP swap per round instead
of two and balances slow drift between the arms; with a stand-up per arm (``--no-fast-swap``)
or setup-level conditions it saves one stand-up and teardown per round. Order cannot bias
the verdicts: every swap is followed by the plan's warm-up (a test shows swap + re-warm
leaves the reports of a stand-up per arm, in either arm order), and an arm that continues
was never swapped out.

**Budget.** ``assess`` is given the cap minus what was spent (and a stand-up when no stack
is up) and the larger of the plan's and the observed cost of one run; cells serving
decidable hypotheses come first. When nothing more fits, the run stops (exit 3) naming the
cells ``assess`` deferred. Within a round the runner's own per-step check still applies.

**Runs that do not count.** A run whose report is set aside (by the runner, or by stage 5's evidence
rules) keeps its repetition number and is replaced up to the next look. A cell whose round added no
usable report is dropped (``SequentialRecord.dropped``, with the rejection reasons or the metric its
reports lack) while the other cells go on, so a cluster that cannot produce its reports is not paid to
re-run it round after round; a round in which no cell gained a usable report stops the run. No
repetition number beyond a cell's horizon is run: a cell whose horizon leaves too few for its next
look is dropped there.

**The end.** When every cell is decided, at its horizon or dropped, the stack is torn down and the
manifest says, per cell, how many runs it got, where it stopped and why, beside the fixed
plan's count: runs not made because their hypotheses were decided are recorded, not silent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bot.bench.errors import ReportError
from bot.bench.experiment import stage_seconds
from bot.bench.layout import TREATMENTS, parse_layout, parse_run_treatment, split_condition
from bot.bench.run import manifest as mf
from bot.bench.run.budget import minutes_text
from bot.bench.run.schedule import CellRun, Group, SetupRun, build_schedule
from bot.bench.run.stops import BudgetStop, StepFailed

if TYPE_CHECKING:
    from bot.bench.run.runner import BenchRunner
    from bot.stats.sequential import Progress, RoundCell

DRY_RUN_NOTE = (
    "sequential design: only the first round's commands are shown; later rounds depend on its results "
    "(pass --fixed to run every planned repetition)"
)


def round_runs(next_round: Iterable[RoundCell], attempted: set[tuple[str, str, float, int]]) -> list[mf.RoundRun]:
    """The runs a round makes: per cell and arm, the next ``add`` repetition numbers not attempted yet.

    Normally these are ``have + 1 .. target``; a run whose report was set aside keeps its number (it is never
    run twice), so a replacement takes the next one and the first ``n`` usable repetitions still form the
    look at ``n`` (``bot.stats.sequential.looks_taken`` takes no look at a partial count, so the design asks
    for the replacement). No number beyond the cell's horizon is ever run: the plan's maximum GPU-minutes
    holds, and a cell whose horizon has no number left for its next look gets fewer runs than ``add``
    (``short_cells`` names it; the runner stops it instead).
    """
    runs = []
    for rc in next_round:
        last = rc.horizon if rc.horizon is not None else float("inf")
        for arm in TREATMENTS:
            n, rep = rc.add.get(arm, 0), 0
            while n > 0 and rep < last:
                rep += 1
                if (arm, rc.workload, float(rc.rate), rep) not in attempted:
                    runs.append(mf.RoundRun(arm=arm, workload=rc.workload, rate=float(rc.rate), repetition=rep))
                    n -= 1
    return runs


def short_cells(next_round: Iterable[RoundCell], runs: Iterable[mf.RoundRun]) -> list[RoundCell]:
    """Cells whose horizon leaves fewer repetition numbers than their next look needs in some arm."""
    got: dict[tuple[str, str, float], int] = {}
    for r in runs:
        got[(r.arm, r.workload, r.rate)] = got.get((r.arm, r.workload, r.rate), 0) + 1
    return [
        rc
        for rc in next_round
        if any(got.get((arm, rc.workload, float(rc.rate)), 0) < n for arm, n in rc.add.items() if n > 0)
    ]


def ordered(groups: list[Group], up: tuple[str, str] | None) -> list[tuple[Group, list[SetupRun]]]:
    """Groups and their setups in run order: the group and setup that are up (``(group, setup)`` names) first."""
    out = [(g, list(g.setups)) for g in groups]
    if up is None:
        return out
    out.sort(key=lambda gs: gs[0].name != up[0])
    group, setups = out[0]
    if group.name == up[0]:
        setups.sort(key=lambda s: s.name != up[1])
    return out


def cell_stops(progress: Progress, fixed_plan: Mapping[str, int]) -> list[mf.CellStopRecord]:
    return [
        mf.CellStopRecord(
            cell=c.label,
            runs=dict(c.runs),
            looks=list(c.looks),
            horizon=c.schedule[-1],
            fixed_plan=fixed_plan.get(c.label, c.schedule[-1]),
            reason=c.reason if c.done else "undecided: the budget ran out",
            pending=list(c.pending),
        )
        for c in progress.cells
    ]


def summary_lines(record: mf.SequentialRecord) -> list[str]:
    """One line per cell and one for the hypotheses: what the rounds ran and why they stopped."""
    lines = []
    for c in record.cells:
        n = min(c.runs.values(), default=0)
        if n == 0:
            saved = "; no usable run" if c.cell in record.dropped else "; not run"
        elif n == c.fixed_plan:
            saved = f"; the fixed plan's {c.fixed_plan}"
        else:
            saved = f"; {abs(c.fixed_plan - n)} {'fewer' if n < c.fixed_plan else 'more'} than the fixed plan's {c.fixed_plan}"
        lines.append(f"  {c.cell}: {n} of at most {c.horizon} runs per arm{saved} ({c.reason})")
    if record.hypotheses:
        ordered = sorted(record.hypotheses.items(), key=lambda kv: (kv[0][:1], int(kv[0][1:] or 0)))  # B2 before B10
        lines.append("  hypotheses: " + ", ".join(f"{h} {s}" for h, s in ordered))
    return lines


class RoundLoop:
    """The round loop on a ``BenchRunner`` (which owns the stack, the cells, the manifest and the budget)."""

    def __init__(self, runner: BenchRunner, image: str):
        self.runner = runner
        self.cfg = runner.cfg
        self.image = image
        spec = self.cfg.spec
        assert spec is not None and spec.decision.sequential is not None
        self.spec = spec
        self._start_counts: dict[str, int] | None = None  # usable runs per cell when this process began a round
        self._said: set[str] = set()  # reports already logged as not evidence

    # ---------------------------------------------------------------- record
    def record(self) -> mf.SequentialRecord:
        manifest = self.runner.manifest
        assert manifest is not None
        if manifest.sequential is None:
            seq = self.cfg.plan.sequential
            manifest.sequential = mf.SequentialRecord(
                spending=self.spec.decision.sequential.spending,  # type: ignore[union-attr]
                expected_gpu_minutes=seq.expected_gpu_minutes if seq else None,
                max_gpu_minutes=seq.max_gpu_minutes if seq else None,
            )
        return manifest.sequential

    # ------------------------------------------------------------ judgement
    def evidence(self):
        """The usable reports so far, under stage 5's evidence rules (an empty set before the first run)."""
        import pandas as pd

        from bot.bench.errors import ReportError
        from bot.bench.evidence import load_evidence
        from bot.bench.reports import REQUEST_COLUMNS, TABLE_COLUMNS, ReportSet
        from bot.bench.run_evidence import policy_for

        manifest = self.runner.manifest
        assert manifest is not None
        # Stage 5's rules from this run's manifest (bot.bench.run_evidence): a run whose fault never happened is
        # no evidence, so it never decides a fault cell that stage 5 would leave undecided.
        policy = policy_for(self.spec, manifest, allow_sample_data=False, request=self.cfg.request)
        try:
            reports = load_evidence(self.cfg.results, policy)
        except ReportError as exc:
            if manifest.cells:
                why = mf.without_local_paths(str(exc), {"--results": self.cfg.results})
                raise StepFailed(f"the runs so far are not usable evidence, so no round can be judged: {why}") from None
            return ReportSet(table=pd.DataFrame(columns=TABLE_COLUMNS), requests=pd.DataFrame(columns=REQUEST_COLUMNS))
        for rel, reason in reports.rejected:
            if rel not in self._said:  # once per report, not again every round
                self._said.add(rel)
                self.cfg.log(f"not evidence: {rel}: {reason}")
        return reports

    def run_minutes(self, workload: str, rate: float) -> float:
        return self.runner.budget.cell_estimate(CellRun("baseline", workload, rate, 1, self._duration(workload)))

    def _duration(self, workload: str) -> int:
        return math.ceil(stage_seconds(self.cfg.request, split_condition(workload)[0]))

    def assess(self, reports, stopped: Mapping[str, str]) -> Progress:
        from bot.stats.sequential import assess

        budget = self.runner.budget
        left = None
        if budget.cap is not None:
            reserve = budget.standup_estimate() if self.runner.stack is None else 0.0
            left = budget.cap - budget.spent - reserve
        return assess(self.spec, reports, budget_minutes=left, run_minutes=self.run_minutes, stopped=stopped)

    def plan(self, record: mf.SequentialRecord) -> tuple[Progress, list[mf.RoundRun]]:
        """What the design wants next and the runs that make it, after dropping the cells that cannot progress."""
        reports = self.evidence()
        progress = self.assess(reports, record.dropped)
        for c in progress.cells:
            for metric, n in c.lacking.items() if c.label not in record.dropped else ():
                self.cfg.log(f"not evidence for {c.label}: {n} usable report(s) lack metric {metric}")
        if record.rounds:
            stalled = self._stalled(record.rounds[-1], progress, reports)
            if stalled:
                self._drop(record, stalled)
                progress = self.assess(reports, record.dropped)
        while True:  # each pass drops at least one cell, so this ends
            runs = round_runs(progress.next_round, self.attempted())
            short = short_cells(progress.next_round, runs)
            if not short:
                return progress, runs
            have = {c.label: min(c.runs.values(), default=0) for c in progress.cells}
            self._drop(
                record,
                {
                    (label := f"{rc.workload}@{rc.rate:g}"): f"stopped at {have.get(label, 0)} usable run(s) per arm: "
                    f"its horizon ({rc.horizon} runs per arm) leaves too few for the look at {rc.repetitions} "
                    "(a run set aside is never run again)"
                    for rc in short
                },
            )
            progress = self.assess(reports, record.dropped)

    def _drop(self, record: mf.SequentialRecord, why: Mapping[str, str]) -> None:
        record.dropped.update(why)
        for label, text in why.items():
            self.cfg.log(f"dropping {label}: {text}; the other cells go on")

    # ---------------------------------------------------------------- rounds
    def next_round(self, record: mf.SequentialRecord) -> mf.RoundRecord | None:
        """The unfinished round (after a kill), or a new one from the evidence; None when the run is over."""

        if record.rounds and not record.rounds[-1].complete:
            return record.rounds[-1]
        progress, runs = self.plan(record)
        record.hypotheses = dict(progress.hypotheses)
        if progress.done:
            fixed = {c.cell.label(): c.repetitions for c in self.cfg.plan.cell_repetitions}
            record.cells = cell_stops(progress, fixed)
            self.runner._save()
            if progress.deferred:
                raise BudgetStop(self._deferred_text(progress))
            return None
        if not runs:  # cannot happen with assess's contract; never loop on it
            raise StepFailed("the sequential design asks for a round with no run in it")
        rnd = mf.RoundRecord(
            number=len(record.rounds) + 1,
            targets={f"{rc.workload}@{rc.rate:g}": rc.repetitions for rc in progress.next_round},
            runs=runs,
            deferred=[f"{rc.workload}@{rc.rate:g}" for rc in progress.deferred],
            budget_left=None
            if self.runner.budget.cap is None
            else round(self.runner.budget.cap - self.runner.budget.spent, 3),
        )
        self._start_counts = {
            c.label: min(c.runs.values(), default=0) for c in progress.cells if c.label in rnd.targets
        }
        record.rounds.append(rnd)
        self.runner._save()
        self.cfg.log(
            f"round {rnd.number}: {len(runs)} run(s) bringing "
            + ", ".join(f"{label} from {self._start_counts[label]} to {n}" for label, n in rnd.targets.items())
            + " usable runs per arm"
            + (f"; deferred by the budget: {', '.join(rnd.deferred)}" if rnd.deferred else "")
        )
        return rnd

    def _stalled(self, last: mf.RoundRecord, progress: Progress, reports) -> dict[str, str]:
        """The cells of ``last`` that gained no usable run, with why: asked for again, they would be re-run forever.

        When no cell of the round gained one, the cause is the run's, not a cell's: stop instead."""

        before = self._start_counts
        if before is None:  # resumed after the round: its start is not known, and a resume makes progress anyway
            return {}
        now = {c.label: min(c.runs.values(), default=0) for c in progress.cells}
        stalled = {
            label: self._why_unusable(label, last, progress, reports)
            for label, n in sorted(before.items())
            if now.get(label, 0) <= n
        }
        if stalled and len(stalled) == len(before):
            raise StepFailed(
                f"round {last.number} added no usable report to any of its cells: "
                + "; ".join(f"{label}: {why}" for label, why in stalled.items())
                + " (see manifest.json `rejected` and the log): fix the cause, then --resume"
            )
        return {label: f"round {last.number} added no usable report: {why}" for label, why in stalled.items()}

    def _why_unusable(self, label: str, last: mf.RoundRecord, progress: Progress, reports) -> str:
        """Why the runs of ``label`` in ``last`` do not count: the reasons their reports were set aside, or the
        metrics they lack."""
        manifest = self.runner.manifest
        assert manifest is not None
        keys = {
            (r.arm, r.workload, float(r.rate), r.repetition) for r in last.runs if f"{r.workload}@{r.rate:g}" == label
        }
        reasons = []
        for r in manifest.rejected:
            arm, _, name = r.cell.partition("/")
            workload, rate, rep = parse_run_treatment(name)
            if (arm, workload, float(rate), rep) in keys:
                reasons.append(r.reason)
        for rel, reason in reports.rejected:
            try:
                k = parse_layout(Path(rel))
            except ReportError:
                continue
            if (k.treatment, k.workload, float(k.rate), k.repetition) in keys:
                reasons.append(reason)
        cell = next((c for c in progress.cells if c.label == label), None)
        reasons += [f"its reports lack metric {m}" for m in (cell.lacking if cell else {})]
        shown = [r if len(r) <= 200 else r[:197] + "..." for r in dict.fromkeys(reasons)]
        return "; ".join(shown[:3]) or "its runs left no report stage 5 can use (see the log)"

    def attempted(self) -> set[tuple[str, str, float, int]]:
        """(arm, workload, rate, repetition) of every run recorded: finished or set aside."""
        from bot.bench.layout import parse_run_treatment

        manifest = self.runner.manifest
        assert manifest is not None
        out = {(c.treatment, c.workload, float(c.rate), c.repetition) for c in manifest.cells}
        for r in manifest.rejected:
            arm, _, name = r.cell.partition("/")
            workload, rate, rep = parse_run_treatment(name)
            out.add((arm, workload, float(rate), rep))
        return out

    def cells_of(self, rnd: mf.RoundRecord) -> list[Group]:
        runs: dict[tuple[str, str], list[int]] = {}
        for r in rnd.runs:
            runs.setdefault((r.arm, f"{r.workload}@{r.rate:g}"), []).append(r.repetition)
        cfg = self.cfg
        return build_schedule(
            cfg.plan,
            cfg.request,
            cfg.epp_configs,
            self.image,
            arm_order=cfg.arm_order,
            fast_swap=cfg.fast_swap,
            runs=runs,
        )

    def run(self) -> str:
        runner = self.runner
        record = self.record()
        while (rnd := self.next_round(record)) is not None:
            groups = self.cells_of(rnd)
            runner.round_cells = [c for g in groups for c in g.cells]
            up = (runner.stack[0].name, runner.stack[1].name) if runner.stack else None
            for group, setups in ordered(groups, up):
                runner._run_setups(group, setups)
            rnd.complete = True
            runner._save()
        runner.round_cells = None
        manifest = runner.manifest
        assert manifest is not None
        dropped = (
            f"; {len(record.dropped)} cell(s) dropped: {', '.join(record.dropped)} (why: below)"
            if record.dropped
            else ""
        )
        return (
            f"the sequential design is done after {len(record.rounds)} round(s): {len(manifest.cells)} cell runs "
            f"are in {self.cfg.results}{dropped}"
        )

    def dry_run(self) -> str:
        """The next round's commands (the unfinished one after a kill) as the real run would make them, with the
        budget applied: its steps count at their estimates, so the dry-run says what round 1 costs and stops
        (``BudgetStop``, exit 3) where the cap would stop the real run."""
        runner = self.runner
        record = self.record()
        deferred: list[RoundCell] = []
        if record.rounds and not record.rounds[-1].complete:
            rnd = record.rounds[-1]
        else:
            progress, runs = self.plan(record)
            if progress.done:
                if progress.deferred:
                    raise BudgetStop(self._deferred_text(progress))
                return "the sequential design is done: no round is left to run"
            deferred = progress.deferred
            rnd = mf.RoundRecord(number=len(record.rounds) + 1, targets={}, runs=runs)
        groups = self.cells_of(rnd)
        runner.round_cells = [c for g in groups for c in g.cells]
        todo = [c for c in runner.round_cells if not runner._finished(c)]
        for group, setups in ordered(groups, None):
            runner._run_setups(group, setups)
            runner._release()
        runner.round_cells = None
        wanted = len(todo) + sum(sum(rc.add.values()) for rc in deferred)
        cut = (
            f"; the cap allows {len(todo)} of the {wanted} runs the design wants now, deferred: "
            + ", ".join(f"{rc.workload}@{rc.rate:g}" for rc in deferred)
            if deferred
            else ""
        )
        return (
            f"{len(todo)} cell run(s) would run in round {rnd.number}, {runner.budget.dry_run_text()}{cut}; "
            f"{DRY_RUN_NOTE}"
        )

    def _deferred_text(self, progress: Progress) -> str:
        serves: dict[str, list[str]] = {}
        for hid, h in self.spec.hypotheses.items():
            for c in h.cells:
                serves.setdefault(c.label(), []).append(hid)
        parts, more = [], 0.0
        for rc in progress.deferred:
            label = f"{rc.workload}@{rc.rate:g}"
            adds = " ".join(f"+{n} {arm}" for arm, n in sorted(rc.add.items()) if n)
            parts.append(
                f"{label} (to {rc.repetitions} runs per arm, {adds}; serves {', '.join(sorted(serves.get(label, []))) or 'no hypothesis'})"
            )
            more += sum(rc.add.values()) * self.run_minutes(rc.workload, rc.rate)
        budget = self.runner.budget
        budget.stop(
            [
                CellRun(arm, rc.workload, rc.rate, 0, self._duration(rc.workload))
                for rc in progress.deferred
                for arm, n in rc.add.items()
                for _ in range(n)
            ],
            "budget",
        )
        undecided = sorted(h for h, s in progress.hypotheses.items() if s == "undecided")
        standup = budget.standup_estimate() if self.runner.stack is None else 0.0
        runs = sum(sum(rc.add.values()) for rc in progress.deferred)
        return (
            (f"the cap allows 0 of the {runs} runs the design wants now: " if self.cfg.dry_run else "")
            + f"the next round does not fit: {len(progress.deferred)} cell(s) deferred: {'; '.join(parts)}. "
            f"Undecided: {', '.join(undecided) or 'none'}. About {minutes_text(more)} more GPU-minutes would run the "
            "next round"
            + (f", plus {minutes_text(standup)} for the stand-up" if standup else "")
            + f" (spent {budget.spent:g} of the cap {budget.cap:g}); raise --budget-gpu-minutes"
            + ("." if self.cfg.dry_run else " and pass --resume.")
        )
