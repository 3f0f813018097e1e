"""The notice an edit of a running promotion posts on the issue: what changed, where it was, where it is now."""

from __future__ import annotations

from bot import pipeline
from bot.escape import md
from bot.model import Decision, PipelineState, request_parts


def restart_notice(change: request_parts.RequestChange, before: PipelineState, after: PipelineState) -> str:
    """What an edit did to the promotion, in one paragraph: what changed, where the promotion was, and where it
    is now (Markdown; the state's own words are escaped, they may quote the request)."""
    was = md(pipeline.describe(before))
    if not change.redo or change.stage is None:
        return (
            f"{lead(change)} while the promotion was at: {was}. No finished stage read "
            f"that, so nothing is redone: {md(pipeline.describe(after))}."
        )
    start = change.stage
    kept = sorted({d.gate for d in after.decisions if d.decision is Decision.APPROVE})
    dropped = sorted({d.gate for d in before.decisions} - set(kept))
    removed = next((a for a in reversed(after.audit) if a.event == "removed the files of the stages redone"), None)
    parts = [
        (
            f"{lead(change)} while the promotion was at: {was}. Stage {int(start)} "
            f"({start.title}) is the first to read that, so the promotion **restarted from stage {int(start)}**"
        )
    ]
    if not before.decisions:
        parts.append("nothing was decided yet")
    if dropped:
        parts.append(f"the decisions at {_gates(dropped)} were made on the old request and no longer count")
    if kept:
        parts.append(f"{_gates(kept)} {'stays' if len(kept) == 1 else 'stay'} approved")
    if removed:
        parts.append(f"the files of the stages redone were removed from the branch in one commit ({removed.detail})")
    return "; ".join(parts) + "."


def _gates(gates: list[int]) -> str:
    if len(gates) == 1:
        return f"gate {gates[0]}"
    return "gates " + ", ".join(map(str, gates[:-1])) + f" and {gates[-1]}"


def lead(change: request_parts.RequestChange) -> str:
    """The notice's first words: "The request changed (the BLIS claims)", never nested in another "request"."""
    if not change.changed:
        return (
            "The request differs from the one this promotion ran on, and its saved state (from an older bot) "
            "does not record the request's parts, so all of it counts as changed"
        )
    return f"The request changed ({change.what()})"
