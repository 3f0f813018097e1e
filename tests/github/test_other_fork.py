"""`fork:` naming another repository is not supported yet (install #3): the bot pushed the branch there, then
asked GitHub for the PR in its own repository with an unqualified head (422), and the GPU benchmark would have
checked out a branch its repository does not have. Refused up front instead, by the bot and by check-config."""

from __future__ import annotations

import pytest

from bot.github.client import GitHub
from bot.github.config import ConfigError, parse_config
from bot.github.setup_check import check_repository
from tests.github.actions_sim import REPO, seed_fork
from tests.github.forms import example_body
from tests.github.test_github_flow import TITLE

OTHER = "acme/router2"


def test_a_fork_elsewhere_is_refused_naming_the_setting_and_this_one_is_accepted():
    with pytest.raises(ConfigError) as exc:
        parse_config(f"fork: {OTHER}\n", "acme/llm-d-router")
    assert f"fork: {OTHER} is not supported yet" in str(exc.value) and "remove `fork:`" in str(exc.value)
    assert parse_config("fork: ACME/llm-d-router\n", "acme/llm-d-router").fork == "ACME/llm-d-router"
    assert parse_config(f"fork: {OTHER}\n").fork == OTHER  # without the workflow's repository: shape only


@pytest.mark.slow
def test_the_bot_refuses_a_fork_elsewhere_before_pushing_anything(sim):
    sim.fake.add_repo(OTHER, seed_dir=seed_fork(sim.root / "other"))
    (sim.root / "config.yml").write_text(f"fork: {OTHER}\nblis_repository: acme/blis\nallow_sample_data: true\n")
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    with pytest.raises(ConfigError, match=f"fork: {OTHER} is not supported yet"):
        sim.event("issues", "opened", number, sender="researcher")
    assert not sim.fake.pulls(REPO) and not sim.fake.pulls(OTHER)
    assert sim.fake.branch_sha(OTHER, f"promotion/{number}-evolved-adaptive-scorer") is None


@pytest.mark.slow
def test_check_config_refuses_a_fork_elsewhere(fake_github, tmp_path):
    seed = seed_fork(tmp_path)
    (seed / ".github" / "promotion-bot.yml").write_text(f"blis_repository: acme/blis\nfork: {OTHER}\n")
    fake_github.add_repo("acme/fork", seed_dir=seed)
    fake_github.add_user("maria", role="admin")
    client = GitHub(fake_github.token_for("maria"), "acme/fork", api_url=fake_github.api_url, throttle=False)
    report = check_repository("acme/fork", client=client)
    assert not report.ready
    assert any(f"fork: {OTHER} is not supported yet" in p for p in report.problems), report.problems
