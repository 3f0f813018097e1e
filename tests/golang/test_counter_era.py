"""A copy older than BLIS 9a603bca reads ``PendingRequests``, which was not renamed ``InFlightRequests`` only: the
count changed from "routed, not yet queued" (usually 0-2) to "routed until completed" (in transit + queued +
running). The numbers such a program compares with it were tuned on the old count, and the plugin feeds them
today's (trial p3: thresholds 3 and 6 on pending requests, 97.5% agreement that measured none of it)."""

from __future__ import annotations

from bot.golang import counter_era
from bot.model import Severity

from .conftest import FIXTURES, translate_path

ROUTE = (
    "package sim\n\ntype RoutingSnapshot struct {{\n\tID string\n\tQueueDepth int\n\t{field} int\n}}\n\n"
    "func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {{\n"
    "\ttotal := 0\n\tfor _, snap := range state.Snapshots {{\n\t\ttotal += snap.{field}\n\t}}\n"
    "\tavg := float64(total) / float64(len(state.Snapshots))\n"
    '\tif avg > 3 {{\n\t\treturn NewRoutingDecision("a", "busy")\n\t}}\n'
    '\treturn NewRoutingDecision("x", "y")\n}}\n'
)


def _era_findings(findings):
    return [f for f in findings if f.check == counter_era.CHECK]


def test_a_pre_rename_copy_is_told_its_thresholds_were_tuned_on_the_old_count(dictionary):
    """routing_penalties.go (a February 2026 copy): `load > 6` on EffectiveLoad (which adds PendingRequests in the
    copy) and `s.PendingRequests < 3` were tuned on the routed-not-yet-queued count; the plugin reads in-flight
    requests. One IMPORTANT finding names both thresholds by parameter and evolved line, says what to do, and says
    the agreement figure does not measure the change (the harness feeds the copy today's count)."""
    _, _, tr = translate_path(FIXTURES / "routing_penalties.go", dictionary)
    [f] = _era_findings(tr.findings)
    assert f.severity == Severity.IMPORTANT
    assert f.source_line == 61  # the first read of the counter: `load := s.EffectiveLoad()`
    assert "routed and not yet queued" in f.message and "until" in f.message and "9a603bca" in f.message
    assert "`loadThreshold` (6, line 62)" in f.message and "`pendingRequestsThreshold` (3, line 68)" in f.message
    assert "agreement" in f.message and "today's" in f.message
    assert "param loadThreshold" in f.fix and "pendingRequestsThreshold" in f.fix and "re-evolve" in f.fix
    assert "baseline run" in f.fix
    # the per-line rename suggestion no longer says a rename is all it takes
    renamed = [x for x in tr.findings if x.check == "hazard.removed-identifier" and "PendingRequests" in x.message]
    assert renamed and all(counter_era.CHECK in x.fix for x in renamed)
    # the report says it in its "How the harness ran the BLIS original" notes too
    assert "not the routed-not-yet-queued count" in tr.report_markdown


def test_the_parameter_comments_name_the_signal_the_plugin_reads(dictionary):
    """The plugin reads InFlightRequests (inflight-load-producer's InFlightLoad.Requests); a comment that says
    `s.PendingRequests` sends an llm-d reader looking for a field the plugin does not have."""
    _, _, tr = translate_path(FIXTURES / "routing_penalties.go", dictionary)
    main = next(t for p, t in tr.files.items() if p.endswith(".go") and "type Parameters struct" in t)
    assert _field_doc(main, "PendingRequestsThreshold").startswith(
        "PendingRequestsThreshold is the threshold `s.InFlightRequests` is compared with"
    )
    for field in ("PendingRequestsThreshold", "LoadThreshold"):  # directly, and through EffectiveLoad()
        doc = _field_doc(main, field)
        assert "InFlightLoad.Requests" in doc and "inflight-load-producer" in doc, doc
        assert "PendingRequests" in doc and "routed and not yet queued" in doc, doc
    assert "`s.PendingRequests`" in _field_doc(main, "PendingRequestsThreshold")
    assert "PendingRequests" not in _field_doc(main, "KVUtilizationThreshold")


def _field_doc(go: str, field: str) -> str:
    """The comment above a Parameters field, as one line."""
    lines = go.split("type Parameters struct", 1)[1].splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{field} "))
    top = at
    while lines[top - 1].strip().startswith("//"):
        top -= 1
    return " ".join(line.strip().removeprefix("//").strip() for line in lines[top:at])


def test_an_average_of_the_old_count_is_named(analyze_text):
    an = analyze_text(ROUTE.format(field="PendingRequests"))
    [f] = _era_findings(an.findings)
    assert f.severity == Severity.IMPORTANT and "`avgThreshold` (3, line 15)" in f.message


def test_a_current_copy_reads_the_count_it_was_tuned_on(analyze_text):
    assert _era_findings(analyze_text(ROUTE.format(field="InFlightRequests")).findings) == []


def test_re_calibrating_every_named_threshold_at_gate_1_makes_it_a_note(dictionary):
    """The fix is `param` lines: once a person set every threshold it names, the finding no longer blocks (as a
    re-calibrated hazard.sim-scale-threshold does), and gate 1 does not raise it again from the analysis."""
    from bot.golang.analyze import analyze
    from bot.golang.recalibration import recalibrated_findings
    from bot.golang.source import load_evolved_source

    an = analyze(load_evolved_source(FIXTURES / "routing_penalties.go"), dictionary)
    assert counter_era.to_recalibrate(an) == ["loadThreshold", "pendingRequestsThreshold"]
    [half] = _era_findings(recalibrated_findings(an, {"loadThreshold": 40}))
    assert half.severity == Severity.IMPORTANT and not counter_era.recalibrated(an, {"loadThreshold"})
    [done] = _era_findings(recalibrated_findings(an, {"loadThreshold": 40, "pendingRequestsThreshold": 12}))
    assert done.severity == Severity.SUGGESTION
    assert "re-calibrated at gate 1: `loadThreshold` = 40, `pendingRequestsThreshold` = 12" in done.message
    assert counter_era.recalibrated(an, {"loadThreshold", "pendingRequestsThreshold"})
