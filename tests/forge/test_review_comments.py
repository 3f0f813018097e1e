"""How a gate's findings read on the PR: one inline comment per anchored finding, one body line for the rest."""

from __future__ import annotations

from bot.model import Finding, ReviewRound, Severity
from bot.stages.pull_request import finding_comments


def test_the_fix_and_the_round_stand_apart_from_the_finding():
    anchored = Finding(
        severity=Severity.IMPORTANT,
        check="hazard.sim-scale-threshold",
        message="threshold 7 is simulator scale",
        file="pkg/x/plugin.go",
        line=12,
        fix="re-calibrate `loadHighThreshold`",
    )
    loose = anchored.model_copy(update={"line": None, "file": None, "check": "G1.fidelity"})
    review = ReviewRound(gate=1, round=2, findings=[anchored, loose])
    comments, body = finding_comments(review)
    assert [(c.path, c.line) for c in comments] == [("pkg/x/plugin.go", 12)]
    paragraphs = comments[0].body.split("\n\n")
    first, second = review.ids()
    assert paragraphs == [
        f"**IMPORTANT** `{first}`: threshold 7 is simulator scale",
        "**Suggested fix:** re-calibrate `loadHighThreshold`",
        "_Gate 1, round 2._",
    ]
    assert body == [
        f"**IMPORTANT** `{second}`: threshold 7 is simulator scale — **suggested fix:** re-calibrate `loadHighThreshold`"
    ]


def test_a_finding_traced_to_the_evolved_program_says_which_line():
    f = Finding(
        severity=Severity.IMPORTANT, check="hazard.x", message="m", file="pkg/x/evolved.go", line=137, source_line=194
    )
    [comment], _ = finding_comments(ReviewRound(gate=1, round=1, findings=[f]))
    assert comment.body.endswith("_Gate 1, round 1; from line 194 of the evolved program._")
