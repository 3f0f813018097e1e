"""The author's answers pass the deterministic checks or are returned once, then dropped with a record."""

from __future__ import annotations

import re

import pytest

from bot.agents import author
from bot.agents.guard import Allowed, translation_writable
from bot.agents.schemas import FileEdit
from bot.golang.gonames import id_places
from bot.model import PromotionRequest, finding_ids, sha256_text
from tests.agents.conftest import agents_for
from tests.agents.fake_anthropic import Reply
from tests.conftest import REQUEST


@pytest.fixture(scope="module")
def translated():
    from bot.dictionary import load_dictionary
    from bot.golang.analyze import analyze
    from bot.golang.source import parse_evolved_source
    from bot.golang.translate import translate

    request = PromotionRequest.load(REQUEST)
    src = parse_evolved_source(request.source_text, request.source)
    t = translate(
        src, analyze(src, load_dictionary(), request.kind), load_dictionary(), plugin_type=request.plugin_type
    )
    return request, t


def job_for(request, t) -> author.TranslationJob:
    files = {p: c for p, c in t.files.items() if not p.endswith("_test.go")}
    return author.TranslationJob(
        files=files,
        tests={p: c for p, c in t.files.items() if p.endswith("_test.go")},
        package_dir=t.summary.package_dir,
        allowed=translation_writable(files, t.summary.package_dir),
        registration_import=t.registration_import,
        registration_line=t.registration_line,
        source_name=request.source,
        source_text=request.source_text,
    )


def patch(edits: list[dict], n: int, action: str = "fixed") -> Reply:
    return Reply.json(
        {
            "rationale": "SECRET-AUTHOR-REASONING",
            "edits": edits,
            "responses": [
                {"finding_id": f"F{i}", "action": action, "note": "handled as the finding suggests, see the edit"}
                for i in range(1, n + 1)
            ],
            "report_notes": ["noted"],
        }
    )


def test_edits_outside_the_allowed_paths_are_returned_once_then_a_good_patch_applies(fake, translated):
    request, t = translated
    job = job_for(request, t)
    todo = author.FindingsToAnswer.merge(t.findings)
    n = len(todo.findings)
    readme = f"{t.summary.package_dir}/README.md"
    fake.then(
        patch([{"path": ".github/workflows/x.yml", "find": None, "replace": "on: push"}], n),
        patch([{"path": readme, "find": None, "replace": "# Calibrated\n"}], n, "justified"),
    )
    files, record = author.translate(agents_for(fake).llm, job, todo, executor=None)
    assert ".github/workflows/x.yml" not in files and files[readme] == "# Calibrated\n"
    assert record.applied == [readme] and not record.dropped
    assert [r.action for r in record.responses] == ["justified"] * n
    second_task = fake.calls[1].task
    assert "the branch refuses this name" in second_task and ".github/workflows/x.yml" in second_task
    assert "SECRET-AUTHOR-REASONING" not in record.dumps()


def test_test_files_and_unmatched_finds_are_refused(fake, translated):
    request, t = translated
    job = job_for(request, t)
    todo = author.FindingsToAnswer.merge(t.findings)
    test = next(iter(job.tests))
    fake.then(
        patch([{"path": test, "find": None, "replace": "package x\n"}], len(todo.findings)),
        patch(
            [{"path": f"{t.summary.package_dir}/README.md", "find": "no such text", "replace": "x"}], len(todo.findings)
        ),
    )
    files, record = author.translate(agents_for(fake).llm, job, todo, executor=None)
    assert files == job.files
    assert record.dropped and "occurs 0 times" in record.dropped[0].errors[0]
    assert record.responses == []  # "fixed" claims of a dropped patch are void
    assert record.dropped_findings()[0].check == "author.patch-dropped"


def test_unanswered_findings_are_asked_again(fake, translated):
    request, t = translated
    todo = author.FindingsToAnswer.merge(t.findings)
    fake.then(patch([], 1), patch([], len(todo.findings), "justified"))
    _, record = author.translate(agents_for(fake).llm, job_for(request, t), todo, executor=None)
    assert "answer every finding; missing" in fake.calls[1].text
    assert len(record.responses) == len(todo.findings)


def test_no_call_without_anything_to_answer(fake, translated):
    request, t = translated
    _files, record = author.translate(
        agents_for(fake).llm, job_for(request, t), author.FindingsToAnswer([]), executor=None
    )
    assert record is None and not fake.calls


@pytest.mark.slow
def test_go_that_does_not_compile_is_returned_once_then_dropped(fake, translated):
    request, t = translated
    job = job_for(request, t)
    todo = author.FindingsToAnswer.merge(t.findings)
    evolved = next(p for p in job.files if p.endswith("/evolved.go"))
    m = re.search(r"^\s*return .+$", job.files[evolved], re.M)
    # comments only (the guard lets nothing else through), but laid out so gofmt refuses the file
    broken = {"path": evolved, "find": m.group(0), "replace": "   //  misplaced comment\n" + m.group(0)}
    fake.then(patch([broken], len(todo.findings)), patch([broken], len(todo.findings)))
    files, record = author.translate(agents_for(fake).llm, job, todo, executor=None)
    assert files == job.files and record.applied == []
    assert record.dropped[0].paths == [evolved]
    assert any("gofmt" in e for e in record.dropped[0].errors), record.dropped[0].errors
    assert "gofmt" in fake.calls[1].task  # the errors went back to the author once


CUBIC = "adj *= 1.0 / (1.0 + ws.params.DeltaCoeff*delta*delta*delta)"


def test_an_edit_that_changes_the_evolved_logic_is_returned_once_then_dropped(fake, translated):
    """The differential check measured the generated code; an edited algorithm would be shown under its figure."""
    request, t = translated
    job = job_for(request, t)
    todo = author.FindingsToAnswer.merge(t.findings)
    evolved = next(p for p in job.files if p.endswith("/evolved.go"))
    assert CUBIC in job.files[evolved]
    linear = {"path": evolved, "find": CUBIC, "replace": "adj *= 1.0 / (1.0 + ws.params.DeltaCoeff*delta)"}
    fake.then(patch([linear], len(todo.findings)), patch([linear], len(todo.findings)))
    files, record = author.translate(agents_for(fake).llm, job, todo, executor=None)
    assert files == job.files and record.applied == [] and record.dropped[0].paths == [evolved]
    assert "changes Go code, not only comments" in record.dropped[0].errors[0]
    assert "changes Go code, not only comments" in fake.calls[1].task


@pytest.mark.slow
def test_a_comment_edit_keeps_the_fidelity_record_bound_and_the_anchors_on_their_code(fake, translated):
    from bot.stages.paths import PromotionPaths
    from bot.stages.translate import follow_comment_edits

    request, t = translated
    job = job_for(request, t)
    paths = PromotionPaths(request.slug)
    todo = author.FindingsToAnswer.merge(t.findings)
    evolved = next(p for p in job.files if p.endswith("/evolved.go"))
    line = next(ln for ln in job.files[evolved].splitlines() if CUBIC in ln)
    indent = line[: len(line) - len(line.lstrip())]
    note = {"path": evolved, "find": line, "replace": f"{indent}// Freshness: see the README.\n{indent}//\n{line}"}
    fake.then(patch([note], len(todo.findings)))
    files, record = author.translate(agents_for(fake).llm, job, todo, executor=None)
    assert record.applied == [evolved] and not record.dropped

    generated = {
        **job.files,
        paths.translation_json: t.summary.model_dump_json(indent=2) + "\n",
        paths.translation_report: t.report_markdown,
    }
    files = follow_comment_edits(paths, t.summary, generated, {**generated, **files})
    summary = type(t.summary).model_validate_json(files[paths.translation_json])
    assert summary.fidelity.files[evolved] == sha256_text(files[evolved])  # still the code it measured
    edited = job.files[evolved].splitlines().index(line) + 1  # the two comment lines go in above it
    before = {(f.check, f.line) for f in t.summary.findings if f.file == evolved}
    after = {(f.check, f.line) for f in summary.findings if f.file == evolved}
    moved = {(c, n + 2 if n >= edited else n) for c, n in before}
    assert any(n >= edited for _, n in before) and after == moved  # those below the edit move, those above stay
    for _, n in moved:
        assert f"{evolved}:{n}" in files[paths.translation_report]
    # a finding's id does not digest its line: the moved findings keep the ids the report and gate 1 show
    places = id_places(summary.package_dir, summary.plugin_type)  # what the report's ids call the plugin's files
    assert finding_ids(summary.findings, places) == finding_ids(t.summary.findings, places)
    assert all(f"`{ref}`" in files[paths.translation_report] for ref in finding_ids(summary.findings, places))


def test_allowed_paths():
    a = Allowed(frozenset({"pkg/x/a.go", "docs/promotion/s/r.md"}))
    assert a.check("pkg/x/a.go") is None and a.check("docs/promotion/s/r.md") is None
    for bad in (
        ".github/workflows/x.yml",
        "pkg/x/../../.github/w.yml",
        "/etc/passwd",
        "pkg/xy/a.go",
        "cmd/epp/runner/runner.go",
        "pkg/x/a_test.go",
        "pkg/x/.github/a",
    ):
        assert a.check(bad), bad
    from bot.agents.guard import apply_edits

    out = apply_edits({"pkg/x/a.go": "abc abc"}, [FileEdit(path="pkg/x/a.go", find="abc", replace="d")], a)
    assert out.errors and out.files == {"pkg/x/a.go": "abc abc"}


def test_stage_2_may_change_only_the_plugin_sources_and_readme(translated):
    """Everything a deterministic check reads as data or evidence is generated, never authored."""
    from bot.stages.paths import PromotionPaths

    request, t = translated
    paths = PromotionPaths(request.slug)
    files = {p: c for p, c in t.files.items() if not p.endswith("_test.go")}
    files |= {paths.translation_report: "r", paths.translation_json: "{}", "cmd/epp/runner/runner.go": "package x"}
    allowed = translation_writable(files, t.summary.package_dir)
    pkg = t.summary.package_dir
    assert allowed.paths == {p for p in files if p.startswith(pkg + "/")}
    for forbidden in (
        f"{paths.benchmarks}/results/evolved/load-spikes/rate-30/rep-1/benchmark_report_v0.2.yaml",
        paths.evaluation_spec,
        paths.translation_json,
        paths.translation_checks,
        paths.translation_report,  # the author's words reach it as report_notes, under the stage's heading
        paths.verdicts_json,
        paths.hypothesis("A1"),
        paths.hypotheses_excluded,
        f"{paths.docs}/PLANTED.md",
        f"{paths.docs}/author-responses/gate-1.json",
        paths.epp_config(t.summary.plugin_type),
        "cmd/epp/runner/runner.go",
        f"{pkg}/evolved_adaptive_scorer_test.go",
        f"{pkg}/helpers.go",  # no new code next to what the differential check measured
        f"{pkg}/sub/README.md",
    ):
        assert allowed.check(forbidden), forbidden


def test_names_the_forge_refuses_go_back_to_the_author(fake, translated):
    """The guard asks the forge's own question, so such a name is returned once like any error (never exit 2)."""
    from bot.forge.git import path_problem

    request, t = translated
    job = job_for(request, t)
    todo = author.FindingsToAnswer.merge(t.findings)
    readme = f"{t.summary.package_dir}/README.md"
    for bad in (f"docs/promotion/{request.slug}/calibration+notes.md", readme.replace("README", "READ+ME"), "a/é.md"):
        assert path_problem(bad) and "the branch refuses this name" in job.allowed.check(bad)
    plus = {"path": readme.replace("README", "calibration+notes"), "find": None, "replace": "x"}
    fake.then(
        patch([plus], len(todo.findings)),
        patch([{"path": readme, "find": None, "replace": "# ok\n"}], len(todo.findings)),
    )
    files, record = author.translate(agents_for(fake).llm, job, todo, executor=None)
    assert files[readme] == "# ok\n" and record.applied == [readme]
    assert "calibration+notes" in fake.calls[1].task and "the branch refuses this name" in fake.calls[1].task


def test_hypothesis_wording_is_validated_returned_once_then_dropped(fake, translated):
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_hypotheses, parse_hypothesis, render_hypothesis

    request, t = translated
    hypotheses = generate_hypotheses(request, t.summary, load_dictionary())
    first = hypotheses[0]
    good = "If this fails, it would indicate that the load penalty fires on scraped gauges too late to matter."

    def ask(wording):
        return Reply.json({"rationale": "r", "hypotheses": [wording], "responses": []})

    kwargs = {"context_files": {"h.md": "x"}, "untrusted": {}, "render": render_hypothesis, "parse": parse_hypothesis}
    fake.then(ask({"id": first.id, "diagnostic": good, "title": "  "}))
    out, record = author.hypothesize(agents_for(fake).llm, hypotheses, author.FindingsToAnswer([]), **kwargs)
    assert out[0].diagnostic == good and out[0].title == first.title and out[1:] == hypotheses[1:]
    assert record.applied == [first.id] and not record.dropped

    bad = {"id": first.id, "diagnostic": "It would be bad."}  # no diagnostic clause: the document would not validate
    fake.then(ask(bad), ask(bad))
    out, record = author.hypothesize(agents_for(fake).llm, hypotheses, author.FindingsToAnswer([]), **kwargs)
    assert out == hypotheses and record.dropped and "If this fails" in record.dropped[0].errors[0]
    assert "If this fails" in fake.calls[-1].task


def test_a_rewording_that_claims_the_opposite_of_the_prediction_is_returned_once_then_dropped(fake, translated):
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_hypotheses, parse_hypothesis, render_hypothesis
    from bot.hypotheses.wording import claim_kept

    request, t = translated
    hypotheses = generate_hypotheses(request, t.summary, load_dictionary())
    a1 = next(h for h in hypotheses if h.prediction and h.prediction.direction.value == "decrease")
    metric = a1.prediction.metric
    flipped = {
        "id": a1.id,
        "title": a1.title.replace("Better (lower)", "Worse (higher)"),
        "statement": a1.statement.replace("better (lower)", "worse (higher)").split(", because")[0]
        + ", so it should not be deployed.",
    }
    assert flipped["title"] != a1.title and "worse (higher)" in flipped["statement"]

    def ask(wording):
        return Reply.json({"rationale": "r", "hypotheses": [wording], "responses": []})

    kwargs = {
        "context_files": {"h.md": "x"},
        "untrusted": {},
        "render": render_hypothesis,
        "parse": parse_hypothesis,
        "claim_kept": claim_kept,
    }
    fake.then(ask(flipped), ask(flipped))
    out, record = author.hypothesize(agents_for(fake).llm, hypotheses, author.FindingsToAnswer([]), **kwargs)
    assert out == hypotheses and record.dropped and not record.applied
    errors = " ".join(record.dropped[0].errors)
    assert f"{a1.id} title: keep the words that state its prediction" in errors
    assert f"the opposite of its prediction ({metric} decrease)" in errors
    assert "the opposite of its prediction" in fake.calls[-1].task  # returned to the author once

    # rewording around the prediction's words is the author's to do
    kept = {"id": a1.id, "title": a1.title.replace(" than the default", " than the default pipeline")}
    fake.then(ask(kept))
    out, record = author.hypothesize(agents_for(fake).llm, hypotheses, author.FindingsToAnswer([]), **kwargs)
    assert record.applied == [a1.id] and not record.dropped


def test_every_generated_hypothesis_states_its_own_prediction(translated):
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_hypotheses
    from bot.hypotheses.wording import claim_kept, prediction_phrases

    request, t = translated
    hypotheses = generate_hypotheses(request, t.summary, load_dictionary())
    assert all(claim_kept(h, h) == [] for h in hypotheses)
    # the check has something to hold on to: the generator words every direction it predicts, in both places
    directed = [h for h in hypotheses if h.prediction and h.prediction.direction.value in ("increase", "decrease")]
    assert directed
    for h in directed:
        assert all(p.lower() in h.title.lower() and p.lower() in h.statement.lower() for p in prediction_phrases(h))


def test_a_track_b_rewording_that_flips_a_freely_worded_direction_is_caught(translated):
    """Found by a fresh-eyes pass: the check knew only the generator's own phrases ("better (lower) ..."), and a
    Map C gap's Track B text words its metric freely ("TTFT p99 falls", "lower tail latency", "fewer 429s")."""
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_hypotheses
    from bot.hypotheses.wording import claim_kept
    from bot.model import Direction, Prediction

    request, t = translated
    b1 = next(h for h in generate_hypotheses(request, t.summary, load_dictionary()) if h.id == "B1")
    gap = b1.model_copy(
        update={
            "title": "Map C gap `concurrency-races`: TTFT p99 falls under bursts",
            "statement": "Under bursty arrivals the evolved scorer spreads requests across pods, so TTFT p99 falls "
            "and fewer 429s reach clients than with the default profile.",
            "prediction": Prediction(metric="ttft_p99", direction=Direction.DECREASE, margin=0.05),
        }
    )
    assert claim_kept(gap, gap) == []

    def reworded(title: str, statement: str) -> list[str]:
        return claim_kept(gap, gap.model_copy(update={"title": title, "statement": statement}))

    # the same claims in other words: accepted
    assert (
        reworded(
            "Map C gap `concurrency-races`: lower tail latency under bursts",
            "With bursty arrivals, spreading requests across pods reduces the p99 time to first token and leaves "
            "clients with less 429 responses than the default profile gives them.",
        )
        == []
    )
    # the opposite of the prediction, in words the generator never writes: caught, in title and statement
    errors = reworded(
        "Map C gap `concurrency-races`: TTFT p99 rises under bursts",
        "Under bursty arrivals the evolved scorer herds requests onto one pod, so the p99 time to first token "
        "grows and fewer 429s reach clients than with the default profile.",
    )
    assert any(e.startswith("B1 title: says 'ttft p99 rises'") and "(ttft_p99 decrease)" in e for e in errors), errors
    assert any(e.startswith("B1 statement:") and "grows" in e for e in errors), errors
    # a side claim the text made, turned round: caught too
    errors = reworded(gap.title, gap.statement.replace("fewer 429s", "more 429s"))
    assert errors and "'more 429s'" in errors[0] and "'fewer 429s'" in errors[0], errors
    # an increase prediction read the other way round: "higher throughput" holds, "throughput drops" does not
    up = gap.model_copy(
        update={
            "title": "Higher output-token throughput under bursts",
            "statement": "Output-token throughput rises under bursts.",
            "prediction": Prediction(metric="throughput", direction=Direction.INCREASE, margin=0.05),
        }
    )
    assert claim_kept(up, up.model_copy(update={"statement": "More tokens/s come out under bursts."})) == []
    assert claim_kept(up, up.model_copy(update={"statement": "Under bursts the throughput drops."}))


def test_a_dropped_patch_of_many_files_is_summarised_and_its_record_keeps_them_all():
    """Found by re-verification: 112 refused paths listed in one finding (17.5 KB) pushed the gate's review
    comment toward GitHub's 65,536-character limit."""
    from bot.agents.record import AuthorRecord, DroppedPatch, load_record

    paths = [f"results/run-{i:03}/report.json" for i in range(112)]
    record = AuthorRecord(stage=5, gate=3, prompt="p@1", dropped=[DroppedPatch(paths=paths, errors=["refused"])])
    [finding] = record.dropped_findings("docs/promotion/x/author-responses/gate-3.json")
    assert len(finding.message) < 400, finding.message
    assert "results/run-004/report.json and 107 more (all listed in docs/promotion/x/" in finding.message
    assert "run-005" not in finding.message
    assert load_record(record.dumps()).dropped[0].paths == paths
    [few] = AuthorRecord(
        stage=5, gate=3, prompt="p@1", dropped=[DroppedPatch(paths=paths[:2], errors=["x"])]
    ).dropped_findings()
    assert "results/run-000/report.json, results/run-001/report.json failed" in few.message
