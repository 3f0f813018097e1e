"""Stage 2: one evolved BLIS policy in, one llm-d-router plugin package and its translation report out.

``translate`` ties the analysis (``analyze``) and the generator (``generate``)
together and produces what gate 1 reviews: the files for the promotion branch,
the registration and EndpointPickerConfig, a report that justifies every mapping
decision (every signal with its llm-d source, fidelity and freshness; every
threshold turned parameter; every finding; every Map C gap touched), and the
``TranslationSummary`` stage 3 builds hypotheses from. It is deterministic: the
same source, dictionary, plugin type and feedback give byte-identical output.

Reviewer feedback from a "request changes" decision is recorded in the report
under "Reviewer feedback addressed". A few directives steer the generator (kept
deliberately small and explicit, see ``feedback_options``); anything else is
recorded for the author agent and the reviewer, never silently ignored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from bot.dictionary import Dictionary
from bot.escape import md
from bot.golang.analyze import Analysis
from bot.golang.generate import BASELINE_SCORERS, Generated, generate, go_float
from bot.golang.safety import refuse_unsafe
from bot.golang.source import EvolvedSource
from bot.model import Finding, RequestError, Severity, TranslationSummary

REPORT_NAME = "translation-report.md"


class TranslationError(RequestError):
    """The translation cannot be produced as asked (e.g. a malformed plugin type)."""


@dataclass
class Translation:
    summary: TranslationSummary
    files: dict[str, str]
    registration_import: str
    registration_line: str
    epp_config: str
    report_markdown: str
    findings: list[Finding]
    line_map: dict[str, dict[int, int]]
    tests: list[str] = field(default_factory=list)
    feedback_applied: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        """translation.json: the summary plus what reviewers and later stages need to locate things."""
        payload = {
            "summary": json.loads(self.summary.model_dump_json()),
            "registration": {"import": self.registration_import, "line": self.registration_line},
            "files": sorted(self.files),
            "line_map": {f: {str(k): v for k, v in sorted(m.items())} for f, m in sorted(self.line_map.items())},
            "tests": self.tests,
        }
        return json.dumps(payload, indent=2, sort_keys=True) + "\n"


def feedback_options(feedback: str | None) -> tuple[dict, list[str]]:
    """Directives the generator understands in reviewer feedback, and what was applied (for the report).

    Understood: ``scorers: name:weight, name:weight`` (the routing_policy.yaml the program was
    evolved with, e.g. ``scorers: prefix-affinity:1, load-balance:1``).
    """
    opts: dict = {}
    applied: list[str] = []
    if not feedback:
        return opts, applied
    m = re.search(r"scorers?\s*[:=]\s*((?:[a-z][a-z-]*\s*:\s*\d+(?:\.\d+)?\s*,?\s*)+)", feedback)
    if m:
        pairs = re.findall(r"([a-z][a-z-]*)\s*:\s*(\d+(?:\.\d+)?)", m.group(1))
        bad = [n for n, _ in pairs if n not in BASELINE_SCORERS]
        if bad:
            raise TranslationError(
                f"feedback names unknown scorer(s) {', '.join(bad)}; use the BLIS names {', '.join(BASELINE_SCORERS)}"
            )
        opts["scorers"] = [(n, float(w)) for n, w in pairs]
        applied.append("baseline scorers set to " + ", ".join(f"{n}:{go_float(float(w))}" for n, w in pairs))
    return opts, applied


def translate(
    src: EvolvedSource, analysis: Analysis, dictionary: Dictionary, *, plugin_type: str, feedback: str | None = None
) -> Translation:
    if not re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", plugin_type or ""):
        raise TranslationError(f"plugin type {plugin_type!r} must be kebab-case (e.g. evolved-adaptive-scorer)")
    # Defence in depth: callers refuse unsafe programs first; nothing below may touch one.
    safety = refuse_unsafe(src)
    options, applied = feedback_options(feedback)
    source_name = PurePosixPath(src.path.replace("\\", "/")).name
    gen = generate(src, analysis, dictionary, plugin_type, source_name=source_name, options=options)
    findings = _anchor(safety + analysis.findings + gen.findings, gen)
    findings.sort(key=Finding.sort_key)
    summary = _summary(analysis, dictionary, gen, plugin_type, findings)
    report = render_report(src, analysis, dictionary, gen, summary, findings, source_name, feedback, applied)
    files = dict(gen.files)
    return Translation(
        summary=summary,
        files=files,
        registration_import=gen.registration_import,
        registration_line=gen.registration_line,
        epp_config=gen.epp_config,
        report_markdown=report,
        findings=findings,
        line_map=gen.line_map,
        tests=list(gen.tests),
        feedback_applied=applied,
    )


def _anchor(findings: list[Finding], gen: Generated) -> list[Finding]:
    """Point findings with an evolved line at the generated line carrying it (evolved.go first)."""
    inverse: dict[int, tuple[str, int]] = {}
    for path in sorted(gen.line_map, key=lambda p: (not p.endswith("evolved.go"), p)):
        for gline, sline in sorted(gen.line_map[path].items()):
            inverse.setdefault(sline, (path, gline))
    out = []
    for f in findings:
        if f.file is None and f.source_line is not None and f.source_line in inverse:
            path, gline = inverse[f.source_line]
            f = f.model_copy(update={"file": path, "line": gline})
        out.append(f)
    return out


def _summary(
    an: Analysis, d: Dictionary, gen: Generated, plugin_type: str, findings: list[Finding]
) -> TranslationSummary:
    names = set(an.signal_names) | set(gen.baseline_signals)
    signals = sorted(names)
    freshness = sorted(s for s in signals if (e := d.signal(s)) is not None and e.freshness.gap)
    untranslatable = sorted(s for s in signals if (e := d.signal(s)) is None or e.llmd is None)
    thresholds = {p.name: float(p.threshold.value) for p in gen.params if p.threshold is not None}
    return TranslationSummary(
        kind=an.kind,
        plugin_type=plugin_type,
        package_dir=gen.package_dir,
        signals=signals,
        freshness_gaps=freshness,
        touched_gaps=d.touched_gaps(an.kind, [s for s in signals if d.signal(s) is not None]),
        thresholds=thresholds,
        untranslatable=untranslatable,
        findings=findings,
        registration_import=gen.registration_import,
        registration_line=gen.registration_line,
    )


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def _cell(text: object) -> str:
    if text is None or text == "":
        return "—"
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def render_report(
    src: EvolvedSource,
    an: Analysis,
    d: Dictionary,
    gen: Generated,
    summary: TranslationSummary,
    findings: list[Finding],
    source_name: str,
    feedback: str | None,
    applied: list[str],
) -> str:
    out: list[str] = []
    w = out.append
    iface = d.interface(an.kind)
    counts = {s: sum(1 for f in findings if f.severity == s) for s in Severity}
    w(f"# Translation report: `{summary.plugin_type}`")
    w("")
    w(
        f"Evolved program `{md(source_name)}` ({src.form}), host `{an.host}` → llm-d-router {d.pins.get('llm_d_router', 'v0.10.0')} "
        f"`{iface.llmd_extension_point}` in `{gen.package_dir}`. Translation dictionary {d.version}."
    )
    if src.evolve_block:
        w(f"EVOLVE block: lines {src.evolve_block[0]}–{src.evolve_block[1]}. BLIS era of the copy: {an.era}.")
    else:
        w(f"No EVOLVE-BLOCK markers: the whole host function is treated as evolved. BLIS era of the copy: {an.era}.")
    w("")
    w(
        f"Findings: **{counts[Severity.CRITICAL]} CRITICAL**, **{counts[Severity.IMPORTANT]} IMPORTANT**, "
        f"{counts[Severity.SUGGESTION]} SUGGESTION."
    )
    w("")
    if feedback:
        w("## Reviewer feedback addressed")
        w("")
        for line in md(feedback.strip(), block=True).splitlines():
            w(f"> {line}")
        w("")
        if applied:
            for a in applied:
                w(f"- Applied: {a}.")
        else:
            w("- Recorded; no generator directive recognised (the author agent and the gate-1 reviewer act on it).")
        w("")
    w("## Signals")
    w("")
    w("Every signal the evolved logic reads, after alias resolution and method expansion, with its llm-d source.")
    w("")
    w(
        "| Signal | Read at (evolved lines) | llm-d source | Fidelity | Freshness: BLIS | Freshness: llm-d | Gap annotated |"
    )
    w("|---|---|---|---|---|---|---|")
    lines_of: dict[str, list[int]] = {}
    written_of: dict[str, set[str]] = {}
    for u in an.signals:
        lines_of.setdefault(u.name, []).append(u.line)
        written_of.setdefault(u.name, set()).add(u.written)
    for name in summary.signals:
        e = d.signal(name)
        ls = sorted(set(lines_of.get(name, [])))
        where = ", ".join(map(str, ls)) if ls else "baseline scorer term"
        alias = sorted(x for x in written_of.get(name, set()) if x != name)
        label = f"`{name}`" + (f" (as {', '.join('`' + a + '`' for a in alias)})" if alias else "")
        if e is None:
            w(f"| {label} | {where} | **none — not in the dictionary** | none | — | — | — |")
            continue
        src_text = f"`{e.llmd.expr}` — {e.llmd.source}" if e.llmd else f"**untranslatable** — fallback: {e.fallback}"
        w(
            f"| {label} | {where} | {_cell(src_text)} | {e.fidelity} | {_cell(e.freshness.blis)} | {_cell(e.freshness.llmd)} | "
            f"{'yes: ' + _cell(e.freshness.gap) if e.freshness.gap else 'no gap'} |"
        )
    w("")
    w("## Mapping decisions")
    w("")
    for topic, text in gen.decisions:
        w(f"- **{topic}**: {text}")
    w(
        "- **signal adapter**: `adapter.go` fills the BLIS-shaped values, one line per signal, each with its Map B source, "
        "fidelity and (where Map B has a freshness gap) `// BLIS assumes …; llm-d … — verify via Track B hypothesis <gap>`."
    )
    w(
        "- **evolved logic**: `evolved.go` carries the host"
        + (f" and {len(an.helpers)} helper(s) it calls" if an.helpers else "")
        + " verbatim except: BLIS types → local types, `PendingRequests` → `InFlightRequests`, `len(req.InputTokens)` → "
        "the adapter's token count, and evolved numbers → `Parameters` fields. `line_map` in translation.json maps every line back."
    )
    w("")
    w("## Thresholds → parameters")
    w("")
    if gen.params:
        w("| Parameter | Evolved value | Role | Evolved lines | Signals | Note |")
        w("|---|---|---|---|---|---|")
        for p in gen.params:
            th = p.threshold
            if th is None:
                w(f"| `{p.name}` | `{p.default}` | plugin | — | — | {_cell(p.doc)} |")
                continue
            note = _scale_note(th, d)
            w(
                f"| `{p.name}` | `{th.literal}` | {th.role} | {', '.join(map(str, th.lines))} | {', '.join(th.signals)} | {_cell(note)} |"
            )
        kept = [t for t in an.thresholds if not t.param]
        for t in kept:
            w(
                f"| (kept as literal) | `{t.literal}` | {t.role} | {', '.join(map(str, t.lines))} | {', '.join(t.signals)} | {_cell(t.reason)} |"
            )
    else:
        w("No numeric literal is compared with or combined with a signal.")
    w("")
    w("## Untranslatable signals")
    w("")
    if summary.untranslatable:
        for name in summary.untranslatable:
            e = d.signal(name)
            if e is None:
                w(
                    f"- `{name}`: no dictionary entry, so no justified fallback (CRITICAL). The adapter sets the zero value only so the package compiles."
                )
            else:
                w(f"- `{name}`: {e.fallback}")
    else:
        w("None: every signal has an llm-d source.")
    w("")
    w("## Map C gaps touched")
    w("")
    if summary.touched_gaps:
        for gid in summary.touched_gaps:
            g = d.gap(gid)
            w(
                f"- **`{gid}`** ({g.risk} risk): {g.concern} Track B: {g.track_b.statement.replace('{plugin}', summary.plugin_type)}"
            )
    else:
        w("None.")
    w("")
    w("## Findings")
    w("")
    if findings:
        w("| Severity | Check | Evolved line | Generated | Finding | Fix |")
        w("|---|---|---|---|---|---|")
        for f in findings:
            where = f"{f.file}:{f.line}" if f.file and f.line else "—"
            w(
                f"| {f.severity.value} | `{f.check}` | {f.source_line or '—'} | {_cell(where)} | {_cell(f.message)} | {_cell(f.fix)} |"
            )
    else:
        w("None.")
    w("")
    w("## Generated files")
    w("")
    for path in sorted(gen.files):
        w(f"- `{path}`")
    w("")
    w("Registration in `cmd/epp/runner/runner.go`, `registerInTreePlugins()`:")
    w("")
    w("```go")
    w(f"import {gen.registration_import}")
    w("")
    w(gen.registration_line)
    w("```")
    w("")
    w(f"EndpointPickerConfig: `{gen.config_path}` (run the EPP with `--allow-experimental-plugins`).")
    w("")
    w("## Generated tests")
    w("")
    w(
        "Factory (defaults, strict decoder, every bad parameter), evolved defaults, signal adapter, the "
        + ("Score contract" if an.kind.value != "admission" else "Admit contract and rejection path")
        + ", and these threshold boundary cases (evolved value vs. the value moved just past the input):"
    )
    w("")
    if gen.tests:
        for t in gen.tests:
            w(f"- {t}")
    else:
        w("- none: no parameter could be exercised")
    w("")
    gaps = []
    for p in gen.params:
        th = p.threshold
        if th is None:
            continue
        mine = [t for t in gen.tests if t.startswith(f"{p.name}=")]
        if any(o.role == "threshold" for o in th.occurrences):
            sides = [
                s
                for s, key in (("past", " is past it"), ("not past", " is not past it"))
                if not any(key in t for t in mine)
            ]
            if sides:
                gaps.append(
                    f"`{p.name}`: no input found on the {' and '.join(sides)} side that the evolved logic lets "
                    "the threshold decide (the other branches mask it, or it has no observable effect in the plugin)"
                )
        elif not mine:
            gaps.append(f"`{p.name}` ({th.role}): no input found where changing it changes the outcome")
    if gaps:
        w("Not exercised by a generated test (the reviewer should check these by reading the code):")
        w("")
        for g in gaps:
            w(f"- {g}")
        w("")
    return "\n".join(out)


def _scale_note(th, d: Dictionary) -> str:
    scales = []
    for s in th.signals:
        e = d.signal(s)
        if e is not None and e.blis_scale:
            scales.append(f"{s}: {e.blis_scale}")
    return "; ".join(scales)
