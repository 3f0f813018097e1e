"""Stage 6 and 7 read what earlier stages committed through models: a file an older bot wrote (a key added
since is missing) is read with its defaults, and one this bot cannot read stops the stage with the key named
and how to redo it, never a traceback that recurs on every resume."""

from __future__ import annotations

import json

import pytest

from bot.stages import document
from bot.stages.context import StageFailed
from tests.conftest import BRANCH, private_copy


@pytest.fixture()
def branch(full_run, tmp_path):
    forge, ctx = private_copy(full_run, tmp_path)

    def edit(path: str, change) -> None:
        data = json.loads(forge.read_file(BRANCH, path).decode())
        change(data)
        forge.commit_files(BRANCH, {path: json.dumps(data).encode()}, message="as another bot wrote it")

    return ctx, edit


def test_stage6_reads_go_checks_an_older_bot_wrote(branch):
    ctx, edit = branch
    edit(ctx.paths.go_checks, lambda d: d.pop("tests_lost"))  # bot 3b6f26d's go-checks.json has no tests_lost
    out = document.run(ctx)
    assert "go test pass" in out.files[ctx.paths.report]


def test_stage6_names_a_key_it_does_not_know_and_how_to_redo_the_stage(branch):
    ctx, edit = branch
    edit(ctx.paths.go_checks, lambda d: d.update(tests_flaky=2))  # a newer bot's key
    with pytest.raises(StageFailed) as err:
        document.run(ctx)
    assert "`tests_flaky`" in str(err.value) and ctx.paths.go_checks in str(err.value)
    assert "redo stage 5" in err.value.fix and "request changes at gate 3" in err.value.fix


def test_stage6_names_a_missing_key_of_the_verdicts(branch):
    ctx, edit = branch
    edit(ctx.paths.verdicts_json, lambda d: d[0].pop("status"))
    with pytest.raises(StageFailed, match=r"it lacks `0.status`"):
        document.run(ctx)


def test_the_gate_that_reruns_each_stage_is_the_pipelines():
    from bot.pipeline import GATE_COVERS
    from bot.stages.context import RERUN_AT

    assert {stage: gate for gate, stages in GATE_COVERS.items() for stage in stages} == RERUN_AT
