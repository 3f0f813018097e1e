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
run (a model-server pod deleted mid-run) has no place in the format: its experiment runs the plain arms,
and its header says so and how to run it so the reports record it (``promote bench run``, or by hand
with ``--run-keywords condition:<name>`` while deleting the pod).
"""

from __future__ import annotations

import re
from typing import Any

from bot.bench.conditions import GAP_CONDITION, Condition, conditions_for
from bot.bench.evidence import arm_keywords
from bot.bench.layout import RUN_TREATMENT_PATTERN, TREATMENTS, split_condition, with_condition
from bot.bench.plan import BASELINE_CONFIG_FILE, EVOLVED_CONFIG_FILE, BenchmarkPlan, Cell
from bot.bench.yaml_dump import dump_yaml
from bot.escape import yaml_comment
from bot.model import PromotionRequest
from bot.yaml_safe import load_yaml

CONFIG_FILES = {"baseline": BASELINE_CONFIG_FILE, "evolved": EVOLVED_CONFIG_FILE}


def plan_conditions(plan: BenchmarkPlan) -> list[str]:
    """The conditions the plan's cells name, in the order they first appear."""
    return list(dict.fromkeys(c for c in (split_condition(cell.workload)[1] for cell in plan.cells) if c))


def cells_under(plan: BenchmarkPlan, condition: str | None) -> list[Cell]:
    """The plan's cells run under ``condition`` (None: the plain cells of the main experiment)."""
    return [c for c in plan.cells if split_condition(c.workload)[1] == condition]


def experiment_files(root: str, workloads: list[str]) -> list[str]:
    """The committed experiments that run a hypothesis's workloads: the main one for plain workloads, a condition's
    own for the cells under it (only a condition the bot knows has one, so the path is always the bot's)."""
    known = set(GAP_CONDITION.values())
    names = [split_condition(w)[1] for w in workloads]
    return list(
        dict.fromkeys(f"{root}/{n}/experiment.yaml" if n in known else f"{root}/experiment.yaml" for n in names)
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


def command(name: str, found: Condition | str | None, spec: str, path: str) -> str:
    """The llm-d-benchmark command that runs one condition's experiment (a run-level fault adds its keyword)."""
    run = f"llmdbenchmark --spec {spec} experiment -e {path} -p <namespace>"
    during_run = isinstance(found, Condition) and found.level != "setup"
    return f"{run} --run-keywords condition:{name}" if during_run else run


def how_to_run(name: str, found: Condition | str | None, run: str) -> str:
    """What a person does to run one condition's experiment (``run``: its command, as the page quotes it) so its
    reports record the condition."""
    if isinstance(found, Condition) and found.level == "setup":
        return (
            f"`{name}`: {found.what}. Its setup treatments `baseline+{name}` and `evolved+{name}` carry it "
            f"({', '.join(f'{k}: {v}' for k, v in found.overrides.items())}), so the reports record it "
            f"(setup-treatment-<arm>+{name}/). Run {run}, or `promote bench run` (it runs every cell of the plan)."
        )
    if isinstance(found, Condition):
        return (
            f"`{name}`: {found.what}. An experiment file cannot say this: llm-d-benchmark has no way to act during "
            "a run, so this experiment stands up the plain arms, and run as it is it measures the plain load. "
            "Run it with `promote bench run` (it applies the fault and records it), or by hand with "
            f"{run} while doing what the condition says in every run. Reports without the `condition:{name}` "
            "keyword are left out of the verdicts (condition not recorded), and so are reports without their "
            "arm's `epp-config:` keyword (by hand, one arm at a time: the keywords stage 5's refusal names)."
        )
    why = found or "the bot knows no such condition"
    return f"`{name}`: not runnable on this cluster ({why}); nothing can apply it, so its cells decide nothing."


def _keywords(
    request: PromotionRequest, constants: dict[str, Any], arm: str, name: str, setup_level: bool
) -> dict[str, list[str]]:
    """A setup-level condition's setup treatment records its arm, EPP config and condition as
    ``description.keywords`` (what binds its reports, ``bot.bench.evidence.arm_keywords``). A run-level one sets
    none: a treatment's keywords replace ``--run-keywords``, and its ``condition:`` keyword must come from the
    person who applied the fault (run it with ``promote bench run``, which records both)."""
    if not setup_level:
        return {}
    text = constants["router.epp.pluginsCustomConfig"][CONFIG_FILES[arm]]
    return {"description.keywords": [*arm_keywords(request.id, arm, load_yaml(text)), f"condition:{name}"]}


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
        home = f"{root}/{name}"
        cells = cells_under(plan, name)
        runs = run_treatments(plan, cells)
        setup_level = isinstance(found, Condition) and found.level == "setup"
        overrides = found.overrides if setup_level and isinstance(found, Condition) else {}
        treatments = [
            {
                "name": with_condition(arm, name) if setup_level else arm,
                "router.epp.pluginsConfigFile": CONFIG_FILES[arm],
                **overrides,
                **_keywords(request, constants, arm, name, setup_level),
            }
            for arm in TREATMENTS
        ]
        experiment = {
            "experiment": {
                "name": f"promotion-{request.id}-{plan.slug}-{name}",
                "harness": plan.harness,
                "profile": runs[0]["profile"],
            },
            "design": {
                "type": "paired_shared_baseline",
                "condition": name,
                "applied": "setup treatment override"
                if setup_level
                else "during each run, outside this file (see the header)",
                "run": {"replicates": {c.label(): plan.repetitions_by_cell[c] for c in cells}},
                "total_setup_treatments": len(treatments),
                "total_run_treatments": len(runs),
                "total_matrix": len(treatments) * len(runs),
            },
            "setup": {"constants": constants, "treatments": treatments},
            "reset_caches": True,
            "treatments": runs,
        }
        path = f"{home}/experiment.yaml"
        run = command(name, found, request.stack.spec, path)
        header = (
            f"# llm-d-benchmark experiment for promotion {request.id}, Track B condition {name}:\n"
            + "".join(f"# {yaml_comment(line)}\n" for line in _wrap(how_to_run(name, found, "the command below")))
            + f"#   {yaml_comment(run)}\n"
            + f"# Copy {root}/workloads/*.yaml into workload/profiles/{plan.harness}/ first. Results land in the\n"
            "# workspace as setup-treatment-<setup treatment>/results/<harness>-<run treatment>-<ts>-<rand>/; give\n"
            "# stage 5 (--results) the directory that holds them and the main experiment's.\n"
            "# `design` is informational (llm-d-benchmark does not read it). Generated by the promotion bot.\n"
        )
        files[f"{home}/experiment.yaml"] = header + dump_yaml(experiment)
        readme.append(f"- {how_to_run(name, found, '`' + command(name, found, spec, path) + '`')}")
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
