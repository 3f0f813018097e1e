"""The fork's ``docs/promotion/translation-dictionary.md``: the dictionary rendered for people.

Apart from the loader (``bot.dictionary``) because a reviewer reads this text and the engine never does: the same
dictionary always renders the same text, so the document on the branch changes only when the dictionary does.
"""

from __future__ import annotations

from bot.dictionary import EXPR_VARS, SCOPE_ORDER, Dictionary


def _cell(text: object) -> str:
    if text is None or text == "":
        return "—"
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def _code(text: str | None) -> str:
    if not text:
        return "—"
    return "`" + text.replace("|", "\\|").replace("\n", " ") + "`"


def render_markdown(d: Dictionary) -> str:
    """``docs/promotion/translation-dictionary.md``: the same text for the same dictionary, always."""
    out: list[str] = []
    w = out.append
    w("# BLIS → llm-d translation dictionary")
    w("")
    w(
        f"Version **{d.version}**. Generated from `dictionary/*.yaml` by the promotion bot; edit the YAML, not this file."
    )
    w("")
    w("## Version pins")
    w("")
    w("| Component | Pin |")
    w("|---|---|")
    for k in sorted(d.pins):
        w(f"| {_cell(k)} | {_cell(d.pins[k])} |")
    w("")
    w("## What changed since the design doc")
    w("")
    for note in d.seed_corrections:
        w(f"- {note.strip()}")
    for i in sorted(d.interfaces, key=lambda i: i.kind.value):
        if i.why_changed:
            w(
                f"- **{i.kind.value}**: the design doc said {i.seed_said.strip()}; now `{i.llmd_extension_point}`. {i.why_changed.strip()}"
            )
    for s in sorted(d.signals, key=lambda s: (s.scope, s.name)):
        if s.removed:
            w(f"- `{s.name}` (was `{'`, `'.join(s.aliases)}`): {s.removed.strip()}")
    w("")
    w("## Map A — interfaces")
    w("")
    w(
        "| Kind | BLIS interface | BLIS method | llm-d extension point | llm-d method | Target package | Design doc said |"
    )
    w("|---|---|---|---|---|---|---|")
    for i in sorted(d.interfaces, key=lambda i: i.kind.value):
        w(
            f"| {i.kind.value} | `{i.blis_interface}` | {_code(i.blis_method)} | `{i.llmd_extension_point}` | "
            f"{_code(i.llmd_interface)} | `{i.target_dir}` | {_cell(i.seed_said)} |"
        )
    w("")
    w("Expression variables in Map B: " + "; ".join(f"`{k}` = {v}" for k, v in sorted(EXPR_VARS.items())) + ".")
    w("")
    w("## Map B — signals")
    w("")
    w(
        "| Signal | Scope | BLIS type | Aliases | llm-d expression | llm-d source | Fidelity | Freshness (BLIS / llm-d) | Freshness gap | Map C | Fallback / notes |"
    )
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in sorted(d.signals, key=lambda s: (SCOPE_ORDER[s.scope], s.name)):
        flags = []
        if s.identifier_only:
            flags.append("identifier, not a signal")
        if s.oracle:
            flags.append("ORACLE (INV-9): must never be read")
        if s.expands_to:
            flags.append("expands to " + ", ".join(s.expands_to))
        if s.removed:
            flags.append("renamed: " + s.removed)
        notes = "; ".join([*flags, *(x for x in (s.fallback, s.notes) if x)])
        w(
            f"| `{s.name}` | {s.scope} | `{s.blis_type}` | {_cell(', '.join(s.aliases))} | "
            f"{_code(s.llmd.expr if s.llmd else None)} | {_cell(s.llmd.source if s.llmd else 'untranslatable')} | "
            f"{s.fidelity} | {_cell(s.freshness.blis)} / {_cell(s.freshness.llmd)} | {_cell(s.freshness.gap)} | "
            f"{_cell(', '.join(s.gaps))} | {_cell(notes)} |"
        )
    w("")
    w("## Map C — gaps (llm-d concerns BLIS does not model)")
    w("")
    w("| Gap | Concern | Why BLIS can't model it | llm-d today | Risk | Kinds | Signals | In design doc |")
    w("|---|---|---|---|---|---|---|---|")
    for g in sorted(d.gaps, key=lambda g: g.id):
        w(
            f"| `{g.id}` | {_cell(g.concern)} | {_cell(g.why_blis_cannot_model)} | {_cell(g.llmd_mechanism)} | {g.risk} | "
            f"{', '.join(k.value for k in g.touched_by_kinds)} | {_cell(', '.join(g.touched_by_signals))} | {'yes' if g.in_seed else 'new'} |"
        )
    w("")
    w("### Track B hypothesis templates")
    w("")
    for g in sorted(d.gaps, key=lambda g: g.id):
        t = g.track_b
        w(
            f"- **`{g.id}`** ({t.family.value}, {t.vvuq.value}, {t.type.value}; `{t.metric}` {t.direction}; {t.workloads.strip()}): "
            f"{t.statement.strip()} {t.diagnostic.strip()}"
        )
        for plugin, pw in t.by_profile.items():  # what a deployment running that plugin reads instead
            w(
                f"  - where the deployed EndpointPickerConfig runs `{plugin}`: {pw.statement.strip()} {pw.diagnostic.strip()}"
            )
    w("")
    return "\n".join(out)
