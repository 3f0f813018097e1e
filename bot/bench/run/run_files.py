"""The files around one harness run: the inputs each llm-d-benchmark step reads, and where its report goes.

Why a module of its own: ``bot.bench.run.runner`` is the loop (stand-ups, swaps, cells, the budget, teardown
always); what one run reads and leaves is files, written the same way by the cells and the priority mix
(``bot.bench.run.mix``): the nested overrides of a setup treatment, the inference-perf workload profile, the
treatments file that sets the run's rate, and the keywords that bind its report to its arm (llm-d-benchmark's
reports record no EPP config, only these). Its report is kept in the results layout and listed in the manifest,
or set aside under ``rejected/`` with the reason; a report the manifest does not list was half-written by a job
that died, and is discarded before anything reads it. In a dry run (``write=False``) only the paths are named.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.bench.errors import ReportError
from bot.bench.evidence import arm_keywords
from bot.bench.experiment import workload_profile
from bot.bench.layout import TREATMENTS, run_dir
from bot.bench.reports import parse_report
from bot.bench.run import commands
from bot.bench.run import manifest as mf
from bot.bench.run.found import REPORT_NAME
from bot.bench.run.schedule import CellRun, SetupRun, nested_overrides
from bot.bench.yaml_dump import dump_yaml
from bot.model import PromotionRequest
from bot.yaml_safe import load_yaml


def overrides_file(target: commands.Target, setup: SetupRun, *, write: bool) -> Path:
    """The setup treatment's overrides, nested as llm-d-benchmark merges them, in its workspace."""
    path = commands.setup_workspace(target, setup.name) / "promotion-overrides.yaml"
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_yaml(nested_overrides(setup.overrides), sort_keys=True), encoding="utf-8")
    return path


def profile_file(
    target: commands.Target, request: PromotionRequest, cell: CellRun, *, write: bool, duration_s: int | None = None
) -> Path:
    """The cell's workload profile; with ``duration_s``, one stage of that length at the cell's rate (a warm-up)."""
    ws = target.workspace / "profiles"
    suffix = f"-warmup{duration_s}" if duration_s else ""
    path = ws / f"{cell.base_workload}{suffix}.yaml"
    if write:
        doc = workload_profile(request, cell.base_workload)
        if duration_s:
            doc["load"]["stages"] = [{"rate": cell.rate, "duration": duration_s}]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_yaml(doc), encoding="utf-8")
    return path


def treatments_file(target: commands.Target, setup: SetupRun, name: str, rate: float, *, write: bool) -> Path:
    """The run treatment ``name`` at ``rate`` req/s, caches reset before it."""
    path = commands.setup_workspace(target, setup.name) / "treatments" / f"{name}.yaml"
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"reset_caches": True, "treatments": [{"name": name, "load.stages.0.rate": rate}]}
        path.write_text(dump_yaml(doc), encoding="utf-8")
    return path


def run_keywords(
    request: PromotionRequest, epp_configs: dict[str, str], commit: str, image: mf.ImageRecord | None, cell: CellRun
) -> list[str]:
    """The keywords the run records: its promotion and arm (``arm_keywords``), cell, commit, image and condition."""
    # llm-d-benchmark's reports record no EPP config, only these (run.keywords): arm_keywords binds the arm
    kws = [*arm_keywords(request.id, cell.arm, load_yaml(epp_configs[cell.arm]))]
    kws += [f"cell:{cell.run_treatment}", f"commit:{commit}"]
    if image is not None:
        kws.append(f"epp-image:{image.ref}@{image.digest}" if image.digest else f"epp-image:{image.ref}")
    if cell.condition:
        kws.append(f"condition:{cell.condition}")
    return kws


def discard_unrecorded(results: Path, manifest: mf.Manifest, log: Callable[[str], None]) -> None:
    """Reports in the layout that the manifest does not list were half-written: never read them."""
    recorded = manifest.recorded_files()
    for arm in TREATMENTS:
        for path in sorted((results / arm).rglob("*")) if (results / arm).is_dir() else []:
            rel = path.relative_to(results).as_posix()
            if path.is_file() and rel not in recorded:
                log(f"discarding {rel}: not in the manifest (written by a run that did not finish)")
                path.unlink()


def file_report(
    results: Path,
    manifest: mf.Manifest,
    setup: SetupRun,
    cell: CellRun,
    report: Path | None,
    *,
    commit: str,
    start: str,
    cost: float,
    code: int,
    fault,
    now: Callable[[], str],
) -> str | None:
    """Keep a finished run's report in the results layout and the manifest's cells; None then. A report that is
    missing or does not parse is set aside under ``rejected/`` and listed there instead: the reason is returned."""
    rel_dir = run_dir(cell.arm, cell.workload, cell.rate, cell.repetition)
    reason = None
    data = b""
    if report is None:
        reason = (
            "llm-d-benchmark finished but left no v0.2 report and no native output to convert "
            "(no new results directory for this run; an earlier attempt's is not this run's)"
        )
    else:
        data = report.read_bytes()
        try:
            parse_report(data.decode("utf-8"))
        except (ReportError, UnicodeDecodeError) as exc:
            reason = str(exc)
    if reason is not None:
        aside = Path(mf.REJECTED_DIR) / rel_dir / ((report.name if report else REPORT_NAME) + ".rejected")
        if report is not None:
            mf.atomic_write(results / aside, data)
        manifest.rejected.append(
            mf.RejectedRecord(cell=f"{cell.arm}/{cell.run_treatment}", path=aside.as_posix(), reason=reason)
        )
        return reason
    rel = f"{rel_dir}/{REPORT_NAME}"
    mf.atomic_write(results / rel, data)
    image = manifest.image
    manifest.cells.append(
        mf.CellRecord(
            treatment=cell.arm,
            workload=cell.workload,
            rate=cell.rate,
            repetition=cell.repetition,
            run_treatment=cell.run_treatment,
            setup_treatment=setup.name,
            commit=commit,
            image_digest=image.digest if image else None,
            start=start,
            end=now(),
            gpu_minutes=cost,
            exit_status=code,
            report=rel,
            sha256=mf.sha256_file(results / rel),
            fault=fault,
        )
    )
    return None
