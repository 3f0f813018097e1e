"""Stage 3: the Track A/B/C hypotheses a promotion must answer, generated deterministically.

Why each track exists (seed, Stage 3):

- **Track A (transfer)** — every BLIS claim that validated the evolved program,
  rewritten for llm-d: metric names translated to llm-d-benchmark short names,
  operating points carried over, the magnitude relaxed to a *direction* (the
  BLIS magnitude is kept as ``blis_magnitude`` for the attenuation check),
  family / VV&UQ / type preserved, the original sentence kept in
  ``blis_statement``. Sources, in order: ``request.claims``, then the
  OpenEvolve ``HYPOTHESIS-N`` triples in ``request.source_text`` (by N).
  An OpenEvolve claim that predicts what an earlier claim does (metric,
  direction, cells) is folded into it (``covers``): one hypothesis per
  distinct claim. A claim whose mechanism reads a signal the plugin holds
  constant is kept, marked not testable as translated (``bot.hypotheses.signals``), and so is one
  whose mechanism rests on logic gate 1 found dead in the plugin (``bot.hypotheses.dead_logic``).
- **Track B (gap)** — one per Map C gap the policy touches, with the Map B
  freshness gaps tied to the run that varies them (``bot.hypotheses.track_b``).
- **Track C (regression)** — per baseline scenario: equivalence within 5% on
  its first guarded metric, then no regression beyond 5% on each guarded
  metric the equivalence does not already imply (an equivalence within ±m on
  a metric contains the no-regression test at a margin >= m: the same upper
  one-sided test, so the implied one is dropped and named in ``covers``).
  Without baselines every workload is a scenario (see ``_scenarios``).

Operating-point rule for a claim's ``rate`` (BLIS rates are simulator-
calibrated and often on another scale than GPU rates): a rate equal to one of
the workload's real rates is kept; a rate inside the workload's real range maps
to the nearest real rate (ties to the lower); a rate outside the range says
nothing about GPU load, so the hypothesis covers every real rate (``rates=[]``)
and must hold at each. No ``rate`` → every real rate.

Reviewer feedback is applied as ``bot.hypotheses.feedback`` reads it.
"""

from __future__ import annotations

from typing import Any

from bot.hypotheses.dead_logic import AS_DEPLOYED, dead_logic_reason, hypothesis_texts, join_reasons
from bot.hypotheses.errors import HypothesisError
from bot.hypotheses.feedback import parse_feedback
from bot.hypotheses.metrics import MetricTranslation, metric_label, translate_metric
from bot.hypotheses.openevolve import CHECK_MALFORMED, OpenEvolveHypothesis, parse_openevolve
from bot.hypotheses.operating_points import (
    claim_rates,
    same_prediction,
    workloads_for_prefix,
    workloads_named_in,
)
from bot.hypotheses.saturation import needs_queues, saturation_first
from bot.hypotheses.signals import declared_signals, named_signals, not_testable_reason
from bot.hypotheses.track_b import DEFAULT_MARGIN, primary_metric, track_b
from bot.hypotheses.wording import (
    PLACEMENT,
    Ctx,
    clause,
    direction_words,
    fmt_rate,
    llmd_mechanism,
    plugin_phrase,
    where,
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
from bot.model.metrics import METRICS

#: Guarded metrics of a scenario derived from a workload when the request lists no baselines.
DEFAULT_GUARDED = ("ttft_mean", "e2e_p95", "throughput")


def _diagnostic_a(ctx: Ctx, blis_metric: str, workloads: list[str]) -> str:
    sig = ", ".join(f"`{s}`" for s in ctx.summary.signals) or "its signals"
    fresh = (
        f"; Map B freshness gaps on {', '.join(f'`{s}`' for s in ctx.summary.freshness_gaps)} are the first suspects"
        if ctx.summary.freshness_gaps
        else ""
    )
    kept = sorted(set(ctx.summary.thresholds) - set(ctx.recalibrated()))
    th = (
        f", or that the evolved thresholds ({', '.join(f'`{k}`' for k in kept)}) are calibrated to BLIS scales rather than llm-d's"
        if kept
        else ""
    )
    if ctx.recalibrated():  # the plugin benchmarked runs the values set at gate 1, not BLIS's
        th += (
            f", or that the values re-calibrated at gate 1 for this deployment, {ctx.as_deployed()}, do not fit "
            "llm-d's load either"
        )
    return (
        f"If this fails, it would indicate that the BLIS result on `{blis_metric}` does not transfer to llm-d on "
        f"{', '.join(f'`{w}`' for w in workloads)}: the signals the evolved logic reads ({sig}) behave differently on real endpoints{fresh}{th}. "
        f'Open a BLIS structural-model hypothesis "BLIS signal X diverges from llm-d signal X under this workload" before re-evolving.'
    )


def claim_metric(claim: BlisClaim) -> MetricTranslation:
    """What a claim's metric means for llm-d-benchmark; HypothesisError naming the field for a name nobody
    reports (preflight asks this before anything runs, stage 3 again when it writes the hypothesis)."""
    try:
        return translate_metric(claim.metric)
    except HypothesisError as exc:
        raise HypothesisError(f"claims[{claim.id}].metric: {exc}") from None


def _track_a_claim(ctx: Ctx, claim: BlisClaim, hid: str) -> Hypothesis:
    t = claim_metric(claim)
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
        names=[claim.mechanism, claim.statement],
        declared=declared_signals(claim.id, claim.signals, ctx.summary.signals, ctx.dictionary),
    )


def _blis_context(blis_rate: float | None, rates: list[float], w: Workload, seeds: list[int]) -> str:
    bits = []
    if blis_rate is not None:
        mapped = (
            f"{fmt_rate(rates[0])} req/s"
            if rates
            else "every real rate (" + ", ".join(fmt_rate(r) for r in sorted(w.rates)) + " req/s)"
        )
        bits.append(f"BLIS rate {fmt_rate(blis_rate)} req/s → {mapped}")
    if seeds:
        bits.append("seeds " + ", ".join(str(s) for s in seeds))
    return f" [{'; '.join(bits)}]" if bits else ""


def _track_a_openevolve(ctx: Ctx, oe: OpenEvolveHypothesis, hid: str) -> Hypothesis:
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
        names=[oe.mechanism, oe.hypothesis],
    )


def _track_a(
    ctx: Ctx,
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
    names: list[str | None],
    declared: list[str] | None = None,
) -> Hypothesis:
    signals = (
        declared if declared is not None else named_signals(names, ctx.summary, ctx.dictionary, ctx.req.source_text)
    )
    at = where(ctx.req, workloads, rates)
    because = _because(ctx.summary.kind, mechanism)
    if ctx.recalibrated():
        because += f", as deployed with {ctx.as_deployed()}"
    if t.short is not None:
        what = direction_words(t.short, direction)
        statement = f"Under {at}, {ctx.plugin} produces {what} than {ctx.default} under llm-d-benchmark{because}."
        prediction = Prediction(metric=t.short, direction=Direction(direction), blis_magnitude=magnitude)
        title = f"{what[0].upper()}{what[1:]} than the default on {', '.join(workloads)} ({source})"
    else:
        statement = (
            f"Under {at}, {ctx.plugin} moves `{t.source}` in the direction BLIS found ({direction}) relative to {ctx.default}{because}. "
            f"{t.why_unmeasured[0].upper()}{t.why_unmeasured[1:]}, so no benchmark decides this hypothesis; the gate 2 reviewer decides how to check it."
        )
        prediction = None
        gap = "the bot has no metric for it" if t.reported else "not measured by llm-d-benchmark"
        title = f"`{t.source}` {direction}s on {', '.join(workloads)} ({source}; {gap})"
    h = Hypothesis(
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
        mechanism=_deployed_mechanism(ctx, llmd_mechanism(ctx.summary.kind, mechanism)),
        blis_statement=blis_statement,
        signals=signals,
        not_testable=not_testable_reason(signals, ctx.summary, ctx.dictionary, ctx.req.source_text, ctx.req.source),
    )
    # A mechanism resting on logic gate 1 found dead is not testable either; read from what the document carries,
    # as gate 2 reads it back (bot.hypotheses.dead_logic).
    dead = dead_logic_reason(hypothesis_texts(h), ctx.summary, ctx.req.source)
    return h if dead is None else h.model_copy(update={"not_testable": join_reasons(h.not_testable, dead)})


def _deployed_mechanism(ctx: Ctx, mechanism: str | None) -> str | None:
    """The mechanism as the benchmarked plugin has it: BLIS's words, and the values a person re-calibrated at
    gate 1 beside BLIS's (a reviewer read "when QueueDepth exceeds 3" for a plugin deployed at 24)."""
    if not mechanism or not ctx.recalibrated():
        return mechanism
    return _sentences(
        mechanism,
        f"{AS_DEPLOYED} {ctx.as_deployed()}, re-calibrated at gate 1 for this deployment: "
        "the mechanism acts at these values, while BLIS measured the claim at its own",
    )


def _because(kind: PolicyKind, mechanism: str | None) -> str:
    """The statement's reason: the claim's mechanism, or for a scheduler what its placement does in llm-d
    (the mechanism the benchmark tests), with BLIS's queue-ordering mechanism named as what it translates."""
    if kind is not PolicyKind.SCHEDULING:
        return f", because {clause(mechanism)}" if mechanism else ""
    origin = f"; this is how llm-d carries BLIS's mechanism ({clause(mechanism)})" if mechanism else ""
    return f", because it {PLACEMENT}{origin}"


def _fold_duplicate(ctx: Ctx, kept: Hypothesis, dup: Hypothesis, oe: OpenEvolveHypothesis) -> Hypothesis:
    """``kept`` now also stands for OpenEvolve's claim ``dup``: its mechanism's signals count too, unless the
    claim declares its own (``claims[].signals`` is the researcher's word on what the mechanism reads)."""
    note = f"OpenEvolve's {dup.source} (line {oe.line}) predicts the same and is tested here."
    declared = any(c.id == kept.source and c.signals is not None for c in ctx.req.claims)
    signals = kept.signals if declared else list(dict.fromkeys([*kept.signals, *dup.signals]))
    return kept.model_copy(
        update={
            "mechanism": _sentences(kept.mechanism, note),
            "covers": [*kept.covers, f"OpenEvolve {dup.source} (line {oe.line}): predicts the same, tested here"],
            "signals": signals,
            "not_testable": join_reasons(
                not_testable_reason(signals, ctx.summary, ctx.dictionary, ctx.req.source_text, ctx.req.source),
                dead_logic_reason(hypothesis_texts(kept) + hypothesis_texts(dup), ctx.summary, ctx.req.source),
            ),
        }
    )


def _sentences(*parts: str) -> str:
    """Texts joined as sentences: each ends with a full stop, once ("... on one instance.; OpenEvolve's" read
    as a glitch when a mechanism already ended with one)."""
    texts = [p.strip() for p in parts if p and p.strip()]
    return " ".join(t if t[-1] in ".!?" else f"{t}." for t in texts)


def implies(stronger: Hypothesis, weaker: Hypothesis) -> bool:
    """Whether confirming ``stronger`` already confirms ``weaker``: an equivalence within ±m contains the
    no-regression test at a margin >= m on the same metric and cells (TOST's upper one-sided test is it)."""
    p, q = stronger.prediction, weaker.prediction
    return (
        p is not None
        and q is not None
        and p.direction is Direction.EQUIVALENT
        and q.direction is Direction.NO_WORSE
        and p.metric == q.metric
        and p.margin <= q.margin
        and sorted(stronger.workloads) == sorted(weaker.workloads)
        and sorted(stronger.rates) == sorted(weaker.rates)
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


def guarded_metrics(s: BaselineScenario) -> list[str]:
    """The short names of a baseline's guarded metrics; HypothesisError naming the field for one
    llm-d-benchmark does not report (preflight asks this before anything runs, stage 3 again)."""
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
    ctx: Ctx, s: BaselineScenario, derived: bool, metric: str, hid: str, margin: float
) -> Hypothesis:
    rates = [s.rate] if s.rate is not None else []
    at = where(ctx.req, [s.workload], rates)
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
            f"{origin}Under {at}, where {ctx.default} already performs well, {ctx.plugin} matches it within "
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
    ctx: Ctx, s: BaselineScenario, derived: bool, metric: str, hid: str, margin: float, *, guard: bool = False
) -> Hypothesis:
    rates = [s.rate] if s.rate is not None else []
    at = where(ctx.req, [s.workload], rates)
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
            f"{origin}Under {at}, {ctx.plugin} does not regress {metric_label(metric)} beyond {margin:.0%} "
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
    request: PromotionRequest,
    summary: TranslationSummary,
    dictionary: Any,
    *,
    feedback: str | None = None,
    deployed: dict[str, float | str] | None = None,
    epp_config: str | None = None,
) -> list[Hypothesis]:
    """Track A, B and C hypotheses for one promotion, in id order; same input, same output."""
    return generate_with_excluded(
        request, summary, dictionary, feedback=feedback, deployed=deployed, epp_config=epp_config
    )[0]


def generate_with_excluded(
    request: PromotionRequest,
    summary: TranslationSummary,
    dictionary: Any,
    *,
    feedback: str | None = None,
    deployed: dict[str, float | str] | None = None,
    epp_config: str | None = None,
) -> tuple[list[Hypothesis], list[Hypothesis]]:
    """The hypotheses to test, and those a person's ``exclude:`` dropped (recorded on the branch, so gate 2
    reads the gaps they covered as decided by a person, not as missing).

    Ids follow the structure the default margins give, so a change request never renumbers what the person
    saw: ``margin ID:`` changes the hypothesis it names, an exclusion leaves a hole, and what the feedback adds
    (``guard:``, a no-regression test a widened equivalence no longer implies) takes the next free ids.
    ``deployed`` are the values a person set at gate 1 (the committed config's): Track A words them.
    ``epp_config``: the EndpointPickerConfig as deployed (None: the plugin's defaults), which with the translation
    says which hypotheses stage 4 sets aside as not measurable on these cells (``_set_aside``).
    """
    fb = parse_feedback(feedback)
    plugin, default = plugin_phrase(summary.kind, summary.plugin_type)
    ctx = Ctx(request, summary, dictionary, plugin, default, dict(deployed or {}))
    base = fb.margin if fb.margin is not None else DEFAULT_MARGIN

    def margin_for(hid: str) -> float:
        return fb.margins.get(hid, base)

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
            track_a[track_a.index(same)] = _fold_duplicate(ctx, same, h, oe)

    track_b_hyps = track_b(ctx, primary_metric(ctx, track_a), margin_for, track_a)

    # Track C
    track_c: list[Hypothesis] = []
    scenarios, derived = _scenarios(request)
    improved = {w for h in track_a if h.prediction is not None for w in h.workloads}
    guarded_by: dict[str, list[str]] = {}
    unfolded: list[tuple[BaselineScenario, str]] = []  # implied at the default margins, not at a person's
    for s in scenarios:
        metrics = guarded_metrics(s)
        guarded_by[s.name] = metrics
        eq: Hypothesis | None = None
        if metrics and not (derived and s.workload in improved):
            eq = _track_c_equivalence(
                ctx, s, derived, metrics[0], f"C{len(track_c) + 1}", margin_for(f"C{len(track_c) + 1}")
            )
            track_c.append(eq)
        for m in metrics:
            h = _track_c_no_regression(ctx, s, derived, m, "C0", base)
            if eq is not None and implies(_at_margin(eq, base), h):  # whether it takes an id: the default margins
                if not implies(eq, h):  # ``margin C1:`` widened the equivalence past it: tested on its own
                    unfolded.append((s, m))
                    continue
                margin = eq.prediction.margin if eq.prediction else DEFAULT_MARGIN
                note = f"{h.title}: implied by {eq.id} (equivalence within ±{margin:.0%} bounds the regression)"
                track_c[track_c.index(eq)] = eq = eq.model_copy(update={"covers": [*eq.covers, note]})
                continue
            hid = f"C{len(track_c) + 1}"
            track_c.append(_track_c_no_regression(ctx, s, derived, m, hid, margin_for(hid)))
    added = [(s, g, True) for g in fb.guards for s in scenarios if g not in guarded_by[s.name]]
    for s, m, guard in added + [(s, m, False) for s, m in unfolded]:
        hid = f"C{len(track_c) + 1}"
        track_c.append(_track_c_no_regression(ctx, s, derived, m, hid, margin_for(hid), guard=guard))

    excluded = set(fb.exclude)
    aside = _set_aside(request, summary, epp_config, track_a + track_b_hyps + track_c)
    every = [
        saturation_first(request, h) if needs_queues(summary.kind, h) and h.id not in aside else h
        for h in track_a + track_b_hyps
    ]
    every += track_c
    return [h for h in every if h.id not in excluded], [h for h in every if h.id in excluded]


def _set_aside(request, summary, epp_config: str | None, hypotheses: list[Hypothesis]) -> set[str]:
    """The ids stage 4 plans as not measurable on these cells (``set_aside.for_plan``, the one rule stage 4, gate 2
    and stage 5 apply): no cell of theirs is run, so their "If this fails" must not blame unsaturated cells first
    (sched-e2e #4: A1 of a class-ordering scheduler on single-priority cells)."""
    from bot.bench.set_aside import for_plan

    return {h.id for h in for_plan(request, summary, epp_config, hypotheses) if h.prediction is None}


def _at_margin(h: Hypothesis, margin: float) -> Hypothesis:
    """``h`` predicting the same at another margin (what the default margins would have made of it)."""
    if h.prediction is None:
        return h
    return h.model_copy(update={"prediction": h.prediction.model_copy(update={"margin": margin})})
