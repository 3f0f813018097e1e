"""Track B: one hypothesis per sim-to-real gap, and the Map B freshness gaps tied to the runs that vary them.

- **Map C gaps** — one per gap the policy touches, from the gap's dictionary
  template. A gap's run-condition hint picks the workloads (a request workload
  named by name or profile; else ``evolved_for``; else all) and, for one
  workload, the rate. A gap decided by a planned fault treatment
  (``bot.bench.conditions``) runs under it; a gap whose condition this cluster
  cannot provide gets ``prediction=None`` and the reason (``not_in_plan``): a
  "no worse" verdict from a run without the condition would be false evidence.
  A gap judged at low load (``network-latency``: "where time-based branches
  rarely fire") runs only on a low-load cell, never on one a Track A claim
  predicts a change at (``operating_points.low_load_plan``); and a scheduling
  plugin whose time logic cannot see delay (``delay_free``) gets no benchmark
  prediction for it at all: the translation decides it.
- **Map B freshness gaps** — a freshness hypothesis is only evidence when a run
  changes the freshness it is about; judged on plain cells where nothing varies
  it, six of them would only repeat one comparison under six names. So:

  * a signal whose freshness a planned treatment changes
    (``bot.bench.conditions.conditions_changing``: the metric-staleness treatment
    slows the metrics scrape, so every scraped signal of the deployed config and
    what is computed from them) is folded into the gap hypothesis
    run under that treatment, which lists the signals (``signals``, ``covers``);
  * the signals no planned treatment varies become ONE hypothesis listing them,
    not decided by this plan (``not_in_plan`` names the run it would need);
  * the signals the plugin holds constant (untranslatable) become one
    hypothesis that is not testable as translated (``not_testable``): how fresh
    a constant is cannot change the outcome, so "no worse" would say nothing.

  Freshness hypotheses predict no-worse on the first Track A metric (else a
  per-kind default) on ``evolved_for`` (else every workload).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bot.bench.layout import with_condition
from bot.hypotheses.errors import HypothesisError
from bot.hypotheses.metrics import metric_label, translate_metric
from bot.hypotheses.operating_points import cells, gap_run_plan, hint_rates, low_load_plan, wants_low_load
from bot.hypotheses.signals import not_testable_reason
from bot.hypotheses.wording import Ctx, cap, code_list, where
from bot.model import (
    VVUQ,
    Direction,
    Family,
    Hypothesis,
    HypothesisType,
    PolicyKind,
    Prediction,
    PromotionRequest,
    Track,
    TranslationSummary,
)
from bot.model.evidence import ON_PRIORITY_MIX

#: The Map C gap an admitter's priority mix decides (bot.stats.shedding reads the same name).
SHEDDING_GAP = "priority-semantics"
#: The Map C gap about wall-clock time and network delay; its template is a TTFT equivalence at low load.
DELAY_GAP = "network-latency"
#: What each time signal is in a scheduling plugin's pseudo-queue (bot/golang/templates/scorer.go.j2).
_QUEUE_TIME = {
    "Clock": "its clock is the EPP's wall clock, read once when it scores the request",
    "ArrivalTime": (
        "the request's arrival is the wall clock when the EPP scores it, so its own wait is 0 by construction, and "
        "the waiting requests it models arrived incumbentSpacingUs apart before it"
    ),
    "SLOTargetUs": "a TTFT target is the request's header or incumbentSLOTargetMs, which no delay changes",
    "Deadline": "the deadline is held at 0 (clients do not send it)",
}
#: Tolerance of Track B no-worse / equivalence predictions (seed: 5%).
DEFAULT_MARGIN = 0.05
#: Metric a freshness-gap hypothesis checks when no Track A claim names one, by policy kind.
FRESHNESS_METRIC = {
    PolicyKind.ROUTING: "ttft_mean",
    PolicyKind.ADMISSION: "e2e_p95",
    PolicyKind.SCHEDULING: "ttft_p99",
}


def _type_for(direction: str) -> HypothesisType:
    return HypothesisType.EQUIVALENCE if direction in ("equivalent", "no-worse") else HypothesisType.DOMINANCE


def _gap_condition(req: PromotionRequest, gap_id: str):
    """The Track B run condition that decides a Map C gap: a Condition, the reason it cannot run, or None."""
    from bot.bench.conditions import GAP_CONDITION, conditions_for

    name = GAP_CONDITION.get(gap_id)
    return conditions_for(req.stack)[name] if name else None


def delay_free(summary: TranslationSummary) -> str | None:
    """Why network delay cannot enter the plugin's time logic, or None when it can.

    A scheduling plugin as translated reads the wall clock once per Score call and builds every time it orders
    by from that reading and its parameters, so every age it computes is a difference of values it made
    itself; one that keeps no state between calls carries no earlier reading forward. Delay and wall-clock time
    then change nothing it decides, and the gap's low-load equivalence would measure nothing about the gap
    (on a claim's cell a working plugin would even "refute" it and file a false BLIS gap).
    """
    if summary.kind is not PolicyKind.SCHEDULING or summary.stateful:
        return None
    read = [_QUEUE_TIME[s] for s in _QUEUE_TIME if s in summary.signals]
    return "; ".join(
        [
            *read,
            "it keeps no state between requests, so every age it orders by is a difference of values it made itself",
        ]
    )


def _delay_free_hypothesis(ctx: Ctx, gap, hid: str, why: str) -> Hypothesis:
    """The delay gap of a plugin whose time logic cannot see delay: decided by reading the translation, not planned.

    Kept (not dropped) so gate 2's coverage and the record still answer the gap, with no benchmark prediction:
    it takes no cell and no share of alpha, and nothing is filed with BLIS from a cell it never measured."""
    workloads = [ctx.req.evolved_for] if ctx.req.evolved_for else [w.name for w in ctx.req.workloads]
    return Hypothesis(
        id=hid,
        track=Track.B,
        title=f"Map C gap `{DELAY_GAP}`: {getattr(gap, 'title', '') or gap.concern}",
        statement=(
            f"{cap(ctx.plugin)}'s time logic should not see dispatch or network delay, verified by reading the "
            f"translation ({why}). Not benchmarked: no run can change what it computes from time, and the gap's low-load TTFT "
            "equivalence would only measure the plugin's placement (on a cell a claim predicts a change at, a "
            "working plugin would fail it)."
        ),
        family=Family.STRUCTURAL_MODEL,
        vvuq=VVUQ.VERIFICATION,
        type=HypothesisType.DETERMINISTIC,
        diagnostic=(
            "If this fails, it would indicate that the plugin reads a time it did not take when scoring (a stored "
            "arrival, or a clock kept across calls); regenerate the hypotheses from the current translation, which "
            "then plans the gap's low-load equivalence."
        ),
        workloads=workloads,
        rates=[],
        prediction=None,
        source=DELAY_GAP,
        mechanism=(
            f"BLIS cannot model this: {gap.why_blis_cannot_model.strip()} As translated, network delay does not "
            f"enter the plugin's time logic: {why}."
        ),
    )


def gap_hypothesis(
    ctx: Ctx, gap_id: str, hid: str, margin: float, claimed: dict[tuple[str, float], str] | None = None
) -> Hypothesis:
    """The Track B hypothesis of one Map C gap; ``claimed``: the cells a Track A claim predicts a change on, which
    a gap judged at low load must avoid (``operating_points.low_load_plan``)."""
    try:
        gap = ctx.dictionary.gap(gap_id)
    except (KeyError, StopIteration):
        gap = None
    if gap is None:
        raise HypothesisError(
            f"translation summary: touched gap {gap_id!r} is not a Map C gap in the dictionary; re-run stage 2 with the current dictionary"
        )
    if gap_id == DELAY_GAP and (why := delay_free(ctx.summary)):
        return _delay_free_hypothesis(ctx, gap, hid, why)
    tb = gap.track_b
    worded = tb.worded_for(ctx.summary.kind, ctx.summary.epp_plugins).filled(
        f"`{ctx.summary.plugin_type}`", ctx.req.stack.replicas
    )
    statement = worded.statement
    if "if this fails" not in worded.diagnostic.lower():
        raise HypothesisError(
            f"dictionary gaps[{gap_id}].track_b.diagnostic: must contain 'If this fails, it would indicate ...'; fix dictionary/map-c-gaps.yaml"
        )
    try:
        short = translate_metric(tb.metric).short
    except HypothesisError as exc:
        raise HypothesisError(f"dictionary gaps[{gap_id}].track_b.metric: {exc}") from None
    direction = str(tb.direction)
    family = Family(tb.family)
    workloads, rates, untestable = gap_run_plan(ctx.req, tb.workloads, family)
    condition = _gap_condition(ctx.req, gap_id)
    if untestable is None and condition is None and wants_low_load(tb.workloads):
        workloads, rates, untestable = low_load_plan(ctx.req, workloads, claimed or {})
    if isinstance(condition, str):
        untestable = f"needs a run this cluster cannot do: {condition}"
    elif condition is not None:
        # A planned Track B fault treatment decides it: the same workload and rates under the condition.
        rates = rates or hint_rates(ctx.req, workloads, tb.workloads)
        workloads, untestable = [with_condition(w, condition.name) for w in workloads], None
        statement += f" (Decided by the fault treatment `{condition.name}`: {condition.what}.)"
    mix = untestable is not None and ctx.summary.kind is PolicyKind.ADMISSION and gap_id == SHEDDING_GAP
    if mix:  # the plan's priority mix decides an admitter's shedding (bot.stats.shedding), not the cells
        untestable = (
            f"{ON_PRIORITY_MIX} (the shedding order), not on the cells, which send every request at one priority"
        )
    prediction = None
    if short is not None and untestable is None:
        prediction = Prediction(
            metric=short,
            direction=Direction(direction),
            margin=margin if direction in ("equivalent", "no-worse") else DEFAULT_MARGIN,
        )
    if mix:
        statement += (
            " (Decided on the plan's priority mix by per-class admit rate: does it shed sheddable requests before "
            "protected ones. Protected-request TTFT on a mix is not measured: the cells send every request at one "
            f"priority; the template predicts {direction} on {short or tb.metric}.)"
        )
    elif untestable:
        statement += f" (Not decided by the benchmark plan: it {untestable}; the template predicts {direction} on {short or tb.metric}.)"
    return Hypothesis(
        not_in_plan=f"it {untestable}" if untestable else None,
        id=hid,
        track=Track.B,
        title=f"Map C gap `{gap_id}`: {getattr(gap, 'title', '') or gap.concern}",
        statement=statement,
        family=family,
        vvuq=VVUQ(getattr(tb, "vvuq", VVUQ.VALIDATION)),
        type=HypothesisType(getattr(tb, "type", None) or _type_for(direction)),
        diagnostic=worded.diagnostic,
        workloads=workloads,
        rates=rates,
        prediction=prediction,
        source=gap_id,
        mechanism=f"BLIS cannot model this: {gap.why_blis_cannot_model.strip()} (conditions: {tb.workloads.strip()})",
    )


def primary_metric(ctx: Ctx, track_a: list[Hypothesis]) -> str:
    for h in track_a:
        if h.prediction is not None:
            return h.prediction.metric
    return FRESHNESS_METRIC[ctx.summary.kind]


# --------------------------------------------------------------------------
# Freshness
# --------------------------------------------------------------------------


def _entry(ctx: Ctx, signal: str):
    entry = ctx.dictionary.signal(signal)
    if entry is None:
        raise HypothesisError(
            f"translation summary: freshness-gap signal {signal!r} is not a Map B signal in the dictionary; re-run stage 2 with the current dictionary"
        )
    return entry


def _freshness_text(ctx: Ctx, signals: list[str]) -> str:
    """`X` (BLIS: ...; llm-d: ...), one per signal."""
    parts = []
    for s in signals:
        fr = _entry(ctx, s).freshness
        parts.append(f"`{s}` (BLIS: {fr.blis.rstrip('.')}; llm-d: {fr.llmd.rstrip('.')})")
    return "; ".join(parts)


def _gap_text(gap: str | None) -> str:
    """A signal's Map B gap without the dictionary's "Verify via the ... Track B hypotheses." pointer.

    The hypothesis the gap lands in is its verification, or, for a signal no planned run varies, says that
    none decides it: a pointer to other hypotheses would contradict its own title.
    """
    return re.sub(r"\s*Verify via [^.]*\.", "", (gap or "").strip()).strip()


def varies_freshness(ctx: Ctx, signal: str, condition: str) -> bool:
    """Whether ``condition`` changes ``signal``'s freshness (a method signal: any of its parts) in the deployed
    EndpointPickerConfig (``bot.bench.conditions.conditions_changing``, the one source)."""
    from bot.bench.conditions import conditions_changing

    entry = ctx.dictionary.signal(signal)
    parts = {signal, *(entry.expands_to if entry is not None else [])}
    return condition in conditions_changing(parts, ctx.summary.epp_plugins)


def _thresholds(ctx: Ctx) -> str:
    if not ctx.summary.thresholds:
        return ""
    names = ", ".join(f"`{k}`" for k in sorted(ctx.summary.thresholds))
    return f" Re-check the evolved thresholds ({names}) against llm-d's update cadence."


def fold_freshness(ctx: Ctx, h: Hypothesis, condition: str, signals: list[str]) -> Hypothesis:
    """The gap hypothesis run under ``condition``, now also deciding the freshness gaps of ``signals``."""
    listed = code_list(signals)
    return h.model_copy(
        update={
            "title": f"{h.title}, covering the Map B freshness of {listed}",
            "statement": (
                f"{h.statement} The `{condition}` treatment changes how fresh llm-d's values of {listed} are, so this "
                f"hypothesis also decides their Map B freshness gaps: {_freshness_text(ctx, signals)}."
            ),
            "diagnostic": (
                f"{h.diagnostic} It would also indicate that the evolved logic depends on BLIS's freshness of "
                f"{listed}.{_thresholds(ctx)}"
            ),
            "signals": list(dict.fromkeys([*h.signals, *signals])),
            "covers": [
                *h.covers,
                *(
                    f"Map B freshness of `{s}`: decided here, because the `{condition}` treatment varies it"
                    for s in signals
                ),
            ],
        }
    )


def _freshness(
    ctx: Ctx, signals: list[str], hid: str, metric: str, margin: float, *, title: str, statement_tail: str
) -> Hypothesis:
    workloads = [ctx.req.evolved_for] if ctx.req.evolved_for else [w.name for w in ctx.req.workloads]
    listed = code_list(signals)
    statement = (
        f"{cap(ctx.plugin)} should behave according to its BLIS-calibrated assumption about the freshness of "
        f"{_freshness_text(ctx, signals)}, verified by observable {metric_label(metric)} no worse than "
        f"{ctx.default} within {margin:.0%} under {where(ctx.req, workloads, [])}. {statement_tail}"
    )
    diagnostic = (
        f"If this fails, it would indicate that the evolved logic depends on BLIS's freshness of {listed} and ranks "
        f"endpoints differently with llm-d's.{_thresholds(ctx)} Feed back to BLIS: re-run the evolved program with "
        "signal staleness matching llm-d (--snapshot-refresh-interval / --cache-signal-delay) and add a "
        f"structural-model hypothesis on the freshness of {listed}."
    )
    gaps = "; ".join(f"`{s}`: {_gap_text(_entry(ctx, s).freshness.gap).rstrip('.')}" for s in signals)
    return Hypothesis(
        id=hid,
        track=Track.B,
        title=title,
        statement=statement,
        family=Family.STRUCTURAL_MODEL,
        vvuq=VVUQ.VALIDATION,
        type=HypothesisType.EQUIVALENCE,
        diagnostic=diagnostic,
        workloads=workloads,
        rates=[],
        prediction=Prediction(metric=metric, direction=Direction.NO_WORSE, margin=margin),
        source=", ".join(signals),
        mechanism=f"Map B freshness gaps: {gaps}.",
        signals=list(signals),
    )


def claimed_cells(req: PromotionRequest, track_a: list[Hypothesis]) -> dict[tuple[str, float], str]:
    """(workload, rate) -> the first Track A claim that predicts a change there (benchmarked, directional)."""
    out: dict[tuple[str, float], str] = {}
    for h in track_a:
        if h.benchmarked and h.prediction.direction in (Direction.DECREASE, Direction.INCREASE):
            for cell in sorted(cells(req, h)):
                out.setdefault(cell, h.id)
    return out


def track_b(
    ctx: Ctx, metric: str, margin_for: Callable[[str], float], track_a: list[Hypothesis] | None = None
) -> list[Hypothesis]:
    """Every Track B hypothesis, in id order: gaps, then freshness not varied by any run, then the constant ones."""
    claimed = claimed_cells(ctx.req, track_a or [])
    out: list[Hypothesis] = []
    runs_under: dict[int, Any] = {}  # index in out -> the planned Condition its cells run under
    for gap_id in dict.fromkeys(ctx.summary.touched_gaps):
        h = gap_hypothesis(ctx, gap_id, f"B{len(out) + 1}", margin_for(f"B{len(out) + 1}"), claimed)
        condition = _gap_condition(ctx.req, gap_id)
        if h.prediction is not None and condition is not None and not isinstance(condition, str):
            runs_under[len(out)] = condition
        out.append(h)

    signals = [s for s in dict.fromkeys(ctx.summary.freshness_gaps) if _entry(ctx, s)]
    constant = [s for s in signals if s in ctx.summary.untranslatable]
    pending = [s for s in signals if s not in constant]
    for i, condition in runs_under.items():
        varied = [s for s in pending if varies_freshness(ctx, s, condition.name)]
        if varied:
            out[i] = fold_freshness(ctx, out[i], condition.name, varied)
            pending = [s for s in pending if s not in varied]

    if pending:
        hid = f"B{len(out) + 1}"
        conditions = sorted({c.name for c in runs_under.values()})
        listed = f" ({', '.join(f'`{c}`' for c in conditions)})" if conditions else ""
        verb, it = ("is", "it") if len(pending) == 1 else ("are", "them")
        none_varies = f"no run condition of this plan{listed} changes {it}"
        reason = f"needs a run that changes how fresh llm-d's {code_list(pending)} {verb}; {none_varies}"
        h = _freshness(
            ctx,
            pending,
            hid,
            metric,
            margin_for(hid),
            title=f"Map B freshness of {code_list(pending)}: no planned run varies {'it' if len(pending) == 1 else 'them'}",
            statement_tail=f"(Not decided by the benchmark plan: it {reason}.)",
        )
        out.append(h.model_copy(update={"prediction": None, "not_in_plan": f"it {reason}"}))
    if constant:
        hid = f"B{len(out) + 1}"
        reason = not_testable_reason(constant, ctx.summary, ctx.dictionary, ctx.req.source_text, ctx.req.source)
        out.append(
            _freshness(
                ctx,
                constant,
                hid,
                metric,
                margin_for(hid),
                title=f"Map B freshness of {code_list(constant)}: the plugin holds {'it' if len(constant) == 1 else 'them'} constant",
                statement_tail=f"(Not testable as translated: {reason}.)",
            ).model_copy(update={"not_testable": reason})
        )
    return out
