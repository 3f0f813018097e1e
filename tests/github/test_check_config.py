"""`promote check-config`: what a fork still needs for the bot, read through the API, each with its fix."""

from __future__ import annotations

import pytest

from bot.github.client import GitHub
from bot.github.setup_check import check_repository
from tests.github.actions_sim import seed_fork


def _client(fake, repo):
    return GitHub(fake.token_for("maria"), repo, api_url=fake.api_url, throttle=False)


def test_a_bare_fork_is_told_every_missing_piece(fake_github):
    fake_github.add_repo("acme/bare")
    fake_github.add_user("maria", role="admin")
    problems = "\n".join(check_repository("acme/bare", client=_client(fake_github, "acme/bare")))
    assert ".github/workflows/promotion.yml is missing" in problems
    assert ".github/workflows/benchmark.yml is missing" in problems
    assert ".github/ISSUE_TEMPLATE/promotion.yml is missing" in problems
    assert ".github/promotion-bot.yml is missing: every default applies" in problems


@pytest.mark.slow
def test_a_set_up_fork_reports_only_config_errors_and_labels(fake_github, tmp_path):
    seed = seed_fork(tmp_path)
    (seed / ".github" / "promotion-bot.yml").write_text("approvers:\n  roles: [owner]\nmax_round: 2\n")
    fake_github.add_repo("acme/fork", seed_dir=seed)
    fake_github.add_user("maria", role="admin")
    problems = check_repository("acme/fork", client=_client(fake_github, "acme/fork"))
    text = "\n".join(problems)
    assert "approvers.roles.0:" in text and "max_round: unknown setting" in text
    assert "workflows/promotion.yml is missing" not in text and "ISSUE_TEMPLATE" not in text
    assert "bot label(s) do not exist yet" in text


def test_without_a_token_it_says_how_to_get_one():
    assert check_repository("acme/x", environ={})[0].startswith("no token: set GH_TOKEN")
