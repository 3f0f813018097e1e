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
    report = check_repository("acme/bare", client=_client(fake_github, "acme/bare"))
    problems = "\n".join(report.problems)
    assert ".github/workflows/promotion.yml is missing" in problems
    assert ".github/workflows/benchmark.yml is missing" in problems
    assert ".github/ISSUE_TEMPLATE/promotion.yml is missing" in problems
    # every key has a default and the bot creates its labels: worth saying, not a reason to fail
    notes = "\n".join(report.notes)
    assert ".github/promotion-bot.yml is missing: every default applies" in notes and "label(s)" in notes
    assert "Allow GitHub Actions to create and approve pull requests" in notes


@pytest.mark.slow
def test_a_set_up_fork_reports_only_config_errors_and_labels(fake_github, tmp_path):
    seed = seed_fork(tmp_path)
    (seed / ".github" / "promotion-bot.yml").write_text("approvers:\n  roles: [owner]\nmax_round: 2\n")
    fake_github.add_repo("acme/fork", seed_dir=seed)
    fake_github.add_user("maria", role="admin")
    report = check_repository("acme/fork", client=_client(fake_github, "acme/fork"))
    text = "\n".join(report.problems)
    assert "approvers.roles.0:" in text and "max_round: unknown setting" in text
    assert "workflows/promotion.yml is missing" not in text and "ISSUE_TEMPLATE" not in text
    assert "bot label(s) do not exist yet" in "\n".join(report.notes)
    (seed / ".github" / "promotion-bot.yml").write_text("blis_repository: acme/blis\n")
    fake_github.add_repo("acme/fork2", seed_dir=seed)
    assert check_repository("acme/fork2", client=_client(fake_github, "acme/fork2")).ready
    # install #5: Claude without its secret fails every promotion; the secret is not readable, so it is said
    (seed / ".github" / "promotion-bot.yml").write_text("blis_repository: acme/blis\nllm:\n  engine: anthropic\n")
    fake_github.add_repo("acme/fork3", seed_dir=seed)
    notes = "\n".join(check_repository("acme/fork3", client=_client(fake_github, "acme/fork3")).notes)
    assert "repository secret `ANTHROPIC_API_KEY`" in notes and "`llm.engine: offline`" in notes, notes
    # install #6: stage 5 needs a self-hosted runner with the configured labels (listing runners needs admin)
    assert "self-hosted runner with the labels [self-hosted, gpu]" in notes, notes
    (seed / ".github" / "promotion-bot.yml").write_text("gpu:\n  runner_labels: [self-hosted, h100]\n")
    fake_github.add_repo("acme/fork4", seed_dir=seed)
    notes = "\n".join(check_repository("acme/fork4", client=_client(fake_github, "acme/fork4")).notes)
    assert "labels [self-hosted, h100] (`gpu.runner_labels`" in notes, notes


def test_without_a_token_it_says_how_to_get_one():
    assert check_repository("acme/x", environ={}).problems[0].startswith("no token: set GH_TOKEN")


def test_the_setup_pages_configuration_is_valid_and_names_every_setting():
    """docs/github-setup.md's example is what maintainers copy: it must parse, and no setting may go unmentioned."""
    import re

    from bot import PROJECT_ROOT
    from bot.github.config import BotConfig, parse_config

    page = (PROJECT_ROOT / "docs" / "github-setup.md").read_text()
    example = re.search(r"\(every key optional.*?```yaml\n(.*?)```", page, re.S).group(1)
    parse_config(example)

    def names(model, prefix=""):
        for name, info in model.model_fields.items():
            yield prefix + name
            sub = info.annotation
            for arg in getattr(sub, "__args__", ()) or (sub,):
                if isinstance(arg, type) and hasattr(arg, "model_fields") and name != "cluster":
                    yield from names(arg, prefix + name + ".")

    keys = {line.split(":")[0].strip() for line in example.splitlines() if re.match(r"\s*[a-z_]+:", line)}
    missing = [n for n in names(BotConfig) if n.split(".")[-1] not in keys]
    assert not missing, f"settings the setup page does not show: {missing}"


def test_a_large_gpu_cap_is_dispatched_as_a_plain_number():
    """Found in review: ':g' wrote 1e+06, which benchmark.yml's number check refuses."""
    import re

    from bot.github.config import GPUSettings

    for cap, text in ((1e6, "1000000"), (2.5, "2.5"), (4000, "4000")):
        sent = GPUSettings(budget_gpu_minutes=cap).dispatch_inputs()["budget_gpu_minutes"]
        assert sent == text and re.fullmatch(r"[0-9]+(\.[0-9]+)?", sent)


def _seeded(fake, tmp_path, name, config=None):
    seed = seed_fork(tmp_path / name)
    if config is not None:
        (seed / ".github" / "promotion-bot.yml").write_text(config)
    fake.add_repo(f"acme/{name}", seed_dir=seed)
    fake.add_user("maria", role="admin")
    return check_repository(f"acme/{name}", client=_client(fake, f"acme/{name}"))


@pytest.mark.slow
def test_a_disabled_workflow_is_a_problem_naming_its_state_and_the_fix(fake_github, tmp_path):
    """Admin finding 3: a fork's workflows start disabled (``disabled_fork``); the listing check-config already
    reads says so, and it passed the fork while no issue would ever be answered."""
    seed = seed_fork(tmp_path)
    fake_github.add_repo("acme/fork", seed_dir=seed)
    fake_github.add_user("maria", role="admin")
    fake_github.set_workflow_state("acme/fork", ".github/workflows/promotion.yml", "disabled_fork")
    fake_github.set_workflow_state("acme/fork", ".github/workflows/benchmark.yml", "disabled_manually")
    report = check_repository("acme/fork", client=_client(fake_github, "acme/fork"))
    assert not report.ready
    text = "\n".join(report.problems)
    assert "promotion.yml is disabled (disabled_fork)" in text and "enable them in the fork's Actions tab" in text
    assert "benchmark.yml is disabled (disabled_manually)" in text and "press Enable workflow" in text
    assert len(report.problems) == 2, report.problems


@pytest.mark.slow
def test_a_token_without_actions_read_is_one_problem_and_the_other_checks_run(fake_github, tmp_path):
    """Admin finding 8: a fine-grained token without Actions: read stopped check-config at its first 403 (exit 2,
    no permission named); now it is one problem among the rest."""
    fake_github.add_repo("acme/fork", seed_dir=seed_fork(tmp_path))
    fake_github.add_user("maria", role="admin")
    fake_github.git_commit("acme/fork", "main", {".github/promotion-bot.yml": "max_round: 2\n"}, "config")
    fake_github.fail(
        "GET",
        "/repos/acme/fork/actions/workflows",
        status=403,
        times=5,
        body={"message": "Resource not accessible by personal access token"},
    )
    report = check_repository("acme/fork", client=_client(fake_github, "acme/fork"))
    text = "\n".join(report.problems)
    assert "the token cannot read the workflows" in text and "needs Actions: read" in text, text
    assert "max_round: unknown setting" in text  # the configuration was still checked
    assert len(report.problems) == 2, report.problems


def test_check_config_exits_1_naming_the_permission_when_actions_cannot_be_read(fake_github, monkeypatch, capsys):
    from bot.cli import main

    fake_github.add_repo("acme/bare")
    fake_github.add_user("maria", role="admin")
    fake_github.fail("GET", "/repos/acme/bare/actions/workflows", status=403, times=5, body={"message": "nope"})
    monkeypatch.setenv("GH_TOKEN", fake_github.token_for("maria"))
    monkeypatch.setenv("GITHUB_API_URL", fake_github.api_url)
    assert main(["check-config", "--repo", "acme/bare"]) == 1
    out = capsys.readouterr().out
    assert "needs Actions: read" in out and "ISSUE_TEMPLATE/promotion.yml is missing" in out, out


@pytest.mark.slow
def test_workflow_names_are_not_settings_and_another_name_is_refused_with_the_fix(fake_github, tmp_path):
    """Admin finding 4: `workflow: bot.yml` passed check-config, then the dispatch failed with 404 and the issue
    showed "running" for good (benchmark.yml dispatches promotion.yml by name, so a rename never worked)."""
    from bot.github.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as exc:
        parse_config("workflow: bot.yml\nbenchmark_workflow: 'x y'\n")
    first, second = exc.value.problems
    assert first.startswith("workflow: bot.yml cannot be set: the bot's workflow files must be named ")
    assert "name the file promotion.yml and remove `workflow:`" in first
    assert second.startswith("benchmark_workflow: x y cannot be set")
    assert "name the file benchmark.yml and remove `benchmark_workflow:`" in second
    # the old example's values still parse (they are what the bot uses), and other errors are listed with these
    config = parse_config("workflow: promotion.yml\nbenchmark_workflow: benchmark.yml\n")
    assert (config.workflow, config.benchmark_workflow) == ("promotion.yml", "benchmark.yml")
    with pytest.raises(ConfigError) as exc:
        parse_config("workflow: bot.yml\nmax_round: 2\n")
    assert len(exc.value.problems) == 2
    report = _seeded(fake_github, tmp_path, "renamed", "workflow: bot.yml\n")
    assert any("workflow: bot.yml cannot be set" in p for p in report.problems), report.problems


@pytest.mark.slow
def test_an_invalid_configuration_is_not_described_with_defaults_the_admin_did_not_write(fake_github, tmp_path):
    """Admin finding 9: `runner_labels: self-hosted` (a string) was reported invalid and, in the same output,
    as a runner with the labels [self-hosted, gpu]."""
    report = _seeded(fake_github, tmp_path, "labels", "gpu:\n  runner_labels: self-hosted\n")
    assert any("gpu.runner_labels" in p for p in report.problems), report.problems
    assert not any("self-hosted runner with the labels" in n for n in report.notes), report.notes


def _feedback_notes(fake_github, blis: str) -> str:
    fake_github.add_repo("acme/fork")
    fake_github.add_user("maria", role="admin")
    fake_github.git_commit("acme/fork", "main", {".github/promotion-bot.yml": f"blis_repository: {blis}\n"}, "config")
    return "\n".join(check_repository("acme/fork", client=_client(fake_github, "acme/fork")).notes)


def test_feedback_in_another_repository_of_the_same_owner_is_noted_with_the_app_token_it_needs(fake_github):
    """admin-findings 2: check-config said "set up" and stage 6 then failed on GITHUB_TOKEN's 403."""
    notes = _feedback_notes(fake_github, "ACME/blis")  # GitHub's owners are case-insensitive
    assert "blis_repository ACME/blis is another repository" in notes
    assert "`app-token:` of a GitHub App installed on ACME, which owns both repositories, with Issues: write" in notes


def test_feedback_under_another_owner_is_filed_by_hand_not_with_an_app_token(fake_github):
    """verify2 item 4: an App "installed on inference-sim" was advised for fork acme/fork, but an installation
    token reaches one owner, so that token would break every other write of the bot in the fork."""
    notes = _feedback_notes(fake_github, "inference-sim/inference-sim")
    assert "installed on inference-sim" not in notes
    assert "blis_repository inference-sim/inference-sim has another owner than acme/fork" in notes
    assert "no single GitHub App token can write both" in notes
    assert "feedback issues' text in its branch (docs/promotion/<name>/feedback/<id>.md)" in notes
    assert "file them in inference-sim/inference-sim by hand" in notes
    assert "move the fork under inference-sim" in notes


def test_a_repository_with_more_than_a_page_of_workflows_is_ready(fake_github, tmp_path):
    """GitHub lists workflows 30 to a page: the bot's files after another 30 CI workflows are found (red team 8,
    item 5), and so is a disabled one among them."""
    seed = seed_fork(tmp_path)
    workflows = seed / ".github" / "workflows"
    for i in range(30):  # an upstream repository's own CI, sorted before benchmark.yml and promotion.yml
        (workflows / f"a-ci-{i:02d}.yml").write_text("name: ci\non: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n")
    (seed / ".github" / "promotion-bot.yml").write_text("blis_repository: acme/blis\n")
    fake_github.add_repo("acme/fork", seed_dir=seed)
    fake_github.add_user("maria", role="admin")
    client = GitHub(fake_github.token_for("maria"), "acme/fork", api_url=fake_github.api_url, throttle=False)
    client.gh.per_page = 30  # GitHub's default page size (the client asks for 100; the fake pages either way)
    report = check_repository("acme/fork", client=client)
    assert report.ready, report.problems
    fake_github.set_workflow_state("acme/fork", ".github/workflows/promotion.yml", "disabled_manually")
    report = check_repository("acme/fork", client=client)
    assert any("promotion.yml is disabled" in p for p in report.problems), report.problems
