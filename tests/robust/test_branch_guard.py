"""bot.stages.branch_guard on a real git fork: what counts as the branch having moved."""

from __future__ import annotations

from datetime import UTC, datetime

from bot import pipeline
from bot.forge.local import LocalForge
from bot.model import StageRecord
from bot.stages.branch_guard import check_branch

BRANCH = "promotion/1-x"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def setup(tmp_path):
    forge = LocalForge(tmp_path / "fork", tmp_path / "work")
    forge.ensure_branch(BRANCH, "main")
    bot = forge.commit_files(
        BRANCH, {"a.txt": b"a\n"}, message="stage 1: x\n\nPromotion-Stage: 1\nPromotion-Inputs: h1\n"
    )
    state = pipeline.new_state("1", "f" * 64, BRANCH, actor="t", now=NOW)
    record = StageRecord(stage=1, inputs_hash="h1", commit=bot, finished_at=NOW)
    state = state.model_copy(update={"head": bot, "stages": {1: record}})
    return forge, state, bot


def test_where_the_bot_left_it(tmp_path):
    forge, state, _ = setup(tmp_path)
    assert check_branch(forge, state, BRANCH, "main") is None
    assert check_branch(forge, state.model_copy(update={"head": None}), BRANCH, "main") is None  # an old state


def test_commits_added_on_top(tmp_path):
    forge, state, _ = setup(tmp_path)
    foreign = forge.commit_files(BRANCH, {"b.go": b"package b\n"}, message="add b")
    moved = check_branch(forge, state, BRANCH, "main", due_inputs="h2")
    assert moved is not None and not moved.rewritten and moved.added == [(foreign, "add b")]
    assert "stage 1's commit" in moved.reason and "--adopt-branch" in moved.fix


def test_reset_and_deleted(tmp_path):
    forge, state, bot = setup(tmp_path)
    forge.repo.git("update-ref", f"refs/heads/{BRANCH}", forge.branch_head("main"))
    moved = check_branch(forge, state, BRANCH, "main")
    assert moved is not None and moved.rewritten and f"update-ref refs/heads/{BRANCH} {bot}" in moved.fix
    forge.repo.git("update-ref", "-d", f"refs/heads/{BRANCH}")
    moved = check_branch(forge, state, BRANCH, "main")
    assert moved is not None and moved.rewritten and "was deleted" in moved.reason


def test_the_due_steps_own_interrupted_write(tmp_path):
    forge, state, _ = setup(tmp_path)
    forge.commit_files(BRANCH, {"c.txt": b"c\n"}, message="stage 2: y\n\nPromotion-Stage: 2\nPromotion-Inputs: h2\n")
    assert check_branch(forge, state, BRANCH, "main", due_inputs="h2") is None
    assert check_branch(forge, state, BRANCH, "main", due_inputs="other") is not None, "another step's inputs"


def test_a_benchmark_delivery_counts_only_where_the_due_stage_reads_it(tmp_path):
    forge, state, _ = setup(tmp_path)
    results = "benchmarks/promotion/x/results/"
    forge.commit_files(BRANCH, {f"{results}baseline/r.yaml": b"v: 1\n"}, message="benchmark results")
    assert check_branch(forge, state, BRANCH, "main", delivery=results) is None
    assert check_branch(forge, state, BRANCH, "main") is not None, "not while another stage is due"
    forge.commit_files(BRANCH, {f"{results}x.yaml": b"", "cmd/main.go": b"package main\n"}, message="sneaky")
    assert check_branch(forge, state, BRANCH, "main", delivery=results) is not None, "code beside the reports"
