"""The figures: one forest plot in one direction convention, distribution plots per Track A claim, at most
eight images, units on every axis, and every text box inside its figure (the label-fit check)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bot.model import Direction, Effect, Verdict, VerdictStatus
from bot.stats.label_fit import text_outside
from bot.stats.plot_content import forest_rows, id_ranges, status_text
from bot.stats.plots import (
    FOREST,
    MAX_FOREST_ROWS,
    MAX_IMAGES,
    build_figures,
    cdf_figure,
    plot_evidence,
    png,
    used_runs,
)
from tests.stats.stats_synth import arm_pair, build, hypothesis


def effect(workload="chat", rate=10.0, metric="ttft_mean", change=-0.1, half=0.03, t_eff=0.05, status=None):
    return Effect(
        workload=workload,
        rate=rate,
        metric=metric,
        baseline_mean=100.0,
        evolved_mean=100.0 * (1 + change),
        rel_change=change,
        ci_low=change - half,
        ci_high=change + half,
        cv_baseline=0.03,
        t_eff=t_eff,
        n_baseline=4,
        n_evolved=4,
        status=status,
    )


def verdict(hid, *effects, status=VerdictStatus.CONFIRMED):
    return Verdict(hypothesis_id=hid, status=status, summary="s", effects=list(effects))


# --------------------------------------------------------------------------
# What is plotted
# --------------------------------------------------------------------------


def test_every_metric_is_drawn_as_improvement_positive_is_better():
    """A latency that drops 10% and a throughput that rises 10% both plot at +10, their intervals flipped with
    them, so a chart never mixes metrics whose good direction is opposite."""
    hs = [
        hypothesis("A1", metric="ttft_mean", blis_magnitude=-0.2),
        hypothesis("A2", metric="throughput", direction=Direction.INCREASE, blis_magnitude=0.3),
    ]
    vs = [
        verdict("A1", effect(metric="ttft_mean", change=-0.10, half=0.02)),
        verdict("A2", effect(metric="throughput", change=0.10, half=0.02)),
    ]
    latency, throughput = forest_rows(hs, vs)
    for row in (latency, throughput):
        assert row.gain == pytest.approx(10.0)
        assert (row.low, row.high) == (pytest.approx(8.0), pytest.approx(12.0))
        assert row.noise == pytest.approx(5.0)
    assert latency.blis == pytest.approx(20.0) and throughput.blis == pytest.approx(30.0)


def test_margins_sit_on_the_bad_side():
    hs = [
        hypothesis("C1", metric="e2e_p95", direction=Direction.NO_WORSE, margin=0.05),
        hypothesis("C2", metric="throughput", direction=Direction.NO_WORSE, margin=0.04),
        hypothesis("C3", metric="ttft_mean", direction=Direction.EQUIVALENT, margin=0.03),
    ]
    vs = [
        verdict("C1", effect(metric="e2e_p95", change=0.01)),
        verdict("C2", effect(metric="throughput", change=-0.01)),
        verdict("C3", effect(metric="ttft_mean", change=0.0)),
    ]
    rows = forest_rows(hs, vs)
    assert [sorted(r.margins) for r in rows] == [[-5.0], [-4.0], [-3.0, 3.0]]
    assert rows[0].gain == pytest.approx(-1.0) and rows[1].gain == pytest.approx(-1.0)


def test_hypotheses_judged_on_the_same_runs_are_one_row():
    """B7-B12 judged on A1's runs add no information as rows or charts of their own: one row lists them."""
    same = effect(workload="load-spikes", rate=30, metric="e2e_p95", change=-0.096)
    hs = [hypothesis("A1", metric="e2e_p95", blis_magnitude=-0.24)] + [
        hypothesis(f"B{i}", metric="e2e_p95", direction=Direction.NO_WORSE) for i in range(7, 13)
    ]
    vs = [
        verdict(h.id, same, status=VerdictStatus.INCONCLUSIVE if h.id == "B9" else VerdictStatus.CONFIRMED) for h in hs
    ]
    (row,) = forest_rows(hs, vs)
    assert id_ranges(row.ids) == "A1, B7–B12"
    assert row.blis == pytest.approx(24.0) and row.margins == {-5.0}
    assert status_text(row) == "confirmed: A1, B7–B8, B10–B12; inconclusive: B9"
    other = effect(workload="load-spikes", rate=30, metric="e2e_p95", change=-0.05)  # other runs: its own row
    assert len(forest_rows([*hs, hypothesis("B1", metric="e2e_p95")], [*vs, verdict("B1", other)])) == 2


def test_the_distribution_plot_shows_the_runs_the_verdict_used():
    """A group-sequential verdict decided at look 1 used the first 4 of 8 runs; an outlier run is excluded."""
    rng = np.random.default_rng(4)
    b, e = arm_pair(rng, cv=0.02, effect=-0.1, n=8)
    used_b, used_e, out_b, out_e = used_runs(b, e, 4)
    assert used_b.tolist() == used_e.tolist() == [True] * 4 + [False] * 4 and not out_b.any() and not out_e.any()
    e[2] *= 5  # a throttled run
    used_b, used_e, out_b, out_e = used_runs(b, e)
    assert used_b.all() and used_e.all() and np.flatnonzero(out_e).tolist() == [2] and not out_b.any()
    assert [m.all() for m in used_runs(b, -e)[:2]] == [True, True]  # not positive: no rule, every run


def test_a_run_after_the_deciding_look_is_never_drawn_as_its_outlier():
    """Stats review #4: rep 5 of both arms x5, decided at look 1 (4 runs per arm) of 7. The old guess took the
    largest prefix keeping 4 and 4 runs (5, with rep 5 excluded) and drew rep 5 as an outlier the verdict excluded;
    the verdict never saw it. The recorded look decides which runs are drawn as used."""
    rng = np.random.default_rng(7)
    b, e = arm_pair(rng, cv=0.02, effect=-0.12, n=7)
    b[4] *= 5
    e[4] *= 5
    used_b, used_e, out_b, out_e = used_runs(b, e, 4)
    assert used_b.tolist() == used_e.tolist() == [True] * 4 + [False] * 3
    assert not out_b.any() and not out_e.any()


def test_id_ranges():
    assert id_ranges(["B8", "A1", "B7", "B9", "C2", "A3"]) == "A1, A3, B7–B9, C2"
    assert id_ranges(["A1"]) == "A1" and id_ranges([]) == ""


def _distinct_claims(n: int):
    hs = [hypothesis(f"A{i}", workloads=[f"w{i}"]) for i in range(1, n + 1)]
    vs = [verdict(h.id, effect(workload=f"w{i}")) for i, h in enumerate(hs, start=1)]
    return hs, vs


def test_at_most_eight_images_and_the_markdown_says_what_was_not_plotted():
    hs, vs = _distinct_claims(12)
    hs.append(hypothesis("A13", workloads=["w1"]))  # judged on A1's runs
    vs.append(verdict("A13", effect(workload="w1")))
    rng = np.random.default_rng(1)
    reports = build(
        [
            dict(zip(("baseline", "evolved"), arm_pair(rng, cv=0.03, effect=-0.1, n=4), strict=True))
            | {"workload": f"w{i}", "rate": 10, "metric": "ttft_mean"}
            for i in range(1, 13)
        ]
    )
    built = build_figures(hs, vs, reports)
    assert len(built.figures) == MAX_IMAGES == 8
    assert next(iter(built.figures)) == FOREST and built.distribution == {
        f"A{i}": f"A{i}-runs.png" for i in range(1, 8)
    }
    text = "\n".join(built.not_plotted)
    for i in range(8, 13):
        assert f"A{i}: no distribution plot (at most 8 images per promotion)" in text
    assert "A13: judged on the same runs as A1" in text
    plots = plot_evidence(hs, vs, reports, max_images=2)
    assert sorted(plots.images) == ["A1-runs.png", FOREST]
    md = plots.summary_markdown("plots")
    assert md.startswith(f"![Improvement over baseline per claim and cell, 90% CI](plots/{FOREST})")
    assert "Not plotted separately:" in md and "- A2: no distribution plot (at most 2 images per promotion)" in md
    assert plots.image_markdown("A1", "plots") == "![A1: per-run values of both arms](plots/A1-runs.png)"
    assert plots.image_markdown("A2", "plots") is None


def test_a_claim_without_measured_cells_is_named():
    hs = [hypothesis("A1"), hypothesis("A2")]
    vs = [verdict("A1", effect()), Verdict(hypothesis_id="A2", status=VerdictStatus.NOT_TESTABLE, summary="s")]
    built = build_figures(hs, vs)
    assert "A2: no measured cell (not testable as translated)." in built.not_plotted


def test_track_b_and_c_are_in_the_forest_plot_only():
    hs = [hypothesis("B1"), hypothesis("C1", direction=Direction.NO_WORSE)]
    vs = [verdict("B1", effect()), verdict("C1", effect(workload="code"))]
    built = build_figures(hs, vs)
    assert list(built.figures) == [FOREST] and built.distribution == {}
    assert any("Track B and C" in line for line in built.not_plotted)


def test_units_on_every_axis():
    rng = np.random.default_rng(2)
    cells = [
        ("chat", "e2e_p95", 3000.0),
        ("long", "e2e_p99", 40_000.0),
        ("batch", "throughput", 900.0),
        ("fill", "request_rate", 30.0),
    ]
    reports = build(
        [
            dict(zip(("baseline", "evolved"), arm_pair(rng, cv=0.03, effect=-0.1, n=4, mean=mean), strict=True))
            | {"workload": wl, "rate": 10, "metric": metric}
            for wl, metric, mean in cells
        ]
    )
    hs = [
        hypothesis(f"A{i}", metric=metric, workloads=[wl], direction=Direction.DECREASE)
        for i, (wl, metric, _) in enumerate(cells, start=1)
    ]
    vs = [verdict(h.id, effect(workload=wl, metric=m)) for h, (wl, m, _) in zip(hs, cells, strict=True)]
    built = build_figures(hs, vs, reports)
    ylabels = {name: fig.axes[0].get_ylabel() for name, fig in built.figures.items() if name != FOREST}
    assert ylabels == {
        "A1-runs.png": "e2e_p95 per run (ms)",
        "A2-runs.png": "e2e_p99 per run (s)",  # tens of seconds read better as seconds
        "A3-runs.png": "throughput per run (tokens/s)",
        "A4-runs.png": "request_rate per run (req/s)",
    }
    for name, fig in built.figures.items():
        ax = fig.axes[0]
        ticks = [t.get_text() for t in (ax.get_yticklabels() if name == FOREST else ax.get_xticklabels())]
        assert ticks and all(t.endswith("req/s") for t in ticks), name
    assert "(%)" in built.figures[FOREST].axes[0].get_xlabel()
    assert "positive = better" in built.figures[FOREST].axes[0].get_xlabel()


# --------------------------------------------------------------------------
# Label fit
# --------------------------------------------------------------------------


def test_the_label_fit_check_can_fail():
    """A figure without a layout engine and a label wider than itself is caught, overlapping ticks too."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_xlabel("x " * 80)
    ax.set_yticks([0, 0.01], ["a long tick label", "another long tick label"])
    problems = text_outside(fig)
    assert any(p.startswith("text 'x x") for p in problems)
    assert any("overlap" in p for p in problems)


def worst_case():
    """Long titles, workload and metric names, fractional rates, many cells, more rows than fit, and CDFs."""
    long_wl = [f"multi-tenant-{k}-shared-prefix-bursty-gamma-arrivals-with-very-long-name" for k in range(8)]
    title = "Better (lower) p99 end-to-end latency than the default scorer pipeline " * 4
    rng = np.random.default_rng(3)
    cells, hs, vs = [], [], []
    custom = "a_custom_metric_with_a_long_name_p99"  # a metric the bot does not know: no unit to print
    for i in range(1, 5):
        metric = ("e2e_p99", "throughput", "ttft_mean", custom)[i - 1]
        effects = []
        for k, wl in enumerate(long_wl):
            b, e = arm_pair(rng, cv=0.05, effect=-0.1, n=6, mean=(25_000.0, 1200.0, 140.0, 12.0)[i - 1])
            known = "itl_mean" if metric == custom else metric
            cells.append({"workload": wl, "rate": 12.5 + k, "metric": known, "baseline": b, "evolved": e})
            effects.append(effect(workload=wl, rate=12.5 + k, metric=metric, change=-0.1 + 0.03 * k, half=0.04))
        h = hypothesis(f"A{i}", metric=metric, workloads=long_wl, blis_magnitude=-0.35)
        hs.append(h.model_copy(update={"title": title}))
        vs.append(verdict(h.id, *effects, status=VerdictStatus.INCONCLUSIVE))
    shared = vs[0].effects[0]
    for j in range(1, 13):  # twelve look-alike hypotheses on A1's first cell: one row with a long id list
        hs.append(hypothesis(f"B{2 * j}", metric=shared.metric, direction=Direction.NO_WORSE, workloads=long_wl[:1]))
        vs.append(verdict(f"B{2 * j}", shared, status=(VerdictStatus.CONFIRMED, VerdictStatus.REFUTED)[j % 2]))
    reports = build(cells)
    reports.table.loc[reports.table["metric"] == "itl_mean", "metric"] = custom
    per_request = pd.DataFrame(
        [
            {"treatment": t, "workload": wl, "rate": 12.5 + k, "metric": "ttft", "value": float(v)}
            for k, wl in enumerate(long_wl)
            for t, scale in (("baseline", 140), ("evolved", 120))
            for v in rng.lognormal(np.log(scale), 0.3, 50)
        ]
    )
    return hs, vs, reports, per_request


def test_every_figure_of_a_worst_case_fits():
    hs, vs, reports, per_request = worst_case()
    built = build_figures(hs, vs, reports, per_request)
    assert sorted(built.figures) == ["A1-runs.png", "A2-runs.png", "A3-cdf.png", "A4-runs.png", FOREST]
    assert len(forest_rows(hs, vs)) == 4 * 8  # the B rows fold into A1's first
    assert " ".join(built.figures["A4-runs.png"].axes[0].get_ylabel().split()).endswith("(unit not known)")
    for name, fig in built.figures.items():
        assert text_outside(fig) == [], name


def test_the_runs_figure_with_every_legend_entry_fits():
    """Stats review #9: two cells, a BLIS prediction, an outlier run and runs after the decision make five legend
    entries; on one row they ran off both sides of the 5.5-inch figure."""
    from bot.stats.cells import ReportIndex
    from bot.stats.plots import runs_figure

    rng = np.random.default_rng(9)
    cells = []
    for wl, rate in (("load-spikes", 30), ("load-spikes", 45)):
        b, e = arm_pair(rng, cv=0.02, effect=-0.12, n=7)
        e[1] *= 5  # an outlier among the judged runs
        cells.append({"workload": wl, "rate": rate, "metric": "e2e_p95", "baseline": b, "evolved": e})
    h = hypothesis("A1", metric="e2e_p95", workloads=["load-spikes"], blis_magnitude=-0.24)
    effects = [
        effect(workload="load-spikes", rate=r, metric="e2e_p95").model_copy(update={"runs_judged": 4}) for r in (30, 45)
    ]
    fig = runs_figure(h, verdict("A1", *effects), ReportIndex.build(build(cells)))
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(labels) == 5, labels
    assert text_outside(fig) == []


def test_untrusted_text_and_missing_numbers_draw():
    """A '$' in a title or workload name is drawn as written, not as mathtext; a cell with too few runs for a
    noise floor draws without a band."""
    h = hypothesis("A1", workloads=["cost$high"]).model_copy(update={"title": "p95 < $5 per $ spent, 100$"})
    v = verdict("A1", effect(workload="cost$high", t_eff=float("nan")), effect(workload="b$", rate=20))
    rng = np.random.default_rng(6)
    reports = build(
        [
            dict(zip(("baseline", "evolved"), arm_pair(rng, cv=0.03, effect=-0.1, n=4), strict=True))
            | {"workload": wl, "rate": rate, "metric": "ttft_mean"}
            for wl, rate in (("cost$high", 10), ("b$", 20))
        ]
    )
    assert forest_rows([h], [v])[0].noise == 0.0
    built = build_figures([h], [v], reports)
    for name, fig in built.figures.items():
        assert text_outside(fig) == [], name
    assert "cost\\$high" in built.figures[FOREST].axes[0].get_yticklabels()[0].get_text()
    assert plot_evidence([h], [v], reports).images.keys() == built.figures.keys()


def test_too_many_rows_are_listed_not_squeezed():
    hs = [hypothesis(f"C{i}", direction=Direction.NO_WORSE, workloads=[f"w{i}"]) for i in range(1, 46)]
    vs = [verdict(h.id, effect(workload=f"w{i}")) for i, h in enumerate(hs, start=1)]
    built = build_figures(hs, vs)
    assert len(built.figures[FOREST].axes[0].get_yticks()) == MAX_FOREST_ROWS
    assert any(line.startswith("5 of 45 measured cells") and "C41–C45" in line for line in built.not_plotted)
    assert text_outside(built.figures[FOREST]) == []


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------


def _three_kinds():
    """A forest plot, a runs figure and a CDF figure, each built afresh (a figure drawn once is laid out)."""
    hs, vs = _distinct_claims(2)
    rng = np.random.default_rng(4)
    reports = build(
        [
            dict(zip(("baseline", "evolved"), arm_pair(rng, cv=0.03, effect=-0.1, n=4), strict=True))
            | {"workload": f"w{i}", "rate": 10, "metric": "ttft_mean"}
            for i in (1, 2)
        ]
    )
    per_request = pd.DataFrame(
        [
            {"treatment": t, "workload": "w2", "rate": 10.0, "metric": "ttft", "value": float(v)}
            for t, scale in (("baseline", 140), ("evolved", 120))
            for v in rng.lognormal(np.log(scale), 0.3, 40)
        ]
    )
    figures = dict(build_figures(hs, vs, reports).figures)
    figures["A2-cdf.png"] = cdf_figure(hs[1], vs[1], per_request)
    return figures


def test_a_figure_is_drawn_once_to_save_it(monkeypatch):
    """``savefig`` draws a figure with a layout engine twice: once rendering nothing, to lay it out, then to
    render it. ``png`` lays it out inside the one draw that renders it."""
    from matplotlib.figure import Figure

    figures = _three_kinds()
    real, draws = Figure.draw, []
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: draws.append(self) or real(self, renderer))
    for fig in figures.values():
        png(fig)
    assert draws == list(figures.values())


def test_the_saved_bytes_are_savefigs_with_the_title_placed_by_matplotlib():
    """What ``png`` writes is what ``savefig`` writes for the same figure, byte for byte, with the forest plot's
    title where matplotlib's automatic placement puts it (``forest_figure`` fixes it there to spare the search)."""
    import io

    ours = {name: png(fig) for name, fig in _three_kinds().items()}
    for name, fig in _three_kinds().items():
        if name == FOREST:
            ax = fig.axes[0]
            ax.set_title(ax.get_title(), fontsize=10)  # placed automatically again
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, metadata={"Software": None}, pil_kwargs={"compress_level": 1})
        assert ours[name] == buf.getvalue(), name
