"""Gate 1 (translation): the seed's checklist, computed.

- every signal the evolved program reads is mapped, to the right llm-d source;
- every Map B freshness gap is annotated on the line that reads the signal;
- every touched Map C gap is flagged in the translation report;
- the plugin follows llm-d-router conventions (Type, Factory, assertion, registration, config);
- no signal outside the dictionary; hazards found in the evolved code;
- the plugin decides like the BLIS original: the differential check's agreement, with every
  disagreement attributed to a mapping (IMPORTANT below the floor), and it describes the committed files;
- every translator finding, anchored to a plugin file and line (and the evolved line);
- the plugin compiles, vets and passes its tests with the pinned toolchain.
"""

from __future__ import annotations

import re

from bot.golang import counter_era, fidelity_admit, fidelity_classes
from bot.golang.failing_tests import with_causes
from bot.golang.fidelity_unexplained import held_constant_clause, unexplained_words
from bot.golang.toolchain import RUNNER_GO
from bot.model import Finding, PolicyKind, Severity, TranslationSummary
from bot.yaml_safe import load_yaml

CHECKLIST = [
    "signals mapped",
    "freshness annotations",
    "Map C gaps flagged",
    "plugin conventions",
    "no unknown signals",
    "decides like the BLIS original",
    "translator findings",
    "compiles and tests pass",
]


def review(ctx) -> list[Finding]:
    from bot.golang.analyze import analyze
    from bot.golang.source import parse_evolved_source

    findings: list[Finding] = []
    report_path = ctx.paths.translation_report
    summary_text = ctx.read(ctx.paths.translation_json)
    if summary_text is None:
        return [
            Finding(
                severity=Severity.CRITICAL,
                check="G1.artifacts",
                message="translation.json is missing",
                file=ctx.paths.translation_json,
                fix="rerun stage 2",
            )
        ]
    summary = TranslationSummary.model_validate_json(summary_text)
    report = ctx.read(report_path) or ""
    go_files = {
        p: ctx.read(p) or "" for p in ctx.list(summary.package_dir) if p.endswith(".go") and not p.endswith("_test.go")
    }
    main_go = _main_file(go_files)

    # The reviewer's own reading of the evolved program (not the author's summary).
    d = ctx.dictionary
    src = parse_evolved_source(ctx.request.source_text, ctx.request.source)
    analysis = analyze(src, d, ctx.request.kind, ctx.request.evolved_on())
    read = sorted({u.name for u in analysis.signals})
    for name in read:
        entry = d.signal(name)
        if entry is None:
            findings.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check="G1.unknown-signal",
                    file=report_path,
                    message=f"`{name}` is read by the evolved program but has no dictionary entry",
                    fix="add it to dictionary/map-b-signals.yaml or justify an omission",
                )
            )
            continue
        if entry.identifier_only:
            continue
        if name not in summary.signals and entry.name not in summary.signals:
            findings.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check="G1.signals-mapped",
                    file=ctx.paths.translation_json,
                    message=f"`{name}` is read by the evolved program but missing from the translation",
                    fix="map it through the dictionary or record it as untranslatable",
                )
            )
        if f"`{entry.name}`" not in report and entry.name not in report:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G1.signals-mapped",
                    file=report_path,
                    message=f"the translation report does not explain how `{entry.name}` is mapped",
                )
            )
        if entry.freshness.gap and entry.llmd is not None and entry.scope != "method" and go_files:
            if not any(_annotation_line(code, entry.name) for code in go_files.values()):
                where, line = _first_use(go_files, entry.name, main_go)
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check="G1.freshness-annotation",
                        file=where,
                        line=line,
                        message=f"`{entry.name}` has a Map B freshness gap ({entry.freshness.gap}) but no annotation",
                        fix="add a comment above the adapter line: `Freshness: ...` (how llm-d's value can lag the endpoint)",
                    )
                )
    for gap in d.touched_gaps(analysis.kind, read):
        if gap not in report:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G1.map-c-gap-flagged",
                    file=report_path,
                    message=f"Map C gap `{gap}` is touched by this policy but not flagged in the report",
                )
            )
        if gap not in summary.touched_gaps:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G1.map-c-gap-flagged",
                    file=ctx.paths.translation_json,
                    message=f"Map C gap `{gap}` is missing from touched_gaps (stage 3 would skip its Track B hypothesis)",
                )
            )
    findings += _conventions(ctx, summary, main_go, go_files)
    # Hazards in the evolved code, as the reviewer reads them, and every translator finding as committed
    # (generation, fidelity), each anchored to a plugin file and line.
    committed = {(f.check, f.source_line, f.message) for f in summary.findings}
    recalibrated = _recalibrated_params(ctx, summary, analysis)
    findings += summary.findings
    findings += [
        f
        for f in _capped_as_committed(src, analysis, go_files, main_go)
        if (f.check, f.source_line, f.message) not in committed
        and not (f.check == SIM_SCALE and f.param in recalibrated)
        and not (f.check == counter_era.CHECK and counter_era.recalibrated(analysis, recalibrated))
    ]
    findings += _fidelity_belongs(ctx, summary)
    # Compile, vet and test results, as stage 2 recorded them for exactly these files (never a rerun of stage 2).
    checks = _go_checks(ctx, summary)
    findings += with_causes(checks.findings, summary.findings)  # a failing test names its cause and what to do
    if not (checks.build_ok and checks.vet_ok and checks.test_ok) and not checks.findings:
        findings.append(
            Finding(
                severity=Severity.CRITICAL,
                check="G1.compiles",
                file=main_go,
                message="go build/vet/test failed: " + checks.output.strip()[-300:],
            )
        )
    return _dedupe(findings)


def _capped_as_committed(src, analysis, go_files: dict[str, str], main_go: str):
    """The reviewer's hazards with a client-keyed map the plugin on the branch caps read as capped, as stage 2
    words it (``state_caps.capped_findings``): the cap is read from the committed plugin (its ``capState`` check),
    so a map it does not cap stays "grows without limit" (IMPORTANT), and one it caps is not listed twice."""
    from bot.golang.receiver_state import stateful_fields
    from bot.golang.state_caps import capped_findings, caps_of

    kept = tuple(sorted(stateful_fields(src, analysis)))
    caps = caps_of(analysis, kept)
    return capped_findings(analysis.findings, caps, go_files.get(main_go, ""), main_go.rsplit("/", 1)[-1], kept)


def stale_fidelity(ctx, summary: TranslationSummary) -> list[str]:
    """The plugin files on the branch that are not the bytes the differential check measured ([] when the
    measurement describes the branch, or nothing was measured). A measurement that names no files belongs
    to nothing the branch can show, so it counts as stale for every plugin file."""
    from bot.model import sha256_text

    f = summary.fidelity
    if f is None or not f.measured:
        return []
    if not f.files:
        return sorted(p for p in ctx.list(summary.package_dir) if p.endswith(".go") and not p.endswith("_test.go"))
    return sorted(p for p, sha in f.files.items() if sha256_text(ctx.read(p) or "") != sha)


def _fidelity_belongs(ctx, summary: TranslationSummary) -> list[Finding]:
    """The measured agreement describes the files it was measured on; say so when the branch holds others."""
    changed = stale_fidelity(ctx, summary)
    if not changed:
        return []
    return [
        Finding(
            severity=Severity.IMPORTANT,
            check="G1.fidelity-stale",
            file=changed[0],
            line=1,
            message=(
                f"{', '.join(changed)} changed after the differential check, so its agreement with the BLIS "
                "original does not describe the plugin on the branch"
            ),
            fix="rerun stage 2 (the check runs with the translation), or measure the edited plugin and record it",
        )
    ]


def notes(ctx) -> list[str]:
    """The differential check, for the person deciding the gate; its figure only when it measured the branch's
    plugin (else G1.fidelity-stale says what changed)."""
    text = ctx.read(ctx.paths.translation_json)
    if text is None:
        return []
    summary = TranslationSummary.model_validate_json(text)
    f = summary.fidelity
    if f is None:
        return []
    if not f.measured:
        return [f"Fidelity not measured: {f.reason}"]
    if stale_fidelity(ctx, summary):
        return ["Fidelity: not shown, the differential check measured other plugin files than the branch holds"]
    line = (
        f"Fidelity: the plugin decides like the BLIS original ({f.decision}) in {f.agreement:.1%} of "
        f"{f.states} sampled states (floor {f.floor_pct})" + fidelity_admit.clause(f)
    )
    if f.causes:
        line += "; differences from " + ", ".join(f"`{c.mapping}` ({c.states})" for c in f.causes[:4])
    if f.unattributed:
        line += f"; {f.unattributed} from {unexplained_words(f)}"
    elif f.held_constant:
        line += held_constant_clause(f)
    examples = [f"Example ({c.mapping}): {c.examples[0]}" for c in f.causes[:2] if c.examples]
    return [line + ".", *examples, *fidelity_classes.review_notes(f)]


def _go_checks(ctx, summary: TranslationSummary):
    """Stage 2's recorded Go checks when they belong to the committed plugin files, byte for byte; else the
    checks run here on the committed files (package and any committed tests) through the execution port."""
    import json

    from bot.golang.toolchain import ToolchainReport, run_checks
    from bot.model import sha256_text

    committed = {p: ctx.read(p) or "" for p in ctx.list(summary.package_dir) if p.endswith(".go")}
    text = ctx.read(ctx.paths.translation_checks)
    if text is not None:
        try:
            data = json.loads(text)
            checked = data.pop("checked_files")
            report = ToolchainReport.model_validate(data)
        except (ValueError, KeyError, TypeError):
            checked, report = None, None
        if report is not None and isinstance(checked, dict):
            same = all(checked.get(p) == sha256_text(c) for p, c in committed.items())
            sources = {p for p in committed if not p.endswith("_test.go")} == {
                p for p in checked if not p.endswith("_test.go")
            }
            if same and sources:
                return report
    return run_checks(
        committed,
        registration_import=summary.registration_import,
        registration_line=summary.registration_line,
        executor=ctx.executor,
    )


def _main_file(go_files: dict[str, str]) -> str | None:
    """The file that holds the plugin's plumbing (the Factory), where convention findings belong."""
    for path, code in sorted(go_files.items()):
        if re.search(r"^func \w*Factory\(", code, re.M):
            return path
    return next(iter(sorted(go_files)), None)


def _conventions(ctx, summary: TranslationSummary, main_go: str | None, go_files: dict[str, str]) -> list[Finding]:
    out: list[Finding] = []
    code = "\n".join(go_files[p] for p in sorted(go_files))

    def need(pattern: str, what: str, fix: str, sev: Severity = Severity.CRITICAL) -> None:
        if not re.search(pattern, code, re.M):
            out.append(
                Finding(severity=sev, check="G1.plugin-conventions", file=main_go, message=f"missing {what}", fix=fix)
            )

    if main_go is None:
        return [
            Finding(
                severity=Severity.CRITICAL,
                check="G1.plugin-conventions",
                file=summary.package_dir,
                message="no Go source in the plugin package",
            )
        ]
    need(
        rf'Type\s*=\s*"{re.escape(summary.plugin_type)}"',
        f'the Type constant "{summary.plugin_type}"',
        'declare const XxxType = "<kebab-name>"',
    )
    out += type_name(summary.kind, summary.plugin_type, main_go)
    need(
        r"func \w*Factory\(\s*name string,\s*\w+ \*json\.Decoder,\s*\w+ \w+\.Handle\)",
        "a Factory(name string, *json.Decoder, plugin.Handle)",
        "use the v0.10.0 factory signature",
    )
    need(
        r"(var|^\t)\s*_\s+\w+\.(Scorer|Admitter)\s*= ",
        "the compile-time interface assertion",
        "add var _ scheduling.Scorer = &X{}",
    )
    need(r"\) TypedName\(\) \w+\.TypedName", "TypedName()", "implement TypedName() plugin.TypedName")
    need(r"\) WithName\(", "WithName()", "implement WithName(name string)")
    if not re.search(r"\b(DisallowUnknownFields|Decode)\b", code):
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G1.plugin-conventions",
                file=main_go,
                message="the Factory never decodes its parameters",
            )
        )
    readme = f"{summary.package_dir}/README.md"
    if ctx.read(readme) is None:
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G1.plugin-conventions",
                file=readme,
                message="the plugin package has no README.md",
            )
        )
    runner = ctx.read(RUNNER_GO)
    # The plugin's own line: upstream registers other plugins at StabilityAlpha too (agent-identity, last).
    line = summary.registration_line.strip()
    if runner is not None and not (line and "StabilityAlpha" in line and line in runner):
        out.append(
            Finding(
                severity=Severity.CRITICAL,
                check="G1.registration",
                file=RUNNER_GO,
                message="the plugin is not registered at StabilityAlpha in registerInTreePlugins()",
            )
        )
    cfg_path = ctx.paths.epp_config(summary.plugin_type)
    cfg_text = ctx.read(cfg_path)
    if cfg_text is None:
        out.append(
            Finding(
                severity=Severity.CRITICAL,
                check="G1.epp-config",
                file=cfg_path,
                message="no EndpointPickerConfig for the plugin",
            )
        )
    else:
        try:
            cfg = load_yaml(cfg_text)
            types = {p.get("type") for p in cfg.get("plugins", [])}
            if cfg.get("kind") != "EndpointPickerConfig" or summary.plugin_type not in types:
                raise ValueError
        except Exception:
            out.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check="G1.epp-config",
                    file=cfg_path,
                    message=f"not an EndpointPickerConfig that lists the plugin type {summary.plugin_type}",
                )
            )
    return out


#: The suffix every plugin type of the kind's llm-d family ends in (v0.10.0: queue-scorer, prefix-cache-scorer, ...;
#: probabilistic-admitter, latency-slo-admitter). A routing or scheduling translation is a Scorer.
TYPE_SUFFIX = {PolicyKind.ROUTING: "-scorer", PolicyKind.SCHEDULING: "-scorer", PolicyKind.ADMISSION: "-admitter"}


def type_name(kind: PolicyKind, plugin_type: str, main_go: str | None) -> list[Finding]:
    """A plugin type named against its neighbours' convention: a maintainer asks for the rename in review, and
    after the merge the name is public config nobody can change. Said at gate 1, while a rename is only an edit
    of the request (from stage 1 again)."""
    suffix = TYPE_SUFFIX.get(kind)
    if suffix is None or plugin_type.endswith(suffix):
        return []
    what = "Scorer" if suffix == "-scorer" else "Admitter"
    stem = plugin_type.removesuffix("-scheduler").removesuffix("-shedder")
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check="G1.plugin-type-name",
            file=main_go,
            message=(
                f"the plugin type `{plugin_type}` is a {what}, but every {what.lower()} type llm-d ships ends in "
                f'`{suffix}` (and in llm-d "scheduler" names the whole scheduling layer); the name becomes '
                "public EndpointPickerConfig vocabulary when the PR merges"
            ),
            fix=(
                f"name it e.g. `{stem}{suffix}`: set the request's `plugin_name` (on GitHub the issue form's Plugin "
                "name; the promotion starts again from stage 1), or approve and keep the name"
            ),
        )
    ]


def _annotation_line(code: str, signal: str) -> int | None:
    """The adapter line that sets ``signal`` and says, in the comment on or above it, how BLIS's
    freshness differs."""
    assign = re.compile(rf"\b{re.escape(signal)}\s*(=|:)[^=]")
    lines = code.splitlines()
    for i, line in enumerate(lines, 1):
        stmt, _, comment = line.partition("//")
        if not assign.search(stmt):
            continue
        above = []
        k = i - 2
        while k >= 0 and lines[k].strip().startswith("//"):
            above.append(lines[k])
            k -= 1
        if re.search(r"(?i)BLIS assumes|fresh|Track B", comment + " ".join(above)):
            return i
    return None


def _first_use(go_files: dict[str, str], signal: str, default: str | None) -> tuple[str | None, int | None]:
    for path, code in sorted(go_files.items()):
        for i, line in enumerate(code.splitlines(), 1):
            if signal in line:
                return path, i
    return default, None


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in findings:
        key = (f.check, f.file, f.line, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


SIM_SCALE = "hazard.sim-scale-threshold"


def _recalibrated_params(ctx, summary: TranslationSummary, analysis) -> set[str]:
    """Simulator-scale parameters (not evolved lines: several can share one) the committed EndpointPickerConfig deploys at another value than
    BLIS's: a person re-calibrated them at gate 1 (`param NAME: VALUE`). Read from the artifact, not the author's word."""
    try:
        cfg = load_yaml(ctx.read(ctx.paths.epp_config(summary.plugin_type)) or "") or {}
        plugin = next(p for p in cfg.get("plugins", []) if p.get("type") == summary.plugin_type)
        deployed = plugin.get("parameters") or {}
    except (StopIteration, AttributeError, TypeError, ValueError):
        return set()
    return {
        th.param
        for th in analysis.thresholds
        if th.param
        and isinstance(value := deployed.get(th.param), int | float)
        and summary.thresholds.get(th.param) not in (None, float(value))
    }
