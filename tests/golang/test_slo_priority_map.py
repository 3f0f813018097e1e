"""BLIS's SLOPriorityMap has been a struct with methods since e8420fe9 (f90a1e3a: ``sim/slo_priority.go``).

Found by comparing the mirror with upstream: the mirror had a ``map`` variable of that name with free functions, so
an admission program carrying HEAD's ``admission.go`` (TierShed/GAIE-legacy/tenant-budget use
``DefaultSLOPriorityMap()`` and ``m.IsSheddable``) was refused as "does not compile as BLIS Go", and an evolved block
calling the methods generated a plugin that did not build. Real Go toolchain throughout.
"""

from __future__ import annotations

import pytest

from bot.golang.harness_failed import CHECK_DOES_NOT_COMPILE
from bot.model import Severity

from .conftest import FIXTURES, passes_with_test, translate_path

pytestmark = pytest.mark.slow

UPSTREAM_SHAPED = FIXTURES / "admission_slo_priority_map.go"
METHODS_IN_BLOCK = FIXTURES / "admission_slo_priority_methods.go"


def _measured_without_critical(tr) -> None:
    critical = [f"{f.check}: {f.message}" for f in tr.findings if f.severity == Severity.CRITICAL]
    assert not critical, critical
    assert not [f for f in tr.findings if f.check == CHECK_DOES_NOT_COMPILE]
    assert tr.summary.fidelity is not None and tr.summary.fidelity.measured, tr.summary.fidelity


def test_an_upstream_shaped_admission_go_compiles_as_blis_go_and_its_token_bucket_plugin_passes(dictionary):
    src, an, tr = translate_path(UPSTREAM_SHAPED, dictionary)
    assert an.host == "TokenBucket.Admit" and src.evolve_block
    _measured_without_critical(tr)
    passes_with_test(tr, "evolved.go", "zz_builds_test.go", lambda pkg: f"package {pkg}\n")


_METHODS_PROBE = """package {pkg}

import "testing"

func TestSLOPriorityMethods(t *testing.T) {{
	p := newPolicy(DefaultParameters())
	state := func(q int) *routerState {{ return &routerState{{Snapshots: []routingSnapshot{{{{ID: "a", QueueDepth: q}}}}}} }}
	for _, c := range []struct {{
		class string
		queue int
		want  bool
	}}{{
		{{"sheddable", 5, false}}, {{"sheddable", 4, true}}, {{"standard", 5, true}},
		{{"standard", 13, false}}, {{"critical", 13, true}}, {{"batch", 5, false}},
	}} {{
		if got, _ := p.Admit(&blisRequest{{SLOClass: c.class}}, state(c.queue)); got != c.want {{
			t.Errorf("%s at queue %d: admitted=%v, want %v", c.class, c.queue, got, c.want)
		}}
	}}
	m := defaultSLOPriorityMap()
	if m.Priority("") != 3 || !m.IsSheddable("background") || m.IsSheddable("standard") {{
		t.Errorf("BLIS's defaults: unknown class 3, background sheddable, standard kept")
	}}
}}
"""


def test_an_evolved_block_calling_the_map_s_methods_builds_a_plugin_that_sheds_like_blis(dictionary):
    _, _, tr = translate_path(METHODS_IN_BLOCK, dictionary)
    _measured_without_critical(tr)
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    assert "s.PriorityMap.IsSheddable(req.SLOClass)" in evolved and "defaultSLOPriorityMap().Priority(" in evolved
    plugin = next(t for p, t in tr.files.items() if "newPolicy(params Parameters)" in t)
    assert "p.PriorityMap = defaultSLOPriorityMap()" in plugin  # nil filled, as BLIS's constructors do
    passes_with_test(tr, "evolved.go", "zz_slo_priority_test.go", lambda pkg: _METHODS_PROBE.format(pkg=pkg))
