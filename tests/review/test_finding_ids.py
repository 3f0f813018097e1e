"""Every finding has a short id a person can quote (``check#digest``): the same in every round and run for the
same finding (``Finding.identity``: not its generated line), distinct within a gate's round, and shown wherever findings are listed."""

from __future__ import annotations

import pytest

from bot.cli import main
from bot.model import Finding, PipelineState, ReviewRound, Severity, finding_ids, match_text
from bot.model.findings import ID_DIGITS
from bot.review import render_review_report, review_gate
from bot.review.change_request import refusal
from bot.stages.pull_request import finding_comments
from tests.conftest import BRANCH, REQUEST, RESULTS, private_copy


def _finding(message: str, **kw) -> Finding:
    return Finding(severity=Severity.IMPORTANT, check="hazard.sim-scale-threshold", message=message, **kw)


def test_an_id_is_the_check_and_a_digest_of_the_key_and_survives_a_reworded_model_finding():
    f = _finding("threshold 7 is simulator scale", file="pkg/x/plugin.go", line=12)
    [ref] = finding_ids([f])
    assert ref == f.short_id() and ref.startswith("hazard.sim-scale-threshold#")
    assert len(ref.split("#")[1]) == ID_DIGITS
    # the same finding is the same id, also where its generated line moved (a change above it)
    assert finding_ids([f.model_copy()]) == [ref]
    assert f.model_copy(update={"line": 13}).short_id() == ref
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


def test_in_a_flood_each_id_is_the_shortest_that_no_other_finding_of_its_check_shares():
    """A flood of 20,000 findings of one check (a compiler error per line) collides in six hex digits many times
    over. Each id is unique, and one digit shorter it would not be (``finding_ids`` compared every digest with
    every other, which took hours at 60,000: it now compares sorted neighbours)."""
    import bisect

    flood = [_finding(f"undefined: v{i}") for i in range(20_000)]
    ordered = sorted(f.digest() for f in flood)

    def others_starting(prefix: str, own: str) -> int:
        at = bisect.bisect_left(ordered, prefix)
        hits = 0
        while at < len(ordered) and ordered[at].startswith(prefix):
            hits += ordered[at] != own
            at += 1
        return hits

    lengthened = 0
    for f, ref in zip(flood, finding_ids(flood), strict=True):
        head = ref.split("#")[1]
        assert f.digest().startswith(head) and others_starting(head, f.digest()) == 0
        if len(head) > ID_DIGITS:
            lengthened += 1
            assert others_starting(head[:-1], f.digest()) > 0
    assert lengthened > 0  # the birthday bound: about 24 pairs share six digits


@pytest.fixture()
def gate1(full_run, tmp_path):
    """Gate 1 of the bundled example's finished promotion, on a private copy of it."""
    return private_copy(full_run, tmp_path)[1]


def test_the_ids_are_stable_across_runs_distinct_and_shown_in_the_report_the_pr_and_the_translation_report(gate1):
    ctx = gate1
    places = ctx.id_places()  # as the runner keeps them with each round: the generated files by their place
    assert places, "the branch's translation.json names the package"
    first = ReviewRound(gate=1, round=1, findings=review_gate(1, ctx), places=places)
    again = ReviewRound(gate=1, round=2, findings=review_gate(1, ctx), places=places)
    ids = first.ids()
    assert ids == again.ids()  # the same review run twice: the same ids
    assert ctx.state.reviews[1][-1].places == places  # the runner kept them with the round it saved
    # a round saved before rounds kept them reads back with the ids it was shown with: its files as they are
    saved_before = ReviewRound.model_validate(first.model_dump(exclude={"places"}))
    assert saved_before.places == {} and saved_before.ids() == finding_ids(first.findings)
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


def test_an_id_names_the_finding_not_its_generated_line():
    """Found by an llm-d maintainer: `param loadHighThreshold: 9` moved the config line below it, and the
    unchanged loadLowThreshold hazard came back under another id, so a reason quoting it matched nothing."""
    at = _finding("load threshold 4.5", file="deploy/config/x.yaml", line=37, source_line=206, param="loadLowThreshold")
    assert at.model_copy(update={"line": 35}).short_id() == at.short_id()
    # what the finding is still tells it apart: its evolved line, its parameter, its file, its text
    for change in ({"source_line": 204}, {"param": "loadHighThreshold"}, {"file": "deploy/config/y.yaml"}):
        assert at.model_copy(update=change).short_id() != at.short_id(), change
    other = at.model_copy(update={"source_line": 204})
    assert len(set(finding_ids([at, other]))) == 2
    # two findings that differ only in their generated line still get distinct ids within the round
    below = at.model_copy(update={"line": 40})
    assert finding_ids([at, below]) == [at.short_id(), at.short_id() + "-2"]


def test_a_reason_that_only_quotes_a_finding_id_is_told_ids_are_for_reference():
    why = refusal(1, "please fix hazard.recalibration-inverts#aa7251", parameters=["loadHighThreshold"])
    assert why is not None and "names no directive" in why
    assert "A finding id (`hazard.recalibration-inverts#aa7251`) is for reference only" in why
    assert "the directive its suggested fix names" in why
    assert "for reference only" not in (refusal(1, "please recalibrate", parameters=["loadHighThreshold"]) or "")


@pytest.mark.slow
def test_a_param_change_that_moves_config_lines_keeps_the_ids_of_the_unchanged_findings(tmp_path):
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--quiet", "--actor", "maria"]
    assert (
        main(["run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", "--fork", str(fork), *args]) == 0
    )

    def low_threshold() -> tuple[str, Finding]:
        state = PipelineState.model_validate_json((work / "state.json").read_text())
        review = state.reviews[1][-1]
        return next(
            (i, f)
            for f, i in zip(review.findings, review.ids(), strict=True)
            if f.check == "hazard.sim-scale-threshold" and f.param == "loadLowThreshold"
        )

    before_id, before = low_threshold()
    assert main(["request-changes", "1", "--reason", f"please fix {before_id}\nparam loadHighThreshold: 9", *args]) == 0
    after_id, after = low_threshold()
    assert after.line != before.line, "the scenario moves the finding's config line"
    assert (after.message, after.source_line, after.severity) == (before.message, before.source_line, before.severity)
    assert after_id == before_id
