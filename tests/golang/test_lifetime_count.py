"""hazard.lifetime-count: a decision on a count of every client (request) the plugin ever saw."""

from __future__ import annotations

from bot.golang import lifetime_count
from bot.golang.probe_inputs import CLOCK
from bot.golang.source import load_evolved_source
from bot.model import Severity
from tests.golang.conftest import CORPUS, EXAMPLE

GATE = (
    "type Gate struct {{\n\tshare map[string]float64\n\ttotal float64\n\tseen  int\n}}\n\n"
    'func (g *Gate) Admit(req *Request, state *RouterState) (bool, string) {{\n{body}\n\treturn true, ""\n}}\n'
)
#: a03's shape: a per-tenant share, the fair share a total over the tenants ever written.
MAP = (
    "\tif g.share == nil {\n\t\tg.share = make(map[string]float64)\n\t}\n"  # 8-10
    "\tg.total *= 0.9\n"  # 11: decayed, so only the map's length is a lifetime count
    "\tn := len(g.share)\n"  # 12
    "\tfair := (g.total + 1) / float64(n+1)\n"  # 13
    '\tif g.share[req.TenantID] > 2*fair {\n\t\treturn false, "over"\n\t}\n'  # 14-16
    "\tg.share[req.TenantID] += 1\n\tg.total += 1"  # 17-18
)


def lifetime(an):
    return [f for f in an.findings if f.check == lifetime_count.CHECK]


def test_a_fair_share_over_len_of_a_map_no_code_deletes_from_is_a_lifetime_count(analyze_text):
    [f] = lifetime(analyze_text(GATE.format(body=MAP)))
    assert f.severity == Severity.IMPORTANT and f.source_line == 12, f
    assert "`n := len(g.share)`" in f.message and "TenantID (llm-d: InferenceRequest.FairnessID" in f.message
    assert "every client since the EPP started" in f.message and "one run's clients" in f.message
    assert "within a window" in f.fix and "decay or reset" in f.fix and "re-run the evolution" in f.fix


def test_a_counter_only_incremented_and_divided_in_a_decision_is_a_lifetime_count(analyze_text):
    body = (
        "\tg.seen++\n"  # 8
        "\tavg := float64(g.seen) / 4\n"  # 9
        '\tif float64(len(req.InputTokens)) > avg {\n\t\treturn false, "long"\n\t}'
    )
    [f] = lifetime(analyze_text(GATE.format(body=body)))
    assert f.source_line == 9 and "`g.seen`" in f.message and "(line 8)" in f.message, f
    assert "every request of every client since the EPP started" in f.message and "one run's requests" in f.message
    assert "reset `seen`" in f.fix


def test_a_map_that_is_deleted_from_or_a_counter_reset_or_decayed_is_no_lifetime_count(analyze_text):
    deleted = MAP + "\n\tif g.share[req.TenantID] < 0.01 {\n\t\tdelete(g.share, req.TenantID)\n\t}"
    assert not lifetime(analyze_text(GATE.format(body=deleted)))
    cmp = '\tif float64(g.seen) > 100 {\n\t\treturn false, "busy"\n\t}\n'
    for write in ("\tg.seen++\n\tif g.seen > 9 {\n\t\tg.seen = 0\n\t}\n", "\tg.seen--\n"):
        assert not lifetime(analyze_text(GATE.format(body=write + cmp))), write
    decayed = '\tg.total *= 0.5\n\tg.total += 1\n\tif g.total > 10 {\n\t\treturn false, "busy"\n\t}'
    assert not lifetime(analyze_text(GATE.format(body=decayed)))
    unread = "\tg.seen++\n\tg.share[req.TenantID] = float64(len(g.share))"  # counted, but no decision reads it
    assert not lifetime(analyze_text(GATE.format(body=unread)))


def test_a03_and_a01_decide_on_lifetime_counts(analyze_text):
    a03 = CORPUS / "a03_openevolve_tenant_fair_share.py"
    [f] = lifetime(analyze_text(a03.read_text(), a03.name))
    assert f.source_line == 61 and "`tenants := len(t.tenantTokens)`" in f.message  # evolved.go:86
    a01 = CORPUS / "a01_pattern_c_adaptive_admission.go"
    got = sorted((f.source_line, f.message.split("`")[3]) for f in lifetime(analyze_text(a01.read_text(), a01.name)))
    assert got == [(152, "a.totalSeen"), (152, "len(a.tenantCounts)")]


def test_the_bundled_example_keeps_no_lifetime_count(dictionary):
    from bot.golang.analyze import analyze

    assert not lifetime(analyze(load_evolved_source(EXAMPLE), dictionary))


def test_a03s_sequences_are_also_decided_without_the_requests_a_windowed_count_forgets(analyze_text):
    from bot.golang import sequences

    a03 = CORPUS / "a03_openevolve_tenant_fair_share.py"
    [spec] = sequences.sequence_specs("admission", True, analyze_text(a03.read_text(), a03.name), {}, [])
    by_label = dict(zip(spec["labels"], spec["candidates"], strict=True))
    recent = [label for label in by_label if label.endswith(":" + sequences.RECENT)]
    oldest = {k: CLOCK - min(h["blis"]["clock"] for h in c["history"]) for k, c in by_label.items() if c["history"]}
    assert recent == [f"{k}:{sequences.RECENT}" for k in oldest if oldest[k] > lifetime_count.STALE_US and ":" in k]
    assert "0:200000000:recent" in recent and "0:200000:recent" not in by_label
    kept = by_label["0:20000000:recent"]["history"]  # 4 requests 20 s apart: the first, 80 s back, is dropped
    assert [h["blis"]["clock"] for h in kept] == [h["blis"]["clock"] for h in by_label["0:20000000"]["history"][1:]]


def test_a_row_decided_otherwise_without_its_long_gone_requests_is_never_asserted():
    """a03's test asserted "after 4 requests 200 s apart (1 from tenant-b, 3 from tenant-a), a request ... from
    tenant-a is rejected": tenant-b, silent for 800 s, still counted and halved tenant-a's fair share."""
    from bot.golang import sequences

    labels = ["0:200000", "0:200000000", "0:200000000:recent", "0:2000000000", "0:2000000000:recent", "0:alone"]
    admits = [False, False, True, True, True, True]
    spec = {"name": sequences.NAME, "labels": labels, "candidates": [{}] * len(labels)}
    result = {
        "name": sequences.NAME,
        "cases": [{"candidate": i, "default": {"admit": a}} for i, a in enumerate(admits)],
    }
    chosen = sequences.choose([spec], [result])
    assert 1 not in chosen and chosen == [0, 5, 3], chosen  # the 0.2 s rejection, alone, and the 0.2 s/2000 s pair
    admits[0] = True  # no fresh rejection left: the stale one is not asserted in its place
    result["cases"] = [{"candidate": i, "default": {"admit": a}} for i, a in enumerate(admits)]
    assert 1 not in sequences.choose([spec], [result])
