"""Requests the evolved plugin lost beyond the baseline's are a regression the pages count (reanalysis finding 2):
from synthetic reports through ``evaluate`` to the headline and the words the PR and gate 3 give."""

from __future__ import annotations

from bot.model import Direction, VerdictStatus
from bot.render import outcome
from bot.render.lost import lost_cells, lost_words
from bot.stats.verdicts import evaluate
from tests.stats.stats_synth import build, hypothesis, with_sample_cv

GUARDS = (("C4", "ttft_mean"), ("C5", "e2e_p95"), ("C6", "throughput"))


def _promotion(lost_per_run: int, total: int = 1000, baseline_lost: int = 0):
    """P5 of the reanalysis, small: three no-worse guards on one cell whose evolved arm has the baseline's numbers
    exactly, and loses ``lost_per_run`` of ``total`` requests in every run."""
    cells, hs = [], []
    for hid, metric in GUARDS:
        b = with_sample_cv(0.02, 7) * (100.0 if metric != "throughput" else 5000.0)
        cells.append(
            {
                "workload": "sanity",
                "rate": 10,
                "metric": metric,
                "baseline": b,
                "evolved": b.copy(),
                "total": total,
                "lost_baseline": baseline_lost,
                "lost_evolved": lost_per_run,
            }
        )
        hs.append(hypothesis(hid, metric=metric, direction=Direction.NO_WORSE, workloads=["sanity"]))
    verdicts = evaluate(hs, build(cells))
    return list(zip(hs, verdicts, strict=True))


def test_an_evolved_arm_losing_a_fifth_of_its_requests_is_a_regression_in_every_count():
    pairs = _promotion(200)
    verdicts = [v for _, v in pairs]
    # the verdicts judge their metrics; the throughput guard holds on its own numbers
    assert next(v for h, v in pairs if h.id == "C6").status is VerdictStatus.CONFIRMED
    [cell] = lost_cells(verdicts)
    assert (cell.workload, cell.rate, cell.baseline, cell.evolved) == ("sanity", 10.0, 0.0, 0.2)
    assert cell.hypotheses == ("C4", "C5", "C6")
    said = "sanity at 10 req/s: 20.0% of requests lost vs 0.0% for baseline"
    assert said in lost_words([cell])
    head = outcome.headline(pairs)
    assert "no regression" not in head and said in head, head
    assert "a regression the guards' metrics do not count" in head


def test_a_handful_of_failed_requests_is_no_regression():
    """The bundled example's size of loss (8 failed in 37,758 for the baseline, a few more for the evolved arm) and
    a gap just under the tolerance stay what they were: no cell, the headline unchanged."""
    assert lost_cells([v for _, v in _promotion(3, total=5400, baseline_lost=1)]) == []
    below = _promotion(9)  # 0.9 pp more lost in every run: under the shedding guard's 1 pp tolerance
    assert lost_cells([v for _, v in below]) == []
    assert "no regression" in outcome.headline(below)


def test_several_lossy_cells_are_summarised_not_listed():
    """bj2 4: ten lossy cells made a ~1,000-character headline, one clause per cell, in three places."""
    from bot.render.lost import LostCell, lost_summary

    same = [LostCell(f"wl-{i}", 10, 0.0, 0.2, ("C1",)) for i in range(10)]
    assert lost_words(same, of=10) == (
        "requests lost more often with the evolved plugin (in all 10 cells: 20.0% of requests lost vs 0.0% for baseline)"
    )
    mixed = [LostCell("a", 10, 0.0, 0.05, ("C1",)), LostCell("b", 20, 0.01, 0.3, ("C1",))]
    assert lost_words(mixed, of=6) == (
        "requests lost more often with the evolved plugin (in 2 of 6 cells, up to 30.0% of requests lost vs 1.0% for "
        "baseline at b at 20 req/s)"
    )
    verdicts = [v for _, v in _promotion(200)]
    assert lost_summary(verdicts) == lost_words(lost_cells(verdicts))  # one cell: named, as before


def test_the_loss_flag_fits_the_metric():
    """bj2 5: a throughput guard was flagged "shedding may mask latency", and a no-worse latency guard demoted as
    "a latency claim"."""
    from bot.stats.guards import LOST_UNCOUNTED, SHED_FLAG

    pairs = {h.id: v for h, v in _promotion(200)}
    throughput = pairs["C6"].flags
    assert any(f.startswith(f"{LOST_UNCOUNTED} throughput: evolved lost 20.00%") for f in throughput), throughput
    assert not any(f.startswith(SHED_FLAG) for f in throughput)
    assert any(f.startswith(SHED_FLAG) for f in pairs["C5"].flags)  # a latency: the loss may hide it
    demoted = [e.reason for v in pairs.values() for e in v.effects if e.reason.startswith("demoted")]
    assert demoted and all("a latency guard is not confirmed" in r for r in demoted), demoted
    assert "latency gain may come from shedding" not in pairs["C6"].summary
