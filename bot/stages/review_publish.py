"""Where a gate's review is shown, and how it is rewritten once the gate is decided.

A review is posted twice: the full report on the issue (where people decide) and the same findings as one
review on the PR's lines (where people read the code). Both stay in view long after the gate is decided, so
both are rewritten then to say who decided it, how, when and at which commit; left alone, the PR record kept
"the gate is open for a decision" for gates decided long ago. Kept out of the runner, which drives the steps.
"""

from __future__ import annotations

from bot.forge import markers
from bot.forge.base import Forge
from bot.model import PipelineState, ReviewRound


def publish_review(forge: Forge, branch: str, ctx, state: PipelineState, review: ReviewRound) -> None:
    """The review report on the issue, and the same findings as one review on the PR's lines."""
    from bot.review import render_review_report, review_summary
    from bot.stages.pr_parts import file_reader
    from bot.stages.pull_request import finding_comments

    forge.upsert_comment(markers.review(review.gate), render_review_report(review, ctx, state))
    pr = forge.pull_request(branch)
    if pr is not None:
        # a finding that names only its file gets the line it is about
        comments, unanchored = finding_comments(review, file_reader(ctx.read, ctx.list))
        body = review_summary(review, state, github=ctx.home == "github") + "".join(
            f"\n- {line}" for line in unanchored
        )
        forge.set_review_comments(pr, markers.review(review.gate), comments, body=body)


def publish_decision(forge: Forge, branch: str, ctx, before: PipelineState, after: PipelineState) -> None:
    """The decided gate's review, edited in place on the issue and on the PR to say who decided it, how, when, at
    which commit. Rendered from ``before`` (``ctx`` is its context), the state it was shown with: the decision
    clears its round and change requests, and the branch has not moved since the review read it."""
    from bot.review import render_review_report, review_summary

    if len(after.decisions) <= len(before.decisions):
        return
    decision = after.decisions[-1]
    rounds = before.reviews.get(decision.gate) or []
    if not rounds:
        return
    marker = markers.review(decision.gate)
    forge.upsert_comment(marker, render_review_report(rounds[-1], ctx, before, decided=decision, commit=before.head))
    pr = forge.pull_request(branch)
    if pr is not None:
        github = ctx.home == "github"
        summary = review_summary(rounds[-1], before, decided=decision, commit=before.head, github=github)
        forge.edit_review_summary(pr, marker, summary)
