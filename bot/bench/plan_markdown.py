"""The benchmark plan as people read it at gate 2: cost, what each hypothesis can expect, and why."""

from __future__ import annotations

from bot.bench.layout import CONDITION_SEP
from bot.bench.mix_only import MIX_ONLY, cap, is_mix_only, mix_only_why
from bot.bench.plan import MAX_REPETITIONS
from bot.bench.plan_model import BenchmarkPlan
from bot.bench.units import gpu_minutes
from bot.model.evidence import DECIDED_ON_MIX


def _reps_range(plan: BenchmarkPlan) -> str:
    counts = [c.repetitions for c in plan.cell_repetitions]
    lo, hi = min(counts), max(counts)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def _effects(plan: BenchmarkPlan, hid: str) -> str:
    effects = sorted({round(c.effect, 4) for c in plan.claims if c.hypothesis == hid})
    return ", ".join(f"{e * 100:+.0f}%" for e in effects)


def _row(label: str, minutes: float, naive: float) -> str:
    return f"| {label} | {gpu_minutes(minutes)} | {minutes / naive:.3f} |"


def _mix_cost(plan: BenchmarkPlan) -> list[str]:
    pm = plan.priority_mix
    if pm is None:
        return []
    return [
        f"| priority mix (its own experiment) | {pm.standups} | {pm.runs} | {gpu_minutes(pm.gpu_minutes)} |",
        f"| **in all** | {plan.cost.standups + pm.standups} | {plan.cost.runs + pm.runs} | {gpu_minutes(plan.total_gpu_minutes)} |",
    ]


def _mix_section(plan: BenchmarkPlan) -> list[str]:
    """What the priority mix measures, and how: people approve its GPU time at gate 2."""
    pm = plan.priority_mix
    if pm is None:
        return []
    cells = "The cells above send" if plan.cells else "Every workload of the request sends"
    classes = ", ".join(
        f"`{c.name}` (weight {c.weight:g}, priority {c.priority}, objective `{c.objective}`"
        + (", sheddable)" if c.sheddable else ")")
        for c in pm.classes
    )
    return [
        "",
        "## Priority mix (per-class admission)",
        "",
        (
            f"Why: {pm.reason}. {cells} every request at priority 0, so the plan adds "
            f"llm-d-benchmark's `{pm.harness}` harness as its own experiment (`{pm.workload}/experiment.yaml`): "
            f"{pm.repetitions} runs per arm of {pm.duration_s:g} s at {pm.rate:g} req/s, classes {classes}. "
            "The scenario declares one InferenceObjective per class (`router.inferenceObjectives`) so each "
            "header resolves to its priority. Each class's admit rate (2xx / requests) is compared between the arms "
            "(a request the EPP refuses counts as shed: on llm-d-router v0.10.0 HTTP 429 from its built-in "
            "admission, HTTP 500 from an Admitter plugin, whose error the director rewrites to errcommon.Internal; "
            "the harness keeps no response body, so such a 500 cannot be told from another server error and the "
            "verdict says how many there were); stage 5 reports it per class in verdicts.md and "
            "judges an admitter's shedding order (sheddable classes shed before critical) on it. "
            "The admitter only sheds at "
            "saturation: if upstream's load does not saturate this stack, raise the run treatments' "
            f"`load.rate_per_second` in `{pm.workload}/experiment.yaml` and the `rate-` in their names together "
            "(the name files the results)."
        ),
    ]


def _not_measurable(plan: BenchmarkPlan) -> list[str]:
    """A row for each hypothesis stage 5 sets aside (``BenchmarkPlan.not_measurable``), in place of a power: it
    takes no alpha and sizes no cell, so the levels above are the ones its verdicts are tested at."""
    rows = [f"| {hid} | — | — | — | — | — | — | {why.replace('|', '/')} |" for hid, why in plan.not_measurable.items()]
    if not rows:
        return []
    ids = ", ".join(plan.not_measurable)
    return [
        *rows,
        "",
        (
            f"{ids}: stage 5 sets them aside (the same rule, on the same translation and EndpointPickerConfig), so "
            "they take no share of alpha, size no cell and cost no GPU time; the levels above are the levels their "
            "verdicts are tested at."
        ),
    ]


def _mix_only_markdown(plan: BenchmarkPlan) -> str:
    """A plan of the priority mix and no cells (``bot.bench.mix_only``): no cell experiment, power or cell table,
    only the mix, its cost and the hypotheses set aside with their reason."""
    pm = plan.priority_mix
    assert pm is not None
    lines = [
        f"# Benchmark plan — promotion {plan.request_id} ({plan.slug})",
        "",
        (
            f"{MIX_ONLY[:1].upper()}{MIX_ONLY[1:]}: {mix_only_why(plan.not_measurable)}. No cell experiment is written "
            "(`experiment.yaml`): llm-d-benchmark would stand both arms up for no run."
        ),
        "",
        "## Cost",
        "",
        "| plan | stand-ups | runs | GPU-minutes |",
        "|---|---:|---:|---:|",
        f"| priority mix (its own experiment) | {pm.standups} | {pm.runs} | {gpu_minutes(pm.gpu_minutes)} |",
        "",
        (
            f"At most **{gpu_minutes(plan.most_gpu_minutes)} GPU-minutes**: the figure gate 2 approved and the cap "
            "`promote bench run` applies unless given `--budget-gpu-minutes` (the priority mix's GPU-minutes). "
            f"Assumptions: {plan.parameters.gpus_per_stack} GPUs per stack, {plan.parameters.standup_minutes:g} "
            f"min per stand-up + teardown, {plan.parameters.run_overhead_minutes:g} min overhead per run on top of "
            "the load duration."
        ),
        *_mix_only_set_aside(plan),
        *_mix_section(plan),
        *_not_benchmarked(plan),
    ]
    return "\n".join(lines) + "\n"


def _mix_only_set_aside(plan: BenchmarkPlan) -> list[str]:
    """The hypotheses a mix-only plan set aside, with why (none when a person excluded them all at gate 2)."""
    if not plan.not_measurable:
        return []
    return [
        "",
        "## Not measurable on these cells",
        "",
        "| hypothesis | why |",
        "|---|---|",
        *(f"| {hid} | {why.replace('|', '/')} |" for hid, why in plan.not_measurable.items()),
        "",
        (
            "Stage 5 sets them aside (the same rule, on the same translation and EndpointPickerConfig) and reports "
            "them not measurable on these cells: they take no share of alpha and no cell, and cost no GPU time."
        ),
    ]


def _not_benchmarked(plan: BenchmarkPlan) -> list[str]:
    """The hypotheses no cell decides: those the priority mix decides (``BenchmarkPlan.decided_on_mix``), said
    so, and the rest, which no run of the plan decides."""
    mixed = [h for h in plan.not_benchmarked if h in plan.decided_on_mix]
    rest = [h for h in plan.not_benchmarked if h not in plan.decided_on_mix]
    lines = ["", f"{cap(DECIDED_ON_MIX)}: {', '.join(mixed)}."] if mixed else []
    return lines + (["", f"Not decided by benchmarks: {', '.join(rest)}."] if rest else [])


def plan_markdown(plan: BenchmarkPlan) -> str:
    if is_mix_only(plan):
        return _mix_only_markdown(plan)
    p = plan.parameters
    lines = [
        f"# Benchmark plan — promotion {plan.request_id} ({plan.slug})",
        "",
        (
            f"One llm-d-benchmark experiment ({plan.harness}): setup treatments `baseline` and `evolved` "
            f"(one stand-up each), {len(plan.cells)} cells, {plan.cost.runs // 2} runs per treatment "
            f"({_reps_range(plan)} repetitions per cell). Every hypothesis reads the shared runs of its cells."
            + (
                " The cells of a Track B fault treatment are run as experiments of their own (the last section)."
                if any(CONDITION_SEP in c.workload for c in plan.cells)
                else ""
            )
        ),
        "",
        "## Cost",
        "",
        "| plan | stand-ups | runs | GPU-minutes |",
        "|---|---:|---:|---:|",
        f"| this plan | {plan.cost.standups} | {plan.cost.runs} | {gpu_minutes(plan.cost.gpu_minutes)} |",
        (
            f"| naive (one profile per hypothesis, {p.naive_repetitions} reps, own stand-ups) | "
            f"{plan.naive_cost.standups} | {plan.naive_cost.runs} | {gpu_minutes(plan.naive_cost.gpu_minutes)} |"
        ),
        *_mix_cost(plan),
        "",
        f"Ratio: **{plan.ratio:.3f}** of the naive plan's GPU-minutes"
        + (f" (budget: {plan.max_ratio:g}). " if plan.max_ratio is not None else ". ")
        + f"Assumptions: {p.gpus_per_stack} GPUs per stack, {p.standup_minutes:g} min per stand-up + teardown, "
        f"{p.run_overhead_minutes:g} min overhead per run on top of the load duration.",
        "",
        (
            f"At most **{gpu_minutes(plan.most_gpu_minutes)} GPU-minutes**: the figure gate 2 approved and the cap "
            "`promote bench run` applies unless given `--budget-gpu-minutes` (the fixed plan's GPU-minutes, or the "
            "sequential design's maximum below when larger"
            + (", plus the priority mix's, which it runs too" if plan.priority_mix else "")
            + ")."
        ),
        "",
        "## Power",
        "",
        (
            f"Noise assumed: baseline CV {plan.cv:.1%} ({plan.cv_source}), the evolved arm up to "
            f"{plan.evolved_noise_ratio:g}× as noisy, {_pct(plan.outlier_rate)} of runs dropped as outliers. "
            f"Noise floor T_eff = max(5%, 2 × CV) = {plan.t_eff:.1%}: a directional claim is planned at 2 × T_eff, "
            "an equivalence claim at no change, a no-worse claim at no change or at the improvement a directional "
            "claim predicts on the same cell and metric."
        ),
        "",
        (
            f"Multiple comparisons: {plan.decision.description}. {_alpha_split(plan)}; confirmed hypotheses pass "
            "their alpha on. Every power below is the chance that the whole verdict rule (test, noise "
            "floor, outlier rule, every cell) confirms the hypothesis at the effect beside it: *power* with every "
            "claim at its planned effect (simulated), *floor* when no other hypothesis is confirmed (exact), "
            "*steady* the simulated power if the evolved arm is as steady as the baseline and no run is an outlier."
        ),
        "",
        "| hypothesis | claim | planned effect | level | power | floor | steady | |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for hp in plan.hypothesis_power:
        status = "" if hp.decidable else "**under-powered**"
        if hp.power_at_blis is not None:
            m, at = hp.power_at_blis
            status = f"{status} BLIS predicts {m:+.0%}: power there {_pct(at)} (Notes)".strip()
        lines.append(
            f"| {hp.hypothesis} | {hp.kind} | {_effects(plan, hp.hypothesis)} | {hp.level:.2g} | {_pct(hp.power)} | "
            f"{_pct(hp.power_floor)} | {_pct(hp.power_equal_noise)} | {status} |"
        )
    lines += _not_measurable(plan)
    lines += _guards_section(plan)
    lines += [
        "",
        "## Cells",
        "",
        (
            f"A hypothesis on k cells needs each cell to confirm, so each gets power {_pct(plan.power)}^(1/k); a cell "
            "gets the largest need of the decidable hypotheses it serves, and at least what a directional claim "
            "would need (so its noise floor is well estimated and a regression can be refuted)."
        ),
        "",
        "| workload | rate (req/s) | repetitions | sized by | hypotheses |",
        "|---|---:|---:|---|---|",
    ]
    for cr in plan.cell_repetitions:
        c = cr.cell
        users = [h.id for h in plan.hypotheses if c in h.cells]
        lines.append(
            f"| {c.workload} | {c.rate:g} | {cr.repetitions} | {', '.join(cr.sized_by) or '—'} | {', '.join(users)} |"
        )
    seq = plan.sequential
    if seq is not None:
        naive = plan.naive_cost.gpu_minutes or 1.0
        lines += [
            "",
            "## Sequential design (what `promote bench run` follows and stage 5 replays)",
            "",
            (
                f"The cells run in rounds; after each round every claim is tested with {seq.spending}-type alpha "
                "spending over its cell's looks, and a cell stops once the decidable hypotheses on it are decided "
                "(a cell serving only under-powered ones stops once a regression beyond 2 × T_eff is ruled out). "
                f"Expected rounds {seq.expected_rounds:g}."
            ),
            "",
            "| GPU-minutes | value | / naive |",
            "|---|---:|---:|",
            f"| fixed plan | {gpu_minutes(plan.cost.gpu_minutes)} | {plan.cost.gpu_minutes / naive:.3f} |",
            _row("sequential, expected: planned effects, noise as assumed", seq.expected_gpu_minutes, naive),
            _row(
                "sequential, expected: planned effects, evolved arm twice as noisy, outlier runs",
                seq.expected_gpu_minutes_noisy,
                naive,
            ),
            _row("sequential, expected: no effect at all", seq.expected_gpu_minutes_null, naive),
            f"| sequential, at most | {gpu_minutes(seq.max_gpu_minutes)} | {seq.max_gpu_minutes / naive:.3f} |",
            "",
            "| cell | looks (runs per arm) | expected runs per arm |",
            "|---|---|---:|",
        ]
        for label, looks in seq.looks.items():
            lines.append(f"| {label} | {', '.join(map(str, looks))} | {seq.expected_runs.get(label, 0):g} |")
        lines += [
            "",
            "Simulated power of the sequential design, every claim at its planned effect, under the noise the plan "
            "is sized for: " + ", ".join(f"{h} {_pct(p)}" for h, p in seq.power.items()) + ".",
        ]
    lines += _mix_section(plan)
    lines += _not_benchmarked(plan)
    if plan.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in plan.notes]
    return "\n".join(lines) + "\n"


def _alpha_split(plan) -> str:
    """How the plan shares alpha, as stage 5 will (``bot.bench.sizing``): no weights means equal shares."""
    k, m = sum(h.decidable for h in plan.hypothesis_power), len(plan.hypothesis_power)
    reach = f"reach {_pct(plan.power)} power within {MAX_REPETITIONS} repetitions"
    if k == 0:
        return (
            f"No hypothesis can {reach}, so the plan gives no weights and stage 5 shares alpha {plan.alpha:g} "
            f"equally among all {m} (level {plan.alpha / max(m, 1):.2g} each)"
        )
    if k == m:
        return f"Every hypothesis can {reach}: the {m} share alpha {plan.alpha:g} equally"
    return (
        f"The {k} hypotheses that can {reach} share alpha {plan.alpha:g} equally, less a 10% reserve the "
        "under-powered ones share (so that a cluster quieter than assumed can still decide them)"
    )


def _guards_section(plan) -> list[str]:
    """Per regression guard (Track C), its chance of catching a regression: the power table is about confirming,
    and a guard catches a regression by being refuted (``bot.bench.guard_power``)."""
    guards = [h for h in plan.hypothesis_power if h.refute]
    if not guards:
        return []
    seq = plan.sequential.refute if plan.sequential is not None else {}
    double = f"{2 * plan.t_eff:.0%}"
    head = "| guard | metric | margin | refuted, regression = margin | refuted, regression = 2 × T_eff |"
    lines = [
        "",
        "### Regression guards",
        "",
        (
            "A guard (Track C) catches a regression by being refuted, so the power above (confirmation) is not its "
            "power against a regression. Simulated chance the verdict refutes each guard when its metric is truly "
            f"worse on all its cells by its margin or by 2 × T_eff = {double}, every other claim at its planned "
            "effect, under the noise the plan is sized for"
            + (" (all planned runs; sequential design after the slash)" if seq else "")
            + ". A regression of exactly the margin lies on the refutation test's boundary: an undecided guard "
            "does not rule it out."
        ),
        "",
        head,
        "|---|---|---:|---:|---:|",
    ]
    metric = {h.id: h.metric for h in plan.hypotheses}
    margin = {h.id: h.margin for h in plan.hypotheses}
    for hp in guards:
        cols = []
        for i in (0, 1):
            cell = _pct(hp.refute[i])
            if hp.hypothesis in seq:
                cell += f" / {_pct(seq[hp.hypothesis][i])}"
            cols.append(cell)
        lines.append(
            f"| {hp.hypothesis} | {metric[hp.hypothesis]} | {margin[hp.hypothesis]:.0%} | {cols[0]} | {cols[1]} |"
        )
    return lines
