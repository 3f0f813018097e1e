"""Stage 1, analyze: the translation dictionary (Maps A, B, C) on the branch, and a first read of the program.

The dictionary is versioned data in ``dictionary/``; this stage renders it to
``docs/promotion/translation-dictionary.md`` so reviewers of the fork see the
exact mapping the translation used. Reading the evolved program here means a
program the translator cannot use fails before anything else is produced.
"""

from __future__ import annotations

from bot.stages.context import StageContext, StageOutput
from bot.stages.paths import DICTIONARY_DOC


def run(ctx: StageContext) -> StageOutput:
    from bot.dictionary_doc import render_markdown
    from bot.golang.analyze import analyze
    from bot.golang.safety import refuse_unsafe
    from bot.golang.source import parse_evolved_source

    d = ctx.dictionary
    src = parse_evolved_source(ctx.request.source_text, ctx.request.source)
    refuse_unsafe(src)  # the entry points refuse first; this keeps any other path from committing
    analysis = analyze(src, d, ctx.request.kind, ctx.request.evolved_on())
    summary = (
        f"translation dictionary {d.version} (Map A {len(d.interfaces)}, Map B {len(d.signals)}, "
        f"Map C {len(d.gaps)}); the {analysis.kind.value} policy reads {len(analysis.signals)} signal uses"
    )
    return StageOutput(files={DICTIONARY_DOC: render_markdown(d)}, summary=summary)
