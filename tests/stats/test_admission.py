"""Per-class admission from a priority mix: Fisher's exact per class under Holm, and the shedding order."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import fisher_exact

from bot.bench.priority_mix import COUNT_COLUMNS, load_priority_mix_results
from bot.stats.admission import class_admission, shedding_order
from bot.stats.decide import CONFIRMED, INCONCLUSIVE, REFUTED
from bot.stats.multiplicity import holm

FIXTURES = Path(__file__).resolve().parents[1] / "bench" / "fixtures" / "priority_mix"
PRIORITY = {"critical": 100, "normal": 0, "batch": -10}


def _table(**admitted) -> pd.DataFrame:
    """``batch=((baseline admitted, sent), (evolved admitted, sent))`` per class, one run per arm."""
    rows = []
    for name, arms in admitted.items():
        for arm, (ok, sent) in zip(("baseline", "evolved"), arms, strict=True):
            rows.append((arm, "priority-mix", 6.0, 1, name, PRIORITY[name], sent, ok, sent - ok, sent - ok, 0))
    return pd.DataFrame(rows, columns=COUNT_COLUMNS)


def test_an_admitter_that_sheds_batch_first_confirms_the_order():
    t = _table(critical=((200, 200), (200, 200)), normal=((590, 600), (588, 600)), batch=((195, 200), (60, 200)))
    classes = class_admission(t)
    assert [c.traffic_class for c in classes] == ["critical", "normal", "batch"]
    by = {c.traffic_class: c for c in classes}
    assert by["batch"].change(0.05) == "admits fewer" and by["batch"].evolved_rate == 0.3
    assert by["critical"].change(0.05) == by["normal"].change(0.05) == "no detectable change"
    p = fisher_exact([[60, 140], [195, 5]]).pvalue
    assert by["batch"].p == pytest.approx(p)
    assert by["batch"].adjusted == pytest.approx(holm([c.p for c in sorted(classes, key=lambda c: c.traffic_class)])[0])
    verdict = shedding_order(classes, 0.05)
    assert verdict.status == CONFIRMED and "batch more than critical" in verdict.why


def test_an_admitter_that_drops_critical_traffic_is_refuted():
    t = _table(critical=((200, 200), (150, 200)), normal=((600, 600), (600, 600)), batch=((200, 200), (40, 200)))
    verdict = shedding_order(class_admission(t), 0.05)
    assert verdict.status == REFUTED and "critical more than its baseline" in verdict.why


def test_an_order_inverted_within_the_evolved_arm_is_refuted():
    t = _table(critical=((200, 200), (100, 200)), normal=((600, 600), (600, 600)), batch=((200, 200), (190, 200)))
    verdict = shedding_order(class_admission(t), 0.05)
    assert verdict.status == REFUTED and "batch less than critical" in verdict.why


def test_nothing_shed_means_the_order_was_never_exercised():
    t = _table(critical=((200, 200), (200, 200)), normal=((600, 600), (600, 600)), batch=((200, 200), (200, 200)))
    verdict = shedding_order(class_admission(t), 0.05)
    assert verdict.status == INCONCLUSIVE and "shed nothing" in verdict.why


def _failing(batch_failed: int, batch_shed: int) -> pd.DataFrame:
    """batch of the evolved arm: 300 sent, ``batch_failed`` timed out (not shed), ``batch_shed`` got a 429."""
    rows = []
    for arm in ("baseline", "evolved"):
        for name, sent in (("critical", 100), ("normal", 300), ("batch", 300)):
            failed, shed = (batch_failed, batch_shed) if (arm, name) == ("evolved", "batch") else (0, 0)
            ok = sent - failed - shed
            rows.append((arm, "priority-mix", 6.0, 1, name, PRIORITY[name], sent, ok, failed + shed, shed, 0))
    return pd.DataFrame(rows, columns=COUNT_COLUMNS)


def test_timeouts_of_the_sheddable_class_are_not_shedding():
    """F4 #1: the evolved batch class timed out (status 0) on 40% of its requests and got no 429: the stack
    failed, the admitter shed nothing, so the order was never exercised (it was "confirmed")."""
    classes = class_admission(_failing(batch_failed=120, batch_shed=0))
    assert next(c for c in classes if c.traffic_class == "batch").change(0.05) == "admits fewer"  # still shown
    verdict = shedding_order(classes, 0.05)
    assert verdict.status == INCONCLUSIVE and "shed nothing" in verdict.why
    assert "failed without being shed" in verdict.why and "batch 120" in verdict.why


def test_only_the_429s_decide_the_order_and_the_other_failures_are_said_apart():
    """A few 429s among many timeouts: the order is judged on the 429s alone (3 of 300 shed is not detectable)."""
    few = shedding_order(class_admission(_failing(batch_failed=120, batch_shed=3)), 0.05)
    assert few.status == INCONCLUSIVE and "not shed detectably more" in few.why and "batch 120" in few.why
    many = shedding_order(class_admission(_failing(batch_failed=30, batch_shed=90)), 0.05)
    assert many.status == CONFIRMED and "batch more than critical" in many.why and "batch 30" in many.why


def _refused_with_500(batch_500: int, critical_500: int = 0, baseline_500: int = 0) -> pd.DataFrame:
    """The evolved arm's batch refused with HTTP 500 (an Admitter on v0.10.0), ``critical_500`` critical requests
    and ``baseline_500`` baseline batch requests got a 500 too (server errors the report cannot tell apart)."""
    rows = []
    for arm in ("baseline", "evolved"):
        for name, sent in (("critical", 100), ("normal", 300), ("batch", 300)):
            n500 = {("evolved", "batch"): batch_500, ("evolved", "critical"): critical_500}.get((arm, name), 0)
            n500 += baseline_500 if (arm, name) == ("baseline", "batch") else 0
            rows.append((arm, "priority-mix", 6.0, 1, name, PRIORITY[name], sent, sent - n500, n500, n500, n500))
    return pd.DataFrame(rows, columns=COUNT_COLUMNS)


def test_an_admitters_500s_are_its_sheds_and_the_verdict_says_they_cannot_be_told_apart():
    """maint5 #1: on v0.10.0 an Admitter's refusal is a 500; counted as shed (else the plugin "sheds nothing"), and
    the verdict says the report cannot tell it from an unrelated server error."""
    verdict = shedding_order(class_admission(_refused_with_500(batch_500=120)), 0.05)
    assert verdict.status == CONFIRMED and "batch more than critical" in verdict.why
    assert "120 of the evolved arm's and 0 of the baseline arm's shed requests are HTTP 500" in verdict.why
    assert "cannot be told from an unrelated server error" in verdict.why


def test_500s_that_strike_the_critical_class_count_against_the_evolved_arm():
    """Counted conservatively: the critical class's 500s are sheds of a protected class, so they refute."""
    verdict = shedding_order(class_admission(_refused_with_500(batch_500=120, critical_500=40)), 0.05)
    assert verdict.status == REFUTED and "critical more than its baseline" in verdict.why
    assert "the baseline arm runs no Admitter" not in verdict.why
    with_base = shedding_order(class_admission(_refused_with_500(batch_500=120, baseline_500=5)), 0.05)
    assert "the baseline arm runs no Admitter, so its 5 are such errors" in with_base.why


def test_a_mix_with_only_429s_says_nothing_of_500s():
    verdict = shedding_order(class_admission(_failing(batch_failed=30, batch_shed=90)), 0.05)
    assert verdict.status == CONFIRMED and "HTTP 500:" not in verdict.why


def test_the_upstream_harness_output_is_too_small_to_decide(tmp_path):
    """The fixtures (4 batch requests per arm, 2 shed) read through the loader: too few requests for any claim."""
    for arm in ("baseline", "evolved"):
        dest = tmp_path / arm / "priority-mix" / "rate-10" / "rep-1"
        dest.mkdir(parents=True)
        for name in ("results.json", "run_metadata.yaml"):
            (dest / name).write_bytes((FIXTURES / arm / name).read_bytes())
    classes = class_admission(load_priority_mix_results(tmp_path).table)
    batch = next(c for c in classes if c.traffic_class == "batch")
    assert (batch.baseline, batch.evolved, batch.evolved_runs) == ((4, 4), (2, 4), (0.5,))
    assert batch.change(0.05) == "no detectable change"
    assert shedding_order(classes, 0.05).status == INCONCLUSIVE


def _runs(evolved_batch: list[tuple[int, int]], rates: tuple[float, float] = (6.0, 6.0)) -> pd.DataFrame:
    """One baseline and one evolved run per entry of ``evolved_batch`` ((admitted, sent) of batch; the evolved
    arm's 429s are its unadmitted batch requests), critical and normal always admitted, at ``rates`` per arm."""
    rows = []
    for n, (ok, sent) in enumerate(evolved_batch, 1):
        for arm, rate in zip(("baseline", "evolved"), rates, strict=True):
            b_ok = sent if arm == "baseline" else ok
            rows += [
                (arm, "priority-mix", rate, n, "critical", 100, 200, 200, 0, 0, 0),
                (arm, "priority-mix", rate, n, "normal", 0, 600, 600, 0, 0, 0),
                (arm, "priority-mix", rate, n, "batch", -10, sent, b_ok, sent - b_ok, sent - b_ok, 0),
            ]
    return pd.DataFrame(rows, columns=COUNT_COLUMNS)


def test_runs_of_different_loads_are_never_pooled_or_compared():
    """N2 #4: an evolved arm at 80 req/s against a baseline at 10 "sheds" from load alone."""
    from bot.stats.admission import MixedLoads

    with pytest.raises(MixedLoads, match=r"baseline at priority-mix @ 10 req/s; evolved at priority-mix @ 80 req/s"):
        class_admission(_runs([(40, 200)], rates=(10.0, 80.0)))


def test_a_pooled_order_the_runs_do_not_agree_on_is_inconclusive():
    """N2 #4: Fisher's test counts requests as independent, so one saturated run carries the pooled p alone; the
    order is confirmed only when every evolved run sheds batch below critical."""
    one = shedding_order(class_admission(_runs([(10, 200), (200, 200), (200, 200)])), 0.05)
    assert one.status == INCONCLUSIVE, one.why
    assert "its runs do not agree: batch was admitted as often as critical or more in 2 of 3 runs (run 2, 3" in one.why
    every = shedding_order(class_admission(_runs([(80, 200), (90, 200), (70, 200)])), 0.05)
    assert (
        every.status == CONFIRMED
        and "every one of its 3 runs admits each sheddable class less than critical" in every.why
    )


def test_a_mix_that_judged_nothing_points_at_the_runner_that_runs_it():
    from bot.stats.shedding import not_used_verdict
    from tests.stats.stats_synth import hypothesis

    summary = not_used_verdict(hypothesis("B7"), "only 2 of 3 planned evolved runs could be used").summary
    assert "does not run it yet" not in summary
    assert "`promote bench run` runs it" in summary and "--resume" in summary
