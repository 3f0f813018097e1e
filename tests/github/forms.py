"""Issue bodies exactly as GitHub renders a submitted promotion form (the shape the bot parses)."""

from __future__ import annotations

import json

import yaml

from bot import PROJECT_ROOT

TEMPLATE_PATH = PROJECT_ROOT / ".github" / "ISSUE_TEMPLATE" / "promotion.yml"
EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive"


def template() -> dict:
    return yaml.safe_load(TEMPLATE_PATH.read_text())


def render_form(values: dict, ticked: dict[str, list[int]] | None = None) -> str:
    """GitHub's rendering: `### <label>`, a blank line, the value (fenced for render:), `_No response_` if empty."""
    ticked = ticked if ticked is not None else {"consent": [0]}
    parts = []
    for item in template()["body"]:
        if item["type"] == "markdown":
            continue
        attrs, fid = item["attributes"], item["id"]
        parts.append(f"### {attrs['label']}\n\n")
        if item["type"] == "checkboxes":
            lines = [
                f"- [{'X' if i in ticked.get(fid, []) else ' '}] {opt['label']}"
                for i, opt in enumerate(attrs["options"])
            ]
            parts.append("\n".join(lines) + "\n\n")
            continue
        value = values.get(fid, "")
        if not value:
            parts.append("_No response_\n\n")
        elif attrs.get("render"):
            parts.append(f"```{attrs['render']}\n{value}\n```\n\n")
        else:
            parts.append(f"{value}\n\n")
    return "".join(parts).rstrip() + "\n"


def example_values() -> dict:
    """The bundled example's request, as a researcher would fill the form."""
    req = yaml.safe_load((EXAMPLE / "promotion.yaml").read_text())
    workloads = [w for w in req["workloads"] if w["name"] not in ("optimized-baseline", "sanity-random")]
    return {
        "kind": "routing",
        "plugin_name": "evolved-adaptive-scorer",
        "source": (EXAMPLE / "best_program.py").read_text(),
        "openevolve_run": req["origin"]["run"],
        "origin": json.dumps(json.loads((EXAMPLE / "best_program_info.json").read_text()), indent=2),
        "blis_version": req["origin"]["blis_version"],
        "claims": yaml.safe_dump(req["claims"], sort_keys=False),
        "workloads": yaml.safe_dump(workloads, sort_keys=False),
        "evolved_for": req["evolved_for"],
    }


def example_body() -> str:
    return render_form(example_values(), {"baselines": [0, 1], "consent": [0]})
