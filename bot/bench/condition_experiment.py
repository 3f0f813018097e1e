"""Track B fault treatments written out for llm-d-benchmark: one experiment per condition, next to the main one.

llm-d-benchmark runs every run treatment of an experiment under every setup treatment, so the cells
of a condition cannot share the main experiment: a setup treatment that carries the condition would
run the plain cells under it too, and a plain one runs the condition's cells without it, which is the
plain load under another name (consistency finding 2: someone who ran the committed plan by hand
measured no staleness and no pod failure, and stage 5 rightly left those runs out).

So each condition the plan's cells name gets ``<root>/<condition>/experiment.yaml`` with only its
cells. A condition that acts on the stand-up (``Condition.level == "setup"``: an EPP flag, another
model-server topology) is upstream's own vocabulary, a setup treatment override: its setup treatments
are ``<arm>+<condition>`` with the condition's overrides, which is what the evidence rules accept as the
record that it was applied (``bot.bench.conditions.condition_reason``). A condition that acts during a
run (a model-server pod deleted mid-run) has no place in the format: its experiments run the plain arms,
and their headers say so and how to run them so the reports record it (``promote bench run``, or by hand
while deleting the pod). By hand that is one file per arm, ``<root>/<condition>/<arm>.yaml``, each setting
its arm's keywords and ``condition:<name>``: llm-d-benchmark's ``experiment`` runs every setup treatment of a
file (no option picks one), and a setup treatment's ``description.keywords`` and ``--run-keywords`` set the
same variable (LLMDBENCH_DESCRIPTION_KEYWORDS), the file's replacing the command's. One file with both arms
and ``--run-keywords condition:<name>`` gave reports with the condition and no arm binding, or with the
binding and no condition: stage 5 refused every one (admission e2e finding 7).
"""

from __future__ import annotations

import re
from typing import Any

from bot.bench.conditions import Condition, condition_files, conditions_for, per_arm
from bot.bench.evidence import arm_keywords
from bot.bench.layout import RUN_TREATMENT_PATTERN, TREATMENTS, split_condition, with_condition
from bot.bench.plan import BASELINE_CONFIG_FILE, EVOLVED_CONFIG_FILE
from bot.bench.plan_model import BenchmarkPlan, Cell
from bot.bench.yaml_dump import dump_yaml
from bot.escape import yaml_comment
from bot.model import PromotionRequest, StackSpec
from bot.yaml_safe import load_yaml

CONFIG_FILES = {"baseline": BASELINE_CONFIG_FILE, "evolved": EVOLVED_CONFIG_FILE}


def plan_conditions(plan: BenchmarkPlan) -> list[str]:
    """The conditions the plan's cells name, in the order they first appear."""
    return list(dict.fromkeys(c for c in (split_condition(cell.workload)[1] for cell in plan.cells) if c))


def cells_under(plan: BenchmarkPlan, condition: str | None) -> list[Cell]:
    """The plan's cells run under ``condition`` (None: the plain cells of the main experiment)."""
    return [c for c in plan.cells if split_condition(c.workload)[1] == condition]


def experiment_files(root: str, workloads: list[str], stack: StackSpec) -> list[str]:
    """The committed experiments that run a hypothesis's workloads: the main one for plain workloads, a condition's
    own for the cells under it (only a condition the bot knows has them, so the path is always the bot's)."""
    available = conditions_for(stack)
    names = [split_condition(w)[1] for w in workloads]
    return list(
        dict.fromkeys(
            path
            for n in names
            for path in (condition_files(root, n, available[n]) if n in available else [f"{root}/experiment.yaml"])
        )
    )


def run_treatments(plan: BenchmarkPlan, cells: list[Cell]) -> list[dict[str, Any]]:
    """The run treatments of ``cells``, repetition-major (every cell once, then again while it needs more)."""
    by_cell = plan.repetitions_by_cell
    return [
        {
            "name": RUN_TREATMENT_PATTERN.format(workload=c.workload, rate=c.rate, n=n),
            "profile": f"{split_condition(c.workload)[0]}.yaml",
            "load.stages.0.rate": c.rate,
        }
        for n in range(1, plan.repetitions + 1)
        for c in cells
        if n <= by_cell[c]
    ]


def command(spec: str, path: str) -> str:
    """The llm-d-benchmark command that runs one committed experiment file. No ``--run-keywords``: the file's
    setup treatments set the keywords, and theirs replace the command's."""
    return f"llmdbenchmark --spec {spec} experiment -e {path} -p <namespace>"


def how_to_run(name: str, found: Condition | str | None, run: str) -> str:
    """What a person does to run one condition's experiments (``run``: its command, or where the commands are, as
    the page quotes them) so its reports record the condition."""
    if isinstance(found, Condition) and found.level == "setup":
        return (
            f"`{name}`: {found.what}. Its setup treatments `baseline+{name}` and `evolved+{name}` carry it "
            f"({', '.join(f'{k}: {v}' for k, v in found.overrides.items())}), so the reports record it "
            f"(setup-treatment-<arm>+{name}/). Run {run}, or `promote bench run` (it runs every cell of the plan)."
        )
    if isinstance(found, Condition):
        return (
            f"`{name}`: {found.what}. An experiment file cannot say this: llm-d-benchmark has no way to act during "
            "a run, so these experiments stand up the plain arms, one file per arm (llm-d-benchmark runs every "
            "setup treatment of a file). Run them with `promote bench run`: it applies the fault in every run and "
            "records in manifest.json whether it happened, the only record stage 5 takes for it (a report says "
            f"`condition:{name}` whether or not a pod was deleted, so runs without that manifest decide nothing "
            f"about the fault). The files ({run}) are what it runs, one arm at a time; each records its arm, EPP "
            f"config and `condition:{name}` in its reports' keywords."
        )
    why = found or "the bot knows no such condition"
    return f"`{name}`: not runnable on this cluster ({why}); nothing can apply it, so its cells decide nothing."


def _keywords(request: PromotionRequest, constants: dict[str, Any], arm: str, name: str) -> dict[str, list[str]]:
    """The setup treatment's ``description.keywords``: its arm, EPP config and condition (what binds its reports,
    ``bot.bench.evidence.arm_keywords``, and records the condition, ``bot.bench.conditions.condition_reason``)."""
    text = constants["router.epp.pluginsCustomConfig"][CONFIG_FILES[arm]]
    return {"description.keywords": [*arm_keywords(request.id, arm, load_yaml(text)), f"condition:{name}"]}


def _treatment(
    request: PromotionRequest, constants: dict[str, Any], arm: str, name: str, found: Condition | str | None
) -> dict[str, Any]:
    """One arm's setup treatment under condition ``name``: ``<arm>+<name>`` with the overrides of a setup-level
    condition, the plain ``<arm>`` for a run-level one (its own file), no keywords for one that cannot run."""
    setup_level = isinstance(found, Condition) and found.level == "setup"
    return {
        "name": with_condition(arm, name) if setup_level else arm,
        "router.epp.pluginsConfigFile": CONFIG_FILES[arm],
        **(found.overrides if setup_level and isinstance(found, Condition) else {}),
        **(_keywords(request, constants, arm, name) if isinstance(found, Condition) else {}),
    }


def render_condition_experiments(
    plan: BenchmarkPlan, request: PromotionRequest, constants: dict[str, Any], root: str
) -> tuple[dict[str, str], list[str]]:
    """(path -> text of each condition's experiment, the plan README's section on them; empty without any)."""
    names = plan_conditions(plan)
    if not names:
        return {}, []
    available = conditions_for(request.stack)
    # the README quotes the command in a code span: a spec that is not a plain path is left for the header to give
    spec = request.stack.spec if re.fullmatch(r"[A-Za-z0-9._/-]+", request.stack.spec) else "<spec>"
    files: dict[str, str] = {}
    readme = [
        "",
        "## Track B fault treatments (their own experiments)",
        "",
        (
            "llm-d-benchmark runs every run treatment under every setup treatment, so each condition's cells are an "
            "experiment of their own; `experiment.yaml` holds the plain cells only. By hand, each setup treatment is "
            "a stand-up of its own (`promote bench run` swaps the EPP on one stand-up where it can). Copy "
            f"`workloads/*.yaml` into llm-d-benchmark's `workload/profiles/{plan.harness}/` first."
        ),
        "",
    ]
    for name in names:
        found = available.get(name)
        paths = condition_files(root, name, found)
        cells = cells_under(plan, name)
        runs = run_treatments(plan, cells)
        treatments = [_treatment(request, constants, arm, name, found) for arm in TREATMENTS]
        groups = [[t] for t in treatments] if per_arm(found) else [treatments]
        for path, group in zip(paths, groups, strict=True):
            suffix = f"-{group[0]['name']}" if per_arm(found) else ""
            design = {
                "type": "paired_shared_baseline",
                "condition": name,
                "applied": "setup treatment override"
                if isinstance(found, Condition) and found.level == "setup"
                else "during each run, outside this file (see the header)",
                "run": {"replicates": {c.label(): plan.repetitions_by_cell[c] for c in cells}},
                "total_setup_treatments": len(group),
                "total_run_treatments": len(runs),
                "total_matrix": len(group) * len(runs),
            }
            experiment = {
                "experiment": {
                    "name": f"promotion-{request.id}-{plan.slug}-{name}{suffix}",
                    "harness": plan.harness,
                    "profile": runs[0]["profile"],
                },
                "design": design,
                "setup": {"constants": constants, "treatments": group},
                "reset_caches": True,
                "treatments": runs,
            }
            where = "the command below" + (
                "".join(
                    f" (this file runs the {group[0]['name']} arm; the {arm} arm's file is {other})"
                    for arm, other in zip(TREATMENTS, paths, strict=True)
                    if other != path
                )
                if per_arm(found)
                else ""
            )
            header = (
                f"# llm-d-benchmark experiment for promotion {request.id}, Track B condition {name}:\n"
                + "".join(f"# {yaml_comment(line)}\n" for line in _wrap(how_to_run(name, found, where)))
                + f"#   {yaml_comment(command(request.stack.spec, path))}\n"
                + f"# Copy {root}/workloads/*.yaml into workload/profiles/{plan.harness}/ first. Results land in the\n"
                "# workspace as setup-treatment-<setup treatment>/results/<harness>-<run treatment>-<ts>-<rand>/; give\n"
                "# stage 5 (--results) the directory that holds them and the main experiment's.\n"
                "# `design` is informational (llm-d-benchmark does not read it). Generated by the promotion bot.\n"
            )
            files[path] = header + dump_yaml(experiment)
        if per_arm(found):
            readme.append(f"- {how_to_run(name, found, 'the command for that arm')}")
            readme += [f"  - {arm}: `{command(spec, p)}`" for arm, p in zip(TREATMENTS, paths, strict=True)]
        else:
            readme.append(f"- {how_to_run(name, found, '`' + command(spec, paths[0]) + '`')}")
    return files, readme


def _wrap(text: str, width: int = 110) -> list[str]:
    """Comment lines of at most about ``width`` characters (the header stays readable in an editor)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines
