"""Gate 2 (hypotheses): the seed's checklist, computed over the documents on the branch.

- Track A is faithful: one hypothesis per BLIS claim, same direction, magnitude relaxed to direction;
- Track B covers every touched Map C gap and every Map B freshness gap, with actionable diagnostics;
- Track C covers every baseline scenario (equivalence) and every guarded metric (no regression);
- a hypothesis a person excluded at gate 2 (``exclude:``, recorded in ``excluded.json`` and the index) counts
  as decided by that person for these coverage checks, not as missing;
- every hypothesis is classified (family, VV&UQ, type) consistently with what it predicts;
- a BLIS claim set aside as not testable as translated is said, with the signal and the ``signals:`` override,
  or the dead logic its mechanism rests on and its evolved line (``G2.claim-not-testable``); a hypothesis resting
  on such logic that is still planned is IMPORTANT (``G2.not-testable-as-translated``);
- traffic exercises what the plugin decides by: a request class (``G2.priority-exercised``), a scheduler's prompt
  length (``G2.prompt-length-exercised``, ``bot.review.gate2_orders``) and, for a policy that reads the request's
  TTFT target, the header it arrives in (``G2.slo-header-sent``); for one that reads the session, a workload that
  sends it (``G2.session-header-sent``); for one that reads the tenant, cells that send several fairness IDs
  (``G2.tenants-exercised``, ``bot.review.gate2_tenants``);
- the plan approving buys can decide something (``G2.plan-decides-nothing``) and tests a claim, not guards only
  (``G2.no-claim-benchmarked``), from stage 4's plan (``bot.review.gate2_plan``).
"""

from __future__ import annotations

from bot.bench.layout import split_condition
from bot.directives import exclude_command
from bot.model import (
    Direction,
    Finding,
    HypothesisType,
    RequestError,
    Severity,
    Stage,
    Track,
    TranslationSummary,
)
from bot.review.gate2_plan import plan_findings
from bot.review.gate2_traffic import traffic_findings
from bot.review.saturation import cells_saturate

CHECKLIST = [
    "documents parse",
    "Track A faithful",
    "Track B covers gaps",
    "Track C covers baselines",
    "not testable as translated only when a signal is constant or the logic is dead",
    "classification",
    "diagnostic clauses",
    "metrics and workloads known",
    "margins plausible",
    "the plan can decide a hypothesis and tests a claim",
]

_DIRECTIONAL = {Direction.DECREASE, Direction.INCREASE}


def review(ctx) -> list[Finding]:
    from bot.hypotheses import blis_metric_to_short, parse_hypothesis
    from bot.model.metrics import METRICS

    findings: list[Finding] = []
    hyps = []
    from bot.hypotheses import is_hypothesis_file, openevolve_findings

    findings += openevolve_findings(ctx.request)
    for path in ctx.list(ctx.paths.hypotheses_dir):
        if not is_hypothesis_file(path):
            continue
        try:
            hyps.append((path, parse_hypothesis(ctx.read(path) or "", path)))
        except RequestError as exc:
            findings.append(Finding(severity=Severity.CRITICAL, check="G2.parse", file=path, line=1, message=str(exc)))
    if not hyps:
        return [
            *findings,
            Finding(
                severity=Severity.CRITICAL,
                check="G2.parse",
                file=ctx.paths.hypotheses_dir,
                message="no hypothesis documents on the branch",
            ),
        ]
    summary = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    excluded_why, bad = _excluded(ctx)
    excluded = [h for h, _ in excluded_why]
    findings += bad
    workloads = {w.name for w in ctx.request.workloads}
    by_source: dict[str, list] = {}
    for path, h in hyps:
        by_source.setdefault(h.source, []).append((path, h))
        line = 1
        if h.prediction and h.prediction.metric not in METRICS:
            findings.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check="G2.metric-known",
                    file=path,
                    line=line,
                    message=f"metric `{h.prediction.metric}` is not a benchmark report metric",
                    fix=f"use one of {', '.join(sorted(METRICS))}",
                )
            )
        for w in h.workloads:
            # A Track B fault treatment rides on a request workload (load-spikes+pod-failure).
            if split_condition(w)[0] not in workloads:
                findings.append(
                    Finding(
                        severity=Severity.CRITICAL,
                        check="G2.workload-known",
                        file=path,
                        line=line,
                        message=f"workload `{w}` is not in the request's workloads",
                    )
                )
        if h.prediction:
            d = h.prediction.direction
            if d is Direction.EQUIVALENT and h.type is not HypothesisType.EQUIVALENCE:
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check="G2.classification",
                        file=path,
                        line=line,
                        message=f"an equivalence prediction classified as {h.type.value}",
                        fix="type: statistical/equivalence",
                    )
                )
            if d in _DIRECTIONAL and h.type is HypothesisType.EQUIVALENCE:
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check="G2.classification",
                        file=path,
                        line=line,
                        message="a directional prediction classified as equivalence",
                    )
                )
        diag = h.diagnostic.lower()
        if len(diag.split()) < 8 or "indicate" not in diag:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G2.diagnostic-clause",
                    file=path,
                    line=line,
                    message="the diagnostic clause does not say what a failure would indicate",
                    fix='write "If this fails, it would indicate <specific cause> ..."',
                )
            )

    def track(t: Track) -> list:
        return [(p, h) for p, h in hyps if h.track is t]

    def decided(t: Track) -> list:
        """What covers a claim, gap or scenario: the documents, and what a person excluded on purpose."""
        return track(t) + [(ctx.paths.hypotheses_excluded, h) for h in excluded if h.track is t]

    findings += _testability(hyps, summary)
    findings += _dead_in_passing(hyps, summary)
    findings += _untestable_claims(ctx.request, hyps, summary)

    # Track A: faithful to every claim.
    for claim in ctx.request.claims:
        matches = [(p, h) for p, h in track(Track.A) if h.source == claim.id]
        if not matches and any(h.source == claim.id for _, h in decided(Track.A)):
            continue
        if not matches:
            findings.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check="G2.track-a-coverage",
                    file=ctx.paths.hypotheses_dir,
                    message=f"BLIS claim `{claim.id}` has no Track A hypothesis",
                )
            )
            continue
        for path, h in matches:
            if h.prediction is None:
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check="G2.track-a-faithful",
                        file=path,
                        line=1,
                        message=f"claim `{claim.id}` is not turned into a benchmark prediction",
                    )
                )
                continue
            if h.prediction.direction.value != claim.direction:
                findings.append(
                    Finding(
                        severity=Severity.CRITICAL,
                        check="G2.track-a-faithful",
                        file=path,
                        line=1,
                        message=f"claim `{claim.id}` predicts {claim.direction} but the hypothesis says {h.prediction.direction.value}",
                    )
                )
            try:
                want = blis_metric_to_short(claim.metric)
            except RequestError:
                want = None
            if want and h.prediction.metric != want:
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check="G2.track-a-faithful",
                        file=path,
                        line=1,
                        message=f"claim `{claim.id}` is about {claim.metric} (→ {want}) but the hypothesis measures {h.prediction.metric}",
                    )
                )
            if claim.workload not in h.workloads:
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check="G2.track-a-faithful",
                        file=path,
                        line=1,
                        message=f"claim `{claim.id}` was validated on {claim.workload}, which the hypothesis does not cover",
                    )
                )
            if h.family is not claim.family or h.type is not claim.type:
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check="G2.classification",
                        file=path,
                        line=1,
                        message=f"family/type differ from the BLIS claim ({claim.family.value}, {claim.type.value})",
                        fix="Track A preserves the BLIS family and type",
                    )
                )
    # Track B: every touched gap and every freshness gap.
    track_b_sources = {h.source for _, h in decided(Track.B)}
    for gap in summary.touched_gaps:
        if gap not in track_b_sources:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G2.track-b-coverage",
                    file=ctx.paths.hypotheses_dir,
                    message=f"Map C gap `{gap}` has no Track B hypothesis",
                )
            )
    # A freshness gap is covered by the hypothesis run under the treatment that varies it, or by the one line
    # listing the signals no run varies (bot.hypotheses.track_b): both name it in `signals`.
    fresh_covered = track_b_sources | {s for _, h in decided(Track.B) for s in h.signals}
    for signal in summary.freshness_gaps:
        if signal not in fresh_covered:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G2.track-b-coverage",
                    file=ctx.paths.hypotheses_dir,
                    message=f"the freshness gap of `{signal}` has no structural-model hypothesis",
                )
            )
    # Track C: every baseline scenario and guarded metric.
    for b in ctx.request.baselines:
        hs = [h for _, h in decided(Track.C) if h.source == b.name]
        if not any(h.prediction and h.prediction.direction is Direction.EQUIVALENT for h in hs):
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G2.track-c-coverage",
                    file=ctx.paths.hypotheses_dir,
                    message=f"baseline scenario `{b.name}` has no equivalence hypothesis",
                )
            )
        # An equivalence within the margin contains the no-regression test (bot.hypotheses.generate.implies).
        guarded = {
            h.prediction.metric
            for h in hs
            if h.prediction and h.prediction.direction in (Direction.NO_WORSE, Direction.EQUIVALENT)
        }
        for m in b.guarded_metrics:
            if m not in guarded:
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check="G2.track-c-coverage",
                        file=ctx.paths.hypotheses_dir,
                        message=f"guarded metric `{m}` of `{b.name}` has no no-regression hypothesis",
                    )
                )
    findings += _contradictions(hyps, ctx.request, ctx.home, ctx.work)
    findings += traffic_findings(ctx, hyps, summary)
    findings += cells_saturate(ctx, hyps, summary)
    findings += _vacuous_margins(hyps)
    findings += plan_findings(ctx, hyps, excluded_why)
    return findings


def _vacuous_margins(hyps) -> list[Finding]:
    """A margin above ``MARGIN_PLAUSIBLE`` (a person's ``margin: 0.4``, or ``0.3`` typed for 0.3%): within it a
    plugin that much worse than the default passes as equivalent, as no regression, so those guards cannot
    fail on any regression a reader would call one. Accepted (up to ``MARGIN_MAX``) but said, per margin."""
    from bot.hypotheses.feedback import MARGIN_PLAUSIBLE

    wide: dict[float, list] = {}
    for path, h in hyps:
        p = h.prediction
        if p is not None and p.direction in (Direction.EQUIVALENT, Direction.NO_WORSE) and p.margin > MARGIN_PLAUSIBLE:
            wide.setdefault(p.margin, []).append((path, h))
    return [
        Finding(
            severity=Severity.IMPORTANT,
            check="G2.margin-vacuous",
            file=found[0][0],
            line=1,
            message=f"margin {m:.0%} on {', '.join(h.id for _, h in found)}: within it a plugin {m:.0%} worse "
            f"than the default counts as equivalent or as no regression, so these guards are vacuous for any "
            f"regression up to {m:.0%}",
            fix=f"set a margin near the runs' noise, e.g. `margin: 0.05` (5%); if {m:g} meant {m:g}%, write "
            f"`margin: {m:g}%`",
        )
        for m, found in sorted(wide.items())
    ]


def _excluded(ctx) -> tuple[list[tuple], list[Finding]]:
    """(hypothesis, the person's reason) for each a person excluded at gate 2: those ``excluded.json`` records whose
    ids the reason stage 3 ran with excludes (a record no person's reason backs covers nothing). The reason is the
    one recorded, else the one their ``exclude:`` line gives ("" when they wrote none)."""
    from bot.hypotheses import HypothesisError, parse_excluded, parse_feedback

    path = ctx.paths.hypotheses_excluded
    try:
        recorded = parse_excluded(ctx.read(path))
    except HypothesisError as exc:
        return [], [Finding(severity=Severity.CRITICAL, check="G2.parse", file=path, line=1, message=str(exc))]
    by_person = parse_feedback(ctx.stage_feedback(Stage.HYPOTHESIZE))
    return [(h, why or by_person.exclude_why.get(h.id, "")) for h, why in recorded if h.id in by_person.exclude], []


def _testability(hyps, summary: TranslationSummary) -> list[Finding]:
    """A hypothesis whose mechanism reads a signal the plugin holds constant, or rests on logic gate 1 found dead
    in the plugin (``TranslationSummary.dead_logic``), must say it is not testable as translated (and one that
    says so must have such a reason): otherwise stage 5 would judge a mechanism that never ran, or set aside one
    that did (bot.hypotheses.signals, bot.hypotheses.dead_logic)."""
    from bot.hypotheses.dead_logic import cited, described, hypothesis_texts, rests_on_dead_logic

    out = []
    for path, h in hyps:
        dead = [s for s in h.signals if s in summary.untranslatable]
        logic = rests_on_dead_logic(hypothesis_texts(h), summary) if h.track is Track.A else []
        if dead and not h.not_testable:
            message = (
                f"{h.id}'s mechanism reads {', '.join(dead)}, which the plugin holds constant, yet it would be "
                "judged by the benchmark as if the mechanism ran"
            )
            fix = "regenerate the hypotheses (stage 3), or remove the signal from `signals` if the mechanism does not read it"
        elif logic and not h.not_testable:
            planned = "is planned and would be judged by the benchmark" if h.benchmarked else "is not set aside"
            message = (
                f"{h.id}'s mechanism rests on logic gate 1 found dead in the plugin, {described(logic)}; yet it "
                f"{planned} as if that logic ran: it cannot act in llm-d, so no result would be its doing"
            )
            fix = (
                "regenerate the hypotheses (stage 3) so it is recorded as not testable as translated; if the claim "
                "does not rest on that logic, reword its mechanism to name the logic it rests on"
            )
        elif h.not_testable and not dead and not cited(h.not_testable, summary):
            message = (
                f"{h.id} is set aside as not testable as translated, but none of its signals "
                f"({', '.join(h.signals) or 'none'}) is untranslatable and it rests on no logic the translation "
                "records as dead"
            )
            fix = "regenerate the hypotheses (stage 3) so the benchmark judges it"
        else:
            continue
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G2.not-testable-as-translated",
                file=path,
                line=1,
                message=message,
                fix=fix,
            )
        )
    return out


def _dead_in_passing(hyps, summary: TranslationSummary) -> list[Finding]:
    """A benchmarked hypothesis whose mechanism names dead logic beside logic that acts ("sheddable and batch
    requests are shed") stays testable, but its result covers the live part only: a confirmed "batch is shed
    before sheddable" would be read as the batch branch's doing, which never ran. Said, not blocking: the claim
    may still be worth its runs for what acts."""
    from bot.hypotheses.dead_logic import described, hypothesis_texts, named_dead_logic

    out = []
    for path, h in hyps:
        if h.track is not Track.A or not h.benchmarked or h.not_testable:
            continue
        logic = named_dead_logic(hypothesis_texts(h), summary)
        if logic:
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check="G2.dead-logic-in-passing",
                    file=path,
                    line=1,
                    message=f"{h.id}'s mechanism also names logic gate 1 found dead in the plugin, "
                    f"{described(logic)}; the benchmark tests only the rest of it, so its verdict says nothing "
                    "about that part",
                    fix="reword the mechanism to the logic that acts in llm-d, or approve knowing the verdict covers "
                    "that part only",
                )
            )
    return out


def _untestable_claims(request, hyps, summary: TranslationSummary) -> list[Finding]:
    """A BLIS claim set aside as not testable as translated gets no runs, which the counts alone do not show.

    A mechanism that names an untranslatable signal in passing ("..., plus 0.25*CacheHitRate^2") loses the
    whole claim, the headline one included, while the rest of its mechanism (a session bonus) is carried. So
    the gate says which claim, which signal, and the fix: the claim's own ``signals:`` list
    (``bot.hypotheses.signals.declared_signals``) when what remains still carries the mechanism. A claim set
    aside because its mechanism rests on logic gate 1 found dead (a ``case "batch":``) is said with that logic
    and its evolved line. IMPORTANT for the claim on the workload the program was evolved for, a SUGGESTION for
    the others."""
    from bot.hypotheses.dead_logic import cited, described

    claims = {c.id: c for c in request.claims}
    out = []
    for path, h in hyps:
        claim = claims.get(h.source)
        if h.track is not Track.A or not h.not_testable or claim is None:
            continue
        dead = [s for s in h.signals if s in summary.untranslatable]
        logic = cited(h.not_testable, summary)
        if not dead and not logic:
            continue  # _testability says the record is inconsistent
        headline = claim.workload == request.evolved_for
        on = f"`{claim.workload}`" + (", the workload the program was evolved for" if headline else "")
        if dead:
            message, fix = _held_signal_claim(h, claim, dead, on)
        else:
            message = (
                f"{h.id} (claim `{claim.id}` on {on}) gets no benchmark runs: its mechanism rests on logic gate 1 "
                f"found dead in the plugin, {described(logic)}; so it is recorded as not testable as translated"
            )
            fix = (
                f"if the claim's effect does not rest on that logic, reword claim `{claim.id}`'s mechanism in "
                "promotion.yaml (the issue's request on GitHub) to name the logic that acts in llm-d (a class it "
                "sends: critical, standard or sheddable; a plugin parameter) so stage 3 benchmarks it; otherwise "
                "approve knowing this claim is not tested, or map the class explicitly (a priority band per class "
                "in the InferenceObjectives) and re-translate"
            )
        out.append(
            Finding(
                severity=Severity.IMPORTANT if headline else Severity.SUGGESTION,
                check="G2.claim-not-testable",
                file=path,
                line=1,
                message=message,
                fix=fix,
            )
        )
    return out


def _held_signal_claim(h, claim, dead: list[str], on: str) -> tuple[str, str]:
    """The message and fix for a claim set aside for a signal the plugin holds constant."""
    rest = [s for s in h.signals if s not in dead]
    message = (
        f"{h.id} (claim `{claim.id}` on {on}) gets no benchmark runs: its signals include "
        f"{', '.join(f'`{s}`' for s in dead)}, which the plugin holds constant, so it is recorded as not "
        "testable as translated"
    )
    if claim.signals is None:
        message += " (its signals are the ones the mechanism and statement name; the claim declares none)"
    yaml = f"`signals: [{', '.join(rest)}]`"
    put = f"add {yaml} to" if claim.signals is None else f"set {yaml} on"
    fix = (
        f"if the claim's effect does not rest on {', '.join(dead)} (the mechanism names it in passing), {put} "
        f"claim `{claim.id}` in promotion.yaml (the issue's request on GitHub) so stage 3 benchmarks it on the "
        "signals the plugin carries; otherwise approve, knowing this claim is not tested"
        if rest
        else f"the mechanism reads no carried signal: it cannot be tested in llm-d as translated; approve "
        f"knowing this claim is not tested, or re-evolve without {', '.join(dead)}"
    )
    return message, fix


def _contradictions(hyps, request, home: str = "local", work: str | None = None) -> list[Finding]:
    """An equivalence claim on a cell (workload, rate) and metric where another hypothesis predicts a change
    cannot both hold. Cells, not workloads: the dictionary's own templates put an equivalence at a workload's
    lowest rate (network-latency: time-based branches rarely fire there) and a gain at its highest
    (queue-ordering-authority), which is one workload and no conflict. What remains is resolved by dropping one
    of the two, which gate 2's ``exclude:`` does (no directive moves a hypothesis or changes its direction)."""
    from bot.hypotheses.operating_points import cells

    out = []
    changes: dict[tuple, str] = {}
    for _, h in hyps:
        if h.prediction and h.prediction.direction in _DIRECTIONAL:
            for cell in sorted(cells(request, h)):
                changes.setdefault((cell, h.prediction.metric), h.id)
    for path, h in hyps:
        if not (h.prediction and h.prediction.direction is Direction.EQUIVALENT):
            continue
        clashes: dict[str, list[tuple[str, float]]] = {}
        for cell in sorted(cells(request, h)):
            other = changes.get((cell, h.prediction.metric))
            if other:
                clashes.setdefault(other, []).append(cell)
        for other, where in clashes.items():
            at = ", ".join(f"{w} @ {r:g} req/s" for w, r in where)
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G2.contradiction",
                    file=path,
                    line=1,
                    message=f"{h.id} predicts {h.prediction.metric} equivalent on {at}, but {other} predicts a change "
                    "on the same runs: both cannot hold",
                    fix=f"drop the one you trust less: {exclude_command(home, h.id, work)} (or `exclude: {other}`)",
                )
            )
    return out
