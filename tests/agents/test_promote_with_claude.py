"""`promote run --llm anthropic` on the bundled example, with the real client talking to the fake API.

The acceptance lines of issue 9: every gate converges or opens unconverged with reasons, token totals are
reported and at least 60% of input tokens are cache reads; no reviewer request carries author reasoning;
a reply that never validates and a run of 529s end the step with a clear message and leave the branch and
the saved state exactly as they were.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bot import PROJECT_ROOT
from bot.cli import main
from bot.model import PipelineState, Status
from tests.agents.fake_anthropic import FakeAnthropic, Reply, default_responder
from tests.conftest import REQUEST, RESULTS, branch_tree

pytestmark = pytest.mark.slow

CLI = "import sys; from bot.cli import main; sys.exit(main(sys.argv[1:]))"
RATIONALE_CANARY = "AUTHOR-REASONING-7f3c"
COMMITTED_CANARY = "CALIBRATION-NOTE-91ad"


def author_with_canaries(call):
    """The default author and reviewer, with marked reasoning (must stay private) and a marked edit (committed)."""
    reply = default_responder(call)
    if call.role == "author" and reply.text:
        data = json.loads(reply.text)
        data["rationale"] = f"{RATIONALE_CANARY}: the thresholds look simulation-tuned"
        for edit in data.get("edits", []):
            edit["replace"] += f"\n\n{COMMITTED_CANARY}: tune on real pods.\n"
        return Reply.json(data)
    return reply


def promote(*args: str, fake: FakeAnthropic, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test-key", **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        check=False,
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def claude_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("claude") / "work"
    with FakeAnthropic(author_with_canaries) as fake:
        result = promote(
            "run",
            str(REQUEST),
            "--results",
            str(RESULTS),
            "--allow-sample-data",
            "--work",
            str(work),
            "--approve",
            "all",
            "--llm",
            "anthropic",
            "--actor",
            "alice",
            fake=fake,
        )
        calls = list(fake.calls)
    return result, work, calls


def test_full_run_converges_or_opens_unconverged_with_reasons_and_reports_tokens(claude_run):
    result, work, _ = claude_run
    assert result.returncode == 0, result.stderr
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.status is Status.DONE
    opened = [a for a in state.audit if "open for decision" in a.event]
    assert [a.event for a in opened] == [f"gate {g} open for decision" for g in (1, 2, 3)]
    for a in opened:
        assert a.detail.startswith("review converged") or "did not converge: " in a.detail
    # the Claude reviewer took part in every round, and the author in stages 2, 3 and 6
    assert all("claude" in r.reviewer for rounds in state.reviews.values() for r in rounds)
    steps = state.llm.by_step()
    assert {"stage 2", "gate 1", "stage 3", "gate 2", "gate 3", "stage 6"} <= set(steps)
    assert "claude promotion so far:" in result.stdout and "from cache" in result.stdout


def test_most_input_tokens_are_cache_reads(claude_run):
    _, work, calls = claude_run
    totals = PipelineState.model_validate_json((work / "state.json").read_text()).llm.totals()
    assert totals.calls == len(calls)
    assert totals.cache_share >= 0.60, totals
    # the state holds exactly what the API's usage fields said
    assert totals.cache_read_tokens == sum(c.usage["cache_read_input_tokens"] for c in calls)
    assert totals.usd is not None and totals.usd > 0


def test_no_reviewer_request_contains_author_output_beyond_committed_artifacts(claude_run):
    _, _, calls = claude_run
    reviewer = [c for c in calls if c.role == "reviewer"]
    author = [c for c in calls if c.role == "author"]
    assert reviewer and author
    assert all(RATIONALE_CANARY not in c.text for c in reviewer)
    # what the author committed does reach the reviewer, as a committed artifact
    assert any(COMMITTED_CANARY in c.text for c in reviewer)
    # and nothing of the author's requests: its task blocks never appear in a reviewer request
    author_tasks = {c.task for c in author}
    assert all(t not in c.text for c in reviewer for t in author_tasks)


def test_cost_is_shown_in_status_comment_pr_and_promote_status(claude_run, capsys):
    _, work, _ = claude_run
    thread = (work / "issue" / "thread.md").read_text()
    pr = (work / "pr" / "pull-request.md").read_text()
    assert "of input read from cache" in thread and "| **promotion** |" in thread
    assert "of input read from cache" in pr
    assert main(["status", "--work", str(work)]) == 0
    out = capsys.readouterr().out
    assert "claude gate 1:" in out and "claude promotion:" in out and "of input from cache" in out


def test_perf_script_prints_share_per_stage_and_dollars(claude_run):
    _, work, _ = claude_run
    out = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "perf" / "llm_cost.py"), "--work", str(work)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "share of input tokens read from cache:" in out
    assert "gate 1" in out and "stage 6" in out and "$" in out


def test_the_readme_cost_figures_are_what_the_perf_script_prints():
    """The README's perf table quotes `perf/llm_cost.py` (no --work: the bundled example against the fake API).
    Calls and the cache share must match exactly; tokens and dollars within 3%, so a small prompt change does not
    fail this while a stale figure does."""
    import re

    out = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "perf" / "llm_cost.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT_ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
        timeout=900,
    ).stdout
    share = int(re.search(r"^share of input tokens read from cache: (\d+)%", out, re.M).group(1))
    calls, tokens, usd = re.search(r"^total: (\d+) calls, ([\d,]+) tokens, \$([\d.]+)$", out, re.M).groups()
    readme = (PROJECT_ROOT / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `perf/llm_cost.py` |"))
    m = re.search(r"(\d+)% from cache; (\d+) calls, ([\d.]+) M tokens, \$([\d.]+) at ", row)
    assert m, row
    said_share, said_calls, said_mtok, said_usd = m.groups()
    script = f"{share}% from cache; {calls} calls, {int(tokens.replace(',', '')) / 1e6:.2f} M tokens, ${float(usd):.2f}"
    assert (int(said_share), int(said_calls)) == (share, int(calls)), (
        f"README says {m.group(0)!r}; the script: {script}"
    )
    assert float(said_mtok) == pytest.approx(int(tokens.replace(",", "")) / 1e6, rel=0.03), script
    assert float(said_usd) == pytest.approx(float(usd), rel=0.03), script


def _snapshot(work, fork):
    """The branch, and the state without its record of paid calls (the only thing a failed step saves)."""
    state = PipelineState.model_validate_json((work / "state.json").read_bytes())
    return state.model_copy(update={"llm": None, "audit": None}), branch_tree(fork)


def test_a_reviewer_that_never_validates_stops_the_step_and_changes_nothing_but_the_cost(tmp_path):
    work, fork = tmp_path / "work", tmp_path / "fork"

    def broken_reviewer(call):
        if call.role == "reviewer":
            return Reply.json({"rationale": "r", "findings": [{"severity": "BLOCKER"}], "summary": "s"})
        return default_responder(call)

    with FakeAnthropic(broken_reviewer) as fake:
        args = ["run", str(REQUEST), "--work", str(work), "--fork", str(fork), "--llm", "anthropic"]
        first = promote(*args, fake=fake)
        assert first.returncode == 2
        assert "ReviewReport schema twice" in first.stderr and "findings.0.severity" in first.stderr
        assert "changed only by the calls already paid for" in first.stderr
        before = _snapshot(work, fork)
        state = PipelineState.model_validate_json((work / "state.json").read_bytes())
        assert sorted(state.stages) == [1, 2] and state.open_gate == 1 and not state.reviews
        assert state.llm.totals().calls == len(fake.calls)  # the two paid replies count
        again = promote("resume", "--work", str(work), fake=fake)
        assert again.returncode == 2 and "ReviewReport schema twice" in again.stderr
        assert _snapshot(work, fork) == before
        assert PipelineState.model_validate_json((work / "state.json").read_bytes()).llm.totals().calls == len(
            fake.calls
        )


def test_a_run_of_529s_names_the_overload_and_leaves_no_half_written_stage(tmp_path):
    work, fork = tmp_path / "work", tmp_path / "fork"
    with FakeAnthropic(lambda call: Reply.error(529)) as fake:
        result = promote("run", str(REQUEST), "--work", str(work), "--fork", str(fork), "--llm", "anthropic", fake=fake)
        assert result.returncode == 2
        assert "overloaded (HTTP 529)" in result.stderr and "promote resume" in result.stderr
        assert fake.http_requests == 5  # the first try and the SDK's 4 retries, then a clear stop
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert sorted(state.stages) == [1] and int(state.next_stage) == 2 and not state.llm.calls
    files = branch_tree(fork)
    assert not any(p.startswith("pkg/epp/framework/plugins/scheduling/scorer/evolvedadaptivescorer/") for p in files)
    assert "docs/promotion/translation-dictionary.md" in files


def test_without_a_key_the_run_is_offline(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    work = tmp_path / "work"
    result = subprocess.run(
        [sys.executable, "-c", CLI, "run", str(REQUEST), "--work", str(work), "--quiet"],
        check=False,
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((work / "run.json").read_text())["llm"]["engine"] == "offline"
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert not state.llm.calls and all(r.reviewer == "checklist" for rs in state.reviews.values() for r in rs)
