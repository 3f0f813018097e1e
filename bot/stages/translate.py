"""Stage 2, translate: the evolved function becomes an llm-d-router v0.10.0 plugin.

The deterministic translator (bot.golang) does the work; this stage decides
what lands on the branch now: the plugin package (its unit test comes in
stage 4), the EndpointPickerConfig, the registration in
``cmd/epp/runner/runner.go`` when the fork has one, the translation report,
the machine-readable summary stage 3 reads, and the Go checks of the package
with its generated tests (``translation-checks.json``, bound to the files by
hash, so gate 1 reads them instead of translating again).

With the Claude author (``--llm anthropic``), the findings the translator
reports as blocking (hazards, untranslatable signals) and the review's
blocking findings go to the author; its edits pass the deterministic checks
(``bot.agents.guard``) or are dropped, and its responses are committed
beside the translation (``author-responses/gate-1.json``).
"""

from __future__ import annotations

import hashlib
import json

from bot.model import finding_ids, sha256_text
from bot.stages.checks import check_problems, run_go_checks
from bot.stages.context import StageContext, StageOutput
from bot.stages.paths import RUNNER_GO

#: Translations by the hash of everything that decides them: stages 2 and 4 ask for the same one, and a
#: promotion translates (and builds its differential harness) once.
_CACHE: dict[str, object] = {}
_CACHE_SIZE = 8


def translation_key(ctx: StageContext, feedback: str | None) -> str:
    from bot.stages.made_by import translator

    inputs = {
        "source": ctx.request.source_text,
        "name": ctx.request.source,
        "kind": ctx.request.kind.value,
        "plugin_type": ctx.request.plugin_type,
        "feedback": feedback or "",
        "floor": ctx.request.fidelity_floor,
        "dictionary": ctx.dictionary.model_dump_json(),
        "evolved_on": list(ctx.request.evolved_on()),  # dates a copy its file cannot (blis_era)
        "translator": translator(),  # bot.__version__ is not bumped: the digest of the code that translates
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def translation(ctx: StageContext, feedback: str | None):
    """The translation of this request's program; stages 2 and 4 call this (cached by its inputs)."""
    from bot.golang.analyze import analyze
    from bot.golang.source import parse_evolved_source
    from bot.golang.translate import translate

    key = translation_key(ctx, feedback)
    if key not in _CACHE:
        src = parse_evolved_source(ctx.request.source_text, ctx.request.source)
        analysis = analyze(src, ctx.dictionary, ctx.request.kind, ctx.request.evolved_on())
        result = translate(
            src,
            analysis,
            ctx.dictionary,
            plugin_type=ctx.request.plugin_type,
            feedback=feedback,
            executor=ctx.executor,
            floor=ctx.request.fidelity_floor,
        )
        while len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = result
    return _CACHE[key]


def is_test_file(path: str) -> bool:
    return path.endswith("_test.go")


def run(ctx: StageContext) -> StageOutput:
    from bot.golang.failing_tests import with_causes
    from bot.golang.toolchain import insert_registration

    t = translation(ctx, ctx.feedback)
    files: dict[str, str] = {p: c for p, c in t.files.items() if not is_test_file(p)}
    tests = {p: c for p, c in t.files.items() if is_test_file(p)}
    files.setdefault(ctx.paths.epp_config(t.summary.plugin_type), t.epp_config)
    files[ctx.paths.translation_report] = t.report_markdown
    files[ctx.paths.translation_json] = t.summary.model_dump_json(indent=2) + "\n"
    runner_go = ctx.read(RUNNER_GO)
    if runner_go is not None:
        files[RUNNER_GO] = insert_registration(runner_go, t.registration_import, t.registration_line)
    authored = ""
    if ctx.agents is not None:
        generated = files
        files, authored = _author(ctx, t, files, tests)
        files = follow_comment_edits(ctx.paths, t.summary, generated, files)
    package = {p: c for p, c in files.items() if p.startswith(t.summary.package_dir + "/") and p.endswith(".go")}
    checks_json = _checks_json(ctx, t, {**package, **tests})
    files[ctx.paths.translation_checks] = checks_json
    checks = _report(checks_json)
    # a failing generated test names the cause the translation found, and says what to do (failing_tests)
    checks = checks.model_copy(update={"findings": with_causes(checks.findings, t.findings)})
    crit = sum(1 for f in t.findings if f.severity.value == "CRITICAL")
    important = sum(1 for f in t.findings if f.severity.value == "IMPORTANT")
    # Gate 1's review raises both as blocking findings; the record keeps the stage from showing as passed.
    problems = ([f"{crit} CRITICAL translation finding(s)"] if crit else []) + check_problems(checks)
    summary = (
        f"translate evolved {t.summary.kind.value} policy into {t.summary.plugin_type} "
        f"({len(t.summary.signals)} signals, {len(t.summary.touched_gaps)} Map C gaps; "
        f"translator findings: {crit} CRITICAL, {important} IMPORTANT)" + authored
    )
    return StageOutput(files=dict(files), summary=summary, problems=problems)


def _report(checks_json: str):
    from bot.golang.toolchain import ToolchainReport

    data = json.loads(checks_json)
    data.pop("checked_files", None)
    return ToolchainReport.model_validate(data)


def _checks_json(ctx: StageContext, t, checked: dict[str, str]) -> str:
    """translation-checks.json for ``checked``: the committed one when it checked these very bytes (a rerun
    that changed no Go file), else a fresh gofmt/build/vet/test through the execution port."""
    hashes = {p: sha256_text(c) for p, c in sorted(checked.items())}
    committed = ctx.read(ctx.paths.translation_checks)
    if committed is not None:
        try:
            if json.loads(committed).get("checked_files") == hashes:
                return committed
        except ValueError:
            pass
    checks = run_go_checks(
        ctx, checked, registration_import=t.registration_import, registration_line=t.registration_line
    )
    payload = checks.model_dump(mode="json", exclude={"output"}) | {"checked_files": hashes}
    return json.dumps(payload, indent=2, sort_keys=True) + "\n"


def follow_comment_edits(paths, summary, generated: dict[str, str], files: dict[str, str]) -> dict[str, str]:
    """``files`` with translation.json (and the report's anchors) describing the Go files as the author left
    them. The guard lets the author change comments only (``bot.agents.guard.go_logic_changed``), so the
    differential check still measures this code: its record is bound to the new bytes, and the findings'
    plugin lines follow the code they point at. The summary is rebuilt from the translator's, never read back
    from the author's files."""
    import re

    from bot.golang.gofiles import moved_lines

    edited = sorted(p for p, text in files.items() if p.endswith(".go") and generated.get(p) not in (None, text))
    if not edited:
        return files
    moves = {p: moved_lines(generated[p], files[p]) for p in edited}
    findings = [
        f.model_copy(update={"line": moves[f.file].get(f.line, f.line)}) if f.file in moves and f.line else f
        for f in summary.findings
    ]
    fidelity = summary.fidelity
    if fidelity is not None and fidelity.files:
        fidelity = fidelity.model_copy(
            update={"files": {p: sha256_text(files[p]) if p in moves else h for p, h in fidelity.files.items()}}
        )
    out = dict(files)
    out[paths.translation_json] = (
        summary.model_copy(update={"findings": findings, "fidelity": fidelity}).model_dump_json(indent=2) + "\n"
    )
    report = out.get(paths.translation_report)
    if report is not None:
        for p, move in moves.items():
            report = re.sub(
                rf"(?<![\w/.-]){re.escape(p)}:(\d+)\b", lambda m, p=p, mv=move: f"{p}:{mv.get(int(m[1]), m[1])}", report
            )
        out[paths.translation_report] = report
    return out


def _author(ctx: StageContext, t, files: dict[str, str], tests: dict[str, str]) -> tuple[dict[str, str], str]:
    """The Claude author's pass over the generated translation; returns the files and a summary suffix."""
    from bot.agents import author
    from bot.agents.guard import translation_writable
    from bot.agents.record import record_path
    from bot.golang.gonames import id_places

    review = ctx.state.reviews.get(1, []) if ctx.review else []
    todo = author.FindingsToAnswer.merge(t.findings, review[-1].blocking if review else [])
    job = author.TranslationJob(
        files=files,
        tests=tests,
        package_dir=t.summary.package_dir,
        allowed=translation_writable(files, t.summary.package_dir),
        registration_import=t.registration_import,
        registration_line=t.registration_line,
        source_name=ctx.request.source,
        source_text=ctx.request.source_text,
        review_round=review[-1].round if review else None,
    )
    new_files, record = author.translate(ctx.agents.llm, job, todo, executor=ctx.executor)
    if record is None:
        return files, ""
    new_files = dict(new_files)
    report = ctx.paths.translation_report
    section = [f"\n## Author changes (Claude, prompt {record.prompt})\n"]
    section += [f"- Changed `{p}`." for p in record.applied] or ["- No file changed."]
    section += [f"- {n}" for n in record.notes]
    named = [
        *(zip(review[-1].findings, review[-1].ids(), strict=True) if review else ()),
        *zip(t.findings, finding_ids(t.findings, id_places(t.summary.package_dir, t.summary.plugin_type)), strict=True),
    ]
    for r in record.responses:  # each finding by the id its review (or the translation report) shows
        ref = next((i for f, i in named if r.finding.refers_to(f)), r.finding.check)
        section.append(f"- Response {r.id} to `{ref}`: {r.action}: {r.note}")
    section += [f"- Patch to {', '.join(d.paths)} dropped: {'; '.join(d.errors)}" for d in record.dropped]
    new_files[report] = new_files[report].rstrip("\n") + "\n" + "\n".join(section) + "\n"
    new_files[record_path(ctx.paths.docs, 1)] = record.dumps()
    dropped = f", {len(record.dropped)} dropped" if record.dropped else ""
    return new_files, f"; author: {len(record.responses)} responses, {len(record.applied)} files changed{dropped}"
