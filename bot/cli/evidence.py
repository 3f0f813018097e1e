"""`promote hypothesize | plan | evaluate`: stages 3-5's evidence chain, one command per step.

The same functions the pipeline's stages call, runnable by hand on a
promotion.yaml: write the hypotheses, plan the benchmark runs for them, and
judge them on the llm-d-benchmark reports the runs produced. Every command
writes into ``--out`` and prints one line saying what it wrote; bad input
exits 2 with one line naming the problem and the fix.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.bench.layout import RESULTS_HELP
from bot.cli import PathHelpFormatter
from bot.cli.files import output_dir, write_files
from bot.model import RequestError, counted_noun


class EvidenceCliError(RequestError):
    """Input the evidence commands cannot use."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hypothesize", help="write Track A/B/C hypothesis documents for a promotion.yaml (stage 3)")
    p.add_argument("request", type=Path, help="promotion.yaml")
    p.add_argument("--out", type=Path, required=True, help="directory for A1.md, B1.md, C1.md ... and README.md")
    p.add_argument(
        "--translation", type=Path, help="translation.json from stage 2 (default: translate the program now)"
    )
    p.add_argument("--feedback", help="reviewer feedback to apply (as on a gate 2 'request changes')")
    p.set_defaults(func=cmd_hypothesize)

    p = sub.add_parser("plan", help="one llm-d-benchmark experiment for the hypotheses, with its GPU cost (stage 4)")
    p.add_argument("request", type=Path, help="promotion.yaml")
    p.add_argument("--hypotheses", type=Path, required=True, help="directory written by `promote hypothesize`")
    p.add_argument(
        "--out", type=Path, required=True, help="directory for the experiment, profiles, evaluation spec and plan"
    )
    cv = p.add_mutually_exclusive_group()
    cv.add_argument("--prior-cv", type=float, help="run-to-run CV of the baseline from earlier runs (e.g. 0.04)")
    cv.add_argument("--prior-results", type=Path, help="earlier results directory to estimate the CV from")
    p.add_argument(
        "--allow-sample-data",
        action="store_true",
        help="let sample/synthetic reports in --prior-results size the plan (a rehearsal: the plan says so)",
    )
    p.add_argument(
        "--evolved-config", type=Path, help="EndpointPickerConfig of the evolved plugin (default: translate now)"
    )
    p.add_argument(
        "--translation",
        type=Path,
        help="translation.json (stage 2's, or `promote translate`'s): plans, as stage 4 does, without the hypotheses "
        "the cells cannot exercise (not measurable on these cells: no alpha, no cells); without one an admitter's or "
        "a scheduler's plan plans them all and says the set-aside was not applied",
    )
    p.add_argument(
        "--baseline-config",
        type=Path,
        help=(
            "EndpointPickerConfig of the baseline (default: llm-d-router's default scheduling; for an admitter, "
            "the evolved config without the plugin, so that the arms differ in the plugin alone)"
        ),
    )
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser(
        "evaluate",
        help="verdicts for the hypotheses from llm-d-benchmark v0.2 reports (stage 5)",
        formatter_class=PathHelpFormatter,
    )
    p.add_argument("--hypotheses", type=Path, required=True, help="directory written by `promote hypothesize`")
    p.add_argument("--results", type=Path, required=True, help=RESULTS_HELP)
    p.add_argument("--out", type=Path, required=True, help="directory for verdicts.json, verdicts.md and plots/")
    p.add_argument(
        "--request",
        type=Path,
        help="promotion.yaml, or the branch's benchmarks/promotion/<slug>/request.json (for evolved_for, the "
        "mechanism check and a scheduler's set-aside)",
    )
    p.add_argument(
        "--spec",
        type=Path,
        help="evaluation.yaml written by `promote plan`: evolved_for, alpha, and the evidence binding (each report "
        "must record its arm's EndpointPickerConfig, promotion and image); without it no report is checked against "
        "its arm",
    )
    p.add_argument(
        "--translation",
        type=Path,
        help="translation.json (stage 2's, or `promote translate`'s): sets aside, as stage 5 does, the hypotheses the "
        "cells cannot exercise (default: the branch's docs/promotion/<slug>/translation.json beside --spec or "
        "--hypotheses; without one the summary line says the set-aside was not checked)",
    )
    p.add_argument("--evolved-for", help="workload the program was evolved on (overrides --request / --spec)")
    p.add_argument("--alpha", type=float, help="one-sided significance level (default: the spec's, else 0.05)")
    p.add_argument(
        "--per-request", type=Path, help="CSV of per-request values (treatment,workload,rate,metric,value) for CDFs"
    )
    p.add_argument(
        "--allow-sample-data",
        action="store_true",
        help="let sample/synthetic reports count (a rehearsal: every verdict says so)",
    )
    p.set_defaults(func=cmd_evaluate, home=False)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _load_request(path: Path):
    """A promotion.yaml, or the request stage 4 recorded on the branch (``benchmarks/promotion/<slug>/request.json``,
    the one the findings' "Reproducing" command passes): its program paths point at the requester's checkout, so it
    is read as the record it is, as `promote bench run` reads it, not resolved against files beside it."""
    import json

    from pydantic import ValidationError

    from bot.model import PromotionRequest, describe_validation_error

    if path.suffix != ".json":
        return PromotionRequest.load(path)
    text = _read_text(path, "request.json written by stage 4 (benchmarks/promotion/<slug>/request.json)")
    try:
        return PromotionRequest.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise EvidenceCliError(
            f"{path}: not JSON ({exc.msg}, line {exc.lineno}); pass stage 4's request.json or a promotion.yaml"
        ) from None
    except ValidationError as exc:
        raise EvidenceCliError(
            f"{path}: not a promotion request ({describe_validation_error(exc)}); pass stage 4's "
            "benchmarks/promotion/<slug>/request.json or a promotion.yaml"
        ) from None


def _summary(path: Path, expect=()):
    """The TranslationSummary in a translation.json (stage 2's); EvidenceCliError names the field, or, when it
    translates another plugin than one of ``expect`` ((who says so, kind or None, plugin type) each), both."""
    import json

    from pydantic import ValidationError

    from bot.model import TranslationSummary, describe_validation_error

    text = _read_text(path, "translation.json written by stage 2 (`promote translate`)")
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvidenceCliError(
            f"{path}: not JSON ({exc.msg}, line {exc.lineno}); pass stage 2's translation.json"
        ) from None
    except (RecursionError, ValueError):  # as TranslationSummary.model_validate_json refused it before
        raise EvidenceCliError(
            f"{path}: not JSON the bot reads (nested too deep or a number too large); pass stage 2's translation.json"
        ) from None
    if isinstance(payload, dict) and "summary" in payload and "kind" not in payload:
        payload = payload["summary"]  # `promote translate --out` wraps the summary with the files it wrote
    try:
        summary = TranslationSummary.model_validate(payload)
    except ValidationError as exc:
        raise EvidenceCliError(f"{path}: {describe_validation_error(exc)}") from None
    for said, kind, plugin in expect:
        if summary.plugin_type != plugin or (kind is not None and summary.kind != kind):
            raise EvidenceCliError(
                f"{path}: the translation of {_plugin(summary.kind, summary.plugin_type)}, but {said} "
                f"{_plugin(kind, plugin)}; pass the same promotion's translation.json (stage 2's, "
                "docs/promotion/<slug>/translation.json on its branch)"
            )
    return summary


def _plugin(kind, plugin: str) -> str:
    """``the admission plugin 'x'``, or ``plugin 'x'`` when the kind is not known (an evaluation spec's)."""
    return f"the {kind} plugin {plugin!r}" if kind is not None else f"plugin {plugin!r}"


def _expected_plugin(request=None, spec=None, hypotheses=()) -> list:
    """What a translation.json must translate, for ``_summary``: the request's plugin, the spec's, and the one the
    hypotheses name (their statements say "the evolved scorer `x`"), each that is given. Another plugin's
    translation would set aside this one's hypotheses as "not measurable" for what another plugin does."""
    from bot.hypotheses.wording import named_plugins

    out = []
    if request is not None:
        out.append(("the --request promotes", request.kind, request.plugin_type))
    if spec is not None:
        out.append(("the --spec plans", None, spec.plugin_type))
    named = named_plugins(h.statement for h in hypotheses)
    if len(named) == 1:  # none: hypotheses that name no plugin say nothing; several: not one promotion's
        (kind, plugin) = next(iter(named))
        out.append(("the --hypotheses are about", kind, plugin))
    return out


def _translation(request, feedback: str | None = None):
    """Stage 2's translation of the request's program (the same call the pipeline makes)."""
    try:
        from bot.golang.analyze import analyze
        from bot.golang.source import parse_evolved_source
        from bot.golang.translate import translate
    except ImportError as exc:
        raise EvidenceCliError(
            f"the translator is not available ({exc.name}); pass --translation translation.json / --evolved-config FILE"
        ) from None
    from bot.dictionary import load_dictionary

    dictionary = load_dictionary()
    src = parse_evolved_source(request.source_text, request.source)
    analysis = analyze(src, dictionary, request.kind, request.evolved_on())
    return translate(
        src, analysis, dictionary, plugin_type=request.plugin_type, feedback=feedback, floor=request.fidelity_floor
    )


def _read_text(path: Path, what: str) -> str:
    if not path.is_file():
        raise EvidenceCliError(f"{path}: no such file; pass the {what}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise EvidenceCliError(f"{path}: not UTF-8 text; pass the {what}") from None


# --------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------


def cmd_hypothesize(args) -> int:
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_with_excluded, render_hypotheses

    request = _load_request(args.request)
    epp = None  # with --translation, the plugin's defaults (stage 3 reads the branch's config)
    if args.translation is not None:
        summary = _summary(args.translation, [(f"{args.request} promotes", request.kind, request.plugin_type)])
    else:
        translated = _translation(request)
        summary, epp = translated.summary, translated.epp_config
    hypotheses, excluded = generate_with_excluded(
        request, summary, load_dictionary(), feedback=args.feedback, epp_config=epp
    )
    write_files(output_dir(args.out), render_hypotheses(hypotheses, feedback=args.feedback, excluded=excluded))
    by_track = {t: sum(1 for h in hypotheses if h.track.value == t) for t in "ABC"}
    print(
        f"{counted_noun(len(hypotheses), 'hypothesis', 'hypotheses')} (Track A {by_track['A']}, B {by_track['B']}, C {by_track['C']}) -> {args.out}"
    )
    return 0


#: What ``promote plan`` says for an admitter or a scheduler planned without a translation: stage 4 plans without
#: the hypotheses the cells cannot exercise (``bot.bench.set_aside.for_plan``), read from the translation, so
#: this plan may weigh, size and price hypotheses stage 4 and stage 5 set aside.
SET_ASIDE_NOT_APPLIED = (
    "not-measurable set-aside not applied: the hypotheses the cells cannot exercise are planned with alpha and "
    "cells, unlike stage 4's plan; pass --translation <translation.json> (stage 2's, "
    "docs/promotion/<slug>/translation.json on the branch)"
)


def cmd_plan(args) -> int:
    from bot.bench.evidence import SAMPLE_FLAG
    from bot.bench.experiment import render_experiment
    from bot.bench.mix_only import MIX_ONLY, is_mix_only
    from bot.bench.plan import make_plan
    from bot.bench.plan_markdown import plan_markdown
    from bot.bench.set_aside import SET_ASIDE_KINDS, for_plan
    from bot.hypotheses import load_hypotheses

    request = _load_request(args.request)
    hypotheses = load_hypotheses(args.hypotheses)
    if args.prior_cv is not None and not 0 <= args.prior_cv < 1:
        raise EvidenceCliError(
            f"--prior-cv {args.prior_cv}: pass a coefficient of variation between 0 and 1, e.g. 0.04"
        )
    summary = None
    if args.translation is not None:
        expect = [(f"{args.request} promotes", request.kind, request.plugin_type)]
        summary = _summary(args.translation, [*expect, *_expected_plugin(hypotheses=hypotheses)])
    if args.evolved_config is not None:
        evolved_cfg = _read_text(args.evolved_config, "evolved EndpointPickerConfig YAML")
    else:
        evolved_cfg = _translation(request).epp_config
    hypotheses = for_plan(request, summary, evolved_cfg, hypotheses)
    plan = make_plan(
        request,
        hypotheses,
        prior_cv=args.prior_cv,
        prior_results=args.prior_results,
        allow_sample_data=args.allow_sample_data,
    )
    if args.baseline_config is not None:
        baseline_cfg = _read_text(args.baseline_config, "baseline EndpointPickerConfig YAML")
    else:
        from bot.stages.implement_tests import baseline_epp_config

        baseline_cfg = baseline_epp_config(request.kind, evolved_cfg, request.plugin_type)
    files: dict[str, str | bytes] = dict(render_experiment(plan, request, baseline_cfg, evolved_cfg))
    files["plan.json"] = plan.model_dump_json(indent=2) + "\n"
    files["plan.md"] = plan_markdown(plan)
    write_files(output_dir(args.out), files)
    ratio = plan.cost.gpu_minutes / plan.naive_cost.gpu_minutes if plan.naive_cost.gpu_minutes else 1.0
    if is_mix_only(plan):  # every benchmarked hypothesis set aside: the mix is the plan (bot.bench.mix_only)
        print(
            f"plan: {MIX_ONLY}: {plan.priority_mix.runs} runs, {plan.most_gpu_minutes:g} GPU-minutes; "
            f"{len(plan.not_measurable)} hypotheses not measurable on these cells -> {args.out}"
        )
    else:
        print(
            f"plan: {plan.repetitions} repetitions per arm, {plan.cost.runs} runs, {plan.cost.gpu_minutes:g} "
            f"GPU-minutes ({ratio:.0%} of the naive plan's {plan.naive_cost.gpu_minutes:g}) -> {args.out}"
        )
    if SAMPLE_FLAG in plan.cv_source:
        print(f"  sized from {SAMPLE_FLAG}: measure this cluster's noise before spending GPU time on it")
    if summary is None and request.kind in SET_ASIDE_KINDS:
        print(f"  WARNING: {SET_ASIDE_NOT_APPLIED}")
    return 0


#: What ``promote evaluate`` says, on its summary line and atop verdicts.md, when no report was bound to an arm.
ARMS_NOT_VERIFIED = "arms not verified: pass --spec <evaluation.yaml>"
#: The same when --spec was given but records no arm's EndpointPickerConfig (a plan written before specs did).
SPEC_WITHOUT_ARMS = "arms not verified: the --spec records no arms; rerun `promote plan` and pass its evaluation.yaml"
#: What ``promote evaluate`` says when the spec's priority mix does not say it was planned for an admitter (a plan
#: written before only admitters got one) and no --request says the policy's kind: the mix decides no claim then.
MIX_KIND_UNKNOWN = (
    "Priority-mix claim not judged: the --spec's priority mix does not say it was planned for an admitter (only an "
    "admitter's shedding order is judged on it); pass --request <promotion.yaml> to judge it as stage 5 does"
)


def _arms_warning(spec_given: bool) -> str:
    """verdicts.md's warning when the reports were not bound to their arms (EvidencePolicy without ``arms``):
    without it the page reads as judged evidence, and a baseline run filed under evolved/ confirms a claim."""
    head = (
        "Arms not verified: the evaluation spec records no arms (rerun `promote plan` and pass its evaluation.yaml)"
        if spec_given
        else "Arms not verified: pass `--spec <evaluation.yaml>` (`promote plan` writes it)"
    )
    return (
        f"**{head}.** No report was checked against the EndpointPickerConfig, promotion or image of the arm it is "
        "filed under: a report under evolved/ counts as the evolved plugin's whatever it measured. Only sample data "
        "and the keywords a report records were checked."
    )


#: What ``promote evaluate`` says when it cannot tell which hypotheses stage 5 sets aside as not measurable on
#: these cells (``bot.stages.run_validate.unexercised_by``): no translation says what the plugin does.
SET_ASIDE_UNCHECKED = (
    "not-measurable set-aside not checked: pass --translation <translation.json> (stage 2's, "
    "docs/promotion/<slug>/translation.json on the branch)"
)
#: The same for a scheduler judged without the request: its cells are the request's workloads.
SET_ASIDE_NEEDS_REQUEST = (
    "not-measurable set-aside not checked: a scheduler's cells are read from the request's workloads; "
    "pass --request <promotion.yaml>"
)


def _set_aside_warning(said: str) -> str:
    """verdicts.md's warning when stage 5's set-aside could not be applied: without it a claim stage 5 reports
    not measurable on these cells reads confirmed here, and the two disagree on the same reports."""
    return (
        f"**Not-measurable set-aside not checked: {said.split(': ', 1)[1]}.** Stage 5 sets aside as not measurable "
        "on these cells the hypotheses the cells cannot exercise (an admitter that sheds none of their traffic, a "
        "scheduler whose evolved order they leave inert), read from the translation; here they are judged as if "
        "the cells exercised the plugin, so a confirmed verdict may be one stage 5 would not give."
    )


def _branch_paths(args) -> list[tuple[Path, object]]:
    """(branch checkout root, its PromotionPaths) for a --spec or --hypotheses where a promotion branch keeps it
    (benchmarks/promotion/<slug>/evaluation.yaml, docs/promotion/<slug>/hypotheses): stage 5's files are there."""
    from bot.stages.paths import PromotionPaths

    out = []
    for given, top, leaf in ((args.spec, "benchmarks", "evaluation.yaml"), (args.hypotheses, "docs", "hypotheses")):
        path = given.resolve() if given is not None else None
        if path is not None and path.name == leaf and len(path.parents) > 3:
            if path.parents[1].name == "promotion" and path.parents[2].name == top:
                out.append((path.parents[3], PromotionPaths(path.parent.name)))
    return out


def _branch_translation(args, request, spec, hypotheses):
    """The translation stage 5 would read: --translation, else the branch's; None when there is neither."""
    path = args.translation
    if path is None:
        path = next((p for root, paths in _branch_paths(args) if (p := root / paths.translation_json).is_file()), None)
    return _summary(path, _expected_plugin(request, spec, hypotheses)) if path is not None else None


def _tenant_caveat(args, request, spec, hypotheses):
    """Stage 5's caveat for a plugin that reads the tenant judged on one-tenant cells (``tenant_caveat``), on the
    same inputs; the request names the workloads, so without it there is none."""
    from bot.dictionary import load_dictionary
    from bot.review.gate2_tenants import tenant_caveat

    summary = _branch_translation(args, request, spec, hypotheses) if request is not None else None
    if summary is None:
        return None
    return tenant_caveat(load_dictionary(), request, hypotheses, summary)


def _unexercised(args, request, spec, hypotheses) -> tuple[object, str | None]:
    """(stage 5's set-aside for ``verdicts_on``, what to say when it could not be checked): the same rule
    (``run_validate.unexercised_by``) on the same inputs, the translation and the evolved arm's
    EndpointPickerConfig (the branch's, else the spec's; neither: the plugin's defaults)."""
    from bot.model import PolicyKind
    from bot.stages.run_validate import SET_ASIDE_KINDS, unexercised_by

    branch = _branch_paths(args)
    summary = _branch_translation(args, request, spec, hypotheses)
    if request is not None and request.kind not in SET_ASIDE_KINDS:
        return None, None
    if summary is None:
        return None, SET_ASIDE_UNCHECKED
    kind = request.kind if request is not None else summary.kind
    if kind is PolicyKind.SCHEDULING and request is None:
        return None, SET_ASIDE_NEEDS_REQUEST
    configs = [root / paths.epp_config(summary.plugin_type) for root, paths in branch]
    on_branch = next((p for p in configs if p.is_file()), None)
    if on_branch is not None:
        epp = _read_text(on_branch, "EndpointPickerConfig YAML")
    else:
        epp = spec.arms.get("evolved") if spec is not None else None
    return unexercised_by(kind, summary, request, epp, hypotheses), None


def cmd_evaluate(args) -> int:
    from bot.bench.evidence import SAMPLE_FLAG, load_evidence
    from bot.bench.mix_only import no_cell_reports
    from bot.bench.priority_plan import planned_for
    from bot.bench.reports_aside import not_used_said, set_aside_unplanned
    from bot.bench.run_evidence import load_manifest, policy_for_results
    from bot.escape import md
    from bot.hypotheses import load_hypotheses
    from bot.model import status_counts
    from bot.stages.mix_validate import judge_planned_mix
    from bot.stages.run_validate import mix_markdown, queues_markdown_for, verdicts_on
    from bot.stats.evidence import evidence_files

    hypotheses = load_hypotheses(args.hypotheses)
    evolved_for, alpha, decision = None, 0.05, None
    request = spec = None
    if args.request is not None:
        request = _load_request(args.request)
        evolved_for = request.evolved_for  # and each report's load is checked against the request's workloads
    if args.spec is not None:
        from bot.bench.evaluation_spec import load_evaluation_spec

        spec = load_evaluation_spec(_read_text(args.spec, "evaluation.yaml written by `promote plan`"))
        evolved_for = spec.evolved_for or evolved_for
        alpha, decision = spec.alpha, spec.decision  # the multiplicity weights the plan sized for
    if args.evolved_for:
        evolved_for = args.evolved_for
    if args.alpha is not None:
        alpha = args.alpha
        decision = decision.model_copy(update={"alpha": alpha}) if decision is not None else None
    per_request = _per_request(args.per_request) if args.per_request is not None else None
    unexercised, set_aside_unchecked = _unexercised(args, request, spec, hypotheses)

    results = Path(args.results)

    def rules():
        """Stage 5's rules, with what a run manifest under --results records (its image, faults, reports)."""
        return policy_for_results(spec, results, allow_sample_data=args.allow_sample_data, request=request)

    policy = rules()
    # A mix-only plan (bot.bench.mix_only) has no cells: stage 5 reads no cell report, nor does this.
    reports = no_cell_reports(results) if spec is not None and not spec.cells else load_evidence(results, policy)
    if spec is not None and spec.cells:  # a cell the plan does not run: not used, as stage 5's load_reports does
        set_aside_unplanned(reports, spec.cells)
    mix, mix_unjudged = None, None
    if spec is not None and spec.priority_mix is not None:  # stage 5 judges the plan's mix from the same directory
        # The spec says whom the mix was planned for (only an admitter gets one), so --request is not needed.
        kind = request.kind if request is not None else planned_for(spec.priority_mix)
        mix = judge_planned_mix(
            spec.priority_mix, results, hypotheses, kind=kind, policy=rules, mismatch=None, alpha=alpha
        )
        mix_unjudged = MIX_KIND_UNKNOWN if kind is None else None
    verdicts = verdicts_on(
        hypotheses,
        reports,
        load_manifest(results),
        mix,
        evolved_for=evolved_for,
        decision=decision,
        alpha=alpha if decision is None else None,
        unexercised=unexercised,
        caveat=_tenant_caveat(args, request, spec, hypotheses),
    )
    rejected = list(dict.fromkeys([*reports.rejected, *(mix.rejected if mix else [])]))
    unbound = not policy.arms
    files = evidence_files(
        hypotheses,
        verdicts,
        reports=reports,
        per_request=per_request,
        rejected=rejected,
        alpha=alpha,
        warnings=[
            *([_arms_warning(args.spec is not None)] if unbound else []),
            *([f"**{mix_unjudged}.**"] if mix_unjudged else []),
            *(f"**{md(note)}.**" for note in reports.notes if note != SAMPLE_FLAG),  # e.g. bound without a manifest
            *([_set_aside_warning(set_aside_unchecked)] if set_aside_unchecked else []),
        ],
        priority_mix=mix_markdown(mix, alpha),
        # a scheduler's texts point to "stage 5's waiting-queue section": here too (its cells are the request's)
        queues=queues_markdown_for(request, reports, hypotheses, verdicts, unexercised) if request is not None else "",
    )
    write_files(output_dir(args.out), files)
    said_rejected = not_used_said(rejected)  # valid reports (not in the plan, past the last look) not as rejected
    said = SPEC_WITHOUT_ARMS if args.spec is not None else ARMS_NOT_VERIFIED
    warning = f"; WARNING: {said} (no report was checked against its arm)" if unbound else ""
    warning += f"; {mix_unjudged}" if mix_unjudged else ""
    warning += f"; WARNING: {set_aside_unchecked}" if set_aside_unchecked else ""
    print(
        f"{len(verdicts)} verdicts: {status_counts(v.status for v in verdicts)}{said_rejected}{warning} -> {args.out}"
    )
    return 0


def _per_request(path: Path):
    import pandas as pd

    if not path.is_file():
        raise EvidenceCliError(
            f"--per-request {path}: no such file; pass a CSV with columns treatment,workload,rate,metric,value"
        )
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise EvidenceCliError(
            f"--per-request {path}: not a readable CSV ({type(exc).__name__}); pass treatment,workload,rate,metric,value"
        ) from None
    need = {"treatment", "workload", "rate", "metric", "value"}
    if not need <= set(df.columns):
        raise EvidenceCliError(f"--per-request {path}: missing columns {sorted(need - set(df.columns))}")
    return df


if __name__ == "__main__":  # pragma: no cover
    from bot.cli import main

    sys.exit(main())
