"""Two open promotions of the same plugin: each is told about the other, and gate 2 says so before the GPUs run.

ghflow2-findings #3: the researcher and rhea filed the bundled example at the same moment (the same `Plugin name`);
both ran to two PRs adding the same package and EndpointPickerConfig file, gate 2 approved the benchmark twice,
and neither issue nor PR mentioned the other promotion.
"""

from __future__ import annotations

import pytest

from bot.events.same_plugin import same_plugin, where
from bot.github.client import IssueInfo
from tests.github.actions_sim import REPO
from tests.github.forms import example_body, example_values, render_form, template
from tests.github.test_github_flow import TITLE, _label, comment_with, state_of

NOTICE = "<!-- promotion-bot:notice:same-plugin -->"


def _issue(number: int, plugin: str, labels=("promotion",), title: str = TITLE) -> IssueInfo:
    body = render_form({**example_values(), "plugin_name": plugin}, {"baselines": [0, 1], "consent": [0]})
    return IssueInfo(number=number, title=title, body=body, author="x", labels=frozenset(labels), state="open")


def test_another_open_promotion_of_the_plugin_or_its_go_package_is_found_with_where_it_stands():
    issues = [
        _issue(1, "evolved-adaptive-scorer", ("promotion", "gate-2-pending")),
        _issue(2, "evolved-adaptive-scorer"),  # this one
        _issue(3, "evolvedadaptive-scorer", ("promotion", "stage-3-hypothesize")),  # the same Go package
        _issue(4, "another-scorer", ("promotion", "gate-1-pending")),
        _issue(5, "evolved-adaptive-scorer", ("promotion", "promotion-rejected")),  # its PR is closed
        _issue(
            6, "", ("promotion", "promotion-failed", "stage-5-run-and-validate"), "[promotion] Evolved adaptive scorer"
        ),
        _issue(7, "evolved-adaptive-scorer", ()),  # not a promotion
    ]
    found = same_plugin(issues, 2, "evolved-adaptive-scorer", template())
    assert [(o.number, o.where) for o in found] == [
        (1, "at gate 2"),
        (3, "at stage 3 (hypothesize)"),
        (6, "failed at stage 5"),  # no Plugin name: the name comes from the title, as its request's does
    ]
    assert where({"promotion"}) == "not started yet" and where({"promotion", "needs-info"}).startswith("waiting")


def _file(sim, login: str, title: str) -> int:
    number = sim.fake.create_issue(REPO, title, example_body(), login, labels=("promotion",))
    sim.event("issues", "opened", number, sender=login)
    return number


def _notice(sim, number) -> str | None:
    found = [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith(NOTICE)]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.slow
def test_two_promotions_of_one_plugin_are_told_of_each_other_and_gate_2_says_so_then_both_reach_gate_3(sim):
    sim.fake.add_user("rhea", role="read")
    first = _file(sim, "researcher", TITLE)
    assert state_of(sim, first).open_gate == 1 and _notice(sim, first) is None  # nobody else promotes it
    second = _file(sim, "rhea", TITLE + " (second run)")
    assert state_of(sim, second).open_gate == 1
    notice = _notice(sim, second)
    assert notice is not None and f"#{first} already promotes `evolved-adaptive-scorer` (open, at gate 1)" in notice
    assert "close one, or close this one and file it again under another Plugin name" in notice
    # and the first hears of the second now, not only from its gate-2 review
    [told] = [c.body for c in sim.fake.comments(REPO, first) if c.body.startswith(f"{NOTICE[:-4]}-{second} -->")]
    assert f"#{second}, filed after this one, also promotes `evolved-adaptive-scorer`" in told, told
    assert _notice(sim, first) is None  # its own start found no other promotion

    for number in (first, second):
        _label(sim, number, "gate-1-approved", "maria")
    for number, other in ((first, second), (second, first)):
        state = state_of(sim, number)
        assert state.open_gate == 2, state.status
        assert len(state.reviews[2]) == 1  # no author round for what only a person settles
        [finding] = [f for f in state.reviews[2][-1].findings if f.check == "G2.same-plugin"]
        assert finding.severity.value == "IMPORTANT"
        assert f"#{other} already promotes `evolved-adaptive-scorer` (open, at gate" in finding.message
        assert "GPU time" in finding.message
        review = comment_with(sim, number, "<!-- promotion-bot:review-gate-2")
        assert "G2.same-plugin" in review and f"#{other} already promotes" in review

    for number in (first, second):  # a person may still run both: the sim's GPU stand-in reports for each
        _label(sim, number, "gate-2-approved", "maria")
    for number in (first, second):
        assert state_of(sim, number).open_gate == 3, state_of(sim, number).failure
