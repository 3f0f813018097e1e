"""Stage 3, hypothesize: Track A (transfer), B (sim-to-real gaps) and C (regression) hypotheses.

One markdown document per hypothesis with YAML front matter; stage 5's
evaluator and gate 2's reviewer read them back from the branch.
"""

from __future__ import annotations

from bot.model import Stage, TranslationSummary
from bot.stages.context import StageContext, StageOutput


def run(ctx: StageContext) -> StageOutput:
    from bot.hypotheses import generate_with_excluded, render_hypotheses

    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    hypotheses, excluded = generate_with_excluded(
        ctx.request,
        summary,
        ctx.dictionary,
        feedback=ctx.feedback,
        deployed=_deployed(ctx),
        epp_config=ctx.read(ctx.paths.epp_config(summary.plugin_type)),
    )
    files: dict[str, str | bytes] = {}
    authored = ""
    if ctx.agents is not None:
        hypotheses, authored = _author(ctx, hypotheses, files)
    docs = render_hypotheses(hypotheses, feedback=ctx.feedback, excluded=excluded)
    files.update({f"{ctx.paths.hypotheses_dir}/{name}": text for name, text in docs.items()})
    by_track = {t: sum(1 for h in hypotheses if h.track.value == t) for t in "ABC"}
    summary_line = (
        f"{len(hypotheses)} distinct hypotheses (Track A {by_track['A']}, B {by_track['B']}, C {by_track['C']})"
        + _folded(hypotheses)
    )
    if excluded:
        summary_line += f"; {', '.join(h.id for h in excluded)} excluded by a person"
    if ctx.feedback:
        summary_line += "; rerun with feedback"
    return StageOutput(files=files, summary=summary_line + authored)


def _deployed(ctx: StageContext) -> dict[str, float | str]:
    """The ``param`` values stage 2's committed config carries (the change requests it ran with): the plugin
    the benchmark runs has them, so the hypotheses must describe it with them."""
    from bot.golang.translate import feedback_options

    return feedback_options(ctx.stage_feedback(Stage.TRANSLATE))[0].get("deployed", {})


def _folded(hypotheses) -> str:
    """'; 8 duplicate or implied merged, 2 not testable as translated' (empty when neither)."""
    merged = sum(len(h.covers) for h in hypotheses)
    untestable = sum(1 for h in hypotheses if h.not_testable)
    parts = [f"{merged} duplicate or implied merged"] if merged else []
    parts += [f"{untestable} not testable as translated"] if untestable else []
    return "; " + ", ".join(parts) if parts else ""


def _author(ctx: StageContext, hypotheses, files: dict[str, str | bytes]):
    """The Claude author's wording pass (and its answers to gate 2's blocking findings)."""
    from bot.agents import author
    from bot.agents.record import record_path
    from bot.agents.untrusted import untrusted_inputs
    from bot.hypotheses import parse_hypothesis, render_hypotheses, render_hypothesis
    from bot.hypotheses.wording import claim_kept

    review = ctx.state.reviews.get(2, []) if ctx.review else []
    todo = author.FindingsToAnswer.merge(review[-1].for_author if review else [])
    generated = render_hypotheses(hypotheses, feedback=ctx.feedback)
    context_files = {f"{ctx.paths.hypotheses_dir}/{n}": text for n, text in generated.items()}
    context_files[ctx.paths.translation_json] = ctx.read(ctx.paths.translation_json) or ""
    hypotheses, record = author.hypothesize(
        ctx.agents.llm,
        hypotheses,
        todo,
        context_files=context_files,
        untrusted=untrusted_inputs(2, ctx.request),
        render=lambda h: render_hypothesis(h, feedback=ctx.feedback),
        parse=parse_hypothesis,
        claim_kept=claim_kept,
        review_round=review[-1].round if review else None,
    )
    files[record_path(ctx.paths.docs, 2)] = record.dumps()
    dropped = ", wording dropped" if record.dropped else ""
    return hypotheses, f"; author: {len(record.applied)} reworded, {len(record.responses)} responses{dropped}"


def load_hypotheses(ctx: StageContext):
    """Every hypothesis document on the branch, parsed (stages 4-6 and gates 2-3)."""
    from bot.hypotheses import hypothesis_order, is_hypothesis_file, parse_hypothesis

    paths = [p for p in ctx.list(ctx.paths.hypotheses_dir) if is_hypothesis_file(p)]
    return sorted((parse_hypothesis(ctx.read(p) or "", p) for p in paths), key=hypothesis_order)
