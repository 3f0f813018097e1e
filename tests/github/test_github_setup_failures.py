"""A fork set up almost right, on the fake GitHub: each missing piece of setup fails the promotion with the GitHub
setting that fixes it, not a CLI flag or GitHub's bare answer (found installing the bot from zero, install #5, #7)."""

from __future__ import annotations

import pytest

from tests.github.actions_sim import REPO
from tests.github.forms import example_body
from tests.github.test_github_flow import TITLE

pytestmark = pytest.mark.slow

STATUS = "<!-- promotion-bot:status -->"


def _status(sim, number) -> str:
    [body] = [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith(STATUS)]
    return body


def test_claude_configured_without_its_key_fails_at_once_naming_the_secret_and_the_offline_setting(sim):
    """install #5: no stage 1, no sandbox round trip, and no `--llm offline` (there is no CLI on GitHub)."""
    (sim.root / "config.yml").write_text(
        "blis_repository: acme/blis\nallow_sample_data: true\nllm:\n  engine: anthropic\n"
    )
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    assert len(sim.runs) == 1 and not any(r.sandbox_ran for r in sim.runs), [r.event for r in sim.runs]
    status = _status(sim, number)
    line = next(x for x in status.splitlines() if x.startswith("**Status:**"))
    assert "stage 1 (analyze) failed" in line and "llm.engine: anthropic" in line, line
    assert "repository secret `ANTHROPIC_API_KEY`" in status and "`llm.engine: offline`" in status, status
    assert "--llm" not in status


def test_a_pull_request_refused_by_the_repository_setting_names_the_setting(sim):
    """install #7: GitHub's 403 when Actions may not create pull requests; a `/retry` alone fails the same way."""
    sim.fake.fail(
        "POST",
        f"/repos/{REPO}/pulls",
        status=403,
        times=5,
        body={
            "message": "GitHub Actions is not permitted to create or approve pull requests.",
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "403",
        },
    )
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    status = _status(sim, number)
    assert "### Stage 2 failed" in status, status
    fix = next(x for x in status.splitlines() if x.startswith("Fix:"))
    assert "Workflow permissions" in fix and "Allow GitHub Actions to create and approve pull requests" in fix, fix
    assert "Then comment `/retry` to run stage 2 again." in status
