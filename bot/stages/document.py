"""Stage 6, document: one FINDINGS per hypothesis (BLIS template) and the promotion report.

The resolution, root-cause hints and feedback for BLIS are derived by rule
from the verdict, the track and the translation (what a mature reviewer would
write first); a person or the Claude author can deepen the narrative, and the
document keeps the same headings either way.
"""

from __future__ import annotations

import json

from pydantic import Field

from bot.bench.condition_experiment import experiment_files
from bot.forge import markers
from bot.forge.base import FeedbackNotFiled
from bot.golang.scheduling_docs import UNPLANNED_CONTROL, queue_control
from bot.golang.toolchain import ToolchainReport
from bot.hypotheses.blis_feedback import Recommendation, recommendations
from bot.model import (
    Direction,
    Effect,
    Hypothesis,
    PolicyKind,
    Stage,
    Track,
    TranslationSummary,
    Verdict,
    VerdictStatus,
)
from bot.model.better import better_than_margin
from bot.model.evidence import CONDITION_NOT_RECORDED
from bot.render import render
from bot.render.claims import cause, held_back
from bot.render.outcome import is_sample
from bot.stages.context import StageContext, StageOutput
from bot.stages.hypothesize import load_hypotheses
from bot.stats.shedding import NOT_USED_FLAG
from bot.stats.unjudged import NOT_BENCHMARKED, NOT_EXERCISED, NOT_RUNNABLE, NOT_VARIED, unjudged_reason

#: BLIS resolution names; a confirmation whose gain is not where the mechanism predicts gets its own, and an
#: inconclusive verdict says what held it back (``resolution``): "parameter-dependent" only when cells disagree.
RESOLUTION = {
    VerdictStatus.CONFIRMED: "Clean confirmation",
    VerdictStatus.REFUTED: "Refuted — wrong mental model",
    VerdictStatus.INCONCLUSIVE: "Inconclusive — parameter-dependent",
    VerdictStatus.NOT_TESTABLE: "Not testable as translated",
}
PARAMETER_DEPENDENT = "parameter-dependent"  # bot.stats.verdicts' flag: confirmed in some cells, refuted in others

#: Why a cell did not confirm (``bot.render.claims.cause``, by its first words) -> what would decide it.
REMEDY = {
    "within the noise floor": (
        "the change is smaller than the noise floor T_eff, which no p-value overrides, so the rule calls it no "
        "effect; more runs do not lower T_eff = max(5%, 2 × baseline CV)"
    ),
    "not significant after multiplicity control": (
        "the interval lies within the margin, but the p-value is above the level multiplicity control gives this "
        "hypothesis: more runs per arm would lower it, or a wider margin (a gate 2 change request)"
    ),
    "measured change beyond": (
        "the measured change already lies beyond the margin and only the interval reaches inside it: the runs "
        "point against the claim without deciding it; more runs per arm would decide it, more likely as a "
        "refutation than a confirmation"
    ),
    "interval reaches beyond": (
        "the runs are too few or too noisy to show the claim even without multiplicity control: more runs per arm "
        "or a quieter cluster would"
    ),
    "not significant": "not significant at the level multiplicity control gives it: more runs per arm would decide it",
    "demoted": "the shedding guard held it back: the evolved arm lost more requests, which can fake a latency gain",
    "against the prediction": "it contradicts the prediction where other cells confirm it: the effect depends on the operating point",
    "beyond the margin": "it lies beyond the margin where other cells hold: the effect depends on the operating point",
}

STATUS_WORD = {
    VerdictStatus.CONFIRMED: "Confirmed",
    VerdictStatus.REFUTED: "Refuted",
    VerdictStatus.INCONCLUSIVE: "Inconclusive",
    VerdictStatus.NOT_TESTABLE: "Not testable as translated",
}


def file_feedback(
    ctx: StageContext, pairs: list[tuple[Hypothesis, Verdict]], recs: list[Recommendation]
) -> tuple[dict[str, str], dict[str, str], str]:
    """One feedback issue per refuted Track A or B hypothesis (the seed's loop back to BLIS), found again by marker:
    (hypothesis id -> where it is, branch path -> text of each issue that could not be filed, what to say).

    A refused issue (GITHUB_TOKEN cannot write another repository) does not fail the stage: the gates were
    passed and the GPUs ran, and a `/retry` would meet the same refusal. Its text is kept in the branch and the
    stage's summary, shown on the issue, says why and how to file it."""
    links: dict[str, str] = {}
    kept: dict[str, str] = {}
    refused: FeedbackNotFiled | None = None
    for h, v in pairs:
        if v.status is not VerdictStatus.REFUTED or h.track not in (Track.A, Track.B):
            continue
        body = render(
            "feedback_issue.md.j2",
            h=h,
            v=v,
            request=ctx.request,
            recs=[r for r in recs if r.hypothesis == h.id],
            findings=ctx.paths.findings(h.id),
        )
        title = f"[promotion {ctx.request.id} feedback] {h.id}: {h.title}"[:200]
        try:
            link = ctx.forge.file_feedback(markers.feedback(ctx.request.id, h.id), title, body)
        except FeedbackNotFiled as exc:
            kept[feedback_path(ctx, h.id)] = f"# {title}\n\n{body}"
            refused = refused or exc
            continue
        if link:
            links[h.id] = link
    return links, kept, not_filed_note(sorted(kept), refused) if refused else ""


def feedback_path(ctx: StageContext, hid: str) -> str:
    """Where the text of a feedback issue that could not be filed is kept on the promotion branch."""
    return f"{ctx.paths.docs}/feedback/{hid}.md"


def not_filed_note(paths: list[str], refused: FeedbackNotFiled) -> str:
    """The status line's clause for feedback issues that could not be filed: which, why, where, what to do."""
    which, it = ("the feedback issue", "it") if len(paths) == 1 else (f"{len(paths)} feedback issues", "them")
    where = ", ".join(f"`{p}`" for p in paths)
    fix = f"; {refused.fix}" if refused.fix else ""
    return (
        f"{which} could not be filed ({refused.why}); the text is kept in {where}: file {it} in "
        f"{refused.repository} by hand{fix}"
    )


#: A confirmed scheduling claim: what llm-d ran is the placement, so that is what the benchmark confirmed.
PLACEMENT_CONFIRMED = (
    "Confirmation of the placement translation (endpoints preferred where the evolved order would serve the "
    "request earlier), not of BLIS's queue ordering: vLLM's queue stays first come, first served"
)


def resolution(h: Hypothesis, v: Verdict, kind: PolicyKind) -> str:
    """The BLIS resolution name. A BLIS claim about a scheduler's queue order is tested in llm-d only through
    the placement its translation makes, so "Clean confirmation" would confirm an ordering that never ran."""
    mechanism_flag = any("mechanism" in f for f in v.flags)
    if "no-results" in v.flags:
        return "Converged to open question"
    if v.status is VerdictStatus.CONFIRMED and mechanism_flag:
        return "Confirmation with wrong mechanism"
    if v.status is VerdictStatus.CONFIRMED and h.track is Track.A and kind is PolicyKind.SCHEDULING:
        return PLACEMENT_CONFIRMED
    if v.status is VerdictStatus.INCONCLUSIVE and not any(f.startswith(PARAMETER_DEPENDENT) for f in v.flags):
        held = held_back(h, v)  # the report's words ("at 20 req/s: within the noise floor"), workloads escaped
        return f"Inconclusive ({held})" if held else "Inconclusive — not measured"
    return RESOLUTION[v.status]


def _causes(h: Hypothesis, v: Verdict) -> dict[str, list[Effect]]:
    """The cells that did not confirm, grouped by why (``bot.render.claims.cause``)."""
    out: dict[str, list[Effect]] = {}
    for e in v.effects:
        if e.status is not VerdictStatus.CONFIRMED:
            out.setdefault(cause(h, e), []).append(e)
    return out


def _remedy(why: str) -> str | None:
    return next((r for k, r in REMEDY.items() if why.startswith(k)), None)


def held_notes(h: Hypothesis, v: Verdict) -> list[str]:
    """Why an inconclusive verdict is inconclusive, one line per cause, from its cells' own reasons, with what
    would decide it (never a generic "noise floor or too noisy": the reason is known)."""
    several = len({e.workload for e in v.effects}) > 1
    notes = []
    for why, cells in _causes(h, v).items():
        where = ", ".join(f"{e.workload} @ {e.rate:g} req/s" if several else f"{e.rate:g} req/s" for e in cells)
        untested = [e for e in cells if e.p_value is None and e.reason]
        remedy = _remedy(why) if not untested else None
        notes.append(f"At {where}: {remedy or '; '.join(dict.fromkeys(e.reason for e in cells))}.")
    return notes or ["No cell was measured, so nothing decided it; see the flags."]


#: The devil's advocate of a verdict no benchmark report decides (``bot.stats.unjudged.unjudged_reason``, by its
#: flag): what would decide it, as its Results say. "More repetitions or a quieter cluster may still resolve it"
#: is true of a measured inconclusive verdict only; for these, more runs of the same cells decide nothing.
UNJUDGED_DEVIL = {
    NOT_EXERCISED: (
        "Nothing measured here speaks for or against the claim: the planned cells cannot exercise what it is about, "
        "so whatever they show is not the plugin's doing. More repetitions or a quieter cluster would not change "
        "that; benchmarking it on cells that exercise it, as its Results say, would."
    ),
    NOT_RUNNABLE: (
        "Nothing was measured for the claim: this cluster cannot run the condition it is about. More repetitions "
        "here would not change that; a cluster that can apply the condition would, or review at gate 3."
    ),
    NOT_VARIED: (
        "Nothing was measured for the claim: no planned run varies what it is about. More repetitions of the planned "
        "cells would not change that; a run that varies it would, or review at gate 3."
    ),
    NOT_BENCHMARKED: (
        "The claim makes no benchmark prediction, so no benchmark speaks for or against it however many runs are "
        "made; the stage 4 tests or review decide it."
    ),
    CONDITION_NOT_RECORDED: (
        "No run records the condition the claim is about, so none of them speaks for or against it. More repetitions "
        "would not change that until the runs record it: run its cells with `promote bench run`, or decide it by "
        "review at gate 3."
    ),
    NOT_USED_FLAG: (
        "Nothing was measured for the claim: the plan's priority mix decides it, and no result of it could be used. "
        "More repetitions of the planned cells would not change that; running the priority mix would, as its Results "
        "say."
    ),
    "no-results": "Nothing has been measured yet: the stage 4 plan has not been run, so no verdict speaks either way.",
}

#: A confirmed equivalence or no-regression claim: "the improvement could come from ..." has no improvement to
#: explain (s01's C6 was confirmed at -0.3%), and the claim's weakness is another.
GUARD_DEVIL = (
    "A confirmed {direction} claim says the evolved plugin stayed within the margin here, not that it improved "
    "anything: it would hold just as well if the plugin never acted on these cells (a scheduler where no queue "
    "formed, an admitter that shed nothing), so it speaks for the plugin's safety on this workload, not for its "
    "mechanism."
)


def devils_advocate(h: Hypothesis, v: Verdict) -> str | None:
    """The devil's advocate the findings template cannot tell from the status alone, or None for the template's
    own (a measured inconclusive, refuted or improving confirmed verdict, or one not testable as translated)."""
    if "no-results" in v.flags:
        return UNJUDGED_DEVIL["no-results"]
    reason = unjudged_reason(v) or (NOT_USED_FLAG if NOT_USED_FLAG in v.flags else None)
    if reason is not None and not v.effects and v.status is VerdictStatus.INCONCLUSIVE:
        return UNJUDGED_DEVIL[reason]
    direction = h.prediction.direction if h.prediction else None
    if v.status is VerdictStatus.CONFIRMED and direction in (Direction.NO_WORSE, Direction.EQUIVALENT):
        return GUARD_DEVIL.format(direction=direction.value)
    return None


def action(h: Hypothesis, v: Verdict, recs: list[Recommendation]) -> str:
    """The findings classification's action: the BLIS feedback only when the report has an entry for it."""
    if any(r.hypothesis == h.id for r in recs):
        return "see the promotion report's feedback for BLIS"
    if v.status is VerdictStatus.CONFIRMED:
        return "none"
    whys = list(_causes(h, v))
    if whys and all(w.startswith("within the noise floor") for w in whys):
        return "none: the change is within the noise floor, which more runs do not lower"
    if any(w.startswith("measured change beyond") for w in whys):
        return "more runs per arm would decide it (as measured, against the claim); see the root cause analysis"
    if any(w.startswith(("not significant", "interval reaches beyond")) for w in whys):
        return "more runs per arm (or a wider margin at gate 2); see the root cause analysis"
    return "see the root cause analysis"


def root_cause(h: Hypothesis, v: Verdict, summary: TranslationSummary) -> list[str]:
    """First-principles hints for the root-cause section, derived from what is known."""
    notes: list[str] = []
    if v.status is VerdictStatus.NOT_TESTABLE:
        return [f"Not testable as translated: {h.not_testable}"] + (
            [f"Claimed mechanism: {h.mechanism}"] if h.mechanism else []
        )
    if "no-results" in v.flags:
        return ["No benchmark data yet: the plan in stage 4 has not been run on a GPU cluster."]
    if h.track is Track.A and v.status is VerdictStatus.REFUTED:
        gaps = ", ".join(summary.freshness_gaps) or "none recorded"
        notes.append(
            "BLIS predicted the opposite direction. Signals whose freshness differs between BLIS and llm-d "
            f"({gaps}) are the first suspects: the evolved thresholds were tuned on BLIS's signal timing."
        )
    if h.track is Track.B and v.status is VerdictStatus.REFUTED:
        notes.append(f"The sim-to-real gap `{h.source}` changes the outcome in llm-d; BLIS does not model it.")
    if h.track is Track.C and better_than_margin(h, v):
        notes.append(
            "The evolved plugin is better than the margin on a baseline scenario it was never evolved against: it "
            "differs from the default, and is no regression; the equivalence claim understated it."
        )
    elif h.track is Track.C and v.status is VerdictStatus.REFUTED:
        notes.append("The evolved plugin regresses a baseline scenario it was never evolved against.")
    if v.status is VerdictStatus.INCONCLUSIVE:
        notes.extend(held_notes(h, v))
    if v.status is VerdictStatus.CONFIRMED:
        notes.append("The predicted direction holds beyond the noise floor in every cell the hypothesis covers.")
    for flag in v.flags:
        notes.append(f"Flag: {flag}.")
    if h.mechanism:
        notes.append(f"Claimed mechanism (RCV-3 asks to verify it, not only the direction): {h.mechanism}")
    return notes


def run(ctx: StageContext) -> StageOutput:
    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    hypotheses = load_hypotheses(ctx)  # in id order
    read = ctx.read_model(ctx.paths.verdicts_json, list[Verdict], written_by=Stage.RUN_VALIDATE)
    verdicts = {v.hypothesis_id: v for v in read}
    pairs = [(h, verdicts[h.id]) for h in hypotheses if h.id in verdicts]
    # Through the model, never a raw dict: an older bot's file lacks keys the template reads (tests_lost).
    checks = ctx.read_model(ctx.paths.go_checks, GoChecks, written_by=Stage.RUN_VALIDATE)
    files: dict[str, str | bytes] = {}
    written, prompt = _narratives(ctx, pairs)
    recs = recommendations(pairs, ctx.request.kind)
    sample = is_sample(pairs)  # the Reproducing command passes --allow-sample-data as stage 5 judged
    for h, v in pairs:
        files[ctx.paths.findings(h.id)] = render(
            "findings.md.j2",
            h=h,
            v=v,
            status=STATUS_WORD[v.status],
            resolution=resolution(h, v, ctx.request.kind),
            root_cause=root_cause(h, v, summary),
            action=action(h, v, recs),
            request=ctx.request,
            paths=ctx.paths,
            experiments=experiment_files(
                ctx.paths.benchmarks, h.workloads, ctx.request.stack
            ),  # a Track B condition has its own
            narrative=written.get(h.id),
            narrative_prompt=prompt,
            queue_control=queue_control(),
            unplanned_control=UNPLANNED_CONTROL,
            sample=sample,
            devil=devils_advocate(h, v),
        )
    links, kept, not_filed = file_feedback(ctx, pairs, recs)
    files.update(kept)
    recs = [Recommendation(**{**r.__dict__, "link": links.get(r.hypothesis, "")}) for r in recs]
    files[ctx.paths.report] = render(
        "report.md.j2",
        request=ctx.request,
        summary=summary,
        recs=recs,
        checks=checks,
        paths=ctx.paths,
        gpu_time=_gpu_time(ctx),
        decisions=ctx.state.decisions,  # who decided each gate, and whether a person did (--approve)
        forest_plot=_forest_plot(ctx),
        **report_blocks(pairs, ctx.read(ctx.paths.testbed), alpha=_ci_alpha(ctx)),
    )
    files[f"{ctx.paths.docs}/feedback-for-blis.json"] = (
        json.dumps([r.__dict__ for r in recs], indent=2, sort_keys=True) + "\n"
    )
    summary = stage_summary(len(pairs), len(recs), len(written))
    return StageOutput(files=files, summary=f"{summary}; {not_filed}" if not_filed else summary)


class GoChecks(ToolchainReport):
    """Stage 5's `validation/go-checks.json`: the toolchain report without its output, with the hashes of the
    files it checked. Keys added since (``tests_lost``) take their defaults in a file an older bot wrote."""

    checked_files: dict[str, str] = Field(default_factory=dict)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def stage_summary(findings: int, recs: int, narratives: int) -> str:
    """'17 FINDINGS documents, the promotion report, 1 BLIS recommendation': the commit subject and status line."""
    authored = f"; {_count(narratives, 'root-cause narrative')} by the Claude author" if narratives else ""
    return f"{_count(findings, 'FINDINGS document')}, the promotion report, {_count(recs, 'BLIS recommendation')}{authored}"


def _ci_alpha(ctx: StageContext) -> float:
    from bot.stages.run_validate import ci_alpha

    return ci_alpha(ctx)


def report_blocks(pairs: list[tuple[Hypothesis, Verdict]], testbed_json: str | None, *, alpha: float = 0.05) -> dict:
    """The report's markdown blocks (bot.render.outcome, bot.bench.testbed escape what they interpolate)."""
    from bot.bench.testbed import testbed_markdown
    from bot.render import outcome as claims

    details: dict[str, list[str]] = {t.value: [] for t in Track}
    for h, v in pairs:
        details[h.track.value].append(claims.detail_markdown(h, v, findings_link=f"findings/{h.id}.md"))
    return {
        "headline": claims.headline(pairs),
        "sample": claims.is_sample(pairs),
        "testbed": testbed_markdown(json.loads(testbed_json) if testbed_json else None),
        "claims": claims.claims_table(pairs, alpha=alpha),
        "guards_c": claims.guards_table(pairs, Track.C, alpha=alpha),
        "guards_b": claims.guards_table(pairs, Track.B, alpha=alpha),
        "untested": claims.untested_list(pairs),
        "how_to_read": claims.how_to_read(pairs, alpha=alpha),
        "details": details,
    }


def _forest_plot(ctx: StageContext) -> str:
    """Stage 5's forest plot of every measured cell, shown from the report when the branch has it."""
    import posixpath

    from bot.stages.run_validate import ci_alpha
    from bot.stats.plots import FOREST, forest_markdown

    path = f"{ctx.paths.validation_dir}/plots/{FOREST}"
    if path not in ctx.list(f"{ctx.paths.validation_dir}/plots/"):
        return ""
    return forest_markdown(posixpath.relpath(path, posixpath.dirname(ctx.paths.report)), alpha=ci_alpha(ctx))


def _gpu_time(ctx: StageContext):
    """What stage 5 recorded about the benchmark's GPU-minutes (None when no reports were judged)."""
    from bot.bench.gpu_time import GpuTime

    text = ctx.read(ctx.paths.gpu_time)
    if not text:
        return None
    spent = GpuTime.from_json(text)
    return spent if spent.judged else None


def needs_narrative(v: Verdict) -> bool:
    """Where rules say least: refuted, flagged or inconclusive verdicts that have measured data. The
    sample-data flag says where the data came from, not what they show, so it asks for no narrative."""
    from bot.bench.evidence import SAMPLE_FLAG

    if not v.effects or "no-results" in v.flags:
        return False
    return v.status is not VerdictStatus.CONFIRMED or any(f != SAMPLE_FLAG for f in v.flags)


def _narratives(ctx: StageContext, pairs) -> tuple[dict, str]:
    """hypothesis id -> the Claude author's narrative (none offline), and the prompt that wrote them."""
    if ctx.agents is None:
        return {}, ""
    from bot.agents import author
    from bot.agents.prompts import load

    targets = [(h.id, v.status.value) for h, v in pairs if needs_narrative(v)]
    context_files = {p: ctx.read(p) or "" for p in ctx.list(ctx.paths.hypotheses_dir)}
    context_files[ctx.paths.verdicts_json] = ctx.read(ctx.paths.verdicts_json) or ""
    written = author.narratives(ctx.agents.llm, targets, context_files=context_files)
    return written, load("author/document.md.j2").tag
