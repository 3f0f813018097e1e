"""A whole promotion on the fake GitHub: issue form → stages → three gates decided by people → ready PR."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot import directives
from tests.github.actions_sim import REPO
from tests.github.forms import example_body

pytestmark = pytest.mark.slow

TITLE = "[promotion] Evolved adaptive weighted scorer (load-delta, session and KV-pressure adjustments)"
BRANCH_PREFIX = "promotion/"


def state_of(sim, number):
    from bot.github.state import decode_state

    status = [c for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status -->")]
    assert len(status) == 1
    return decode_state(status[0].body)


def comment_with(sim, number, marker):
    [body] = [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith(marker)]
    return body


def labels_of(sim, number):
    return set(sim.fake.issue(REPO, number).labels)


def created(sim):
    """Everything the bot created (not updated): comments, reviews, review comments, PRs, labels, feedback issues."""
    f = sim.fake
    return {
        "comments": sorted(c.id for n in f.state.repos[REPO].issues for c in f.comments(REPO, n)),
        "reviews": sorted(r.id for p in f.pulls(REPO) for r in f.reviews(REPO, p.number)),
        "review comments": sorted(c.id for p in f.pulls(REPO) for c in f.review_comments(REPO, p.number)),
        "pulls": sorted(p.number for p in f.pulls(REPO)),
        "labels": sorted(f.labels(REPO)),
        "feedback": sorted(f.state.repos["acme/blis"].issues),
    }


def _assert_links_pinned(sim, body: str, branch: str) -> None:
    """Every link of the PR body is GitHub's absolute blob form, pinned to the commit before stage 7's (the
    one holding the artifacts), and names a file that commit holds."""
    import subprocess

    targets = re.findall(r"\]\(([^)\s]+)\)", body)
    assert len(targets) >= 7
    git_dir = sim.fake.git_dir(REPO)
    head = sim.fake.branch_sha(REPO, branch)
    pin = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", f"{head}^"], capture_output=True, text=True, check=True
    ).stdout.strip()
    for target in targets:
        m = re.fullmatch(rf"https?://[^/]+/{REPO}/blob/([0-9a-f]{{40}})/([^#]+)(#L\d+)?", target)
        assert m and m.group(1) == pin, target
        subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{pin}:{m.group(2)}"], check=True)


def _assert_no_local_path(sim, number: int, pull_number: int, branch: str, local: list[str]) -> None:
    """Nothing the bot posted (comments, PR body, reviews) or committed on the branch names a local path."""
    import subprocess

    f = sim.fake
    posted = [c.body for n in (number, pull_number) for c in f.comments(REPO, n)]
    posted += [f.issue(REPO, pull_number).body]
    posted += [r.body for r in f.reviews(REPO, pull_number)] + [c.body for c in f.review_comments(REPO, pull_number)]
    assert not [p for p in local for text in posted if p in (text or "")]
    git_dir = str(f.git_dir(REPO))
    for p in local:
        grep = subprocess.run(
            ["git", "--git-dir", git_dir, "grep", "-l", "-F", p, branch], check=False, capture_output=True, text=True
        )
        assert grep.returncode == 1, grep.stdout  # 1: no match


def test_a_whole_promotion_through_issue_labels_and_commands(sim, tmp_path):
    from bot.model import Status

    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    state = state_of(sim, number)
    assert state.status is Status.AWAITING_DECISION and state.open_gate == 1
    assert {"promotion", "gate-1-pending"} <= labels_of(sim, number)
    [pull] = sim.fake.pulls(REPO)
    assert pull.draft and pull.head == state.branch and f"Refs #{number}" in sim.fake.issue(REPO, pull.number).body
    assert any(r.body.startswith("<!-- promotion-bot:review-gate-1 -->") for r in sim.fake.reviews(REPO, pull.number))
    inline = sim.fake.review_comments(REPO, pull.number)  # on the diff's lines, or the fake would have refused
    assert inline and all(c.body.startswith("<!-- promotion-bot:review-gate-1 -->") for c in inline)
    assert {c.path.split("/")[0] for c in inline} >= {"pkg", "deploy"}  # the plugin and its config lines
    assert any(r.sandbox_ran for r in sim.runs), "gate 1's Go checks ran in the sandboxed job"
    # The status comment says what to decide: headline, counts, what to read (linked on the branch), directives.
    status = comment_with(sim, number, "<!-- promotion-bot:status -->")
    assert "**Deciding on** the translation into" in status
    assert re.search(r"\*\*Findings: \d+ CRITICAL, \d+ IMPORTANT, \d+ SUGGESTION\*\*", status)
    assert f"/blob/{state.branch}/docs/promotion/" in status and "| `param NAME: VALUE` |" in status

    # A triager's gate label does not count: removed, with a comment saying why.
    _label(sim, number, "gate-1-approved", "tom")
    assert state_of(sim, number).open_gate == 1 and "gate-1-approved" not in labels_of(sim, number)
    assert any("the role `triage`" in c.body for c in sim.fake.comments(REPO, number))

    # A maintainer's label passes gate 1; stage 3 and gate 2's review follow.
    _label(sim, number, "gate-1-approved", "maria")
    state = state_of(sim, number)
    assert state.open_gate == 2 and state.status is Status.AWAITING_DECISION
    assert [(d.gate, d.actor, d.via.value) for d in state.decisions] == [(1, "maria", "label")]
    approval = next(a for a in state.audit if a.event == "gate 1 approve")
    assert approval.role == "maintain" and approval.delivery and approval.delivery.startswith("run-")

    review2 = comment_with(sim, number, "<!-- promotion-bot:review-gate-2 -->")
    assert "### Hypotheses" in review2 and "| A1 | A |" in review2 and "**Deciding on** the hypotheses:" in review2

    # Commands: a change request naming no directive is answered at once and changes nothing; one with a
    # directive (on the comment's next line) reruns stage 3 with the reason; then approve.
    _comment(sim, number, "maria", "/request-changes say which workloads A1 covers")
    state = state_of(sim, number)
    assert state.open_gate == 2 and [d.gate for d in state.decisions] == [1] and state.stages[3].feedback is None
    answer = next(c.body for c in sim.fake.comments(REPO, number) if "`/request-changes` was not applied" in c.body)
    assert "names no directive gate 2 applies" in answer
    assert all(f"`{d.syntax}`" in answer for d in directives.for_gate(2))
    _comment(sim, number, "maria", "/request-changes say which workloads A1 covers\nmargin: 0.04")
    state = state_of(sim, number)
    assert state.open_gate == 2 and state.stages[3].feedback == "say which workloads A1 covers\nmargin: 0.04"
    _comment(sim, number, "maria", "/approve")
    state = state_of(sim, number)
    assert state.open_gate == 3 and state.status is Status.AWAITING_DECISION
    assert [(d.gate, d.via.value) for d in state.decisions] == [(1, "label"), (2, "command"), (2, "command")]

    # Gate 3 by label; stages 6 and 7 finish and the PR is ready.
    _label(sim, number, "gate-3-approved", "maria")
    state = state_of(sim, number)
    assert state.status is Status.DONE
    pull = sim.fake.pull(REPO, pull.number)
    body = sim.fake.issue(REPO, pull.number).body
    assert "## Claims (Track A: " in body and len(body.splitlines()) <= 80
    # A reason's note and its directive line stay apart in the gate table (they used to read as one sentence).
    assert "| say which workloads A1 covers; margin: 0.04 |" in body
    # People passed every gate, but the evidence is the example's sample data: the PR stays a draft and says why.
    stays = next(ln for ln in body.splitlines() if ln.startswith("> **Stays a draft** because"))
    assert pull.draft and "sample data" in stays and "--approve" not in stays, stays
    # ... and the issue says so too, instead of "the PR is open" (which reads as "ready for review").
    status = comment_with(sim, number, "<!-- promotion-bot:status -->")
    assert (
        "**Status:** done: all 7 stages finished; PR stays a draft because its benchmark evidence is sample data"
        in status
    )
    assert "PR is open" not in status
    assert len(sim.fake.issue(REPO, pull.number).title) <= 72
    _assert_links_pinned(sim, body, state.branch)
    _assert_no_local_path(sim, number, pull.number, state.branch, [str(tmp_path), f"{Path.home()}/"])
    assert "promotion-done" in labels_of(sim, number)
    last = sim.runs[-1]
    assert "| ✅ | 7. pull request |" in last.summary  # the job summary shows the same checklist
    assert last.outputs["status"] == "done" and last.outputs["pr-url"].endswith(f"/pull/{pull.number}")
    assert not {"gate-3-pending", "stage-7-pull-request"} & labels_of(sim, number)

    # Replaying every event changes nothing: no new comment, review, label, PR or feedback issue.
    before = created(sim)
    for run in list(sim.runs):
        sim.replay(run)
    after = created(sim)
    new = sorted(set(after["comments"]) - set(before["comments"]))
    assert after == before, [
        (c.id, c.user, c.body[:200])
        for n in sim.fake.state.repos[REPO].issues
        for c in sim.fake.comments(REPO, n)
        if c.id in new
    ]
    assert state_of(sim, number).status is Status.DONE
    worst = max(r.calls for r in sim.runs)
    assert worst <= 30, [(r.event, r.calls) for r in sim.runs]


def _as(sim, login):
    """What a person does in the UI, done through the REST API with their own token."""
    return sim.fake.pygithub(login).get_repo(REPO)


def _label(sim, number, label, login):
    _as(sim, login).get_issue(number).add_to_labels(label)
    sim.event("issues", "labeled", number, sender=login, label=label)


def _comment(sim, number, login, body):
    comment = _as(sim, login).get_issue(number).create_comment(body)
    sim.event("issue_comment", "created", number, sender=login, comment_id=comment.id)
    return comment.id


def _to_gate_1(sim):
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    assert state_of(sim, number).open_gate == 1
    return number


def test_the_open_gates_approval_label_exists_so_an_approver_can_pick_it_in_the_sidebar(sim):
    """Admin findings #6: the status comment says "Apply the label `gate-1-approved`", but the bot created that
    label only after someone approved by command, and GitHub's sidebar offers only labels that exist."""
    number = _to_gate_1(sim)
    assert "gate-1-approved" in sim.fake.labels(REPO) and "gate-2-approved" not in sim.fake.labels(REPO)
    assert "Apply the label `gate-1-approved`" in comment_with(sim, number, "<!-- promotion-bot:status -->")


def test_labels_for_a_closed_gate_or_from_a_bot_are_refused_and_bot_comments_ignored(sim):
    number = _to_gate_1(sim)
    sim.fake.add_user("renovate[bot]", role="admin", type="Bot")
    before = state_of(sim, number)

    _label(sim, number, "gate-3-approved", "maria")  # an approver, but gate 3 is not open
    assert "gate-3-approved" not in labels_of(sim, number)
    assert any(
        "`gate-3-approved` label was removed: gate 3 is not open" in c.body for c in sim.fake.comments(REPO, number)
    )

    _as(sim, "maria").get_issue(number).add_to_labels("gate-1-approved")  # applied, but the event's sender reads
    sim.event("issues", "labeled", number, sender="researcher", label="gate-1-approved")
    assert "gate-1-approved" not in labels_of(sim, number)
    assert any("@researcher has the role `read`" in c.body for c in sim.fake.comments(REPO, number))

    _label(sim, number, "gate-1-approved", "renovate[bot]")  # an admin, but a bot
    assert "gate-1-approved" not in labels_of(sim, number)
    assert any("renovate[bot] is a bot account" in c.body for c in sim.fake.comments(REPO, number))

    comments = len(sim.fake.comments(REPO, number))
    _comment(sim, number, "renovate[bot]", "/approve")
    assert len(sim.fake.comments(REPO, number)) == comments + 1  # its own comment, and no answer to it

    after = state_of(sim, number)
    assert after.decisions == before.decisions == [] and after.open_gate == 1


def test_an_unauthorized_command_is_answered_and_changes_nothing(sim):
    number = _to_gate_1(sim)
    _comment(sim, number, "researcher", "/approve")
    assert any(
        "`/approve` was not applied: @researcher has the role `read`" in c.body for c in sim.fake.comments(REPO, number)
    )
    assert state_of(sim, number).decisions == []
    _comment(sim, number, "researcher", "/cancel changed my mind")  # the author may cancel their own promotion
    state = state_of(sim, number)
    assert state.status.value == "cancelled" and "promotion-cancelled" in labels_of(sim, number)
    _comment(sim, number, "maria", "/retry")
    assert state_of(sim, number).status.value == "awaiting-decision"


def test_the_status_comment_links_the_draft_pull_request(sim):
    """Found by a maintainer: the status comment linked the branch and the run, never the PR opened at stage 2."""
    number = _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    status = comment_with(sim, number, "<!-- promotion-bot:status -->")
    links = re.search(r"^\[branch\]\(.*$", status, re.M).group(0)
    assert re.search(rf"· \[pull request\]\(https?://\S+/{REPO}/pull/{pull.number}\)", links), links


def test_one_round_leaves_one_review_on_the_pr_and_no_empty_superseded_one(sim):
    """Found by a maintainer: each round left an empty "(superseded)" review beside the live one, because the
    round's review was posted again (unconverged) on the same commit; it is now edited in place."""
    _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    bodies = [r.body for r in sim.fake.reviews(REPO, pull.number)]
    assert [b.split("\n")[0] for b in bodies] == ["<!-- promotion-bot:review-gate-1 -->"], bodies
    assert "the gate is open for a decision" in bodies[0]
    assert sim.fake.review_comments(REPO, pull.number)  # the inline comments stay with it


def test_a_rejected_promotion_closes_its_pull_request_and_says_why(sim):
    """Found by a new user: after `/reject` the PR stayed an open draft promising its description at stage 7."""
    number = _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    assert sim.fake.issue(REPO, pull.number).state == "open"
    _comment(sim, number, "maria", "/reject not for this cluster")
    assert state_of(sim, number).status.value == "rejected"
    body = sim.fake.issue(REPO, pull.number).body
    assert sim.fake.issue(REPO, pull.number).state == "closed"
    assert "**Rejected at gate 1** by maria: not for this cluster" in body and "stage 7" not in body


def test_a_cancelled_promotion_closes_its_pull_request_says_why_and_a_retry_reopens_it(sim):
    """Found by a maintainer: after `/cancel` the PR stayed an open draft promising stage 7, and the reason
    appeared nowhere."""
    number = _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    _comment(sim, number, "researcher", "/cancel we found a bug in the evolved program")
    assert state_of(sim, number).status.value == "cancelled"
    body = sim.fake.issue(REPO, pull.number).body
    assert sim.fake.issue(REPO, pull.number).state == "closed"
    assert "**Cancelled** by researcher: we found a bug in the evolved program" in body and "stage 7" not in body
    status = comment_with(sim, number, "<!-- promotion-bot:status -->")
    assert "cancelled by researcher (we found a bug in the evolved program)" in status
    _comment(sim, number, "maria", "/retry")
    assert state_of(sim, number).status.value == "awaiting-decision"
    assert sim.fake.issue(REPO, pull.number).state == "open" and "**Draft.**" in sim.fake.issue(REPO, pull.number).body


def test_an_edited_program_restarts_from_stage_1_and_says_what_changed_and_where_it_was(sim):
    from tests.github.forms import example_values, render_form

    number = _to_gate_1(sim)
    values = example_values()
    values["source"] = values["source"].replace("adj *= 1.0 - 0.12*(load-4.5)", "adj *= 1.0 - 0.10*(load-4.5)")
    sim.fake.issue(REPO, number).body = render_form(values, {"baselines": [0, 1], "consent": [0]})
    sim.event("issues", "edited", number, sender="researcher")
    state = state_of(sim, number)
    assert any(a.event == "restarted from stage 1" for a in state.audit)
    assert state.open_gate == 1 and state.decisions == []
    [notice] = [c.body for c in sim.fake.comments(REPO, number) if "restarted from stage 1" in c.body]
    assert "the evolved program" in notice and "waiting for a decision at gate 1" in notice, notice


def test_an_edited_program_while_stage_2_runs_restarts_from_stage_1_and_says_so(sim):
    """ghflow2 #5: an edit while stage 2 waited for its sandboxed checks restarted the promotion (the audit said
    so, and the branch has the commit removing stage 1's files), but nothing on the issue told the researcher the
    edit was taken; an edit at gate 1 gets a notice, and this one gets the same."""
    from tests.github.forms import example_values, render_form

    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    opened = sim.fake.webhook("issues", "opened", REPO, number, sender="researcher")
    sim._run("issues", opened)  # stage 2 asks for the sandbox; its continuation waits behind the edit's run
    assert state_of(sim, number).open_gate is None
    values = example_values()
    values["source"] = values["source"].replace("adj *= 1.0 - 0.12*(load-4.5)", "adj *= 1.0 - 0.10*(load-4.5)")
    _as(sim, "researcher").get_issue(number).edit(body=render_form(values))
    edited = sim.fake.webhook("issues", "edited", REPO, number, sender="researcher", changes={"body": {"from": ""}})
    sim.deliver("issues", edited)
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.decisions == []
    assert any(a.event == "restarted from stage 1" for a in state.audit)
    [notice] = [c.body for c in sim.fake.comments(REPO, number) if "restarted from stage 1" in c.body]
    assert "@researcher edited the issue" in notice and "the evolved program" in notice, notice
    assert "nothing was decided yet" in notice, notice


def test_an_edit_no_finished_stage_read_keeps_the_promotion_where_it_is(sim):
    """Found on GitHub: any edit (a maintainer's retitle, a claim fixed before stage 3 read it) went back to stage 1."""
    from tests.github.forms import example_values, render_form

    number = _to_gate_1(sim)
    before = state_of(sim, number)
    values = example_values() | {"evolved_for": "multiturn"}
    sim.fake.issue(REPO, number).body = render_form(values, {"baselines": [0, 1], "consent": [0]})
    sim.event("issues", "edited", number, sender="researcher")
    _as(sim, "maria").get_issue(number).edit(title=TITLE + " (v2)")
    sim.event("issues", "edited", number, sender="maria", changes={"title": {"from": TITLE}})
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.stages == before.stages and state.reviews == before.reviews
    assert [a.event for a in state.audit].count("request updated") == 2
    assert not any("restarted" in c.body for c in sim.fake.comments(REPO, number))
    status = comment_with(sim, number, "<!-- promotion-bot:status -->")
    assert "(v2)" in status  # the new title is shown where the title is shown


def test_an_edit_that_renames_the_branch_is_refused_with_how_to_go_on_not_a_halt(sim):
    """Found by the lead: changing the plugin name after stage 1 renamed the branch (promotion/<n>-<plugin-type>),
    and the run failed on the branch guard ("the promotion branch ... was deleted"), with a fix about
    git update-ref. The edit is now refused as needs-info, saying how to go on; the promotion stays where it was."""
    from tests.github.forms import example_values, render_form

    number = _to_gate_1(sim)
    before = state_of(sim, number)
    renamed = example_values() | {"plugin_name": "evolved-renamed-scorer"}
    sim.fake.issue(REPO, number).body = render_form(renamed, {"baselines": [0, 1], "consent": [0]})
    sim.event("issues", "edited", number, sender="researcher")
    state = state_of(sim, number)
    assert state.failure is None and state.open_gate == 1 and state.stages == before.stages
    assert state.branch == before.branch == f"promotion/{number}-evolved-adaptive-scorer"
    reply = comment_with(sim, number, "<!-- promotion-bot:needs-info -->")
    assert "runs on the branch `promotion/1-evolved-adaptive-scorer`" in reply.replace("\\", "")
    assert "set the plugin name to" in reply and "file a new issue" in reply and "update-ref" not in reply
    # a promotion under way keeps what it did: the reply says where it stays, not that nothing was done
    assert "nothing was built" not in reply and "stays where it is (awaiting-decision, gate 1)" in reply
    assert "needs-info" in labels_of(sim, number)
    _comment(sim, number, "maria", "/status")  # any event reads the request the same way
    assert state_of(sim, number).failure is None

    sim.fake.issue(REPO, number).body = render_form(example_values(), {"baselines": [0, 1], "consent": [0]})
    sim.event("issues", "edited", number, sender="researcher")
    state = state_of(sim, number)
    assert state.failure is None and state.open_gate == 1 and state.stages == before.stages
    assert "needs-info" not in labels_of(sim, number)
    assert "Resolved: the request can be used" in comment_with(sim, number, "<!-- promotion-bot:needs-info -->")


def test_with_claude_the_interrupted_step_replays_its_replies_after_the_sandbox(sim, monkeypatch):
    """Claude's author patch at stage 2 needs the sandbox's checks; the step then reruns in the next run and
    must write the same patch: it replays the replies handed over with the execution requests."""
    from tests.agents.fake_anthropic import FakeAnthropic, default_responder

    (sim.root / "config.yml").write_text(
        "blis_repository: acme/blis\nallow_sample_data: true\nllm:\n  engine: anthropic\n  max_retries: 1\n"
    )
    with FakeAnthropic(default_responder) as claude:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
        sim.event("issues", "opened", number, sender="researcher")
        api_calls = len(claude.calls)
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.status.value == "awaiting-decision"
    assert any(r.sandbox_ran for r in sim.runs)
    assert api_calls == len(state.llm.calls) > 0, "every Claude call is made once and accounted once"
    status = next(c.body for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status"))
    assert "Claude" in status or "tokens" in status


def test_stage_5_runs_through_benchmark_yml_and_judges_the_fake_clusters_reports(sim):
    """Gate 2 approved: the bot dispatches benchmark.yml; its own jobs run the plan on the fake cluster, commit
    the reports to the branch and dispatch the bot again; stage 5 judges them (real-shaped, not sample data)."""
    import json

    from tests.github.actions_sim import benchmark_workflow_gpu

    (sim.root / "config.yml").write_text(  # no sample data admitted; the GPU settings travel with the dispatch
        "blis_repository: acme/blis\ngpu:\n  runner_labels: [self-hosted, h100]\n  pool: h100\n"
        "  budget_gpu_minutes: 5000\n  image_repo: registry.example.com/acme/epp\n"
        "stack:\n  replicas: 2\n  accelerator: NVIDIA-A100-SXM4-80GB\n"
    )
    sim.gpu = benchmark_workflow_gpu(sim)
    number = _to_gate_1(sim)
    _label(sim, number, "gate-1-approved", "maria")
    _label(sim, number, "gate-2-approved", "maria")
    state = state_of(sim, number)
    assert state.open_gate == 3, state.status
    branch = state.branch
    slug = branch.split("-", 1)[1]
    bench = [d for d in sim.fake.dispatches if d.workflow.endswith("benchmark.yml")]
    assert bench and bench[-1].inputs["pool"] == "h100" and bench[-1].inputs["budget_gpu_minutes"] == "5000"
    assert json.loads(bench[-1].inputs["runner_labels"]) == ["self-hosted", "h100"]
    assert bench[-1].inputs["image_repo"] == "registry.example.com/acme/epp"
    # the repository's stack, not the request model's default, is what the plan pins and the runner deploys
    experiment = _read(sim, branch, f"benchmarks/promotion/{branch.split('-', 1)[1]}/experiment.yaml")
    assert "NVIDIA-A100-SXM4-80GB" in experiment and "H100" not in experiment
    files = _branch_files(sim, branch)
    assert f"benchmarks/promotion/{slug}/results/manifest.json" in files
    manifest = json.loads(_read(sim, branch, f"benchmarks/promotion/{slug}/results/manifest.json"))
    assert manifest["image"]["ref"].startswith("registry.example.com/acme/epp:")
    verdicts = json.loads(_read(sim, branch, f"docs/promotion/{slug}/validation/verdicts.json"))
    statuses = {v["status"] for v in verdicts}
    assert "confirmed" in statuses and not any("SAMPLE" in " ".join(v["flags"]) for v in verdicts)
    # Planned against spent GPU-minutes, in the status comment and on the validation page.
    status = next(c.body for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status"))
    pattern = r"GPU-minutes: [\d.]+ spent of [\d.]+ planned \(sequential design, \d+ round\(s\); expected [\d.]+\) \(cap 5000\)"
    assert re.search(pattern, status), status
    page = _read(sim, branch, f"docs/promotion/{slug}/validation/verdicts.md")
    assert "**GPU time:**" in page and "cell run(s)" in page


def _branch_files(sim, branch):
    import subprocess

    out = subprocess.run(
        ["git", "--git-dir", str(sim.fake.git_dir(REPO)), "ls-tree", "-r", "--name-only", f"refs/heads/{branch}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.splitlines())


def _read(sim, branch, path):
    import subprocess

    return subprocess.run(
        ["git", "--git-dir", str(sim.fake.git_dir(REPO)), "show", f"refs/heads/{branch}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_a_commit_pushed_by_someone_else_halts_the_promotion_until_a_person_adopts_it(sim):
    """The bot never builds on a commit it did not write; `/adopt-branch` from someone who may retry lets it."""
    import subprocess

    number = _to_gate_1(sim)
    branch = state_of(sim, number).branch
    work = sim.root / "maria-clone"
    auth = sim.fake.git_auth_args("maria")
    subprocess.run(
        ["git", *auth, "clone", "-q", "-b", branch, f"{sim.fake.server_url}/{REPO}.git", str(work)], check=True
    )
    (work / "NOTES.md").write_text("a maintainer's note\n")
    ident = ["-c", "user.name=Maria", "-c", "user.email=maria@example.com"]
    subprocess.run(["git", "-C", str(work), "add", "NOTES.md"], check=True)
    subprocess.run(["git", *ident, "-C", str(work), "commit", "-q", "-m", "a maintainer's note"], check=True)
    subprocess.run(["git", *auth, "-C", str(work), "push", "-q", "origin", branch], check=True)
    pushed = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()

    _label(sim, number, "gate-1-approved", "maria")
    state = state_of(sim, number)
    assert state.status.value == "failed" and "3" not in {str(s) for s in state.stages}, state.status
    status = next(c.body for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status"))
    assert "❌" in status and "a maintainer" in status and "/adopt-branch" in status

    _comment(sim, number, "researcher", "/adopt-branch")  # read role: may not let the bot build
    assert state_of(sim, number).status.value == "failed"
    assert any("`/adopt-branch` was not applied" in c.body for c in sim.fake.comments(REPO, number))

    _comment(sim, number, "maria", "/adopt-branch")
    state = state_of(sim, number)
    assert state.open_gate == 2 and state.status.value == "awaiting-decision", state.status
    assert any(a.event == "adopted branch commits" and a.actor == "maria" for a in state.audit)
    history = subprocess.run(
        ["git", "--git-dir", str(sim.fake.git_dir(REPO)), "rev-list", f"refs/heads/{branch}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert pushed in history and history[0] != pushed  # stage 3 built on top of the adopted commit


def test_a_changed_stack_configuration_restarts_running_promotions_and_says_why(sim):
    """Found in review: changing `stack:` halted every promotion in flight with advice for local runs. The stack
    is first read by stage 3, so gate 1's approval stands."""
    number = _to_gate_1(sim)
    _comment(sim, number, "maria", "/approve")
    assert state_of(sim, number).open_gate == 2
    (sim.root / "config.yml").write_text("stack:\n  replicas: 2\n  accelerator: NVIDIA-A100-SXM4-80GB\n")
    _comment(sim, number, "maria", "/approve")
    state = state_of(sim, number)
    assert any(a.event == "restarted from stage 3" and "stack" in a.detail for a in state.audit)
    assert state.open_gate == 2 and [d.gate for d in state.decisions] == [1]  # gate 2's was for the old request
    bodies = [c.body for c in sim.fake.comments(REPO, number)]
    assert any("restarted from stage 3" in b and "`stack:`" in b for b in bodies)
    assert not any("--work directory" in b for b in bodies)
