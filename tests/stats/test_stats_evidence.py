"""Evidence for people: tables, summary chart, JSON round trip and deterministic PNGs."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from bot.model import Direction, Verdict, VerdictStatus
from bot.stats import StatsError
from bot.stats.evidence import (
    evidence_files,
    evidence_markdown,
    evidence_table,
    mermaid_chart,
    plot_effects,
    summary_markdown,
    verdicts_from_json,
    verdicts_to_json,
)
from bot.stats.verdicts import evaluate
from tests.stats.stats_synth import arm_pair, build, hypothesis


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(5)
    cells = []
    for wl, rate, eff in (("chat", 10, -0.2), ("chat", 20, -0.15), ("code", 10, 0.0)):
        b, e = arm_pair(rng, cv=0.03, effect=eff, n=4)
        cells.append({"workload": wl, "rate": rate, "metric": "ttft_mean", "baseline": b, "evolved": e})
    cells[-1]["lost_evolved"] = 40  # shedding on code
    reports = build(cells)
    hs = [
        hypothesis("A1", workloads=["chat"], blis_magnitude=-0.9),
        hypothesis("B1", workloads=["code"]),
        hypothesis("C1", direction=Direction.NO_WORSE, workloads=["chat", "code"]),
        hypothesis("C2", direction=Direction.EQUIVALENT, workloads=["missing"]),
    ]
    verdicts = evaluate(hs, reports, evolved_for="chat")
    return hs, verdicts, reports


def test_evidence_markdown_has_every_cell_flag_and_the_diagnostic(case):
    hs, vs, _ = case
    md = evidence_markdown(hs[0], vs[0], plot_dir="plots")
    assert md.startswith("### A1")
    assert f"**Verdict: {vs[0].status.value.upper()}**" in md
    table = evidence_table(vs[0])
    assert list(table["workload"]) == ["chat", "chat"] and list(table["rate (req/s)"]) == ["10", "20"]
    for e in vs[0].effects:
        assert f"{e.rel_change * 100:+.1f}%" in md
    assert any(f.startswith("attenuated") for f in vs[0].flags)
    for f in vs[0].flags:
        assert f"- {f}" in md
    assert "If this fails" in md and "![A1: change per cell](plots/A1-effects.png)" in md
    assert "90% CI" in md  # the interval level is said, not assumed


def test_evidence_markdown_without_cells_says_so(case):
    hs, vs, _ = case
    md = evidence_markdown(hs[3], vs[3], plot_dir="plots")
    assert "No measured cells." in md and "png" not in md


def test_evidence_markdown_rejects_a_mismatched_pair(case):
    hs, vs, _ = case
    with pytest.raises(StatsError, match="A1"):
        evidence_markdown(hs[1], vs[0])


def test_summary_table_and_mermaid_chart(case):
    hs, vs, _ = case
    md = summary_markdown(vs, hs)
    counts = {s: sum(v.status is s for v in vs) for s in VerdictStatus}
    assert f"**{counts[VerdictStatus.CONFIRMED]} confirmed, {counts[VerdictStatus.REFUTED]} refuted, " in md
    assert md.count("\n| A1 ") + md.count("\n| B1 ") + md.count("\n| C1 ") + md.count("\n| C2 ") == 4
    chart = mermaid_chart(vs)
    assert chart.startswith("```mermaid\nxychart-beta") and chart.endswith("```")
    labels = re.search(r"x-axis \[(.*)\]", chart).group(1).split(", ")
    lines = re.findall(r"line \[(.*)\]", chart)
    values = [float(x) for x in lines[0].split(", ")]
    lo, hi = map(float, re.search(r"(-?\d+) --> (-?\d+)", chart).groups())
    # C2 has no measured cell, so it is not charted; every charted value is inside the axis
    assert labels == ['"A1"', '"B1"', '"C1"'] and len(values) == 3
    assert lo < min([*values, 0]) and max([*values, 0]) < hi
    assert lines[1] == "0, 0, 0" and " bar " not in chart  # bars would grow from the axis bottom, not zero
    assert values[0] == pytest.approx(np.mean([e.rel_change for e in vs[0].effects]) * 100, abs=0.05)


def test_summary_of_nothing():
    assert summary_markdown([]) == "No hypotheses were evaluated."
    assert mermaid_chart([Verdict(hypothesis_id="A1", status=VerdictStatus.INCONCLUSIVE, summary="x")]) == ""


def test_verdicts_json_round_trip(case):
    _, vs, _ = case
    text = verdicts_to_json(vs)
    assert text == verdicts_to_json(vs) and text.endswith("\n")
    assert verdicts_from_json(text) == vs
    with pytest.raises(StatsError, match="not valid JSON"):
        verdicts_from_json("{")
    with pytest.raises(StatsError, match="item 0"):
        verdicts_from_json('[{"hypothesis_id": "A1"}]')


def test_pngs_are_valid_deterministic_and_carry_no_software_stamp(case):
    hs, vs, reports = case
    first = plot_effects(hs, vs, reports)
    again = plot_effects(hs, vs, reports)
    assert sorted(first) == [
        "A1-arms.png",
        "A1-effects.png",
        "B1-arms.png",
        "B1-effects.png",
        "C1-arms.png",
        "C1-effects.png",
    ]
    for name, png in first.items():
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 2000
        assert png == again[name], name
        assert b"Software" not in png and b"tIME" not in png


def test_cdf_from_per_request_data(case):
    hs, vs, _ = case
    rng = np.random.default_rng(0)
    rows = [
        {"treatment": t, "workload": "chat", "rate": 10.0, "metric": "ttft", "value": float(v)}
        for t, scale in (("baseline", 100), ("evolved", 80))
        for v in rng.lognormal(np.log(scale), 0.3, 300)
    ]
    per_request = pd.DataFrame(rows)
    out = plot_effects(hs[:1], vs[:1], per_request=per_request)
    assert "A1-cdf.png" in out and out["A1-cdf.png"].startswith(b"\x89PNG")
    assert out["A1-cdf.png"] == plot_effects(hs[:1], vs[:1], per_request=per_request)["A1-cdf.png"]
    with pytest.raises(StatsError, match="missing columns"):
        plot_effects(hs[:1], vs[:1], per_request=per_request.drop(columns=["metric"]))


def test_evidence_files_layout(case):
    hs, vs, reports = case
    files = evidence_files(hs, vs, reports=reports, rejected=[("baseline/x/rate-1/rep-1/r.yaml", "wrong | unit")])
    assert {"verdicts.json", "verdicts.md"} <= set(files)
    assert {k for k in files if k.startswith("plots/")} == {f"plots/{n}" for n in plot_effects(hs, vs, reports)}
    md = files["verdicts.md"]
    assert md.index("## Track A") < md.index("## Track B") < md.index("## Track C")
    assert "wrong \\| unit" in md  # a rejected report is listed, with its reason escaped for the table
    assert verdicts_from_json(files["verdicts.json"]) == vs
    assert files == evidence_files(
        hs, vs, reports=reports, rejected=[("baseline/x/rate-1/rep-1/r.yaml", "wrong | unit")]
    )
