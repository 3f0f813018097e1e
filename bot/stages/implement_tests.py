"""Stage 4, implement tests: the plugin's Go unit test and one lean benchmark plan.

The unit test comes from the same deterministic translation as stage 2 (same
program, same feedback), so it always matches the committed plugin. The plan
is an llm-d-benchmark experiment (baseline EPP config vs the evolved plugin as
setup treatments), inference-perf workload profiles, and the evaluation spec
stage 5 reads.
"""

from __future__ import annotations

from bot.model import PolicyKind, Stage, TranslationSummary
from bot.stages.context import StageContext, StageOutput
from bot.stages.hypothesize import load_hypotheses
from bot.stages.translate import is_test_file, translation

#: llm-d-router's own default scheduling (pkg/epp/config/loader/defaults.go at v0.10.0):
#: what the evolved plugin is compared against when a request names no other baseline.
BASELINE_EPP_CONFIG = """\
apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: kv-cache-utilization-scorer
- type: prefix-cache-scorer
- type: approx-prefix-cache-producer
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: queue-scorer
    weight: 2
  - pluginRef: kv-cache-utilization-scorer
    weight: 2
  - pluginRef: prefix-cache-scorer
    weight: 3
"""


def baseline_epp_config(kind: PolicyKind, evolved_config: str, plugin_type: str) -> str:
    """The baseline arm's EndpointPickerConfig. A router or scheduler is compared with llm-d's default scheduling
    (``BASELINE_EPP_CONFIG``); an admitter with its own config minus the plugin (``admission_docs.baseline_config``),
    so that the saturation detector its config sets (queue out of reach, KV cache at the largest threshold) is set
    alike in both arms and the arms differ in the plugin alone. An admitter config without the plugin (edited by hand) falls back to the default."""
    if kind is not PolicyKind.ADMISSION:
        return BASELINE_EPP_CONFIG
    from bot.golang.admission_docs import baseline_config
    from bot.yaml_safe import YamlInputError

    try:
        return baseline_config(evolved_config, plugin_type)
    except (ValueError, YamlInputError):
        return BASELINE_EPP_CONFIG


def run(ctx: StageContext) -> StageOutput:
    from bot.bench.experiment import render_experiment
    from bot.bench.mix_only import MIX_ONLY, is_mix_only
    from bot.bench.plan import make_plan
    from bot.bench.units import gpu_minutes

    t = translation(ctx, ctx.stage_feedback(Stage.TRANSLATE))
    files: dict[str, str | bytes] = {p: c for p, c in t.files.items() if is_test_file(p)}
    summary_t = ctx.read_model(ctx.paths.translation_json, TranslationSummary, written_by=Stage.TRANSLATE)
    evolved_cfg = ctx.read(ctx.paths.epp_config(summary_t.plugin_type)) or t.epp_config
    from bot.stages.run_validate import planned_hypotheses

    # Stage 5's set-aside, applied here: what it will not judge takes no alpha, power, cells or GPU time.
    hypotheses = planned_hypotheses(ctx, load_hypotheses(ctx))
    plan = make_plan(ctx.request, hypotheses)
    baseline_cfg = baseline_epp_config(summary_t.kind, evolved_cfg, summary_t.plugin_type)
    files.update(render_experiment(plan, ctx.request, baseline_cfg, evolved_cfg))
    ratio = plan.cost.gpu_minutes / plan.naive_cost.gpu_minutes if plan.naive_cost.gpu_minutes else 1.0
    # Stage 5 and the report name the plan by its figure in all (run-limits.json's planned_gpu_minutes): said here
    # too, or a planned priority mix makes "1440 as a fixed plan" and "1788 planned" read as two budgets.
    in_all = f"{gpu_minutes(plan.total_gpu_minutes)} in all with the priority mix, " if plan.priority_mix else ""
    if is_mix_only(plan):  # every benchmarked hypothesis set aside: the mix is the plan (bot.bench.mix_only)
        summary = (
            f"unit tests for {summary_t.plugin_type} and a benchmark plan of {MIX_ONLY}: {plan.priority_mix.runs} "
            f"runs, {gpu_minutes(plan.most_gpu_minutes)} GPU-minutes at most (the figure gate 2 approves and the "
            f"runner caps at); {len(plan.not_measurable)} hypotheses not measurable on these cells"
        )
    else:
        summary = (
            f"unit tests for {summary_t.plugin_type} and a benchmark plan: up to {plan.repetitions} repetitions per "
            f"cell, {plan.cost.runs} runs, {gpu_minutes(plan.cost.gpu_minutes)} GPU-minutes as a fixed plan ({ratio:.0%} "
            f"of the naive plan), {in_all}{gpu_minutes(plan.most_gpu_minutes)} at most (the figure gate 2 approves and "
            "the runner caps at)"
        )
    if ctx.feedback:
        summary += "; rerun with feedback"
    return StageOutput(files=files, summary=summary)
