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

from bot.forge.state_file import StateError
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


def test_a_persons_save_the_bot_saved_over_while_reading_it_is_not_vouched_for(fake_github):
    """The race ``trusted`` closes: REST gives the state a person saved, the bot's other run saves over it before
    GraphQL is asked, and GraphQL then names the bot. The state REST gave is the person's: not acted on."""

    from bot.github.client import GitHub
    from bot.github.state import ForeignEdit, trusted

    repo = "acme/bot-home"
    fake_github.add_repo(repo)
    fake_github.add_user("wendy", role="write")
    number = fake_github.create_issue(repo, "[promotion] x", "body", "wendy")
    bot = GitHub(fake_github.bot_token, repo, api_url=fake_github.api_url, throttle=False, sleep=lambda s: None)
    marker = STATUS.removeprefix("<!-- ").removesuffix(" -->")
    mine = bot.upsert_comment(number, marker, "the bot's state")
    wendy = fake_github.pygithub("wendy")
    wendy.get_repo(repo).get_issue(number).get_comment(mine.id).edit(f"{STATUS}\nwendy's forged state")
    read = GitHub(fake_github.bot_token, repo, api_url=fake_github.api_url, throttle=False)
    forged = read.bot_comment(number, marker)  # what REST gave this run: wendy's save
    assert "forged" in forged.body
    with pytest.raises(ForeignEdit):
        trusted(read, number, forged)  # as GraphQL has it now: wendy saved it last
    bot.upsert_comment(number, marker, "another run's state")  # the bot saves again before this run asks GraphQL
    again = GitHub(fake_github.bot_token, repo, api_url=fake_github.api_url, throttle=False)
    with pytest.raises(StateError, match="the status comment changed while the bot read it") as exc:
        trusted(again, number, forged)
    assert not isinstance(exc.value, ForeignEdit)


NEWER = "<!-- promotion-bot:notice:newer-state -->"


def test_a_state_a_newer_bot_saved_is_said_on_the_issue_once_and_nothing_is_changed(sim):
    """A rollback of the workflow's bot: the state the newer bot saved is not damaged, so it is not called so,
    no one is told to delete it, and the person acting is not left unanswered (a notice, once)."""
    import base64
    import json
    import zlib

    from bot.forge import markers
    from bot.github.state import _STATE, decode_state

    number = sim.fake.create_issue(REPO, "newer state", example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    c = _status(sim, number)
    raw = json.loads(decode_state(c.body).model_dump_json()) | {"schema_version": 2, "gate_votes": []}
    data = base64.b64encode(zlib.compress(json.dumps(raw).encode(), 9)).decode()
    body = _STATE.sub(lambda _: f"<!-- {markers.STATE} {data} -->", c.body)
    sim.fake.state.update_comment(c, body, sim.fake.BOT)  # saved by the bot, as a newer version of it

    _comment(sim, number, "maria", "/approve")
    _label(sim, number, "gate-1-approved", "maria")
    [notice] = [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith(NEWER)]
    assert "saved by a newer promotion bot (fields: schema_version 2, gate_votes)" in notice
    assert "run that version or newer" in notice and "do not delete" in notice and "is damaged" not in notice
    assert _status(sim, number).body == body  # nothing saved over it
    assert sim.runs[-1].result.action.startswith("refused")
