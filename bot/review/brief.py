"""What a person decides at each gate, in one line, and what to read first.

A gate comment that lists only findings leaves the person to find out what the
gate is about. Each review round therefore carries a headline computed from the
committed artifacts (gate 1: the translation's agreement with the BLIS original
and what it could not map; gate 2: the hypotheses by track and what the plan
costs; gate 3: the claims transferred and the regressions found) and the files
to read first. The review report, the status comment and the CLI's gate stop
show them with the severity counts and the gate's change-request directives
(``bot.directives``), so both homes say the same thing.

Read from the branch like the checklist (never from the author's reasoning);
anything missing or unreadable gives a shorter headline, never an error: the
checklist raises those problems as findings.
"""

from __future__ import annotations

import json
import math
from collections import Counter

from pydantic import ValidationError

from bot.golang import fidelity_admit
from bot.model import RequestError, Track, TranslationSummary, VerdictStatus, status_counts
from bot.model.evidence import DECIDED_ON_MIX


def brief(gate: int, ctx) -> tuple[str, dict[str, str]]:
    """(headline, {what to read first: branch path}) for ``gate`` from what is committed now."""
    try:
        return {1: _gate1, 2: _gate2, 3: _gate3}[gate](ctx)
    except (RequestError, ValidationError, ValueError, KeyError) as exc:  # the checklist reports the cause
        return f"the gate's artifacts could not be summarised ({str(exc).splitlines()[0][:200]})", {}


# -------------------------------------------------------------------- gate 1
def _translation(ctx) -> TranslationSummary | None:
    text = ctx.read(ctx.paths.translation_json)
    return None if text is None else TranslationSummary.model_validate_json(text)


def _gate1(ctx) -> tuple[str, dict[str, str]]:
    summary = _translation(ctx)
    read = {"the translation report": ctx.paths.translation_report}
    if summary is None:
        return "the translation: no translation.json on the branch", read
    read["the plugin diff"] = summary.package_dir + "/"
    parts = []
    from bot.review.gate1 import stale_fidelity

    f = summary.fidelity
    stale = f is not None and f.measured and bool(stale_fidelity(ctx, summary))
    if stale:
        parts.append("agreement with the BLIS original measured on other plugin files than the branch holds")
    elif f is not None and f.measured:
        below = " (BELOW the floor)" if f.below_floor else ""
        if (chosen := f.floor_missed_by_choice) is not None:
            below = f" (below the floor only through the values set at gate 1: {chosen.agreement_without:.1%} without)"
        parts.append(
            f"decides like the BLIS original in {f.agreement:.1%} of {f.states} sampled states "
            f"(floor {f.floor_pct}){below}" + fidelity_admit.clause(f)
        )
    elif f is not None:
        parts.append("agreement with the BLIS original not measured")
    parts.append(f"{len(summary.signals)} signals, {len(summary.touched_gaps)} Map C gaps")
    if summary.untranslatable:
        parts.append(f"no llm-d source for {', '.join(summary.untranslatable)} (fallback used)")
    headline = f"the translation into `{summary.plugin_type}`: " + "; ".join(parts)
    advice = "" if stale else not_as_is(ctx, summary)  # no advice on a figure that does not describe the branch
    return headline + (f". {advice}" if advice else ""), read


def not_as_is(ctx, summary: TranslationSummary) -> str:
    """'RECOMMENDED: do not benchmark the plugin as is: ...' when a stock reference decides like the BLIS original
    more often than the plugin, by the translator's own tolerance (a scheduler's queue-scorer alone,
    ``translate.fidelity-below-reference``; an admitter's always-admit, ``fidelity_admit``); else ''.

    Found by an llm-d maintainer (s02: 74.1% against queue-scorer's 92.6%): the finding and the upstream patch's
    caution said it, the headline a person spends GPU hours on did not. The evolved arm is the baseline plus the
    plugin, so a plugin a stock one out-decides leaves the benchmark nothing of the program's to measure. A figure
    below the floor alone recommends nothing: its finding offers to accept a known gap (a02: 85% against a 95%
    floor, its disagreements in a class llm-d's traffic never sends), and only the reference tells whether the
    plugin carries anything of the program at all."""
    from bot.golang import scheduling_docs
    from bot.golang.plugin_summary import below_reference

    f = summary.fidelity
    if below_reference(f):
        check = f", `{scheduling_docs.CHECK_BELOW_REFERENCE}`"
        so = (
            "the evolved arm (the baseline profile plus this scorer) would measure the queue lengths given more "
            "weight, not the program"
        )
        then, after = ", and, as the finding suggests, " + scheduling_docs.reference_alternative(summary.signals), ""
    elif fidelity_admit.below_always_admit(f):
        check = ""
        so = "the benchmark would measure rejections the program does not make"
        then, after = fidelity_admit.BELOW_ALWAYS_ADMIT_THEN, f"; {fidelity_admit.BELOW_ALWAYS_ADMIT_WHERE}"
    else:
        return ""
    assert f is not None and f.reference_agreement is not None
    reject, change = _decision_commands(ctx)
    return (
        f"RECOMMENDED: do not benchmark the plugin as is: {f.reference} decides like the BLIS original more often than "
        f"the plugin ({f.reference_agreement:.1%} against {f.agreement:.1%}{check}), so {so}. Reject "
        f"it ({reject}){then}; or request changes ({change}) with a `param NAME: VALUE` line where a value the "
        f"plugin deploys causes it{after}"
    )


def _decision_commands(ctx) -> tuple[str, str]:
    """(reject, request changes) at gate 1 in the home's words: the issue's commands on GitHub (neither has a
    label), the CLI's with the run's --work locally (or W, said once, when the review does not know it)."""
    from bot.directives import WORK_SAID, work_argument

    if ctx.home == "github":
        return "`/reject <reason>`", "`/request-changes <reason>`"
    work = work_argument(ctx.work)
    said = "" if ctx.work else WORK_SAID
    return (
        f'`promote reject 1 --reason "..." --work {work}`',
        f'`promote request-changes 1 --reason "..." --work {work}`{said}',
    )


# -------------------------------------------------------------------- gate 2
def hypotheses_on_branch(ctx) -> list:
    from bot.hypotheses import hypothesis_order, is_hypothesis_file, parse_hypothesis

    out = []
    for path in ctx.list(ctx.paths.hypotheses_dir):
        if is_hypothesis_file(path):
            try:
                out.append(parse_hypothesis(ctx.read(path) or "", path))
            except RequestError:
                continue  # G2.parse raises it
    return sorted(out, key=hypothesis_order)


def hypothesis_rows(ctx) -> list[dict]:
    """Gate 2's table: one row per hypothesis, with the cells (workload @ rate) the plan will run it on; none for
    one the plan leaves out (no prediction, or not testable as translated), which a reader deciding on GPU spend
    would otherwise count."""
    from bot.bench.plan import PlanError, hypothesis_cells

    rows = []
    hypotheses = hypotheses_on_branch(ctx)
    set_aside = {h.id for h in planned_hypotheses(ctx, hypotheses) if h.prediction is None} if hypotheses else set()
    for h in hypotheses:
        planned = h.benchmarked and h.id not in set_aside
        try:
            cells = [c.label() for c in hypothesis_cells(h, ctx.request)] if planned else []
        except PlanError:
            cells = []
        if h.on_priority_mix:  # the plan's mix decides it, not a cell (bot.stats.shedding)
            what = DECIDED_ON_MIX
        else:
            what = (
                f"{h.prediction.metric} {h.prediction.direction.value}" if h.prediction else "not benchmarked"
            ) + f" on {', '.join(h.workloads)}"
        if h.prediction and not h.benchmarked:
            what += " (not testable as translated: not benchmarked)"
        elif h.prediction and h.id in set_aside:
            what += " (not measurable on these cells: no cells, no alpha)"
        rows.append({"id": h.id, "track": h.track.value, "claim": h.title, "what": what, "cells": cells})
    return rows


def _gate2(ctx) -> tuple[str, dict[str, str]]:
    hypotheses = hypotheses_on_branch(ctx)
    # The index file, not the directory: a directory is shown as a diff (the CLI, the PR's files on GitHub).
    read = {"the hypotheses index": ctx.paths.hypotheses_dir + "/README.md"}
    if not hypotheses:
        return "the hypotheses: none parse on the branch", read
    by_track = Counter(h.track for h in hypotheses)
    head = (
        f"the hypotheses: {len(hypotheses)} (Track A {by_track[Track.A]}, B {by_track[Track.B]}, C {by_track[Track.C]})"
    )
    return f"{head}; {_plan_cost(ctx, hypotheses)}", read


def _plan_cost(ctx, hypotheses) -> str:
    """What approving spends: the plan stage 4 will write, with its sequential design, since "at most" is the
    runner's default cap (``BenchmarkPlan.most_gpu_minutes``), which the design's horizons can put above the fixed
    plan's figure."""
    from bot.bench.mix_only import MIX_ONLY, is_mix_only
    from bot.bench.plan import PlanError, make_plan
    from bot.bench.units import gpu_minutes

    try:  # as stage 4 makes it: one plan, one mix, stage 5's set-aside applied
        plan = make_plan(ctx.request, planned_hypotheses(ctx, hypotheses))
    except PlanError as exc:
        return f"no plan: {exc}"
    rest = [h for h in plan.not_benchmarked if h not in plan.decided_on_mix]
    not_run = f", {len(rest)} not benchmarked" if rest else ""
    if plan.decided_on_mix:
        not_run += f", {len(plan.decided_on_mix)} decided on the priority mix ({', '.join(plan.decided_on_mix)})"
    if plan.not_measurable:
        not_run += f", {len(plan.not_measurable)} not measurable on these cells ({', '.join(plan.not_measurable)})"
    if is_mix_only(plan):  # no cell decides anything: the mix is all it runs (bot.bench.mix_only)
        return (
            f"approving plans {MIX_ONLY}: {gpu_minutes(plan.most_gpu_minutes)} GPU-minutes "
            f"({plan.priority_mix.runs} runs, the cap `promote bench run` applies unless given another, and the "
            f"figure stage 5 reports as planned){not_run}; the mix decides the shedding order (per-class admit rate)"
        )
    lead, _ = plan_cost_lines(plan)
    return (
        f"approving plans {len(plan.hypotheses)} benchmarked on {len(plan.cells)} cells{not_run}: {lead}"
        + _under_powered(plan)
        + _short_of_plan(plan)
    )


def cost_breakdown(ctx) -> list[str]:
    """Gate 2's headline cost broken down, one labelled figure a line (``plan_cost_lines``); none when there is no
    plan, or the plan is the priority mix alone (its one figure is the headline's)."""
    from bot.bench.mix_only import is_mix_only
    from bot.bench.plan import PlanError, make_plan

    hypotheses = hypotheses_on_branch(ctx)
    if not hypotheses:
        return []
    try:
        plan = make_plan(ctx.request, planned_hypotheses(ctx, hypotheses))
    except PlanError:
        return []
    return [] if is_mix_only(plan) else plan_cost_lines(plan)[1]


def plan_cost_lines(plan) -> tuple[str, list[str]]:
    """("expected X GPU-minutes, at most Y (the cap ...)", the figures behind them, one labelled line each).

    Found by a researcher's trial (trial4): one clause held the cap (1948), the fixed plan (1440), the priority mix
    (348) and the fixed plan with the mix (1788), and the person had to work out which was which. What a person
    decides on is what the benchmark is expected to spend and the most it may (``BenchmarkPlan.most_gpu_minutes``,
    the runner's default cap); the rest are the parts, each named. "Expected" is the design the runner follows: the
    sequential design's simulated spend at the planned effects (``SequentialPlan.expected_gpu_minutes``), or the
    fixed plan's runs; the priority mix runs whole either way."""
    from bot.bench.units import gpu_minutes as gm

    seq, pm = plan.sequential, plan.priority_mix
    mix = pm.gpu_minutes if pm else 0.0
    cells_expected = seq.expected_gpu_minutes if seq else plan.cost.gpu_minutes
    lead = (
        f"expected {gm(round(cells_expected + mix, 1))} GPU-minutes, at most {gm(plan.most_gpu_minutes)} (the cap "
        "`promote bench run` applies unless given another)"
    )
    fixed = f"{plan.cost.runs} runs, {gm(plan.cost.gpu_minutes)} GPU-minutes, {plan.ratio:.0%} of the naive plan"
    lines = []
    if seq:
        lines += [
            (
                f"the cells, sequential design (what `promote bench run` follows): expected "
                f"{gm(seq.expected_gpu_minutes)} GPU-minutes if every claim holds as planned, "
                f"{gm(seq.expected_gpu_minutes_null)} if the plugin changes nothing, {gm(seq.max_gpu_minutes)} at most "
                "(every cell to its horizon)"
            ),
            f"the cells, fixed plan (every run, no early stop; `promote bench run --fixed`): {fixed}",
        ]
    else:
        lines.append(f"the cells, fixed plan (what `promote bench run` follows: every run, no early stop): {fixed}")
    planned = "the figure stage 5 reports spending against"
    if not pm:
        lines[-1] += f"; {planned}"
        return lead, lines
    cells_most = max(plan.cost.gpu_minutes, seq.max_gpu_minutes if seq else 0.0)
    design = "the sequential design's expected" if seq else "the fixed plan's"
    return lead, [
        *lines,
        (
            f"the priority mix (per-class admission, its own experiment, run either way): {pm.runs} runs, "
            f"{gm(pm.gpu_minutes)} GPU-minutes"
        ),
        (
            f"expected = {design} {gm(cells_expected)} + the priority mix {gm(mix)}; at most = the cells' larger maximum "
            f"{gm(cells_most)} + the priority mix {gm(mix)}"
        ),
        f"planned, {planned}: {gm(plan.total_gpu_minutes)} GPU-minutes (the fixed plan's cells + the priority mix)",
    ]


def planned_hypotheses(ctx, hypotheses) -> list:
    """The hypotheses as stage 4 will plan them (``set_aside.for_plan`` on the branch's translation and
    EndpointPickerConfig); an unreadable translation is G2's to report, and the plan then takes them all."""
    from bot.bench.set_aside import for_plan

    try:
        summary = TranslationSummary.model_validate_json(ctx.read(ctx.paths.translation_json) or "")
    except ValidationError:
        return list(hypotheses)
    return for_plan(ctx.request, summary, ctx.read(ctx.paths.epp_config(summary.plugin_type)), hypotheses)


def _under_powered(plan) -> str:
    """'; none of the 9 reaches 80% power (at most 8%)' when most or all benchmarked hypotheses cannot reach the
    plan's power target within its repetitions (verify2 #5: s01's gate 2 approved 1,840 GPU-minutes of a plan
    expected to confirm almost nothing, said only in the plan's power table). From that table's own figures."""
    rows = plan.hypothesis_power
    short = [hp for hp in rows if not hp.decidable]
    if not rows or 2 * len(short) <= len(rows):
        return ""
    most = f"{max(hp.power for hp in short):.0%}"
    if len(short) == len(rows):
        return f"; none of the {len(rows)} reaches {plan.power:.0%} power (at most {most})"
    ids = ", ".join(hp.hypothesis for hp in short)
    return f"; {len(short)} of the {len(rows)} do not reach {plan.power:.0%} power ({ids}: at most {most})"


def _short_of_plan(plan) -> str:
    """The claims BLIS predicts short of the 2 x T_eff their power is planned at (sched-e2e #7: "86%" read alone
    beside a -10% prediction on a 10% floor, where the power at BLIS's own figure is about 12%)."""
    short = [(hp.hypothesis, hp.power, *hp.power_at_blis) for hp in plan.hypothesis_power if hp.power_at_blis]
    return "".join(
        f"; {hid}: BLIS predicts {m:+.0%} against a noise floor of {plan.t_eff:.0%}, so its {power:.0%} power "
        f"(planned at {math.copysign(2 * plan.t_eff, m):+.0%}) is about {at:.0%} at BLIS's figure"
        for hid, power, m, at in short
    )


# -------------------------------------------------------------------- gate 3
def _gate3(ctx) -> tuple[str, dict[str, str]]:
    read = {"the claims table": ctx.paths.verdicts_md}
    text = ctx.read(ctx.paths.verdicts_json)
    if text is None:
        return "the verdicts: none on the branch (no benchmark reports were judged)", read
    verdicts = {v["hypothesis_id"]: v["status"] for v in json.loads(text)}
    hyps = hypotheses_on_branch(ctx)
    tracks = {h.id: h.track for h in hyps}

    def count(track: Track) -> Counter:
        return Counter(s for hid, s in verdicts.items() if tracks.get(hid) is track)

    a, b, c = count(Track.A), count(Track.B), count(Track.C)
    parts = [
        "the verdicts: " + _claims_count(a, [r for r in json.loads(text) if tracks.get(r["hypothesis_id"]) is Track.A]),
        _regressions(hyps, json.loads(text), c)
        + _others(c, "refuted", "confirmed")
        + _indicated(hyps, json.loads(text))
        + _lost(json.loads(text)),
        f"Track B (sim-to-real gaps) {status_counts(VerdictStatus(s) for s in b.elements())}",
    ]
    from bot.bench.layout import flagged_unmeasured

    unmeasured = {arm for v in json.loads(text) for arm in flagged_unmeasured(v.get("flags") or [])}
    return "; ".join(parts + _arms_unused(ctx, unmeasured)), read


def _arms_unused(ctx, unmeasured: set[str]) -> list[str]:
    """ "no evolved report could be used (56 left out: EPP config differs ...)": the cause of every claim being
    inconclusive, which the counts alone hid (stage 5's testbed.json names the arms it used)."""
    from bot.bench.layout import TREATMENTS, arm_of

    try:
        used = set(json.loads(ctx.read(ctx.paths.testbed) or "{}").get("router_images") or {})
        left = [
            (arm_of(str(r["report"])), str(r["reason"]))
            for r in json.loads(ctx.read(ctx.paths.reports_not_used) or "[]")
        ]
    except (ValueError, TypeError, KeyError, AttributeError):
        return []
    out = []
    for arm in TREATMENTS:
        reasons = [why for a, why in left if a == arm]
        if reasons and arm not in used:
            kinds = {why.split(": ")[0] for why in reasons}
            why = kinds.pop() if len(kinds) == 1 else f"for {len(kinds)} different reasons"
            out.append(f"no {arm} report could be used ({len(reasons)} left out: {why}), so no claim is measured")
        elif arm in unmeasured:  # stage 5's flag: the results held no report of the arm at all
            out.append(f"the results hold no {arm} report, so no claim is measured")
    from bot.review.gate3 import priority_mix_gaps

    out += [f"the priority mix judged nothing ({reason})" for reason in priority_mix_gaps(ctx)]
    return out


def _lost(rows: list[dict]) -> str:
    """', and requests lost more often with the evolved plugin (sanity-random at 10 req/s: ...), which no count
    includes': the regression in lost requests gate 3's G3.requests-lost raises (``bot.render.lost``)."""
    from bot.model import Verdict
    from bot.render.lost import lost_summary

    said = lost_summary(Verdict.model_validate(r) for r in rows)
    return f", and {said}, which no count includes" if said else ""


def _regressions(hyps, rows: list[dict], c: Counter) -> str:
    """'Track C 1 regression of 6 guarded, 1 differs (better than the margin: C1)': an equivalence guard refuted
    by being better than its margin is no regression (``bot.model.better``), so the count leaves it out."""
    from bot.model import Verdict
    from bot.model.better import better_than_margin, differ_count

    verdicts = {r["hypothesis_id"]: Verdict.model_validate(r) for r in rows}
    better = [h.id for h in hyps if h.track is Track.C and better_than_margin(h, verdicts.get(h.id))]
    n = c["refuted"] - len(better)
    said = f"Track C {n} regression{'s' if n != 1 else ''} of {sum(c.values())} guarded"
    return said + (f", {differ_count(better)}" if better else "")


def _indicated(hyps, rows: list[dict]) -> str:
    """', 1 indicated but not significant after multiplicity control (C5)': guards whose whole interval lies beyond
    the margin, which the count of regressions leaves out (their refutation is not significant); gate 3's
    G3.against-indicated says more."""
    from bot.model import Verdict
    from bot.render.claims import indicated_cells

    verdicts = {r["hypothesis_id"]: Verdict.model_validate(r) for r in rows}
    ids = [h.id for h in hyps if h.track is Track.C and indicated_cells(h, verdicts.get(h.id))]
    return f", {len(ids)} indicated but not significant after multiplicity control ({', '.join(ids)})" if ids else ""


def _claims_count(a: Counter, rows: list[dict]) -> str:
    """'Track A 1 of 2 claims transferred (1 inconclusive)', or 'Track A claims: none judged: 1 not decided by
    benchmarks' when no claim was judged: the PR's Claims heading's words (``bot.render.claims.transfer_words``),
    never "transferred" for claims no benchmark judged."""
    from bot.model import Verdict
    from bot.render.claims import transfer_words
    from bot.stats.unjudged import rule_caveats, unjudged_reason

    verdicts = [Verdict.model_validate(row) for row in rows]
    unjudged = Counter(r for v in verdicts if (r := unjudged_reason(v)))
    caveat = rule_caveats(verdicts)  # a rule the cells never exercised: said beside the count, never left out
    words = transfer_words(sum(a.values()), a["confirmed"], dict(unjudged), caveat)
    if "transferred" not in words:
        return f"Track A claims: {words}"
    said = f"Track A {a['confirmed']} of {sum(a.values())} claims transferred" + _others(a, "confirmed")
    return said + (f", caveat: {caveat}" if caveat and a["confirmed"] else "")


def _others(counts: Counter, *shown: str) -> str:
    """`` (1 inconclusive, 1 refuted)``: the statuses the sentence did not name."""
    rest = [f"{n} {status}" for status, n in sorted(counts.items()) if status not in shown and n]
    return f" ({', '.join(rest)})" if rest else ""
