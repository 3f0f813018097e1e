"""`promote bench run | teardown | files`: the stage 4 plan on a GPU cluster through llm-d-benchmark (``bot.bench.run``).

Reads what gate 2 approved from a checkout of the promotion branch at the approved
commit (``benchmarks/promotion/<slug>/``: request.json, experiment.yaml with both arms'
EndpointPickerConfigs, evaluation.yaml, and the hypotheses), recomputes the plan the
same way stage 4 did and refuses to run if it differs from the committed one.

When evaluation.yaml carries a sequential design (``decision.sequential``), ``run`` runs it
in rounds (``bot.bench.run.rounds``) and stops each cell once its hypotheses are decided;
``--fixed`` runs every planned repetition instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from bot.model import RequestError


class BenchCliError(RequestError):
    """Input `promote bench` cannot use."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run the benchmark plan on a GPU cluster with llm-d-benchmark (stage 5's data)")
    bsub = p.add_subparsers(dest="bench_command", metavar="COMMAND")
    for name, helptext in (
        (
            "run",
            (
                "build the EPP image, stand up, run the cells, tear down (resumable, budgeted); a sequential plan "
                "runs in rounds and stops each cell once its hypotheses are decided"
            ),
        ),
        ("teardown", "tear down every stack the plan stands up (for a job that was killed outright)"),
    ):
        q = bsub.add_parser(name, help=helptext, description=helptext)
        q.add_argument(
            "bench_dir", type=Path, help="benchmarks/promotion/<slug>/ in a checkout of the promotion branch"
        )
        q.add_argument(
            "--commit",
            required=True,
            help="the promotion branch's commit to benchmark: the one stage 4 wrote after gate 2 "
            "(full or abbreviated sha; the checkout must be at it)",
        )
        q.add_argument("--results", type=Path, required=True, help="results directory (reports + manifest.json)")
        q.add_argument("--workspace", type=Path, required=True, help="llm-d-benchmark workspace root")
        q.add_argument("--namespace", "-p", required=True, help="Kubernetes namespace for the stack and the harness")
        q.add_argument("--spec", help="llm-d-benchmark specification (default: the request's stack.spec)")
        q.add_argument("--method", default="modelservice", help="llm-d-benchmark deploy method (-t)")
        q.add_argument("--fork", type=Path, help="git repository to build the EPP image from (default: the checkout)")
        q.add_argument(
            "--image-repo", default=None, help="registry/repository for the EPP image (default ghcr.io/<fork repo>-epp)"
        )
        q.add_argument(
            "--image",
            help="use this already pushed image (registry/repository:tag@sha256:...) instead of building; it must "
            "carry the tag experiment.yaml pins for the evolved arm, and the manifest records it as not built here",
        )
        q.add_argument("--container-runtime", default=os.environ.get("CONTAINER_RUNTIME", "docker"))
        q.add_argument(
            "--budget-gpu-minutes",
            type=float,
            help="GPU-minute cap (default: the plan's 'at most' that gate 2 approved: the fixed plan's GPU-minutes "
            "or the sequential design's maximum, whichever is larger, plus the priority mix's when planned)",
        )
        q.add_argument(
            "--fixed",
            action="store_true",
            help="run every cell to the fixed plan's repetitions even when evaluation.yaml has a sequential design "
            "(default: rounds; each round judges the reports so far and runs only what is still undecided)",
        )
        q.add_argument("--resume", action="store_true", help="continue a run: finished cells are kept, never redone")
        q.add_argument(
            "--dry-run",
            action="store_true",
            help="print the command lines instead of running them (sequential: the first round's only), with the "
            "budget applied at the estimates: it stops, exit 3, where the cap would stop the run",
        )
        q.add_argument("--arm-order", default="baseline,evolved", help="order of the arms on a stack")
        q.add_argument(
            "--no-fast-swap", action="store_true", help="a full stand-up per arm instead of swapping the EPP"
        )
        q.add_argument("--warmup-seconds", type=int, default=60, help="re-warm run after a stand-up or swap (0: none)")
        q.add_argument(
            "--cell-timeout-seconds",
            type=float,
            help="kill a cell's run after this long (default 3 x duration + 15 min)",
        )
        q.add_argument(
            "--estimate-standup-minutes", type=float, help="budget estimate per stand-up (default: the plan's)"
        )
        q.add_argument(
            "--estimate-run-overhead-minutes",
            type=float,
            help="budget estimate per run beyond its load (default: the plan's)",
        )
        q.add_argument(
            "--github-run",
            type=_run_id,
            help="the GitHub Actions run doing this benchmark (benchmark.yml passes its run id): the manifest "
            "records it, and stage 5 judges the results only as the answer of that run",
        )
        q.set_defaults(func=cmd_run if name == "run" else cmd_teardown, home=False)
    helptext = (
        "print, one per line, the results-relative files the run's manifest.json records (the manifest, reports, "
        "priority-mix results and metadata, set-aside files): what benchmark.yml's publish job commits"
    )
    q = bsub.add_parser("files", help=helptext, description=helptext)
    q.add_argument("results", type=Path, help="the results directory `bench run --results` wrote")
    q.set_defaults(func=cmd_files, home=False)


def _planned(root: Path, request, hypotheses) -> list:
    """The hypotheses as stage 4 planned them: stage 5's not-measurable set-aside read from the branch."""
    from pydantic import ValidationError

    from bot.stages.run_validate import branch_planned_hypotheses

    try:
        return branch_planned_hypotheses(root, request, hypotheses)
    except (OSError, ValueError, ValidationError) as exc:
        raise BenchCliError(
            f"{root}: the branch's translation.json or EndpointPickerConfig cannot be read ({exc}); check out the "
            "promotion branch as stage 4 left it"
        ) from None


#: The priority mix's experiment (``bot.bench.experiment.render_priority_mix``), beside experiment.yaml.
MIX_EXPERIMENT = "priority-mix/experiment.yaml"


def load_config(args):
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.mix_only import is_mix_only
    from bot.bench.plan import make_plan
    from bot.bench.run.commands import Target
    from bot.bench.run.runner import RunConfig
    from bot.hypotheses import load_hypotheses
    from bot.model import PromotionRequest
    from bot.yaml_safe import load_yaml

    bench = args.bench_dir
    # A mix-only plan (bot.bench.mix_only) has no cell experiment: the mix's carries the arms' configs instead.
    mix_only = not (bench / "experiment.yaml").is_file() and (bench / MIX_EXPERIMENT).is_file()
    for name in ("request.json", MIX_EXPERIMENT if mix_only else "experiment.yaml", "evaluation.yaml"):
        if not (bench / name).is_file():
            raise BenchCliError(f"{bench}: no {name}; pass benchmarks/promotion/<slug>/ of a branch past stage 4")
    request = PromotionRequest.model_validate(json.loads((bench / "request.json").read_text(encoding="utf-8")))
    root = _toplevel(bench)
    head = _git(root, "rev-parse", "HEAD")
    named = _full_sha(root, args.commit)
    if named != head:
        said = named[:12] if named else f"{args.commit!r} (no commit of this repository)"
        raise BenchCliError(
            f"the checkout is at {head[:12]} but --commit names {said}: check out the promotion branch's "
            "commit that stage 4 wrote after gate 2 and pass its sha (a moved branch is never benchmarked)"
        )
    args.commit = head  # the full sha goes into the manifest and the image tag
    hypotheses = load_hypotheses(root / f"docs/promotion/{request.slug}/hypotheses")
    plan = make_plan(request, _planned(root, request, hypotheses))  # as stage 4 made it
    committed = load_yaml((bench / "evaluation.yaml").read_text(encoding="utf-8"))
    ours = {c.cell.label(): c.repetitions for c in plan.cell_repetitions}
    if committed.get("repetitions_by_cell") != ours:
        raise BenchCliError(
            f"{bench}/evaluation.yaml plans {committed.get('repetitions_by_cell')} but this bot plans {ours} for the "
            "same hypotheses; re-run stage 4 with this version of the bot before benchmarking"
        )
    spec = load_evaluation_spec((bench / "evaluation.yaml").read_text(encoding="utf-8"))
    if spec.priority_mix != plan.priority_mix:

        def said(pm) -> str:
            return "no priority mix" if pm is None else "a priority mix"

        raise BenchCliError(
            f"{bench}/evaluation.yaml plans {said(spec.priority_mix)} but this bot plans "
            f"{said(plan.priority_mix)} for the same {request.kind.value} policy and hypotheses (only an admitter's "
            "shedding is judged on a mix); re-run stage 4 with this version of the bot before benchmarking"
        )
    seq = spec.decision.sequential
    sequential = seq is not None and not args.fixed
    if sequential and (plan.sequential is None or seq != plan.sequential.rule()):
        raise BenchCliError(
            f"{bench}/evaluation.yaml's sequential design differs from the one this bot plans for the same "
            "hypotheses; re-run stage 4 with this version of the bot before benchmarking (or pass --fixed)"
        )
    if mix_only != is_mix_only(plan):
        raise BenchCliError(
            f"{bench}: stage 4 wrote {'no cell experiment' if mix_only else 'a cell experiment'} but this bot plans "
            f"{len(plan.cells)} cells for the same hypotheses; re-run stage 4 with this version of the bot before "
            "benchmarking"
        )
    experiment = load_yaml((bench / (MIX_EXPERIMENT if mix_only else "experiment.yaml")).read_text(encoding="utf-8"))
    custom = experiment["setup"]["constants"]["router.epp.pluginsCustomConfig"]
    from bot.bench.plan import BASELINE_CONFIG_FILE, EVOLVED_CONFIG_FILE

    epp = {"baseline": custom[BASELINE_CONFIG_FILE], "evolved": custom[EVOLVED_CONFIG_FILE]}
    target = Target(
        spec=args.spec or request.stack.spec,
        namespace=args.namespace,
        workspace=args.workspace.resolve(),
        method=args.method,
        container_runtime=args.container_runtime,
    )
    arms = tuple(a.strip() for a in args.arm_order.split(","))
    default_budget = plan.most_gpu_minutes  # what gate 2 showed as "at most" and the plan README says
    return RunConfig(
        request=request,
        plan=plan,
        epp_configs=epp,
        results=args.results.resolve(),
        target=target,
        commit=args.commit,
        image_repo=args.image_repo or f"ghcr.io/{request.fork.repo.lower()}-epp",
        fork=(args.fork or root).resolve(),
        image=args.image,
        budget_gpu_minutes=args.budget_gpu_minutes if args.budget_gpu_minutes is not None else default_budget,
        resume=args.resume,
        dry_run=args.dry_run,
        arm_order=arms,
        fast_swap=not args.no_fast_swap,
        warmup_s=args.warmup_seconds,
        log=lambda line: print(line, file=sys.stderr, flush=True),
        cell_timeout_s=args.cell_timeout_seconds,
        run_overhead_minutes=args.estimate_run_overhead_minutes,
        standup_minutes=args.estimate_standup_minutes,
        spec=spec,
        fixed=args.fixed,
        plugin_files=_plugin_files(root, request.slug),
        github_run=args.github_run,
    )


def _run_id(text: str) -> int:
    if not re.fullmatch(r"[1-9][0-9]{0,18}", text.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a GitHub Actions run id (a positive whole number)")
    return int(text)


def _plugin_files(root: Path, slug: str) -> dict[str, str]:
    """The fingerprint of the plugin code in the checkout (empty when the branch has no translation summary)."""
    from bot.bench.run.manifest import plugin_code

    summary = root / "docs" / "promotion" / slug / "translation.json"
    try:
        package = json.loads(summary.read_text(encoding="utf-8"))["package_dir"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    base = root / package
    files = (
        {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(base.rglob("*.go"))} if base.is_dir() else {}
    )
    return plugin_code(files)


def _git(root: Path, *argv: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *argv], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BenchCliError(f"{root}: not a git checkout of the promotion branch ({proc.stderr.strip()})")
    return proc.stdout.strip()


def _full_sha(root: Path, commit: str) -> str | None:
    """The full sha an unambiguous (at least 7-hex) abbreviation names, or None."""
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        return None
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


def _toplevel(path: Path) -> Path:
    if not path.is_dir():
        raise BenchCliError(f"{path}: no such directory; pass benchmarks/promotion/<slug>/ of the promotion branch")
    return Path(_git(path, "rev-parse", "--show-toplevel"))


def cmd_run(args) -> int:
    from bot.bench.mix_only import MIX_ONLY
    from bot.bench.run.runner import BenchRunner
    from bot.bench.units import gpu_minutes

    cfg = load_config(args)
    outcome = BenchRunner(cfg).run()
    stream = sys.stdout if outcome.status in ("finished", "dry-run") else sys.stderr
    print(f"promote bench run: {outcome.status}: {outcome.message}", file=stream)
    if not cfg.dry_run:
        from bot.bench.run.runner import STEP_LOG

        print(f"each step's output (kept on this machine, never committed): {cfg.target.workspace / STEP_LOG}")
    if outcome.manifest is not None:
        m = outcome.manifest
        expected = ""
        if m.sequential is not None:
            from bot.bench.run.rounds import summary_lines

            for line in summary_lines(m.sequential):  # where each cell stopped and why
                print(line, file=stream)
            if m.sequential.expected_gpu_minutes is not None:
                expected = f", sequential plan expected {gpu_minutes(m.sequential.expected_gpu_minutes)}"
        from bot.bench import fault_runs

        for line in fault_runs.summary_lines(m):  # faults that never happened: no evidence about them
            print(line, file=stream)
        mix = ", priority mix included" if cfg.plan.priority_mix else ""
        if not cfg.plan.cells:  # a mix-only plan (bot.bench.mix_only)
            mix = f": {MIX_ONLY}"
        kept = f", {sum(r.ok for r in m.priority_mix)} priority-mix runs kept" if cfg.plan.priority_mix else ""
        print(
            f"GPU-minutes: {gpu_minutes(m.spent_gpu_minutes)} spent of {gpu_minutes(cfg.budget_gpu_minutes)} budgeted "
            f"(fixed plan {gpu_minutes(m.planned_gpu_minutes)}{mix}{expected}); {len(m.cells)} cells finished{kept}, "
            f"{len(m.rejected)} set aside",
            file=stream,
        )
    return {"finished": 0, "dry-run": 0, "budget": 3, "cancelled": 130}.get(outcome.status, 1)


def cmd_teardown(args) -> int:
    from bot.bench.run.teardown import teardown_all

    cfg = load_config(args)
    groups = teardown_all(cfg)
    print(f"promote bench teardown: tore down {', '.join(groups)}")
    return 0


def cmd_files(args) -> int:
    """The manifest's files that are in place under ``results``; a recorded file that is missing is named on
    stderr (stage 5 then reports the cell as missing), a path that would leave ``results`` or pass through a
    link stops the publish: the manifest came from the job that ran the evolved code."""
    from bot.bench.run import manifest as mf

    results = args.results
    try:
        manifest = mf.load(results)
    except ValueError as exc:
        raise BenchCliError(
            f"{results / mf.MANIFEST}: unreadable ({str(exc).splitlines()[0]}); nothing to publish"
        ) from None
    if manifest is None:
        raise BenchCliError(f"{results}: no {mf.MANIFEST}; pass the --results directory of a `promote bench run`")
    listed = manifest.published_files()
    for rel in listed:  # all checked before any is printed: the publish copies all of them or none
        if _unsafe(rel):
            raise BenchCliError(
                f"{mf.MANIFEST} lists {rel!r}, which is not a plain path inside the results directory; "
                "nothing was published: run the benchmark again"
            )
        parts = rel.split("/")
        if any(results.joinpath(*parts[: n + 1]).is_symlink() for n in range(len(parts))):
            raise BenchCliError(f"{rel} is (or lies under) a symbolic link: copy the file the run wrote in its place")
    for rel in listed:
        if (results / rel).is_file():
            print(rel)
        else:
            print(f"promote bench files: {rel} is recorded but not in {results}; left out", file=sys.stderr)
    return 0


def _unsafe(rel: str) -> bool:
    """Whether ``rel`` is anything but a relative path of plain names (no ``..``, no leading ``/``, no newline)."""
    parts = rel.split("/")
    return (
        not rel
        or rel.startswith("/")
        or "\\" in rel
        or any(c in rel for c in "\n\r\0")
        or any(p in ("", ".", "..") for p in parts)
    )
