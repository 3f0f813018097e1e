"""The generated unit tests can fail when the behaviour they name breaks (Go review, finding 4).

a03 (corpus) is a stateful admitter: a tenant over its decayed fair share is rejected. Its behaviour table once
held six "admit" rows, each on a fresh plugin, so replacing the rejection with "admit" failed only the threshold
test, and removing the decay failed nothing. The table now replays sequences on one plugin, found by the probe
search: one the plugin rejects, and one replayed further apart that it decides differently. The mutations below
are the review's, applied to the generated evolved.go and run with the real Go toolchain.
"""

from __future__ import annotations

import pytest

from bot.golang.analyze import analyze
from bot.golang.never_binds import never_binds
from bot.golang.source import load_evolved_source, parse_evolved_source

from .conftest import CORPUS, EXAMPLE, run_probe_test, sandboxed_go, translate_path, write_module
from .kv_chain import program_text, write_program

A03 = CORPUS / "a03_openevolve_tenant_fair_share.py"
NEVER_REJECT = ('return false, "tenant over fair share"', 'return true, ""')
NO_DECAY = ("decay := math.Exp(-dt / t.params.DtDivisor)", "decay := math.Exp(-0 * dt / t.params.DtDivisor)")


def _go_test(module, package: str, tmp_path) -> str:
    res = sandboxed_go(module, tmp_path, ["test", "-count=1", "./" + package])
    return res.stdout + res.stderr


@pytest.mark.slow
def test_an_admitters_behaviour_test_fails_when_it_never_rejects_or_forgets_nothing(dictionary, tmp_path):
    _, _, tr = translate_path(A03, dictionary)
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    behaviour = test.split("func TestBehaviour", 1)[1].split("func TestThresholds", 1)[0]
    assert '"reject"' in behaviour and "warmups:" in behaviour  # a sequence on one plugin that it rejects
    assert " 0.2 s apart " in behaviour and " 2 s apart " in behaviour  # the same one further apart
    # Not the row that held a tenant silent for 800 s against tenant-a's fair share (hazard.lifetime-count).
    assert "200 s apart (1 from tenant-b, 3 from tenant-a), a request of priority -1 from tenant-a" not in behaviour
    module = write_module(tr, tmp_path)
    evolved = module / tr.summary.package_dir / "evolved.go"
    original = evolved.read_text(encoding="utf-8")
    for old, new in (NEVER_REJECT, NO_DECAY):
        assert old in original, old
        evolved.write_text(original.replace(old, new), encoding="utf-8")
        out = _go_test(module, tr.summary.package_dir, tmp_path)
        assert "--- FAIL: TestBehaviour" in out, (new, out[-3000:])
        assert "build failed" not in out and "[setup failed]" not in out, out[-3000:]


def test_a_floor_that_never_binds_says_so_and_for_which_values_it_would(dictionary):
    """The scorer's KV floor: max(0.3, 1 - 2*(kv - 0.82)) is at least 0.64 for a fraction, so 0.3 never applies."""
    an = analyze(load_evolved_source(EXAMPLE), dictionary, None)
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    why = never_binds(an, defaults)
    assert sorted(why) == ["kvUtilizationFloor"], why
    text = why["kvUtilizationFloor"]
    assert text.startswith("it never binds at the default values:"), text
    assert "at least 0.64 for every KVUtilization in (0.82, 1]" in text, text
    for bound in (
        "kvUtilizationFloor above 0.64",
        "kvUtilizationCoeff above 3.89",
        "kvUtilizationThreshold below 0.65",
    ):
        assert bound in text, text
    # Once it can bind (a steeper taper), it is no longer reported as unable to.
    assert "kvUtilizationFloor" not in never_binds(an, defaults | {"kvUtilizationCoeff": 5.0})


def test_the_bundled_examples_report_says_the_floor_never_binds(dictionary):
    from bot.golang.translate import CHECK_UNTESTED

    _, _, tr = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    (floor,) = [f for f in tr.findings if f.check == CHECK_UNTESTED and "`kvUtilizationFloor`" in f.message]
    assert "never binds at the default values" in floor.message and "no llm-d input among" not in floor.message


def _kv_floor_advice(dictionary, text: str) -> str | None:
    an = analyze(parse_evolved_source(text, "best_program.py"), dictionary, None)
    return never_binds(an, {th.param: th.value for th in an.thresholds if th.param}).get("kvUtilizationFloor")


def test_a_floor_in_an_else_if_is_judged_on_what_the_earlier_branches_leave_it(dictionary):
    """Found by a newcomer (newuser4, item 4): the floor of `else if KVU > 0.7 { max(0.2, 1-1.5*(KVU-0.7)) }`
    after `if KVU > 0.9` was said to bind above 0.55 (KVU up to 1); it sees only (0.7, 0.9], so it binds only
    above 0.7, and the coefficient and threshold values named (2.67, 0.467) never bound. A value that binds only
    by breaking a relation Validate() checks (a coefficient of 4 and more inverts the policy) is no advice."""
    text = _kv_floor_advice(dictionary, program_text())
    assert text is not None and "at least 0.7 for every KVUtilization in (0.7, 0.9]" in text, text
    assert text.endswith("it would bind with kvUtilizationFloor above 0.7"), text
    flipped = program_text().replace("if snap.KVUtilization > 0.9 {", "if 0.9 < snap.KVUtilization {")
    assert _kv_floor_advice(dictionary, flipped) == text
    # An earlier branch testing the value some other way leaves an unknown range: nothing rather than a guess.
    for other in ("snap.KVUtilization > 0.9 && q > 3", "snap.KVUtilization*2 > 1.8"):
        guessed = program_text().replace("if snap.KVUtilization > 0.9 {", f"if {other} {{")
        assert _kv_floor_advice(dictionary, guessed) is None, other
    # One on another value leaves this one's range as it was.
    unrelated = program_text().replace(
        "\t\tif snap.KVUtilization > 0.9 {",
        "\t\tif q > 50 {\n\t\t\tadj *= 0.1\n\t\t} else if snap.KVUtilization > 0.9 {",
    )
    assert "in (0.7, 0.9]" in (_kv_floor_advice(dictionary, unrelated) or "")


@pytest.mark.slow
def test_the_floor_value_the_advice_names_changes_the_compiled_plugins_scores(dictionary, tmp_path):
    """newuser4, item 4, on the compiled plugin: a floor just above the named 0.7 changes the score of an endpoint
    at KVU 0.89; one just below it, and the 0.6 the old advice allowed, change nothing."""
    import re

    write_program(tmp_path / "my")
    _, _, tr = translate_path(tmp_path / "my" / "best_program.py", dictionary, "queue-kv-pressure-scorer")
    bound = float(
        re.search(r"kvUtilizationFloor above ([\d.]+)$", _kv_floor_advice(dictionary, program_text())).group(1)
    )
    floors = [0.2, 0.6, bound - 0.01, bound + 0.05]
    pkg = tr.summary.package_dir.rsplit("/", 1)[-1]
    probe = _FLOOR_PROBE.replace("PKG", pkg).replace("FLOORS", ", ".join(map(str, floors)))
    out = run_probe_test(tr, tmp_path, "zz_floor_probe_test.go", probe, "TestFloorProbe")
    scores = re.findall(r"(?m)^PROBE (\S+) (\S+)$", out)
    assert len(scores) == len(floors), out
    default, *others = scores
    assert [s == default for s in others] == [True, True, False], scores


_FLOOR_PROBE = """package PKG

import (
	"fmt"
	"testing"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

func TestFloorProbe(t *testing.T) {
	for _, floor := range []float64{FLOORS} {
		p := DefaultParameters()
		p.KVUtilizationFloor = floor
		endpoints := []scheduling.Endpoint{
			testEndpoint("pod-a", &fwkdl.Metrics{KVCacheUsagePercent: 0.89}),
			testEndpoint("pod-b", &fwkdl.Metrics{KVCacheUsagePercent: 0.5}),
		}
		got := scoreWith(t, p, endpoints, &scheduling.InferenceRequest{RequestID: "r-1", RequestSizeBytes: 2048})
		fmt.Printf("PROBE %v %v\\n", got["pod-a"], got["pod-b"])
	}
}
"""
