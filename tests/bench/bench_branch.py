"""A promotion branch past stage 4, as a real git checkout, for `promote bench run` tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bot import PROJECT_ROOT
from bot.bench.experiment import render_experiment
from bot.bench.plan import make_plan
from bot.bench.priority_plan import plan_priority_mix
from bot.bench.set_aside import for_plan
from bot.hypotheses import render_hypotheses
from bot.model import PromotionRequest, TranslationSummary
from tests.bench.test_bench_plan import EPP_BASELINE, EPP_EVOLVED, _h

SLUG = "evolved-adaptive-scorer"


def small_request(**over) -> PromotionRequest:
    raw = {
        "id": "7",
        "title": "Evolved adaptive scorer",
        "kind": "routing",
        "source": "best_program.py",
        "plugin_name": SLUG,
        "origin": {"run": "r", "iteration": 1, "fitness": 1.0},
        "workloads": [{"name": "spikes", "profile": "shared_prefix_synthetic", "rates": [10, 20], "duration_s": 1}],
        "evolved_for": "spikes",
        "stack": {"model": "m/x", "replicas": 2, "tensor_parallelism": 1},
    }
    raw.update(over)
    return PromotionRequest.model_validate(raw)


def hypotheses(extra: list | None = None):
    return [_h("A1", ["spikes"], "ttft_mean"), *(extra or [])]


def git(repo: Path, *argv: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *argv], capture_output=True, text=True, check=True).stdout.strip()


def make_branch(
    root: Path,
    request: PromotionRequest | None = None,
    hyps=None,
    signals: list[str] | None = None,
    older_mix=False,
    summary: TranslationSummary | None = None,
) -> tuple[Path, str]:
    """(benchmarks/promotion/<slug>/ in a committed checkout, its commit).

    ``signals``: stage 2's translation.json reads them (None: no translation.json). ``older_mix``: stage 4 was an
    older bot's, which planned a priority mix for a router that reads the class. ``summary``: stage 2's
    translation.json, and stage 4 plans the hypotheses after stage 5's set-aside on it (``set_aside.for_plan``).
    """
    request = request or small_request()
    hyps = hyps or hypotheses()
    repo = root / "branch"
    set_aside = summary is not None
    if signals is not None:
        summary = TranslationSummary(kind=request.kind, plugin_type=SLUG, package_dir=f"pkg/{SLUG}", signals=signals)
    if summary is not None:
        (repo / f"docs/promotion/{SLUG}").mkdir(parents=True)
        (repo / f"docs/promotion/{SLUG}/translation.json").write_text(summary.model_dump_json())
    (repo / "cmd/epp/runner").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "gomirror/llm-d-router/cmd/epp/runner/runner.go", repo / "cmd/epp/runner/runner.go")
    for name, text in render_hypotheses(hyps).items():
        p = repo / f"docs/promotion/{SLUG}/hypotheses/{name}"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    plan = make_plan(request, for_plan(request, summary, None, hyps) if set_aside else hyps)
    if older_mix:
        p = plan.parameters
        mix = plan_priority_mix(
            "a routing policy that decides by the request's class (its evolved logic reads SLOClass)",
            policy_kind=None,  # a plan from before the kind was recorded
            gpus_per_stack=p.gpus_per_stack,
            standup_minutes=p.standup_minutes,
            run_overhead_minutes=p.run_overhead_minutes,
        )
        plan = plan.model_copy(update={"priority_mix": mix})
    for rel, text in render_experiment(plan, request, EPP_BASELINE, EPP_EVOLVED).items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(repo.parent, "init", "-q", str(repo))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "stage 4")
    return repo / f"benchmarks/promotion/{SLUG}", git(repo, "rev-parse", "HEAD")
