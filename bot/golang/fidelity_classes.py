"""An admitter's fidelity by SLO class: which classes differ, whether the program names them, what the mix sends.

The plugin reads a request's class from llm-d's integer priority (the dictionary's ``SLOClass``: above 0
critical, 0 standard, below 0 sheddable), so BLIS's batch and background arrive as sheddable and its empty class
as standard, and no plugin parameter changes that. When that mapping explains an admitter's disagreements,
whether they matter depends on the classes the traffic carries: the plan's priority mix
(``bot.bench.priority_plan``) sends critical at priority 100, normal at 0 and batch at -10, which the plugin reads
as critical, standard and sheddable. This module marks each class of the split (``differential.by_class``) with
that, and words it for the translation report, the gate-1 review and the below-the-floor finding's fix, so a
person can tell a gap in classes their traffic carries from one in classes it never sends. Where the program uses
the class as a value, not only compares it (a map key such as ``req.TenantID + "/" + req.SLOClass``, a stored
class: ``class_uses``), llm-d's three classes share the entry BLIS's six keep apart, and the fix says so. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.bench.priority_plan import DEFAULT_CLASSES, TrafficClass
from bot.golang.analysis_types import Analysis
from bot.golang.harness_world import ROUND_TRIP
from bot.model import Fidelity, FidelityClass

#: The mapping (``harness_world.MAPPINGS``) that turns BLIS's six classes into llm-d's three.
CLASS_MAPPING = "slo-class-mapping"
PRIORITY_RULE = "above 0 → `critical`, 0 → `standard`, below 0 → `sheddable`"
#: How a person accepts a gap below the floor, and where a lower floor is set: what a fix offers when no mapping
#: or parameter can close it (``bot.model.PromotionRequest.fidelity_floor``, ``bot.github.config``).
APPROVE_WITH_REASON = (
    "approve with the reason on record (`/approve REMARK` on the issue, `promote approve 1 --reason TEXT` locally)"
)
FLOOR_SETTING = (
    "set `fidelity_floor` in the repository's configuration (`.github/promotion-bot.yml`; the request file in a "
    "local run)"
)
DELIVERED = "`batch` and `background` as `sheddable`, the empty class as `standard`"


def class_of_priority(priority: int) -> str:
    """The class the plugin's adapter reads from llm-d's priority (the dictionary's SLOClass expression)."""
    if priority > 0:
        return "critical"
    return "standard" if priority == 0 else "sheddable"


def label(name: str) -> str:
    """A class as the texts name it: ``batch`` in a code span, the empty class in words."""
    return f"`{name}`" if name else "the empty class"


def annotate(
    classes: Sequence[FidelityClass], named: set[str], mix: Sequence[TrafficClass] = DEFAULT_CLASSES
) -> list[FidelityClass]:
    """Each class with the class the plugin reads it as, whether the program names it, and the mix's classes
    the plugin reads as it."""
    return [
        c.model_copy(
            update={
                "read_as": ROUND_TRIP.get(c.name, c.name),
                "named": c.name in named,
                "mix": [f"{m.name} ({m.priority})" for m in mix if class_of_priority(m.priority) == c.name],
            }
        )
        for c in classes
    ]


def mix_words(mix: Sequence[TrafficClass] = DEFAULT_CLASSES) -> str:
    """``critical (priority 100) → `critical`, ...``: what the plan's priority mix sends and the plugin reads."""
    return ", ".join(f"{m.name} (priority {m.priority}) → `{class_of_priority(m.priority)}`" for m in mix)


def _received(mix: Sequence[TrafficClass] = DEFAULT_CLASSES) -> set[str]:
    return {class_of_priority(m.priority) for m in mix}


def _counts(classes: Sequence[FidelityClass]) -> str:
    return ", ".join(f"{label(c.name)} {c.disagreements}" for c in classes if c.disagreements)


def mix_sentence(f: Fidelity, mix: Sequence[TrafficClass] = DEFAULT_CLASSES) -> str:
    """Whether the disagreements fall in classes the plan's priority mix makes the plugin see, and what becomes
    of a mix class named like a BLIS class it does not arrive as (the mix's batch is read as sheddable)."""
    seen = _received(mix)
    sent = [c for c in f.classes if c.name in seen]
    other = [c for c in f.classes if c.name not in seen and c.disagreements]
    out = (
        f"The plan's priority mix sends {mix_words(mix)}; the sampled states of those classes disagree in "
        f"{sum(c.disagreements for c in sent)} of {sum(c.states for c in sent)}."
    )
    if other:
        out += (
            f" {sum(c.disagreements for c in other)} of the {sum(c.disagreements for c in f.classes)} disagreements "
            f"are in classes the plugin never receives ({_counts(other)}): a request meant as one arrives as the class "
            "its priority maps to and is decided as the program decides that class."
        )
    renamed = [m for m in mix if m.name in ROUND_TRIP and class_of_priority(m.priority) != m.name]
    for m in renamed:
        row = next((c for c in f.classes if c.name == m.name), None)
        shown = f" (the {label(m.name)} row shows how often that changes the decision)" if row else ""
        out += (
            f" The mix's {m.name} (priority {m.priority}) reaches the plugin as `{class_of_priority(m.priority)}`, "
            f"so it is decided as `{class_of_priority(m.priority)}`, not as BLIS {label(m.name)}{shown}."
        )
    return out


def report_lines(f: Fidelity, cell) -> list[str]:
    """The translation report's per-class table, what the mix sends, and example states of every class that
    disagrees (``cell`` escapes a table cell)."""
    if not f.classes:
        return []
    out = [
        (
            f"By the request's BLIS SLO class (the plugin reads the class from llm-d's priority: {PRIORITY_RULE}; "
            "no parameter changes that):"
        ),
        "",
        (
            "| BLIS class | States | Disagreements | BLIS admits, llm-d rejects | llm-d admits, BLIS rejects "
            "| The plugin reads it as | Named in the program | Priority-mix classes read as it |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in f.classes:
        failed = f" ({c.plugin_failed} plugin failures)" if c.plugin_failed else ""
        named = "—" if c.named is None else "yes" if c.named else "**no**"
        out.append(
            f"| {label(c.name)} | {c.states} | {c.disagreements}{failed} | {c.blis_admits} | {c.llmd_admits} "
            f"| {label(c.read_as) if c.read_as else '—'} | {named} "
            f"| {cell(', '.join(c.mix)) if c.mix else 'none'} |"
        )
    out.append("")
    never = [label(c.name) for c in f.classes if c.named is False]
    names = " or ".join([", ".join(never[:-1]), never[-1]] if len(never) > 1 else never)
    out.append(mix_sentence(f) + (f" The program never compares the class with {names}." if never else ""))
    out.append("")
    disagreeing = [c for c in f.classes if c.disagreements and c.examples]
    if disagreeing:
        out.append("Example states of every class that disagrees:")
        out.append("")
        for c in disagreeing:
            out.extend(f"- {label(c.name)}: {cell(ex)}" for ex in c.examples)
        out.append("")
    return out


def class_uses(an: Analysis | None) -> list[str]:
    """Where the program uses the class as a value, not only compares it with a name: each index keyed by it that
    is read somewhere (with all its lines: a count only written, never looked up, decides nothing) and each string
    receiver field it is stored in. There BLIS keeps its six classes apart and llm-d's three share: a bucket, a
    count, a table entry."""
    if an is None:
        return []
    lines: dict[str, list[int]] = {}
    for line, code, _ in sorted(set(an.slo_keys)):
        lines.setdefault(code, []).append(line)
    read = {code for _, code, written in an.slo_keys if not written}
    out = [
        f"`{code}`, line{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}"
        for code, at in lines.items()
        if code in read
    ]
    stored = [f for f, signals in sorted(an.field_signals.items()) if "SLOClass" in signals]
    return out + [f"the receiver field `{f}`" for f in stored if an.receiver_fields.get(f) == "string"]


def uses_clause(uses: list[str]) -> str:
    """``; the program uses the SLO class as a key, not only in comparisons (...)`` for the finding's message."""
    if not uses:
        return ""
    keyed, stored = any(not u.startswith("the receiver") for u in uses), any(u.startswith("the receiver") for u in uses)
    how = " and ".join(w for w, on in (("a key", keyed), ("a stored value", stored)) if on)
    return (
        f"; the program uses the SLO class as {how}, not only in comparisons ({'; '.join(uses)}), so classes llm-d "
        "cannot tell apart share what BLIS keeps apart"
    )


def shared_entries() -> str:
    """Which BLIS classes llm-d folds into one (``ROUND_TRIP``), as one clause."""
    groups = {t: [c for c in ROUND_TRIP if ROUND_TRIP[c] == t] for t in dict.fromkeys(ROUND_TRIP.values())}
    parts = []
    for target, members in sorted(groups.items(), key=lambda g: -len(g[1])):
        others = [label(c) for c in members if c != target]
        if len(others) == 1:
            parts.append(f"{others[0]} shares {label(target)}'s")
        elif others:
            named = [label(target), *others]
            parts.append(
                f"BLIS {', '.join(named[:-1])} and {named[-1]} requests share one entry (the class {label(target)})"
            )
    return " and ".join(parts)


def review_notes(f: Fidelity) -> list[str]:
    """The gate-1 review's lines: the split in one line, what the mix sends, one example per class that disagrees."""
    if not f.classes:
        return []
    rows = []
    for c in f.classes:
        row = f"{label(c.name)} {c.states}, {c.disagreements}"
        if c.disagreements:
            row += f" ({c.blis_admits} + {c.llmd_admits}{f' + {c.plugin_failed} failed' if c.plugin_failed else ''})"
        if c.read_as and c.read_as != c.name:
            row += f", read as `{c.read_as}`"
        if c.named is False:
            row += ", never named by the program"
        rows.append(row)
    head = (
        "By SLO class (sampled states, disagreements: BLIS admits and llm-d rejects + llm-d admits and BLIS "
        f"rejects): {'; '.join(rows)}."
    )
    examples = [f"Example ({label(c.name)}): {c.examples[0]}" for c in f.classes if c.disagreements and c.examples]
    return [head, mix_sentence(f), *examples]


def below_floor_fix(f: Fidelity, an: Analysis | None = None, mix: Sequence[TrafficClass] = DEFAULT_CLASSES) -> str:
    """What fits when the class mapping is the largest cause: no ``param`` reaches it, so the person either
    records the gap knowingly or changes the program where it meets the class: a comparison with a class the
    plugin never receives, or a key or stored value (``class_uses``) that llm-d's three classes share."""
    seen = _received(mix)
    uses = class_uses(an)
    changes = []
    if _names_unseen(f, an, seen):
        changes.append("compare only the classes the plugin receives (critical, standard, sheddable)")
    if uses:
        how = "key by" if any(not u.startswith("the receiver") for u in uses) else "store"
        changes.append(f"{how} the class llm-d delivers ({DELIVERED})")
    keyed = ""
    if uses:
        keyed = (
            f" The program uses the class as a value ({'; '.join(uses)}): in llm-d {shared_entries()}, where BLIS "
            "keeps one for each class."
        )
    changes = changes or [f"decide each class as llm-d delivers it ({DELIVERED})"]
    where = ""
    if f.classes:
        other = [c for c in f.classes if c.name not in seen and c.disagreements]
        sent = [c for c in f.classes if c.name in seen and c.disagreements]
        where = f" Here the disagreements fall in {_counts(f.classes)}"
        if sent or other:
            n = sum(c.disagreements for c in sent)
            where += f"; {n} of them in a class the mix's traffic reaches the plugin as"
        where += "."
    return (
        "no `param` changes this: the class is fixed by llm-d's priority field (the request's InferenceObjective), "
        f"which the plugin reads as {PRIORITY_RULE}, so BLIS `batch` and `background` arrive as `sheddable` and the "
        f"empty class as `standard`. The plan's priority mix sends {mix_words(mix)}.{where}{keyed} Approve to record "
        f"the gap knowingly (the translation report's per-class table is the record), or {FLOOR_SETTING} if those "
        f"classes do not matter here; to close it, make the program {' and '.join(changes)} and evolve it again"
    )


def _names_unseen(f: Fidelity, an: Analysis | None, seen: set[str]) -> bool:
    """Whether the program compares the class with a name the plugin never receives (batch, background, "")."""
    named = an.slo_names if an is not None else {c.name for c in f.classes if c.named}
    return bool(named - seen) or (an is None and not f.classes)
