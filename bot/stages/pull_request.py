"""Stage 7, pull request: the PR on the fork, its description, and review comments on file and line.

The description follows the seed: algorithm origin, Track A N/M transferred,
Track B and C summaries, feedback for BLIS, links to every artifact. The
stage also commits the description and an artifact manifest (path and
SHA-256 of everything the promotion wrote) so the PR is reproducible from
the branch alone.
"""

from __future__ import annotations

import json

from bot.escape import line, md
from bot.forge.base import ReviewComment
from bot.model import ReviewRound, Track, TranslationSummary, Verdict, VerdictStatus
from bot.render import render
from bot.stages.context import StageContext, StageOutput
from bot.stages.hypothesize import load_hypotheses


def pr_title(ctx: StageContext) -> str:
    return line(f"[promotion] {ctx.request.title} ({ctx.request.plugin_type})")


def track_counts(hypotheses, verdicts: dict[str, Verdict]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for t in Track:
        hs = [h for h in hypotheses if h.track is t]
        out[t.value] = {"total": len(hs)} | {
            s.value: sum(1 for h in hs if h.id in verdicts and verdicts[h.id].status is s) for s in VerdictStatus
        }
    return out


def finding_comments(review: ReviewRound) -> tuple[list[ReviewComment], list[str]]:
    """A review round's findings: comments anchored where a finding names a file and line, and one line
    each for the findings that name no line (they go into the review's body)."""
    comments, unanchored = [], []
    for f in review.findings:
        text = f"**{f.severity.value}** `{f.check}`: {md(f.message)}"
        if f.file and f.line:  # a comment of its own: the fix and the round in paragraphs of their own
            fix = f"\n\n**Suggested fix:** {md(f.fix)}" if f.fix else ""
            comments.append(
                ReviewComment(f.file, f.line, f"{text}{fix}\n\n_Gate {review.gate}, round {review.round}._")
            )
        else:  # one line of the review's body
            fix = f" — **suggested fix:** {md(f.fix)}" if f.fix else ""
            where = f" (`{f.file}`)" if f.file else ""
            unanchored.append(f"{text}{where}{fix}")
    return comments, unanchored


def draft_body(ctx: StageContext) -> str:
    """The PR description while the promotion runs: what it is, where it is decided, what is on the branch."""
    return render("pr_draft.md.j2", request=ctx.request, state=ctx.state, paths=ctx.paths)


def fidelity_line(f) -> str:
    """The differential check in one sentence for the PR body (the report has the details)."""
    if f is None:
        return "Not measured."
    if not f.measured:
        return f"Not measured: {f.reason}"
    causes = ", ".join(f"{c.mapping} ({c.states})" for c in f.causes[:3])
    return (
        f"On {f.states} sampled states the plugin, as llm-d runs it, decides like the BLIS original ({f.decision}) "
        f"in {f.agreement:.1%} of them (floor {f.floor:.0%})"
        + (f"; the differences come from {causes}" if causes else "")
        + ". Details and example states: the translation report's Fidelity section."
    )


def run(ctx: StageContext) -> StageOutput:
    from bot.stages.document import Recommendation

    hypotheses = load_hypotheses(ctx)  # in id order
    verdicts = {v["hypothesis_id"]: Verdict.model_validate(v) for v in ctx.read_json(ctx.paths.verdicts_json)}
    pairs = [(h, verdicts[h.id]) for h in hypotheses if h.id in verdicts]
    manifest_path = f"{ctx.paths.docs}/artifacts.json"
    description_path = f"{ctx.paths.docs}/pull-request.md"
    artifacts = sorted(
        (a for a in ctx.state.artifact_index() if a.path not in (manifest_path, description_path)),
        key=lambda a: a.path,
    )
    summary = TranslationSummary.model_validate(ctx.read_json(ctx.paths.translation_json))
    body = render(
        "pr_body.md.j2",
        fidelity_line=fidelity_line(summary.fidelity),
        request=ctx.request,
        state=ctx.state,
        counts=track_counts(hypotheses, verdicts),
        pairs=pairs,
        recs=[Recommendation(**r) for r in ctx.read_json(f"{ctx.paths.docs}/feedback-for-blis.json")],
        artifacts=artifacts,
        paths=ctx.paths,
        Track=Track,
    )
    pr = ctx.forge.open_or_update_pr(ctx.branch, ctx.request.fork.base_branch, pr_title(ctx), body)
    ctx.forge.mark_ready(pr)
    manifest = [{"path": a.path, "sha256": a.sha256, "stage": int(a.stage)} for a in artifacts]
    files: dict[str, str | bytes] = {
        description_path: f"# {md(pr_title(ctx))}\n\n{body}",
        manifest_path: json.dumps(manifest, indent=2) + "\n",
    }
    a = track_counts(hypotheses, verdicts)["A"]
    return StageOutput(files=files, summary=f"PR opened: Track A {a['confirmed']}/{a['total']} transferred")
