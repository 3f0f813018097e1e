"""The routing table: (event, action) -> one handler each; anything else is logged and ignored."""

from __future__ import annotations

import json

import pytest

from bot.events import ROUTES, PayloadError, handle, route
from bot.events.env import EnvironmentError_, EventEnv


def test_every_route_names_a_handler_that_exists():
    for (event, action), target in ROUTES.items():
        assert callable(route(event, action)), target


def test_unknown_events_and_actions_are_ignored(tmp_path, capsys):
    for name, action in (("push", None), ("issues", "pinned"), ("issue_comment", "deleted")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"action": action} if action else {}))
        env = EventEnv.from_environ(
            {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(path), "GITHUB_REPOSITORY": "a/b", "GITHUB_TOKEN": "t"}
        )
        assert handle(env).action == "ignored"
    assert "ignoring push" in capsys.readouterr().err


def test_a_payload_that_is_not_githubs_shape_is_refused_with_one_line(tmp_path):
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"action": "opened", "issue": {"number": "not a number"}}))
    env = EventEnv.from_environ(
        {"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(path), "GITHUB_REPOSITORY": "a/b", "GITHUB_TOKEN": "t"}
    )
    with pytest.raises(PayloadError, match="does not match GitHub's webhook schema"):
        handle(env)


def test_outside_actions_the_handler_says_what_is_missing():
    with pytest.raises(EnvironmentError_, match="GITHUB_EVENT_NAME is not set"):
        EventEnv.from_environ({})
