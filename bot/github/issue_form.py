"""The promotion issue form, read back: GitHub's rendered body → the same PromotionRequest as promotion.yaml.

GitHub renders a submitted form as ``### <label>`` sections, ``_No response_``
for an empty field and ``- [X]`` / ``- [ ]`` for checkboxes; ``render:`` fields
arrive inside a code fence. People edit the body afterwards, so the parser
matches sections by the labels of the template (the way github/issue-parser
does), tolerates reordering and extra text, and reports every problem at once
with the section it is in, so one ``needs-info`` comment lists all of them.

Pure: the caller passes the template, the (already sanitized) body and any
evolved source fetched for a reference; nothing here does I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from bot import yaml_safe
from bot.model import PromotionRequest, describe_error, slugify
from bot.model.request import reference_problems

#: Field ids of .github/ISSUE_TEMPLATE/promotion.yml that the parser reads (a test keeps them in step).
FIELDS = (
    "kind",
    "plugin_name",
    "source",
    "source_ref",
    "openevolve_run",
    "origin",
    "blis_version",
    "claims",
    "workloads",
    "evolved_for",
    "baselines",
    "fork",
    "base_branch",
    "consent",
)

NO_RESPONSE = "_No response_"

#: `owner/repo@<40-hex sha>:path`: a file at an immutable commit (a branch name could change under us).
SOURCE_REF = re.compile(
    r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100})@(?P<sha>[0-9a-f]{40}):"
    r"(?P<path>(?!/)(?!.*(?:^|/)\.\.(?:/|$))[A-Za-z0-9_./-]{1,300})$"
)

#: The standard scenarios behind the "Baseline scenarios to guard" checkboxes: the workload each adds
#: (unless the request defines one of that name) and the scenario guarding it.
STANDARD_BASELINES: dict[str, dict[str, Any]] = {
    "optimized-baseline": {
        "workload": {
            "name": "optimized-baseline",
            "description": "The llm-d optimized-baseline guide workload (150 prefix groups, 6000-token prompts), one rate.",
            "harness": "inference-perf",
            "profile": "guide_optimized-baseline_1",
            "rates": [10],
            "duration_s": 120,
        },
        "rate": 10,
    },
    "sanity-random": {
        "workload": {
            "name": "sanity-random",
            "description": (
                "Random short prompts without shared prefixes or sessions; the evolved adjustments should be inert."
            ),
            "harness": "inference-perf",
            "profile": "sanity_random",
            "rates": [10],
            "duration_s": 120,
            "overrides": {"api.streaming": True},
        },
        "rate": 10,
    },
}


class FormError(ValueError):
    """The issue cannot become a promotion request; ``problems`` name each section to fix."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class SourceRef:
    repo: str
    sha: str
    path: str

    def __str__(self) -> str:
        return f"{self.repo}@{self.sha}:{self.path}"


@dataclass
class FormFields:
    """The form as the parser read it: text per field id, ticked options per checkbox field."""

    text: dict[str, str]
    ticked: dict[str, list[str]]

    def get(self, field_id: str) -> str:
        return self.text.get(field_id, "")


def template_labels(template: dict) -> dict[str, tuple[str, str]]:
    """Field id -> (label, type) from the parsed template."""
    out = {}
    for item in template.get("body", []):
        if item.get("type") == "markdown" or "id" not in item:
            continue
        out[item["id"]] = (item["attributes"]["label"], item["type"])
    return out


def parse_sections(body: str, template: dict) -> FormFields:
    """Split the rendered body at the template's ``### <label>`` headings (any order, extra text tolerated)."""
    labels = template_labels(template)
    by_label = {label.strip().lower(): (fid, kind) for fid, (label, kind) in labels.items()}
    text: dict[str, str] = {}
    ticked: dict[str, list[str]] = {}
    current: tuple[str, str] | None = None
    lines: list[str] = []

    def flush() -> None:
        if current is None:
            return
        fid, kind = current
        value = "\n".join(lines).strip()
        if kind == "checkboxes":
            ticked[fid] = [m.group(1).strip() for m in re.finditer(r"^\s*[-*] \[[xX]\]\s+(.*)$", value, re.M)]
        text[fid] = "" if value == NO_RESPONSE else _unfence(value)

    for line in body.split("\n"):
        m = re.match(r"^###\s+(.+?)\s*$", line)
        if m and m.group(1).strip().lower() in by_label:
            flush()
            current, lines = by_label[m.group(1).strip().lower()], []
        elif current is not None:
            lines.append(line)
    flush()
    return FormFields(text=text, ticked=ticked)


def _unfence(value: str) -> str:
    """The content of a ``render:`` field's code fence (GitHub adds one around the whole value)."""
    m = re.match(r"^(`{3,}|~{3,})[^\n]*\n(.*?)\n?\1\s*$", value, re.S)
    return m.group(2) if m else value


def source_reference(fields: FormFields) -> SourceRef | None:
    """The ``owner/repo@sha:path`` reference, if the form gives one (and no pasted code)."""
    ref = fields.get("source_ref").strip()
    if not ref:
        return None
    m = SOURCE_REF.match(ref)
    if not m:
        raise FormError(
            [
                (
                    "Evolved program reference: expected owner/repo@<40-character commit sha>:path/to/file "
                    "(a full commit sha, so the file cannot change after you filed the issue)"
                )
            ]
        )
    return SourceRef(m.group("repo"), m.group("sha"), m.group("path"))


def request_title(title: str, number: int) -> str:
    """The promotion's title: the issue's, without the form's ``[promotion]`` prefix."""
    return re.sub(r"^\s*\[promotion\]\s*", "", title, flags=re.I).strip() or f"promotion {number}"


def filed_plugin_type(fields: FormFields, *, number: int, title: str) -> str:
    """The plugin type an issue asks for, as its request would name it (``PromotionRequest.plugin_type``), from the
    form alone: another promotion's issue is compared by it without reading (or fetching) its whole request."""
    return fields.get("plugin_name").strip() or slugify(request_title(title, number))


def request_from_form(
    fields: FormFields,
    *,
    number: int,
    title: str,
    repository: str,
    source_text: str | None = None,
    source_name: str | None = None,
    stack: dict[str, Any] | None = None,
    fidelity_floor: float | None = None,
) -> PromotionRequest:
    """The PromotionRequest this form describes. ``source_text`` is the fetched file when the form gives a reference;
    ``stack`` the GPU cluster's stack and ``fidelity_floor`` gate 1's agreement floor, from the repository's
    configuration (the people who approve gate 1 set how strict it is, not the researcher filing)."""
    problems: list[str] = []
    pasted = fields.get("source").strip()
    ref_given = bool(fields.get("source_ref").strip())
    if pasted and ref_given:
        problems.append("Evolved program: paste the code or give a reference, not both")
    if not pasted and not ref_given:
        problems.append("Evolved program: no code was pasted and no reference was given; provide one of them")
    code = (pasted.rstrip("\n") + "\n") if pasted else (source_text or "")
    name = source_name or f"issue-{number}-evolved.go"

    def load_yaml(field_id: str, label: str, default: Any) -> Any:
        raw = fields.get(field_id).strip()
        if not raw:
            return default
        try:
            return yaml_safe.load_yaml(raw)
        except yaml_safe.YamlInputError as exc:
            problems.append(f"{label}: {exc}; check the indentation")
        return default

    origin_raw = load_yaml("origin", "OpenEvolve metadata", {})
    claims = load_yaml("claims", "BLIS claims", [])
    workloads = load_yaml("workloads", "Workloads", [])
    for value, label, shape in ((claims, "BLIS claims", list), (workloads, "Workloads", list)):
        if not isinstance(value, shape):
            problems.append(f"{label}: expected a YAML list (each item starting with '- ')")
    if not isinstance(origin_raw, dict):
        problems.append("OpenEvolve metadata: expected best_program_info.json or a YAML mapping")
        origin_raw = {}
    origin = _origin(origin_raw, fields.get("openevolve_run").strip(), fields.get("blis_version").strip(), problems)

    workloads = list(workloads) if isinstance(workloads, list) else []
    baselines = []
    for option in fields.ticked.get("baselines", []):
        key = option.split(":", 1)[0].strip()
        if key not in STANDARD_BASELINES:
            problems.append(f"Baseline scenarios to guard: unknown option {key!r}; tick only the listed ones")
            continue
        std = STANDARD_BASELINES[key]
        if not any(isinstance(w, dict) and w.get("name") == key for w in workloads):
            workloads.append(dict(std["workload"]))
        baselines.append({"name": key, "workload": key, "rate": std["rate"]})
    if not fields.ticked.get("consent"):
        problems.append("Before you submit: tick the box that the program may be compiled and run in the sandbox")

    fork = fields.get("fork").strip() or repository
    raw: dict[str, Any] = {
        "id": str(number),
        "title": request_title(title, number),
        "kind": fields.get("kind").strip().lower() or None,
        "source": name,
        "origin": origin,
        "claims": claims if isinstance(claims, list) else [],
        "workloads": workloads,
        "baselines": baselines,
        "fork": {"repo": fork, "base_branch": fields.get("base_branch").strip() or "main"},
    }
    if stack is not None:  # the repository's GPU cluster (configuration), never the text
        raw["stack"] = stack
    if fidelity_floor is not None:
        raw["fidelity_floor"] = fidelity_floor
    if fields.get("plugin_name").strip():
        raw["plugin_name"] = fields.get("plugin_name").strip()
    if fields.get("evolved_for").strip():
        raw["evolved_for"] = fields.get("evolved_for").strip()
    if problems:
        raise FormError(problems)
    try:
        request = PromotionRequest.model_validate(raw)
    except ValidationError as exc:
        raise FormError(_sections_of(exc, raw)) from None
    return request.model_copy(update={"source_text": code})


_SECTION_OF_FIELD = {
    "kind": "Policy kind",
    "plugin_name": "Plugin name",
    "origin": "OpenEvolve metadata",
    "claims": "BLIS claims",
    "workloads": "Workloads",
    "evolved_for": "Workload the program was evolved on",
    "baselines": "Baseline scenarios to guard",
    "fork": "Target fork",
    "title": "the issue title",
}


def _sections_of(exc: ValidationError, raw: dict[str, Any]) -> list[str]:
    """Every problem pydantic found, each under its section, plus the names that point at no workload: the
    model checks those only once every field is valid, and the needs-info comment promises every fix at once."""
    crossed = [_in_section(p) for p in reference_problems(*_references(raw))]
    out = []
    for err in exc.errors():
        msg = str(err["msg"]).removeprefix("Value error, ")
        line = _in_section(msg) if not err["loc"] else _field_section(err)
        if line not in out and line not in crossed:
            out.append(line)
    return out + crossed


def _references(raw: dict[str, Any]) -> tuple[list[str], list[tuple[str, str]], list[tuple[str, str]], str | None]:
    """The names ``reference_problems`` compares, read from the form's raw values (which may be malformed)."""

    def pairs(items: Any, key: str) -> list[tuple[str, str]]:
        return [
            (str(i.get(key)), i["workload"])
            for i in items
            if isinstance(i, dict) and isinstance(i.get("workload"), str)
        ]

    names = [w["name"] for w in raw["workloads"] if isinstance(w, dict) and isinstance(w.get("name"), str)]
    return names, pairs(raw["claims"], "id"), pairs(raw["baselines"], "name"), raw.get("evolved_for")


def _in_section(msg: str) -> str:
    """A whole-request check's message, which starts with the field it is about, under that field's section."""
    key = re.match(r"[a-z_]+", msg)
    return f"{_SECTION_OF_FIELD.get(key.group() if key else '', 'the form')}: {msg}"


def _field_section(err) -> str:
    loc = err["loc"]
    section = _SECTION_OF_FIELD.get(str(loc[0]), "the form")
    detail = describe_error(err)
    if loc[0] in ("claims", "workloads") and len(loc) > 1:
        detail = detail.replace(f"field '{loc[0]}.{loc[1]}.", f"item {int(loc[1]) + 1}, field '")
    return f"{section}: {detail}"


def _origin(raw: dict, run: str, blis_version: str, problems: list[str]) -> dict[str, Any]:
    """Origin fields from best_program_info.json (OpenEvolve's own file) or from a YAML mapping of them."""
    if "metrics" in raw:  # OpenEvolve's best_program_info.json
        metrics, base = raw.get("metrics") or {}, raw.get("baseline_metrics") or {}
        out: dict[str, Any] = {
            "iteration": raw.get("iteration"),
            "program_id": raw.get("id"),
            "fitness": metrics.get("combined_score"),
        }
        if isinstance(base, dict) and base.get("combined_score") is not None:
            out["baseline_fitness"] = base["combined_score"]
    else:
        out = dict(raw)
    out["framework"] = out.get("framework", "openevolve")
    if run:
        out["run"] = run
    if blis_version:
        out["blis_version"] = blis_version
    if not out.get("run"):
        problems.append("OpenEvolve run: give the run name (e.g. blis_router/routing)")
    for key in ("iteration", "fitness"):
        if out.get(key) is None:
            problems.append(f"OpenEvolve metadata: {key} is missing (best_program_info.json has it)")
    return {k: v for k, v in out.items() if v is not None}
