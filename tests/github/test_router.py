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


def test_an_empty_github_token_names_the_actions_input_and_how_to_set_it(tmp_path):
    """install #4: inside a job the token comes from the action's `github-token` input (the job's token unless a
    step sets it empty); the message names that input, not "runs inside a GitHub Actions job"."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    from bot import PROJECT_ROOT

    job = {"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(tmp_path / "e.json"), "GITHUB_REPOSITORY": "a/b"}
    with pytest.raises(EnvironmentError_) as exc:
        EventEnv.from_environ({**job, "GITHUB_TOKEN": " "})
    said = str(exc.value)
    assert "`github-token` input is empty" in said and "github-token: ${{ github.token }}" in said, said
    assert "runs inside" not in said
    action = yaml.safe_load((PROJECT_ROOT / "action.yml").read_text())
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    # each command names itself when it runs outside a job
    promote = Path(sys.executable).parent / "promote"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    proc = subprocess.run([str(promote), "dispatch-next"], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "`promote dispatch-next` runs inside" in proc.stderr, proc.stderr
