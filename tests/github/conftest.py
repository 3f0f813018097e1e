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
