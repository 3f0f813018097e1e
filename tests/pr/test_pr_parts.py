"""The PR description's pieces, pure: title, claims rows, known issues, track lines, .gitattributes."""

from __future__ import annotations

from bot.golang.plugin_summary import what_it_does
from bot.model import (
    Effect,
    Finding,
    Hypothesis,
    PolicyKind,
    Prediction,
    ReviewRound,
    Severity,
    Track,
    Verdict,
    VerdictStatus,
)
from bot.render import claims, render
from bot.render.claims import ci_level, claim_rows
from bot.stages import pr_parts
from bot.stages.paths import PromotionPaths
from bot.stages.pull_request import gitattributes


def _h(hid: str, title: str = "Lower p95 latency on load-spikes", magnitude: float | None = -0.24) -> Hypothesis:
    return Hypothesis(
        id=hid,
        track=Track(hid[0]),
        title=title,
        statement="s",
        family="cross-policy-comparative",
        vvuq="validation",
        type="statistical/dominance",
        diagnostic="If this fails, it would indicate nothing.",
        workloads=["load-spikes"],
        prediction=Prediction(metric="e2e_p95", direction="decrease", blis_magnitude=magnitude),
        source="claim-1",
    )


def _effect(change: float, rate: float = 30) -> Effect:
    return Effect(
        workload="load-spikes",
        rate=rate,
        metric="e2e_p95",
        baseline_mean=100,
        evolved_mean=100 * (1 + change),
        rel_change=change,
        ci_low=change - 0.03,
        ci_high=change + 0.03,
        cv_baseline=0.05,
        t_eff=0.02,
        n_baseline=5,
        n_evolved=5,
    )


def test_title_fits_72_characters_and_is_cut_on_a_word():
    long = "Evolved adaptive weighted scorer (load-delta, session and KV-pressure adjustments)"
    t = pr_parts.title("evolved-adaptive-scorer", long)
    assert len(t) <= 72 and t.startswith("[promotion] evolved-adaptive-scorer: Evolved adaptive")
    assert t.endswith("…") and not t.endswith(" …")
    assert long.startswith(t.removeprefix("[promotion] evolved-adaptive-scorer: ").removesuffix("…"))
    assert pr_parts.title("x", "Short one") == "[promotion] x: Short one"
    assert len(pr_parts.title("p" * 90, long)) <= 72
    assert "\n" not in pr_parts.title("x", "two\nlines")


def test_claim_rows_show_prediction_every_cell_with_its_ci_and_the_verdict():
    v = Verdict(
        hypothesis_id="A1",
        status=VerdictStatus.CONFIRMED,
        summary="",
        effects=[_effect(-0.096), _effect(-0.144, 45)],
    )
    [row] = claim_rows([_h("A1"), _h("C1")], {"A1": v})
    assert row.predicted == "−24.0%"
    assert row.measured == "−9.6% [−12.6%, −6.6%] at 30 req/s; −14.4% [−17.4%, −11.4%] at 45 req/s"
    assert row.verdict == "✅ confirmed"
    many = Verdict(
        hypothesis_id="A1", status=VerdictStatus.INCONCLUSIVE, summary="", effects=[_effect(x / 100) for x in range(5)]
    )
    assert claim_rows([_h("A1")], {"A1": many})[0].measured == "+0.0% to +4.0% over 5 cells"
    assert claim_rows([_h("A1", magnitude=None)], {})[0].measured == "not measured"
    assert claim_rows([_h("A1", magnitude=None)], {})[0].predicted == "decrease (no magnitude)"


def test_claims_table_escapes_the_claim_text():
    rows = claim_rows([_h("A1", title="a | b <!-- x -->")], {})
    table = render("_claims_table.md.j2", claims=rows, ci_level=ci_level())
    assert "| Claim | BLIS predicted | llm-d measured (90% CI) | Verdict |" in table
    assert "a \\| b" in table and "<!--" not in table


def test_known_issues_list_every_open_finding_blocking_first_with_a_pinned_link():
    def finding(sev: Severity, check: str, file: str | None = None, line: int | None = None) -> Finding:
        return Finding(severity=sev, check=check, message=f"{check} happened. More detail here.", file=file, line=line)

    reviews = {
        1: [
            ReviewRound(gate=1, round=1, findings=[finding(Severity.IMPORTANT, "old")]),  # superseded round
            ReviewRound(
                gate=1,
                round=2,
                findings=[finding(Severity.SUGGESTION, "s1", "a.go", 3), finding(Severity.IMPORTANT, "i1", "b.go", 7)],
            ),
        ],
        2: [ReviewRound(gate=2, round=1, findings=[finding(Severity.CRITICAL, "c1", "docs/h/README.md")])],
    }
    issues = pr_parts.known_issues(
        reviews, lambda path, line: f"https://x/blob/abc/{path}" + (f"#L{line}" if line else "")
    )
    assert [i.check.split("#")[0] for i in issues] == ["c1", "i1", "s1"]
    assert issues[1].check == reviews[1][-1].ids()[1]  # each by the id its gate's review showed
    assert issues[0].where == "docs/h/README.md" and issues[0].url == "https://x/blob/abc/docs/h/README.md"
    assert issues[1].where == "b.go:7" and issues[1].url.endswith("b.go#L7")
    assert issues[1].message == "i1 happened"
    traced = ReviewRound(
        gate=1,
        round=1,
        findings=[Finding(severity=Severity.IMPORTANT, check="h", message="m", file="e.go", line=9, source_line=40)],
    )
    assert pr_parts.known_issues({1: [traced]}, lambda p, n: p)[0].evolved_line == 40


def test_track_lines_group_by_outcome_with_numbers():
    hs = [_h("B1"), _h("B2"), _h("A1")]
    verdicts = {
        "B1": Verdict(hypothesis_id="B1", status=VerdictStatus.CONFIRMED, summary="", effects=[_effect(-0.1)]),
        "B2": Verdict(hypothesis_id="B2", status=VerdictStatus.INCONCLUSIVE, summary=""),
    }
    assert pr_parts.track_line(hs, verdicts, Track.B) == [
        "confirmed: B1 claim-1 (e2e_p95 −10.0%)",
        "inconclusive: B2 claim-1 (not measured)",
    ]
    # A hypothesis no run of the plan can decide (no prediction) is named as not judged, not "not measured", with
    # its verdict's own reason (newuser4 #8: not "no run of this plan decides it" for a run the cluster cannot do).
    hs.append(_h("B3").model_copy(update={"prediction": None}))
    verdicts["B3"] = Verdict(
        hypothesis_id="B3", status=VerdictStatus.INCONCLUSIVE, summary="", flags=["not runnable on this cluster"]
    )
    assert pr_parts.track_line(hs, verdicts, Track.B)[1] == (
        "inconclusive: B2 claim-1 (not measured), B3 claim-1 (not judged: not runnable on this cluster)"
    )
    verdicts["B3"] = Verdict(hypothesis_id="B3", status=VerdictStatus.INCONCLUSIVE, summary="")
    assert pr_parts.track_line(hs, verdicts, Track.B)[1].endswith("B3 claim-1 (not judged)")


def test_an_early_stop_estimate_carries_the_all_runs_caveat_in_the_pr_and_the_tables():
    """Reanalysis finding 6: the PR said "C6 sanity-random (throughput +0.4%)", the estimate of the look where the
    test stopped, while every run gives -0.4%; verdicts.md gives the caveat, and so do the PR and the report now."""
    h = _h("C6").model_copy(update={"track": Track.C})
    early = _effect(0.004, rate=10).model_copy(update={"all_runs_change": -0.004})
    v = Verdict(hypothesis_id="C6", status=VerdictStatus.CONFIRMED, summary="", effects=[early])
    assert pr_parts.track_line([h], {"C6": v}, Track.C) == [
        "confirmed: C6 claim-1 (e2e_p95 +0.4%, early stop; all runs −0.4%)"
    ]
    assert claims.cell_text(early) == "+0.4% [−2.6%, +3.4%] at 10 req/s (early stop; all runs −0.4%)"
    later = _effect(-0.02, rate=20)  # not stopped early: its own change counts in the range over every run
    many = v.model_copy(update={"effects": [early, later, _effect(-0.03, rate=30), _effect(-0.05, rate=40)]})
    assert claims.measured_text(many) == "−5.0% to +0.4% over 4 cells (early stop; all runs −5.0% to −0.4%)"
    plain = v.model_copy(update={"effects": [later]})
    assert "early stop" not in claims.measured_text(plain) + "".join(pr_parts.track_line([h], {"C6": plain}, Track.C))


def test_gitattributes_keeps_the_forks_lines_and_replaces_its_own_block():
    paths = PromotionPaths("my-plugin")
    first = gitattributes("*.go text eol=lf\n", paths)
    assert first.startswith("*.go text eol=lf\n\n# >>> promotion-bot my-plugin")
    assert "docs/promotion/my-plugin/**/*.json linguist-generated=true" in first
    assert gitattributes(first, paths) == first  # a rerun does not add a second block
    assert gitattributes(None, paths).startswith("# >>> promotion-bot my-plugin")


def test_a_finding_naming_only_its_file_gets_the_line_it_is_about():
    files = {
        "docs/v/verdicts.json": '[\n  {\n    "hypothesis_id": "A1"\n  },\n  {\n    "hypothesis_id": "A12"\n  }\n]\n',
        "docs/h/README.md": "# Hypotheses\n\n| B7 | freshness |\n",
    }
    read = pr_parts.file_reader(files.get, lambda p: [k for k in files if k == p or k.startswith(p.rstrip("/") + "/")])

    def at(message: str, file: str | None) -> tuple[str | None, int | None]:
        f = pr_parts.anchor(Finding(severity=Severity.IMPORTANT, check="G3.x", message=message, file=file), read)
        return f.file, f.line

    assert at("verdict of A12 disagrees with its cells", "docs/v/verdicts.json") == ("docs/v/verdicts.json", 6)
    assert at("`B7` repeats A1", "docs/h") == ("docs/h/README.md", 3)  # a directory: its README
    assert at("nothing quoted", "docs/v/verdicts.json") == ("docs/v/verdicts.json", 1)
    assert at("not on the branch", "docs/gone.md") == ("docs/gone.md", None)  # never pointed somewhere wrong
    assert at("no file", None) == (None, None)
    pinned = Finding(severity=Severity.IMPORTANT, check="c", message="A1", file="docs/v/verdicts.json", line=2)
    assert pr_parts.anchor(pinned, read) is pinned


def test_file_only_findings_become_review_comments_when_the_branch_holds_the_file():
    from bot.stages.pull_request import finding_comments

    f = Finding(severity=Severity.IMPORTANT, check="G3.verdicts", message="A1 has no cells", file="v.json")
    review = ReviewRound(gate=3, round=1, findings=[f])
    assert finding_comments(review)[0] == []  # without the branch: a line of the review's body
    comments, body = finding_comments(review, lambda p: '{"A1": 1}\n' if p == "v.json" else None)
    assert [(c.path, c.line) for c in comments] == [("v.json", 1)] and body == []


def test_a_claim_not_testable_as_translated_says_why_and_is_not_measured():
    h = _h("A2").model_copy(update={"not_testable": "CacheHitRate is 0 in the plugin"})
    v = Verdict(hypothesis_id="A2", status=VerdictStatus.NOT_TESTABLE, summary="", flags=["not testable as translated"])
    [row] = claim_rows([h], {"A2": v})
    assert (row.measured, row.verdict, row.note) == (
        "not measured",
        "⊘ not testable as translated",
        "CacheHitRate is 0 in the plugin",
    )
    table = render("_claims_table.md.j2", claims=[row], ci_level=ci_level())
    assert "(_not testable as translated: CacheHitRate is 0 in the plugin_)" in table


def test_a_scheduling_plugin_is_described_as_placement_not_as_reordering_vllms_queue():
    """An OrderQueue becomes a queue-position scorer: it steers where a request goes, vLLM serves in its own order."""
    text = what_it_does(PolicyKind.SCHEDULING, "evolved-aging", "SLO aging", ["SLOClass"])
    assert (
        "prefers endpoints where the evolved BLIS scheduling policy's queue order would serve the request earlier"
        in text
    )
    assert "does not reorder vLLM's queue" in text and "orders the requests waiting" not in text


def test_a_shortened_finding_keeps_the_value_a_person_set_at_gate_1():
    message = (
        "load threshold 10 on `load` was calibrated in BLIS on 4 simulated instances carrying a few requests "
        "each; real vLLM pods run tens to hundreds of concurrent requests (max-num-seqs), so the branch fires far "
        "more (or less) often than it did in simulation; re-calibrated at gate 1: `loadThreshold` = 60 in the "
        "deployed config"
    )
    short = pr_parts.brief(message)
    assert short.startswith("load threshold 10 on `load` was calibrated in BLIS")
    assert short.endswith("; re-calibrated at gate 1: `loadThreshold` = 60 in the deployed config")
    assert "real vLLM pods" not in short
    assert len(short) <= 150
    # a finding without a gate-1 value is cut at its first clause, as before
    assert pr_parts.brief(message.split("; re-calibrated")[0]).endswith("carrying a few requests each")
