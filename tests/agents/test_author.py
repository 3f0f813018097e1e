"""The author's answers pass the deterministic checks or are returned once, then dropped with a record."""

from __future__ import annotations

import re

import pytest

from bot.agents import author
from bot.agents.guard import Allowed
from bot.agents.schemas import FileEdit
from bot.model import PromotionRequest
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
        allowed=Allowed((t.summary.package_dir + "/", f"docs/promotion/{request.slug}/")),
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
    assert "outside the promotion's allowed paths" in second_task and ".github/workflows/x.yml" in second_task
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
    broken = {
        "path": evolved,
        "find": m.group(0),
        "replace": m.group(0).replace("return ", "return undefinedThing + ", 1),
    }
    fake.then(patch([broken], len(todo.findings)), patch([broken], len(todo.findings)))
    files, record = author.translate(agents_for(fake).llm, job, todo, executor=None)
    assert files == job.files and record.applied == []
    assert record.dropped[0].paths == [evolved]
    assert any("undefinedThing" in e or "toolchain.build" in e for e in record.dropped[0].errors)
    assert "undefinedThing" in fake.calls[1].task  # the errors went back to the author once


def test_allowed_paths():
    a = Allowed(("pkg/x/", "docs/promotion/s/"))
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
