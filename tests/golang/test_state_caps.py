"""A receiver map keyed by a value the client sends is capped in the generated plugin, not only flagged.

a01 keeps ``a.tenantCounts[tenantID]`` for the life of the EPP, keyed by the client's fairness ID: an llm-d maintainer
will not merge a plugin whose memory a client controls. After every call into the evolved code, under the lock that
already serialises the calls, the plugin records that the request's key was seen and, once the map holds more than
``maxTracked<Field>`` entries (a parameter, default ``state_caps.DEFAULT_CAP``), deletes the least recently seen tenth
of them: a client sending more distinct keys than the cap evicts its own stale keys, never every tenant's state (an
earlier version cleared the whole map, which such a client could use to wipe everyone's share). A map whose key the
plugin cannot name in the request is still cleared. The finding stays and says so; the sampled agreement does not move.
"""

from __future__ import annotations

import re

import yaml

from bot.golang import hazards, state_caps
from bot.golang.analyze import analyze
from bot.golang.generate import package_name, struct_name
from bot.golang.source import parse_evolved_source
from bot.golang.translate import translate
from bot.model import Severity

from .conftest import CORPUS, run_probe_test, sandboxed_go, translate_path, write_module

A01 = CORPUS / "a01_pattern_c_adaptive_admission.go"


def test_a01s_plugin_caps_tenant_counts_with_a_validated_documented_parameter(dictionary):
    _, _, tr = translate_path(A01, dictionary)
    main = next(t for p, t in tr.files.items() if p.endswith(".go") and "capState" in t)
    assert 'MaxTrackedTenantCounts int `json:"maxTrackedTenantCounts"`' in main
    assert re.search(rf"\n\t\tMaxTrackedTenantCounts: +{state_caps.DEFAULT_CAP},\n", main)
    assert 'if p.MaxTrackedTenantCounts <= 0 {\n\t\treturn fmt.Errorf("maxTrackedTenantCounts must be > 0' in main
    # After every call into the evolved code, under the same lock, the request's key is touched and, past the cap,
    # the least recently touched entries are evicted; the map is never cleared whole.
    assert "\ttouchKey(&a.recent.tenantCounts, a.policy.tenantCounts, req.TenantID)\n" in main
    assert "\tevictStalest(&a.recent.tenantCounts, a.policy.tenantCounts, a.params.MaxTrackedTenantCounts)\n" in main
    assert "clear(a.policy.tenantCounts)" not in main
    admit = main[main.index(") admit(") :]  # its parameters may break over lines (golines)
    assert admit.index("a.mu.Lock()") < admit.index("defer a.capState(req)") < admit.index("a.policy.Admit(")
    # classCounts is keyed by the SLO class (three values in llm-d): not flagged, not capped.
    assert "classCounts) >" not in main
    cfg = yaml.safe_load(tr.epp_config)
    params = next(p for p in cfg["plugins"] if p["type"] == tr.summary.plugin_type)["parameters"]
    assert params["maxTrackedTenantCounts"] == state_caps.DEFAULT_CAP
    assert "# maxTrackedTenantCounts: " in tr.epp_config and "not an evolved value" in tr.epp_config
    assert tr.summary.fidelity.agreement == 0.902  # the sampled tenants are far fewer than the cap


def test_a01s_finding_says_the_plugin_caps_the_map_where_and_what_eviction_does(dictionary):
    _, _, tr = translate_path(A01, dictionary)
    [f] = [f for f in tr.findings if f.check == hazards.UNBOUNDED_STATE]
    assert f.source_line == 119 and f.severity == Severity.SUGGESTION
    path, main = next((p, t) for p, t in tr.files.items() if p.endswith(".go") and "capState" in t)
    line = 1 + main[: main.index("evictStalest(&a.recent.tenantCounts,")].count("\n")
    name = path.rsplit("/", 1)[1]
    assert "`maxTrackedTenantCounts`" in f.message and "(capState)" in f.message and name not in f.message
    assert f.fix.endswith(f"in capState, {name}:{line}")  # where, outside what the id digests
    assert f"{state_caps.DEFAULT_CAP} entries" in f.message and "clears" not in f.message
    assert "deletes the least recently seen tenth" in f.message and "TenantID" in f.message
    assert "a client whose entry is evicted starts afresh, as a new client" in f.message
    assert "residual risk: a flood of new keys evicts the state of clients idle through it" in f.message
    assert "totalSeen" in f.message  # the state eviction leaves as it is, named
    assert "maxTrackedTenantCounts" in f.fix


def test_a_capped_map_stays_bounded_when_clients_send_more_fairness_ids_than_the_cap(dictionary, tmp_path):
    """Through the real Admit: 50 distinct fairness IDs against a cap of 8 never leave more than 8 entries, while a
    cap of 64 keeps all 50 (the cap, not the traffic, clears the map)."""
    _, _, tr = translate_path(A01, dictionary)
    struct = struct_name(tr.summary.plugin_type)
    probe = PROBE.format(package=package_name(tr.summary.plugin_type), struct=struct)
    out = run_probe_test(tr, tmp_path, "probe_cap_test.go", probe, "TestProbeCap")
    assert "PROBE capped ok" in out


PROBE = """package {package}

import (
\t"context"
\t"fmt"
\t"testing"

\t"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

func TestProbeCap(t *testing.T) {{
\tfor _, tc := range []struct{{ cap, most int }}{{{{8, 8}}, {{64, 50}}}} {{
\t\tparams := DefaultParameters()
\t\tparams.MaxTrackedTenantCounts = tc.cap
\t\tp := New{struct}(params)
\t\tmost := 0
\t\tfor i := 0; i < 50; i++ {{
\t\t\treq := &scheduling.InferenceRequest{{RequestID: fmt.Sprint("r", i), FairnessID: fmt.Sprint("tenant-", i)}}
\t\t\t_ = p.Admit(context.Background(), req, nil)
\t\t\tif n := len(p.policy.tenantCounts); n > most {{
\t\t\t\tmost = n
\t\t\t}}
\t\t}}
\t\tif most != tc.most {{
\t\t\tt.Fatalf("cap %d: the map held at most %d entries, want %d", tc.cap, most, tc.most)
\t\t}}
\t}}
\tt.Log("PROBE capped ok")
}}
"""


def test_an_active_tenant_keeps_its_state_while_a_flood_of_new_fairness_ids_passes_the_cap(dictionary, tmp_path):
    """Through the real Admit, cap 10: a tenant sending every other request keeps its count (one per request, never
    reset) while 200 new fairness IDs pass through; the map never holds more than the cap. With the old clear, the
    flood wiped the tenant's count every few requests."""
    _, _, tr = translate_path(A01, dictionary)
    struct = struct_name(tr.summary.plugin_type)
    probe = FLOOD.format(package=package_name(tr.summary.plugin_type), struct=struct)
    out = run_probe_test(tr, tmp_path, "probe_flood_test.go", probe, "TestProbeFlood")
    assert "PROBE active kept ok" in out


FLOOD = """package {package}

import (
\t"context"
\t"fmt"
\t"testing"

\t"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

func TestProbeFlood(t *testing.T) {{
\tparams := DefaultParameters()
\tparams.MaxTrackedTenantCounts = 10
\tp := New{struct}(params)
\tsend := func(tenant string, i int) {{
\t\treq := &scheduling.InferenceRequest{{RequestID: fmt.Sprint("r", i), FairnessID: tenant}}
\t\t_ = p.Admit(context.Background(), req, nil)
\t}}
\tfor i := 1; i <= 200; i++ {{
\t\tsend("active", 2*i)
\t\tsend(fmt.Sprint("flood-", i), 2*i+1)
\t\tif got := p.policy.tenantCounts["active"]; got != i {{
\t\t\tt.Fatalf("after %d flood keys the active tenant's count is %d, want %d", i, got, i)
\t\t}}
\t\tif n := len(p.policy.tenantCounts); n > 10 {{
\t\t\tt.Fatalf("the map holds %d entries past a cap of 10", n)
\t\t}}
\t}}
\tt.Log("PROBE active kept ok")
}}
"""


def test_the_plugins_own_test_states_it_and_fails_if_the_cap_clears_the_map(dictionary, tmp_path):
    """The generated test (llm-d's CI runs it) floods past a cap of 10 beside a key every other request carries; with
    the eviction replaced by the old clear, it fails."""
    _, _, tr = translate_path(A01, dictionary)
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    assert "func TestCapStateKeepsActiveKeysOfTenantCounts(t *testing.T) {" in test
    assert "a.capState(&blisRequest{TenantID: key})" in test
    module = write_module(tr, tmp_path)
    main = next(module / p for p, t in tr.files.items() if p.endswith(".go") and "func evictStalest" in t)
    run = ["test", "-count=1", "-run", "TestCapState", "./" + tr.summary.package_dir]
    assert "ok" in sandboxed_go(module, tmp_path, run).stdout
    text = main.read_text(encoding="utf-8")
    evict = "\tevictStalest(&a.recent.tenantCounts, a.policy.tenantCounts, a.params.MaxTrackedTenantCounts)\n"
    clear = (
        "\tif len(a.policy.tenantCounts) > a.params.MaxTrackedTenantCounts {\n\t\tclear(a.policy.tenantCounts)\n\t}\n"
    )
    main.write_text(text.replace(evict, clear), encoding="utf-8")
    res = sandboxed_go(module, tmp_path, run)
    assert "--- FAIL: TestCapStateKeepsActiveKeysOfTenantCounts" in res.stdout, (res.stdout + res.stderr)[-3000:]
    assert "was evicted" in res.stdout


def test_g08s_buckets_are_capped_too(dictionary):
    _, _, tr = translate_path(CORPUS / "g08_local_token_bucket.go", dictionary)
    main = next(t for p, t in tr.files.items() if p.endswith(".go") and "capState" in t)
    assert "\tevictStalest(&a.recent.buckets, a.policy.buckets, a.params.MaxTrackedBuckets)\n" in main
    assert "\ttouchKey(&a.recent.buckets, a.policy.buckets, req.TenantID)\n" in main
    assert re.search(r"MaxTrackedBuckets int `json:\"maxTrackedBuckets\"`", main)


def test_a_map_whose_key_the_plugin_cannot_name_in_the_request_is_still_cleared(dictionary):
    """g08 with its bucket key built from the tenant (not the request's field as is): the plugin cannot tell which
    entry a request touched, so it clears the map past the cap, and the finding says that, not "least recently"."""
    text = (CORPUS / "g08_local_token_bucket.go").read_text(encoding="utf-8")
    text = text.replace("t.buckets[req.TenantID]", 't.buckets["t/"+req.TenantID]')
    src = parse_evolved_source(text, "g08_derived_key.go")
    an = analyze(src, dictionary, None)
    tr = translate(src, an, dictionary, plugin_type="derived-key-bucket")
    main = next(t for p, t in tr.files.items() if p.endswith(".go") and "capState" in t)
    assert "if len(a.policy.buckets) > a.params.MaxTrackedBuckets {\n\t\tclear(a.policy.buckets)" in main
    assert "touchKey" not in main and "evictStalest" not in main
    [f] = [f for f in tr.findings if f.check == hazards.UNBOUNDED_STATE]
    assert "clears `buckets`" in f.message and "least recently" not in f.message
