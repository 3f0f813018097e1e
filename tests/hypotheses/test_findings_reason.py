"""A FINDINGS document's Resolution, Root cause and Action follow the verdict's real reason (consistency finding 8).

Found by an llm-d reader: every inconclusive FINDINGS said "Inconclusive — parameter-dependent" (nothing varied a
parameter), "within the noise floor or too noisy" (C1's interval lay within the margin: multiplicity held it back)
and "see the promotion report's feedback for BLIS" (which had no entry for it).
"""

from __future__ import annotations

from bot.hypotheses.blis_feedback import Recommendation
from bot.model import Direction, Effect, PolicyKind, TranslationSummary, Verdict, VerdictStatus
from bot.stages.document import action, devils_advocate, resolution, root_cause
from tests.stats.stats_synth import hypothesis

C, R, U = VerdictStatus.CONFIRMED, VerdictStatus.REFUTED, VerdictStatus.INCONCLUSIVE
SUMMARY = TranslationSummary(kind=PolicyKind.ROUTING, plugin_type="x", package_dir="pkg/x", signals=[])


def _effect(rate: float, rel: float, ci: tuple[float, float], status: VerdictStatus, reason: str) -> Effect:
    return Effect(
        workload="cache-warmup",
        rate=rate,
        metric="e2e_mean",
        baseline_mean=966.5,
        evolved_mean=966.5 * (1 + rel),
        rel_change=rel,
        ci_low=ci[0],
        ci_high=ci[1],
        p_value=0.003,
        p_adjusted=0.004,
        cv_baseline=0.02,
        t_eff=0.05,
        n_baseline=7,
        n_evolved=7,
        status=status,
        reason=reason,
    )


def _a3():
    h = hypothesis("A3", metric="e2e_mean", workloads=["cache-warmup"])
    floor = _effect(20, -0.039, (-0.057, -0.021), U, "change -3.9% is within the noise floor T_eff 5.0%")
    beyond = _effect(35, -0.065, (-0.09, -0.04), C, "lower beyond the noise floor, significant at level 0.0435")
    return h, Verdict(hypothesis_id="A3", status=U, summary="s", effects=[floor, beyond])


def _c1():
    h = hypothesis("C1", metric="e2e_mean", direction=Direction.EQUIVALENT, workloads=["cache-warmup"])
    cell = _effect(10, 0.006, (-0.015, 0.027), U, "equivalence within ±5% not shown (p = 0.02 > 0.0045, ...)")
    return h, Verdict(hypothesis_id="C1", status=U, summary="s", effects=[cell])


def test_a_noise_floor_verdict_says_so_and_points_to_blis_only_with_an_entry():
    h, v = _a3()
    assert resolution(h, v, PolicyKind.ROUTING) == "Inconclusive (at 20 req/s: within the noise floor)"
    notes = root_cause(h, v, SUMMARY)
    assert notes[0].startswith("At 20 req/s: the change is smaller than the noise floor T_eff"), notes
    assert not any("too noisy" in n for n in notes)
    said = action(h, v, [])
    assert "feedback" not in said and "within the noise floor" in said
    rec = Recommendation("A3", "structural-model hypothesis", "text")
    assert action(h, v, [rec]) == "see the promotion report's feedback for BLIS"


def test_an_equivalence_held_by_multiplicity_asks_for_more_runs_or_a_wider_margin():
    h, v = _c1()
    said = resolution(h, v, PolicyKind.ROUTING)
    assert said == "Inconclusive (at 10 req/s: not significant after multiplicity control)"
    assert "parameter-dependent" not in said
    (note,) = root_cause(h, v, SUMMARY)
    assert "interval lies within the margin" in note and "more runs per arm" in note and "wider margin" in note
    assert "noise floor" not in note
    assert action(h, v, []).startswith("more runs per arm (or a wider margin at gate 2)")


def test_parameter_dependent_is_said_only_when_cells_disagree():
    h, v = _a3()
    refuted = _effect(5, 0.12, (0.08, 0.16), R, "higher, opposite to the prediction, beyond the noise floor")
    mixed = v.model_copy(
        update={
            "effects": [v.effects[1], refuted],
            "flags": ["parameter-dependent: confirmed in some cells, refuted in others"],
        }
    )
    assert resolution(h, mixed, PolicyKind.ROUTING) == "Inconclusive — parameter-dependent"
    assert any("depends on the operating point" in n for n in root_cause(h, mixed, SUMMARY))


def test_stage_6s_summary_agrees_in_number():
    """Found by an llm-d reader: '17 FINDINGS documents, the promotion report, 1 BLIS recommendations'."""
    from bot.stages.document import stage_summary

    assert stage_summary(17, 1, 0) == "17 FINDINGS documents, the promotion report, 1 BLIS recommendation"
    assert stage_summary(1, 0, 1) == (
        "1 FINDINGS document, the promotion report, 0 BLIS recommendations; 1 root-cause narrative by the Claude author"
    )


def test_an_equivalence_measured_beyond_its_margin_never_says_more_runs_would_show_it():
    """Found end to end (s01 B3): mean TTFT -6.4% (90% CI -9.2% to -3.5%) against a ±5% equivalence, and the root
    cause read "too few or too noisy to show the claim ...: more runs ... would". The change is already beyond the
    margin: more runs would more likely refute it. Said for every kind: the words are the stats', not a kind's."""
    h = hypothesis("B3", metric="e2e_mean", direction=Direction.EQUIVALENT, workloads=["cache-warmup"])
    cell = _effect(30, -0.064, (-0.092, -0.035), U, "equivalence within ±5% not shown (p = 1 > 0.000943, ...)")
    v = Verdict(hypothesis_id="B3", status=U, summary="s", effects=[cell])
    for kind in PolicyKind:
        assert (
            resolution(h, v, kind)
            == "Inconclusive (at 30 req/s: measured change beyond the ±5% margin, not significant)"
        )
    notes = root_cause(h, v, SUMMARY)
    assert "more likely as a refutation" in notes[0] and "would show" not in notes[0], notes
    assert not any("too few or too noisy to show the claim" in n for n in notes), notes
    assert "against the claim" in action(h, v, [])
    # a no-regression claim measured past its margin, the same; one measured inside it keeps "more runs would"
    nw = hypothesis("C2", metric="e2e_mean", direction=Direction.NO_WORSE, workloads=["cache-warmup"])
    worse = _effect(30, 0.064, (0.035, 0.092), U, "a regression beyond 5% is not ruled out (...)")
    assert (
        "more likely as a refutation"
        in root_cause(nw, Verdict(hypothesis_id="C2", status=U, summary="s", effects=[worse]), SUMMARY)[0]
    )
    inside = _effect(30, 0.02, (-0.01, 0.06), U, "a regression beyond 5% is not ruled out (...)")
    notes = root_cause(nw, Verdict(hypothesis_id="C2", status=U, summary="s", effects=[inside]), SUMMARY)
    assert "more runs per arm or a quieter cluster would" in notes[0], notes


def test_a_verdict_no_benchmark_decides_gets_its_own_devils_advocate_never_more_repetitions():
    """CF2 (consistency3 5): every not-judged FINDINGS said "more repetitions or a quieter cluster may still resolve
    it", beside Results saying not measurable on these cells, not runnable on this cluster, no planned run varies
    it, or no benchmark prediction: none of which more runs of the same cells decide."""
    from bot.stats.unjudged import not_benchmarked_verdict, set_aside

    a1 = hypothesis("A1", workloads=["load-spikes"])
    aside = set_aside([a1], {"A1": "every request ranks alike"}, "benchmark it on mixed priorities", "G2.x")[0]
    runnable = a1.model_copy(update={"prediction": None, "not_in_plan": "it needs a run this cluster cannot do: x"})
    varied = a1.model_copy(update={"prediction": None, "not_in_plan": "no planned run varies the signal"})
    no_prediction = a1.model_copy(update={"prediction": None})
    said = {}
    for name, h in {"aside": aside, "runnable": runnable, "varied": varied, "none": no_prediction}.items():
        said[name] = devils_advocate(h, not_benchmarked_verdict(h))
        assert said[name] and "may still resolve it" not in said[name], name
    assert "cells that exercise it" in said["aside"] and "cluster that can apply" in said["runnable"]
    assert "a run that varies it" in said["varied"] and "stage 4 tests or review" in said["none"]
    assert len(set(said.values())) == 4
    h, v = _c1()  # measured and inconclusive: the template's own text (more runs may resolve it)
    assert devils_advocate(h, v) is None


def test_a_confirmed_no_regression_is_not_argued_as_an_improvement():
    """CF2 (consistency3 5): s01's C6, confirmed at -0.3% throughput, read "The improvement could come from ..."."""
    h = hypothesis("C6", metric="throughput", direction=Direction.NO_WORSE, workloads=["sanity-random"])
    v = Verdict(hypothesis_id="C6", status=C, summary="s")
    said = devils_advocate(h, v)
    assert said.startswith("A confirmed no-worse claim") and "improvement could come" not in said
    a3, _ = _a3()
    assert devils_advocate(a3, Verdict(hypothesis_id="A3", status=C, summary="s")) is None
