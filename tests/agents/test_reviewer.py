"""The reviewer's reply, finding by finding: one hallucinated path costs that finding, not the gate."""

from __future__ import annotations

import json

from bot.agents.prompts import checklist
from bot.agents.reviewer import DROPPED_CHECK
from bot.agents.schemas import ReviewerInput
from bot.model import Severity
from tests.agents.conftest import agents_for
from tests.agents.fake_anthropic import Reply, default_responder

PKG = "pkg/epp/framework/plugins/scheduling/scorer/evolvedadaptivescorer"
ARTIFACTS = {f"{PKG}/evolved.go": "package x\n" + "\n".join(f"// line {i}" for i in range(2, 41)) + "\n"}


def finding(file: str | None, line: int | None, message: str, severity: str = "IMPORTANT") -> dict:
    return {
        "severity": severity,
        "checklist_item": 2,
        "file": file,
        "line": line,
        "message": message,
        "suggested_fix": "fix it",
    }


def ghost_on_item_2(call):
    """Item 2 names a file that does not exist next to a real finding; every other item finds nothing."""
    reply = default_responder(call)
    if "checklist item 2 only" in call.task:
        data = json.loads(reply.text)
        data["findings"] = [
            finding(f"{PKG}/freshness.go", 12, "the freshness annotation for QueueDepth is missing"),
            finding(f"{PKG}/evolved.go", 7, "the overload threshold is a BLIS-scale constant"),
            finding(f"{PKG}/evolved.go", 400, "a line past the end of the file", "SUGGESTION"),
        ]
        return Reply.json(data)
    return reply


def test_a_finding_on_a_file_not_on_the_branch_is_dropped_and_reported_the_rest_kept(fake):
    fake.responder = ghost_on_item_2
    inp = ReviewerInput(gate=1, round=1, branch="promotion/1-x", artifacts=ARTIFACTS)
    outcome = agents_for(fake).review(inp)
    # one call per checklist item: the bad anchor was not asked for again, nor did it stop the review
    assert len(fake.calls) == len(checklist(1)) and not any(c.is_reask for c in fake.calls)
    by_check = {(f.check, f.file, f.line): f for f in outcome.findings}
    assert ("G1.2", f"{PKG}/evolved.go", 7) in by_check
    assert ("G1.2", f"{PKG}/evolved.go", None) in by_check  # the line past the end is dropped, not the finding
    (dropped,) = [f for f in outcome.findings if f.check == DROPPED_CHECK]
    assert dropped.severity is Severity.SUGGESTION and dropped.by
    assert f"`{PKG}/freshness.go:12` (not on the branch)" in dropped.message
    assert "QueueDepth" in dropped.message
    assert not any(f.file == f"{PKG}/freshness.go" for f in outcome.findings)
