"""The translation report: every mapping decision, every finding, and the fidelity measured.

A person deciding gate 1 reads this: which signal comes from where and how fresh, which numbers
became parameters, which Map C gaps the policy touches, how often the plugin decides like the BLIS
original (and why it differs where it does), every finding anchored to a plugin file and line.
"""

from __future__ import annotations

from bot.dictionary import Dictionary
from bot.escape import md
from bot.golang import fidelity_classes
from bot.golang.analysis_types import Analysis
from bot.golang.fidelity_unexplained import constant_names, survivors_sentence
from bot.golang.generate import Generated
from bot.golang.gonames import id_places
from bot.golang.harness_world import HELD_CONSTANT
from bot.golang.plugin_docs import gap_concern
from bot.golang.plugin_summary import reference_sentence
from bot.golang.source import EvolvedSource
from bot.model import Fidelity, Finding, Severity, TranslationSummary, finding_ids
from bot.model.evidence import percent


def _deployed_values_sentence(f: Fidelity) -> str:
    """Whether the values set at gate 1 were measured and what they changed: an agreement figure identical to
    the evolved values' cannot say so by itself (a reviewer could not tell they were applied)."""
    n = f.deployed_values_changed
    if n is None:
        return ""
    if n == 0:
        return (
            f" The values set at gate 1 are in this figure and changed 0 of the {f.states} decisions the evolved "
            "values make: the terms they set almost never decide here."
        )
    return f" The values set at gate 1 are in this figure and changed {n} of the {f.states} decisions the evolved values make."


def fidelity_section(f: Fidelity | None) -> str:
    """The report section (and the gate 1 / PR summary's source) for the differential check."""
    out = ["## Fidelity: the plugin against the BLIS original", ""]
    if f is None:
        return "\n".join([*out, "Not measured for this kind of policy.", ""])
    if not f.measured:
        return "\n".join([*out, f"**Not measured**: {f.reason}", ""])
    admits = "admit" in (f.decision or "")
    queues = "ordering" in (f.decision or "")
    if admits:
        how_llmd_runs_it = "its adapter and the admission path's signals"
    elif queues:
        how_llmd_runs_it = (
            "its adapter and the queue lengths the EPP scrapes; its own scores, apart from the profile's other scorers"
        )
    else:
        how_llmd_runs_it = "its adapter, the EndpointPickerConfig's profile, the picker's ties"
    # the floor's reason (harness_build.floor_for): a scraped gauge is high-fidelity but staler than BLIS's snapshot
    signals_are = (
        "every signal high-fidelity and as fresh as BLIS's"
        if f.all_high_fidelity
        else "some signal below high fidelity or scraped"
    )
    out.append(
        f"On {f.states} sampled states (seed {f.seed}: simulator-scale and llm-d-scale loads, and states on every "
        f"threshold's boundary), the plugin as llm-d runs it ({how_llmd_runs_it}) decided like the BLIS original (**{f.decision}**) in **{f.agreement:.1%}** of them "
        f"(floor {f.floor_pct}{_floor_source(f)}, {signals_are}). "
        f"With every mapping below switched off, agreement is {f.agreement_all_off:.1%}."
        + reference_sentence(f)
        + _deployed_values_sentence(f)
    )
    out.append("")
    out.extend(_held_constant_lines(f))
    if f.causes:
        out.append(
            "| Cause (mapping switched off) | Disagreements it explains | Agreements it breaks | Agreement without it "
            "| Why the views differ |"
        )
        out.append("|---|---|---|---|---|")
        for c in f.causes:
            out.append(
                f"| `{c.mapping}` ({_cell(c.title)}) | {c.states} | {c.breaks} | {c.agreement_without:.1%} "
                f"| {_cell(c.why)} |"
            )
        out.append("")
        out.append(
            "Switching one mapping off restores the disagreements it explains and can break states that agreed "
            "(two differences that cancelled out), so agreement without it can be below agreement as deployed."
            + (
                f" {f.overlapping} disagreement(s) are explained by more than one mapping on its own and are counted "
                "for each."
                if f.overlapping
                else ""
            )
        )
        out.append("")
        out.append("Example states (each shown once, under the cause that explains most):")
        out.append("")
        for c in f.causes[:3]:
            for ex in c.examples[:2]:
                out.append(f"- `{c.mapping}`: {_cell(ex)}")
        out.append("")
    out.extend(fidelity_classes.report_lines(f, _cell))
    if f.tied:
        out.append(
            f"Ties: in {f.tied} state(s) BLIS or llm-d's picker (or both) chose at random among endpoints with "
            "the same top score. The counts above take each such state as a disagreement; the agreement figure "
            "takes it as the chance that both chose the same endpoint (a half, for two tied endpoints)."
        )
        out.append("")
    if f.unattributed:
        out.append(md(survivors_sentence(f)) + ".")
        out.append("")
    for fail in f.failures:
        if fail.side == "plugin":
            out.append(
                f"The plugin failed on {fail.states} state(s) where the BLIS original decided (counted as "
                f"disagreements; {md(fail.shapes)}), e.g. {md(fail.example)}: {md(fail.message)}."
            )
        else:  # the only states that truly cannot be compared
            out.append(
                f"The BLIS original itself failed on {fail.states} state(s) ({md(fail.shapes)}; the plugin on "
                f"{fail.plugin_too} of them too), e.g. {md(fail.example)}: {md(fail.message)}; with no BLIS "
                "decision to compare, they were left out."
            )
        out.append("")
    if f.notes:
        out.append("How the harness ran the BLIS original:")
        out.append("")
    for note in f.notes:
        out.append(f"- {md(note)}")
    if f.notes:
        out.append("")
    return "\n".join(out)


def _held_constant_lines(f: Fidelity) -> list[str]:
    """Which signals the program reads that no sampled state varies, by name and why: the figure says nothing about
    them, and without this a tie they cause reads as a mapping's fault or the score composition's."""
    if not f.held_constant:
        return []
    them = "it" if len(f.held_constant) == 1 else "them"
    out = [
        (
            f"**Not exercised**: the program reads {md(constant_names(f))}, which the harness holds at one value in "
            f"every sampled state of BLIS's view, so this figure does not test how the plugin reads {them}:"
        ),
        "",
    ]
    out += [f"- {md(f'`{n}`')}: {md(HELD_CONSTANT.get(n, 'not varied by the harness'))}" for n in f.held_constant]
    return [*out, ""]


def _cell(text: object) -> str:
    """One table cell of free text (a finding's message and fix, an example state, a note), escaped with ``md``.

    The text can hold the evolved program's own strings (a panic message, a vet argument) and the report is
    committed to the PR branch, where GitHub renders it: unescaped, a program could put a working link, an
    image, raw HTML or a hidden ``<!--`` into the gate-1 document. ``md`` also escapes ``|`` and joins lines,
    which is all a cell needed before; code spans the bot writes stay code spans.
    """
    if text is None or text == "":
        return "—"
    return md(str(text).strip())


def _parts(e) -> set[str]:
    """A signal and, for a method signal (EffectiveLoad), the signals it is computed from."""
    return {e.name, *e.expands_to}


def _producer_note(e, epp_plugins: list[str] | None) -> str:
    """Which side of an in-flight freshness cell this deployment is on ("synchronous with inflight-load-producer,
    scraped without it"): the deployed EndpointPickerConfig runs the producer or it does not."""
    from bot.bench.conditions import INFLIGHT_PRODUCER

    if epp_plugins is None or "InFlightRequests" not in _parts(e):
        return ""
    runs = "runs" if INFLIGHT_PRODUCER in epp_plugins else "does not run"
    return f" (the deployed EndpointPickerConfig {runs} {INFLIGHT_PRODUCER})"


def _decided_by(e, summary: TranslationSummary) -> str:
    """Where Track B decides a freshness gap: under the run condition that changes it in this deployment
    (``bot.bench.conditions``, the one source stage 3 folds the gap by), or nowhere in the plan. A signal the
    plugin holds constant has no freshness to vary: Track B reports it not testable."""
    from bot.bench.conditions import conditions_changing

    if e.name in summary.untranslatable:
        return " Track B: not testable as translated (the plugin holds it constant)."
    changing = conditions_changing(_parts(e), summary.epp_plugins)
    if changing:
        named = " and ".join(f"`{c}`" for c in changing)
        return f" Track B decides it under the {named} run condition, which changes it."
    return " No Track B run condition changes it, so the benchmark plan does not decide it (Track B says so)."


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
    tested: list[str],
    untested: list[str],
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
        w(
            f"EVOLVE block: lines {src.evolve_block[0]}–{src.evolve_block[1]}. BLIS era of the copy: {_era_words(an.era)}."
        )
    else:
        w(
            f"No EVOLVE-BLOCK markers: the whole host function is treated as evolved. BLIS era of the copy: {_era_words(an.era)}."
        )
    w("")
    w(
        f"Findings: **{counts[Severity.CRITICAL]} CRITICAL**, **{counts[Severity.IMPORTANT]} IMPORTANT**, "
        f"{counts[Severity.SUGGESTION]} SUGGESTION."
    )
    w("")
    if feedback:
        w("## Reviewer feedback addressed")
        w("")
        w(
            "Every change request at gate 1 so far, oldest first: their directives accumulate, and a later line "
            "for the same key wins (the last `scorers:`, the last value of each parameter)."
        )
        w("")
        for line in md(feedback.strip(), block=True).splitlines():
            w(f"> {line}")
        w("")
        if applied:
            for a in applied:  # every directive in force, from all the requests
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
        where = ", ".join(map(str, ls)) if ls else _read_by_plugin(an, name)
        alias = sorted(x for x in written_of.get(name, set()) if x != name)
        label = f"`{name}`" + (f" (as {', '.join('`' + a + '`' for a in alias)})" if alias else "")
        if e is None:
            w(f"| {label} | {where} | **none — not in the dictionary** | none | — | — | — |")
            continue
        src_text = (
            f"`{e.llmd.expr}` — {_cell(e.llmd.source)}"
            if e.llmd
            else f"**untranslatable** — fallback: {_cell(e.fallback)}"
        )
        llmd_fresh = e.freshness.llmd + _producer_note(e, summary.epp_plugins)
        if not ls and an.kind.value == "scheduling" and name == "QueueDepth":
            llmd_fresh += "; up to a scrape old, so requests placed since the last scrape are not in the count"
        gap = f"yes: {_cell(e.freshness.gap)}{_decided_by(e, summary)}" if e.freshness.gap else "no gap"
        w(
            f"| {label} | {where} | {src_text} | {e.fidelity} | {_cell(e.freshness.blis)} | {_cell(llmd_fresh)} | {gap} |"
        )
    w("")
    w("## Mapping decisions")
    w("")
    for topic, text in gen.decisions:
        w(f"- **{topic}**: {text}")
    w(
        "- **signal adapter**: `adapter.go` fills the BLIS-shaped values, one line per signal, each with a comment an "
        "llm-d reader can check in the repository: its llm-d source and, where Map B has a freshness gap, "
        "`Freshness: …` (the table above holds the BLIS side and the Track B hypothesis that checks the gap)."
    )
    w(
        "- **evolved logic**: `evolved.go` carries the host"
        + (f" and {len(an.helpers)} helper(s) it calls" if an.helpers else "")
        + " verbatim except: "
        + ", ".join(_carry_edits(src, an))
        + ". `line_map` in translation.json maps every line back."
    )
    w("")
    w("## Thresholds → parameters")
    w("")
    kept = [t for t in an.thresholds if not t.param]
    if gen.params or any(t.constant for t in kept):
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
        for t in kept:
            label = f"(constant `{t.constant}`)" if t.constant else "(kept as literal)"
            w(
                f"| {label} | `{t.literal}` | {t.role} | {', '.join(map(str, t.lines))} | {', '.join(t.signals)} | {_cell(t.reason)} |"
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
                f"- **`{gid}`** ({g.risk} risk): {gap_concern(d, gid, summary.kind, gen.stateful)} Track B: "
                f"{g.track_b.worded_for(summary.kind, summary.epp_plugins).filled(summary.plugin_type).statement}"
            )
    else:
        w("None.")
    w("")
    w(fidelity_section(summary.fidelity))
    w("## Findings")
    w("")
    if findings:
        w("| Severity | Id (check#digest) | Evolved line | Plugin file:line | Finding | Fix |")
        w("|---|---|---|---|---|---|")
        places = id_places(summary.package_dir, summary.plugin_type)  # ids whatever the plugin type
        for f, ref in zip(findings, finding_ids(findings, places), strict=True):  # the ids gate 1's review shows
            where = f"{f.file}:{f.line}" if f.file and f.line else "—"
            w(
                f"| {f.severity.value} | `{ref}` | {f.source_line or '—'} | {_cell(where)} | {_cell(f.message)} | {_cell(f.fix)} |"
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
        "Factory (defaults, strict decoder, every bad parameter), evolved defaults, "
        + {
            "admission": "signal adapter",
            "scheduling": "the Score contract, how the score follows the waiting count in llm-d terms (endpoints "
            "with 0, 5 and 40 waiting per priority and prompt length where the order reads them: a busier endpoint "
            "never scores higher, a higher priority never sees one as worse, and past the maxPseudoQueue cap a longer "
            "queue scores like the cap; each stated where it held on the compiled plugin), the cost per "
            "distinct waiting count",
        }.get(an.kind.value, "signal adapter, the Score contract and behaviour in llm-d terms")
        + ". Every evolved parameter is below once: exercised by the test named (a threshold case compares the "
        "evolved value with the value moved to a readable number across the input; a behaviour row fails when the "
        "parameter moves), each found by running the compiled plugin, or not exercised and why."
    )
    w("")
    if tested:
        w("Exercised by a generated test:")
        w("")
        for line in tested:
            w(f"- {line}")
        w("")
    if untested:
        w("Not exercised by a generated test (the reviewer should check these by reading the code):")
        w("")
        for g in untested:
            w(f"- {g}")
        w("")
    return "\n".join(out)


def _read_by_plugin(an: Analysis, name: str) -> str:
    """Where the plugin reads a signal the evolved code does not: a scheduling plugin's queue length, or a
    routing plugin's baseline scorer term."""
    if an.kind.value == "scheduling" and name == "QueueDepth":
        return "the plugin: each endpoint's waiting count, the length of the queue it models"
    return "baseline scorer term"


def _carry_edits(src: EvolvedSource, an: Analysis) -> list[str]:
    """The edits ``evolved.go`` carries the evolved code with: only those this program needed."""
    text = src.go_bytes.decode("utf-8", "replace")
    edits = ["BLIS types → local types"]
    if "PendingRequests" in text:
        edits.append("`PendingRequests` → `InFlightRequests`")
    if "InputTokens" in an.request_fields:
        edits.append("`len(req.InputTokens)` → the adapter's token count")
    edits.append("evolved numbers → `Parameters` fields")
    if any(th.constant for th in an.thresholds):
        edits.append("a number that cannot act in llm-d → an unexported constant, with the reason")
    return edits


def _scale_note(th, d: Dictionary) -> str:
    scales = []
    for s in th.signals:
        e = d.signal(s)
        if e is not None and e.blis_scale:
            scales.append(f"{s}: {e.blis_scale}")
    return "; ".join(scales)


def _floor_source(f: Fidelity) -> str:
    """Where a floor other than the bot's comes from: the request's `fidelity_floor`."""
    if f.floor_default is None:
        return ""
    return f", set for this promotion (`fidelity_floor`); the bot's default is {percent(f.floor_default)}"


def _era_words(era: str) -> str:
    """The era as the analysis knows it: an older one from a mark in the file, head only by default."""
    if era != "head":
        return era
    return "head (assumed: nothing in the file marks an older era)"
