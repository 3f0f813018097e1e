"""The benchmark reports stage 5 judges: where they come from (``--results``, else the reports committed on the
promotion branch: ``results_source``), and which of them are evidence for this promotion's plan and for its plugin
code (``load_reports``, under ``evidence_policy``; ``code_mismatch`` when a run measured other code).

Apart from the judging (``bot.stages.run_validate``) because more than stage 5 asks it: the priority mix reads its
runs under the same rules (``bot.stages.mix_validate``), and a rejudge asks first whether the reports can be judged
at all (``unusable_results``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.model import Stage, TranslationSummary, sha256_text
from bot.stages.context import StageContext


def load_reports(ctx: StageContext, results_dir: Path, code: dict[str, str] | None = None):
    """The reports under ``results_dir`` that are evidence for this promotion's plan, and for its plugin code:
    a run manifest that fingerprints other plugin code (``code``: this branch's) makes every report not used."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import load_evidence
    from bot.bench.reports_aside import set_aside_unplanned

    reports = _for_this_code(load_evidence(results_dir, evidence_policy(ctx, results_dir, code)), results_dir, code)
    text = ctx.read(ctx.paths.evaluation_spec)
    if text is not None and reports is not None:  # a cell the plan does not run: not used, not counted as used
        set_aside_unplanned(reports, load_evaluation_spec(text).cells)
    return reports


def evidence_policy(ctx: StageContext, results_dir: Path, code: dict[str, str] | None = None):
    """This promotion's evidence rules (``bot.bench.evidence``): the evaluation spec's, else promotion and sample
    data only, with what the run manifest records (``bot.bench.run_evidence``, which `promote evaluate` shares).
    With ``code`` (this branch's plugin fingerprints) a runner build bound by its tag, for lack of a manifest, must
    hold that code at its commit (``plugin_at``). A new one per set of results: it counts the sample data it lets
    through."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.run_evidence import policy_for_results

    text = ctx.read(ctx.paths.evaluation_spec)
    policy = policy_for_results(
        load_evaluation_spec(text) if text is not None else None,
        results_dir,
        allow_sample_data=ctx.allow_sample_data,
        request=ctx.request,
        promotion=ctx.request.id,
    )
    if code is not None and policy.no_manifest:
        policy.plugin_commit = plugin_at(ctx, code)
    return policy


def plugin_at(ctx: StageContext, code: dict[str, str]):
    """Why the plugin code at a commit of the fork is not ``code`` (None: the same), as the manifest's
    ``plugin_files`` are checked (``code_mismatch``), but read from the fork at that commit: results without
    their manifest name the commit only by their runner build's tag, and an older commit of this promotion (before
    a gate-1 change) measured another plugin."""
    from bot.bench.run.manifest import MANIFEST

    package = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE).package_dir

    def problem(commit: str) -> str | None:
        files = ctx.forge.files_at(commit, package)
        if files is None:
            return (
                f"the fork's history holds no commit {commit[:12]}, so nothing shows which plugin code it "
                f"measured; put back the {MANIFEST} of the run that wrote it, or benchmark this branch's commit"
            )
        at = {p: sha256_text(b) for p, b in sorted(files.items()) if p.endswith(".go") and not p.endswith("_test.go")}
        return code_difference(at, code, commit)

    return problem


def code_difference(measured: dict[str, str], code: dict[str, str], commit: str) -> str | None:
    """Why plugin fingerprints ``measured`` at ``commit`` are not ``code`` (this branch's), or None."""
    if measured == code:
        return None
    changed = sorted(p for p in set(code) | set(measured) if code.get(p) != measured.get(p))
    return (
        f"measured on plugin code that differs from this branch's ({', '.join(changed[:3])}"
        f"{' and more' if len(changed) > 3 else ''}), built from commit {commit[:12]}: benchmark this "
        "branch's commit"
    )


def code_mismatch(results_dir: Path, code: dict[str, str] | None) -> str | None:
    """Why the results were measured on other plugin code than ``code`` (the run manifest's fingerprints), or None."""
    manifest = _manifest(results_dir)
    if code is None or manifest is None or not manifest.plugin_files:
        return None
    return code_difference(manifest.plugin_files, code, manifest.commit)


def _for_this_code(reports, results_dir: Path, code: dict[str, str] | None):
    reason = code_mismatch(results_dir, code)
    if reason is None:
        return reports
    return type(reports)(
        table=reports.table.iloc[0:0],
        requests=reports.requests.iloc[0:0],
        rejected=[*reports.rejected, *((path, reason) for path in reports.loaded)],
        loaded=[],
        notes=reports.notes,
    )


@contextmanager
def results_source(ctx: StageContext) -> Iterator[tuple[Path | None, str | None]]:
    """(directory of reports, where they came from): --results, else the branch's committed results."""
    if ctx.results_dir is not None:
        yield ctx.results_dir, str(ctx.results_dir)
        return
    prefix = f"{ctx.paths.benchmarks}/results/"
    committed = [p for p in ctx.list(prefix) if not p.endswith("/")]
    if not committed:
        yield None, None
        return
    with tempfile.TemporaryDirectory(prefix="promote-results-") as tmp:
        for path in committed:
            data = ctx.forge.read_file(ctx.branch, path)
            if data is None:
                continue
            target = Path(tmp) / path[len(prefix) :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        yield Path(tmp), f"{ctx.branch}:{prefix}"


def _manifest(results_dir: Path):
    from bot.bench.run_evidence import load_manifest

    return load_manifest(results_dir)


def unusable_results(ctx) -> str | None:
    """Why stage 5 could not judge the reports in ``ctx.results_dir`` (none of them evidence for this
    promotion), or None. A rejudge asks this before it is recorded: stage 5 raising it after stage 4 had
    rerun would leave the decision on record for a command that exited 2."""
    from bot.bench.errors import ReportError

    try:
        load_reports(ctx, ctx.results_dir)
    except ReportError as exc:
        return str(exc)
    return None
