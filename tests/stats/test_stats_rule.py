"""The vectorised per-cell rule: Welch on logs, the robust outlier rule, and batch = one-at-a-time."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bot.model import Direction, VerdictStatus
from bot.stats import rule
from bot.stats.verdicts import evaluate
from tests.stats.stats_synth import arm_pair, build, hypothesis, log_sd, with_sample_cv


def test_welch_on_logs_matches_scipy():
    rng = np.random.default_rng(1)
    b = rng.lognormal(0, 0.05, (200, 5))
    e = rng.lognormal(-0.05, 0.1, (200, 4))
    st = rule.cell_stats(b, e, robust=False)
    for kind, alternative in ((rule.DECREASE, "less"), (rule.INCREASE, "greater")):
        ours = rule.p_values(st, kind, 0.05, "lower")[0]
        ref = stats.ttest_ind(np.log(e), np.log(b), axis=1, equal_var=False, alternative=alternative).pvalue
        assert np.allclose(ours, ref, rtol=1e-9, atol=1e-12)
    # the interval inverts the test: its upper end is below 0 exactly when the 5% one-sided test rejects
    lo, hi = rule.interval(st, 0.05)
    p = rule.p_values(st, rule.DECREASE, 0.05, "lower")[0]
    assert np.array_equal(hi < 0, p < 0.05)
    assert np.all((lo <= st.rel) & (st.rel <= hi))


def test_a_batch_row_is_decided_like_the_same_data_alone():
    rng = np.random.default_rng(2)
    b = rng.lognormal(0, 0.06, (50, 6))
    e = rng.lognormal(-0.08, 0.06, (50, 6))
    e[3, 2] *= 5
    batch = rule.cell_stats(b, e)
    for i in (0, 3, 49):
        alone = rule.cell_stats(b[i], e[i])
        for f in ("d", "se", "df", "cv", "t_eff", "n_b", "n_e"):
            assert np.allclose(getattr(batch, f)[i], getattr(alone, f)[0], equal_nan=True), f
        assert np.array_equal(batch.flag_e[i], alone.flag_e[0])


def test_ragged_rows_use_only_present_runs():
    b = np.array([[100.0, 101.0, 99.0, np.nan], [100.0, 101.0, 99.0, 100.5]])
    e = np.array([[90.0, 91.0, 89.0, 90.5], [90.0, 91.0, 89.0, 90.5]])
    st = rule.cell_stats(b, e)
    assert list(st.n_b) == [3, 4] and list(st.raw_b) == [3, 4]
    alone = rule.cell_stats(b[0, :3], e[0])
    assert st.d[0] == pytest.approx(alone.d[0]) and st.se[0] == pytest.approx(alone.se[0])


@pytest.mark.parametrize("n", [3, 4, 5, 10])
@pytest.mark.parametrize("arm", ["baseline", "evolved"])
@pytest.mark.parametrize("factor", [5.0, 0.2])
def test_one_bad_run_is_flagged_in_either_arm_either_way(n, arm, factor):
    rng = np.random.default_rng(n)
    b, e = arm_pair(rng, cv=0.04, effect=-0.1, n=n)
    clean = rule.cell_stats(np.delete(b, 1) if arm == "baseline" else b, np.delete(e, 1) if arm == "evolved" else e)
    (b if arm == "baseline" else e)[1] *= factor
    st = rule.cell_stats(b, e)
    flags = st.flag_b[0] if arm == "baseline" else st.flag_e[0]
    other = st.flag_e[0] if arm == "baseline" else st.flag_b[0]
    assert flags.tolist() == [i == 1 for i in range(n)] and not other.any()
    # the bad run no longer drives any estimate (CV, so the noise guard; the shift; its se)
    for f in ("cv", "d", "se"):
        assert getattr(st, f)[0] == pytest.approx(getattr(clean, f)[0])


def test_no_majority_and_no_pair_is_ever_flagged():
    # two of three runs bad: the median cannot tell, so at most one run goes, the farthest
    st = rule.cell_stats([100.0, 500.0, 520.0], [100.0, 101.0, 99.0])
    assert st.flag_b[0].sum() <= 1 and st.n_b[0] >= 2
    # two runs: neither is more central than the other
    st = rule.cell_stats([100.0, 500.0], [100.0, 101.0, 99.0])
    assert not st.flag_b[0].any() and st.n_b[0] == 2


@pytest.mark.parametrize("cv", [0.02, 0.05, 0.10])
@pytest.mark.parametrize("n", [3, 5, 10, 20])
def test_clean_runs_are_almost_never_flagged_and_x5_runs_almost_always(cv, n):
    rng = np.random.default_rng(int(cv * 1000) + n)
    s = log_sd(cv)
    b = rng.lognormal(0, s, (4000, n))
    e = rng.lognormal(0, s, (4000, n))
    clean = rule.cell_stats(b, e)
    assert (clean.flag_b.sum() + clean.flag_e.sum()) / b.size / 2 < 0.002
    bad = rng.random(b.shape) < 0.10
    st = rule.cell_stats(np.where(bad, b * 5, b), e)
    single = bad.sum(axis=1) == 1  # one bad run in the arm: always identifiable
    caught = (st.flag_b & bad)[single].sum() / bad[single].sum()
    assert caught > 0.99, caught
    assert (st.flag_b & ~bad).sum() / (~bad).sum() < 0.02


def test_one_x5_run_neither_halts_the_cell_nor_hides_the_effect():
    """Found by trying it: a single x5 run pushed the baseline CV over 15% and halted the cell."""
    rng = np.random.default_rng(5)
    b, e = arm_pair(rng, cv=0.03, effect=-0.2, n=5)
    b[2] *= 5
    reports = build([{"workload": "chat", "rate": 10, "metric": "ttft_mean", "baseline": b, "evolved": e}])
    v = evaluate([hypothesis("A1"), hypothesis("C1", direction=Direction.NO_WORSE)], reports)
    for x in v:
        assert x.status is VerdictStatus.CONFIRMED, x.summary
        assert not any("too noisy" in f for f in x.flags)
        eff = x.effects[0]
        assert eff.n_baseline == 4 and eff.n_evolved == 5
        assert eff.excluded_runs == ["baseline rep 2: 5x the arm median"]
        assert any(f.startswith("outlier runs excluded at chat @ 10 req/s") for f in x.flags)
        assert eff.baseline_mean == pytest.approx(np.delete(b, 2).mean())
    assert "1 outlier run(s) excluded" in v[0].summary


def test_without_the_robust_rule_the_same_data_halts():
    """The comparison the rule is for: the same cell without outlier exclusion is 'too noisy'."""
    rng = np.random.default_rng(5)
    b, e = arm_pair(rng, cv=0.03, effect=-0.2, n=5)
    b[2] *= 5
    assert rule.cell_stats(b, e, robust=False).cv[0] > rule.MAX_CV
    assert rule.cell_stats(b, e).cv[0] < rule.MAX_CV


def test_a_baseline_cv_over_15_percent_makes_the_cell_untestable():
    """``testable`` holds the CV limit for every user of the rule (the batch decision and the sequential looks),
    not only for ``evaluate``'s halt: a huge effect on a noisy baseline is neither confirmed nor refuted."""
    noisy, calm = with_sample_cv(0.16), with_sample_cv(0.14)
    st = rule.cell_stats(np.vstack([noisy, calm]), np.vstack([0.5 * noisy, 0.5 * calm]))
    assert st.positive.all() and st.enough.all() and st.cv == pytest.approx([0.16, 0.14])
    assert st.testable.tolist() == [False, True]
    pc, pr = rule.effective_p(st, rule.DECREASE, 0.05, "lower")
    assert pc[0] == 1.0 and pr[0] == 1.0 and pc[1] < 0.05


def test_non_positive_values_make_the_cell_untestable():
    st = rule.cell_stats([1.0, 0.0, 2.0], [1.0, 1.0, 1.0])
    assert not st.positive[0] and not st.testable[0]
    pc, pr = rule.effective_p(st, rule.DECREASE, 0.05, "lower")
    assert pc[0] == 1.0 and pr[0] == 1.0


def _flags_written_out(log_b: np.ndarray, log_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The outlier rule of the module docstring computed on every row with no shortcut, independently of the
    code under test: medians, the larger MAD, the clipped threshold, at most (n - 1) // 2 flags, the largest
    first (ties in run order), never a run that sits with the other arm while its own arm's median does not."""

    def median(x):
        v = x[np.isfinite(x)]
        return float(np.median(v)) if v.size else np.nan

    flags_b, flags_e = np.zeros(log_b.shape, bool), np.zeros(log_e.shape, bool)
    for i in range(log_b.shape[0]):
        med = {"b": median(log_b[i]), "e": median(log_e[i])}
        res = {"b": log_b[i] - med["b"], "e": log_e[i] - med["e"]}
        mads = [median(np.where(np.abs(r) > 0, np.abs(r), np.nan)) for r in res.values()]
        mad = max(m if np.isfinite(m) else 0.0 for m in mads)
        threshold = min(max(rule.OUTLIER_Z * rule._MAD_TO_SD * mad, np.log(1.5)), np.log(3.0))
        for arm, other, row, out in (("b", "e", log_b[i], flags_b[i]), ("e", "b", log_e[i], flags_e[i])):
            dev = np.abs(res[arm])
            n = int(np.isfinite(dev).sum())
            allowed = (n - 1) // 2 if n >= rule.OUTLIER_MIN_RUNS else 0
            order = sorted((j for j in range(dev.size) if np.isfinite(dev[j])), key=lambda j: -dev[j])
            apart = abs(med[arm] - med[other]) >= np.log(1.5)
            for j in order[:allowed]:
                if dev[j] > threshold and not (apart and abs(row[j] - med[other]) < np.log(1.5)):
                    out[j] = True
    return flags_b, flags_e


def test_the_outlier_rules_shortcuts_flag_what_the_rule_written_out_flags():
    """``outlier_flags`` skips the rows where no run is 1.5x from its arm median (no flag is possible there)
    and ranks only the rows with more candidates than they may lose: on batches with missing runs, ties,
    x5 / x0.2 runs on both sides of the median and majority-bad arms it flags exactly what the rule does."""
    rng = np.random.default_rng(17)
    for _ in range(60):
        s, nb, ne = int(rng.integers(1, 30)), int(rng.integers(0, 10)), int(rng.integers(0, 10))
        sd = float(rng.choice([0.01, 0.05, 0.2]))
        lb = rng.normal(0.0, sd, (s, nb))
        le = rng.normal(float(rng.normal(0, 0.1)), 2 * sd, (s, ne))
        for x in (lb, le):
            u = rng.random(x.shape)
            x += np.where(u < 0.3, np.log(rng.choice([5.0, 0.2, 2.0], x.shape)), 0.0)
            x[u > 0.9] = np.nan
            if rng.random() < 0.2:
                x[:] = np.round(x, 1)  # ties
        got, want = rule.outlier_flags(lb, le), _flags_written_out(lb, le)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_the_outlier_scale_is_estimated_only_where_a_run_is_far_from_its_arm_median(monkeypatch):
    """The MADs are most of the rule's cost and most simulated rows have no run 1.5x from its arm median
    (the smallest deviation ever flagged), so only the other rows get them: same flags, less work."""
    seen = []
    real = rule._mad
    monkeypatch.setattr(rule, "_mad", lambda res: seen.append(res.shape[0]) or real(res))
    rng = np.random.default_rng(3)
    b, e = rng.lognormal(4.6, 0.05, (100, 6)), rng.lognormal(4.6, 0.05, (100, 6))
    b[7, 2] *= 5.0  # one x5 run in row 7's baseline, one x0.2 run in row 40's evolved arm
    e[40, 0] *= 0.2
    st = rule.cell_stats(b, e)
    assert seen == [2, 2]  # both arms' MADs, of rows 7 and 40 only
    assert np.flatnonzero(st.flag_b.any(axis=1)).tolist() == [7] and st.flag_b[7, 2]
    assert np.flatnonzero(st.flag_e.any(axis=1)).tolist() == [40] and st.flag_e[40, 0]
