"""Stage 5, run and validate: build, vet and test the plugin; judge every hypothesis on the benchmark reports.

The Go checks run offline against the in-repo llm-d-router v0.10.0 mirror with the pinned toolchain. Benchmark
reports come from ``--results`` (written by the GPU job, or the bundled sample data); without them every
hypothesis is inconclusive and gate 3's review says why, instead of inventing numbers.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from bot.bench.errors import NoUsableReports
from bot.bench.gpu_time import GpuTime
from bot.bench.set_aside import SET_ASIDE_KINDS, apply_set_aside, for_plan, unexercised_by
from bot.model import PolicyKind, Stage, TranslationSummary, Verdict, VerdictStatus, sha256_text, status_counts
from bot.render import render
from bot.stages.branch_history import added_since, delivered_since, other_runs
from bot.stages.checks import check_problems, run_go_checks
from bot.stages.context import StageContext, StageOutput
from bot.stages.hypothesize import load_hypotheses
from bot.stages.mix_validate import MixOutcome
from bot.stages.paths import RUNNER_GO
from bot.stages.plan_reports import load_reports, results_source
from bot.stages.unusable_reports import unusable_on_branch


def plugin_files(ctx: StageContext, summary: TranslationSummary) -> dict[str, str]:
    return {p: ctx.read(p) or "" for p in ctx.list(summary.package_dir) if p.endswith(".go")}


def go_checks(ctx: StageContext):
    """gofmt, go vet and go test on the plugin as committed on the branch, and the files they checked.

    A toolchain or sandbox that cannot run fails the stage (``StageFailed``); failing checks do not.
    """
    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    files = plugin_files(ctx, summary)
    report = run_go_checks(
        ctx,
        files,
        registration_import=summary.registration_import,
        registration_line=summary.registration_line,
    )
    return report, {p: sha256_text(text) for p, text in sorted(files.items())}


def judge(
    ctx: StageContext, hypotheses, code: dict[str, str] | None = None
) -> tuple[list[Verdict], object | None, GpuTime, MixOutcome | None]:
    """Verdicts for every hypothesis from the benchmark reports (inconclusive without them).

    The reports come from ``--results`` (local rehearsal) or, when the benchmark job committed
    them, from the promotion branch's ``benchmarks/promotion/<slug>/results/`` (GitHub home);
    either way they pass the same validation and must belong to this promotion's arms (the
    evaluation spec stage 4 committed says what each arm ran). A planned priority mix is read
    from the same directory under the same rules (``bot.stages.mix_validate``).
    """
    from bot.bench import gpu_time
    from bot.bench.mix_only import no_cell_reports
    from bot.bench.run_evidence import load_manifest
    from bot.stages.mix_validate import judge_mix, unplanned_mix
    from bot.stats.verdicts import not_testable_verdict

    with results_source(ctx) as (results_dir, _where):
        if results_dir is None:
            return (
                [
                    not_testable_verdict(h)
                    if h.not_testable
                    else Verdict(
                        hypothesis_id=h.id,
                        status=VerdictStatus.INCONCLUSIVE,
                        summary="No benchmark results were supplied (--results); run the plan in stage 4 on a GPU cluster.",
                        flags=["no-results"],
                    )
                    for h in hypotheses
                ],
                None,
                gpu_time.with_plan(
                    gpu_time.GpuTime(planned=None, budget=None, spent=None, judged=False),
                    ctx.read(ctx.paths.run_limits),
                ),
                None,
            )
        try:
            reports = load_reports(ctx, results_dir, code) if _planned_cells(ctx) else no_cell_reports(results_dir)
        except NoUsableReports as exc:
            if ctx.results_dir is not None:
                raise  # `--results`: the directory given, in the layout the CLI reads
            raise unusable_on_branch(ctx, exc) from None
        # The plan's figures come from what stage 4 committed when no manifest gives them (sample or by-hand runs).
        spent = gpu_time.with_plan(gpu_time.read(results_dir, promotion=ctx.request.id), ctx.read(ctx.paths.run_limits))
        mix = judge_mix(ctx, results_dir, hypotheses, code, ci_alpha(ctx))
        unplanned = unplanned_mix(ctx, results_dir) if mix is None else []
        manifest = load_manifest(results_dir)
    verdicts = verdicts_on(
        hypotheses,
        reports,
        manifest,
        mix,
        evolved_for=ctx.request.evolved_for,
        decision=decision_rule(ctx),
        unexercised=_unexercised(ctx, hypotheses),
        caveat=_tenant_caveat(ctx, hypotheses),
    )
    if mix is None and reports is not None:  # mix runs the plan never asked for: listed, never passed over
        reports.rejected = sorted(dict.fromkeys([*reports.rejected, *unplanned]))
    if not spent.recorded and _read_nothing(reports, mix):
        # No manifest, and no report or mix run was read: a GPU-time line would be about reports stage 5 left
        # out (a02's 60 cell reports of a plan with no cell), so the pages give only the plan's figure.
        spent = dataclasses.replace(spent, judged=False)
    return verdicts, reports, spent, mix


def _read_nothing(reports, mix) -> bool:
    """Whether stage 5 read no cell report and no priority-mix run (everything under --results left out)."""
    cells = reports is not None and len(reports.table) > 0
    return not cells and not (mix is not None and sum(mix.used.values()))


def _planned_cells(ctx: StageContext) -> bool:
    """Whether stage 4's plan has cells: a mix-only plan (``bot.bench.mix_only``) has none, so no cell report is
    read (there may be none at all). Without an evaluation spec on the branch, the reports say what ran."""
    from bot.bench.evaluation_spec import load_evaluation_spec

    text = ctx.read(ctx.paths.evaluation_spec)
    return text is None or bool(load_evaluation_spec(text).cells)


def _unexercised(ctx: StageContext, hypotheses):
    """Why the cells cannot exercise the plugin (``unexercised_by``), read from the branch's translation and
    EndpointPickerConfig. A router's is not read. Judged with no translation on the branch (a branch someone
    assembled by hand), nothing is established, as when the harness did not run."""
    kind = ctx.request.kind
    if kind not in SET_ASIDE_KINDS or ctx.read(ctx.paths.translation_json) is None:
        return None
    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    return unexercised_by(kind, summary, ctx.request, ctx.read(ctx.paths.epp_config(summary.plugin_type)), hypotheses)


def _tenant_caveat(ctx: StageContext, hypotheses):
    """Gate 2's ``G2.tenants-exercised`` as a caveat on the verdicts (``gate2_tenants.tenant_caveat``), read from
    the branch's translation: any kind of plugin may read the tenant. None without a translation on the branch."""
    from bot.review.gate2_tenants import tenant_caveat

    if ctx.read(ctx.paths.translation_json) is None:
        return None
    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    return tenant_caveat(ctx.dictionary, ctx.request, hypotheses, summary)


def planned_hypotheses(ctx: StageContext, hypotheses) -> list:
    """The hypotheses as stage 4 plans them: stage 5's set-aside (``set_aside.for_plan``) on the branch's
    translation and EndpointPickerConfig, as stage 5 will apply it."""
    if ctx.read(ctx.paths.translation_json) is None:
        return list(hypotheses)
    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    return for_plan(ctx.request, summary, ctx.read(ctx.paths.epp_config(summary.plugin_type)), hypotheses)


def branch_planned_hypotheses(root: Path, request, hypotheses) -> list:
    """``planned_hypotheses`` read from a checkout of the promotion branch at ``root`` (`promote bench run`
    plans again from the branch and must get stage 4's plan)."""
    from bot.stages.paths import PromotionPaths

    paths = PromotionPaths(request.slug)
    translation = root / paths.translation_json
    if not translation.is_file():
        return list(hypotheses)
    summary = TranslationSummary.model_validate_json(translation.read_text(encoding="utf-8"))
    epp = root / paths.epp_config(summary.plugin_type)
    return for_plan(request, summary, epp.read_text(encoding="utf-8") if epp.is_file() else None, hypotheses)


def verdicts_on(
    hypotheses,
    reports,
    manifest,
    mix: MixOutcome | None,
    *,
    evolved_for: str | None,
    decision=None,
    alpha=None,
    unexercised=None,
    caveat=None,
) -> list[Verdict]:
    """The verdicts on reports already loaded under the evidence rules, with what the run manifest says about
    the faults and the priority mix's verdict: stage 5's judgement, which `promote evaluate` shares so that the
    same results give the same verdicts by hand. ``unexercised`` (``priority_plan.sheds_nothing``) says the
    cells send only traffic the plugin does not act on: every benchmarked hypothesis is then not measurable; a
    scheduler's (``order_cells.OrderSetAside``) names the hypotheses whose mechanism is its order, each with why.
    ``caveat`` (``bot.stats.unjudged.RuleCaveat``: gate 2's ``G2.tenants-exercised``, ``tenant_caveat``) names a
    rule the cells never exercise where nothing proves the plugin inert: judged as measured, each verdict says so."""
    from bot.bench import fault_runs
    from bot.bench.evidence import SAMPLE_FLAG, mark_sample
    from bot.stages.mix_validate import with_mix
    from bot.stats.unjudged import caveat_unexercised
    from bot.stats.verdicts import evaluate

    hypotheses = apply_set_aside(hypotheses, unexercised)
    if mix is not None and mix.verdict is not None and SAMPLE_FLAG in mix.verdict.flags and not reports.loaded:
        reports.notes = [*reports.notes, SAMPLE_FLAG]  # a mix-only plan's evidence is the mix's: said as the cells'
    # A claim about a fault the runs never had is not runnable here (bot.bench.fault_runs).
    judged, flags = fault_runs.judged_as(hypotheses, manifest)
    # A Track B claim whose runs record no condition was never shown to run under it.
    judged, unrecorded = fault_runs.unrecorded(judged, reports)
    flags = {**unrecorded, **flags}
    verdicts = evaluate(judged, reports, evolved_for=evolved_for, decision=decision, alpha=alpha)
    verdicts = [
        v.model_copy(update={"flags": [*v.flags, flags[v.hypothesis_id]]}) if v.hypothesis_id in flags else v
        for v in verdicts
    ]
    verdicts = _flag_unmeasured(verdicts, judged, reports)
    _set_aside_past_last_look(reports, decision)
    return caveat_unexercised(with_mix(mark_sample(verdicts, reports), mix), judged, caveat)


def _set_aside_past_last_look(reports, decision) -> None:
    """Move the reports no look of their group-sequential cell reached (``bot.stats.judged.runs_past_last_look``)
    from the used ones to the ones not used, with why, and out of the testbed count: the verdicts (already decided)
    never read them, and "141 reports used" beside a cell's flag saying one was not read two ways."""
    from bot.bench.reports_aside import set_aside
    from bot.stats.cells import rate_key
    from bot.stats.judged import runs_past_last_look

    past = runs_past_last_look(reports, decision) if getattr(reports, "loaded", None) else {}
    if past:
        set_aside(reports, lambda k: past.get((k.treatment, k.workload, rate_key(k.rate), str(k.repetition))))


def _flag_unmeasured(verdicts: list[Verdict], hypotheses, reports) -> list[Verdict]:
    """Every benchmarked verdict says which arm had no report to use: each is then inconclusive with no cell,
    which read as "no regression found" with gate 3 silent, about a plugin that was never measured."""
    from bot.bench.layout import arm_of, unmeasured_arms, unmeasured_flag

    arms = unmeasured_arms(reports.loaded)
    if not arms:
        return verdicts
    left = [arm_of(rel) for rel, _ in reports.rejected]
    extra = [unmeasured_flag(arm, left.count(arm)) for arm in arms]
    benchmarked = {h.id for h in hypotheses if h.benchmarked}
    return [
        v.model_copy(update={"flags": [*v.flags, *extra]}) if v.hypothesis_id in benchmarked else v for v in verdicts
    ]


def decision_rule(ctx: StageContext):
    """The decision rule stage 4 wrote into the evaluation spec (the multiplicity weights it sized for), if any.

    Without a spec on the branch the verdicts use Holm over the whole promotion, which is what a
    plan with every hypothesis decidable would have written.
    """
    from bot.bench.evaluation_spec import load_evaluation_spec

    text = ctx.read(ctx.paths.evaluation_spec)
    return load_evaluation_spec(text).decision if text else None


def ci_alpha(ctx: StageContext) -> float:
    """The one-sided level the verdicts' 1 - 2 alpha intervals were computed at (the spec's, else 0.05)."""
    rule = decision_rule(ctx)
    return rule.alpha if rule is not None else 0.05


def benchmark_due(ctx: StageContext) -> bool:
    """Whether stage 5 must have the plan benchmarked before it judges (the GitHub home dispatches the GPU job).

    A person who asked for the benchmark again (`/retry 5`: ``PipelineState.benchmark_again``) gets a new run
    whatever the branch holds. While a dispatched run is out (``PipelineState.benchmark``), only reports delivered
    after it was dispatched, and made by that run (``branch_history.other_runs``), are its answer: the ones `/retry 5`
    asked to replace are not judged again by the next event (a `/status`, an edit) while the new run is on the GPUs,
    nor are those the replaced run publishes when GitHub would not cancel it. Otherwise reports delivered on top of where the
    bot left the branch are the benchmark's answer and are judged as they are. Reports already on the branch
    before that were judged in an earlier pass: they are judged again only if some of them belong to the plan and
    plugin code at this branch's stage 4 commit, else that plan has never been measured.
    """
    if ctx.state.benchmark_again:  # `/retry 5`: a new run replaces the reports on the branch, whatever they are
        return True
    prefix = f"{ctx.paths.benchmarks}/results/"
    if not [p for p in ctx.list(prefix) if not p.endswith("/")]:
        return True
    sent = ctx.state.benchmark
    if sent is not None and added_since(ctx, sent.commit) is not None:  # the run out answers: its own publish
        return not delivered_since(ctx, prefix, sent.commit) or bool(other_runs(ctx, sent.run_id))
    if delivered_since(ctx, prefix, ctx.state.head):
        return False
    from bot.bench.errors import ReportError

    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    code = {p: sha256_text(t) for p, t in sorted(plugin_files(ctx, summary).items()) if not p.endswith("_test.go")}
    with results_source(ctx) as (results_dir, _where):
        try:
            return results_dir is None or not load_reports(ctx, results_dir, code).loaded
        except ReportError:
            return True


def results_origin(ctx: StageContext, reports) -> str | None:
    """Where the judged reports came from, in words fit for the branch: never a local path (it names someone's
    machine and says nothing to a reader of the fork)."""
    from bot.bench.mix_only import MIX_ONLY

    if reports is None:
        return None
    tally = arm_tally(getattr(reports, "loaded", []), getattr(reports, "rejected", []))
    if not _planned_cells(ctx):  # a mix-only plan reads no cell report (bot.bench.mix_only.no_cell_reports)
        tally = f"no cell report read, the plan has no cells ({MIX_ONLY}): {tally}"
    if ctx.results_dir is not None:
        return f"{tally}; supplied with `--results` (a local directory, not part of this branch)"
    return f"{tally}; committed under `{ctx.paths.benchmarks}/results/` on this branch"


def arm_tally(loaded: list[str], rejected: list[tuple[str, str]]) -> str:
    """How many reports of each arm were used and left out, and why, e.g. "112 reports: baseline 56 used;
    evolved 0 used, 56 left out (EPP config differs ...)": a bare "56 used" hid that every evolved report was dropped, which is
    why each claim reads "not measured"."""
    from bot.bench.layout import TREATMENTS
    from bot.bench.layout import arm_of as arm

    used: dict[str, int] = {}
    for rel in loaded:
        used[arm(rel)] = used.get(arm(rel), 0) + 1
    out: dict[str, list[str]] = {}
    for rel, reason in rejected:
        out.setdefault(arm(rel), []).append(reason)
    parts = []
    for name in [*TREATMENTS, *sorted((set(used) | set(out)) - set(TREATMENTS))]:
        reasons = out.get(name, [])
        if name not in TREATMENTS and not reasons and not used.get(name):
            continue
        text = f"{name} {used.get(name, 0)} used"
        if reasons:
            why = reasons[0] if len(set(reasons)) == 1 else f"for {len(set(reasons))} different reasons"
            text += f", {len(reasons)} left out ({why}; listed below)"
        parts.append(text)
    total = len(loaded) + len(rejected)
    return f"{total} report{'' if total == 1 else 's'}: " + "; ".join(parts)


def cells_judged(verdicts: list[Verdict]) -> dict[tuple[str, float], list[str]]:
    """(workload, rate) -> the hypotheses with a measured cell there, in verdict order."""
    out: dict[tuple[str, float], list[str]] = {}
    for v in verdicts:
        for e in v.effects:
            ids = out.setdefault((e.workload, e.rate), [])
            if v.hypothesis_id not in ids:
                ids.append(v.hypothesis_id)
    return out


def mix_markdown(mix: MixOutcome | None, alpha: float) -> str:
    """verdicts.md's priority-mix section: the per-class table, or why the planned mix judged nothing."""
    from bot.escape import md
    from bot.stats.shedding import admission_markdown

    if mix is None:
        return ""
    if mix.table:
        return admission_markdown(mix.table, alpha, mix.hypothesis)
    decided = f": {md(mix.hypothesis)} (the shedding order) is not decided" if mix.hypothesis else ""
    return f"## Priority mix\n\n**Not judged{decided}.** The plan runs a priority mix, but {md(mix.reason or '')}."


def queues_markdown_for(request, reports, hypotheses, verdicts: list[Verdict], unexercised=None) -> str:
    """A scheduler's waiting-queue section (``bot.bench.waiting``): whether queues formed in each cell gate 2's
    G2.cells-saturate named, the cells of the claims that predict a change from the evolved order
    (``bot.hypotheses.saturation``), judged here or not: the one place its order can act, and the cells a person
    was told to check. A claim ``unexercised`` sets aside (``unexercised_by``, as stage 4 planned it) has no cell
    in the plan and is judged nowhere, so its cells are left out (sched-e2e #4: a `load-spikes @ 30` row the plan
    never ran, "no runs" on every real run). A guard's cells are left out too: a no-regression holds where the
    plugin does nothing, and at low load no queue is expected. '' for another kind, without reports, or with no
    such claim."""
    from bot.bench.waiting import CellQueues, cell_queues, queues_markdown
    from bot.hypotheses.operating_points import cells
    from bot.hypotheses.saturation import needs_queues

    if request.kind is not PolicyKind.SCHEDULING or reports is None:
        return ""
    planned: dict[tuple[str, float], list[str]] = {}
    for h in apply_set_aside(hypotheses, unexercised):
        if needs_queues(request.kind, h):
            for workload, rate in sorted(cells(request, h)):
                planned.setdefault((workload, float(rate)), []).append(h.id)
    if not planned:
        return ""
    measured = {cell: ids for cell, ids in cells_judged(verdicts).items() if cell in planned}
    runs = [k for k in reports.runs() if (k.workload, float(k.rate)) in planned]
    found = cell_queues(getattr(reports, "waiting", {}), runs)
    seen = {(c.workload, c.rate) for c in found}
    unrun = [CellQueues(w, r, {}, {}, {}) for (w, r) in planned if (w, r) not in seen]  # planned, no report
    return queues_markdown(sorted([*found, *unrun], key=lambda c: (c.workload, c.rate)), planned, measured)


def run(ctx: StageContext) -> StageOutput:
    from bot.bench import testbed
    from bot.bench.evidence import SAMPLE_FLAG
    from bot.render import outcome
    from bot.stats.evidence import UNREACHED_LEAD, evidence_markdown, summary_markdown, verdicts_to_json
    from bot.stats.judged import NOT_USED_HEADING, split_unreached
    from bot.stats.plots import EvidencePlots, plot_evidence

    checks, checked_files = go_checks(ctx)
    hypotheses = load_hypotheses(ctx)  # in id order
    code = {p: h for p, h in checked_files.items() if not p.endswith("_test.go")}  # as manifest.plugin_code
    verdicts, reports, spent, mix = judge(ctx, hypotheses, code)
    # A linked directory under --results is listed by both readers (bot.bench.layout.results_files): once here.
    rejected = list(dict.fromkeys([*getattr(reports, "rejected", []), *(mix.rejected if mix else [])]))
    # Which verdicts each cell's reports enter: a report of another testbed names them (bot.bench.testbed.summarize),
    # and each verdict it enters carries a flag saying so.
    testbeds = testbed.summarize(getattr(reports, "testbeds", []), cells_judged(verdicts))
    other = testbed.other_testbed_flags(testbeds)
    verdicts = [v.model_copy(update={"flags": [*v.flags, *other.get(v.hypothesis_id, [])]}) for v in verdicts]
    by_id = {v.hypothesis_id: v for v in verdicts}
    files: dict[str, str | bytes] = {
        # The raw tool output carries timings; the branch keeps only what is the same on every run.
        # The files' hashes bind the result to what it checked: gate 3 refuses results for other files.
        ctx.paths.go_checks: json.dumps(
            checks.model_dump(mode="json", exclude={"output"}) | {"checked_files": checked_files},
            indent=2,
            sort_keys=True,
        )
        + "\n",
        ctx.paths.verdicts_json: verdicts_to_json(verdicts),
        ctx.paths.gpu_time: spent.to_json(),
        # The report names the testbed the verdicts hold for (model, accelerators, engine, harness), as recorded.
        ctx.paths.testbed: json.dumps(testbeds, indent=2, sort_keys=True) + "\n",
        # Gate 3 raises every report that was not used; it reads them here, not from the page's prose.
        ctx.paths.reports_not_used: json.dumps(
            [{"report": path, "reason": reason} for path, reason in rejected], indent=2
        )
        + "\n",
    }
    if mix is not None:  # gate 3 says when the planned mix judged nothing (G3.priority-mix)
        files[ctx.paths.priority_mix] = mix.to_json()
    alpha = ci_alpha(ctx)  # the intervals the verdicts computed, so the tables and plots name their level
    plots = plot_evidence(hypotheses, verdicts, reports, alpha=alpha) if reports is not None else EvidencePlots({})
    evidence = [
        evidence_markdown(h, by_id[h.id], plot=plots.image_markdown(h.id, "plots"), alpha=alpha)
        for h in hypotheses
        if h.id in by_id
    ]
    pairs = [(h, by_id[h.id]) for h in hypotheses if h.id in by_id]
    invalid, unreached = split_unreached(rejected)  # a valid run no look reached is listed apart, never "rejected"
    files[ctx.paths.verdicts_md] = render(
        "verdicts.md.j2",
        request=ctx.request,
        checks=checks,
        places=ctx.id_places(),  # the Go checks' findings by the ids gate 1 showed them with
        # the outcome in one line and the claims table first: gate 3 decides on this page
        headline=outcome.headline(pairs),
        claims=outcome.claims_table(pairs, alpha=alpha),
        summary=summary_markdown(verdicts, hypotheses) + "\n" + plots.summary_markdown("plots", alpha=alpha),
        evidence=evidence,
        priority_mix=mix_markdown(mix, alpha),
        queues=queues_markdown_for(ctx.request, reports, hypotheses, verdicts, _unexercised(ctx, hypotheses)),
        rejected=invalid,
        unreached=unreached,
        unreached_lead=UNREACHED_LEAD,
        not_used_heading=NOT_USED_HEADING,
        notes=getattr(reports, "notes", []),
        sample_flag=SAMPLE_FLAG,
        gpu_time=spent if reports is not None else None,
        results=results_origin(ctx, reports),
        testbed=testbed.testbed_markdown(testbeds) if reports is not None else "",
    )
    for name, png in sorted(plots.images.items()):
        files[f"{ctx.paths.validation_dir}/plots/{name}"] = png
    # Failing checks are gate 3's CRITICAL findings (G3.tests-pass), which the author loop reruns
    # stages 4-5 for; the record carries them so the stage is never shown as passed.
    problems = check_problems(checks)
    go = "Go checks FAIL" if problems else "go vet and go test pass"
    summary = f"{go} ({checks.test_counts}); verdicts: {status_counts(v.status for v in verdicts)}" + (
        f"; {spent.line()}" if reports is not None else ""
    )
    return StageOutput(files=files, summary=summary, problems=problems)


__all__ = ["RUNNER_GO", "benchmark_due", "ci_alpha", "go_checks", "judge", "run"]
