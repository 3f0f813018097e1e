"""What the benchmark ran on, as the llm-d-benchmark v0.2 reports record it.

A verdict holds for one testbed: a model on some accelerators behind an engine
image, driven by one harness. People reading a report ask that first (Conbench
names the machines under its headline), and two testbeds under one verdict are
a finding in themselves: the arms may not have been measured alike. So stage 5
keeps, for every report it used, what its ``scenario`` says (the inference-engine
components of ``scenario.stack``, the harness in ``scenario.load.standardized``,
the cluster id ``run.cid``), and the report names every testbed it found.

Nothing is guessed: a field a report does not carry is ``None`` here and "not
recorded" on the page. The router (EPP) image is kept apart from the testbed,
since the two arms differ there by design.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

from bot.escape import md

NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Engine:
    """One inference-engine component (``scenario.stack[].standardized`` of kind ``inference_engine``)."""

    role: str | None = None
    replicas: int | None = None
    model: str | None = None
    accelerator: str | None = None
    accelerators_per_replica: int | None = None  # ``accelerator.count``: tp x dp per engine instance upstream
    tp: int | None = None
    tool: str | None = None
    image: str | None = None  # ``tool_version``: the engine image for llm-d stacks


@dataclass(frozen=True)
class Testbed:
    engines: tuple[Engine, ...] = ()
    harness: str | None = None
    harness_version: str | None = None
    cluster: str | None = None  # run.cid


def _str(x: Any) -> str | None:
    return None if x is None or x == "" else str(x)


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _mapping(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def engine_of(std: dict) -> Engine:
    accel = _mapping(std.get("accelerator"))
    return Engine(
        role=_str(std.get("role")),
        replicas=_int(std.get("replicas")),
        model=_str(_mapping(std.get("model")).get("name")),
        accelerator=_str(accel.get("model")),
        accelerators_per_replica=_int(accel.get("count")),
        tp=_int(_mapping(accel.get("parallelism")).get("tp")),
        tool=_str(std.get("tool")),
        image=_str(std.get("tool_version")),
    )


def testbed_of(doc: dict) -> Testbed:
    """The testbed one validated report records (fields it lacks are None)."""
    scenario = _mapping(doc.get("scenario"))
    stack = scenario.get("stack") if isinstance(scenario.get("stack"), list) else []
    engines = tuple(
        sorted(
            (
                engine_of(_mapping(c.get("standardized")))
                for c in stack
                if isinstance(c, dict) and _mapping(c.get("standardized")).get("kind") == "inference_engine"
            ),
            key=lambda e: tuple("" if v is None else str(v) for v in asdict(e).values()),
        )
    )
    load = _mapping(_mapping(scenario.get("load")).get("standardized"))
    return Testbed(
        engines=engines,
        harness=_str(load.get("tool")),
        harness_version=_str(load.get("tool_version")),
        cluster=_str(_mapping(doc.get("run")).get("cid")),
    )


#: Where a report's router image was read from, as the page says it.
FROM_STACK = "scenario.stack"
FROM_KEYWORD = "run.keywords epp-image"


def router_image_from(doc: dict) -> tuple[str | None, str | None]:
    """The EPP's image as the report records it, and where it was read from: the component that carries the
    EndpointPickerConfig (``tool_version``) when the report has one, else the runner's ``epp-image:`` run keyword.
    llm-d-benchmark's own reports have no ``scenario.stack`` (``bot.bench.evidence``), so without the keyword
    every real report showed no router image. (None, None) when neither is there."""
    from bot.bench.evidence import epp_component, keyword_value

    comp = epp_component(doc) or {}
    if image := _str(_mapping(comp.get("standardized")).get("tool_version")):
        return image, FROM_STACK
    if image := _str(keyword_value(doc, "epp-image")):
        return image, FROM_KEYWORD
    return None, None


def router_image_of(doc: dict) -> str | None:
    """The EPP's image as the report records it (``router_image_from`` without where it was read from)."""
    return router_image_from(doc)[0]


@dataclass(frozen=True)
class ReportTestbed:
    """What one used report says it ran on, under which arm it was filed, and where (results-relative)."""

    arm: str
    testbed: Testbed
    router_image: str | None = None
    report: str = ""
    router_image_source: str | None = None  # FROM_STACK or FROM_KEYWORD


def record(arm: str, doc: dict, report: str = "") -> ReportTestbed:
    image, source = router_image_from(doc)
    return ReportTestbed(
        arm=arm, testbed=testbed_of(doc), router_image=image, report=report, router_image_source=source
    )


#: (workload, rate) -> the hypotheses with a measured cell there: which verdicts a report of that cell enters.
CellHypotheses = Mapping[tuple[str, float], Sequence[str]]


def _cell_of(report: str) -> tuple[str, float] | None:
    from bot.bench.errors import ReportError
    from bot.bench.layout import parse_layout

    try:
        key = parse_layout(PurePosixPath(report))
    except ReportError:
        return None
    return key.workload, round(key.rate, 9)


def _entered(records: list[ReportTestbed], cells: CellHypotheses) -> dict:
    """The reports of one testbed by path, and the cells they enter with the hypotheses judged there: a testbed
    other than the one most reports ran on must say which verdicts it is part of (one report of another engine
    image sat under the headline's claim, and nothing said so)."""
    by_cell: dict[tuple[str, float], int] = {}
    for r in records:
        if (cell := _cell_of(r.report)) is not None:
            by_cell[cell] = by_cell.get(cell, 0) + 1
    wanted = {(w, round(rate, 9)): list(ids) for (w, rate), ids in cells.items()}
    return {
        "report_paths": sorted(r.report for r in records if r.report),
        "cells": [
            {"workload": w, "rate": rate, "reports": n, "hypotheses": sorted(wanted.get((w, rate), []))}
            for (w, rate), n in sorted(by_cell.items())
        ],
    }


# --------------------------------------------------------------------------
# The summary stage 5 commits (JSON) and stage 6 reads back
# --------------------------------------------------------------------------


def summarize(records: list[ReportTestbed], cells: CellHypotheses | None = None) -> dict:
    """JSON-ready: every distinct testbed with how many reports and which arms ran on it, most reports first;
    the router images each arm recorded, and where each was read from (``router_image_sources``). Every testbed after the first (the one most reports ran on) also names
    its reports (``report_paths``) and the cells they enter with the hypotheses judged there (``cells``, from
    ``cells``: (workload, rate) -> hypothesis ids)."""
    counts: Counter[Testbed] = Counter(r.testbed for r in records)
    arms: dict[Testbed, set[str]] = {}
    for r in records:
        arms.setdefault(r.testbed, set()).add(r.arm)
    ordered = sorted(counts, key=lambda t: (-counts[t], repr(t)))
    others = {t: _entered([r for r in records if r.testbed == t], cells or {}) for t in ordered[1:]}
    routers: dict[str, set[str]] = {}
    sources: dict[str, set[str]] = {}
    for r in records:
        routers.setdefault(r.arm, set())
        if r.router_image:
            routers[r.arm].add(r.router_image)
            sources.setdefault(r.router_image, set()).add(r.router_image_source or FROM_STACK)
    return {
        "reports": len(records),
        "testbeds": [
            {
                **asdict(t),
                "engines": [asdict(e) for e in t.engines],
                "reports": counts[t],
                "arms": sorted(arms[t]),
                **others.get(t, {}),
            }
            for t in ordered
        ],
        "router_images": {arm: sorted(images) for arm, images in sorted(routers.items())},
        "router_image_sources": {image: sorted(where) for image, where in sorted(sources.items())},
    }


def entered_text(group: dict) -> str:
    """Plain text: 'reports evolved/load-spikes/rate-30/rep-1/r.yaml; they enter load-spikes @ 30 req/s (1 report,
    judged for A1, B1)' for a testbed ``summarize`` named the reports of; '' for one it did not (the first)."""
    paths = [str(p) for p in group.get("report_paths") or []]
    cells = [c for c in group.get("cells") or [] if isinstance(c, dict)]
    if not paths and not cells:
        return ""
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")

    def cell(c: dict) -> str:
        ids = ", ".join(str(i) for i in c.get("hypotheses") or [])
        n = c.get("reports", 0)
        judged = f"judged for {ids}" if ids else "no hypothesis judged there"
        return (
            f"{c.get('workload')} @ {float(c.get('rate') or 0):g} req/s ({n} report{'' if n == 1 else 's'}, {judged})"
        )

    return f"reports {shown or 'not recorded'}; they enter {'; '.join(cell(c) for c in cells) or 'no cell'}"


#: How a verdict's flag starts when a report of a testbed other than the main one enters one of its cells.
OTHER_TESTBED = "another testbed"


def other_testbed_flags(summary: dict) -> dict[str, list[str]]:
    """Hypothesis id -> its flags for the reports of another testbed that enter its cells ("another testbed: 1
    evolved report at load-spikes @ 30 req/s ran on engine vllm/vllm-openai:v0.6.0; see the testbed section"),
    from ``summarize``'s JSON. The testbed section names such reports and the hypotheses they enter, but a reader
    of the claims table saw a clean verdict: the verdict itself must carry it, as it carries an early stop."""
    out: dict[str, list[str]] = {}
    for group in [g for g in summary.get("testbeds") or [] if isinstance(g, dict)][1:]:
        arms = "/".join(str(a) for a in group.get("arms") or [])
        images = sorted({str(e["image"]) for e in group.get("engines") or [] if isinstance(e, dict) and e.get("image")})
        engine = f" ran on engine {', '.join(images)}" if images else ""
        for c in [c for c in group.get("cells") or [] if isinstance(c, dict)]:
            n = int(c.get("reports") or 0)
            flag = (
                f"{OTHER_TESTBED}: {n} {arms} report{'' if n == 1 else 's'} at {c.get('workload')} @ "
                f"{float(c.get('rate') or 0):g} req/s{engine}; see the testbed section"
            )
            for hid in c.get("hypotheses") or []:
                out.setdefault(str(hid), []).append(flag)
    return out


def _from_json(item: dict) -> Testbed:
    fields = {k: item.get(k) for k in ("harness", "harness_version", "cluster")}
    engines = tuple(Engine(**{k: e.get(k) for k in Engine.__dataclass_fields__}) for e in item.get("engines") or [])
    return Testbed(engines=engines, **fields)


# --------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------


def _val(x: object) -> str:
    return NOT_RECORDED if x is None else md(x)


def _code(x: object) -> str:
    return NOT_RECORDED if x is None else f"`{md(x)}`"


def _engine_words(e: Engine) -> str:
    if e.accelerator is None and e.accelerators_per_replica is None:
        accel = f"accelerator {NOT_RECORDED}"
    else:
        per = "" if e.accelerators_per_replica is None else f"{e.accelerators_per_replica} "
        accel = f"{per}{_val(e.accelerator)}"
    replicas = (
        f"{e.replicas} replica{'s' if e.replicas != 1 else ''}"
        if e.replicas is not None
        else f"replicas {NOT_RECORDED}"
    )
    tp = f", TP {e.tp}" if e.tp is not None else ""
    role = f"{md(e.role)}: " if e.role and e.role != "replica" else ""
    tool = f" ({md(e.tool)})" if e.tool else ""
    return f"{role}{_val(e.model)} on {replicas} × {accel}{tp}; engine {_code(e.image)}{tool}"


def testbed_words(t: Testbed) -> str:
    """One testbed in one line of markdown (every value escaped; absent ones say 'not recorded')."""
    if t.engines:
        engines = " + ".join(_engine_words(e) for e in t.engines)
    else:
        engines = f"model, accelerators and engine {NOT_RECORDED}"
    harness = f"harness {NOT_RECORDED}" if t.harness is None else f"harness {md(t.harness)} {_val(t.harness_version)}"
    cluster = f"cluster `{md(t.cluster[:12])}`" if t.cluster else f"cluster {NOT_RECORDED}"
    return f"{engines}; {harness}; {cluster}"


def _image_words(image: object, sources: object) -> str:
    """`image` (from run.keywords epp-image): where the reports recorded it, so a reader can tell the runner's
    keyword from the report's own stack (a summary written before sources were kept names none)."""
    where = [str(s) for s in sources] if isinstance(sources, list) else []
    return _code(image) + (f" (from {md(' and '.join(sorted(where)))})" if where else "")


def testbed_markdown(summary: dict | None) -> str:
    """The report's testbed line(s): one line for one testbed; a list, said to be a finding, for several."""
    if not summary or not summary.get("reports"):
        return "**Testbed:** no benchmark report was used, so none is recorded."
    groups = summary.get("testbeds") or []
    n = summary["reports"]
    routers = summary.get("router_images") or {}
    sources = summary.get("router_image_sources") or {}
    router = "; ".join(
        f"{md(arm)} {', '.join(_image_words(i, sources.get(i)) for i in images) if images else NOT_RECORDED}"
        for arm, images in sorted(routers.items())
    )
    router_line = f" Router image: {router}." if router else ""
    if len(groups) == 1:
        arms = [md(a) for a in groups[0].get("arms") or []]
        which = f", {arms[0]} only" if len(arms) == 1 else ""  # the other arm's reports were all left out
        return f"**Testbed** ({n} reports used{which}): {testbed_words(_from_json(groups[0]))}.{router_line}"
    lines = [
        (
            f"**Testbeds: {len(groups)} different ones among the {n} reports.** The arms of a comparison should run "
            "on one testbed; check which cells each covers before trusting a verdict."
        )
    ]
    for g in groups:
        arms = ", ".join(md(a) for a in g.get("arms") or [])
        entered = entered_text(g)
        lines.append(
            f"- {g.get('reports', 0)} reports ({arms}): {testbed_words(_from_json(g))}"
            + (f". Its {md(entered)}" if entered else "")
        )
    if router_line:
        lines.append(f"-{router_line}")
    return "\n".join(lines)


__all__ = [
    "NOT_RECORDED",
    "Engine",
    "ReportTestbed",
    "Testbed",
    "engine_of",
    "entered_text",
    "record",
    "router_image_from",
    "router_image_of",
    "summarize",
    "testbed_markdown",
    "testbed_of",
    "testbed_words",
]
