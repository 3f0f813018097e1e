"""The independent review before each gate.

A reviewer sees only the artifacts on the branch, the reference data (the
dictionary, the request's claims) and the gate's checklist, never the author's
reasoning. Each gate's checklist is a module with ``CHECKLIST`` (what it
checks, for the report) and ``review(ctx) -> list[Finding]`` that reads the
committed artifacts through the forge and never reruns a stage. With
``--llm anthropic`` the Claude reviewer (``bot.agents``) adds its findings and
weighs the author's committed responses (``convergence``); the deterministic
checklist always runs and its findings always stand.
"""

from __future__ import annotations

import importlib

from bot.escape import md
from bot.model import (
    HOW_NOT_RECORDED,
    DecidedVia,
    Decision,
    Finding,
    GateDecision,
    PipelineState,
    ReviewRound,
    bounded,
    counted,
)
from bot.render import render

GATES = {1: "bot.review.gate1", 2: "bot.review.gate2", 3: "bot.review.gate3"}
GATE_NAMES = {1: "translation", 2: "hypotheses", 3: "validation"}


def author_record(gate: int, ctx):
    """The author's committed responses for this gate, or None."""
    from bot.agents.record import load_record, record_path

    return load_record(ctx.read(record_path(ctx.paths.docs, gate)))


def full_list(gate: int, ctx) -> str:
    """Where every finding of a gate's checklist can be read when its review round keeps a bounded list."""
    if gate == 1:
        return (
            "the findings.json of `promote translate SOURCE --out DIR`, or translation.json and "
            "translation-checks.json on the branch"
        )
    if gate == 3:
        return f"`{ctx.paths.go_checks}` on the branch"
    return "the review of a local `promote run` of this promotion"


def review_gate(gate: int, ctx) -> list[Finding]:
    from bot.review import convergence

    # A checker or a toolchain step can report thousands of findings: the round takes a bounded list (the
    # state, the reports, the reviewer's input), the full one stays where it was made (``full_list``).
    findings = bounded(list(importlib.import_module(GATES[gate]).review(ctx)), where=full_list(gate, ctx))
    record = author_record(gate, ctx)
    if record is not None:
        from bot.agents.record import record_path

        findings += record.dropped_findings(record_path(ctx.paths.docs, gate))
    agents = getattr(ctx, "agents", None)
    state: PipelineState = ctx.state
    round_ = state.review_round + 1
    if agents is not None:
        from bot.review.inputs import reviewer_input

        inp = reviewer_input(gate, round_, ctx, findings, record)
        security = convergence.security_findings(inp.untrusted)
        outcome = agents.review(inp)
        findings = convergence.weigh_responses(findings, record, outcome.accepted, trusted=not security)
        findings += security + outcome.findings
    previous = state.reviews.get(gate, [])[-1] if state.review_round else None
    return convergence.dedupe(convergence.mark_recurring(findings, previous))


def unconverged_because(state: PipelineState, gate: int) -> str:
    """' (the author's rerun changed nothing)', ' (3 rounds ran out)', ...: which of the ways a review stops
    without converging ended this gate's, from the audit entry that opened it; "" when it is not recorded."""
    opened = f"gate {gate} open for decision"
    prefix = "review did not converge: "
    for entry in reversed(state.audit):
        if entry.event == opened:
            return f" ({entry.detail.removeprefix(prefix)})" if entry.detail.startswith(prefix) else ""
    return ""


def render_review_report(
    review: ReviewRound, ctx, state: PipelineState, decided: GateDecision | None = None, commit: str | None = None
) -> str:
    """The gate's review report; with ``decided``, the same report (rendered from ``state`` as it was shown)
    headed by who decided the gate, how, when and at which ``commit``, and no longer inviting a decision."""
    module = importlib.import_module(GATES[review.gate])
    blocking = counted(review.blocking)  # a bounded round's "and K more" finding counts as K
    if not blocking:
        verdict = "No blocking findings: the review converged."
    elif review.gate in state.unconverged:
        why = unconverged_because(state, review.gate)
        left = "was decided" if decided else "is open for a human decision"
        verdict = (
            f"{blocking} blocking finding(s) remain and the author could not resolve them{why}: **the review did "
            f"not converge**; the gate {left} with these findings on record."
        )
    else:
        verdict = f"{blocking} blocking finding(s): sent back to the author."
    notes = module.notes(ctx) if hasattr(module, "notes") else []
    if review.gate == 2:  # the hypotheses are what gate 2 decides on: show them, not only the findings
        from bot.review.brief import hypothesis_rows

        hypotheses = hypothesis_rows(ctx)
    else:
        hypotheses = []
    return render(
        "review_report.md.j2",
        hypotheses=hypotheses,
        review=review,
        gate_name=GATE_NAMES[review.gate],
        branch=ctx.branch,
        verdict=verdict,
        checklist=module.CHECKLIST,
        notes=notes,
        github=ctx.home == "github",  # the directives' command in the home's words
        after=after_change_request(review.gate, state),
        decided=decided_line(decided, commit, github=ctx.home == "github") if decided else "",
    )


_DECIDED = {Decision.APPROVE: "Approved", Decision.REQUEST_CHANGES: "Changes requested", Decision.REJECT: "Rejected"}


def decided_line(decision: GateDecision, commit: str | None, *, github: bool) -> str:
    """ "**Approved** by maria with the `gate-1-approved` label, 2025-03-02 14:05 UTC, at commit `1a2b3c4d5e6f`."

    A review report is posted while its gate waits and says so; read on the issue a week later it must say the
    gate was decided, by whom, how, when and on which commit, instead of still asking for a decision."""
    gate, verb = decision.gate, decision.decision.value
    if decision.via is DecidedVia.LABEL:
        how = f" with the `gate-{gate}-approved` label"
    elif decision.via is DecidedVia.APPROVE_FLAG:
        how = " with the `--approve` flag of their run (no person decided at the open gate)"
    elif decision.via is DecidedVia.COMMAND:
        how = f" with `/{verb}`" if github else f" with `promote {verb}`"
    else:
        how = f"; {HOW_NOT_RECORDED}"
    at = f", at commit `{commit[:12]}`" if commit else ""
    text = f"**{_DECIDED[decision.decision]}** by {md(decision.actor)}{how}, {decision.at:%Y-%m-%d %H:%M} UTC{at}"
    if decision.reason and decision.decision is not Decision.APPROVE:
        text += f": {md(decision.reason, sep='; ')}"
    note = decision.critical_note()
    text += f" ({md(note)})." if note else "."
    if decision.decision is Decision.REQUEST_CHANGES:
        text += " The stages this gate covers run again with the change request; a new review replaces this one."
    return text + " This review is what was decided on; the gate takes no more decisions."


def after_change_request(gate: int, state: PipelineState) -> str:
    """``, after maria's change request``: the rounds count from 1 again once a person sends the gate back, so
    without this the re-review of their change reads as a fresh start that ignored it."""
    last = next((d for d in reversed(state.decisions) if d.gate == gate), None)
    if last is None or last.decision.value != "request-changes":
        return ""
    n = sum(d.gate == gate and d.decision.value == "request-changes" for d in state.decisions)
    return f", after {last.actor}'s change request" + (f" (the {_ordinal(n)})" if n > 1 else "")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def review_summary(
    review: ReviewRound,
    state: PipelineState,
    decided: GateDecision | None = None,
    commit: str | None = None,
    *,
    github: bool = False,
) -> str:
    """The PR review's body: what the round found, and what happens next; with ``decided``, the same round (from
    ``state`` as it was shown) saying who decided the gate, how, when and at which ``commit``, in the words the
    issue's report gets (``decided_line``): the PR record must not keep asking for a decision made long ago."""
    blocking = counted(review.blocking)  # a bounded round's "and K more" finding counts as K
    head = f"**Gate {review.gate} review ({GATE_NAMES[review.gate]}), round {review.round}{md(after_change_request(review.gate, state))}**: "
    if review.headline:
        head += f"deciding on {md(review.headline)}. "
    tally = review.tally()
    if not review.findings:
        then = decided_line(decided, commit, github=github) if decided else _decide_where(review.gate, state)
        return f"{head}{tally}. {then}"
    if not blocking:
        nxt = "nothing blocked." if decided else "nothing blocks; the gate is open for a decision."
    elif review.gate in state.unconverged:
        left = "was decided" if decided else "is open for a decision"
        nxt = f"the author could not resolve the blocking findings; the gate {left} with them on record."
    else:
        nxt = (
            "the blocking findings went back to the author."
            if decided
            else "the blocking findings go back to the author."
        )
    then = decided_line(decided, commit, github=github) if decided else _decide_where(review.gate, state)
    return f"{head}{tally}; {nxt} {then}"


def _decide_where(gate: int, state: PipelineState) -> str:
    """People review on the PR, so it says where they decide: commands and gate labels count only on the issue.
    A review stays in the PR's timeline after the gate is decided; the report on the issue then says how."""
    issue = f"#{state.request_id}" if state.request_id.isdigit() else "the promotion issue"
    return (
        f"The full report is on {issue}; decide there (`/approve`, or the `gate-{gate}-approved` label): "
        "commands and labels on this PR decide nothing. Once the gate is decided, that report says by whom and how."
    )
