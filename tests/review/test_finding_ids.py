"""Every finding has a short id a person can quote (``check#digest``): the same in every round and run for the
same finding (``Finding.key``), distinct within a gate's round, and shown wherever findings are listed."""

from __future__ import annotations

import shutil

import pytest

from bot.forge.local import LocalForge
from bot.model import Finding, PipelineState, PromotionRequest, ReviewRound, Severity, finding_ids, match_text
from bot.model.evidence import ID_DIGITS
from bot.review import render_review_report, review_gate
from bot.stages.context import StageContext
from bot.stages.pull_request import finding_comments
from tests.conftest import BRANCH, REQUEST, RESULTS


def _finding(message: str, **kw) -> Finding:
    return Finding(severity=Severity.IMPORTANT, check="hazard.sim-scale-threshold", message=message, **kw)


def test_an_id_is_the_check_and_a_digest_of_the_key_and_survives_a_reworded_model_finding():
    f = _finding("threshold 7 is simulator scale", file="pkg/x/plugin.go", line=12)
    [ref] = finding_ids([f])
    assert ref == f.short_id() and ref.startswith("hazard.sim-scale-threshold#")
    assert len(ref.split("#")[1]) == ID_DIGITS
    # the checklist's key includes the line: the same finding is the same id, a moved one is another finding
    assert finding_ids([f.model_copy()]) == [ref]
    assert f.model_copy(update={"line": 13}).short_id() != ref
    # a model words a repeat differently: its key is check and file, and so is its id
    by_model = f.model_copy(update={"by": "claude"})
    assert by_model.short_id() == by_model.model_copy(update={"message": "reworded", "line": 40}).short_id()
    # a long message kept in the state in its cut form (``match_text``) is still the same finding, and id
    long = _finding("x" * 1_000)
    assert long.short_id() == long.model_copy(update={"message": match_text(long.message)}).short_id()


def test_two_findings_of_one_check_get_distinct_ids_even_when_their_digests_collide():
    a, b = _finding("recurring value 7"), _finding("recurring value 9")
    assert len(set(finding_ids([a, b]))) == 2
    # find two messages whose digests share the first ID_DIGITS hex digits (a birthday search: a few thousand)
    seen: dict[str, Finding] = {}
    n = 0
    while True:
        f = _finding(f"m{n}")
        head = f.digest()[:ID_DIGITS]
        if head in seen:
            first, second = seen[head], f
            break
        seen[head] = f
        n += 1
    other = _finding("unrelated")
    ids = finding_ids([first, other, second])
    assert len(set(ids)) == 3
    assert ids[1] == other.short_id()  # only the colliding two get longer ids
    assert all(len(i.split("#")[1]) > ID_DIGITS for i in (ids[0], ids[2]))
    # findings with one key (a model's two findings of one check in one file) are numbered after the first
    m = _finding("one", by="claude", file="a.go")
    assert finding_ids([m, m.model_copy(update={"message": "two"})]) == [m.short_id(), m.short_id() + "-2"]


@pytest.fixture()
def gate1(full_run, tmp_path):
    """Gate 1 of the bundled example's finished promotion, on a private copy of it."""
    _, work, fork = full_run
    shutil.copytree(fork, tmp_path / "fork")
    forge = LocalForge(tmp_path / "fork", tmp_path / "work")
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    return StageContext(PromotionRequest.load(REQUEST), forge, state, results_dir=RESULTS, allow_sample_data=True)


def test_the_ids_are_stable_across_runs_distinct_and_shown_in_the_report_the_pr_and_the_translation_report(gate1):
    ctx = gate1
    first = ReviewRound(gate=1, round=1, findings=review_gate(1, ctx))
    again = ReviewRound(gate=1, round=2, findings=review_gate(1, ctx))
    ids = first.ids()
    assert ids == again.ids()  # the same review run twice: the same ids
    assert len(set(ids)) == len(ids)
    checks = [f.check for f in first.findings]
    repeated = {c for c in checks if checks.count(c) > 1}
    assert repeated, "the bundled example raises one check more than once at gate 1"
    assert all(
        len({i for f, i in zip(first.findings, ids, strict=True) if f.check == c}) == checks.count(c) for c in repeated
    )
    report = render_review_report(first, ctx, ctx.state)
    assert "| Severity | Id (check#digest) |" in report
    assert all(f"`{i}`" in report for i in ids)
    comments, body = finding_comments(first)
    shown = "\n".join([c.body for c in comments] + body)
    assert all(f"`{i}`" in shown for i in ids)
    # the translation report names its findings by the ids gate 1's review shows
    summary = ctx.read_json(ctx.paths.translation_json)
    translation = ctx.forge.read_file(BRANCH, ctx.paths.translation_report).decode()
    committed = [Finding.model_validate(f) for f in summary["findings"]]
    named = [i for f, i in zip(first.findings, ids, strict=True) if f in committed]
    assert len(named) == len(committed) and all(f"`{i}`" in translation for i in named)
