"""The independent review before each gate.

A reviewer sees only the artifacts on the branch, the reference data (the
dictionary, the request's claims) and the gate's checklist, never the author's
reasoning. Each gate's checklist is a module with ``CHECKLIST`` (what it
checks, for the report) and ``review(ctx) -> list[Finding]``. A Claude reviewer
may add findings in the same shape; the deterministic checklist always runs.
"""

from __future__ import annotations

import importlib

from bot.model import Finding, PipelineState, ReviewRound
from bot.render import render

GATES = {1: "bot.review.gate1", 2: "bot.review.gate2", 3: "bot.review.gate3"}
GATE_NAMES = {1: "translation", 2: "hypotheses", 3: "validation"}


def review_gate(gate: int, ctx) -> list[Finding]:
    return importlib.import_module(GATES[gate]).review(ctx)


def render_review_report(review: ReviewRound, ctx, state: PipelineState) -> str:
    module = importlib.import_module(GATES[review.gate])
    blocking = len(review.blocking)
    if not blocking:
        verdict = "No blocking findings: the review converged."
    elif review.gate in state.unconverged:
        verdict = f"{blocking} blocking finding(s) remain and the author could not resolve them: **the review did not converge**; the gate is open for a human decision with these findings on record."
    else:
        verdict = f"{blocking} blocking finding(s): sent back to the author."
    notes = module.notes(ctx) if hasattr(module, "notes") else []
    return render(
        "review_report.md.j2",
        review=review,
        gate_name=GATE_NAMES[review.gate],
        branch=ctx.branch,
        verdict=verdict,
        checklist=module.CHECKLIST,
        notes=notes,
    )
