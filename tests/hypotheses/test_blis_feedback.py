"""Feedback for BLIS says only what the evidence supports, with the numbers."""

from __future__ import annotations

from bot.hypotheses.blis_feedback import recommendations
from bot.model import VVUQ, Direction, Effect, Family, Hypothesis, HypothesisType, Prediction, Track, Verdict
from bot.model import VerdictStatus as S


def _h(hid="A1", *, magnitude=-0.24, signals=(), not_testable=None) -> Hypothesis:
    return Hypothesis(
        id=hid,
        track=Track(hid[0]),
        title=f"{hid} title",
        statement="lower p95",
        family=Family.CROSS_POLICY,
        vvuq=VVUQ.VALIDATION,
        type=HypothesisType.DOMINANCE,
        diagnostic="If this fails, it would indicate a stale signal.",
        workloads=["load-spikes"],
        prediction=Prediction(metric="e2e_p95", direction=Direction.DECREASE, blis_magnitude=magnitude),
        source=hid,
        signals=list(signals),
        not_testable=not_testable,
    )


def _e(rel, lo, hi, rate=30.0, t_eff=0.06) -> Effect:
    return Effect(
        workload="load-spikes",
        rate=rate,
        metric="e2e_p95",
        baseline_mean=100.0,
        evolved_mean=100.0 * (1 + rel),
        rel_change=rel,
        ci_low=lo,
        ci_high=hi,
        cv_baseline=0.03,
        t_eff=t_eff,
        n_baseline=6,
        n_evolved=6,
    )


def _v(hid, status, effects=(), flags=()) -> Verdict:
    return Verdict(hypothesis_id=hid, status=status, summary="s", effects=list(effects), flags=list(flags))


def test_magnitude_is_fed_back_only_when_the_interval_excludes_blis():
    inside = _v("A1", S.INCONCLUSIVE, [_e(-0.04, -0.30, 0.02)])  # BLIS's -24% is inside: nothing shown
    assert recommendations([(_h(), inside)]) == []
    quiet = _e(-0.039, -0.057, -0.021, t_eff=0.005)  # a cluster whose identical runs differ by 0.5%
    outside = _v("A1", S.INCONCLUSIVE, [quiet], ["attenuated: observed -3.9% is 0.16x"])
    (r,) = recommendations([(_h(), outside)])
    assert r.kind == "structural-model hypothesis"
    assert r.text.startswith(
        "BLIS predicted `e2e_p95` -24.0%; llm-d measured -3.9% (-5.7% to -2.1%) at load-spikes @ 30 req/s"
    )
    assert "improves" not in r.text


def test_a_mechanism_flag_without_an_established_gain_recommends_nothing():
    noise = "mechanism check: on the evolved-for workload load-spikes, e2e_mean changed by -3.0% (lower is better), no improvement beyond its noise floor T_eff 9.6%"
    missing = "mechanism check: the evolved-for workload load-spikes has no e2e_mean reports"
    assert recommendations([(_h(magnitude=None), _v("A1", S.CONFIRMED, flags=[noise, missing]))]) == []
    elsewhere = "mechanism check: the evolved-for workload load-spikes is not the most improved on e2e_p95 (lower is better: cache-warmup -12.0%, load-spikes -6.1%)"
    pairs = [
        (_h("A1", magnitude=None), _v("A1", S.CONFIRMED, flags=[elsewhere])),
        (_h("A3", magnitude=None), _v("A3", S.CONFIRMED, flags=[elsewhere])),
    ]
    (r,) = recommendations(pairs)  # one metric-wide finding, said once
    assert r.kind == "fitness dimension" and "cache-warmup -12.0%, load-spikes -6.1%" in r.text


def test_not_testable_claim_asks_for_a_re_evolution_without_the_signal():
    a2 = _h("A2", signals=["CacheHitRate", "SessionID"], not_testable="the mechanism reads `CacheHitRate` ...")
    b8 = _h("B8", signals=["CacheHitRate"], not_testable="the mechanism reads `CacheHitRate` ...")
    recs = recommendations([(a2, _v("A2", S.NOT_TESTABLE)), (b8, _v("B8", S.NOT_TESTABLE))])
    assert [(r.hypothesis, r.kind) for r in recs] == [("A2", "re-evolution")]
    # SessionID is read too, but llm-d supplies it: only the constant signal is named
    assert "reads `CacheHitRate`, which llm-d cannot supply, so the translated plugin holds it constant" in recs[0].text


def test_refuted_claims_carry_what_was_measured():
    (r,) = recommendations([(_h(signals=["EffectiveLoad"]), _v("A1", S.REFUTED, [_e(0.09, 0.04, 0.14)]))])
    assert r.text.startswith(
        "BLIS predicted `e2e_p95` decrease by -24.0%; llm-d measured e2e_p95 +9.0% (+4.0% to +14.0%)"
    )
    assert "`EffectiveLoad`" in r.text


def test_magnitude_feedback_follows_the_documented_band_not_just_an_excluding_interval():
    """Found by a scheduler author: A1.md says BLIS's magnitude is kept only to flag attenuation (< 0.3x) or
    amplification (> 2x), yet "calibrate the simulator's latency model" fired for -8.8% (-12.2% to -5.4%) against
    BLIS's -27% (0.33x), an interval that excludes BLIS's value but reaches into the band."""
    h = _h(magnitude=-0.27)
    within = _v("A1", S.CONFIRMED, [_e(-0.088, -0.122, -0.054), _e(-0.132, -0.158, -0.105, rate=45.0)])
    assert recommendations([(h, within)]) == []
    amplified = _v("A1", S.CONFIRMED, [_e(-0.70, -0.80, -0.60, t_eff=0.01)])  # 2.2x to 3.0x BLIS's -27%
    (r,) = recommendations([(h, amplified)])
    assert "amplified beyond 2x BLIS's value" in r.text and "latency model" in r.text
    opposite = _v("A1", S.INCONCLUSIVE, [_e(0.02, 0.01, 0.03, t_eff=0.005)])
    (r,) = recommendations([(h, opposite)])
    assert "opposite to BLIS's sign" in r.text


def test_a_change_within_the_noise_floor_never_asks_to_recalibrate_the_simulator():
    """Found by an evidence audit: "Calibrate the simulator's latency model" rested on -3.9% (-5.7% to -2.1%)
    against BLIS's -21%, in a cell whose verdict said -3.9% is within the noise floor T_eff 5.0%."""
    h = _h(magnitude=-0.21)
    noise = _v("A1", S.INCONCLUSIVE, [_e(-0.039, -0.057, -0.021, t_eff=0.05)])
    assert recommendations([(h, noise)]) == []
    quiet = _v("A1", S.INCONCLUSIVE, [_e(-0.039, -0.057, -0.021, t_eff=0.0)])  # the same interval, no floor
    (r,) = recommendations([(h, quiet)])
    assert "attenuated below 0.3x BLIS's value" in r.text


def test_a_schedulers_magnitude_gap_blames_the_changed_mechanism_not_the_latency_model():
    from bot.model import PolicyKind

    a1 = _h(magnitude=-0.27)
    b8 = _h("B8", magnitude=None).model_copy(update={"source": "queue-ordering-authority"})
    attenuated = _v("A1", S.CONFIRMED, [_e(-0.04, -0.06, -0.02, t_eff=0.005)])
    pairs = [(a1, attenuated), (b8, _v("B8", S.CONFIRMED))]
    (r,) = recommendations(pairs, PolicyKind.SCHEDULING)
    assert "Calibrate the simulator's latency model" not in r.text and "not BLIS's latency model" in r.text
    assert "places requests where the evolved order would serve them earlier" in r.text
    assert "B8 (queue-ordering-authority, confirmed)" in r.text and r.kind == "re-evolution"
    (routing,) = recommendations(pairs)
    assert routing.text.endswith("Calibrate the simulator's latency model on load-spikes.")


def _guard(rel: float) -> tuple[Hypothesis, Verdict]:
    """C1 'matches the default within 5%' on mean TTFT, refuted by one cell ``rel`` away (lower is better)."""
    h = _h("C1").model_copy(
        update={"prediction": Prediction(metric="ttft_mean", direction=Direction.EQUIVALENT, margin=0.05)}
    )
    e = _e(rel, rel - 0.03, rel + 0.03).model_copy(update={"metric": "ttft_mean", "status": S.REFUTED})
    return h, _v("C1", S.REFUTED, [e])


def test_an_equivalence_refuted_by_being_better_asks_to_restate_the_claim_not_to_re_evolve():
    """ghuser3 finding 3: TTFT 19% lower against a ±5% margin is no regression."""
    from bot.model.better import better_than_margin, regressed
    from bot.render.claims import cause, verdict_text

    h, v = _guard(-0.191)
    assert better_than_margin(h, v) and not regressed(h, v)
    (r,) = recommendations([(h, v)])
    assert r.kind == "claim re-statement" and "regressed" not in r.text and "Re-evolve" not in r.text
    assert r.text.startswith("The plugin is better than the ±5% margin on `load-spikes` (ttft_mean -19.1%")
    assert "State the claim as an improvement (`ttft_mean` decrease)" in r.text
    assert cause(h, v.effects[0]) == "better than the ±5% margin"
    assert verdict_text(v, h) == "➕ **differs** (at 30 req/s: better than the ±5% margin)"
    # the worse side stays a regression
    h, v = _guard(0.191)
    assert regressed(h, v) and not better_than_margin(h, v)
    (r,) = recommendations([(h, v)])
    assert r.kind == "re-evolution" and r.text.startswith("The plugin regressed `load-spikes`")
    assert cause(h, v.effects[0]) == "beyond the margin"
