"""BLIS's ``Request.SLOTargetUs`` comes from the TTFT SLO header llm-d-router v0.10.0 defines (s03).

It was marked untranslatable, so s03's least-slack order never saw a request's own target in llm-d and its
translation carried an IMPORTANT ``hazard.unmapped-signal``. v0.10.0 reads ``x-llm-d-slo-ttft-ms`` (deprecated
alias ``x-slo-ttft-ms``) from the lower-cased request headers as a float of milliseconds, absent or unreadable
meaning no SLO (pkg/epp/metadata/consts.go, requestcontrol/admitter/latencyslo/plugin.go); the adapter reads it
the same way, and the differential world sends it for every sampled request that has a target.
"""

from __future__ import annotations

import re

from bot.golang import harness_views as hv
from bot.golang import harness_world as world
from bot.golang.hazards import UNMAPPED

from .conftest import CORPUS, passes_with_test, translate_path

S03 = CORPUS / "s03_function_deadline_slack.go"

#: (headers, µs the adapter must give): ms -> µs, the alias, the current name first, no SLO -> 0.
CASES = [
    ({"x-llm-d-slo-ttft-ms": "250"}, 250_000),
    ({"x-llm-d-slo-ttft-ms": "1.5"}, 1_500),
    ({"x-llm-d-slo-ttft-ms": "1234.567"}, 1_234_567),
    ({"x-slo-ttft-ms": "300"}, 300_000),
    ({"x-llm-d-slo-ttft-ms": "100", "x-slo-ttft-ms": "900"}, 100_000),
    # upstream's GetLowerCaseHeaderValue takes the first name present, readable or not
    ({"x-llm-d-slo-ttft-ms": "soon", "x-slo-ttft-ms": "900"}, 0),
    ({}, 0),
    ({"x-llm-d-slo-ttft-ms": ""}, 0),
    ({"x-llm-d-slo-ttft-ms": "soon"}, 0),
    ({"x-llm-d-slo-ttft-ms": "0"}, 0),
    ({"x-llm-d-slo-ttft-ms": "-5"}, 0),
    ({"x-llm-d-slo-ttft-ms": "NaN"}, 0),
    ({"x-llm-d-slo-ttft-ms": "+Inf"}, 0),
    ({"x-llm-d-slo-ttft-ms": "1e300"}, 0),
    ({"X-LLM-D-SLO-TTFT-MS": "250"}, 0),  # the EPP lower-cases header keys before any plugin sees them
]


def _go_map(headers: dict[str, str]) -> str:
    return "map[string]string{" + ", ".join(f"{k!r}: {v!r}".replace("'", '"') for k, v in headers.items()) + "}"


def _adapter_test(package: str) -> str:
    rows = "".join(f"\t\t{{{_go_map(h)}, {want}}},\n" for h, want in CASES)
    return (
        f"package {package}\n\n"
        'import (\n\t"testing"\n\n\t"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"\n)\n\n'
        "func TestSLOTargetFromHeader(t *testing.T) {\n"
        "\tfor _, c := range []struct {\n\t\theaders map[string]string\n\t\twant    int64\n\t}{\n"
        f"{rows}"
        "\t} {\n"
        "\t\tgot := newBlisRequest(&scheduling.InferenceRequest{Headers: c.headers}, 0).SLOTargetUs\n"
        "\t\tif got != c.want {\n"
        '\t\t\tt.Errorf("headers %v: SLOTargetUs = %d, want %d", c.headers, got, c.want)\n'
        "\t\t}\n\t}\n}\n"
    )


def test_s03_reads_the_slo_target_from_the_header_instead_of_a_fallback(dictionary):
    _, _, tr = translate_path(S03, dictionary)
    assert "SLOTargetUs" in tr.summary.signals and "SLOTargetUs" not in tr.summary.untranslatable
    assert not [f for f in tr.findings if f.check == UNMAPPED and "SLOTargetUs" in f.message]
    adapter = next(t for p, t in tr.files.items() if p.endswith("/adapter.go"))
    assert "r.SLOTargetUs = sloTargetUsSignal(req)" in adapter and '"strconv"' in adapter
    readme = next(t for p, t in tr.files.items() if p.endswith("/README.md"))
    caveats = readme.split("## Caveats")[1]
    assert "`SLOTargetUs` is read from the request header `x-llm-d-slo-ttft-ms` (failing that, `x-slo-ttft-ms`)" in (
        caveats
    )
    row = next(line for line in tr.report_markdown.splitlines() if line.startswith("| `SLOTargetUs`"))
    assert "x-llm-d-slo-ttft-ms" in row and "| medium |" in row


def test_the_adapter_reads_the_header_as_llm_d_does_through_go(dictionary):
    _, _, tr = translate_path(S03, dictionary)
    passes_with_test(tr, "/adapter.go", "slo_header_test.go", _adapter_test)


def test_the_world_sends_the_target_in_milliseconds_and_agreement_measures_the_carried_term(dictionary):
    """The llm-d view carries a sampled target as the header (none when there is none), exactly enough that the
    adapter gives BLIS's µs back; so s03's figure has no SLOTargetUs bypass, and with every mapping off the plugin
    and BLIS agree on every state (the carried target is no cause)."""
    req = world.Req("r", 100, "standard", "", "t", 0, 4.0, slo_target_us=1_234_567)
    assert hv._llmd_request(req, frozenset())["Headers"] == {"x-llm-d-slo-ttft-ms": "1234.567"}
    none = world.Req("r", 100, "standard", "", "t", 0, 4.0)
    assert "x-llm-d-slo-ttft-ms" not in hv._llmd_request(none, frozenset())["Headers"]
    for us in (100_000, 123_457, 4_999_999, 1):
        assert round(float(hv.slo_header_value(us)) * 1000) == us
    _, _, tr = translate_path(S03, dictionary)
    fid = tr.summary.fidelity
    assert fid is not None and fid.measured and fid.errors == 0
    assert "untranslatable:SLOTargetUs" not in {c.mapping for c in fid.causes}
    assert fid.agreement_all_off == 1.0


def _flat_header_test(package: str, constructor: str) -> str:
    """Go: a request with a 500 ms header on queues of 0, 5 and 20 waiting (found by an llm-d maintainer: flat)."""
    return (
        f"package {package}\n\n"
        'import (\n\t"context"\n\t"testing"\n\n'
        '\tfwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"\n'
        '\t"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"\n)\n\n'
        "func scoresWithHeader(target int64) []float64 {\n"
        "\tparams := DefaultParameters()\n\tparams.IncumbentSLOTargetMs = target\n"
        f"\tp := {constructor}(params)\n"
        "\teps := []scheduling.Endpoint{\n"
        '\t\ttestEndpoint("q0", &fwkdl.Metrics{WaitingQueueSize: 0}),\n'
        '\t\ttestEndpoint("q5", &fwkdl.Metrics{WaitingQueueSize: 5}),\n'
        '\t\ttestEndpoint("q20", &fwkdl.Metrics{WaitingQueueSize: 20}),\n\t}\n'
        '\treq := &scheduling.InferenceRequest{RequestSizeBytes: 2000, Headers: map[string]string{"x-llm-d-slo-ttft-ms": "500"}}\n'
        "\ts := p.Score(context.Background(), req, eps)\n\treturn []float64{s[eps[0]], s[eps[1]], s[eps[2]]}\n}\n\n"
        "func TestIncumbentSLOTarget(t *testing.T) {\n"
        "\tif s := scoresWithHeader(0); s[0] != s[2] {\n"
        '\t\tt.Errorf("no incumbent target: a 500 ms request overtakes the 2 s class target everywhere, want flat, got %v", s)\n\t}\n'
        "\tif s := scoresWithHeader(500); !(s[0] > s[1] && s[1] > s[2]) {\n"
        '\t\tt.Errorf("incumbents at 500 ms: a longer queue must score lower, got %v", s)\n\t}\n}\n'
    )


def test_the_incumbents_slo_target_is_a_parameter_that_unflattens_the_scorer_through_go(dictionary):
    """Found by an llm-d maintainer: gate 2 asks clients to send x-llm-d-slo-ttft-ms, and a request whose target is
    tighter than the modelled waiting requests' (none: their class's 2 s) overtook them on every endpoint, so s03
    scored flat. incumbentSLOTargetMs gives the waiting requests the target clients send."""
    _, _, tr = translate_path(S03, dictionary)
    main_path, main = next((p, t) for p, t in tr.files.items() if "IncumbentSpacingUs" in t and "_test" not in p)
    assert "r.SLOTargetUs = s.params.IncumbentSLOTargetMs * 1000" in main
    caveats = next(t for p, t in tr.files.items() if p.endswith("/README.md")).split("## Caveats")[1]
    assert "set incumbentSLOTargetMs to the target they send" in caveats
    constructor = re.search(r"^func (New\w+)\(params Parameters\)", main, re.M).group(1)
    passes_with_test(tr, main_path, "slo_flat_test.go", lambda pkg: _flat_header_test(pkg, constructor))


def test_the_world_gives_blis_the_incumbents_slo_target_set_at_gate_1(dictionary):
    """The queue-contents mapping switched off gives BLIS the plugin's incumbents, SLO target included, so with
    every mapping off they still agree after `param incumbentSLOTargetMs: 500` (an assumption, not an evolved
    value: no deployed-values run hands the plugin 0 while the world says 500)."""
    from bot.golang.translate import translate

    inc = world.Incumbents("standard", 512, 50_000, 500_000)
    spec = world.Spec("scheduling", frozenset({"SLOTargetUs", "SLOClass"}), incumbents=inc)
    assert world.Spec.from_json(spec.to_json()).incumbents == inc
    state = next(s for s in world.sample(spec, 40, seed=7) if any(i.queued for i in s.instances))
    queues = hv._blis_queues(state, frozenset({"queue-contents"}))
    assert {r["SLOTargetUs"] for q in queues.values() for r in q} == {500_000}
    src, an, _ = translate_path(S03, dictionary)
    tr = translate(
        src, an, dictionary, plugin_type="evolved-deadline-slack", feedback="param incumbentSLOTargetMs: 500"
    )
    fid = tr.summary.fidelity
    assert fid is not None and fid.measured and fid.agreement_all_off == 1.0
    assert "deployed-values" not in {c.mapping for c in fid.causes}


def test_a_deadline_order_names_the_in_tree_slo_deadline_ordering_policy(dictionary):
    """Found by an llm-d maintainer: s03 orders by arrival + SLOTargetUs, which v0.10.0's flow-control
    slo-deadline-ordering-policy already does by received time + x-llm-d-slo-ttft-ms where the real queue is
    visible; the report and the findings that say "port it to an ordering policy by hand" must name it as the
    comparison arm and the base. An order reading no SLO target (s01) is not pointed at it."""
    from .test_scheduling_plugin import S01

    _, _, tr = translate_path(S03, dictionary)
    decision = next(line for line in tr.report_markdown.splitlines() if "queue ordering as a score" in line)
    assert "slo-deadline-ordering-policy" in decision and "comparison arm" in decision
    ported = [f for f in tr.findings if "where the real queue is visible" in f.fix]
    assert {f.check for f in ported} >= {"translate.fidelity-below-reference"}, [f.check for f in tr.findings]
    assert all("slo-deadline-ordering-policy" in f.fix and "comparison arm" in f.fix for f in ported)
    _, _, s01 = translate_path(S01, dictionary)
    assert "slo-deadline-ordering-policy" not in s01.report_markdown + " ".join(f.fix for f in s01.findings)


def test_the_adapter_reads_the_header_through_llm_ds_metadata_helper(dictionary):
    """Found by an llm-d maintainer: the adapter read the two header names as string literals, where upstream
    code reads metadata.GetLowerCaseHeaderValue(headers, metadata.TTFTSLOHeaderKey), so a new alias is picked up
    in one place. The mirror carries v0.10.0's pkg/epp/metadata/consts.go byte for byte (its git blob), and
    the header names gate 2 and the README name still come out of the expression."""
    import hashlib

    from bot import PROJECT_ROOT
    from bot.golang.adapter import request_headers

    _, _, tr = translate_path(S03, dictionary)
    adapter = next(t for p, t in tr.files.items() if p.endswith("/adapter.go"))
    assert "metadata.GetLowerCaseHeaderValue(req.Headers, metadata.TTFTSLOHeaderKey)" in adapter
    assert '"github.com/llm-d/llm-d-router/pkg/epp/metadata"' in adapter and 'req.Headers["' not in adapter
    expr = dictionary.signal("SLOTargetUs", "request").llmd.expr
    assert request_headers(expr) == ["x-llm-d-slo-ttft-ms", "x-slo-ttft-ms"]
    consts = (PROJECT_ROOT / "gomirror/llm-d-router/pkg/epp/metadata/consts.go").read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(consts) + consts).hexdigest()
    assert blob == "31488e445a25ba62e19716e3c3de306ba4021c5a"  # git ls-tree v0.10.0 pkg/epp/metadata/consts.go


def _one_target_test(package: str, constructor: str) -> str:
    """Go: sched-e2e #5's probe (queues 0, 3, 10 and 25 waiting; a 912-token prompt), one header on every request."""
    return (
        f"package {package}\n\n"
        'import (\n\t"context"\n\t"testing"\n\n'
        '\tfwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"\n'
        '\t"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"\n)\n\n'
        "func oneTarget(header string, incumbentMs int64) []float64 {\n"
        "\tparams := DefaultParameters()\n\tparams.IncumbentSLOTargetMs = incumbentMs\n"
        f"\tp := {constructor}(params)\n"
        "\tvar eps []scheduling.Endpoint\n"
        "\tfor i, q := range []int{0, 3, 10, 25} {\n"
        "\t\teps = append(eps, testEndpoint(string(rune('a'+i)), &fwkdl.Metrics{WaitingQueueSize: q}))\n\t}\n"
        "\treq := &scheduling.InferenceRequest{RequestSizeBytes: 3648, Headers: map[string]string{}}\n"
        '\tif header != "" {\n\t\treq.Headers["x-llm-d-slo-ttft-ms"] = header\n\t}\n'
        "\ts := p.Score(context.Background(), req, eps)\n"
        "\tout := make([]float64, len(eps))\n\tfor i, ep := range eps {\n\t\tout[i] = s[ep]\n\t}\n\treturn out\n}\n\n"
        "func TestOneTargetOnEveryRequest(t *testing.T) {\n"
        "\tqueue := []float64{1, 0.88, 0.6, 0} // queue-scorer's order: (25 - waiting) / 25\n"
        "\tfor _, c := range []struct {\n\t\tname        string\n\t\theader      string\n"
        "\t\tincumbentMs int64\n\t\twant        []float64\n\t}{\n"
        '\t\t{"no header", "", 0, queue},\n'
        '\t\t{"tighter than the incumbents\' class target: flat", "500", 0, []float64{1, 1, 1, 1}},\n'
        '\t\t{"looser than it: last everywhere", "5000", 0, queue},\n'
        '\t\t{"the incumbents\' target: queue-scorer", "500", 500, queue},\n'
        "\t} {\n\t\tgot := oneTarget(c.header, c.incumbentMs)\n\t\tfor i := range got {\n"
        "\t\t\tif d := got[i] - c.want[i]; d > 1e-9 || d < -1e-9 {\n"
        '\t\t\t\tt.Errorf("%s: scores %v, want %v", c.name, got, c.want)\n\t\t\t\tbreak\n'
        "\t\t\t}\n\t\t}\n\t}\n}\n"
    )


def test_gate_2s_one_target_findings_say_what_the_generated_plugin_does_through_go(dictionary):
    """sched-e2e #5: following G2.slo-header-sent's fix (`x-llm-d-slo-ttft-ms: "500"` on every request) made s03
    score every endpoint alike, and gate 2 then said nothing. What gate 2 now says (G2.slo-target-constant and the
    header finding's fix) is checked here against the generated plugin: one target tighter than the modelled
    waiting requests' is flat, one looser or equal to theirs (`param incumbentSLOTargetMs` set to it) is
    queue-scorer's order, so no constant target exercises a deadline order."""
    from bot.review.gate2_traffic import MIX, NO_ORDER, _constant_target

    _, _, tr = translate_path(S03, dictionary)
    main_path, main = next((p, t) for p, t in tr.files.items() if "IncumbentSpacingUs" in t and "_test" not in p)
    constructor = re.search(r"^func (New\w+)\(params Parameters\)", main, re.M).group(1)
    passes_with_test(tr, main_path, "one_target_test.go", lambda pkg: _one_target_test(pkg, constructor))
    caveats = next(t for p, t in tr.files.items() if p.endswith("/README.md")).split("## Caveats")[1]
    assert "as queue-scorer does: a deadline order is exercised only by requests with a mix of targets" in caveats
    from types import SimpleNamespace

    from bot.model import PipelineState, PolicyKind

    ctx = SimpleNamespace(
        request=SimpleNamespace(kind=PolicyKind.SCHEDULING),
        state=PipelineState(request_id="s03", request_fingerprint="f", branch="promotion/s03"),
        paths=SimpleNamespace(hypotheses_dir="docs/h"),
    )
    [f] = _constant_target(ctx, "x-llm-d-slo-ttft-ms", {"load-spikes": "500"})
    assert "scores every endpoint alike (no load signal)" in f.message and "goes last everywhere" in f.message
    assert NO_ORDER in f.message and "as queue-scorer does" in f.fix and MIX in f.fix
