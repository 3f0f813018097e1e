"""A verdict judged on cells that never exercise one of the plugin's rules says so wherever it is shown.

trial3 p2 (tests/review/fixtures/tenant_fair): a per-tenant fair-share admitter is judged on cells that send one
fairness ID each, so its rule (reject a tenant beyond 1.5x the active tenants' mean) never meets a second tenant.
Gate 2 raises ``G2.tenants-exercised``; a person may approve anyway. Stage 5 cannot prove the plugin inert there
(it is stateful, and a per-tenant limit acts on a lone tenant too), so it judges the claims as measured and each
verdict carries the caveat: "confirmed" is never shown bare at gate 3, in the report or in the PR.
"""

from __future__ import annotations

from bot.model import Direction, VerdictStatus
from bot.stats.unjudged import RuleCaveat, rule_caveat
from tests.stats.stats_synth import hypothesis
from tests.stats.test_stats_not_testable import _reports

CAVEAT = RuleCaveat(
    rule="per-tenant rule",
    check="G2.tenants-exercised",
    cause="every planned cell sends its requests under one fairness ID",
    fix="send several tenants at once (`x-llm-d-inference-fairness-id`)",
)


def _judged(caveat=CAVEAT):
    from bot.stages.run_validate import verdicts_on

    reports = _reports()  # a clear 20% drop in every cell: confirmed
    reports.notes = []
    reports.loaded = [f"{arm}/chat/rate-10/rep-1/results.json" for arm in ("baseline", "evolved")]
    hyps = [
        hypothesis("A1"),
        hypothesis("C1", direction=Direction.NO_WORSE, workloads=("multiturn",)),
        hypothesis("B1").model_copy(update={"prediction": None}),  # not benchmarked: no cell, no caveat
    ]
    return hyps, verdicts_on(hyps, reports, None, None, evolved_for=None, caveat=caveat)


def test_the_caveat_rides_on_every_verdict_judged_on_the_cells_and_changes_no_status():
    _, verdicts = _judged()
    a1, c1, b1 = verdicts
    _, plain = _judged(caveat=None)
    assert [v.status for v in verdicts] == [v.status for v in plain]  # judged as measured: nothing set aside
    assert a1.status is VerdictStatus.CONFIRMED and a1.effects
    for v in (a1, c1):
        assert rule_caveat(v) == "per-tenant rule not exercised on these cells (gate 2's G2.tenants-exercised)"
        assert any("one fairness ID" in f and "x-llm-d-inference-fairness-id" in f for f in v.flags)
        assert "G2.tenants-exercised" in v.summary  # the detail pages print the summary
    assert rule_caveat(b1) == "" and "G2.tenants-exercised" not in b1.summary
    assert plain[0].flags == [f for f in a1.flags if "G2.tenants-exercised" not in f]


def test_confirmed_is_never_shown_bare_in_the_headline_tables_and_counts():
    from bot.render.claims import claim_rows, transfer_words
    from bot.render.outcome import headline
    from bot.stages.pull_request import track_counts, transfer_count

    hyps, verdicts = _judged()
    by_id = {v.hypothesis_id: v for v in verdicts}
    line = headline(list(zip(hyps, verdicts, strict=True)))
    assert line.startswith("Transferred") and "G2.tenants-exercised" in line and "per-tenant rule" in line
    [row] = claim_rows(hyps[:1], by_id)
    assert row.verdict.startswith("✅ confirmed") and "G2.tenants-exercised" in row.verdict
    a = track_counts(hyps, by_id)["A"]
    assert "G2.tenants-exercised" in transfer_count(a, verdicts)
    assert transfer_words(1, 1, {}) == "1 of 1 transferred"  # unchanged without the caveat
    _, plain = _judged(caveat=None)
    assert "G2.tenants-exercised" not in headline(list(zip(hyps, plain, strict=True)))


def test_gate_3_says_it_once_for_every_caveated_hypothesis():
    from bot.review.gate3 import rule_caveat_notes

    hyps, verdicts = _judged()
    [note] = rule_caveat_notes(hyps, {v.hypothesis_id: v for v in verdicts})
    assert note.startswith("A1, C1: per-tenant rule not exercised on these cells (gate 2's G2.tenants-exercised)")
    assert "one fairness ID" in note and "x-llm-d-inference-fairness-id" in note
    _, plain = _judged(caveat=None)
    assert rule_caveat_notes(hyps, {v.hypothesis_id: v for v in plain}) == []
