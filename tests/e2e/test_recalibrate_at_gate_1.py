"""A person re-calibrates a simulator-scale threshold at gate 1 (`param NAME: VALUE`): the deployed config carries it,
the plugin's code and the agreement figure keep BLIS's value, and the hazard stops blocking, on the artifacts' word."""

from __future__ import annotations

import json

import yaml

from bot.cli import main
from bot.model import PipelineState
from tests.conftest import BRANCH, REQUEST, RESULTS, git

CONFIG = "deploy/config/evolved-adaptive-scorer-epp-config.yaml"


def _blocking(work, gate):
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.open_gate == gate, state.status
    review = state.reviews[gate][-1]
    return {(f.check, f.line) for f in review.blocking}, state


def test_a_reason_that_recalibrates_thresholds_clears_their_hazard(tmp_path):
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--quiet", "--actor", "alice"]
    assert (
        main(["run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", "--fork", str(fork), *args]) == 0
    )
    before, _ = _blocking(work, 1)
    assert sum(check == "hazard.sim-scale-threshold" for check, _ in before) == 2

    # Raising the two thresholds alone leaves the taper between them at the evolved slope, which falls below the
    # cut's factor before the new cut: the plugin's Validate() refuses that, so gate 1 answers it at once.
    reason = "re-calibrate for 100-request pods\nparam loadHighThreshold: 70\nparam loadLowThreshold: 45"
    decisions = len(_blocking(work, 1)[1].decisions)
    assert main(["request-changes", "1", "--reason", reason, *args]) == 2
    assert len(_blocking(work, 1)[1].decisions) == decisions  # nothing recorded
    # Moving the taper's slope with them applies and clears both hazards; what else blocked still does.
    reason += "\nparam loadCoeff: 0.01"
    assert main(["request-changes", "1", "--reason", reason, *args]) == 0
    after, _ = _blocking(work, 1)
    assert not any(check.startswith(("hazard.sim-scale", "hazard.recalibration")) for check, _ in after), after
    assert {c for c, _ in after} <= {c for c, _ in before}

    config = yaml.safe_load(git(fork, "show", f"{BRANCH}:{CONFIG}"))
    params = next(p for p in config["plugins"] if p["type"] == "evolved-adaptive-scorer")["parameters"]
    assert (params["loadHighThreshold"], params["loadLowThreshold"]) == (70.0, 45.0)
    summary = json.loads(git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/translation.json"))
    assert summary["thresholds"]["loadHighThreshold"] == 7.0  # BLIS's value stays the plugin's default

    assert main(["request-changes", "1", "--reason", "param noSuchThing: 3", *args]) == 2
    decisions = len(_blocking(work, 1)[1].decisions)
    assert main(["request-changes", "1", "--reason", "param loadHighThreshold: -5", *args]) == 2  # Validate() refuses
    assert len(_blocking(work, 1)[1].decisions) == decisions  # nothing recorded
