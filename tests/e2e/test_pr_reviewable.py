"""The PR a maintainer reviews (issue 13, items 4 and 6), on the bundled example's full run.

Short body that opens with what the plugin does; links absolute and pinned to the commit holding the
artifacts; a title GitHub does not cut; machine-written bulk marked generated; every open finding in
Known issues and on its line; and no local machine path in anything committed or posted.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from bot import PROJECT_ROOT
from bot.model import PipelineState
from bot.stages.pr_parts import MAX_ISSUES
from bot.stages.pr_parts import open_findings as open_findings_of
from tests.conftest import BRANCH, git

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _pr(work: Path) -> dict:
    return json.loads((work / "pr" / "pr.json").read_text())


def test_body_is_short_and_opens_with_what_the_plugin_does(full_run):
    _, work, _ = full_run
    pr = _pr(work)
    body = pr["body"]
    lines = body.splitlines()
    assert len(lines) <= 80, len(lines)
    assert lines[0].startswith("`evolved-adaptive-scorer` scores each request's candidate endpoints"), lines[0]
    order = [
        "## Enable and roll back",
        "## Claims (Track A:",
        "## Known issues",
        "## Evidence",
        "## Gates",
        "## Links (pinned to",
    ]
    at = [body.index(h) for h in order]
    assert at == sorted(at), order
    assert "| Claim | BLIS predicted | llm-d measured (90% CI) | Verdict |" in body
    assert "`promote upstream-patch`" in body
    assert len(pr["title"]) <= 72 and pr["title"].startswith("[promotion] evolved-adaptive-scorer: ")


def test_links_are_absolute_and_pinned_to_the_commit_holding_the_artifacts(full_run):
    _, work, fork = full_run
    body = _pr(work)["body"]
    stage7, pin = git(fork, "rev-list", "-2", BRANCH).split()
    assert "stage 6:" in git(fork, "log", "-1", "--format=%s", pin)
    targets = LINK.findall(body)
    assert len(targets) >= 7
    for target in targets:
        sha, _, rest = target.partition(":")
        assert sha == pin, target  # the local forge's absolute form: <commit>:<path>
        path = rest.split("#L")[0]
        git(fork, "cat-file", "-e", f"{pin}:{path}")  # raises when the commit lacks the file
    assert f"pinned to {pin[:12]}" in body and stage7[:12] not in body


def test_machine_written_bulk_is_marked_generated(full_run, tmp_path):
    _, _, fork = full_run
    attributes = git(fork, "show", f"{BRANCH}:.gitattributes")
    # the PR text is not copied onto the branch: it would only duplicate the PR (and name commits)
    assert "docs/promotion/evolved-adaptive-scorer/pull-request.md" not in git(
        fork, "ls-tree", "-r", "--name-only", BRANCH
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitattributes").write_text(attributes)
    docs = "docs/promotion/evolved-adaptive-scorer"
    generated = [
        f"{docs}/validation/verdicts.json",
        f"{docs}/artifacts.json",
        f"{docs}/validation/plots/A1-effects.png",
    ]
    read_by_people = [f"{docs}/validation/verdicts.md", f"{docs}/report.md", "cmd/epp/runner/runner.go"]
    out = git(tmp_path, "check-attr", "linguist-generated", "--", *generated, *read_by_people)
    marks = {path: value for path, _attr, value in (ln.rsplit(": ", 2) for ln in out.splitlines())}
    assert all(marks[p] == "true" for p in generated), marks
    assert all(marks[p] == "unspecified" for p in read_by_people), marks


def test_every_open_finding_is_a_known_issue_and_anchored_ones_are_review_comments(full_run):
    _, work, _ = full_run
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    pr = _pr(work)
    open_findings = [f for rounds in state.reviews.values() for f in rounds[-1].findings]
    assert open_findings
    known = pr["body"].split("## Known issues", 1)[1].split("## Evidence", 1)[0]
    thread = (work / "issue" / "thread.md").read_text()
    # The body lists the first MAX_ISSUES by id (most severe first) and counts the rest, each a review comment
    # on its line; the thread names every one by its id, as its gate's review showed it.
    listed = {ref for _gate, _f, ref in open_findings_of(state.reviews)[:MAX_ISSUES]}
    for rounds in state.reviews.values():
        for f, ref in zip(rounds[-1].findings, rounds[-1].ids(), strict=True):
            assert f"`{ref}`" in thread
            if ref in listed:
                assert f"`{ref}`" in known
                if f.file and f.line:
                    assert f"{f.file}:{f.line}" in known
    left = len(open_findings) - len(listed)
    assert (f"… and {left} more; every finding is a review comment" in known) == (left > 0)
    comments = pr["review_comments"]
    assert comments and all(c["path"] and c["line"] >= 1 for c in comments)
    anchored = {(f.file, f.line) for f in open_findings if f.file and f.line}
    assert anchored <= {(c["path"], c["line"]) for c in comments}


def test_nothing_committed_or_posted_holds_a_local_path(full_run):
    """Every file on the fork branch, the PR record and the issue thread, scanned for the run's directories."""
    _, work, fork = full_run
    local = {str(work), str(fork), str(work.parent), str(PROJECT_ROOT), f"{Path.home()}/"}
    found = []
    for path in git(fork, "ls-tree", "-r", "--name-only", BRANCH).splitlines():
        data = subprocess.run(
            ["git", "-C", str(fork), "show", f"{BRANCH}:{path}"], capture_output=True, check=True
        ).stdout.decode("utf-8", errors="replace")
        found += [f"{path}: {p}" for p in local if p in data]
    for posted in [*(work / "pr").iterdir(), *(work / "issue").iterdir()]:
        text = posted.read_text()
        found += [f"{posted.name}: {p}" for p in local if p in text]
    assert not found, found


def test_a_pr_on_sample_data_or_unattended_gates_stays_a_draft(full_run):
    """A maintainer is asked to review only a PR a person approved on measured evidence: the rehearsal
    (sample data, every gate passed by --approve) leaves it a draft, and its body says why."""
    _, work, _ = full_run
    pr = _pr(work)
    assert pr["draft"] is True
    reason = next(ln for ln in pr["body"].splitlines() if ln.startswith("> **Stays a draft** because"))
    assert "sample data" in reason and "passed by --approve, not by a person" in reason


def test_draft_reasons_name_each_cause():
    from bot.model.base import DecidedVia
    from bot.model.state import GateDecision
    from bot.stages.pull_request import draft_reasons

    state = PipelineState(request_id="1", request_fingerprint="f", branch="promotion/1-x")
    assert draft_reasons(False, state) == []
    state.unconverged = [2]
    state.decisions = [
        GateDecision(gate=1, decision="approve", actor="alice", at="2026-11-27T00:00:00Z", via=DecidedVia.APPROVE_FLAG)
    ]
    assert draft_reasons(True, state) == [
        "its benchmark evidence is sample data",
        "gate 2's review did not converge",
        "gate 1 passed by --approve, not by a person",
    ]
    # ghuser3 finding 8: several unconverged gates are one clause, not the same sentence once per gate
    state.unconverged = [3, 1, 2]
    assert draft_reasons(False, state)[0] == "gates 1, 2 and 3's reviews did not converge"
    state.unconverged = [1, 3]
    assert draft_reasons(False, state)[0] == "gates 1 and 3's reviews did not converge"


def test_a_decision_saved_before_its_way_was_kept_is_not_shown_as_a_persons(tmp_path, capsys):
    """States an older bot saved have no ``via``: an --approve approval and a person's look the same there, so
    status, the PR's gate table and upstream-patch's not-ready note say it is not recorded (and the PR stays a
    draft), never "approve by root" as if a person had read the review."""
    from bot.cli import main
    from bot.cli.upstream import not_ready
    from bot.model.base import DecidedVia
    from bot.model.state import GateDecision
    from bot.review import decided_line
    from bot.stages.pull_request import decided_by

    at = "2026-11-27T00:00:00Z"
    old = GateDecision(gate=1, decision="approve", actor="root", at=at)
    flag = GateDecision(gate=2, decision="approve", actor="root", at=at, via=DecidedVia.APPROVE_FLAG)
    person = GateDecision(gate=3, decision="approve", actor="maria", at=at, via=DecidedVia.COMMAND)
    state = PipelineState(
        request_id="1", request_fingerprint="f", branch="promotion/1-x", decisions=[old, flag, person]
    )
    said = "how it was decided is not recorded (saved by an older bot)"
    assert not_ready([], state) == [
        "gate 2 passed by --approve, not by a person",
        f"gate 1: {said}, so no person is known to have passed it",
    ]
    assert decided_by(old) == f"root; {said}" and decided_by(person) == "maria"
    assert decided_line(old, None, github=True).startswith(f"**Approved** by root; {said}, ")
    (tmp_path / "state.json").write_text(state.model_dump_json())
    assert main(["status", "--work", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"gate 1 approve by root; {said}" in out and "gate 3 approve by maria\n" in out
