"""The `fake_github` fixture: a started fake GitHub whose teardown fails the test on any contract violation."""

from __future__ import annotations

import pytest

from tests.github.fake_github import FakeGitHub


@pytest.fixture
def fake_github(tmp_path):
    """A fake GitHub on 127.0.0.1 (REST at ``.base_url``, git at ``.server_url``); see fake_github.py."""
    fake = FakeGitHub(tmp_path / "fake-github").start()
    try:
        yield fake
    finally:
        fake.stop()
    assert not fake.violations, "requests that GitHub's REST description does not allow:\n" + "\n".join(fake.violations)
    assert not fake.response_defects, "the fake answered outside GitHub's response schemas:\n" + "\n".join(
        fake.response_defects
    )
