"""Evidence for people: tables, summary, JSON round trip and the deterministic PNGs evidence_files writes."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from bot.escape import md as escaped
from bot.model import Direction, Verdict, VerdictStatus
from bot.stats import StatsError
from bot.stats.evidence import (
    evidence_files,
    evidence_markdown,
    evidence_table,
    summary_markdown,
    verdicts_from_json,
    verdicts_to_json,
)
from bot.stats.plots import plot_evidence
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
    md = evidence_markdown(hs[0], vs[0], plot="![A1: per-run values](plots/A1-runs.png)")
    assert md.startswith("### A1")
    assert f"**Verdict: {vs[0].status.value.upper()}**" in md
    table = evidence_table(vs[0])
    assert list(table["workload"]) == ["chat", "chat"] and list(table["rate (req/s)"]) == ["10", "20"]
    for e in vs[0].effects:
        assert f"{e.rel_change * 100:+.1f}%" in md
    assert any(f.startswith("attenuated") for f in vs[0].flags)
    for f in vs[0].flags:  # as markdown: a flag quotes intervals in brackets
        assert f"- {escaped(f)}" in md
    assert "If this fails" in md and "![A1: per-run values](plots/A1-runs.png)" in md
    assert "90% CI" in md  # the interval level is said, not assumed


def test_evidence_markdown_without_cells_says_so(case):
    hs, vs, _ = case
    md = evidence_markdown(hs[3], vs[3], plot="![C2](plots/C2-runs.png)")
    assert "No measured cells." in md and "png" not in md


def test_evidence_markdown_rejects_a_mismatched_pair(case):
    hs, vs, _ = case
    with pytest.raises(StatsError, match="A1"):
        evidence_markdown(hs[1], vs[0])


def test_summary_table_and_no_chart_joining_hypotheses(case):
    hs, vs, _ = case
    md = summary_markdown(vs, hs)
    counts = {s: sum(v.status is s for v in vs) for s in VerdictStatus}
    assert f"**{counts[VerdictStatus.CONFIRMED]} confirmed, {counts[VerdictStatus.REFUTED]} refuted, " in md
    assert md.count("\n| A1 ") + md.count("\n| B1 ") + md.count("\n| C1 ") + md.count("\n| C2 ") == 4
    # one number per hypothesis joined by a line mixed metrics and directions: the figures are the forest plot
    assert "mermaid" not in md and "xychart" not in md


def test_summary_of_nothing():
    assert summary_markdown([]) == "No hypotheses were evaluated."
    assert plot_evidence([], [Verdict(hypothesis_id="A1", status=VerdictStatus.INCONCLUSIVE, summary="x")]).images == {}


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
    first = plot_evidence(hs, vs, reports)
    again = plot_evidence(hs, vs, reports)
    # the forest plot of every measured cell, and a distribution plot for the Track A claim only
    assert sorted(first.images) == ["A1-runs.png", "claims-forest.png"]
    assert first.distribution == {"A1": "A1-runs.png"} and first.forest == "claims-forest.png"
    for name, png in first.images.items():
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 2000
        assert png == again.images[name], name
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
    out = plot_evidence(hs[:1], vs[:1], per_request=per_request)
    assert out.distribution == {"A1": "A1-cdf.png"} and out.images["A1-cdf.png"].startswith(b"\x89PNG")
    assert out.images == plot_evidence(hs[:1], vs[:1], per_request=per_request).images
    assert out.image_markdown("A1") == "![A1: per-request CDF](plots/A1-cdf.png)"
    with pytest.raises(StatsError, match="missing columns"):
        plot_evidence(hs[:1], vs[:1], per_request=per_request.drop(columns=["metric"]))


def test_evidence_files_layout(case):
    hs, vs, reports = case
    files = evidence_files(hs, vs, reports=reports, rejected=[("baseline/x/rate-1/rep-1/r.yaml", "wrong | unit")])
    assert {"verdicts.json", "verdicts.md"} <= set(files)
    assert {k for k in files if k.startswith("plots/")} == {f"plots/{n}" for n in plot_evidence(hs, vs, reports).images}
    md = files["verdicts.md"]
    # every image committed is shown, and every image shown is committed
    assert sorted(re.findall(r"\]\((plots/[^)]+\.png)\)", md)) == sorted(k for k in files if k.startswith("plots/"))
    assert md.index("## Track A") < md.index("## Track B") < md.index("## Track C")
    assert "wrong \\| unit" in md  # a rejected report is listed, with its reason escaped for the table
    assert verdicts_from_json(files["verdicts.json"]) == vs
    assert files == evidence_files(
        hs, vs, reports=reports, rejected=[("baseline/x/rate-1/rep-1/r.yaml", "wrong | unit")]
    )


def test_a_hypothesis_no_run_decides_is_counted_as_not_judged_and_measures_no_rate(case):
    """Found by a new user: B2/B4/B7 (no run of the plan can decide them) were counted as plain 'inconclusive'
    while the README says they are not judged, and their evidence read 'rates: all measured' above
    'No measured cells.'."""
    hs, vs, reports = case
    lora = hypothesis("B2", workloads=["chat"]).model_copy(
        update={"prediction": None, "not_in_plan": "it needs a run this cluster cannot do: no LoRA scenario"}
    )
    stale = hypothesis("B3", workloads=["chat"]).model_copy(
        update={"prediction": None, "not_in_plan": "it needs a run that changes how fresh llm-d's `X` is"}
    )
    all_hs = [*hs, lora, stale]
    verdicts = evaluate(all_hs, reports)
    by_id = {v.hypothesis_id: v for v in verdicts}
    head = summary_markdown(verdicts, all_hs).splitlines()[0]
    inconclusive = sum(v.status is VerdictStatus.INCONCLUSIVE for v in verdicts)
    # newuser4 #8: each with its verdict's own reason, as the PR body and gate 3 give it
    assert (
        f"2 of the {inconclusive} inconclusive are not judged: B2 (not runnable on this cluster), "
        "B3 (no planned run varies it); each says what would decide it." in head
    )
    for h in (lora, stale):
        md = evidence_markdown(h, by_id[h.id])
        assert "rates: none measured" in md and "No measured cells." in md and "all measured" not in md
    assert "rates: all measured" in evidence_markdown(hs[0], by_id["A1"])  # measured: every rate it ran
    assert "not judged" not in summary_markdown(vs, hs)  # nothing to single out
