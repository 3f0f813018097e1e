"""Package-level variables the evolved decision reads (fixtures/routing_package_vars.go, admission_package_vars.go,
routing_package_state.go, admission_package_state.go). The plugin once did not declare them at all, so it failed
to build with ``undefined: kvCeiling``, a CRITICAL toolchain finding that told a researcher nothing.

- One never assigned after its declaration is in effect a constant: a number (``var kvCeiling = 0.9``) is a
  parameter named by it, as a package ``const`` is (package_consts.py); a slice, map or struct is carried into
  evolved.go as evolved, its values those the program was validated with, line for line.
- One the evolved code writes (a counter, a map it fills) is state every request shares: in the EPP, which
  schedules requests concurrently, a data race, and in BLIS it lived for one simulation run. It is a CRITICAL
  ``hazard.package-state`` at the write saying so and what to do (the receiver struct, whose state the plugin
  guards, or a local), never a plugin that compiles silently into a race."""

from __future__ import annotations

import re

import pytest

from bot.golang.package_vars import PACKAGE_STATE
from bot.golang.params import param_specs
from bot.model import Severity

from .conftest import FIXTURES, passes_with_test, translate_path

ROUTER = FIXTURES / "routing_package_vars.go"
ADMITTER = FIXTURES / "admission_package_vars.go"
# In a subfolder: their plugins are refused (hazard.package-state) and their generated tests fail on the shared
# state, so the corpus build of every fixture (conftest.toolchain_inputs) leaves them out.
ROUTER_STATE = FIXTURES / "refused" / "routing_package_state.go"
ADMITTER_STATE = FIXTURES / "refused" / "admission_package_state.go"


def _by_var(an) -> dict:
    return {th.const_decl: th for th in an.thresholds if th.param and th.const_decl}


def _line(path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


@pytest.mark.parametrize(("path", "var"), [(ROUTER, "kvCeiling"), (ADMITTER, "shedPressure")])
def test_a_package_number_never_assigned_is_a_parameter_documented_as_the_evolved_variable(analyze_text, path, var):
    an = analyze_text(path.read_text(encoding="utf-8"))
    got = _by_var(an)
    assert set(got) == {var}, an.thresholds
    th = got[var]
    assert th.go_type == "float64" and th.value == {"kvCeiling": 0.9, "shedPressure": 8}[var], th
    doc = {s.name: s.doc for s in param_specs(an, None, False)}[th.param]
    assert f"the evolved package variable `{var}`" in doc, doc
    assert not [f for f in an.findings if f.check == PACKAGE_STATE], an.findings


@pytest.mark.parametrize(
    ("path", "write"),
    [(ROUTER_STATE, "\trouted++"), (ADMITTER_STATE, "\tadmittedBy[req.TenantID]++")],
)
def test_a_package_variable_the_decision_writes_is_a_critical_finding_at_the_write(analyze_text, path, write):
    an = analyze_text(path.read_text(encoding="utf-8"))
    found = [f for f in an.findings if f.check == PACKAGE_STATE]
    assert len(found) == 1, an.findings
    f = found[0]
    assert f.severity is Severity.CRITICAL and f.source_line == _line(path, write), f
    assert "data race" in f.message and "every request" in f.message and "simulation run" in f.message, f.message
    assert "receiver" in f.fix and "local" in f.fix, f.fix


PROGRAM = """package sim

import "sort"

{decls}

type Gate struct{{}}

func (g *Gate) Admit(req *Request, state *RouterState) (bool, string) {{
	load := float64(state.Snapshots[0].QueueDepth)
	if load > 4 {{
		return false, "busy"
	}}
	{body}
	return true, ""
}}
"""


@pytest.mark.parametrize(
    ("decls", "body"),
    [
        ("var seen = 0", "seen = seen + 1"),
        ("var seen = 0.0", "seen += load"),
        ("var seen = map[string]int{}", "seen[req.TenantID] = 1"),
        ("var seen = map[string]int{}", "delete(seen, req.TenantID)"),
        ("var seen []float64", "seen = append(seen, load)"),
        ("var seen = []float64{3, 1, 2}", "sort.Float64s(seen)"),
        ("var seen = []float64{3, 1, 2}", "seen[0] = load"),
        ("var seen = struct{ n int }{}", "seen.n++"),
        ("var seen = 0", "p := &seen\n\t*p = 1"),
        ("var (\n\tidle = 1\n\tseen int\n)", "_, seen = idle, 2"),
    ],
)
def test_every_way_of_writing_a_package_variable_is_refused(analyze_text, decls, body):
    an = analyze_text(PROGRAM.format(decls=decls, body=body))
    found = [f for f in an.findings if f.check == PACKAGE_STATE]
    assert len(found) == 1 and "`seen`" in found[0].message, an.findings


@pytest.mark.parametrize(
    ("decls", "body"),
    [
        ("var seen = map[string]int{}", "_ = seen[req.TenantID] + len(seen)"),  # read only
        ("var seen = 0", "seen := 1\n\tseen++"),  # a local of the same name hides it
        ("var seen = []float64{1}", "for i, seen := range []int{1} {\n\t\t_, _ = i, seen\n\t}"),
        ("var seen = 0", "_ = func(seen int) int { seen++; return seen }(1)"),  # a parameter hides it
    ],
)
def test_reading_a_package_variable_or_writing_a_local_of_its_name_is_no_package_state(analyze_text, decls, body):
    an = analyze_text(PROGRAM.format(decls=decls, body=body))
    assert not [f for f in an.findings if f.check == PACKAGE_STATE], an.findings


def test_a_package_number_the_decision_writes_is_no_parameter(analyze_text):
    an = analyze_text(PROGRAM.format(decls="var busy = 4.0", body="if load > busy {\n\t\tbusy = load\n\t}"))
    assert not [th for th in an.thresholds if th.value == 4 and th.param and th.const_decl], an.thresholds
    assert [f for f in an.findings if f.check == PACKAGE_STATE and "`busy`" in f.message], an.findings


def test_a_package_number_another_package_variable_is_declared_by_keeps_its_number(analyze_text):
    decls = "var busy = 6.0\n\nvar idle = busy / 2"
    an = analyze_text(PROGRAM.format(decls=decls, body='if load > busy && load < idle {\n\t\treturn false, "x"\n\t}'))
    busy = next(th for th in an.thresholds if th.value == 6)
    assert busy.param is None and "`idle = busy / 2`" in (busy.reason or ""), busy.reason
    assert "package-level variable `busy`" in busy.reason, busy.reason


def _evolved(tr) -> tuple[str, str]:
    return next((p, t) for p, t in tr.files.items() if p.endswith("/evolved.go"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "lifted", "carried"),
    [
        (ROUTER, "kvCeiling", ("termWeights = []float64{0.3, 0.2}", 'classBonus  = map[string]int{"critical": 3')),
        (ADMITTER, "shedPressure", ("pressureWeights = []float64{1.5, 10}", "classRank       = map[string]int{")),
    ],
)
def test_the_plugin_reads_the_number_from_its_parameter_carries_the_tables_as_evolved_and_builds(
    dictionary, path, lifted, carried
):
    _, an, tr = translate_path(path, dictionary)
    file, evolved = _evolved(tr)
    th = _by_var(an)[lifted]
    code = evolved.split("package ", 1)[1]
    assert f".params.{th.field}" in code and f"    {th.param}: " in tr.epp_config, (code, tr.epp_config)
    assert not re.search(rf"^\s*{lifted}\s*=", code, re.M), code  # no longer declared: read from the parameter
    lines = evolved.splitlines()
    for text in carried:  # as evolved, each line mapped to its own in the program
        at = next(i for i, line in enumerate(lines, 1) if text in line)
        assert tr.line_map[file].get(at) == _line(path, text), (text, at, tr.line_map[file])
    assert not [f for f in tr.findings if f.check.startswith("toolchain.")], tr.findings
    passes_with_test(tr, "evolved.go", "zz_builds_test.go", lambda pkg: f"package {pkg}\n")


@pytest.mark.slow
@pytest.mark.parametrize("path", [ROUTER_STATE, ADMITTER_STATE])
def test_a_plugin_writing_package_state_is_refused_by_its_reason_not_by_an_undefined_name(dictionary, path):
    from bot.golang.toolchain import check_plugin

    _, _, tr = translate_path(path, dictionary)
    critical = [f for f in tr.findings if f.severity is Severity.CRITICAL]
    assert [f.check for f in critical] == [PACKAGE_STATE], critical
    report = check_plugin({p: t for p, t in tr.files.items() if p.endswith(".go")})  # the variable is declared
    assert report.build_ok and report.vet_ok and "undefined" not in report.output, report.output[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "var", "write"),
    [(ROUTER_STATE, "routed", "\trouted++"), (ADMITTER_STATE, "admittedBy", "\tadmittedBy[req.TenantID]++")],
)
def test_a_generated_test_failing_on_package_state_names_the_variable_and_the_hazard(tmp_path, path, var, write):
    """The plugin's cases share the package variable, so one case's write carries into the next and a case's
    expectation (measured on a fresh process) may not hold: the toolchain.test finding says that is the cause and
    points at the hazard's fix, never reads as a bug in the generated test."""
    import json

    from bot.cli import main

    assert main(["translate", str(path), "--out", str(tmp_path)]) == 1
    findings = json.loads((tmp_path / "findings.json").read_text(encoding="utf-8"))
    [hazard] = [f for f in findings if f["check"] == PACKAGE_STATE]
    failed = [f for f in findings if f["check"] == "toolchain.test"]
    assert failed, findings  # the fixture's cases do depend on their order: else this test checks nothing
    for f in failed:
        assert f"package variable `{var}`" in f["message"], f["message"]
        assert f"evolved line {_line(path, write)}" in f["message"] and PACKAGE_STATE in f["message"], f["message"]
        assert f["severity"] == "CRITICAL" and f["fix"] == hazard["fix"], f


def test_a_failing_test_without_package_state_is_reported_as_the_toolchain_found_it():
    from bot.golang.package_vars import shared_state_failures
    from bot.model import Finding

    failed = Finding(severity=Severity.CRITICAL, check="toolchain.test", message="test TestX failed: got 1, want 2")
    other = Finding(severity=Severity.IMPORTANT, check="hazard.other", message="`x` is odd", source_line=3)
    assert shared_state_failures([failed], [other]) == [failed]
