"""The GitHub home's trust split, read from the workflow files themselves.

The job that runs evolved or generated code holds no secret and no write
permission and hands back data; the jobs that hold secrets or write never run
that code. A change to the workflows that breaks this fails here.
"""

from __future__ import annotations

import re

import yaml

from bot import PROJECT_ROOT

PROMOTION = PROJECT_ROOT / ".github" / "workflows" / "promotion.yml"


def _jobs(path):
    doc = yaml.safe_load(path.read_text())
    return doc, doc["jobs"]


def _runs_sandbox_exec(job) -> bool:
    for step in job.get("steps", []):
        if "sandbox-exec" in str(step.get("run", "")) or (step.get("with") or {}).get("command") == "sandbox-exec":
            return True
    return False


def _secrets(job) -> set[str]:
    return set(re.findall(r"secrets\.([A-Za-z0-9_]+)", yaml.safe_dump(job)))


def _writes(job) -> set[str]:
    perms = job.get("permissions") or {}
    return {k for k, v in perms.items() if v == "write"} if isinstance(perms, dict) else {"all"}


def test_the_job_that_runs_evolved_code_has_no_secret_and_no_write_permission():
    _, jobs = _jobs(PROMOTION)
    sandboxed = [name for name, job in jobs.items() if _runs_sandbox_exec(job)]
    assert sandboxed == ["sandbox"]
    job = jobs["sandbox"]
    assert _secrets(job) == set() and _writes(job) == set()
    assert job["permissions"] == {"actions": "read", "contents": "read"}
    uploads = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert [u["with"]["name"] for u in uploads] == ["promotion-exec-results"]  # it hands back data, nothing else


def test_the_jobs_that_hold_secrets_or_write_never_run_evolved_code():
    _, jobs = _jobs(PROMOTION)
    for name, job in jobs.items():
        if _secrets(job) or _writes(job):
            assert not _runs_sandbox_exec(job), name
            for step in job["steps"]:
                if step.get("uses") == "./":
                    assert (step.get("with") or {}).get("command", "handle-event") == "handle-event", name
    assert _secrets(jobs["advance"]) == {"ANTHROPIC_API_KEY"}
    assert _writes(jobs["advance"]) == {"actions", "contents", "issues", "pull-requests"}


def test_nothing_from_a_pull_request_is_checked_out_or_triggers_with_secrets():
    doc, jobs = _jobs(PROMOTION)
    triggers = doc.get("on") or doc.get(True)
    assert "pull_request_target" not in triggers and "workflow_run" not in triggers
    for job in jobs.values():
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert "ref" not in (step.get("with") or {}), "the bot runs only the default branch's code"
                assert (step.get("with") or {}).get("persist-credentials") is False
    assert "github.event.issue.pull_request" in jobs["advance"]["if"]


def test_only_promotions_start_the_write_job():
    """Found by a maintainer: every comment and gate-named label on any issue in the fork started a run that set
    up Python to log `ignored: not a promotion issue`. The job's `if:` reads the same marks as ``is_promotion``:
    the `promotion` label (the form's, and the bot's on its PRs) or the form's sections."""
    import inspect

    from bot.events.issue_request import is_promotion
    from bot.github.labels import Label

    _, jobs = _jobs(PROMOTION)
    condition = jobs["advance"]["if"]
    assert f"contains(github.event.issue.labels.*.name, '{Label.PROMOTION}')" in condition
    sections = re.findall(r'"(### [^"]+)" in issue\.body', inspect.getsource(is_promotion))
    assert sections
    for section in sections:
        assert f"contains(github.event.issue.body, '{section}')" in condition
    assert "github.event_name == 'workflow_dispatch'" in condition  # the bot's own runs name no issue


def test_a_run_the_write_job_skips_does_not_join_the_issues_group():
    """Found by a fresh pass (W1): a label not named `gate-…` started a run in the issue's concurrency group, where
    GitHub keeps one pending run, so it could cancel the bot's continuation, and its skipped job continued nothing.
    Such a run gets a group of its own; every other run of the issue (the handler heals) stays in the issue's."""
    doc, jobs = _jobs(PROMOTION)
    skip = "github.event_name == 'issues' && github.event.action == 'labeled'"
    other = "!startsWith(github.event.label.name, 'gate-')"
    condition = " ".join(jobs["advance"]["if"].split())
    assert f"!({skip} && {other})" in condition
    group = " ".join(doc["concurrency"]["group"].split())
    assert group.startswith(f"${{{{ {skip} && {other} && format('promotion-other-label-{{0}}', github.run_id) || ")
    issue = "github.event.issue.number || github.event.pull_request.number || inputs.issue"
    assert group.endswith(f"|| format('promotion-{{0}}', {issue}) }}}}")
    assert doc["concurrency"]["cancel-in-progress"] is False


def test_every_event_the_bot_routes_starts_the_workflow_and_pr_reviews_reach_a_job_that_only_replies():
    """ghflow2 #2: a "Request changes" review on the bot's PR with `/request-changes` as its body, and a line comment
    holding a command, started no workflow, so no one answered them. Reviews and line comments now start the
    `pr-reply` job: no secret, no checkout of the PR, and the right to write on pull requests only."""
    from bot.events import ROUTES

    doc, jobs = _jobs(PROMOTION)
    triggers = doc.get("on") or doc.get(True)
    for event, action in ROUTES:
        assert event in triggers, event
        if action is not None:
            assert action in triggers[event]["types"], (event, action)
    job = jobs["pr-reply"]
    assert _secrets(job) == set() and _writes(job) == {"pull-requests"}
    # issues: read: the promotion issue's status comment says whether the PR is that promotion's own
    assert job["permissions"] == {"contents": "read", "issues": "read", "pull-requests": "write"}
    condition = " ".join(job["if"].split())
    assert (
        "github.event_name == 'pull_request_review' || github.event_name == 'pull_request_review_comment'" in condition
    )
    assert "contains(github.event.pull_request.labels.*.name, 'promotion')" in condition
    assert [s.get("with", {}).get("anthropic-api-key") for s in job["steps"] if s.get("uses") == "./"] == [None]
    assert "github.event.pull_request" not in jobs["advance"]["if"]  # the write job never starts for them
