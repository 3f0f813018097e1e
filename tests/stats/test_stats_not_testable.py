"""A hypothesis the translated plugin cannot test: its own status, no cells, no share of alpha."""

from __future__ import annotations

import numpy as np

from bot.model import Direction, VerdictStatus, status_counts
from bot.stats.verdicts import evaluate
from tests.stats.stats_synth import arm_pair, build, hypothesis

REASON = "its mechanism reads `CacheHitRate`, which the plugin sets to 0 (evolved line 194)"


def _reports(seed: int = 0):
    rng = np.random.default_rng(seed)
    cells = []
    for wl in ("chat", "multiturn"):
        b, e = arm_pair(rng, cv=0.03, effect=-0.20, n=6)
        cells.append({"workload": wl, "rate": 10, "metric": "ttft_mean", "baseline": b, "evolved": e})
    return build(cells)


def test_not_testable_is_never_judged_however_strong_the_data():
    reports = _reports()
    untestable = hypothesis("A2", workloads=("multiturn",)).model_copy(update={"not_testable": REASON})
    verdicts = {v.hypothesis_id: v for v in evaluate([hypothesis("A1"), untestable], reports)}
    v = verdicts["A2"]
    # The multiturn cell shows a clear 20% drop: still not confirmed, and not "inconclusive, add repetitions".
    assert v.status is VerdictStatus.NOT_TESTABLE
    assert v.effects == []
    assert "CacheHitRate" in v.summary and "evolved line 194" in v.summary
    assert "repetitions would not" in v.summary
    assert verdicts["A1"].status is VerdictStatus.CONFIRMED


def test_not_testable_takes_no_share_of_alpha():
    """The family the multiplicity control counts is the testable hypotheses only."""
    reports = _reports()
    alone = evaluate([hypothesis("A1")], reports)[0]
    untestable = hypothesis("A2", workloads=("multiturn",)).model_copy(update={"not_testable": REASON})
    with_untestable = evaluate([hypothesis("A1"), untestable], reports)[0]
    assert with_untestable.effects[0].p_adjusted == alone.effects[0].p_adjusted
    assert "over the promotion's 1 benchmarked" in with_untestable.summary
    both = evaluate([hypothesis("A1"), hypothesis("A2", workloads=("multiturn",))], reports)[0]
    assert "over the promotion's 2 benchmarked" in both.summary


def test_benchmarked_property():
    h = hypothesis("A1")
    assert h.benchmarked
    assert not h.model_copy(update={"not_testable": REASON}).benchmarked
    assert not h.model_copy(update={"prediction": None}).benchmarked


def test_status_counts_names_not_testable_only_when_present():
    c, i, n = VerdictStatus.CONFIRMED, VerdictStatus.INCONCLUSIVE, VerdictStatus.NOT_TESTABLE
    assert status_counts([c, i, i]) == "1 confirmed, 0 refuted, 2 inconclusive"
    assert status_counts([c, n]) == "1 confirmed, 0 refuted, 0 inconclusive, 1 not testable as translated"


def test_direction_of_untestable_hypothesis_is_kept_for_the_claims_table():
    untestable = hypothesis("A2", direction=Direction.DECREASE).model_copy(update={"not_testable": REASON})
    assert untestable.prediction is not None and untestable.prediction.direction is Direction.DECREASE


def test_gate3_holds_the_status_to_the_hypothesis():
    from bot.model import Verdict
    from bot.review.gate3 import _cell_problems
    from bot.stats.verdicts import not_testable_verdict

    untestable = hypothesis("A2").model_copy(update={"not_testable": REASON})
    assert _cell_problems(untestable, not_testable_verdict(untestable)) == []
    confirmed = Verdict(hypothesis_id="A2", status=VerdictStatus.CONFIRMED, summary="x")
    assert any("cannot test it" in p for p in _cell_problems(untestable, confirmed))
    unexplained = Verdict(hypothesis_id="A1", status=VerdictStatus.NOT_TESTABLE, summary="x")
    assert any("gives no reason" in p for p in _cell_problems(hypothesis("A1"), unexplained))


UNEXERCISED = (
    "the admitter admits priority 0 even on an overloaded pool, and every planned cell sends priority 0, so on these "
    "cells it sheds nothing, like the baseline"
)


def test_a_plugin_the_cells_cannot_exercise_is_not_confirmed_and_not_called_transferred():
    """maint5 3: a02 sheds only sheddable traffic and every cell sends priority 0, so the cells measure the baseline
    twice; its claim was "confirmed" on a planted sample effect and the headline said "Transferred", though gate 2
    had said the cells cannot exercise it (G2.priority-exercised)."""
    from bot.render.claims import claim_rows
    from bot.render.outcome import headline, untested_list
    from bot.stages.pull_request import track_counts, transfer_count
    from bot.stages.run_validate import verdicts_on
    from bot.stats.unjudged import NOT_EXERCISED, unjudged_reason

    reports = _reports()  # a clear 20% drop in every cell: confirmed when the cells can exercise the plugin
    reports.notes = []  # what stage 5's loader adds: no sample data, a report of each arm used
    reports.loaded = [f"{arm}/chat/rate-10/rep-1/results.json" for arm in ("baseline", "evolved")]
    hyps = [hypothesis("A1"), hypothesis("C1", direction=Direction.NO_WORSE, workloads=("multiturn",))]
    judged = verdicts_on(hyps, reports, None, None, evolved_for=None)
    assert judged[0].status is VerdictStatus.CONFIRMED
    verdicts = verdicts_on(hyps, reports, None, None, evolved_for=None, unexercised=UNEXERCISED)
    for v in verdicts:
        assert v.status is not VerdictStatus.CONFIRMED and v.effects == []
        assert unjudged_reason(v) == NOT_EXERCISED
        # the verdict names the finding and what to change
        assert "G2.priority-exercised" in v.summary and "InferenceObjective of negative priority" in v.summary
    pairs = list(zip(hyps, verdicts, strict=True))
    line = headline(pairs)
    assert "ransferred" not in line and line.startswith("Not measurable on these cells")
    assert [r.verdict for r in claim_rows(hyps, {v.hypothesis_id: v for v in verdicts})] == [f"⊘ {NOT_EXERCISED}"]
    assert untested_list(pairs).count("sheds nothing") == 1  # one cause, said once for both
    counts = track_counts(hyps, {v.hypothesis_id: v for v in verdicts})
    assert transfer_count(counts["A"]) == "none measurable on these cells"
    assert transfer_count(track_counts(hyps, {v.hypothesis_id: v for v in judged})["A"]) == "1 of 1 transferred"


def test_the_headline_counts_every_hypothesis_set_aside_track_b_too():
    """DJ1 (consistency4 #5): a02 sets A1, B1-B3 and C1-C6 aside; its headline said "none of the 1 claim and 6
    regression guards is decided", leaving out the three Track B hypotheses the table lists set aside."""
    from bot.render.outcome import headline
    from bot.stages.run_validate import verdicts_on

    reports = _reports()
    reports.notes = []
    reports.loaded = [f"{arm}/chat/rate-10/rep-1/results.json" for arm in ("baseline", "evolved")]
    hyps = [
        hypothesis("A1"),
        hypothesis("B1", direction=Direction.NO_WORSE),
        hypothesis("B2", direction=Direction.NO_WORSE),
        hypothesis("C1", direction=Direction.NO_WORSE, workloads=("multiturn",)),
    ]
    verdicts = verdicts_on(hyps, reports, None, None, evolved_for=None, unexercised=UNEXERCISED)
    line = headline(list(zip(hyps, verdicts, strict=True)))
    assert "so none of the 1 claim, 2 sim-to-real gaps and 1 regression guard is decided" in line, line


def test_a_set_aside_hypothesis_lists_no_rates_as_if_a_cell_had_run():
    """DJ1 (consistency4 #6): a02's B1-B3 read "Workloads: load-spikes; rates: 45" in verdicts.md although the
    plan (0 cells) runs none of them; A1, which names no rate, read "none measured"."""
    from bot.stages.run_validate import verdicts_on
    from bot.stats.evidence import evidence_markdown

    reports = _reports()
    reports.notes = []
    reports.loaded = []
    hyps = [hypothesis("B1", direction=Direction.NO_WORSE).model_copy(update={"rates": [45.0]})]
    [v] = verdicts_on(hyps, reports, None, None, evolved_for=None, unexercised=UNEXERCISED)
    text = evidence_markdown(hyps[0], v)
    assert "rates: none planned (not measurable on these cells)" in text and "rates: 45" not in text


def test_one_reason_per_hypothesis_when_the_cells_cannot_exercise_the_plugin():
    """bj2 2: a02's claim had no benchmark prediction (not decided by benchmarks) while its guards were set aside
    as not measurable on these cells; the headline put the claim under the guards' cause, verdicts.md counted 1 of
    11 as not judged (the PR said 10), and the claims count said "0 of 1 transferred"."""
    from collections import Counter

    from bot.render.outcome import headline
    from bot.review.brief import _claims_count
    from bot.stages.pull_request import track_counts, transfer_count
    from bot.stages.run_validate import verdicts_on
    from bot.stats.evidence import summary_markdown
    from bot.stats.unjudged import NOT_BENCHMARKED, NOT_EXERCISED, unjudged_reason

    reports = _reports()
    reports.notes = []
    reports.loaded = [f"{arm}/chat/rate-10/rep-1/results.json" for arm in ("baseline", "evolved")]
    claim = hypothesis("A1").model_copy(update={"prediction": None})
    hyps = [claim, hypothesis("C1", direction=Direction.NO_WORSE, workloads=("multiturn",))]
    verdicts = verdicts_on(hyps, reports, None, None, evolved_for=None, unexercised=UNEXERCISED)
    assert [unjudged_reason(v) for v in verdicts] == [NOT_BENCHMARKED, NOT_EXERCISED]
    line = headline(list(zip(hyps, verdicts, strict=True)))
    assert "none of the 1 regression guard is decided" in line and "claim" not in line.split(";")[0]
    assert f"A1 is undecided for another reason ({NOT_BENCHMARKED})" in line
    assert "2 of the 2 inconclusive are not judged" in summary_markdown(verdicts, hyps)
    counts = track_counts(hyps, {v.hypothesis_id: v for v in verdicts})
    assert transfer_count(counts["A"]) == f"none judged: 1 {NOT_BENCHMARKED}"
    rows = [v.model_dump(mode="json") for v in verdicts[:1]]
    said = _claims_count(Counter(r["status"] for r in rows), rows)
    assert "transferred" not in said and NOT_BENCHMARKED in said


def test_a_schedulers_order_hypotheses_on_cells_that_leave_its_order_inert_are_set_aside_not_its_guards():
    """CB1 1 and 6: s01's order reads the class and every cell sends priority 0 (s02's reads the prompt length and
    every load-spikes prompt is longer than incumbentInputTokens), so the plugin was a second queue-scorer there;
    its claim and B7 came out "confirmed" and the headline said "Transferred". Only the hypotheses whose mechanism
    is the order are set aside: the guards measure the plugin as deployed and are judged."""
    from bot.bench.order_cells import ORDER_GAP, OrderSetAside
    from bot.render.claims import claim_rows
    from bot.render.outcome import headline
    from bot.stages.pull_request import track_counts, transfer_count
    from bot.stages.run_validate import verdicts_on
    from bot.stats.unjudged import NOT_EXERCISED, ORDER_CAUSE, unjudged_reason

    reports = _reports()  # a clear 20% drop in every cell
    reports.notes = []
    reports.loaded = [f"{arm}/chat/rate-10/rep-1/results.json" for arm in ("baseline", "evolved")]
    gap = hypothesis("B7").model_copy(update={"source": ORDER_GAP})
    other_gap = hypothesis("B1", direction=Direction.NO_WORSE)
    hyps = [hypothesis("A1"), gap, other_gap, hypothesis("C1", direction=Direction.NO_WORSE, workloads=("multiturn",))]
    why = f"{ORDER_CAUSE}: on `chat`: every prompt (912 tokens) is longer than incumbentInputTokens = 512"
    inert = OrderSetAside({"A1": why, "B7": why}, "G2.prompt-length-exercised", "benchmark it on mixed prompts")
    judged = verdicts_on(hyps, reports, None, None, evolved_for=None)
    assert judged[0].status is judged[1].status is VerdictStatus.CONFIRMED  # what was reported before
    verdicts = verdicts_on(hyps, reports, None, None, evolved_for=None, unexercised=inert)
    by_id = {v.hypothesis_id: v for v in verdicts}
    for hid in ("A1", "B7"):
        v = by_id[hid]
        assert v.status is VerdictStatus.INCONCLUSIVE and v.effects == [] and unjudged_reason(v) == NOT_EXERCISED
        assert "912 tokens" in v.summary and "G2.prompt-length-exercised" in v.summary and "mixed prompts" in v.summary
    assert by_id["B1"].status is by_id["C1"].status is VerdictStatus.CONFIRMED  # judged as before
    line = headline(list(zip(hyps, verdicts, strict=True)))
    assert line.startswith(f"{NOT_EXERCISED.capitalize()}: {ORDER_CAUSE}") and "ransferred" not in line
    # DJ1 (consistency4 #5): B7 is set aside too; the headline counted only the claim
    assert "none of the 1 claim and 1 sim-to-real gap is decided" in line and "G2.prompt-length-exercised" in line
    assert [r.verdict for r in claim_rows(hyps, by_id)] == [f"⊘ {NOT_EXERCISED}"]
    assert transfer_count(track_counts(hyps, by_id)["A"]) == "none measurable on these cells"
