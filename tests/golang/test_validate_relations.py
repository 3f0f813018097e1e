"""The generated Validate(), run with the real Go toolchain: checks across parameters that keep the evolved policy's
direction, a divisor that must stay > 0, and no condition that can never matter (Go review W3, items 1, 5, 7)."""

from __future__ import annotations

import json
import re

import pytest

from bot.golang.param_relations import relations
from bot.golang.params import param_specs

from .conftest import CORPUS, EXAMPLE, FIXTURES, run_probe_test, translate_path
from .kv_chain import KV_TAPER, program_text, write_program

HYSTERESIS = FIXTURES / "admission_hysteresis.go"

_PROBE = """package {pkg}

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestValidateProbe(t *testing.T) {{
	for _, raw := range []string{{{cases}}} {{
		p := DefaultParameters()
		if err := json.Unmarshal([]byte(raw), &p); err != nil {{
			t.Fatal(err)
		}}
		msg := "ok"
		if err := p.Validate(); err != nil {{
			msg = err.Error()
		}}
		fmt.Printf("VALIDATE %s\\n", msg)
	}}
}}
"""


def _validate(tr, tmp_path, cases: list[dict]) -> list[str]:
    """What the generated Validate() says for each set of values (the rest at their defaults): "ok" or its error."""
    pkg = tr.summary.package_dir.rsplit("/", 1)[-1]
    probe = _PROBE.format(pkg=pkg, cases=", ".join(json.dumps(json.dumps(c)) for c in cases))
    out = run_probe_test(tr, tmp_path, "zz_validate_probe_test.go", probe, "TestValidateProbe")
    return re.findall(r"(?m)^VALIDATE (.*)$", out)


@pytest.mark.slow
def test_validate_refuses_parameter_sets_that_make_the_scorer_prefer_the_busier_endpoint(dictionary, tmp_path):
    """Found by a Go reviewer (item 1): `loadHighThreshold: 70`, the README's own gate-1 example, was accepted and
    the plugin scored the busier endpoint higher (the taper `1 - loadCoeff*(load-loadLowThreshold)` goes below the
    cut's 0.4 long before 70); so were `loadLowThreshold > loadHighThreshold` and `loadCoeff: 50`."""
    _, _, tr = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    said = _validate(
        tr,
        tmp_path,
        [
            {"loadHighThreshold": 70},
            {"loadLowThreshold": 10, "loadHighThreshold": 5},
            {"loadCoeff": 50},
            {},
            {"loadHighThreshold": 56, "loadLowThreshold": 36, "loadCoeff": 0.015},  # the finding's own fix
            {"loadHighThreshold": 9},  # the README's example now
        ],
    )
    assert said[0].startswith(
        "loadCoeff*(loadHighThreshold-loadLowThreshold) must be <= 1-loadFactor, got 0.12*(70-4.5)"
    )
    assert said[1] == (
        "loadLowThreshold must be <= loadHighThreshold (the evolved logic compares `load` with loadHighThreshold first "
        "and with loadLowThreshold only in the branch after it), got 10 > 5"
    )
    assert said[2].startswith("loadCoeff*(loadHighThreshold-loadLowThreshold) must be <= 1-loadFactor, got 50*(7-4.5)")
    assert said[3:] == ["ok", "ok", "ok"]


def test_the_generated_tests_assert_no_move_that_validate_refuses(dictionary):
    """Found by a Go reviewer (item 1): a generated threshold test moved loadHighThreshold to 12 and asserted the
    endpoint "scores lower" for the larger cut, locking in the inversion. Every move a generated test makes is a
    set of values Validate() accepts, so no such case can be generated."""
    _, an, tr = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    rels = relations(an)
    assert {r.kind for r in rels} == {"order", "taper"}
    fields = {p.field: p.name for p in param_specs(an, None, False)}
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go") and "move:" in t)
    moves = re.findall(r"move:\s+func\(p \*Parameters\) \{ p\.(\w+) = ([\d.]+) \}", test)
    assert moves and any(f == "LoadHighThreshold" for f, _ in moves)
    for field, value in moves:
        assert not [r for r in rels if r.broken({fields[field]: float(value)})], (field, value)
    assert "moved to 12 it does not, and pod-a scores lower" not in test


def test_the_relations_come_from_the_codes_shape_not_from_the_programs_names(analyze_text):
    """The same shape under other names gets the same checks; a taper with a floor (math.Max) or a chain of
    unrelated values gets none, and neither does a shape whose evolved values already break it."""
    body = "\t\tif q > 20 {\n\t\t\tw *= 0.5\n\t\t} else if q > 10 {\n\t\t\tw *= 1.0 - 0.04*(q-10)\n\t\t}\n"
    text = (CORPUS / "r01_pattern_a_penalties.go").read_text()
    two_cuts = (
        "\t\tif load > 7 {\n\t\t\tscores[snap.ID] *= 0.4\n\t\t} else if load > 4.5 {\n"
        "\t\t\tscores[snap.ID] *= 1.0 - 0.12*(load-4.5)\n\t\t}\n"
    )
    assert two_cuts in text
    found = {(r.kind, r.names) for r in relations(analyze_text(text))}
    assert (
        "taper",
        (("low", "loadLowThreshold"), ("high", "loadHighThreshold"), ("coeff", "loadCoeff"), ("factor", "loadFactor")),
    ) in found
    renamed = text.replace(two_cuts, body.replace("q", "load").replace("w *=", "scores[snap.ID] *="))
    [order, taper] = relations(analyze_text(renamed))
    assert order.broken({"loadLowThreshold": 21}) and not order.broken({"loadLowThreshold": 19})
    assert taper.broken({"loadCoeff": 0.06}) and not taper.broken({"loadCoeff": 0.05})  # 0.05*10 = 1-0.5 holds
    floored = text.replace("1.0 - 0.12*(load-4.5)", "math.Max(0.2, 1.0-0.12*(load-4.5))")
    [_, clamped] = relations(analyze_text(floored))  # judged by its floored value at the cut (see below)
    assert clamped.clamps == (("max", "clamp0"),) and not clamped.broken({})
    steep = text.replace("1.0 - 0.12*(load-4.5)", "1.0 - 0.5*(load-4.5)")  # 0.5*2.5 > 0.6 as evolved
    assert [r.kind for r in relations(analyze_text(steep))] == ["order"]


def _taper(an):
    return next((r for r in relations(an) if r.kind == "taper"), None)


def test_a_floored_or_clamped_taper_after_a_cut_is_judged_by_its_value_at_the_cut(analyze_text):
    """Found by a newcomer (newuser4, item 1): with the taper floored, `math.Max(0.2, 1-c*(KVU-0.7))` after a 0.5
    cut at 0.9, `kvUtilizationCoeff: 4` was accepted: KVU 0.89 scored 0.24 and KVU 0.91 0.5. The relation is the
    clamped value at the cut, max(floor, 1-c*(high-low)) >= factor, whichever way round and however nested the
    math.Max/math.Min are, and in a longer else-if chain; a floor at or above the factor never inverts."""
    coeff = "kvUtilizationCoeff"
    for taper in (
        KV_TAPER,
        "math.Max(1.0-1.5*(snap.KVUtilization-0.7), 0.2)",
        "max(0.2, 1.0-1.5*(snap.KVUtilization-0.7))",
        "math.Min(1.0, math.Max(0.2, 1.0-1.5*(snap.KVUtilization-0.7)))",
        "math.Max(math.Min(0.95, 1.0-1.5*(snap.KVUtilization-0.7)), 0.2)",
    ):
        rel = _taper(analyze_text(program_text(taper), "best_program.py"))
        assert rel is not None and rel.clamps, taper
        assert rel.broken({coeff: 4}) and not rel.broken({coeff: 2.5}) and not rel.broken({}), taper  # 0.5 >= 0.5
        assert rel.owner == coeff and rel.broken({coeff: rel.bad()}), taper
    rel = _taper(analyze_text(program_text(), "best_program.py"))
    assert rel.message({coeff: 4}).startswith(
        "max(kvUtilizationFloor, 1-kvUtilizationCoeff*(kvUtilizationHighThreshold-kvUtilizationLowThreshold)) must "
        "be >= kvUtilizationFactor, got max(0.2, 1-4*(0.9-0.7)) < 0.5"
    )
    assert rel.broken({coeff: 4, "kvUtilizationFloor": 0.4}) and not rel.broken({coeff: 4, "kvUtilizationFloor": 0.5})
    chained = program_text().replace(
        "\t\tif snap.KVUtilization > 0.9 {",
        "\t\tif q > 50 {\n\t\t\tadj *= 0.1\n\t\t} else if snap.KVUtilization > 0.9 {",
    )
    assert _taper(analyze_text(chained, "best_program.py")).broken({coeff: 4})
    # A floor at or above the cut's factor keeps the direction whatever the coefficient: nothing to refuse.
    assert _taper(analyze_text(program_text(KV_TAPER.replace("0.2", "0.6")), "best_program.py")) is None


@pytest.mark.slow
def test_the_newcomers_floored_taper_refuses_a_coefficient_that_inverts_it(dictionary, tmp_path):
    """newuser4, item 1, end to end: the generated Validate() (real Go toolchain) and gate 1's `param` check both
    refuse `kvUtilizationCoeff: 4` on the newcomer's program, naming the relation, as without the floor."""
    from bot.model import PromotionRequest
    from bot.review.change_request import parameter_checks, refusal

    request = PromotionRequest.load(write_program(tmp_path / "my"))
    checks = parameter_checks(request, dictionary)
    why = refusal(1, "param kvUtilizationCoeff: 4", parameters=sorted(checks), checks=checks)
    assert why is not None and "nothing was recorded" in why and "Validate() refuses" in why, why
    assert "`param kvUtilizationCoeff: 4` cannot apply with the values in effect: max(kvUtilizationFloor, " in why
    assert "got max(0.2, 1-4*(0.9-0.7)) < 0.5" in why, why
    assert refusal(1, "param kvUtilizationCoeff: 2.5", parameters=sorted(checks), checks=checks) is None
    _, _, tr = translate_path(tmp_path / "my" / "best_program.py", dictionary, "queue-kv-pressure-scorer")
    said = _validate(
        tr,
        tmp_path,
        [
            {"kvUtilizationCoeff": 4},
            {},
            {"kvUtilizationCoeff": 2.5},
            {"kvUtilizationFloor": 0.5, "kvUtilizationCoeff": 4},
        ],
    )
    assert said[0].startswith(
        "max(kvUtilizationFloor, 1-kvUtilizationCoeff*(kvUtilizationHighThreshold-kvUtilizationLowThreshold)) must "
        "be >= kvUtilizationFactor, got max(0.2, 1-4*(0.9-0.7)) < 0.5"
    ), said
    assert said[1:] == ["ok", "ok", "ok"]


@pytest.mark.slow
def test_a_divisor_must_be_positive_and_is_not_called_a_coefficient(dictionary, tmp_path):
    """Found by a Go reviewer (item 5): a03's `math.Exp(-dt / 5.0)` became `dtCoeff`, "the coefficient of `-dt`",
    with `dtCoeff: 0` accepted (-dt/0 = -Inf wipes the history on every call). A divisor says what it is and
    Validate() refuses 0."""
    _, _, tr = translate_path(CORPUS / "a03_openevolve_tenant_fair_share.py", dictionary)
    code = next(t for p, t in tr.files.items() if p.endswith("evolved.go"))
    params = next(t for t in tr.files.values() if "type Parameters struct" in t)
    assert "math.Exp(-dt / t.params.DtDivisor)" in code
    assert "coefficient of `-dt`" not in params and "DtDivisor is the divisor of `-dt`" in params
    said = _validate(tr, tmp_path, [{"dtDivisor": 0}, {"dtDivisor": 0.5}])
    assert said == ["dtDivisor is a divisor and must be > 0, got 0", "ok"]


@pytest.mark.slow
def test_s01_validate_has_no_condition_that_can_never_matter(dictionary, tmp_path):
    """Found by a Go reviewer (item 7): s01's Validate() refused realtime/interactive, then listed them among the
    accepted classes in the next check. The accepted list names only BLIS's classes; each check still decides."""
    _, _, tr = translate_path(CORPUS / "s01_slo_aging_scheduler.go", dictionary)
    params = next(t for t in tr.files.values() if "func (p Parameters) Validate()" in t)
    accepted = next(ln for ln in params.splitlines() if 'p.IncumbentSLOClass != "critical"' in ln)
    assert "realtime" not in accepted and "interactive" not in accepted
    said = _validate(tr, tmp_path, [{"incumbentSLOClass": c} for c in ("realtime", "interactive", "crtical", "batch")])
    assert said[0] == 'incumbentSLOClass "realtime" is a BLIS v1 name; use critical or standard'
    assert said[1] == 'incumbentSLOClass "interactive" is a BLIS v1 name; use critical or standard'
    assert said[2].startswith('incumbentSLOClass "crtical" is not a BLIS SLO class')
    assert said[3] == "ok"


@pytest.mark.slow
def test_a02_validate_and_gate_1_refuse_a_divisor_at_0_or_past_its_sign(dictionary, tmp_path):
    """maint5 item 4: a02's Validate() only checked >= 0, so qdThreshold 0 (one waiting request sheds 100%),
    kvThreshold 0 (0/0 = NaN: never sheds) and rampStart >= 1 (`(sat-p)/(1-p)` never sheds, or +Inf) were accepted,
    and so was gate 1's `param` re-calibration to them. A parameter the code divides by is refused at the value
    that makes the divisor 0 and beyond, on the real Go toolchain and at gate 1 alike, with the bound named."""
    from bot.review.change_request import refusal

    _, an, tr = translate_path(CORPUS / "a02_gaie_saturation_shedder.go", dictionary, "evolved-saturation-shedder")
    said = _validate(
        tr,
        tmp_path,
        [{"qdThreshold": 0}, {"kvThreshold": 0}, {"rampStart": 1}, {"rampStart": 3}, {}, {"rampStart": 0.95}],
    )
    assert said[0] == "qdThreshold is a divisor and must be > 0, got 0"
    assert said[1] == "kvThreshold is a divisor and must be > 0, got 0"
    ramp = (
        "rampStart is in the divisor `1 - rampStart` and must be < 1 (at 1 the divisor is 0, and beyond it its sign "
        "flips from the one it has at the evolved 0.6), got "
    )
    assert said[2:4] == [ramp + "1", ramp + "3"], said
    assert said[4:] == ["ok", "ok"]
    checks = {s.name: s.checks for s in param_specs(an, None, False)}
    for line, bound in (("rampStart: 3", "must be < 1"), ("kvThreshold: 0", "must be > 0")):
        why = refusal(1, f"param {line}", parameters=sorted(checks), checks=checks)
        assert why is not None and f"`param {line}` is out of range" in why and bound in why, why
    assert refusal(1, "param rampStart: 0.7", parameters=sorted(checks), checks=checks) is None


def test_a_divisor_keeps_the_sign_it_has_at_its_evolved_value_whatever_the_names(analyze_text):
    """The rule comes from the shape of the denominator (one parameter plus or minus numbers, through parentheses,
    a unary minus and a conversion), not from a02's names; two parameters or a signal in it decide no bound."""
    from bot.golang.divisors import divisor_checks

    an = analyze_text(
        """package sim

type Gate struct {
	Span  float64
	Floor int
	Mid   float64
	Other float64
}

func NewGate() *Gate { return &Gate{Span: 3, Floor: 4, Mid: 0.5, Other: 2} }

func (g *Gate) Admit(req *Request, state *RouterState) (bool, string) {
	q := float64(len(state.Snapshots))
	a := q / (g.Span - 1.5)
	b := q / -(2 - float64(g.Floor))
	c := q / (g.Mid + g.Other)
	d := q / (g.Mid - q)
	if a+b+c+d > 1 {
		return false, "busy"
	}
	return true, ""
}
""",
        "gate.go",
    )
    checks = {n: [c["cond"] for c in cs] for n, cs in divisor_checks(an).items()}
    assert checks == {"span": ["p.Span <= 1.5"], "floor": ["p.Floor <= 2"]}, checks


_HYST_MESSAGE = (
    "pressureLowThreshold must be <= pressureMidThreshold (the evolved logic sets `h.shedding = true` when "
    "`pressure >= pressureMidThreshold` and `h.shedding = false` when `pressure < pressureLowThreshold`, and keeps "
    "it between the two cuts; with pressureLowThreshold above pressureMidThreshold a `pressure` between them meets "
    "both, so `h.shedding` no longer keeps its state there and can flip on and off from one request to the next), "
    "got "
)


def _hysteresis(an):
    return [r for r in relations(an) if r.kind == "hysteresis"]


def test_a_hysteresis_pairs_leave_cut_must_not_pass_its_enter_cut(analyze_text):
    """Found by a researcher's trial (trial 4, admit): `param pressureLowThreshold: 1.2` was applied at gate 1 and
    Validate() only checked `>= 0`; with the leave cut (0.7) above the enter cut (1.0) the shedder flips on and off on
    every request between them. A receiver flag set true under `x >= A` and false under `x < B` (the same x) is a
    pair whose cuts keep their order, B <= A, whatever the program calls them and wherever the two ifs sit."""
    text = HYSTERESIS.read_text(encoding="utf-8")
    [rel] = _hysteresis(analyze_text(text, "best_program.go"))
    assert dict(rel.names) == {"low": "pressureLowThreshold", "high": "pressureMidThreshold"}
    assert rel.owner == "pressureLowThreshold" and rel.broken({"pressureLowThreshold": rel.bad()})
    assert rel.broken({"pressureLowThreshold": 1.2}) and not rel.broken({"pressureLowThreshold": 1.0})
    assert rel.broken({"pressureMidThreshold": 0.5}) and not rel.broken({"pressureMidThreshold": 1.3})
    assert rel.message({"pressureLowThreshold": 1.2}) == _HYST_MESSAGE + "1.2 > 1"
    nested = (
        "\tif h.shedding {\n\t\tif pressure < 0.7 {\n\t\t\th.shedding = false\n\t\t}\n"
        "\t} else if pressure >= 1.0 {\n\t\th.shedding = true\n\t}\n"
    )
    assert nested in text
    for shape in (
        # one after the other, the leave first; and the enter written as `>`, its value on the left
        "\tif pressure > 1.0 {\n\t\th.shedding = true\n\t}\n\tif pressure <= 0.7 {\n\t\th.shedding = false\n\t}\n",
        "\tif 0.7 > pressure {\n\t\th.shedding = false\n\t}\n\tif (pressure >= 1.0) {\n\t\th.shedding = true\n\t}\n",
        # nested under the flag the other way round
        (
            "\tif !h.shedding {\n\t\tif pressure >= 1.0 {\n\t\t\th.shedding = true\n\t\t}\n"
            "\t} else if pressure < 0.7 {\n\t\th.shedding = false\n\t}\n"
        ),
    ):
        [rel] = _hysteresis(analyze_text(text.replace(nested, shape), "best_program.go"))
        assert dict(rel.names) == {"low": "pressureLowThreshold", "high": "pressureMidThreshold"}, shape
        assert rel.broken({"pressureLowThreshold": 1.2}) and not rel.broken({}), shape
    # The flag set true under the low cut (a "calm" flag): the cut it is set under is then the one that must stay low.
    calm = nested.replace("= false", "= CLEAR").replace("= true", "= false").replace("= CLEAR", "= true")
    [rel] = _hysteresis(analyze_text(text.replace(nested, calm), "best_program.go"))
    assert dict(rel.names) == {"low": "pressureLowThreshold", "high": "pressureMidThreshold"}
    assert rel.broken({"pressureLowThreshold": 1.2}) and "`h.shedding = true` when `pressure < " in rel.message()
    for not_a_pair in (
        nested.replace("pressure >= 1.0", "pressure < 1.0"),  # both cuts the same way: no band between them
        nested.replace("pressure >= 1.0", "float64(n) >= 1.0"),  # two different values
        nested.replace("= true", "= false"),  # the flag is never set
        nested.replace("h.shedding = true", "shed := true\n\t\t_ = shed"),  # a local, gone by the next request
    ):
        assert _hysteresis(analyze_text(text.replace(nested, not_a_pair), "best_program.go")) == [], not_a_pair


def test_gate_1_refuses_a_param_line_that_inverts_a_hysteresis_pair(dictionary):
    """trial 4 (admit) at gate 1: `param pressureLowThreshold: 1.2` was "Applied: deployed with pressureLowThreshold
    = 1.2" with 0 CRITICAL/0 IMPORTANT. It is refused as the chain cuts' inversion is, with the values in effect."""
    from bot.review.change_request import refusal

    _, an, _ = translate_path(HYSTERESIS, dictionary)
    checks = {s.name: s.checks for s in param_specs(an, None, False)}
    why = refusal(1, "param pressureLowThreshold: 1.2", parameters=sorted(checks), checks=checks)
    assert why is not None and "nothing was recorded" in why and "Validate() refuses" in why, why
    assert "`param pressureLowThreshold: 1.2` cannot apply with the values in effect: " + _HYST_MESSAGE in why, why
    assert "got 1.2 > 1" in why
    why = refusal(1, "param pressureMidThreshold: 0.5", parameters=sorted(checks), checks=checks)
    assert why is not None and "got 0.7 > 0.5" in why, why
    assert refusal(1, "param pressureLowThreshold: 0.9", parameters=sorted(checks), checks=checks) is None
    both = "param pressureMidThreshold: 1.3\nparam pressureLowThreshold: 1.2"
    assert refusal(1, both, parameters=sorted(checks), checks=checks) is None


@pytest.mark.slow
def test_the_generated_validate_refuses_an_inverted_hysteresis_pair(dictionary, tmp_path):
    """trial 4 (admit), on the real Go toolchain: Validate() refuses the leave cut above the enter cut, naming both."""
    _, _, tr = translate_path(HYSTERESIS, dictionary)
    said = _validate(
        tr,
        tmp_path,
        [
            {"pressureLowThreshold": 1.2},
            {"pressureMidThreshold": 0.5},
            {},
            {"pressureLowThreshold": 1.0},
            {"pressureMidThreshold": 1.3, "pressureLowThreshold": 1.2},
        ],
    )
    assert said[0] == _HYST_MESSAGE + "1.2 > 1", said
    assert said[1] == _HYST_MESSAGE + "0.7 > 0.5", said
    assert said[2:] == ["ok", "ok", "ok"], said
