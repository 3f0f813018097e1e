"""Print the benchmark plan's cost against the naive plan for the bundled example.

The naive plan is the seed's: one benchmark profile per hypothesis, each with its
own baseline and evolved stand-ups and 3 repetitions. Beside it: the fixed plan
(every cell run to its planned count) and the sequential plan (rounds, each cell
stopped once the hypotheses that need it are decided; its GPU-minutes are
expected values from simulating the round loop, with every claim at its planned
effect under the plan's noise model, with a steady evolved arm, and with no
effect at all). The acceptance lines: fixed plan <= 0.5 x naive; sequential
plan <= 0.25 x naive (expected, planned effects), with every decidable
hypothesis at >= 80% power under both designs. The script exits 1 otherwise.

Usage:
    .venv/bin/python perf/plan.py [--request PATH] [--hypotheses DIR] [--prior-cv CV]
        [--gpus-per-stack N] [--standup-minutes M] [--run-overhead-minutes M]

Without --hypotheses the hypotheses are generated the way stages 2–3 do it
(translate the evolved program, then generate Track A/B/C from its summary).
Repetitions are sized per (workload, rate) cell from the hypotheses it serves
(``bot.bench.sizing``); the script lists them with the power every hypothesis
gets, and --notes prints the plan's notes (under-powered hypotheses, budget).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bench.plan import make_plan  # noqa: E402
from bot.bench.plan_model import (  # noqa: E402
    DEFAULT_GPUS_PER_STACK,
    DEFAULT_RUN_OVERHEAD_MINUTES,
    DEFAULT_STANDUP_MINUTES,
)
from bot.model import PromotionRequest, RequestError  # noqa: E402

EXAMPLE = ROOT / "examples" / "weighted-adaptive" / "promotion.yaml"


def _hypotheses(request: PromotionRequest, hypotheses_dir: Path | None):
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_hypotheses, load_hypotheses

    if hypotheses_dir is not None:
        return load_hypotheses(hypotheses_dir)
    try:
        from bot.golang.analyze import analyze
        from bot.golang.source import load_evolved_source
        from bot.golang.translate import translate
    except ImportError as exc:
        raise SystemExit(f"cannot generate hypotheses without the translator ({exc}); pass --hypotheses DIR") from None

    d = load_dictionary()
    src = load_evolved_source(request.source_path)
    analysis = analyze(src, d, request.kind)
    summary = translate(src, analysis, d, plugin_type=request.plugin_type).summary
    return generate_hypotheses(request, summary, d)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--request", type=Path, default=EXAMPLE)
    ap.add_argument("--hypotheses", type=Path, default=None, help="stage 3 hypothesis documents (default: generate)")
    ap.add_argument("--prior-cv", type=float, default=None)
    ap.add_argument("--gpus-per-stack", type=int, default=DEFAULT_GPUS_PER_STACK)
    ap.add_argument("--standup-minutes", type=float, default=DEFAULT_STANDUP_MINUTES)
    ap.add_argument("--run-overhead-minutes", type=float, default=DEFAULT_RUN_OVERHEAD_MINUTES)
    ap.add_argument("--notes", action="store_true", help="print the plan's notes (power shortfalls, budget)")
    args = ap.parse_args(argv)

    try:
        request = PromotionRequest.load(args.request)
        hypotheses = _hypotheses(request, args.hypotheses)
        t0 = time.perf_counter()
        plan = make_plan(
            request,
            hypotheses,
            prior_cv=args.prior_cv,
            gpus_per_stack=args.gpus_per_stack,
            standup_minutes=args.standup_minutes,
            run_overhead_minutes=args.run_overhead_minutes,
        )
        elapsed = time.perf_counter() - t0
    except RequestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    p, n = plan.cost, plan.naive_cost
    benchmarked = len(plan.hypotheses)
    print(f"request: {args.request.relative_to(ROOT) if args.request.is_relative_to(ROOT) else args.request}")
    print(
        f"hypotheses: {len(hypotheses)} ({benchmarked} with a benchmark prediction); "
        f"cells: {len(plan.cells)}; repetitions per arm: up to {plan.repetitions}, sized per cell "
        f"(CV {plan.cv:.1%}, {plan.cv_source}; T_eff {plan.t_eff:.1%})"
    )
    for cr in plan.cell_repetitions:
        print(f"  {cr.cell.label():<24}{cr.repetitions:>4} reps  sized by {', '.join(cr.sized_by) or '-'}")
    print(
        f"assumptions: {plan.parameters.gpus_per_stack} GPUs/stack, {plan.parameters.standup_minutes:g} min per stand-up, "
        f"{plan.parameters.run_overhead_minutes:g} min overhead per run, naive {plan.parameters.naive_repetitions} reps"
    )
    print()
    print(f"{'':<8}{'plan':>12}{'naive':>12}{'ratio':>10}")
    for label, a, b in (
        ("standups", p.standups, n.standups),
        ("runs", p.runs, n.runs),
        ("GPU-min", p.gpu_minutes, n.gpu_minutes),
    ):
        print(f"{label:<8}{a:>12g}{b:>12g}{(a / b if b else 0):>10.3f}")
    seq = plan.sequential
    if seq is not None:
        print()
        print(f"{'GPU-minutes':<44}{'':>10}{'/ naive':>10}")
        rows = [
            ("naive plan", n.gpu_minutes),
            ("fixed plan", p.gpu_minutes),
            ("sequential, expected (planned effects)", seq.expected_gpu_minutes),
            ("  ... evolved arm 2x as noisy, outlier runs", seq.expected_gpu_minutes_noisy),
            ("sequential, expected (no effect at all)", seq.expected_gpu_minutes_null),
            ("sequential, at most (every cell to horizon)", seq.max_gpu_minutes),
        ]
        for label, v in rows:
            print(f"{label:<44}{v:>10g}{(v / n.gpu_minutes if n.gpu_minutes else 0):>10.3f}")
        print(
            f"sequential design: {seq.spending} spending, looks {sorted({tuple(x) for x in seq.looks.values()})}, "
            f"expected rounds {seq.expected_rounds:g}"
        )
    print()
    ok = plan.ratio <= 0.5
    print(f"GPU-minutes ratio plan/naive = {plan.ratio:.3f} ({'OK' if ok else 'FAIL'}: acceptance is <= 0.5)")
    if seq is not None:
        seq_ratio = seq.expected_gpu_minutes / n.gpu_minutes if n.gpu_minutes else 0.0
        seq_short = [h for h in seq.decidable if seq.power[h] < plan.power]
        seq_ok = seq_ratio <= 0.25 and not seq_short
        ok = ok and seq_ok
        print(
            f"sequential expected GPU-minutes / naive = {seq_ratio:.3f}, decidable hypotheses below "
            f"{plan.power:.0%}: {', '.join(seq_short) or 'none'} ({'OK' if seq_ok else 'FAIL'}: acceptance is <= 0.25)"
        )
    print()
    decidable = [h for h in plan.hypothesis_power if h.decidable]
    print(
        f"power (whole verdict rule at the planned effects; noise: CV {plan.cv:.1%}, evolved arm up to "
        f"{plan.evolved_noise_ratio:g}x as noisy, {plan.outlier_rate:.0%} outlier runs):"
    )
    print(f"  {'':<6}{'kind':<12}{'level':>9}{'power':>8}{'floor':>8}{'steady':>8}{'seq.':>8}")
    for h in plan.hypothesis_power:
        seq_power = f"{seq.power[h.hypothesis]:>8.1%}" if seq is not None else ""
        print(
            f"  {h.hypothesis:<6}{h.kind:<12}{h.level:>9.2g}{h.power:>8.1%}{h.power_floor:>8.1%}"
            f"{h.power_equal_noise:>8.1%}{seq_power}{'' if h.decidable else '  under-powered'}"
        )
    short = [h.hypothesis for h in decidable if h.power < plan.power]
    print(
        f"decidable: {len(decidable)} of {len(plan.hypothesis_power)}, every one at >= {plan.power:.0%} power: "
        f"{'yes' if not short else 'no (' + ', '.join(short) + ')'}"
    )
    if args.notes:
        print()
        for note in plan.notes:
            print(f"- {note}")
    print(stand_up_savings(request, plan))
    print(f"make_plan took {elapsed * 1000:.0f} ms")
    return 0 if ok else 1


def stand_up_savings(request: PromotionRequest, plan) -> str:
    """The fast EPP swap (`promote bench run`): stand-ups and GPU-minutes it saves against a stand-up per arm."""
    from bot.bench.run.schedule import standups_saved
    from bot.stages.implement_tests import BASELINE_EPP_CONFIG

    fast, slow, saved = standups_saved(plan, request, {"baseline": BASELINE_EPP_CONFIG, "evolved": BASELINE_EPP_CONFIG})
    return f"fast EPP swap: {fast} stand-up(s) instead of {slow}, {saved:g} GPU-minutes of stand-up saved"


if __name__ == "__main__":
    sys.exit(main())
