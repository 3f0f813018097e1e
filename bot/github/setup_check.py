"""`promote check-config`: is a repository set up for the bot? Every missing piece with its fix.

Reads through the API with the token in GH_TOKEN or GITHUB_TOKEN (never writes):
the workflows, the issue form, the configuration file (validated field by
field), the labels, and what the token may do. It checks this install of the bot
too: one without its data (``bot.home``) cannot take a promotion, whatever the
repository holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bot.github.client import GitHub, GitHubError
from bot.github.config import BENCHMARK_WORKFLOW, CONFIG_PATH, WORKFLOW, ConfigError, parse_config
from bot.github.labels import Label

WORKFLOWS = (WORKFLOW, BENCHMARK_WORKFLOW)
FORM = ".github/ISSUE_TEMPLATE/promotion.yml"
#: The one repository setting the bot needs that GitHub leaves off.
PR_SETTING = (
    "Settings → Actions → General → Workflow permissions → 'Allow GitHub Actions to create and approve pull requests'"
)
#: What the API does not show a token without admin rights, said every time rather than left to be found out.
UNCHECKED = f"not checked through the API: {PR_SETTING} must be on, or the bot cannot open its draft PR"
#: GitHub's answer when that setting is off (a 403 on creating the PR).
_PR_REFUSED = "not permitted to create or approve pull requests"


def fix_for(error: str) -> str:
    """The repository setting that fixes a GitHub refusal, when it is one ("" otherwise): a `/retry` alone
    would fail the same way."""
    if _PR_REFUSED in error:
        return f"a repository admin turns on {PR_SETTING} (an organization may have to allow it there first)"
    return ""


#: `llm.engine: anthropic` without the secret fails every promotion at its first stage; secrets are not readable.
NO_KEY_UNCHECKED = (
    f"{CONFIG_PATH}: `llm.engine: anthropic` needs the repository secret `ANTHROPIC_API_KEY` (Settings → Secrets "
    "and variables → Actions; not checked through the API): without it every promotion fails at stage 1; "
    "`llm.engine: offline` runs the deterministic path without Claude"
)


def runners_unchecked(labels: list[str]) -> str:
    """Stage 5's GPU runners: listing a repository's runners takes admin rights, and without one that has the
    labels the benchmark run sits queued until GitHub ends it, with the promotion waiting on it."""
    named = ", ".join(labels)
    return (
        f"not checked through the API: stage 5 runs benchmark.yml's benchmark job on a self-hosted runner with the "
        f"labels [{named}] (`gpu.runner_labels` in {CONFIG_PATH}); until one is registered, the benchmark run stays "
        "queued and GitHub ends it after 24 hours"
    )


def workflow_problem(name: str, state: str | None) -> str | None:
    """What is wrong with the bot's workflow ``name`` in the listing's ``state`` (None: not listed), or None when
    it is there and active. A disabled workflow answers no event: the researcher's issue would never get a reply."""
    path = f".github/workflows/{name}"
    if state is None or state == "deleted":
        return f"{path} is missing: copy it from the promotion bot (docs/github-setup.md)"
    if state == "active":
        return None
    if state == "disabled_fork":
        how = "a fork starts with its workflows off: enable them in the fork's Actions tab"
    else:  # disabled_manually, disabled_inactivity, or one GitHub adds later
        how = f"open {name} in the repository's Actions tab and press Enable workflow"
    return f"{path} is disabled ({state}), so it answers no issue: {how}"


def unreadable(what: str, permission: str, exc: GitHubError) -> str:
    """A read GitHub refused, as one problem among the rest: a 403 names the permission the token lacks (a
    fine-grained token without it), since the other checks still tell the admin everything else."""
    if exc.status == 403:
        return (
            f"the token cannot read {what} ({exc}): it needs {permission} on this repository (a fine-grained "
            "token's repository permissions), or use `gh auth token`; not checked until then"
        )
    return f"cannot read {what} ({exc}); not checked"


_UNREAD = object()


def _read(problems: list[str], what: str, permission: str, fn):
    """``fn()``, or ``_UNREAD`` with the refusal added to ``problems``."""
    try:
        return fn()
    except GitHubError as exc:
        problems.append(unreadable(what, permission, exc))
        return _UNREAD


def feedback_unchecked(blis: str, fork: str) -> str:
    """Another repository for feedback issues: the job's GITHUB_TOKEN cannot write there. Under the same owner an
    `app-token:` can (an input of the workflow's step, which the API does not show); under another owner none can,
    since an App's installation token reaches one owner and the bot's every other write goes to ``fork``."""
    blis_owner = blis.split("/")[0]
    kept = (
        "each promotion keeps its feedback issues' text in its branch (docs/promotion/<name>/feedback/<id>.md) "
        f"and says on the issue how to file them in {blis} by hand"
    )
    if blis_owner.lower() == fork.split("/")[0].lower():  # GitHub compares owners case-insensitively
        return (
            f"{CONFIG_PATH}: blis_repository {blis} is another repository, where the job's GITHUB_TOKEN cannot "
            "file issues (not checked through the API): give the `advance` job an `app-token:` of a GitHub App "
            f"installed on {blis_owner}, which owns both repositories, with Issues: write (the App then writes "
            f"everything here too; docs/github-setup.md, section 3); without it {kept}"
        )
    return (
        f"{CONFIG_PATH}: blis_repository {blis} has another owner than {fork}, so the bot cannot file feedback "
        "issues there: the job's GITHUB_TOKEN writes only this repository, and no single GitHub App token can "
        f"write both (an installation token reaches one owner's repositories; one for {blis_owner} would break "
        f"the bot's every write here): {kept}; to have the bot file them, move the fork under {blis_owner} and "
        "give the `advance` job an `app-token:` (docs/github-setup.md, section 3)"
    )


@dataclass
class SetupReport:
    problems: list[str] = field(default_factory=list)  # the bot cannot work until these are fixed
    notes: list[str] = field(default_factory=list)  # defaults that apply, things the bot does itself

    @property
    def ready(self) -> bool:
        return not self.problems


def check_repository(
    repository: str, *, client: GitHub | None = None, environ=None, home: Path | None = None
) -> SetupReport:
    """What is missing (each with its fix) and what is worth knowing; no problems means ready. ``home``: where
    this install reads its data from (default: the one it found, ``bot.PROJECT_ROOT``)."""
    from bot import PROJECT_ROOT
    from bot.home import problem

    env = os.environ if environ is None else environ
    report = _check(repository, client, env)
    said = problem(PROJECT_ROOT if home is None else home, env)
    if said is not None:
        report.problems.insert(0, f"this install of `promote`: {said}")
    return report


def _check(repository: str, client: GitHub | None, env) -> SetupReport:
    if client is None:
        token = env.get("GH_TOKEN") or env.get("GITHUB_TOKEN") or ""
        if not token:
            return SetupReport(
                ["no token: set GH_TOKEN to a token that can read the repository (e.g. `gh auth token`)"]
            )
        client = GitHub(token, repository, api_url=env.get("GITHUB_API_URL", "https://api.github.com"))
    problems: list[str] = []
    notes: list[str] = []
    try:
        info = client.repository_info()
    except GitHubError as exc:
        return SetupReport([f"cannot read {repository}: {exc}"])
    perms = info.get("permissions") or {}
    if perms and not perms.get("push"):
        problems.append(
            "the token cannot push to the repository: the bot's write job needs contents, issues, pull-requests "
            "and actions write (the workflow's `permissions:` give GITHUB_TOKEN exactly these)"
        )
    if info.get("has_issues") is False:
        problems.append("issues are disabled: enable them in Settings → General → Features")
    states = _read(problems, "the workflows", "Actions: read", client.workflow_files)
    if states is not _UNREAD:
        for name in WORKFLOWS:
            said = workflow_problem(name, states.get(f".github/workflows/{name}"))
            if said:
                problems.append(said)
    branch = info.get("default_branch", "main")
    form = _read(problems, FORM, "Contents: read", lambda: client.file_text(FORM, branch))
    if form is None:
        problems.append(f"{FORM} is missing: copy the issue form so people can file promotions")
    config_text = _read(problems, CONFIG_PATH, "Contents: read", lambda: client.file_text(CONFIG_PATH, branch))
    config = None  # described only as the admin wrote it, or as the defaults when there is no file
    if config_text is None:
        config = parse_config(None)
        notes.append(
            f"{CONFIG_PATH} is missing: every default applies (approvers: admin, maintain, write); add it to change them"
        )
    elif config_text is not _UNREAD:
        try:
            config = parse_config(config_text, repository)
        except ConfigError as exc:
            problems += [f"{CONFIG_PATH}: {p}" for p in exc.problems]
        else:
            if config.blis_repository is None:
                notes.append(f"{CONFIG_PATH}: blis_repository is unset, so refuted hypotheses file no feedback issues")
            elif config.blis_repository.lower() != repository.lower():
                notes.append(feedback_unchecked(config.blis_repository, repository))
            if config.llm.engine == "anthropic":
                notes.append(NO_KEY_UNCHECKED)
    labels = _read(problems, "the labels", "Issues: read", client.label_names)
    missing = [] if labels is _UNREAD else sorted(str(x) for x in Label if str(x) not in labels)
    if missing:
        notes.append(
            f"{len(missing)} bot label(s) do not exist yet ({', '.join(missing[:4])}{'…' if len(missing) > 4 else ''}); "
            "the bot creates them on first use, or create them now so people can find them"
        )
    notes.append(UNCHECKED)
    if config is not None:  # an invalid file's runner labels are neither the admin's nor to be guessed
        notes.append(runners_unchecked(config.gpu.runner_labels))
    return SetupReport(problems, notes)
