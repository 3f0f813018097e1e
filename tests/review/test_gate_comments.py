"""What the status comment says at an open gate: counts, headline, what to read first, the directives."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot import directives, pipeline
from bot.model import Finding, PromotionRequest, ReviewRound, Severity, Stage
from bot.render import render
from tests.conftest import REQUEST

NOW = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


def open_gate_1(*findings: Finding):
    """A state waiting at gate 1 after one review round with these findings, rendered as the runner does."""
    from bot.model import StageRecord

    s = pipeline.new_state("1", "fp", "promotion/1-x", actor="alice", now=NOW)
    for stage in (Stage.ANALYZE, Stage.TRANSLATE):
        rec = StageRecord(stage=stage, inputs_hash="h", finished_at=NOW, summary=f"stage {int(stage)}")
        s = pipeline.stage_finished(s, rec, changed=True, now=NOW)
    review = ReviewRound(
        gate=1,
        round=1,
        findings=list(findings),
        headline="the translation into `x`: decides like the BLIS original in 98.4% of 1000 sampled states",
        read_first={"the translation report": "docs/promotion/x/translation-report.md", "the plugin diff": "pkg/x/"},
    )
    return pipeline.review_finished(s, review, now=NOW, max_rounds=1)


def status(state, **context) -> str:
    return render(
        "status_comment.md.j2",
        state=state,
        request=PromotionRequest.load(REQUEST),
        describe=pipeline.describe(state),
        Stage=Stage,
        gates=pipeline.GATE_COVERS,
        **context,
    )


def important(n: int) -> list[Finding]:
    return [Finding(severity=Severity.IMPORTANT, check=f"hazard.x{i}", message="m") for i in range(n)]


@pytest.mark.parametrize("home", ["local", "github"])
def test_the_open_gate_says_counts_headline_what_to_read_and_its_directives(home):
    state = open_gate_1(*important(3), Finding(severity=Severity.SUGGESTION, check="s", message="m"))
    assert state.status.value == "awaiting-decision" and state.open_gate == 1
    links = {"branch": "https://github.com/acme/llm-d-router/tree/promotion/1-x"} if home == "github" else {}
    text = status(state, home=home, work="/w", links=links)
    assert "**Findings: 0 CRITICAL, 3 IMPORTANT, 1 SUGGESTION** (the review did not converge" in text
    assert "**Deciding on** the translation into `x`: decides like the BLIS original in 98.4%" in text
    if home == "github":
        assert (
            "[the translation report](https://github.com/acme/llm-d-router/blob/promotion/1-x/"
            "docs/promotion/x/translation-report.md)" in text
        )
        assert "[the plugin diff](https://github.com/acme/llm-d-router/tree/promotion/1-x/pkg/x/)" in text
        assert "`/request-changes` and the lines after it" in text
    else:
        assert "the plugin diff (`pkg/x/`)" in text and "promote request-changes 1 --reason" in text
    assert all(f"| `{d.syntax}` | `{d.example}` | {d.effect} |" in text for d in directives.for_gate(1))
    assert "`exclude:" not in text


def test_the_headlines_breakdown_is_a_line_each_in_the_status_comment_and_the_cli():
    """trial4: gate 2's cost read as four numbers in one clause; the headline now says what is expected and the
    cap, and each figure behind them stands on a line of its own, labelled, wherever the headline is shown."""
    from bot.cli.pipeline import _gate_brief

    state = open_gate_1()
    lines = ["the cells, fixed plan: 60 runs, 1440 GPU-minutes", "the priority mix: 6 runs, 348 GPU-minutes"]
    review = state.reviews[1][-1].model_copy(
        update={"headline": "x: expected 1407 GPU-minutes", "headline_lines": lines}
    )
    state = state.model_copy(update={"reviews": {1: [review]}})
    text = status(state, home="local", work="/w")
    assert (
        "**Deciding on** x: expected 1407 GPU-minutes.\n\n- the cells, fixed plan: 60 runs, 1440 GPU-minutes\n- "
        in text
    )
    out = _gate_brief(state, 1, fork="/f", base="main")
    at = out.index("  deciding on x: expected 1407 GPU-minutes")
    assert out[at + 1 : at + 3] == [f"    {line}" for line in lines]


def test_zero_critical_is_never_said_without_the_important_count():
    review = ReviewRound(gate=1, round=1, findings=important(3))
    assert review.tally() == "0 CRITICAL, 3 IMPORTANT, 0 SUGGESTION"
    assert ReviewRound(gate=2, round=1).tally() == "0 CRITICAL, 0 IMPORTANT, 0 SUGGESTION"


def test_the_pr_reviews_body_has_the_headline_and_every_count():
    from bot.review import review_summary

    state = open_gate_1(*important(2))
    body = review_summary(state.reviews[1][-1], state)
    assert "deciding on the translation into `x`" in body and "0 CRITICAL, 2 IMPORTANT, 0 SUGGESTION" in body


def test_the_re_review_of_a_change_request_says_so_instead_of_a_bare_round_1():
    """Found by a maintainer: after `/request-changes` the report was headed "round 1" again, as if fresh."""
    from bot.model import Decision, StageRecord
    from bot.review import review_summary

    state = open_gate_1(*important(1))
    assert ", after" not in review_summary(state.reviews[1][-1], state)
    for n in (1, 2):
        state = pipeline.decide(state, 1, Decision.REQUEST_CHANGES, actor="maria", now=NOW, reason=f"param a: {n}")
        rec = StageRecord(stage=Stage.TRANSLATE, inputs_hash=f"h{n}", finished_at=NOW, summary="again")
        state = pipeline.stage_finished(state, rec, changed=True, now=NOW)
        state = pipeline.review_finished(
            state, ReviewRound(gate=1, round=1, findings=important(1)), now=NOW, max_rounds=1
        )
        body = review_summary(state.reviews[1][-1], state)
        tail = "" if n == 1 else " (the 2nd)"
        assert body.startswith(f"**Gate 1 review (translation), round 1, after maria's change request{tail}**"), body


def test_a_directory_to_read_first_links_the_pr_diff_not_a_tree_listing():
    """Found by a maintainer: "the plugin diff" linked the package's tree listing on the branch."""
    state = open_gate_1(*important(1))
    links = {
        "branch": "https://github.com/acme/llm-d-router/tree/promotion/1-x",
        "pull request": "https://github.com/acme/llm-d-router/pull/2",
    }
    text = status(state, home="github", work="/w", links=links)
    assert "[the plugin diff](https://github.com/acme/llm-d-router/pull/2/files)" in text
    assert "[the translation report](https://github.com/acme/llm-d-router/blob/promotion/1-x/docs/" in text
