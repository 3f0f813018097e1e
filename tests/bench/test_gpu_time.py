"""Planned against actual GPU-minutes, from the run manifest (bot.bench.gpu_time)."""

from __future__ import annotations

from bot.bench import gpu_time
from bot.bench.run import manifest as mf


def _manifest(**kw) -> mf.Manifest:
    return mf.Manifest(promotion="7", slug="s", commit="c" * 40, planned_gpu_minutes=120.0, **kw)


def _cell(start: str, minutes: float) -> mf.CellRecord:
    return mf.CellRecord(
        treatment="evolved",
        workload="w",
        rate=10,
        repetition=1,
        run_treatment="w-rate-10-rep-1",
        setup_treatment="evolved",
        commit="c" * 40,
        start=start,
        end=start,
        gpu_minutes=minutes,
        exit_status=0,
        report="evolved/r.yaml",
        sha256="0" * 64,
    )


def _event(kind: str, start: str, minutes: float = 0.0, what: str = "", detail: str = "") -> mf.EventRecord:
    return mf.EventRecord(kind=kind, what=what or kind, start=start, end=start, gpu_minutes=minutes, detail=detail)


def test_a_finished_run_reports_spent_against_planned():
    m = _manifest(
        budget_gpu_minutes=120.0,
        cells=[_cell("2026-01-01T00:01:00Z", 10.0), _cell("2026-01-01T00:02:00Z", 12.5)],
        events=[_event("standup", "2026-01-01T00:00:00Z", 30.0)],
    )
    spent = gpu_time.from_manifest(m)
    assert (spent.spent, spent.planned, spent.cell_runs, spent.stopped) == (52.5, 120.0, 2, "")
    assert spent.line() == "GPU-minutes: 52.5 spent of 120 planned"


def test_a_budget_stop_is_said_and_a_resumed_run_is_not_stopped():
    stop = _event("stop", "2026-01-01T00:03:00Z", what="budget", detail="stopped before the GPU budget ...")
    m = _manifest(budget_gpu_minutes=50.0, cells=[_cell("2026-01-01T00:01:00Z", 40.0)], events=[stop])
    spent = gpu_time.from_manifest(m)
    assert spent.stopped == "budget" and "budget" in spent.stop_reason
    assert spent.line() == "GPU-minutes: 40 spent of 120 planned (cap 50); the run ended early (budget)"
    m.cells.append(_cell("2026-01-01T00:04:00Z", 5.0))  # resumed with a larger cap, and ran on
    assert gpu_time.from_manifest(m).stopped == ""


def test_reports_without_a_manifest_say_the_spend_was_not_recorded(tmp_path):
    spent = gpu_time.read(tmp_path)
    assert not spent.recorded and "not recorded" in spent.line()
    (tmp_path / mf.MANIFEST).write_text("{not json")
    assert not gpu_time.read(tmp_path).recorded
    assert gpu_time.GpuTime.from_json(spent.to_json()) == spent


def test_a_manifest_another_promotion_wrote_is_not_this_ones_spend(tmp_path):
    mf.save(tmp_path, _manifest(cells=[_cell("2026-01-01T00:01:00Z", 10.0)]))
    assert gpu_time.read(tmp_path, promotion="7").spent == 10.0
    assert not gpu_time.read(tmp_path, promotion="8").recorded


LIMITS = '{"budget_gpu_minutes": 3120.0, "planned_gpu_minutes": 3040.0, "timeout_minutes": 1230}\n'


def test_reports_without_a_manifest_still_record_what_the_committed_plan_promised(tmp_path):
    """Consistency finding 9: gpu-time.json said planned and budget null for the sample reports although the plan
    stage 4 committed gives both (run-limits.json); the spend alone is unknown without a manifest."""
    spent = gpu_time.with_plan(gpu_time.read(tmp_path), LIMITS)
    assert (spent.planned, spent.budget, spent.spent) == (3040.0, 3120.0, None)
    assert spent.line().endswith("; the plan: 3040 planned, at most 3120")
    nothing_ran = gpu_time.with_plan(gpu_time.GpuTime(planned=None, budget=None, spent=None, judged=False), LIMITS)
    assert (nothing_ran.planned, nothing_ran.budget) == (3040.0, 3120.0)
    # a plan committed before run-limits.json carried the cap: the fixed plan only; unreadable: nothing
    assert gpu_time.with_plan(spent, None) == spent
    assert gpu_time.with_plan(gpu_time.read(tmp_path), '{"planned_gpu_minutes": 3040.0}').budget is None
    assert gpu_time.with_plan(gpu_time.read(tmp_path), "{not json").planned is None


def test_a_manifests_own_figures_win_over_the_plans(tmp_path):
    mf.save(tmp_path, _manifest(budget_gpu_minutes=5000.0, cells=[_cell("2026-01-01T00:01:00Z", 10.0)]))
    spent = gpu_time.with_plan(gpu_time.read(tmp_path, promotion="7"), LIMITS)
    assert (spent.planned, spent.budget, spent.spent) == (120.0, 5000.0, 10.0)


def test_gpu_minutes_are_written_without_thousands_separators():
    from bot.bench.units import gpu_minutes

    assert [gpu_minutes(x) for x in (3040.0, 3120, 3042.5, 240.667, 1234567.0)] == [
        "3040",
        "3120",
        "3042.5",
        "240.667",
        "1234567",
    ]
