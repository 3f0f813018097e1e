"""The `fake_github` fixture (a started fake GitHub whose teardown fails the test on any contract violation) and the
`sim` fixture (the Actions simulator around it, with the standard repository and people)."""

from __future__ import annotations

import pytest

from tests.github.fake_github import running_fake


@pytest.fixture
def fake_github(tmp_path):
    """A fake GitHub on 127.0.0.1 (REST at ``.base_url``, git at ``.server_url``); see fake_github.py."""
    with running_fake(tmp_path / "fake-github") as fake:
        yield fake


@pytest.fixture
def sim(fake_github, tmp_path):
    """The Actions simulator running the bot's workflows against ``fake_github`` (``actions_sim.standard_sim``)."""
    from tests.github.actions_sim import standard_sim

    return standard_sim(fake_github, tmp_path)


@pytest.fixture(autouse=True)
def _every_saved_state_passes_its_gates(monkeypatch):
    """Each state the bot saves in a status comment here keeps the gates' invariant (``bot.model.gates``): a gate
    anything stands past has an approval that still stands. The GitHub home refuses a loaded state that breaks it
    (a forged one), so a move that saved one would stop its own promotion at the next event; every flow test
    checks it at each save."""
    from bot.github.state import GitHubStateStore
    from bot.model.gates import unapproved

    save = GitHubStateStore.save

    def checked(self, state, status):
        assert unapproved(state) == [], f"the bot saved a state past a gate with no approval: {unapproved(state)}"
        return save(self, state, status)

    monkeypatch.setattr(GitHubStateStore, "save", checked)
