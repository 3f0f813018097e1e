"""A rolling window of arrivals per tenant with a KV-pressure override (fixtures/admission_tenant_window.go, an llm-d
maintainer's admitter): its window length was a local ``const`` the plugin kept silently, its limit for every class
but critical a local set again for critical requests (a SUGGESTION only), the critical limit's doc called it "the
value in `req.SLOClass`", and no generated test exercised the KV override, because no probe sent a tenant past its
limit, the only state in which the override changes the decision. Once both were, the window and the two limits still
had no test: their candidates met an idle pool, which the override admits whatever the count, and sheddable warm-ups
never reached the critical limit (``window_sequences``)."""

from __future__ import annotations

import pytest

from bot.golang import probes, window_sequences
from bot.golang.literals import CHECK_UNLISTED_LITERAL
from bot.golang.params import param_specs
from bot.golang.translate import CHECK_UNTESTED

from .conftest import FIXTURES, passes_with_test, sandboxed_go, translate_path, write_module

WINDOW = FIXTURES / "admission_tenant_window.go"


def _params(an) -> dict:
    return {th.param: th for th in an.thresholds if th.param}


def test_a_local_const_the_decision_reads_is_a_parameter_named_for_its_role(analyze_text):
    an = analyze_text(WINDOW.read_text(encoding="utf-8"))
    window = _params(an)["windowLength"]
    assert (window.value, window.go_type, window.const_decl) == (2_000_000, "int64", "windowUs")
    doc = next(s.doc for s in param_specs(an, None, False) if s.name == "windowLength")
    assert doc.startswith("WindowLength is how long the window lasts: the evolved constant `windowUs`"), doc


CONSTS = """type Gate struct{{}}

func (g *Gate) Admit(req *Request, state *RouterState) (bool, string) {{
	{decl}
	n := len(state.Snapshots)
	load := float64(state.Snapshots[0].QueueDepth)
	if load > busy {{
		return false, "busy"
	}}
	{more}
	return true, ""
}}
"""


@pytest.mark.parametrize(
    ("decl", "more", "why"),
    [
        # one constant, two types: a parameter of either type would not compile at the other use
        ("const busy = 4", 'if n > busy && load > 2 {\n\t\treturn false, "few"\n\t}', "used as float64 and int"),
        # read where no signal meets it: a variable would change what it does
        ("const busy = 4", "var spare [busy]int\n\t_ = spare", "read at `[busy]int`"),
        ("const (\n\t\tbusy = 4\n\t\tidle = 1\n\t)", "", "declared in a group"),
    ],
)
def test_a_local_const_that_cannot_be_read_from_a_parameter_is_listed_with_the_reason(analyze_text, decl, more, why):
    an = analyze_text(CONSTS.format(decl=decl, more=more))
    busy = next(th for th in an.thresholds if th.value == 4)
    assert busy.param is None and busy.reason is not None and why in busy.reason, busy.reason


def test_a_local_const_read_only_through_another_local_is_listed(analyze_text):
    an = analyze_text(CONSTS.format(decl="const busy = 4", more="").replace("load > busy", "load > float64(n*busy)"))
    listed = [f for f in an.findings if f.check == CHECK_UNLISTED_LITERAL]
    assert any("`const busy = 4`" in f.message for f in listed), an.findings


def test_a_local_limit_set_again_only_to_a_parameter_is_a_parameter_named_for_what_it_limits(analyze_text):
    an = analyze_text(WINDOW.read_text(encoding="utf-8"))
    params = _params(an)
    assert params["tenantLimit"].value == 20 and params["tenantLimit"].go_type == "int"
    assert params["criticalLimit"].value == 60
    assert not [f for f in an.findings if f.check == CHECK_UNLISTED_LITERAL], an.findings


def test_a_local_limit_set_again_to_a_number_no_parameter_holds_stays_listed(analyze_text):
    text = WINDOW.read_text(encoding="utf-8").replace(
        'if req.SLOClass == "critical" {\n\t\tlimit = 60', "if w.recent == nil {\n\t\tlimit = 60"
    )
    an = analyze_text(text)
    assert "tenantLimit" not in _params(an)
    assert any(f.check == CHECK_UNLISTED_LITERAL and "`limit` is set again" in f.message for f in an.findings), (
        an.findings
    )


def test_the_critical_limits_doc_says_what_it_limits(analyze_text):
    an = analyze_text(WINDOW.read_text(encoding="utf-8"))
    doc = next(s.doc for s in param_specs(an, None, False) if s.name == "criticalLimit")
    assert doc.startswith("CriticalLimit is the limit on `len(kept)` for critical requests"), doc
    assert "the value in" not in doc, doc


def test_the_kv_override_is_probed_with_a_tenant_past_its_limit_inside_the_window(analyze_text):
    an = analyze_text(WINDOW.read_text(encoding="utf-8"))
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    specs, _ = probes.specs(an, defaults, "admission", stateful=True)
    kv = next(s for s in specs if s["name"] == "minKVThreshold")
    past = [
        c
        for c in kv["candidates"]
        if sum(w["llmd"]["request"]["FairnessID"] == "tenant-a" for w in c["history"]) > 20
        and c["history"][0]["blis"]["clock"] > c["blis"]["clock"] - 2_000_000
    ]
    assert past, "no minKVThreshold candidate sends tenant-a past its limit of 20 inside the 2 s window"


@pytest.mark.slow
def test_the_window_plugin_reads_its_window_and_limits_from_parameters_and_tests_each_of_them(dictionary):
    _, _, tr = translate_path(WINDOW, dictionary)
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    assert "windowUs := w.params.WindowLength\n" in evolved and "const windowUs" not in evolved, evolved
    assert "limit := w.params.TenantLimit\n" in evolved and "limit = w.params.CriticalLimit" in evolved
    for name in ("windowLength", "tenantLimit", "criticalLimit", "minKVThreshold"):
        assert f"    {name}: " in tr.epp_config, tr.epp_config
    untested = [f.message for f in tr.findings if f.check == CHECK_UNTESTED]
    assert untested == [], untested  # the KV override, the window and both limits each have a test
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    for name in ("windowLength is live", "tenantLimit=20: the compared value 20 is past it", "criticalLimit is live"):
        assert f'name: "{name}' in test, test
    assert not [f for f in tr.findings if f.check == CHECK_UNLISTED_LITERAL], tr.findings
    passes_with_test(tr, "evolved.go", "zz_builds_test.go", lambda pkg: f"package {pkg}\n")


def _decide(state: dict, window: float = 2_000_000, limit: int = 20, critical: int = 60) -> bool:
    """The fixture's rule, in Python: whether its plugin admits ``state``'s request after its earlier requests."""
    recent: dict[str, list[float]] = {}
    events = [(h["blis"]["clock"], h["llmd"]["request"]) for h in state["history"]]
    events.append((state["blis"]["clock"], state["llmd"]["request"]))
    kv = min([1.0] + [e["metrics"]["KVCacheUsagePercent"] for e in state["llmd"]["endpoints"] if e["metrics"]])
    admitted = True
    for clock, request in events:
        tenant = request.get("FairnessID", "")
        kept = [t for t in recent.get(tenant, []) if t >= clock - window]
        bound = critical if request.get("Priority", 0) == 1 else limit
        admitted = kv < 0.4 or len(kept) < bound
        recent[tenant] = [*kept, clock] if admitted else kept
    return admitted


@pytest.mark.parametrize(
    ("param", "moves"),
    [
        ("tenantLimit", ({"limit": 19}, {"limit": 21})),  # a threshold: moved one step either side
        ("criticalLimit", ({"critical": 120},)),  # a live value: doubled
        ("windowLength", ({"window": 4_000_000},)),  # a live offset on the clock: doubled
    ],
)
def test_a_window_and_its_limits_get_sequences_their_move_decides(analyze_text, param, moves):
    """A rolling window decides on a sequence of one tenant's arrivals: as many as the limit inside the window
    (rejected), one fewer (admitted), the same spread over more than the window; all on a pool past the KV
    override, which else admits them all. Each parameter's probe must hold a candidate its move decides."""
    an = analyze_text(WINDOW.read_text(encoding="utf-8"))
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    specs, _ = probes.specs(an, defaults, "admission", stateful=True)
    cands = next(s for s in specs if s["name"] == param)["candidates"]
    for move in moves:
        assert any(_decide(c) != _decide(c, **move) for c in cands), f"no {param} candidate decides with {move}"


def test_the_sequences_follow_the_analysis_not_the_names(analyze_text):
    """Renamed locals and receiver field: the window and both limits still get their sequences; a limit on a
    pool metric (no tenant's history) gets none."""
    text = WINDOW.read_text(encoding="utf-8")
    for old, new in (("windowUs", "horizon"), ("limit", "quota"), ("kept", "fresh"), ("recent", "seen")):
        text = text.replace(old, new)
    an = analyze_text(text)
    got = {th.value for th in an.thresholds if th.param and window_sequences.candidates(an, th, "admission", True)}
    assert got == {2_000_000, 20, 60}, got


@pytest.mark.slow
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("windowUs := w.params.WindowLength\n", "windowUs := int64(2_000_001)\n"),
        ("limit := w.params.TenantLimit\n", "limit := 21\n"),
        ("limit = w.params.CriticalLimit\n", "limit = 61\n"),
    ],
)
def test_a_plugin_that_ignores_the_window_or_a_limit_fails_its_generated_test(dictionary, tmp_path, old, new):
    """Each parameter hard-coded one step off its evolved value in the generated evolved.go: the parameter is
    then ignored, and the generated threshold test that moves it fails."""
    _, _, tr = translate_path(WINDOW, dictionary)
    module = write_module(tr, tmp_path)
    evolved = module / tr.summary.package_dir / "evolved.go"
    original = evolved.read_text(encoding="utf-8")
    assert old in original, original
    evolved.write_text(original.replace(old, new), encoding="utf-8")
    res = sandboxed_go(module, tmp_path, ["test", "-count=1", "./" + tr.summary.package_dir])
    out = res.stdout + res.stderr
    assert "--- FAIL: TestThresholds" in out, out[-3000:]
    assert "build failed" not in out and "[setup failed]" not in out, out[-3000:]
