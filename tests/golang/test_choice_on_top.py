"""The instance the evolved logic chose is alone on top of the plugin's scores.

An llm-d maintainer's router (fixture ``router_skip_overloaded.go``) skips saturated instances with ``continue``
and leaves their score at 0, while a live instance's score can go negative; when every instance is saturated it
falls back to the least-loaded one with every score 0. The plugin gave the chosen instance the top score, but
tied: the skipped instance scored as high, and llm-d's picker takes one of the tied top scores at random, so it
sent requests to an instance the evolved code had excluded as saturated (77.0% agreement with the BLIS original
on the harness's sampled states, the rest blamed on metric staleness).
"""

from __future__ import annotations

import pytest

from .conftest import FIXTURES, passes_with_test, translate_path

SKIP_OVERLOADED = FIXTURES / "router_skip_overloaded.go"

_GO_TEST = """package {package}

import "testing"

func TestTheEvolvedChoiceIsAloneOnTop(t *testing.T) {{
	ids := []string{{"pod-busy", "pod-ok"}}
	// pod-busy was skipped as saturated (kept at 0); pod-ok, chosen, scored below it.
	got := endpointScores(routingDecision{{TargetInstance: "pod-ok", Scores: map[string]float64{{"pod-busy": 0, "pod-ok": -0.4}}}}, ids)
	if !(got[1] > got[0]) || got[1] > 1 || got[0] < 0 {{
		t.Fatalf("skipped instance ties or beats the choice: %v", got)
	}}
	// Every instance saturated: all scores 0, the choice the least-loaded fallback.
	got = endpointScores(routingDecision{{TargetInstance: "pod-busy", Scores: map[string]float64{{"pod-busy": 0, "pod-ok": 0}}}}, ids)
	if !(got[0] > got[1]) {{
		t.Fatalf("the fallback choice ties: %v", got)
	}}
	// Scores that already agree with the choice are kept as they are.
	got = endpointScores(routingDecision{{TargetInstance: "pod-ok", Scores: map[string]float64{{"pod-busy": 0.2, "pod-ok": 0.7}}}}, ids)
	if got[0] != 0.2 || got[1] != 0.7 {{
		t.Fatalf("scores in order changed: %v", got)
	}}
}}
"""


@pytest.fixture(scope="module")
def skip_overloaded(dictionary):
    return translate_path(SKIP_OVERLOADED, dictionary, "evolved-skip-overloaded")


@pytest.mark.slow
def test_a_skipped_or_fallback_choice_is_alone_on_top_in_go(skip_overloaded):
    _, _, tr = skip_overloaded
    passes_with_test(tr, "/evolved.go", "choice_on_top_test.go", lambda package: _GO_TEST.format(package=package))


@pytest.mark.slow
def test_the_plugin_decides_like_the_program_when_it_skips_saturated_instances(skip_overloaded):
    _, _, tr = skip_overloaded
    fid = tr.summary.fidelity
    assert fid is not None and fid.measured
    assert fid.agreement >= 0.95, fid.agreement
