"""Stage 3, hypothesize: Track A (transfer), B (sim-to-real gaps) and C (regression) hypotheses.

One markdown document per hypothesis with YAML front matter; stage 5's
evaluator and gate 2's reviewer read them back from the branch.
"""

from __future__ import annotations

from bot.model import TranslationSummary
from bot.render import render
from bot.stages.context import StageContext, StageOutput


def run(ctx: StageContext) -> StageOutput:
    from bot.hypotheses import generate_hypotheses, render_hypothesis

    summary = TranslationSummary.model_validate(ctx.read_json(ctx.paths.translation_json))
    hypotheses = generate_hypotheses(ctx.request, summary, ctx.dictionary, feedback=ctx.feedback)
    files: dict[str, str | bytes] = {ctx.paths.hypothesis(h.id): render_hypothesis(h) for h in hypotheses}
    files[f"{ctx.paths.hypotheses_dir}/README.md"] = render(
        "hypotheses_index.md.j2", request=ctx.request, hypotheses=hypotheses, feedback=ctx.feedback
    )
    by_track = {t: sum(1 for h in hypotheses if h.track.value == t) for t in "ABC"}
    return StageOutput(
        files=files,
        summary=f"{len(hypotheses)} hypotheses (Track A {by_track['A']}, B {by_track['B']}, C {by_track['C']})",
    )


def load_hypotheses(ctx: StageContext):
    """Every hypothesis document on the branch, parsed (stages 4-6 and gates 2-3)."""
    from bot.hypotheses import parse_hypothesis

    paths = [p for p in ctx.list(ctx.paths.hypotheses_dir) if p.endswith(".md") and not p.endswith("README.md")]
    return [parse_hypothesis(ctx.read(p) or "", p) for p in paths]
