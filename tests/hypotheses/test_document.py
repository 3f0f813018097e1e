"""Hypothesis documents: round trip, errors that name the field, feedback directives."""

from __future__ import annotations

import pytest
import yaml

from bot.hypotheses import (
    HypothesisError,
    generate_hypotheses,
    generate_with_excluded,
    load_hypotheses,
    parse_excluded,
    parse_feedback,
    parse_hypothesis,
    render_hypotheses,
    render_hypothesis,
)
from bot.model import Direction, Hypothesis, Track
from tests.hypotheses.conftest import make_request


@pytest.fixture
def hyps(request_, summary, dictionary):
    return generate_hypotheses(request_, summary, dictionary)


def _variants(summary, dictionary):
    yield generate_hypotheses(make_request(), summary, dictionary)
    yield generate_hypotheses(make_request(baselines=[]), summary, dictionary)
    yield generate_hypotheses(
        make_request(claims=[], source_text=""), summary, dictionary, feedback="guard: e2e_p99\nmargin: 3%"
    )


def test_every_generated_hypothesis_round_trips(summary, dictionary):
    n = 0
    for hs in _variants(summary, dictionary):
        for h in hs:
            text = render_hypothesis(h)
            assert parse_hypothesis(text, f"{h.id}.md") == h
            n += 1
    assert n > 40


def test_front_matter_holds_every_field_and_body_is_readable(hyps):
    h = next(x for x in hyps if x.track is Track.A)
    text = render_hypothesis(h)
    front = yaml.safe_load(text.split("---\n")[1])
    assert list(front) == list(Hypothesis.model_fields)
    for section in (
        "## Classification",
        "## Prediction",
        "## Operating points",
        "## Mechanism",
        "## Diagnostic",
        "## Origin",
    ):
        assert section in text
    assert h.statement in text and "BLIS original" in text
    assert "results.request_performance.aggregate.latency.time_to_first_token.mean" in text


def _replace(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("direction: decrease", "direction: sideways", "prediction.direction"),
        ("track: A", "track: D", "track"),
        ("family: cross-policy-comparative", "family: vibes", "family"),
        ("type: statistical/dominance", "type: statistical/hunch", "type"),
        ("id: A1", "id: Z1", "id"),
        ("diagnostic: 'If this fails, it would indicate", "diagnostic: 'It might", "diagnostic"),
        ("direction: decrease", "direction: decrease\n  margin: 5", "prediction.margin"),
    ],
)
def test_parse_error_names_file_and_field(hyps, old, new, field):
    text = _replace(render_hypothesis(hyps[0]), old, new)
    with pytest.raises(HypothesisError, match=rf"^A1\.md: field '{field}'"):
        parse_hypothesis(text, "A1.md")


def test_parse_error_for_unknown_and_missing_fields(hyps):
    text = render_hypothesis(hyps[0])
    with pytest.raises(HypothesisError, match=r"x\.md: field 'colour': unknown field"):
        parse_hypothesis(_replace(text, "track: A\n", "track: A\ncolour: red\n"), "x.md")
    with pytest.raises(HypothesisError, match=r"x\.md: field 'statement'"):
        parse_hypothesis("\n".join(ln for ln in text.splitlines() if not ln.startswith("statement:")), "x.md")


def test_parse_error_for_broken_documents():
    with pytest.raises(HypothesisError, match="x.md: no YAML front matter"):
        parse_hypothesis("# A1\n", "x.md")
    with pytest.raises(HypothesisError, match="x.md: front matter is not closed"):
        parse_hypothesis("---\nid: A1\n", "x.md")
    with pytest.raises(HypothesisError, match="x.md: front matter: not valid YAML at line 3"):
        parse_hypothesis("---\nid: A1\ntitle: [oops\n---\n", "x.md")
    with pytest.raises(HypothesisError, match="x.md: front matter must be a mapping"):
        parse_hypothesis("---\n- a\n---\n", "x.md")


def test_load_hypotheses_reads_what_render_wrote(tmp_path, hyps):
    for name, text in render_hypotheses(hyps).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert load_hypotheses(tmp_path) == sorted(hyps, key=lambda h: (h.id[0], int(h.id[1:])))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(HypothesisError, match="no hypothesis documents"):
        load_hypotheses(empty)
    with pytest.raises(HypothesisError, match="no such directory"):
        load_hypotheses(tmp_path / "missing")
    (tmp_path / "C1.md").write_text("---\nid: C1\n---\n", encoding="utf-8")
    with pytest.raises(HypothesisError, match=r"C1\.md: field 'track'"):
        load_hypotheses(tmp_path)


def test_a_directional_prediction_shows_no_margin(hyps):
    """Found by a scheduler author: A1.md said `margin: 0.05` and "| decrease | 0.05 |" while gate 2 refuses a
    margin on a directional prediction ("which has no margin"). The one-sided test reads none."""
    directional = next(h for h in hyps if h.prediction and h.prediction.direction is Direction.DECREASE)
    text = render_hypothesis(directional)
    assert "margin" not in yaml.safe_load(text.split("---\n")[1])["prediction"]
    assert "| decrease | — |" in text and parse_hypothesis(text) == directional
    tolerant = next(h for h in hyps if h.prediction and h.prediction.direction is Direction.NO_WORSE)
    text = render_hypothesis(tolerant)
    assert yaml.safe_load(text.split("---\n")[1])["prediction"]["margin"] == tolerant.prediction.margin
    assert f"| no-worse | {tolerant.prediction.margin:g} |" in text


# ---------------------------------------------------------------- feedback


def test_exclude_keeps_other_ids_stable(request_, summary, dictionary, hyps):
    after = generate_hypotheses(
        request_, summary, dictionary, feedback="Please drop the chat TTFT check.\nexclude: C3, B2"
    )
    assert {h.id for h in hyps} - {h.id for h in after} == {"C3", "B2"}
    before = {h.id: h for h in hyps}
    assert all(before[h.id] == h for h in after)


def test_an_exclusion_is_recorded_with_its_reason(request_, summary, dictionary, hyps):
    """Found by a new user: after `exclude: B2, B4 (...)` the hypotheses README no longer named B2 or B4, nor why."""
    feedback = "exclude: B2, C3 (no LoRA on this cluster)"
    kept, excluded = generate_with_excluded(request_, summary, dictionary, feedback=feedback)
    assert kept == generate_hypotheses(request_, summary, dictionary, feedback=feedback)
    before = {h.id: h for h in hyps}
    assert excluded == [before["B2"], before["C3"]]
    files = render_hypotheses(kept, feedback=feedback, excluded=excluded)
    assert "B2.md" not in files and "C3.md" not in files
    dropped = files["README.md"].split("## Merged or dropped", 1)[1]
    for hid in ("B2", "C3"):
        assert f"- {hid}, " in dropped and "excluded by a person at gate 2 (no LoRA on this cluster)" in dropped
    assert parse_excluded(files["excluded.json"]) == [(h, "no LoRA on this cluster") for h in excluded]
    assert "excluded.json" not in render_hypotheses(hyps)  # nothing excluded: no record
    assert parse_excluded(None) == []
    with pytest.raises(HypothesisError, match="excluded.json: not the list stage 3 writes"):
        parse_excluded('{"excluded": [{"why": "x"}]}')


def test_an_exclusions_reason_is_what_follows_its_ids():
    assert parse_feedback("exclude: B2, B4 (no LoRA or P/D here)").exclude_why == {
        "B2": "no LoRA or P/D here",
        "B4": "no LoRA or P/D here",
    }
    assert parse_feedback("drop: C3 because C2 covers it").exclude_why == {"C3": "because C2 covers it"}
    assert parse_feedback("exclude c3: a duplicate").exclude_why == {"C3": "a duplicate"}
    assert parse_feedback("exclude: B1").exclude_why == {"B1": ""}


def test_margin_directives(request_, summary, dictionary):
    hs = {h.id: h for h in generate_hypotheses(request_, summary, dictionary, feedback="margin: 0.03\nmargin C2: 2%")}
    assert hs["C2"].prediction.margin == 0.02
    tolerant = [
        h for h in hs.values() if h.prediction and h.prediction.direction in (Direction.EQUIVALENT, Direction.NO_WORSE)
    ]
    assert all(h.prediction.margin == 0.03 for h in tolerant if h.id != "C2")
    assert all(h.prediction.margin == 0.05 for h in hs.values() if h.track is Track.A)


def test_guard_adds_no_regression_after_existing_ids(request_, summary, dictionary, hyps):
    after = generate_hypotheses(request_, summary, dictionary, feedback="guard: e2e_p99_ms")
    old_c = [h for h in hyps if h.track is Track.C]
    new_c = [h for h in after if h.track is Track.C]
    assert new_c[: len(old_c)] == old_c
    added = new_c[len(old_c) :]
    assert [(h.prediction.metric, h.workloads[0]) for h in added] == [
        ("e2e_p99", b.workload) for b in request_.baselines
    ]


def test_free_text_feedback_is_recorded_on_the_documents_it_names(hyps):
    fb = "C1 should use the p99 instead.\nguard: nonsense_metric"
    files = render_hypotheses(hyps, feedback=fb)
    assert "## Reviewer feedback" in files["C1.md"] and "C1 should use the p99 instead." in files["C1.md"]
    assert "C1 should use the p99" not in files["A1.md"]
    assert "not applied: guard: nonsense_metric" in files["A1.md"]
    general = render_hypotheses(hyps, feedback="Tighten the wording everywhere.")
    assert all("Tighten the wording everywhere." in t for n, t in general.items() if n != "README.md")
    assert "## Reviewer feedback" not in render_hypotheses(hyps)["A1.md"]
    # the feedback lives in the body only: the front matter still round-trips
    assert parse_hypothesis(files["C1.md"]) == next(h for h in hyps if h.id == "C1")


def test_parse_feedback_directives():
    fb = parse_feedback("exclude: C3\n- drop: B1 and A2\nmargin: 0.5\nmargin: 7\nrandom words")
    assert fb.exclude == ["C3", "B1", "A2"]
    assert fb.margin == 0.5
    assert fb.notes == ["random words"]
    assert fb.unapplied == [
        (
            "margin: 7 (margin must be a fraction above 0 and at most 0.5, e.g. 0.03 or 3%; `7` reads as 700%, and "
            "within it a plugin 700% worse than the default would pass every equivalence and no-regression test; "
            "for 7% write `7%`)"
        )
    ]


def test_an_exclusions_reason_may_name_the_hypotheses_it_keeps():
    """Found by a new user: 'exclude: A4, A5 (duplicates of A1/A2)' also dropped A1 and A2."""
    assert parse_feedback("exclude: A4, A5 (duplicates of A1/A2)").exclude == ["A4", "A5"]
    assert parse_feedback("drop: C3 because C2 covers it").exclude == ["C3"]
    assert parse_feedback("exclude: B1,B2 and B3").exclude == ["B1", "B2", "B3"]
    assert parse_feedback("exclude: (nothing) A1").unapplied == [
        "exclude: (nothing) A1 (nothing is not a hypothesis id; ids are a track letter and a number, e.g. A1, B2, C3)"
    ]


def test_exclusion_lists_take_the_separators_people_write_and_any_case():
    """Found in review: 'C3/C4', 'C3; C4' and 'C3 & C4' dropped only C3; 'exclude c3:' recorded 'c3' and did nothing."""
    for text in ("exclude: C3/C4", "exclude: C3; C4", "exclude: C3 & C4", "exclude: c3, c4"):
        assert parse_feedback(text).exclude == ["C3", "C4"], text
    assert parse_feedback("exclude c3: a duplicate").exclude == ["C3"]
    assert parse_feedback("margin c2: 0.03").margins == {"C2": 0.03}


def test_the_index_lists_every_gate_2_directive_in_force(request_, summary, dictionary):
    """Found by a scheduler author: after `exclude: B3 B5` and then `guard: ttft_p99_ms`, the rerun's README no
    longer said B3 and B5 were excluded. A rerun gets every change request (``pipeline.change_requests``), and
    the index lists what is in force; a later line for the same key wins."""
    feedback = "exclude: B2 C3 (no LoRA)\nmargin C2: 2%\n\nguard: ttft_p99_ms\nmargin C2: 4%"
    kept, excluded = generate_with_excluded(request_, summary, dictionary, feedback=feedback)
    assert [h.id for h in excluded] == ["B2", "C3"] and any(h.source.startswith("guard:") for h in kept)
    assert next(h for h in kept if h.id == "C2").prediction.margin == 0.04
    index = render_hypotheses(kept, feedback=feedback, excluded=excluded)["README.md"]
    in_force = index.split("## Gate 2 directives in force", 1)[1]
    assert "- `exclude`: B2, C3" in in_force and "- `guard`: ttft_p99" in in_force
    assert "- `margin C2`: 0.04" in in_force and "0.02" not in in_force
    assert "directives in force" not in render_hypotheses(kept)["README.md"]
