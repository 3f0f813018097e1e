"""A promotion whose stages another bot made (an older dictionary, another translator) is re-checked on resume.

The request's fingerprint cannot tell: the upgrade translates the same request differently. Each stage records
what made its artifacts (``StageRecord.made_by``); a resume by a bot whose recording differs redoes those stages,
keeps a gate's decision only when the artifacts it approved come out byte-identical, and says so in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.model import PipelineState, Status
from tests.conftest import REQUEST, RESULTS, copy_promotion

pytestmark = pytest.mark.slow

OLD_DICTIONARY = "1.0.0 (sha256 000000000000)"


def _run(root: Path, approve: str) -> Path:
    """`promote run` of the example with its sample reports in ``root`` (work and fork), gates ``approve`` approved."""
    work = root / "work"
    run = ["run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", "--fork", str(root / "fork")]
    assert main([*run, "--work", str(work), "--quiet", "--approve", approve]) == 0
    return work


@pytest.fixture(scope="module")
def gate_2(tmp_path_factory) -> Path:
    """One promotion stopped at gate 2, for the tests that edit and resume a copy of it (``copy_promotion``)."""
    root = tmp_path_factory.mktemp("made-by-gate-2")
    s = _state(_run(root, "1"))
    assert s.open_gate == 2 and [d.gate for d in s.decisions] == [1]
    assert s.stages[1].made_by["dictionary"].startswith("1.") and s.stages[2].made_by["translator"]
    return root


@pytest.fixture(scope="module")
def gate_3(tmp_path_factory) -> Path:
    """One promotion stopped at gate 3 (gates 1 and 2 approved), copied by the tests that edit and resume it."""
    root = tmp_path_factory.mktemp("made-by-gate-3")
    assert _state(_run(root, "1,2")).open_gate == 3
    return root


def _at_gate_2(gate_2: Path, tmp_path: Path, capsys) -> Path:
    copy_promotion(gate_2, tmp_path)
    capsys.readouterr()
    return tmp_path / "work"


def _at_gate_3(gate_3: Path, tmp_path: Path, capsys) -> Path:
    copy_promotion(gate_3, tmp_path)
    capsys.readouterr()
    return tmp_path / "work"


def _state(work: Path) -> PipelineState:
    return PipelineState.model_validate_json((work / "state.json").read_text())


def _edit(work: Path, edit) -> None:
    raw = json.loads((work / "state.json").read_text())
    edit(raw)
    (work / "state.json").write_text(json.dumps(raw))


def _older_dictionary(raw: dict) -> None:
    for n in ("1", "2", "3"):
        raw["stages"][n]["made_by"]["dictionary"] = OLD_DICTIONARY


def test_an_older_dictionary_redoes_the_translation_and_an_identical_one_keeps_gate_1(gate_2, tmp_path, capsys):
    work = _at_gate_2(gate_2, tmp_path, capsys)
    before = _state(work)
    _edit(work, _older_dictionary)
    assert main(["resume", "--work", str(work)]) == 0  # not --quiet: the re-check line shows
    out = capsys.readouterr().err  # the run log
    assert f"dictionary {OLD_DICTIONARY} -> 1." in out and "redoing from stage 1 (analyze)" in out
    assert "stage 2 (translate) redone by this bot came out byte-identical: gate 1's decision is kept" in out
    s = _state(work)
    assert s.recheck is None and s.open_gate == 2 and s.status is Status.AWAITING_DECISION
    assert s.decisions == before.decisions and s.reviews[2] == before.reviews[2]
    assert all(s.stages[n].made_by["dictionary"] != OLD_DICTIONARY for n in (1, 2, 3))
    events = [a.event for a in s.audit]
    assert "re-check" in events and "re-check finished" in events


def test_a_translation_that_comes_out_different_reopens_gate_1(gate_2, tmp_path, capsys):
    work = _at_gate_2(gate_2, tmp_path, capsys)

    def older_translation(raw: dict) -> None:
        _older_dictionary(raw)
        raw["stages"]["2"]["artifacts"][0]["sha256"] = "0" * 64  # what the old translator wrote

    plugin = _state(work).stages[2].artifacts[0].path
    _edit(work, older_translation)
    assert main(["resume", "--work", str(work)]) == 0  # not --quiet: the re-check line shows
    out = capsys.readouterr().err  # the run log
    assert f"came out different ({plugin} differs): gate 1 reopens for a fresh review and decision" in out
    assert "the decisions at gate 1 no longer count" in out
    s = _state(work)
    assert s.open_gate == 1 and s.status is Status.AWAITING_DECISION and s.decisions == []
    assert sorted(s.stages) == [1, 2] and 2 not in s.reviews and s.recheck is None
    assert any(a.event == "gate 1 reopened by the re-check" for a in s.audit)


def test_a_state_saved_before_made_by_is_rechecked_from_stage_2(gate_2, tmp_path, capsys):
    """Unknown versions: stage 1 is the dictionary's summary, so the check starts at the translation."""
    work = _at_gate_2(gate_2, tmp_path, capsys)

    def unrecorded(raw: dict) -> None:
        for record in raw["stages"].values():
            record.pop("made_by")

    _edit(work, unrecorded)
    assert main(["resume", "--work", str(work)]) == 0  # not --quiet: the re-check line shows
    out = capsys.readouterr().err  # the run log
    assert "stages 2, 3 by a bot that did not record its versions" in out and "redoing from stage 2" in out
    assert (
        "gate 1's decision is kept" in out and "stage 3 (hypothesize) redone by this bot came out byte-identical" in out
    )
    s = _state(work)
    assert s.open_gate == 2 and [d.gate for d in s.decisions] == [1] and s.stages[2].made_by


def _branch_files(tmp_path: Path, branch: str) -> set[str]:
    import subprocess

    out = subprocess.run(
        ["git", "-C", str(tmp_path / "fork"), "ls-tree", "-r", "--name-only", branch],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


def test_gate_2_reopened_takes_the_later_stages_files_off_the_branch_and_quiet_still_says_so(gate_3, tmp_path, capsys):
    """The plan came out different at gate 3: gate 2 reopens, and stage 4's tests and stage 5's benchmark
    evidence, built on the old plan, leave the branch in one commit (as a restart's do) until they rerun."""
    work = _at_gate_3(gate_3, tmp_path, capsys)
    before = _state(work)
    assert before.open_gate == 3
    later = {a.path for n in (4, 5) for a in before.stages[n].artifacts}
    assert later <= _branch_files(tmp_path, before.branch)

    def older_plan(raw: dict) -> None:
        for n in ("1", "2", "3", "4"):
            raw["stages"][n]["made_by"]["dictionary"] = OLD_DICTIONARY
        raw["stages"]["3"]["artifacts"][0]["sha256"] = "0" * 64  # what the old bot's stage 3 wrote

    _edit(work, older_plan)
    capsys.readouterr()
    assert main(["resume", "--work", str(work), "--quiet"]) == 0
    err = capsys.readouterr().err  # --quiet leaves out the progress, not the re-check: it changes what was decided
    assert "stage 1: analyze" not in err  # the progress is left out
    assert "re-check: this promotion's stages were made by another bot version" in err
    assert "gate 1's decision is kept" in err
    plan = before.stages[3].artifacts[0].path
    assert f"stage 3 (hypothesize) redone by this bot came out different ({plan} differs): gate 2 reopens" in err
    assert "the files of stages 4-5 were removed from the branch in one commit (" in err
    s = _state(work)
    assert s.open_gate == 2 and [d.gate for d in s.decisions] == [1] and sorted(s.stages) == [1, 2, 3]
    files = _branch_files(tmp_path, s.branch)
    assert not later & files and not any("/results/" in f for f in files)
    assert any(a.event == "removed the files of the stages redone" for a in s.audit)
    reopened = next(a for a in s.audit if a.event == "gate 2 reopened by the re-check")
    assert "removed from the branch in one commit" in reopened.detail  # the audit trail says it as the log did


def test_stage_4_different_while_stage_5_waits_reopens_gate_3_at_once_and_says_what_differed(gate_3, tmp_path, capsys):
    """bg5: stage 5 waited for the GPU run and only stage 4 came out different. Gate 3 covers stage 4 but opens
    after stage 5, which had not finished, so the re-check marked gate 3 and ended saying every stage redone came
    out identical; stage 5 then went on with the benchmark of the old tests. Now the difference reopens gate 3 at
    once: the benchmark it waited for is dropped, stage 5 runs again, then gate 3's review and a fresh decision."""
    work = _at_gate_3(gate_3, tmp_path, capsys)
    before = _state(work)
    assert before.open_gate == 3
    test_file = before.stages[4].artifacts[0].path

    def waiting_for_the_gpu_run_of_older_tests(raw: dict) -> None:
        for n in ("1", "2", "3", "4"):
            raw["stages"][n]["made_by"]["dictionary"] = OLD_DICTIONARY
        raw["stages"]["4"]["artifacts"][0]["sha256"] = "0" * 64  # what the old bot's stage 4 wrote
        del raw["stages"]["5"]  # stage 5 waits for the benchmark it dispatched
        raw["reviews"].pop("3", None)
        raw.update(next_stage=5, open_gate=None, status="running", review_round=0)
        raw["benchmark"] = {"commit": raw["stages"]["4"]["commit"], "at": raw["stages"]["4"]["finished_at"]}

    _edit(work, waiting_for_the_gpu_run_of_older_tests)
    capsys.readouterr()
    assert main(["resume", "--work", str(work)]) == 0  # not --quiet: the re-check line shows
    err = capsys.readouterr().err  # the run log
    assert "gate 2's decision is kept" in err
    assert (
        f"stage 4 (implement tests) redone by this bot came out different ({test_file} differs): gate 3 reopens "
        "for a fresh review and decision once stage 5 (run and validate) has run again" in err
    ), err
    assert "every stage redone came out identical" not in err
    s = _state(work)
    assert s.recheck is None and s.benchmark is None
    assert s.open_gate == 3 and s.status is Status.AWAITING_DECISION and [d.gate for d in s.decisions] == [1, 2]
    assert s.stages[5].finished_at > before.stages[5].finished_at and s.reviews[3]  # stage 5 and the review ran anew
    events = [a.event for a in s.audit]
    assert "gate 3 reopened by the re-check" in events and "re-check finished" not in events
    assert events.index("gate 3 reopened by the re-check") < events.index("stage 5 finished", len(before.audit))


def test_stage_4_different_at_gate_3_reopens_it_before_stage_5_runs_again(gate_3, tmp_path, capsys):
    """Stage 5 had finished: gate 3 still reopens right after stage 4 (stage 5 is not redone as a re-check of the
    old tests' benchmark); stage 5's files leave the branch in one re-check commit and it runs again first."""
    import subprocess

    work = _at_gate_3(gate_3, tmp_path, capsys)
    before = _state(work)

    def older_tests(raw: dict) -> None:
        for n in ("1", "2", "3", "4"):
            raw["stages"][n]["made_by"]["dictionary"] = OLD_DICTIONARY
        raw["stages"]["4"]["artifacts"][0]["sha256"] = "0" * 64  # what the old bot's stage 4 wrote

    _edit(work, older_tests)
    capsys.readouterr()
    assert main(["resume", "--work", str(work), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "once stage 5 (run and validate) has run again" in err
    assert "the files of stage 5 were removed from the branch in one commit (" in err, err
    s = _state(work)
    assert s.open_gate == 3 and s.status is Status.AWAITING_DECISION and [d.gate for d in s.decisions] == [1, 2]
    assert s.stages[5].finished_at > before.stages[5].finished_at
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "fork"), "log", "--format=%s", s.branch],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "re-check from stage 5: remove the files of the stages redone" in log, log
