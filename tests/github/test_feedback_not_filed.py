"""Stage 6 with a feedback issue GitHub refuses (GITHUB_TOKEN in another repository, admin-findings 2): the
promotion goes on to its PR, the issue's text stays in the branch, and the issue says why and how to file it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bot import PROJECT_ROOT
from tests.e2e.perturbed import scale_latency
from tests.github import actions_sim
from tests.github.actions_sim import REPO
from tests.github.test_github_flow import _comment, _label, _to_gate_1, state_of

pytestmark = pytest.mark.slow

REFUSED = {"message": "Resource not accessible by integration", "status": "403"}


@pytest.mark.parametrize(
    ("blis", "fix"),
    [
        ("acme/blis", "an `app-token:` of a GitHub App installed on acme (it owns both repositories)"),
        # verify2 item 4: an App token for inference-sim cannot write acme's fork, so none is advised
        ("inference-sim/inference-sim", "has another owner than acme/llm-d-router"),
    ],
)
def test_a_refused_feedback_issue_keeps_its_text_and_the_promotion_goes_on(sim, tmp_path, monkeypatch, blis, fix):
    if blis != "acme/blis":
        sim.fake.add_repo(blis)
        (sim.root / "config.yml").write_text(f"blis_repository: {blis}\nallow_sample_data: true\n")
    results = tmp_path / "root" / "examples" / "weighted-adaptive" / "results"
    shutil.copytree(PROJECT_ROOT / "examples" / "weighted-adaptive" / "results", results)
    assert scale_latency(results, "load-spikes", "request_latency", 1.6) > 0  # A1 is refuted
    monkeypatch.setattr(actions_sim, "PROJECT_ROOT", tmp_path / "root")
    sim.fake.fail("POST", f"/repos/{blis}/issues", status=403, times=50, body=REFUSED)

    number = _to_gate_1(sim)
    _label(sim, number, "gate-1-approved", "maria")
    _comment(sim, number, "maria", "/approve")
    _label(sim, number, "gate-3-approved", "maria")

    state = state_of(sim, number)
    assert state.status.value == "done", state.failure
    assert not sim.fake.state.repos[blis].issues
    summary = state.stages[6].summary
    assert f"2 feedback issues could not be filed (POST issue in {blis}: GitHub answered 403" in summary
    paths = [p.strip("`") for p in summary.split("the text is kept in ")[1].split(": ")[0].split(", ")]
    assert [p.rsplit("/", 2)[1:] for p in paths] == [["feedback", "A1.md"], ["feedback", "B1.md"]], summary
    assert f"file them in {blis} by hand" in summary and fix in summary, summary
    assert "installed on inference-sim" not in summary
    [status] = [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status")]
    assert "could not be filed" in status and fix in status
    [pull] = sim.fake.pulls(REPO)
    show = ["git", "--git-dir", str(sim.fake.git_dir(REPO)), "show", f"refs/heads/{pull.head}:{paths[0]}"]
    kept = subprocess.run(show, capture_output=True, text=True, check=True).stdout
    assert kept.startswith("# [promotion 1 feedback] A1: ") and "findings/A1.md" in kept
