"""The plugin hands the evolved code a seeded rng whenever it reads one, and a random pick below the top goes alone
on top.

A trial's power-of-3-choices router guarded its draws (``if ws.rng != nil { ws.rng.Intn(..) } else { rand.Intn(..)
}``). The plugin seeded ``ws.rng`` only for code drawing from it unchecked, so the guarded code drew from Go's
global source: its generated tests failed at random, its agreement with the BLIS original moved from one
translation to the next despite the harness's fixed seed, and the findings contradicted each other
(``safety.global-rand``: "draw from the receiver's rng, which the translator seeds"; ``translate.dead-code``:
"``ws.rng`` is never set in the plugin"). BLIS passes an rng in (NewRoutingPolicy), so the plugin now seeds one per
call (drawSeeds) whenever the evolved code reads it, and the nil fallback is the dead branch.

The same router picks the less loaded of two sampled endpoints while its scores rank every endpoint: its pick is
often below its own top score. endpointScores gave a random pick the top score tied with the best, and llm-d's
picker then sent half of those picks to the global best (trial: the least-loaded pod got 58.1% of the picks from the
evolved code, 79.1% from the plugin). A pick among tied top scores keeps the tie (the picker draws among them as
the code did); one below the top goes alone on top.

The nil fallback's ``rand.Intn`` then never runs, yet ``safety.global-rand`` still called it IMPORTANT ("the plugin's
choices cannot be reproduced", a Known limitation in the plugin README): a draw only in the dead fallback is dead
code, named once by ``translate.dead-code`` at the fallback; a draw anywhere else keeps its hazard.
"""

from __future__ import annotations

import json

import pytest

from bot.cli import main
from bot.golang import dead_code
from bot.golang.analyze import analyze
from bot.golang.dead_code import CHECK_DEAD_CODE
from bot.golang.generate import generate
from bot.golang.safety import CHECK_GLOBAL_RAND, check_evolved_text
from bot.golang.source import load_evolved_source
from bot.model import Severity

from .conftest import CORPUS, FIXTURES, passes_with_test, sandboxed_go, translate_path, write_module

GUARDED = FIXTURES / "router_power_of_two_guarded.go"
#: The evolved lines of the guard on ws.rng and of its nil fallback (``} else {``).
GUARD_LINE, FALLBACK_LINE = 72, 75
#: The evolved lines of the guarded draws: through ``ws.rng`` (when set), through math/rand's global source (nil).
RNG_DRAWS, GLOBAL_DRAWS = (73, 74), (76, 77)

_GO_TEST = """package {package}

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"

	k8stypes "k8s.io/apimachinery/pkg/types"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

// TestARandomPickKeepsATieOnTopOrGoesAloneOnTop: a pick among the tied top scores stays tied with them (the
// picker draws among them as the evolved code did); a pick below the top score goes alone on top.
func TestARandomPickKeepsATieOnTopOrGoesAloneOnTop(t *testing.T) {{
	ids := []string{{"pod-a", "pod-b", "pod-c"}}
	got := endpointScores(routingDecision{{TargetInstance: "pod-b", Scores: map[string]float64{{"pod-a": 1, "pod-b": 1, "pod-c": 0.5}}}}, ids)
	if got[0] != got[1] || !(got[1] > got[2]) {{
		t.Fatalf("a pick among tied top scores lost the tie: %v", got)
	}}
	got = endpointScores(routingDecision{{TargetInstance: "pod-b", Scores: map[string]float64{{"pod-a": 1, "pod-b": 0.5, "pod-c": 0.2}}}}, ids)
	if !(got[1] > got[0]) || !(got[1] > got[2]) || got[1] > 1 || got[2] < 0 {{
		t.Fatalf("a pick below the top score is not alone on top: %v", got)
	}}
}}

// TestThePluginPicksAsOftenAsTheEvolvedCode: over many requests on one pool, how often llm-d's max-score picker
// (a random one of the top scores) sends a request to each endpoint is how often the evolved code picks it.
func TestThePluginPicksAsOftenAsTheEvolvedCode(t *testing.T) {{
	var endpoints []scheduling.Endpoint
	for i, waiting := range []int{{0, 2, 4, 6}} {{
		m := &fwkdl.Metrics{{WaitingQueueSize: waiting, UpdateTime: time.Unix(1_700_000_000, 0)}}
		id := &fwkdl.EndpointMetadata{{ID: k8stypes.NamespacedName{{Name: fmt.Sprintf("pod-%d", i)}}}}
		endpoints = append(endpoints, scheduling.NewEndpoint(id, m, nil))
	}}
	const n = 20000
	s := {ctor}(DefaultParameters())
	state, routable := newRouterState(endpoints, s.keys)
	evolved := newPolicy(DefaultParameters())
	evolved.rng = rand.New(rand.NewSource(1))
	picker := rand.New(rand.NewSource(2))
	byEvolved, byPlugin := make([]int, len(routable)), make([]int, len(routable))
	for range n {{
		own := &routerState{{Snapshots: append([]routingSnapshot(nil), state.Snapshots...)}}
		target := evolved.Route(newBlisRequest(), own).TargetInstance
		for i, snap := range state.Snapshots {{
			if snap.ID == target {{
				byEvolved[i]++
			}}
		}}
		scores := s.Score(context.Background(), &scheduling.InferenceRequest{{}}, endpoints)
		best, top := math.Inf(-1), []int(nil)
		for i, ep := range routable {{
			switch v := scores[ep]; {{
			case v > best:
				best, top = v, []int{{i}}
			case v == best:
				top = append(top, i)
			}}
		}}
		byPlugin[top[picker.Intn(len(top))]]++
	}}
	for i := range routable {{
		evolvedShare, pluginShare := float64(byEvolved[i])/n, float64(byPlugin[i])/n
		if math.Abs(evolvedShare-pluginShare) > 0.02 {{
			t.Errorf("endpoint %d: the evolved code picks it %.1f%% of the time, the plugin %.1f%%", i,
				100*evolvedShare, 100*pluginShare)
		}}
	}}
}}
"""


def _ctor(tr) -> str:
    import re

    code = "\n".join(t for p, t in tr.files.items() if p.endswith(".go"))
    return re.search(r"^func (New\w+)\(params Parameters\)", code, re.M).group(1)


@pytest.fixture(scope="module")
def guarded(dictionary):
    return translate_path(GUARDED, dictionary)


def test_guarded_draws_get_a_seeded_rng_per_call(dictionary):
    src = load_evolved_source(GUARDED)
    gen = generate(src, analyze(src, dictionary), dictionary, "t-rngset")
    main_go = gen.files[gen.main_go]
    assert gen.draws and "draws.next()" in main_go and "sync.Mutex" not in main_go


def test_the_nil_fallback_is_the_dead_branch_not_the_draws(dictionary):
    src = load_evolved_source(GUARDED)
    gen = generate(src, analyze(src, dictionary), dictionary, "t-rngset")
    dead = {f.source_line: f.message for f in gen.findings if f.check == CHECK_DEAD_CODE}
    assert not any("never set in the plugin" in m and "rng" in m for m in dead.values()), dead
    said = dead.get(FALLBACK_LINE, "")
    assert "the fallback when `ws.rng` is nil is never taken" in said, dead
    assert "hands the evolved code a seeded rng on every call" in said, said


def test_a_guard_on_rng_being_nil_is_the_dead_branch(analyze_text):
    text = GUARDED.read_text(encoding="utf-8").replace("if ws.rng != nil {", "if ws.rng == nil {", 1)
    an = analyze_text(text, "router_power_of_two_guarded.go")
    (found,) = [f for f in dead_code.findings(an) if f.source_line == GUARD_LINE]
    assert found.message.startswith("the branch on `ws.rng == nil` is never taken"), found.message


def test_a_global_draw_only_in_the_dead_fallback_is_dead_code_not_a_hazard(guarded):
    _, _, tr = guarded
    assert [f for f in tr.findings if f.check == CHECK_GLOBAL_RAND] == []
    named = [f.source_line for f in tr.findings if f.source_line in (FALLBACK_LINE, *GLOBAL_DRAWS)]
    assert named == [FALLBACK_LINE], named  # the fallback once, as dead code; its draws not again
    readme = next(t for p, t in tr.files.items() if p.endswith("/README.md"))
    assert "process-global source" not in readme


def test_a_global_draw_outside_a_nil_fallback_keeps_its_hazard(dictionary):
    _, _, tr = translate_path(CORPUS / "r02_pattern_b_prefix_decay.go", dictionary)
    draws = [(f.severity, f.source_line) for f in tr.findings if f.check == CHECK_GLOBAL_RAND]
    assert draws == [(Severity.IMPORTANT, 149)]  # ties[rand.Intn(len(ties))]


@pytest.mark.parametrize(
    ("guard", "live"),
    [
        ("if ws.rng != nil {", ()),  # the fallback (else) is dead
        ("if ws.rng == nil {", GLOBAL_DRAWS),  # the body (ws.rng's draws) is dead; the else, its global draws, live
        ("if len(snapshots) > 2 {", GLOBAL_DRAWS),  # no guard on ws.rng: nothing is dead
    ],
)
def test_only_global_draws_in_a_dead_nil_fallback_are_dropped(analyze_text, guard, live):
    text = GUARDED.read_text(encoding="utf-8").replace("if ws.rng != nil {", guard, 1)
    found = check_evolved_text(text, GUARDED.name)
    kept = dead_code.without_dead_draws(found, analyze_text(text, GUARDED.name))
    assert tuple(f.source_line for f in kept if f.check == CHECK_GLOBAL_RAND) == live
    assert len(kept) == len(found) - (len(GLOBAL_DRAWS) - len(live))


def test_a_global_draw_beside_live_code_on_the_fallbacks_brace_line_keeps_its_hazard(analyze_text):
    """A line shared with live code is not wholly dead: the draw stays reported (the check errs towards it)."""
    text = GUARDED.read_text(encoding="utf-8").replace(
        "second = ws.rng.Intn(len(snapshots) - 1)\n\t\t} else {", "second = rand.Intn(len(snapshots) - 1) } else {", 1
    )
    found = check_evolved_text(text, GUARDED.name)
    kept = dead_code.without_dead_draws(found, analyze_text(text, GUARDED.name))
    assert [f.source_line for f in kept if f.check == CHECK_GLOBAL_RAND] == [RNG_DRAWS[1]]


@pytest.mark.slow
def test_a_random_pick_keeps_a_tie_or_goes_alone_on_top_and_the_plugin_picks_as_often_as_the_code(guarded):
    _, _, tr = guarded
    passes_with_test(
        tr, "/evolved.go", "rng_set_test.go", lambda package: _GO_TEST.format(package=package, ctor=_ctor(tr))
    )


@pytest.mark.slow
def test_two_translations_agree_alike_and_test_alike(tmp_path):
    """The trial's translations moved (46.0/47.2/44.7%) and failed different generated tests from run to run."""
    seen = []
    for run in ("one", "two"):
        out = tmp_path / run
        assert main(["translate", str(GUARDED), "--out", str(out)]) in (0, 1)
        agreement = json.loads((out / "translation.json").read_text())["summary"]["fidelity"]["agreement"]
        log = (out / "toolchain.log").read_text(encoding="utf-8").splitlines()
        results = sorted(line.split(" (")[0] for line in log if line.startswith(("--- PASS", "--- FAIL")))
        seen.append((agreement, results))
    assert seen[0] == seen[1], seen
    assert seen[0][1] and not [r for r in seen[0][1] if r.startswith("--- FAIL")], seen[0][1]


@pytest.mark.slow
def test_the_generated_tests_pass_run_after_run(guarded, tmp_path):
    _, _, tr = guarded
    module = write_module(tr, tmp_path)
    package = "./" + tr.summary.package_dir
    for _ in range(5):
        res = sandboxed_go(module, tmp_path, ["test", "-count=1", package])
        assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
