"""Stage 3: the Track A/B/C hypotheses a promotion must answer, generated deterministically.

Why each track exists (seed, Stage 3):

- **Track A (transfer)** — every BLIS claim that validated the evolved program,
  rewritten for llm-d: metric names translated to llm-d-benchmark short names,
  operating points carried over, the magnitude relaxed to a *direction* (the
  BLIS magnitude is kept as ``blis_magnitude`` for the attenuation check),
  family / VV&UQ / type preserved, the original sentence kept in
  ``blis_statement``. Sources, in order: ``request.claims``, then the
  OpenEvolve ``HYPOTHESIS-N`` triples in ``request.source_text`` (by N).
- **Track B (gap)** — one per Map C gap the policy touches (from the gap's
  dictionary template), then one structural-model hypothesis per Map B signal
  with a freshness gap, in the order the translation summary lists them.
  A gap's run-condition hint picks the workloads (a request workload named by
  name or profile; else ``evolved_for``; else all) and, for one workload, the
  rate ("lowest" / "middle" / "moderate" / "highest"). A gap whose condition
  the standard plan cannot provide (failure injection, LoRA adapters, P/D
  split ... see ``SPECIAL_SETUP``) gets ``prediction=None``: a "no worse"
  verdict from a run without the condition would be false evidence.
  Freshness hypotheses predict no-worse on the first Track A metric (else a
  per-kind default) on ``evolved_for`` (else every workload).
- **Track C (regression)** — per baseline scenario: equivalence within 5% on
  its first guarded metric, then no regression beyond 5% on each guarded
  metric. Without baselines every workload is a scenario (see ``_scenarios``).

Operating-point rule for a claim's ``rate`` (BLIS rates are simulator-
calibrated and often on another scale than GPU rates): a rate equal to one of
the workload's real rates is kept; a rate inside the workload's real range maps
to the nearest real rate (ties to the lower); a rate outside the range says
nothing about GPU load, so the hypothesis covers every real rate (``rates=[]``)
and must hold at each. No ``rate`` → every real rate.

Reviewer feedback is applied as ``bot.hypotheses.feedback`` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.bench.layout import with_condition
from bot.bench.metrics import METRICS
from bot.hypotheses.errors import HypothesisError
from bot.hypotheses.feedback import parse_feedback
from bot.hypotheses.metrics import MetricTranslation, metric_label, translate_metric
from bot.hypotheses.openevolve import CHECK_MALFORMED, OpenEvolveHypothesis, parse_openevolve
from bot.hypotheses.operating_points import (
    claim_rates,
    gap_run_plan,
    hint_rates,
    same_prediction,
    workloads_for_prefix,
    workloads_named_in,
)
from bot.model import (
    VVUQ,
    BaselineScenario,
    BlisClaim,
    Direction,
    Family,
    Finding,
    Hypothesis,
    HypothesisType,
    PolicyKind,
    Prediction,
    PromotionRequest,
    Track,
    TranslationSummary,
    Workload,
)

#: Tolerance of Track C and of Track B no-worse / equivalence predictions (seed: 5%).
DEFAULT_MARGIN = 0.05
#: Guarded metrics of a scenario derived from a workload when the request lists no baselines.
DEFAULT_GUARDED = ("ttft_mean", "e2e_p95", "throughput")
#: Metric a freshness-gap hypothesis checks when no Track A claim names one, by policy kind.
_FRESHNESS_METRIC = {
    PolicyKind.ROUTING: "ttft_mean",
    PolicyKind.ADMISSION: "e2e_p95",
    PolicyKind.SCHEDULING: "ttft_p99",
}


# --------------------------------------------------------------------------
# Wording
# --------------------------------------------------------------------------


def _plugin_phrase(kind: PolicyKind, plugin: str) -> tuple[str, str]:
    """(the evolved plugin, what it is compared with), as the seed's example words them."""
    if kind is PolicyKind.ROUTING:
        return f"the evolved scorer `{plugin}`", "the default scorer pipeline"
    if kind is PolicyKind.ADMISSION:
        return f"the evolved admission plugin `{plugin}`", "the default admission path (every request admitted)"
    return f"the evolved queue-ordering plugin `{plugin}`", "the default scheduling pipeline"


def _clause(text: str) -> str:
    """A sentence used mid-sentence: no trailing period, first letter lowered unless it starts an acronym."""
    t = text.strip().rstrip(".")
    if len(t) > 1 and t[0].isupper() and t[1].islower():
        t = t[0].lower() + t[1:]
    return t


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fmt_rate(r: float) -> str:
    return f"{r:g}"


def _where(req: PromotionRequest, workloads: list[str], rates: list[float]) -> str:
    parts = []
    for name in workloads:
        w = req.workload(name)
        desc = f" ({w.description.rstrip('.')})" if w.description else ""
        parts.append(f"`{name}`{desc}")
    names = " and ".join(parts) if len(parts) <= 2 else ", ".join(parts[:-1]) + " and " + parts[-1]
    at = " at " + ", ".join(_fmt_rate(r) for r in rates) + " req/s" if rates else " at every benchmarked rate"
    return f"workload{'s' if len(workloads) > 1 else ''} {names}{at}"


def _direction_words(short: str, direction: str) -> str:
    better = METRICS[short].better
    lower = direction == "decrease"
    good = (better == "lower") == lower
    return f"{'better' if good else 'worse'} ({'lower' if lower else 'higher'}) {metric_label(short)}"


# --------------------------------------------------------------------------
# Track A
# --------------------------------------------------------------------------


@dataclass
class _Ctx:
    req: PromotionRequest
    summary: TranslationSummary
    dictionary: Any
    plugin: str
    default: str


def _diagnostic_a(ctx: _Ctx, blis_metric: str, workloads: list[str]) -> str:
    sig = ", ".join(f"`{s}`" for s in ctx.summary.signals) or "its signals"
    fresh = (
        f"; Map B freshness gaps on {', '.join(f'`{s}`' for s in ctx.summary.freshness_gaps)} are the first suspects"
        if ctx.summary.freshness_gaps
        else ""
    )
    th = (
        f", or that the evolved thresholds ({', '.join(f'`{k}`' for k in sorted(ctx.summary.thresholds))}) are calibrated to BLIS scales rather than llm-d's"
        if ctx.summary.thresholds
        else ""
    )
    return (
        f"If this fails, it would indicate that the BLIS result on `{blis_metric}` does not transfer to llm-d on "
        f"{', '.join(f'`{w}`' for w in workloads)}: the signals the evolved logic reads ({sig}) behave differently on real endpoints{fresh}{th}. "
        f'Open a BLIS structural-model hypothesis "BLIS signal X diverges from llm-d signal X under this workload" before re-evolving.'
    )


def _track_a_claim(ctx: _Ctx, claim: BlisClaim, hid: str) -> Hypothesis:
    try:
        t = translate_metric(claim.metric)
    except HypothesisError as exc:
        raise HypothesisError(f"claims[{claim.id}].metric: {exc}") from None
    if (
        claim.magnitude is not None
        and claim.magnitude != 0
        and (claim.magnitude < 0) != (claim.direction == "decrease")
    ):
        raise HypothesisError(
            f"claims[{claim.id}].magnitude: {claim.magnitude:+g} contradicts direction {claim.direction!r}; "
            f"use a negative magnitude for a decrease and a positive one for an increase"
        )
    w = ctx.req.workload(claim.workload)
    rates = claim_rates(claim.rate, w.rates)
    return _track_a(
        ctx,
        hid,
        t,
        claim.direction,
        [claim.workload],
        rates,
        family=claim.family,
        vvuq=claim.vvuq,
        type_=claim.type,
        mechanism=claim.mechanism,
        blis_statement=claim.statement + _blis_context(claim.rate, rates, w, claim.seeds),
        magnitude=claim.magnitude,
        source=claim.id,
    )


def _blis_context(blis_rate: float | None, rates: list[float], w: Workload, seeds: list[int]) -> str:
    bits = []
    if blis_rate is not None:
        mapped = (
            f"{_fmt_rate(rates[0])} req/s"
            if rates
            else "every real rate (" + ", ".join(_fmt_rate(r) for r in sorted(w.rates)) + " req/s)"
        )
        bits.append(f"BLIS rate {_fmt_rate(blis_rate)} req/s → {mapped}")
    if seeds:
        bits.append("seeds " + ", ".join(str(s) for s in seeds))
    return f" [{'; '.join(bits)}]" if bits else ""


def _track_a_openevolve(ctx: _Ctx, oe: OpenEvolveHypothesis, hid: str) -> Hypothesis:
    workloads, note = workloads_for_prefix(ctx.req, oe.metric.workload_prefix)
    if oe.metric.workload_prefix is None and oe.metric.source.startswith("avg_"):
        simulated = [w.name for w in ctx.req.workloads if w.blis_workload]
        if simulated:
            workloads = simulated
            note = "the metric averages the BLIS workloads, so it is checked on every workload with a BLIS counterpart"
    elif oe.metric.workload_prefix is None:
        workloads, note = workloads_named_in(ctx.req, oe.hypothesis, workloads, note)
    result = f"; BLIS: {oe.result}" + (f" (actual={oe.actual})" if oe.actual else "") if oe.result else ""
    blis = f"{oe.hypothesis} [OpenEvolve HYPOTHESIS-{oe.n}, line {oe.line}: EXPECT {oe.expect_text}{result}; {note}]"
    return _track_a(
        ctx,
        hid,
        oe.metric,
        oe.direction,
        workloads,
        [],
        family=Family.CROSS_POLICY,
        vvuq=VVUQ.VALIDATION,
        type_=HypothesisType.DOMINANCE,
        mechanism=oe.mechanism,
        blis_statement=blis,
        magnitude=None,
        source=f"HYPOTHESIS-{oe.n}",
    )


def _track_a(
    ctx: _Ctx,
    hid: str,
    t: MetricTranslation,
    direction: str,
    workloads: list[str],
    rates: list[float],
    *,
    family: Family,
    vvuq: VVUQ,
    type_: HypothesisType,
    mechanism: str | None,
    blis_statement: str,
    magnitude: float | None,
    source: str,
) -> Hypothesis:
    where = _where(ctx.req, workloads, rates)
    because = f", because {_clause(mechanism)}" if mechanism else ""
    if t.short is not None:
        what = _direction_words(t.short, direction)
        statement = f"Under {where}, {ctx.plugin} produces {what} than {ctx.default} under llm-d-benchmark{because}."
        prediction = Prediction(metric=t.short, direction=Direction(direction), blis_magnitude=magnitude)
        title = f"{what[0].upper()}{what[1:]} than the default on {', '.join(workloads)} ({source})"
    else:
        statement = (
            f"Under {where}, {ctx.plugin} moves `{t.source}` in the direction BLIS found ({direction}) relative to {ctx.default}{because}. "
            f"llm-d-benchmark does not report it ({t.note}), so no benchmark decides this hypothesis; the gate 2 reviewer decides how to check it."
        )
        prediction = None
        title = f"`{t.source}` {direction}s on {', '.join(workloads)} ({source}; not measured by llm-d-benchmark)"
    return Hypothesis(
        id=hid,
        track=Track.A,
        title=title,
        statement=statement,
        family=family,
        vvuq=vvuq,
        type=type_,
        diagnostic=_diagnostic_a(ctx, t.source, workloads),
        workloads=workloads,
        rates=rates,
        prediction=prediction,
        source=source,
        mechanism=mechanism,
        blis_statement=blis_statement,
    )


# --------------------------------------------------------------------------
# Track B
# --------------------------------------------------------------------------


def _type_for(direction: str) -> HypothesisType:
    return HypothesisType.EQUIVALENCE if direction in ("equivalent", "no-worse") else HypothesisType.DOMINANCE


def _track_b_gap(ctx: _Ctx, gap_id: str, hid: str, margin: float) -> Hypothesis:
    try:
        gap = ctx.dictionary.gap(gap_id)
    except (KeyError, StopIteration):
        gap = None
    if gap is None:
        raise HypothesisError(
            f"translation summary: touched gap {gap_id!r} is not a Map C gap in the dictionary; re-run stage 2 with the current dictionary"
        )
    tb = gap.track_b
    plugin_type = ctx.summary.plugin_type
    statement = tb.statement.replace("{plugin}", f"`{plugin_type}`")
    if "if this fails" not in tb.diagnostic.lower():
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
    if isinstance(condition, str):
        untestable = f"needs a run this cluster cannot do: {condition}"
    elif condition is not None:
        # A planned Track B fault treatment decides it: the same workload and rates under the condition.
        rates = rates or hint_rates(ctx.req, workloads, tb.workloads)
        workloads, untestable = [with_condition(w, condition.name) for w in workloads], None
        statement += f" (Decided by the fault treatment `{condition.name}`: {condition.what}.)"
    prediction = None
    if short is not None and untestable is None:
        prediction = Prediction(
            metric=short,
            direction=Direction(direction),
            margin=margin if direction in ("equivalent", "no-worse") else DEFAULT_MARGIN,
        )
    if untestable:
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
        diagnostic=tb.diagnostic.replace("{plugin}", f"`{plugin_type}`"),
        workloads=workloads,
        rates=rates,
        prediction=prediction,
        source=gap_id,
        mechanism=f"BLIS cannot model this: {gap.why_blis_cannot_model.strip()} (conditions: {tb.workloads.strip()})",
    )


def _gap_condition(req: PromotionRequest, gap_id: str):
    """The Track B run condition that decides a Map C gap: a Condition, the reason it cannot run, or None."""
    from bot.bench.conditions import GAP_CONDITION, conditions_for

    name = GAP_CONDITION.get(gap_id)
    return conditions_for(req.stack)[name] if name else None


def _primary_metric(ctx: _Ctx, track_a: list[Hypothesis]) -> str:
    for h in track_a:
        if h.prediction is not None:
            return h.prediction.metric
    return _FRESHNESS_METRIC[ctx.summary.kind]


def _track_b_freshness(ctx: _Ctx, signal: str, hid: str, metric: str, margin: float) -> Hypothesis:
    entry = ctx.dictionary.signal(signal)
    if entry is None:
        raise HypothesisError(
            f"translation summary: freshness-gap signal {signal!r} is not a Map B signal in the dictionary; re-run stage 2 with the current dictionary"
        )
    fr = entry.freshness
    gap = fr.gap or f"BLIS: {fr.blis}; llm-d: {fr.llmd}"
    workloads = [ctx.req.evolved_for] if ctx.req.evolved_for else [w.name for w in ctx.req.workloads]
    where = _where(ctx.req, workloads, [])
    statement = (
        f"{_cap(ctx.plugin)} should behave according to its BLIS-calibrated assumption about the freshness of `{entry.name}` "
        f"(BLIS: {fr.blis.rstrip('.')}) when llm-d supplies it differently (llm-d: {fr.llmd.rstrip('.')}), verified by observable "
        f"{metric_label(metric)} no worse than {ctx.default} within {margin:.0%} under {where}."
    )
    th = (
        f" Re-check the evolved thresholds ({', '.join(f'`{k}`' for k in sorted(ctx.summary.thresholds))}) against llm-d's update cadence."
        if ctx.summary.thresholds
        else ""
    )
    diagnostic = (
        f"If this fails, it would indicate that the evolved logic depends on BLIS's freshness of `{entry.name}` ({fr.blis.rstrip('.')}) "
        f"and ranks endpoints differently with llm-d's ({fr.llmd.rstrip('.')}).{th} "
        f"Feed back to BLIS: re-run the evolved program with signal staleness matching llm-d (--snapshot-refresh-interval / --cache-signal-delay) "
        f"and add a structural-model hypothesis on `{entry.name}` freshness."
    )
    return Hypothesis(
        id=hid,
        track=Track.B,
        title=f"Map B freshness of `{entry.name}` does not change the outcome",
        statement=statement,
        family=Family.STRUCTURAL_MODEL,
        vvuq=VVUQ.VALIDATION,
        type=HypothesisType.EQUIVALENCE,
        diagnostic=diagnostic,
        workloads=workloads,
        rates=[],
        prediction=Prediction(metric=metric, direction=Direction.NO_WORSE, margin=margin),
        source=entry.name,
        mechanism=f"Map B freshness gap: {gap.strip()}",
    )


# --------------------------------------------------------------------------
# Track C
# --------------------------------------------------------------------------


def _scenarios(req: PromotionRequest) -> tuple[list[BaselineScenario], bool]:
    """Baseline scenarios, or one per workload when the request has none (derived=True).

    A derived scenario gets no equivalence hypothesis on a workload a Track A
    hypothesis predicts an improvement on — equivalence there would contradict
    Track A; no-regression does not.
    """
    if req.baselines:
        return list(req.baselines), False
    return [
        BaselineScenario(name=w.name, workload=w.name, guarded_metrics=list(DEFAULT_GUARDED)) for w in req.workloads
    ], True


def _guarded(s: BaselineScenario) -> list[str]:
    out: list[str] = []
    for name in s.guarded_metrics:
        try:
            short = translate_metric(name).short
        except HypothesisError as exc:
            raise HypothesisError(f"baselines[{s.name}].guarded_metrics: {exc}") from None
        if short is None:
            raise HypothesisError(
                f"baselines[{s.name}].guarded_metrics: {name!r} is not reported by llm-d-benchmark; use one of {', '.join(METRICS)}"
            )
        if short not in out:
            out.append(short)
    return out


def _track_c_equivalence(
    ctx: _Ctx, s: BaselineScenario, derived: bool, metric: str, hid: str, margin: float
) -> Hypothesis:
    rates = [s.rate] if s.rate is not None else []
    where = _where(ctx.req, [s.workload], rates)
    origin = (
        f"No baseline scenarios were given, so Track C is derived from every workload; this is workload `{s.workload}`. "
        if derived
        else f"Baseline scenario `{s.name}`. "
    )
    return Hypothesis(
        id=hid,
        track=Track.C,
        title=f"Matches the default within {margin:.0%} on {s.name} ({metric_label(metric)})",
        statement=(
            f"{origin}Under {where}, where {ctx.default} already performs well, {ctx.plugin} matches it within "
            f"{margin:.0%} on {metric_label(metric)}."
        ),
        family=Family.CROSS_POLICY,
        vvuq=VVUQ.VALIDATION,
        type=HypothesisType.EQUIVALENCE,
        diagnostic=(
            f"If this fails, it would indicate that the evolved logic changes behaviour on `{s.workload}`, a workload "
            f"it was not meant to change; find which branch fires there (often a threshold calibrated to BLIS scales) "
            f"and bound it, or document the workload as out of scope before promoting."
        ),
        workloads=[s.workload],
        rates=rates,
        prediction=Prediction(metric=metric, direction=Direction.EQUIVALENT, margin=margin),
        source=s.name if not derived else f"workload:{s.workload}",
    )


def _track_c_no_regression(
    ctx: _Ctx, s: BaselineScenario, derived: bool, metric: str, hid: str, margin: float, *, guard: bool = False
) -> Hypothesis:
    rates = [s.rate] if s.rate is not None else []
    where = _where(ctx.req, [s.workload], rates)
    origin = (
        f"No baseline scenarios were given, so Track C is derived from every workload; this is workload `{s.workload}`. "
        if derived
        else f"Baseline scenario `{s.name}`. "
    )
    d = METRICS[metric]
    worse = "higher" if d.better == "lower" else "lower"
    src = s.name if not derived else f"workload:{s.workload}"
    return Hypothesis(
        id=hid,
        track=Track.C,
        title=f"No regression of {metric_label(metric)} beyond {margin:.0%} on {s.name}",
        statement=(
            f"{origin}Under {where}, {ctx.plugin} does not regress {metric_label(metric)} beyond {margin:.0%} "
            f"relative to {ctx.default} (not more than {margin:.0%} {worse})."
        ),
        family=Family.CROSS_POLICY,
        vvuq=VVUQ.VALIDATION,
        type=HypothesisType.EQUIVALENCE,
        diagnostic=(
            f"If this fails, it would indicate that the evolved plugin costs {metric_label(metric)} on `{s.workload}`; "
            f"check whether the evolved logic trades this metric for the one it was evolved on (a Pareto trade-off "
            f"BLIS's fitness did not weigh) and add {metric} to the OpenEvolve fitness before re-evolving."
        ),
        workloads=[s.workload],
        rates=rates,
        prediction=Prediction(metric=metric, direction=Direction.NO_WORSE, margin=margin),
        source=(f"guard:{src}" if guard else src),
    )


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def openevolve_findings(request: PromotionRequest) -> list[Finding]:
    """Findings about the OpenEvolve comments (malformed, refuted in BLIS, not measurable), for gate 2."""
    return parse_openevolve(request.source_text, request.source)[1]


def generate_hypotheses(
    request: PromotionRequest, summary: TranslationSummary, dictionary: Any, *, feedback: str | None = None
) -> list[Hypothesis]:
    """Track A, B and C hypotheses for one promotion, in id order; same input, same output."""
    fb = parse_feedback(feedback)
    plugin, default = _plugin_phrase(summary.kind, summary.plugin_type)
    ctx = _Ctx(request, summary, dictionary, plugin, default)

    def margin_for(hid: str) -> float:
        return fb.margins.get(hid, fb.margin if fb.margin is not None else DEFAULT_MARGIN)

    # Track A
    triples, findings = parse_openevolve(request.source_text, request.source)
    for f in findings:
        if f.check == CHECK_MALFORMED:
            raise HypothesisError(f"{request.source or 'evolved source'}:{f.line}: {f.message}; {f.fix}")
    track_a: list[Hypothesis] = []
    for claim in request.claims:
        track_a.append(_track_a_claim(ctx, claim, f"A{len(track_a) + 1}"))
    for oe in triples:
        h = _track_a_openevolve(ctx, oe, f"A{len(track_a) + 1}")
        same = same_prediction(ctx.req, h, track_a)
        if same is None:
            track_a.append(h)
        else:  # tested once: a second copy would only spend another share of the error correction
            i = track_a.index(same)
            note = f"OpenEvolve's {h.source} (line {oe.line}) predicts the same and is tested here"
            track_a[i] = same.model_copy(update={"mechanism": "; ".join(filter(None, [same.mechanism, note]))})

    # Track B
    track_b: list[Hypothesis] = []
    for gap_id in dict.fromkeys(summary.touched_gaps):
        hid = f"B{len(track_b) + 1}"
        track_b.append(_track_b_gap(ctx, gap_id, hid, margin_for(hid)))
    metric = _primary_metric(ctx, track_a)
    for signal in dict.fromkeys(summary.freshness_gaps):
        hid = f"B{len(track_b) + 1}"
        track_b.append(_track_b_freshness(ctx, signal, hid, metric, margin_for(hid)))

    # Track C
    track_c: list[Hypothesis] = []
    scenarios, derived = _scenarios(request)
    improved = {w for h in track_a if h.prediction is not None for w in h.workloads}
    guarded_by: dict[str, list[str]] = {}
    for s in scenarios:
        metrics = _guarded(s)
        guarded_by[s.name] = metrics
        if metrics and not (derived and s.workload in improved):
            hid = f"C{len(track_c) + 1}"
            track_c.append(_track_c_equivalence(ctx, s, derived, metrics[0], hid, margin_for(hid)))
        for m in metrics:
            hid = f"C{len(track_c) + 1}"
            track_c.append(_track_c_no_regression(ctx, s, derived, m, hid, margin_for(hid)))
    for g in fb.guards:
        for s in scenarios:
            if g in guarded_by[s.name]:
                continue
            hid = f"C{len(track_c) + 1}"
            track_c.append(_track_c_no_regression(ctx, s, derived, g, hid, margin_for(hid), guard=True))

    excluded = set(fb.exclude)
    return [h for h in track_a + track_b + track_c if h.id not in excluded]
