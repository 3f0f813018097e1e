"""The execution port: requests are data with a stable key; the recorded executor runs nothing."""

from __future__ import annotations

import json

import pytest

from bot import execution
from bot.execution import DirectExecutor, ExecRequest, ExecutionNeeded, RecordedExecutor
from bot.model import RequestError


def test_key_depends_on_everything_that_decides_the_answer():
    a = ExecRequest("go-check", {"x.go": "package x\n"}, {"registration_line": ""})
    assert a.key() == ExecRequest("go-check", {"x.go": "package x\n"}, {"registration_line": ""}).key()
    assert a.key() != ExecRequest("go-check", {"x.go": "package y\n"}, {"registration_line": ""}).key()
    assert a.key() != ExecRequest("go-check", {"x.go": "package x\n"}, {"registration_line": "r"}).key()


def test_requests_round_trip_as_json_and_refuse_what_they_cannot_run():
    a = ExecRequest("go-check", {"x.go": "package x\n"}, {"n": 1})
    back = ExecRequest.from_json(json.loads(json.dumps(a.to_json())))
    assert back.key() == a.key()
    with pytest.raises(RequestError, match="unknown kind 'shell'"):
        ExecRequest.from_json({"kind": "shell", "files": {}, "args": {}})
    with pytest.raises(RequestError, match="'files' must map paths to text"):
        ExecRequest.from_json({"kind": "go-check", "files": {"a": 1}, "args": {}})


def test_recorded_executor_answers_known_requests_and_records_the_rest(monkeypatch):
    calls = []
    monkeypatch.setitem(execution.KINDS, "echo", "tests.execution.test_execution_port:_echo")
    monkeypatch.setattr(execution, "_function", lambda kind: lambda files, args: calls.append(args) or {"ok": 1})
    known = ExecRequest("echo", {}, {"n": 1})
    unknown = ExecRequest("echo", {}, {"n": 2})
    recorded = RecordedExecutor({known.key(): {"ok": 0}})
    assert recorded.run(known) == {"ok": 0}
    with pytest.raises(ExecutionNeeded) as exc:
        recorded.run(unknown)
    assert exc.value.requests == [unknown] and list(recorded.needed) == [unknown.key()]
    assert calls == []  # nothing ran
    assert DirectExecutor().run(unknown) == {"ok": 1} and calls == [{"n": 2}]


def test_a_request_that_raises_in_the_sandbox_becomes_a_recorded_failure_the_stage_reports():
    """Found by a fresh pass (W4 #4): one request raising in `run_all` killed the sandboxed job, so the write
    job never ran and the promotion sat at "stage 2 is due" with no reply. Now the others still run, the job
    hands back the reason, and the write job's executor fails the stage with it (a RequestError: reported)."""
    broken = ExecRequest("go-harness", {}, {"input": [1]})  # a real kind's function, given args it cannot read
    fine = ExecRequest("go-check", {}, {"registration_line": ""})
    results = execution.run_all([broken], DirectExecutor())
    reason = results[broken.key()][execution.FAILED]
    assert reason.startswith(("AttributeError", "TypeError", "ValueError")), reason
    json.dumps(results)  # handed back as data
    recorded = RecordedExecutor(results)
    with pytest.raises(
        execution.ExecutionFailed,
        match=r"could not run the differential check against the BLIS original \(go-harness\): .*a bug in the bot.*`/retry`",
    ):
        recorded.run(broken)
    assert isinstance(execution.ExecutionFailed("x"), RequestError)
    with pytest.raises(ExecutionNeeded):
        recorded.run(fine)
