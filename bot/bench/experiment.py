"""Stage 4's plan written out for llm-d-benchmark: the experiment, inference-perf profiles, run names.

Kept apart from the planning itself (``bot.bench.plan``): the plan decides which
runs are needed and how often; this module only says it in upstream's formats.
"""

from __future__ import annotations

import copy
import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from bot.bench.condition_experiment import cells_under, plan_conditions, render_condition_experiments, run_treatments
from bot.bench.conditions import condition_files, conditions_for
from bot.bench.evaluation_spec import default_evolved_image, render_evaluation_spec
from bot.bench.evidence import arm_keywords
from bot.bench.layout import split_condition
from bot.bench.plan import BASELINE_CONFIG_FILE, EVOLVED_CONFIG_FILE, RUN_TREATMENT_PATTERN, PlanError
from bot.bench.plan_markdown import plan_markdown
from bot.bench.plan_model import BenchmarkPlan, Cell
from bot.bench.priority_mix import LAYOUT as PRIORITY_MIX_LAYOUT
from bot.bench.priority_plan import inference_objectives, priority_mix_profile
from bot.bench.reports import LAYOUT, TREATMENTS
from bot.bench.yaml_dump import dump_yaml
from bot.escape import yaml_comment
from bot.model import PromotionRequest
from bot.yaml_safe import YamlInputError, load_yaml

#: Upstream inference-perf profiles, copied unchanged (bot/bench/profiles/NOTICE.md).
PROFILE_DIR = Path(__file__).resolve().parent / "profiles" / "inference-perf"


def known_profiles() -> list[str]:
    return sorted(p.name.removesuffix(".yaml.in") for p in PROFILE_DIR.glob("*.yaml.in"))


def upstream_profile(name: str) -> dict | None:
    """llm-d-benchmark's workload/profiles/inference-perf/<name>.yaml.in as a mapping, or None if not copied."""
    path = PROFILE_DIR / f"{name}.yaml.in"
    if not path.is_file():
        return None
    return copy.deepcopy(_parsed_profile(path.read_text(encoding="utf-8")))


@lru_cache(maxsize=32)
def _parsed_profile(text: str) -> dict:
    """A profile's text parsed once per process (the plan prices every cell from it; parsing is most of that),
    keyed on the text itself; callers get a deep copy, as they change what they get."""
    return load_yaml(text)


def _set_dotted(doc: dict, dotted: str, value: Any, where: str) -> None:
    """Set ``a.b.0.c`` in a profile (integer segments index lists, as upstream's apply_overrides does)."""
    parts = dotted.split(".")
    target: Any = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(target, list):
            if not part.lstrip("-").isdigit() or not -len(target) <= int(part) < len(target):
                raise PlanError(
                    f"{where}: override {dotted!r}: {part!r} is not an index of a {len(target)}-element list"
                )
            if last:
                target[int(part)] = value
            else:
                target = target[int(part)]
        elif isinstance(target, dict):
            if last:
                target[part] = value
            else:
                target = target.setdefault(part, {})
        else:
            raise PlanError(f"{where}: override {dotted!r}: {'.'.join(parts[:i])!r} is a value, not a mapping")


def workload_profile(request: PromotionRequest, name: str) -> dict:
    """The inference-perf profile of one workload: upstream's profile with one load stage and the overrides."""
    return profile_with_changes(request, name)[0]


def stage_seconds(request: PromotionRequest, name: str) -> float:
    """How long the load the plan renders for workload ``name`` runs: the sum of its profile's ``load.stages``
    durations once the request's overrides are applied (``load.stages.0.duration`` sets it as surely as
    ``duration_s`` does). The plan's GPU-minutes, the runner's per-cell timeout, fault time and budget, and the
    "cut short" yardstick (``bot.bench.load_binding``) all use it, so each speaks of the run that is sent;
    ``duration_s`` for a workload the planner renders no profile for (another harness)."""
    w = request.workload(name)
    try:
        stages = (workload_profile(request, name).get("load") or {}).get("stages")
    except PlanError:
        return float(w.duration_s)
    durations = [_seconds(s.get("duration")) for s in stages if isinstance(s, dict)] if isinstance(stages, list) else []
    total = sum(d for d in durations if d is not None)
    return total if total > 0 else float(w.duration_s)


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def profile_with_changes(request: PromotionRequest, name: str) -> tuple[dict, list[str]]:
    """(profile, what differs from upstream's): everything upstream sets and we do not change is kept."""
    w = request.workload(name)
    if w.harness != "inference-perf":
        raise PlanError(
            f"workload {name!r}: harness {w.harness!r}; the planner writes inference-perf profiles only — "
            "use harness: inference-perf"
        )
    doc = upstream_profile(w.profile)
    changes: list[str] = []
    if doc is None:
        if "data.type" not in w.overrides:
            raise PlanError(
                f"workload {name!r}: profile {w.profile!r} is not one the planner knows ({', '.join(known_profiles())}); "
                "give its data section in overrides (data.type: ..., ...)"
            )
        doc = copy.deepcopy(upstream_profile("sanity_random"))
        doc["data"] = {}
        changes.append(
            f"profile {w.profile!r} is not copied here: sanity_random's settings with the data section from overrides"
        )
    stages = doc["load"].get("stages") or []
    doc["load"]["stages"] = [{"rate": w.rates[0], "duration": w.duration_s}]
    changes.append(
        f"load.stages: {len(stages)} upstream stage(s) -> one stage of duration {w.duration_s} s at the run "
        "treatment's rate (load.stages.0.rate)"
    )
    for key in sorted(w.overrides):
        _set_dotted(doc, key, w.overrides[key], f"workload {name!r}")
        changes.append(f"{key}: {w.overrides[key]!r} (request override)")
    return doc, changes


def run_treatment_name(cell: Cell, n: int) -> str:
    return RUN_TREATMENT_PATTERN.format(workload=cell.workload, rate=cell.rate, n=n)


def stack_constants(request: PromotionRequest) -> dict[str, Any]:
    """The stack the plan's rates and GPU-minutes assume, pinned: a spec alone deploys its own model and replicas."""
    st = request.stack
    return {
        "model.name": st.model,
        "model.huggingfaceId": st.model,
        "decode.replicas": st.replicas,
        "decode.parallelism.tensor": st.tensor_parallelism,
        "decode.acceleratorType.labelKey": st.accelerator_label,
        "decode.acceleratorType.labelValue": st.accelerator,
    }


def _image(request: PromotionRequest, evolved_image: str | None) -> dict[str, str]:
    ref = evolved_image or default_evolved_image(request)
    if ":" not in ref.rsplit("/", 1)[-1] or "/" not in ref:
        raise PlanError(f"evolved_image {ref!r}: expected registry/repository:tag, e.g. ghcr.io/org/llm-d-router:tag")
    name, tag = ref.rsplit(":", 1)
    registry, repository = name.split("/", 1)
    return {"registry": registry, "repository": repository, "tag": tag}


def render_experiment(
    plan: BenchmarkPlan,
    request: PromotionRequest,
    epp_config_baseline: str,
    epp_config_evolved: str,
    *,
    evolved_image: str | None = None,
) -> dict[str, str]:
    """Branch-relative path -> text for the experiment, the workload profiles, the evaluation spec and a README.

    Both setup treatments run the *same* EPP image (built from the promotion branch, so it carries
    the baseline plugins too) with both configs mounted; they differ only in
    ``router.epp.pluginsConfigFile``, so the measured difference is the plugin config and nothing else.
    """
    for label, text in (("baseline", epp_config_baseline), ("evolved", epp_config_evolved)):
        try:
            doc = load_yaml(text)
        except YamlInputError as exc:
            raise PlanError(f"epp_config_{label}: {exc}; pass the EndpointPickerConfig text") from None
        if not isinstance(doc, dict) or doc.get("kind") != "EndpointPickerConfig":
            raise PlanError(
                f"epp_config_{label}: expected an EndpointPickerConfig document (kind: EndpointPickerConfig)"
            )
    if plan.slug != request.slug or plan.request_id != request.id:
        raise PlanError(f"plan is for request {plan.request_id}/{plan.slug}, not {request.id}/{request.slug}")

    root = f"benchmarks/promotion/{plan.slug}"
    workloads = sorted({split_condition(c.workload)[0] for c in plan.cells})
    files: dict[str, str] = {}
    for name in workloads:
        profile, changes = profile_with_changes(request, name)
        header = (
            f"# inference-perf profile for workload {name!r} of promotion {request.id} ({plan.slug}).\n"
            f"# Based on llm-d-benchmark workload/profiles/inference-perf/{yaml_comment(request.workload(name).profile)}.yaml.in;\n"
            "# every upstream setting not listed here is kept. Changed:\n"
            + "".join(f"#   - {yaml_comment(c)}\n" for c in changes)
            + "# Generated by the promotion bot.\n"
        )
        files[f"{root}/workloads/{name}.yaml"] = header + dump_yaml(profile)

    harness = plan.harness
    if "," in harness:
        raise PlanError(f"workloads use several harnesses ({harness}); one experiment runs one harness")
    image = _image(request, evolved_image)
    by_cell = plan.repetitions_by_cell
    # The plain cells only: a Track B condition's cells are an experiment of their own (bot.bench.condition_experiment).
    plain = cells_under(plan, None)
    runs = run_treatments(plan, plain)
    constants = {
        **stack_constants(request),
        "router.epp.image.registry": image["registry"],
        "router.epp.image.repository": image["repository"],
        "router.epp.image.tag": image["tag"],
        "router.epp.flags.allow-experimental-plugins": True,
        "router.epp.pluginsCustomConfig": {
            BASELINE_CONFIG_FILE: epp_config_baseline,
            EVOLVED_CONFIG_FILE: epp_config_evolved,
        },
    }
    experiment = {
        "experiment": {
            "name": f"promotion-{request.id}-{plan.slug}",
            "harness": harness,
            "profile": f"{workloads[0]}.yaml" if workloads else None,
        },
        "design": {
            "type": "paired_shared_baseline",
            "setup": {
                "factors": [
                    {
                        "name": "epp_config",
                        "key": "router.epp.pluginsConfigFile",
                        "levels": [BASELINE_CONFIG_FILE, EVOLVED_CONFIG_FILE],
                    }
                ]
            },
            "run": {
                "factors": [
                    {"name": "cell", "key": "profile+load.stages.0.rate", "levels": [c.label() for c in plain]},
                ],
                "replicates": {c.label(): by_cell[c] for c in plain},
                "order": "repetition-major: every cell once, then again (while it still needs repetitions), "
                "so drift spreads over all cells",
            },
            "total_setup_treatments": len(TREATMENTS),
            "total_run_treatments": len(runs),
            "total_matrix": len(TREATMENTS) * len(runs),
            "response_variables": sorted({h.metric for h in plan.hypotheses}),
            "power": {
                "alpha": plan.alpha,
                "power": plan.power,
                "cv": plan.cv,
                "cv_source": plan.cv_source,
                "t_eff": plan.t_eff,
                "repetitions": {c.label(): by_cell[c] for c in plan.cells},
                "max_repetitions": plan.repetitions,
            },
            "cost": {
                "plan": plan.cost.model_dump(),
                "naive": plan.naive_cost.model_dump(),
                "gpu_minutes_ratio": round(plan.ratio, 4),
            },
        },
        "setup": {
            "constants": constants,
            "treatments": [
                {
                    "name": arm,
                    "router.epp.pluginsConfigFile": config_file,
                    # llm-d-benchmark's reports record no EPP config; these keywords (run.keywords) bind them
                    "description.keywords": arm_keywords(request.id, arm, load_yaml(text)),
                }
                for arm, config_file, text in (
                    ("baseline", BASELINE_CONFIG_FILE, epp_config_baseline),
                    ("evolved", EVOLVED_CONFIG_FILE, epp_config_evolved),
                )
            ],
        },
        "reset_caches": True,
        "treatments": runs,
    }
    available = conditions_for(request.stack)
    header = (
        f"# llm-d-benchmark experiment for promotion {request.id}: {yaml_comment(request.title)}\n"
        f"# Copy {root}/workloads/*.yaml into workload/profiles/{harness}/, then:\n"
        f"#   llmdbenchmark --spec {yaml_comment(request.stack.spec)} experiment -e {root}/experiment.yaml -p <namespace>\n"
        f"# Results go to {LAYOUT};\n"
        f"# run treatment {RUN_TREATMENT_PATTERN} of setup treatment T -> T/<workload>/rate-<rate>/rep-<n>/.\n"
        + "".join(
            f"# Track B condition {name}: not in this file, see {', '.join(condition_files(root, name, available.get(name)))}"
            " and README.md.\n"
            for name in plan_conditions(plan)
        )
        + "# Each setup treatment's description.keywords (promotion, arm, EPP config digest) end up in its reports'\n"
        "# run.keywords and are what binds them to the arm at stage 5: keep them, and run both arms from this file.\n"
        + "# `design` is informational (llm-d-benchmark does not read it). Generated by the promotion bot.\n"
    )
    if plan.cells:  # a mix-only plan (bot.bench.mix_only) has none: upstream would stand both arms up for nothing
        files[f"{root}/experiment.yaml"] = header + dump_yaml(experiment)
    conditions, condition_readme = render_condition_experiments(plan, request, constants, root)
    files.update(conditions)
    if plan.priority_mix is not None:
        files.update(render_priority_mix(plan, request, constants, root, (epp_config_baseline, epp_config_evolved)))
    arms = {"baseline": epp_config_baseline, "evolved": epp_config_evolved}
    pinned = f"{image['registry']}/{image['repository']}:{image['tag']}"  # stage 5 binds evolved reports to it
    files[f"{root}/evaluation.yaml"] = render_evaluation_spec(plan, request, arms, evolved_image=pinned)
    files[f"{root}/README.md"] = plan_markdown(plan) + "".join(f"{line}\n" for line in condition_readme)
    # The GPU job's limit (benchmark.yml timeout-minutes): the plan's wall time, half again, plus an hour. A
    # sequential design may run past the fixed plan's count (its horizon), so its maximum counts if larger.
    # The priority mix, when planned, is its own experiment on the same GPUs: most_gpu_minutes includes it.
    # It also carries the cap `promote bench run` applies unless given another (gate 2's "at most"), beside the
    # fixed plan, so stage 5's gpu-time.json can say both even when the reports come without a run manifest.
    wall = plan.most_gpu_minutes / plan.parameters.gpus_per_stack
    limits = {
        "planned_gpu_minutes": plan.total_gpu_minutes,
        "budget_gpu_minutes": plan.most_gpu_minutes,
        "timeout_minutes": math.ceil(wall * 1.5 + 60),
    }
    files[f"{root}/run-limits.json"] = json.dumps(limits, indent=2, sort_keys=True) + "\n"
    # What `promote bench run` needs from the request (workloads, stack, ids), without the evolved source.
    files[f"{root}/request.json"] = request.model_dump_json(indent=2) + "\n"
    return dict(sorted(files.items()))


def render_priority_mix(
    plan: BenchmarkPlan, request: PromotionRequest, constants: dict, root: str, configs: tuple[str, str]
) -> dict[str, str]:
    """The priority-mix experiment (``bot.bench.priority_plan``): upstream's harness fixes one per experiment.

    The same two setup treatments and stack as the main experiment, plus the InferenceObjectives the classes
    name (``router.inferenceObjectives``) and, per arm, the ``description.keywords`` the main experiment's
    treatments carry (``promotion:<id>``, ``arm:<arm>``, ``epp-config:<digest>`` of ``configs``, baseline then
    evolved): priority-mix results record no EPP config, so those keywords are what binds each run to its arm
    and its config (``bot.bench.priority_mix.bind_with``).
    """
    pm = plan.priority_mix
    assert pm is not None
    profile, changes = priority_mix_profile(pm)
    home = f"{root}/{pm.workload}"
    files = {
        f"{home}/{pm.workload}.yaml": (
            f"# priority-mix profile of promotion {request.id} ({plan.slug}).\n"
            "# Based on llm-d-benchmark workload/profiles/priority-mix/priority_mix.yaml.in; every upstream setting\n"
            "# not listed here is kept. Changed:\n"
            + "".join(f"#   - {yaml_comment(c)}\n" for c in changes or ["nothing"])
            + "# Generated by the promotion bot.\n"
            + dump_yaml(profile)
        )
    }
    runs = [
        {"name": pm.run_treatment(n), "profile": f"{pm.workload}.yaml", "load.rate_per_second": pm.rate}
        for n in range(1, pm.repetitions + 1)
    ]
    experiment = {
        "experiment": {"name": f"promotion-{request.id}-{plan.slug}-{pm.workload}", "harness": pm.harness},
        "design": {
            "type": "paired_shared_baseline",
            "why": pm.reason,
            "classes": [c.model_dump() for c in pm.classes],
            "total_setup_treatments": len(TREATMENTS),
            "total_run_treatments": len(runs),
            "gpu_minutes": pm.gpu_minutes,
        },
        "setup": {
            "constants": {**constants, "router.inferenceObjectives": inference_objectives(pm)},
            "treatments": [
                {
                    "name": arm,
                    "router.epp.pluginsConfigFile": config,
                    "description.keywords": arm_keywords(request.id, arm, load_yaml(text)),
                }
                for arm, config, text in zip(
                    TREATMENTS, (BASELINE_CONFIG_FILE, EVOLVED_CONFIG_FILE), configs, strict=True
                )
            ],
        },
        "reset_caches": True,
        "treatments": runs,
    }
    header = (
        f"# llm-d-benchmark priority-mix experiment for promotion {request.id}: {yaml_comment(request.title)}\n"
        f"# Why: {yaml_comment(pm.reason)}.\n"
        f"# Copy {home}/{pm.workload}.yaml into workload/profiles/priority-mix/, then:\n"
        f"#   llmdbenchmark --spec {yaml_comment(request.stack.spec)} experiment -e {home}/experiment.yaml -p <namespace>\n"
        "# router.inferenceObjectives needs the chart's InferencePool (router.inferencePool.create: true).\n"
        f"# Results: {PRIORITY_MIX_LAYOUT}. Generated by the promotion bot.\n"
    )
    files[f"{home}/experiment.yaml"] = header + dump_yaml(experiment)
    return files
