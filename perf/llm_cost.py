"""Print what the Claude author and reviewer cost in a promotion: share of input read from cache, totals per
stage and gate, and dollars (list-price estimates from the API's usage fields as saved in the state).

Usage:
    .venv/bin/python perf/llm_cost.py --work DIR     # a promotion run with --llm anthropic (real or fake API)
    .venv/bin/python perf/llm_cost.py                # rehearse the bundled example against the fake API first

Without --work the script starts the fake Anthropic API (tests/agents/fake_anthropic.py: usage computed from
the request's cache_control breakpoints, as the API documents), runs `promote run --llm anthropic --approve all`
on the bundled example with ANTHROPIC_BASE_URL pointing at it, and reports on that run. Exit 1 when less than
60% of input tokens were read from cache (the prompt layout broke caching).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.agents.cost import cost_lines, share, usd  # noqa: E402
from bot.model import PipelineState  # noqa: E402

TARGET = 0.60


def rehearse(work: Path) -> None:
    from bot.cli import main
    from tests.agents.fake_anthropic import FakeAnthropic

    example = ROOT / "examples" / "weighted-adaptive"
    with FakeAnthropic() as fake:
        os.environ.update(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="fake-key")
        code = main(
            [
                "run",
                str(example / "promotion.yaml"),
                "--results",
                str(example / "results"),
                "--allow-sample-data",
                "--work",
                str(work),
                "--approve",
                "all",
                "--llm",
                "anthropic",
                "--quiet",
            ]
        )
    if code != 0:
        sys.exit(f"the rehearsal failed with exit code {code}")


def report(work: Path) -> int:
    state_file = work / "state.json"
    if not state_file.is_file():
        sys.exit(f"{work}: no state.json; pass the --work directory of a promotion")
    usage = PipelineState.model_validate_json(state_file.read_text()).llm
    if not usage.calls:
        print("no Claude calls in this promotion (it ran with --llm offline)")
        return 0
    total = usage.totals()
    print(f"share of input tokens read from cache: {share(total)} (target >= {TARGET:.0%})")
    print(f"total: {total.calls} calls, {total.tokens:,} tokens, {usd(total.usd)}")
    print(
        f"{'step':<10} {'calls':>5} {'input':>9} {'cache write':>12} {'cache read':>11} {'output':>8} {'cached':>7} {'cost':>10}"
    )
    for step, t in usage.by_step().items():
        print(
            f"{step:<10} {t.calls:>5} {t.input_tokens:>9,} {t.cache_write_tokens:>12,} {t.cache_read_tokens:>11,} "
            f"{t.output_tokens:>8,} {share(t):>7} {usd(t.usd):>10}"
        )
    by_prompt: dict[str, int] = {}
    for c in usage.calls:
        by_prompt[c.prompt] = by_prompt.get(c.prompt, 0) + 1
    print("prompts: " + ", ".join(f"{p} x{n}" for p, n in sorted(by_prompt.items())))
    if len(cost_lines(usage)) and (total.cache_share or 0) < TARGET:
        print(f"below target: only {share(total)} of input tokens came from the cache")
        return 1
    return 0


def cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="work directory of a promotion run with --llm anthropic")
    args = parser.parse_args()
    if args.work:
        return report(args.work)
    with tempfile.TemporaryDirectory(prefix="llm-cost-") as tmp:
        rehearse(Path(tmp) / "work")
        return report(Path(tmp) / "work")


if __name__ == "__main__":
    sys.exit(cli())
