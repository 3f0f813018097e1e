"""Stage 2, translate: the evolved function becomes an llm-d-router v0.10.0 plugin.

The deterministic translator (bot.golang) does the work; this stage decides
what lands on the branch now: the plugin package (its unit test comes in
stage 4), the EndpointPickerConfig, the registration in
``cmd/epp/runner/runner.go`` when the fork has one, the translation report and
the machine-readable summary stage 3 reads.
"""

from __future__ import annotations

from bot.stages.context import StageContext, StageOutput
from bot.stages.paths import RUNNER_GO


def translation(ctx: StageContext, feedback: str | None):
    """The translation of this request's program; stages 2, 4 and gate 1 all call this."""
    from bot.golang.analyze import analyze
    from bot.golang.source import parse_evolved_source
    from bot.golang.translate import translate

    src = parse_evolved_source(ctx.request.source_text, ctx.request.source)
    analysis = analyze(src, ctx.dictionary, ctx.request.kind)
    return translate(src, analysis, ctx.dictionary, plugin_type=ctx.request.plugin_type, feedback=feedback)


def is_test_file(path: str) -> bool:
    return path.endswith("_test.go")


def run(ctx: StageContext) -> StageOutput:
    from bot.golang.toolchain import insert_registration

    t = translation(ctx, ctx.feedback)
    files: dict[str, str | bytes] = {p: c for p, c in t.files.items() if not is_test_file(p)}
    files.setdefault(ctx.paths.epp_config(t.summary.plugin_type), t.epp_config)
    files[ctx.paths.translation_report] = t.report_markdown
    files[ctx.paths.translation_json] = t.summary.model_dump_json(indent=2) + "\n"
    runner_go = ctx.read(RUNNER_GO)
    if runner_go is not None:
        files[RUNNER_GO] = insert_registration(runner_go, t.registration_import, t.registration_line)
    crit = sum(1 for f in t.findings if f.severity.value == "CRITICAL")
    summary = (
        f"translate evolved {t.summary.kind.value} policy into {t.summary.plugin_type} "
        f"({len(t.summary.signals)} signals, {len(t.summary.touched_gaps)} Map C gaps, {crit} critical findings)"
    )
    return StageOutput(files=files, summary=summary)
