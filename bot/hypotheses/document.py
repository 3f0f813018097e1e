"""Hypothesis documents: markdown with YAML front matter, the form gate 2 reviews and stage 5 reads back.

The front matter is the whole ``Hypothesis`` (every field, in model order), so
``parse_hypothesis(render_hypothesis(h)) == h`` and the evaluator never
depends on the prose. One exception, which the round trip survives: a
directional prediction's margin is left out while it is the default, because
no test reads it (a one-sided test asserts no magnitude) and gate 2 refuses
a margin on it; showing ``margin: 0.05`` contradicted that refusal. The body
is for people and is regenerated from the front matter; editing the body
changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from pydantic import ValidationError

from bot.escape import md
from bot.hypotheses.errors import HypothesisError
from bot.hypotheses.metrics import metric_label
from bot.model import Direction, Hypothesis, Prediction, describe_validation_error
from bot.model.evidence import DECIDED_ON_MIX
from bot.model.metrics import METRICS
from bot.yaml_safe import YamlInputError, load_yaml

_FENCE = "---"

_DIRECTION_TEXT = {
    Direction.DECREASE: "evolved lower than baseline (one-sided test; magnitude not asserted)",
    Direction.INCREASE: "evolved higher than baseline (one-sided test; magnitude not asserted)",
    Direction.EQUIVALENT: "evolved within ±{margin:.0%} of baseline (two one-sided tests)",
    Direction.NO_WORSE: "evolved not worse than baseline by more than {margin:.0%} (one-sided non-inferiority test)",
}


def _directional(p: Prediction | None) -> bool:
    return p is not None and p.direction in (Direction.DECREASE, Direction.INCREASE)


def _front_matter(h: Hypothesis) -> str:
    data = h.model_dump(mode="json")
    p = h.prediction
    if p is not None and _directional(p) and p.margin == Prediction.model_fields["margin"].default:
        del data["prediction"]["margin"]  # parsed back as that default: the round trip holds
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100_000, default_flow_style=False)


def render_hypothesis(h: Hypothesis, *, feedback: str | None = None) -> str:
    """The hypothesis document; ``feedback`` (see ``feedback_notes``) adds a "Reviewer feedback" section."""
    out = [_FENCE, _front_matter(h).rstrip("\n"), _FENCE, ""]
    w = out.append
    w(f"# {h.id} — {md(h.title)}")
    w("")
    w("> " + md(h.statement, block=True).replace("\n", "\n> "))
    w("")
    w("## Classification")
    w("")
    w("| Track | Family | VV&UQ | Type |")
    w("|---|---|---|---|")
    w(f"| {h.track.value} | {h.family.value} | {h.vvuq.value} | {h.type.value} |")
    w("")
    w("## Prediction")
    w("")
    if h.on_priority_mix:  # an admitter's shedding order: the plan's mix decides it (bot.stats.shedding)
        w(
            f"No cell prediction: {DECIDED_ON_MIX}. Confirmed when, on the plan's priority mix, the evolved arm "
            "admits every sheddable class less than the critical one and no protected class less than the baseline "
            "did (the shedding order stage 5 judges)."
        )
    elif h.prediction is None:
        w("None: no llm-d-benchmark run decides this hypothesis; the gate 2 reviewer decides how it is checked.")
    else:
        p = h.prediction
        d = METRICS.get(p.metric)
        w("| Metric | Report path | Direction | Margin | BLIS magnitude |")
        w("|---|---|---|---|---|")
        path = f"`{d.report_path}.{d.statistic}` ({d.unit}, {d.better} is better)" if d else "(unknown metric)"
        label = metric_label(p.metric) if d else p.metric
        mag = f"{p.blis_magnitude:+.1%}" if p.blis_magnitude is not None else "—"
        margin = "—" if _directional(p) else f"{p.margin:g}"  # a one-sided test has no margin
        w(f"| `{p.metric}` ({label}) | {path} | {p.direction.value} | {margin} | {mag} |")
        w("")
        w("Confirmed when " + _DIRECTION_TEXT[p.direction].format(margin=p.margin) + ".")
        if p.blis_magnitude is not None:
            w(
                "The BLIS magnitude is kept only to flag attenuation (< 0.3×) or amplification (> 2×) where the "
                "whole interval, widened by the noise floor, lies beyond it; it is not asserted."
            )
    if h.not_testable:
        w("")
        w(f"**Not testable as translated:** {md(h.not_testable, block=True)} The benchmark does not judge it.")
    w("")
    w("## Operating points")
    w("")
    w("| Workload | Rates (req/s) |")
    w("|---|---|")
    rates = ", ".join(f"{r:g}" for r in h.rates) if h.rates else "every rate of the workload"
    for name in h.workloads:
        w(f"| `{name}` | {rates} |")
    w("")
    w("## Mechanism")
    w("")
    w(md(h.mechanism, block=True) if h.mechanism else "Not stated by the source.")
    if h.signals:
        w("")
        w("Signals the mechanism reads: " + ", ".join(f"`{md(s)}`" for s in h.signals) + ".")
    if h.covers:
        w("")
        w("## Also covers")
        w("")
        w("Tested once, here, so each distinct claim takes one share of the error rate:")
        w("")
        w("\n".join(f"- {md(c)}" for c in h.covers))
    w("")
    w("## Diagnostic")
    w("")
    w(md(h.diagnostic, block=True))
    w("")
    w("## Origin")
    w("")
    w(f"- Source: `{md(h.source)}`")
    if h.blis_statement:
        w(f'- BLIS original: "{md(h.blis_statement)}"')
    if feedback:
        w("")
        w("## Reviewer feedback")
        w("")
        w(md(feedback.rstrip(), block=True))
    return "\n".join(out) + "\n"


def parse_hypothesis(text: str, path: str = "") -> Hypothesis:
    """The Hypothesis in a document's front matter; HypothesisError names the file and the field."""
    where = path or "hypothesis document"
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != _FENCE:
        raise HypothesisError(f"{where}: no YAML front matter; the document must start with a '---' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == _FENCE)
    except StopIteration:
        raise HypothesisError(f"{where}: front matter is not closed; add a '---' line after it") from None
    try:
        raw = load_yaml("\n".join(lines[1:end]), first_line=2)
    except YamlInputError as exc:
        raise HypothesisError(f"{where}: front matter: {exc}; fix it") from None
    if not isinstance(raw, dict):
        raise HypothesisError(f"{where}: front matter must be a mapping of hypothesis fields")
    try:
        return Hypothesis.model_validate(raw)
    except ValidationError as exc:
        raise HypothesisError(f"{where}: {describe_validation_error(exc)}") from None


def is_hypothesis_file(name: str) -> bool:
    """``A1.md``, ``B12.md``, ``C3.md``: the documents (not the index) in a hypotheses directory."""
    stem = name.rsplit("/", 1)[-1].removesuffix(".md")
    return name.endswith(".md") and stem[:1] in "ABC" and stem[1:].isdigit()


def hypothesis_order(h: Hypothesis) -> tuple[str, int]:
    """A1 < A2 < A10 < B1 < C1: id order, numerically."""
    return h.id[0], int(h.id[1:])


#: The hypotheses a person excluded at gate 2, next to the documents (``PromotionPaths.hypotheses_excluded``).
EXCLUDED_FILE = "excluded.json"


def render_hypotheses(
    hypotheses: list[Hypothesis], *, feedback: str | None = None, excluded: list[Hypothesis] | None = None
) -> dict[str, str]:
    """File name (``<id>.md``, as ``bot.stages.paths`` expects) -> document, plus ``README.md`` (the index) and,
    when a person excluded some, ``excluded.json`` (what they were and why, for gate 2's coverage check)."""
    from bot.hypotheses.feedback import feedback_notes, parse_feedback

    notes = feedback_notes(hypotheses, feedback)
    fb = parse_feedback(feedback)
    why = fb.exclude_why
    dropped = [(h, why.get(h.id, "")) for h in sorted(excluded or [], key=hypothesis_order)]
    files = {
        f"{h.id}.md": render_hypothesis(h, feedback=notes.get(h.id)) for h in sorted(hypotheses, key=hypothesis_order)
    }
    files["README.md"] = render_index(hypotheses, dropped, directives_in_force(fb))
    if dropped:
        files[EXCLUDED_FILE] = render_excluded(dropped)
    return files


def directives_in_force(fb) -> list[str]:
    """The gate-2 directives the hypotheses were generated with (``Feedback`` of every change request at the gate
    so far: they accumulate, a later line for the same key wins), one markdown line each, for the index."""

    def _id_key(hid: str) -> tuple[str, int]:
        return hid[0], int(hid[1:])

    out = []
    if fb.exclude:
        out.append(f"- `exclude`: {', '.join(sorted(set(fb.exclude), key=_id_key))}")
    if fb.margin is not None:
        out.append(f"- `margin`: {fb.margin:g} (every equivalence and no-worse prediction without its own)")
    out += [f"- `margin {hid}`: {x:g}" for hid, x in sorted(fb.margins.items(), key=lambda kv: _id_key(kv[0]))]
    out += [f"- `guard`: {g}" for g in fb.guards]
    out += [f"- not applied: {md(u)}" for u in fb.unapplied]
    return out


def render_excluded(dropped: list[tuple[Hypothesis, str]]) -> str:
    """``excluded.json``: each excluded hypothesis whole, with the person's reason."""
    rows = [{"id": h.id, "why": why, "hypothesis": h.model_dump(mode="json")} for h, why in dropped]
    return json.dumps({"excluded": rows}, indent=2, ensure_ascii=False) + "\n"


def parse_excluded(text: str | None) -> list[tuple[Hypothesis, str]]:
    """``excluded.json`` read back (empty when absent); HypothesisError when it is not what ``render_excluded``
    wrote."""
    if not text:
        return []
    try:
        rows = json.loads(text)["excluded"]
        return [(Hypothesis.model_validate(r["hypothesis"]), str(r.get("why", ""))) for r in rows]
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        raise HypothesisError(
            f"{EXCLUDED_FILE}: not the list stage 3 writes ({exc}); regenerate the hypotheses"
        ) from None


def render_index(
    hypotheses: list[Hypothesis],
    excluded: list[tuple[Hypothesis, str]] | None = None,
    in_force: list[str] | None = None,
) -> str:
    """One table of every hypothesis, for the gate 2 comment and the branch; ``excluded``: (hypothesis, why)
    pairs a person dropped at gate 2, listed under "Merged or dropped" so the record says what and why;
    ``in_force``: the gate-2 directives applied (``directives_in_force``), so a rerun shows every one."""
    hs = sorted(hypotheses, key=hypothesis_order)
    counts = {t: sum(1 for h in hs if h.track.value == t) for t in "ABC"}
    out = [
        "# Hypotheses",
        "",
        (
            f"{len(hs)} distinct hypotheses: Track A (transfer) {counts['A']} · Track B (sim-to-real gap) "
            f"{counts['B']} · Track C (regression) {counts['C']}"
        ),
        "",
        "| ID | Title | Family | Type | Metric | Direction | Workloads | Source |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for h in hs:
        metric = f"`{h.prediction.metric}`" if h.prediction else "—"
        direction = h.prediction.direction.value if h.prediction else "not benchmarked"
        if h.on_priority_mix:
            direction = DECIDED_ON_MIX
        if h.not_testable:
            direction += " (not testable as translated)"
        out.append(
            f"| [{h.id}]({h.id}.md) | {md(h.title)} | {h.family.value} | {h.type.value} | {metric} | {direction} | "
            f"{', '.join(h.workloads)} | `{md(h.source)}` |"
        )
    merged = [f"- {md(c)} → [{hid}]({hid}.md)" for hid, c in ((h.id, c) for h in hs for c in h.covers)]
    merged += [
        f"- {h.id}, {md(h.title)}: excluded by a person at gate 2 ({md(why) if why else 'no reason given'}); not tested"
        for h, why in excluded or []
    ]
    if merged:
        out += ["", "## Merged or dropped, so each distinct claim is tested once", "", *merged]
    untestable = [h for h in hs if h.not_testable]
    if untestable:
        out += ["", "## Not testable as translated", ""]
        out += [f"- [{h.id}]({h.id}.md): {md(h.not_testable or '')}" for h in untestable]
    if in_force:
        out += [
            "",
            "## Gate 2 directives in force",
            "",
            (
                "From every change request at gate 2 so far, oldest first: they accumulate, and a later line for "
                "the same key wins (the same `margin` id, the `margin` of every prediction)."
            ),
            "",
            *in_force,
        ]
    return "\n".join(out) + "\n"


def load_hypotheses(directory: Path) -> list[Hypothesis]:
    """Every ``[ABC]<n>.md`` in a directory, parsed, in id order; HypothesisError if there are none."""
    directory = Path(directory)
    if not directory.is_dir():
        raise HypothesisError(
            f"{directory}: no such directory; pass the hypotheses directory written by `promote hypothesize`"
        )
    paths = sorted(p for p in directory.glob("*.md") if is_hypothesis_file(p.name))
    if not paths:
        raise HypothesisError(
            f"{directory}: no hypothesis documents (A1.md, B1.md, C1.md ...); run `promote hypothesize` first"
        )
    hs = []
    for p in paths:
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise HypothesisError(f"{p}: not UTF-8 text; regenerate it with `promote hypothesize`") from None
        hs.append(parse_hypothesis(text, str(p)))
    return sorted(hs, key=hypothesis_order)
