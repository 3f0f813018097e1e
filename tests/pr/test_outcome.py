"""The report's first screen: headline wording, the claims table, regressions and what was not tested."""

from __future__ import annotations

import pytest

from bot.bench.evidence import SAMPLE_FLAG
from bot.model import Direction, Effect, Verdict, VerdictStatus
from bot.render import outcome as claims
from tests.stats.stats_synth import hypothesis

C, R, U = VerdictStatus.CONFIRMED, VerdictStatus.REFUTED, VerdictStatus.INCONCLUSIVE


def effect(rel: float, status: VerdictStatus, *, workload="chat", rate=10.0, t_eff=0.05, reason="", p_adj=0.01):
    return Effect(
        workload=workload,
        rate=rate,
        metric="ttft_mean",
        baseline_mean=31810.0,
        evolved_mean=31810.0 * (1 + rel),
        rel_change=rel,
        ci_low=rel - 0.02,
        ci_high=rel + 0.02,
        p_value=0.001,
        p_adjusted=p_adj,
        test="Welch t on log values, one-sided",
        cv_baseline=0.02,
        t_eff=t_eff,
        n_baseline=8,
        n_evolved=8,
        status=status,
        reason=reason,
    )


def pair(hid, status, *effects, direction=Direction.DECREASE, flags=(), blis=None, summary="s"):
    h = hypothesis(hid, direction=direction, blis_magnitude=blis)
    return h, Verdict(hypothesis_id=hid, status=status, summary=summary, effects=list(effects), flags=list(flags))


def claim(hid, status):
    return pair(hid, status, effect(-0.1 if status is C else 0.01, status))


def guard(hid, status):
    return pair(hid, status, effect(0.08 if status is R else 0.0, status), direction=Direction.NO_WORSE)


def test_undecided_guards_are_no_regression_shown_not_found():
    """Stats review #3: four guards whose intervals lie on the bad side (two beyond the margin) were summed up as
    "no regression found"; undecided guards rule nothing out, so the headline says how large a regression
    their intervals still allow."""
    worse = effect(0.066, U)
    worse.ci_low, worse.ci_high = 0.038, 0.094
    pairs = [
        claim("A1", C),
        guard("C1", C),
        pair("C2", U, worse, direction=Direction.NO_WORSE),
        pair("C3", U, effect(0.01, U), direction=Direction.NO_WORSE),
    ]
    line = claims.headline(pairs)
    assert "no regression found" not in line
    assert line.endswith(
        "no regression shown (1 of 3 guards shown to hold, 2 undecided; regressions up to 9.4% not ruled out)."
    )
    assert claims.headline([claim("A1", C), guard("C1", C)]).endswith("; no regression found.")


@pytest.mark.parametrize(
    ("statuses", "guards", "expected"),
    [
        ((C, C, C), (C,), "Transferred: all 3 claims confirmed; no regression found."),
        ((C,), (), "Transferred: the claim is confirmed; no regression found."),
        (
            (C, U, C),
            (C, U),
            (
                "Partly transferred: 2 of 3 claims confirmed (1 inconclusive); "
                "no regression shown (1 of 2 guards shown to hold, 1 undecided; regressions up to 2.0% not ruled out)."
            ),
        ),
        (
            (R, U),
            (R, C, R),
            "Not transferred: none of the 2 claims confirmed (1 refuted, 1 inconclusive); 2 regressions found (C1, C3).",
        ),
        ((U, U), (), "Not shown: none of the 2 claims confirmed (2 inconclusive); no regression found."),
        ((), (C,), "No transfer claim to judge; no regression found."),
    ],
)
def test_headline_says_transferred_partly_or_not_and_the_regressions(statuses, guards, expected):
    """'Not transferred' needs a refuted claim; inconclusive claims alone are 'not shown', no evidence against."""
    pairs = [claim(f"A{i + 1}", s) for i, s in enumerate(statuses)] + [
        guard(f"C{i + 1}", s) for i, s in enumerate(guards)
    ]
    assert claims.headline(pairs) == expected


def test_headline_without_results_says_nothing_is_decided():
    pairs = [pair("A1", U, flags=["no-results"]), pair("C1", U, flags=["no-results"])]
    assert claims.headline(pairs) == (
        "Not measured yet: no benchmark results, so none of the 1 claim and 1 regression guard is decided."
    )


def test_a_claim_not_testable_as_translated_is_counted_apart_and_listed_with_its_reason():
    """'Not testable as translated' is not tested, never 'inconclusive'; its reason (the hypothesis's own) is listed
    under 'Not tested', and the detail does not repeat the status as a note."""
    from bot.stats.verdicts import not_testable_verdict

    h = hypothesis("A2").model_copy(
        update={"not_testable": "its mechanism reads CacheHitRate, which the plugin sets to 0"}
    )
    pairs = [claim("A1", C), (h, not_testable_verdict(h))]
    assert claims.headline(pairs) == (
        "Partly transferred: 1 of 2 claims confirmed (1 not testable as translated); no regression found."
    )
    assert claims.untested_list(pairs) == (
        "- **A2** A2 ttft_mean decrease: not testable as translated: its mechanism reads CacheHitRate, which the "
        "plugin sets to 0"
    )
    detail = claims.detail_markdown(*pairs[1], findings_link="findings/A2.md")
    assert detail == "**A2** A2 ttft_mean decrease: ⊘ not testable as translated · [findings](findings/A2.md)"


def test_claims_table_has_one_row_per_claim_with_blis_measured_interval_and_verdict():
    pairs = [
        pair("A1", C, effect(-0.096, C, rate=30), effect(-0.144, C, rate=45), blis=-0.24),
        pair("A2", U, effect(-0.039, U, rate=20, reason="change -3.9% is within the noise floor T_eff 5.0%")),
        guard("C1", C),
    ]
    table = claims.claims_table(pairs).splitlines()
    assert table[0] == "| Claim | BLIS predicted | llm-d measured (90% CI) | Verdict |"
    assert len(table) == 4  # header, rule, A1, A2: Track C is not a claim
    assert table[2] == (
        "| **A1** A1 ttft_mean decrease | −24.0% | −9.6% [−11.6%, −7.6%] at 30 req/s; "
        "−14.4% [−16.4%, −12.4%] at 45 req/s | ✅ confirmed |"
    )
    assert table[3] == (
        "| **A2** A2 ttft_mean decrease | decrease (no magnitude) | −3.9% [−5.9%, −1.9%] at 20 req/s "
        "| ❔ inconclusive (at 20 req/s: within the noise floor) |"
    )


def test_claims_table_escapes_what_people_wrote():
    h, v = claim("A1", C)
    h = h.model_copy(update={"title": "chat|<!-- x -->"})
    row = claims.claims_table([(h, v)]).splitlines()[2]
    assert "<!--" not in row and "chat\\|" in row
    assert row.count(" | ") == 3


def test_guards_table_and_untested_list():
    runnable = pair("B1", C, effect(-0.05, C), direction=Direction.NO_WORSE)
    h, v = pair("B2", U, flags=["not runnable on this cluster"])
    lora = (h.model_copy(update={"not_in_plan": "it needs a run this cluster cannot do: no LoRA scenario"}), v)
    wide = pair(
        "C1",
        U,
        effect(0.006, U, t_eff=0.059, reason="equivalence within ±5% not shown"),
        direction=Direction.EQUIVALENT,
    )
    pairs = [runnable, lora, wide]
    c_table = claims.guards_table(pairs, claims.Track.C)
    # the noise floor plays no part in an equivalence test: an interval within the margin is held back by the level
    assert "(at 10 req/s: not significant after multiplicity control)" in c_table and "wider" not in c_table
    far = pair("C1", U, effect(0.03, U, t_eff=0.059), direction=Direction.EQUIVALENT)
    assert "interval reaches beyond the ±5% margin" in claims.guards_table([far], claims.Track.C)
    assert "B2" not in claims.guards_table(pairs, claims.Track.B)
    assert (
        claims.untested_list(pairs) == "- **B2** B2 ttft_mean decrease: not runnable on this cluster: no LoRA scenario"
    )
    assert claims.untested_list([runnable]) == "Every hypothesis was tested."


def test_detail_says_each_cell_once_without_the_sample_flag_or_exponents():
    h, v = pair(
        "A1",
        U,
        effect(-0.039, U, reason="change -3.9% is within the noise floor T_eff 5.0%"),
        effect(-0.074, C, rate=35, p_adj=1.0),
        flags=[SAMPLE_FLAG, "attenuated: observed -3.9% is 0.19x BLIS's"],
        blis=-0.21,
    )
    text = claims.detail_markdown(h, v, findings_link="findings/A1.md")
    lines = text.splitlines()
    assert lines[0].startswith("**A1** ") and lines[0].endswith("· [findings](findings/A1.md)")
    assert lines[1] == (
        "- chat at 10 req/s: −3.9% [−5.9%, −1.9%]; 31,810 → 30,570 ms; noise floor 5.0%; n 8/8; "
        "p 0.001 (adjusted 0.01); inconclusive: change -3.9% is within the noise floor T_eff 5.0%"
    )
    assert lines[2].endswith("p 0.001 (adjusted 1)")
    assert lines[3] == "- Note: attenuated: observed -3.9% is 0.19x BLIS's"
    assert "SAMPLE" not in text and "e+0" not in text


def test_how_to_read_names_each_test_once_with_its_hypotheses():
    pairs = [claim("A1", C), claim("A2", C)]
    text = claims.how_to_read(pairs)
    assert text.count("Welch t on log values, one-sided (A1, A2)") == 1
    assert "90% Welch interval" in text


def test_sample_data_is_detected_from_the_flags():
    assert claims.is_sample([pair("A1", C, flags=[SAMPLE_FLAG])])
    assert not claims.is_sample([claim("A1", C)])


def test_a_hypothesis_over_several_workloads_names_the_workload_of_each_cell_escaped():
    h, v = pair(
        "C1",
        U,
        effect(0.0, C, workload="chat"),
        effect(0.0, U, workload="code|x", reason="a regression beyond 5% is not ruled out"),
        direction=Direction.NO_WORSE,
    )
    row = claims.guards_table([(h, v)], claims.Track.C).splitlines()[2]
    assert "+0.0% [−2.0%, +2.0%] chat at 10 req/s; +0.0% [−2.0%, +2.0%] code\\|x at 10 req/s" in row
    assert row.endswith("❔ inconclusive (code\\|x at 10 req/s: not significant after multiplicity control) |")


def _shed_pairs():
    """A1 (lower TTFT) and B1 (no worse) on reports where the evolved arm loses 12% of its requests, as an
    admission policy that rejects requests would: both cells are significant, the shedding guard demotes them."""
    import numpy as np

    from bot.stats.verdicts import evaluate
    from tests.stats.stats_synth import arm_pair, build

    b, e = arm_pair(np.random.default_rng(0), cv=0.03, effect=-0.20, n=7)
    cell = {"workload": "chat", "rate": 45, "metric": "ttft_mean", "baseline": b, "evolved": e}
    cell |= {"total": 1000, "lost_evolved": 120}
    hs = [hypothesis("A1"), hypothesis("B1", direction=Direction.NO_WORSE)]
    verdicts = evaluate(hs, build([cell]))
    return list(zip(hs, verdicts, strict=True))


def test_a_claim_the_shedding_guard_demoted_says_so_in_every_table_not_not_significant():
    """The guard's reason, with the shed rate, is what the tables say: 'not significant' beside p = 1e-05 misled."""
    from bot.render.claims import claim_rows

    pairs = _shed_pairs()
    (ha, va), _ = pairs
    assert va.status is U and va.effects[0].p_value < 0.001  # significant, held back by the guard alone
    reason = "(at 45 req/s: demoted: 12.0% of requests lost vs 0.0% for baseline (shedding guard))"
    row = claims.claims_table(pairs).splitlines()[2]  # verdicts.md and report.md
    assert row.endswith(f"❔ inconclusive {reason} |") and "not significant" not in row
    assert claim_rows([ha], {"A1": va})[0].verdict == f"❔ inconclusive {reason}"  # the PR body's rows
    b_row = claims.guards_table(pairs, claims.Track.B)
    assert reason in b_row and "multiplicity" not in b_row
    # 12% of the evolved arm's requests lost is a regression whatever the latencies (reanalysis finding 2)
    assert claims.headline(pairs) == (
        "Not shown: none of the 1 claim confirmed (1 inconclusive; the shedding guard held back A1); requests lost "
        "more often with the evolved plugin (chat at 45 req/s: 12.0% of requests lost vs 0.0% for baseline), a "
        "regression the guards' metrics do not count."
    )


def test_the_detail_of_a_demoted_cell_gives_the_shed_rate_per_arm_and_not_the_level_as_the_reason():
    (ha, va), (_, vb) = _shed_pairs()
    cell = claims.detail_markdown(ha, va, findings_link="findings/A1.md").splitlines()[1]
    assert (
        "; requests lost 0.00% → 12.00%; inconclusive: demoted by the shedding guard: the evolved plugin lost " in cell
    )
    assert (va.effects[0].lost_baseline, va.effects[0].lost_evolved) == (0.0, 0.12)
    # a no-worse gap demoted by the guard is not "held back by the level after multiplicity control"
    assert "demoted by the shedding guard" in vb.summary and "what holds it back is the level" not in vb.summary


def test_the_detail_gives_lost_shares_with_the_flags_precision_and_none_when_both_round_to_zero():
    """bj2 6: a baseline's 0.02% read "requests lost 0.0% → 0.0%", only in the cells where it was not zero."""
    (ha, va), _ = _shed_pairs()
    e = va.effects[0]
    tiny = e.model_copy(update={"lost_baseline": 0.000212, "lost_evolved": 0.0})
    assert "; requests lost 0.02% → 0.00%" in claims.cell_line(ha, tiny)
    nil = e.model_copy(update={"lost_baseline": 0.00002, "lost_evolved": 0.0})
    assert "requests lost" not in claims.cell_line(ha, nil)


def test_headline_does_not_nest_parentheses_for_claims_with_no_measured_cell():
    pairs = [pair("A1", U), pair("A2", U), claim("A3", R)]
    assert claims.headline(pairs) == (
        "Not transferred: none of the 3 claims confirmed (1 refuted, 2 inconclusive with no measured cell); "
        "no regression found."
    )


def test_a_mean_reads_the_same_in_verdicts_md_and_the_report():
    """Found by an llm-d reader: verdicts.md showed C2's means as 31810 -> 31680, report.md as 31,811 -> 31,684."""
    from bot.render import environment
    from bot.stats.evidence import evidence_table

    e = effect(-0.004, U, reason="a regression beyond 5% is not ruled out").model_copy(
        update={"baseline_mean": 31811.2, "evolved_mean": 31684.0}
    )
    h, v = pair("C2", U, e, direction=Direction.NO_WORSE)
    row = evidence_table(v).loc[0]
    assert (row["baseline mean"], row["evolved mean"]) == ("31,810", "31,680")
    assert "; 31,810 → 31,680 ms;" in claims.cell_line(h, e)
    findings_row = environment().from_string("| {{ mean(e.baseline_mean) }} | {{ mean(e.evolved_mean) }} |")
    assert findings_row.render(e=e) == "| 31,810 | 31,680 |"  # findings.md.j2's cells
