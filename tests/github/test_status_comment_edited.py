"""A status comment a person edited: the bot acts only on a state it saved itself (red team 4, item 1).

Anyone with write access may edit the bot's status comment, and its hidden state holds the gates' decisions and
who made them. A write collaborator outside `approvers.roles` decoded it, added maria's approval of gate 1 and
saved it; the next comment passed gate 1 "approved by maria via /approve". The bot now asks GitHub who saved
the comment last and refuses a state a person saved: nothing runs, nothing is decided, and one notice says who
edited it and how to start over.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.github.actions_sim import REPO
from tests.github.forms import example_body
from tests.github.test_github_flow import _as, _comment, _label

pytestmark = pytest.mark.slow

STATUS = "<!-- promotion-bot:status -->"
NOTICE = "<!-- promotion-bot:notice:foreign-edit -->"


def _status(sim, number):
    [c] = [c for c in sim.fake.comments(REPO, number) if c.body.startswith(STATUS)]
    return c


def _notices(sim, number) -> list[str]:
    return [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith(NOTICE)]


def _forge_approval(sim, number, login: str) -> str:
    """What `login` does in the UI: decode the state, add maria's approval of gate 1, save the comment."""
    from bot import pipeline
    from bot.github.state import decode_state, encode_state
    from bot.model import Decision

    c = _status(sim, number)
    state = decode_state(c.body)
    forged = pipeline.decide(state, 1, Decision.APPROVE, actor="maria", now=datetime.now(UTC))
    body = c.body.replace(encode_state(state), encode_state(forged))
    assert body != c.body
    _as(sim, login).get_issue(number).get_comment(c.id).edit(body)
    return body


def test_a_state_a_write_collaborator_saved_passes_no_gate_and_an_admin_can_start_over(sim):
    from bot.github.state import decode_state

    (sim.root / "config.yml").write_text(
        "blis_repository: acme/blis\nallow_sample_data: true\napprovers:\n  roles: [admin, maintain]\n"
    )
    sim.fake.add_user("wendy", role="write")
    number = sim.fake.create_issue(REPO, "forged gate", example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    assert decode_state(_status(sim, number).body).open_gate == 1
    _label(sim, number, "gate-1-approved", "wendy")  # refused: wendy is not an approver
    assert decode_state(_status(sim, number).body).decisions == []

    forged = _forge_approval(sim, number, "wendy")
    _comment(sim, number, "wendy", "any comment")  # any event would heal: what is due would run
    assert _status(sim, number).body == forged  # the bot saved nothing over it, ran nothing on it
    [notice] = _notices(sim, number)
    assert "last edited by @wendy, not by the bot" in notice
    assert "acts only on a state it saved itself" in notice
    assert "an admin deletes the status comment and comments `/retry`" in notice

    _comment(sim, number, "maria", "/approve")  # nothing is decided on it either, and the notice is not repeated
    sim.replay(sim.runs[-1])
    assert _status(sim, number).body == forged
    assert len(_notices(sim, number)) == 1
    assert not [c for c in sim.fake.comments(REPO, number) if "`/approve` was" in c.body]

    [status] = [c for c in _as(sim, "maria").get_issue(number).get_comments() if c.body.startswith(STATUS)]
    status.delete()  # the way out the notice names
    _comment(sim, number, "maria", "/retry")
    state = decode_state(_status(sim, number).body)
    assert state.open_gate == 1 and state.decisions == []
    _comment(sim, number, "researcher", "a comment after the bot's own saves")  # its own edits are trusted
    assert decode_state(_status(sim, number).body).open_gate == 1
    assert not sim.runs[-1].result.action.startswith("refused")
