"""The convergence loop at a gate with the Claude reviewer: a finding fixed converges; a finding that
recurs after the author's fix round is marked recurring and the gate opens unconverged (stall)."""

from __future__ import annotations

import json

import pytest

from bot.cli import main
from bot.model import PipelineState, Severity
from tests.agents.fake_anthropic import FakeAnthropic, Reply, default_responder
from tests.conftest import REQUEST

pytestmark = pytest.mark.slow

REPORT = "docs/promotion/evolved-adaptive-scorer/translation-report.md"


def reviewer_raising(rounds: set[int]):
    """Reviewer item 3 raises one IMPORTANT finding in the given rounds; everything else as the default."""

    def respond(call):
        if call.role == "reviewer" and "Perspective: checklist item 3 only" in call.task:
            rnd = int(call.task.split("round ", 1)[1].split(")", 1)[0])
            if rnd in rounds:
                data = json.loads(default_responder(call).text)
                data["findings"] = [
                    {
                        "severity": "IMPORTANT",
                        "checklist_item": 3,
                        "file": REPORT,
                        "line": 1,
                        "message": "the omission of CacheHitRate is not justified in the report",
                        "suggested_fix": "say why prefix-cache-scorer in the profile covers it",
                        "recurs": "R1.1" if rnd > 1 else None,
                    }
                ]
                return Reply.json(data)
        return default_responder(call)

    return respond


def run_to_gate_1(tmp_path, monkeypatch, responder):
    work = tmp_path / "work"
    with FakeAnthropic(responder) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        assert main(["run", str(REQUEST), "--work", str(work), "--llm", "anthropic", "--quiet"]) == 0
        author_tasks = [c.task for c in fake.calls if c.role == "author"]
    return PipelineState.model_validate_json((work / "state.json").read_text()), author_tasks


def test_a_finding_the_author_answers_is_gone_in_round_two_and_the_programs_hazards_still_block(tmp_path, monkeypatch):
    state, author_tasks = run_to_gate_1(tmp_path, monkeypatch, reviewer_raising({1}))
    rounds = state.reviews[1]
    assert state.open_gate == 1
    first, *later = ({f.check for f in r.blocking} for r in rounds)
    assert "G1.3" in first and later and all("G1.3" not in checks for checks in later)  # answered by the author
    # The simulator-scale thresholds are the evolved program's: the author justified them and the reviewer
    # accepted, which the findings say, but no model lowers a checklist finding: the person weighs them, so
    # the rounds end unconverged once they repeat.
    hazards = [f for f in rounds[-1].blocking if f.check == "hazard.sim-scale-threshold"]
    assert hazards and all("[weighed: the author justified it" in f.message for f in hazards)
    assert 1 in state.unconverged
    # the second author call was given the reviewer's finding to answer
    assert "the omission of CacheHitRate is not justified" in author_tasks[1]


def test_a_recurring_finding_stalls_the_gate_unconverged(tmp_path, monkeypatch):
    state, _ = run_to_gate_1(tmp_path, monkeypatch, reviewer_raising({1, 2, 3}))
    rounds = state.reviews[1]
    assert len(rounds) == 2  # the second round repeated the first: no third round
    (again,) = [f for f in rounds[1].blocking if f.check == "G1.3"]
    assert again.recurring and again.severity is Severity.IMPORTANT
    assert 1 in state.unconverged
    opened = [a for a in state.audit if a.event == "gate 1 open for decision"][-1]
    assert "the same blocking findings twice" in opened.detail
