"""The change-request directives: one registry the parsers, the texts and the README agree with."""

from __future__ import annotations

import re

import pytest

from bot import PROJECT_ROOT, directives
from bot.dictionary import load_dictionary
from bot.model import PromotionRequest
from bot.review.change_request import parameter_checks, refusal
from tests.conftest import REQUEST

PARAMETERS = ["kvUtilizationFloor", "kvUtilizationThreshold", "loadHighThreshold", "loadLowThreshold"]


@pytest.mark.parametrize("d", [d for g in (1, 2, 3) for d in directives.for_gate(g)], ids=lambda d: d.name)
def test_every_listed_directive_is_applied_by_its_gates_parser(d):
    """The example people are shown applies as written; prose around it is still prose."""
    assert directives.found(d.gate, f"some words first\n{d.example}\n") == [d]
    assert refusal(d.gate, f"some words first\n{d.example}", parameters=PARAMETERS) is None
    if d.gate == 1:
        from bot.golang.translate import feedback_options

        assert feedback_options(d.example)[1], "gate 1's translator applies it"
    elif d.gate == 2:
        from bot.hypotheses import parse_feedback

        fb = parse_feedback(f"a remark\n{d.example}")
        assert fb.notes == ["a remark"] and not fb.unapplied
        assert fb.exclude or fb.guards or fb.margins or fb.margin is not None


def test_the_readme_lists_every_directive_and_no_other():
    readme = (PROJECT_ROOT / "README.md").read_text()
    table = [ln for ln in readme.splitlines() if re.match(r"\| [123] \| `", ln)]
    listed = {(int(ln[2]), re.search(r"`([^`]+)`", ln).group(1)) for ln in table}
    assert listed == {(d.gate, d.example) for g in (1, 2, 3) for d in directives.for_gate(g)}


def test_prose_alone_is_answered_with_the_gates_directives_and_the_directive_it_probably_means():
    why = refusal(1, "set loadThreshold to 40 for real pods", parameters=PARAMETERS)
    assert why is not None and "names no directive gate 1 applies" in why and "nothing was recorded" in why
    assert "`param loadHighThreshold: 40`" in why and "`param loadLowThreshold: 40`" in why
    assert all(f"`{d.syntax}`" in why for d in directives.for_gate(1))
    assert "exclude" not in why  # only this gate's
    why3 = refusal(3, "the runs look noisy", parameters=None)
    assert why3 is not None and "`rejudge: WHY`" in why3


def test_the_claude_author_reads_prose_at_gates_1_and_2_only():
    assert refusal(1, "tighten the comments", author=True) is None
    assert refusal(2, "word A1 more carefully", author=True) is None
    assert refusal(3, "the runs look noisy", author=True) is not None  # stages 4-5 have no author step


@pytest.mark.parametrize(
    ("gate", "reason", "needle"),
    [
        (1, "param loadThreshold: 40", "`param loadThreshold` is not a parameter of the plugin"),
        (1, "scorers: fast-lane:1", "unknown scorer(s) fast-lane"),
        (2, "margin: 7", "margin must be a fraction"),
        (2, "guard: <b>vibes</b>", "&lt;b>vibes"),  # the person's line is quoted escaped
    ],
)
def test_a_directive_that_cannot_apply_is_answered_before_anything_runs(gate, reason, needle):
    why = refusal(gate, reason, parameters=PARAMETERS)
    assert why is not None and needle in why and "nothing was recorded" in why
    assert all(f"`{d.syntax}`" in why for d in directives.for_gate(gate))


@pytest.mark.parametrize(
    ("reason", "needle"),
    [
        (
            "param loadHighThreshold: -5",
            "`param loadHighThreshold: -5` is out of range: loadHighThreshold must be >= 0",
        ),
        ("param kvUtilizationThreshold: 1.5", "kvUtilizationThreshold is a 0-1 fraction, got 1.5"),
    ],
)
def test_a_param_value_the_plugins_validate_refuses_is_answered_with_its_range(reason, needle):
    """The checks are the plugin's own (``ParamSpec.checks`` of the bundled program), not a copy of them."""
    checks = parameter_checks(PromotionRequest.load(REQUEST), load_dictionary())
    why = refusal(1, reason, parameters=PARAMETERS, checks=checks)
    assert why is not None and needle in why and "Validate()" in why and "nothing was recorded" in why
    assert (
        refusal(1, "param loadHighThreshold: 0\nparam kvUtilizationThreshold: 1", parameters=PARAMETERS, checks=checks)
        is None
    )
