"""`workflow_dispatch`: the bot continuing a promotion (after the sandboxed job or the GPU benchmark).

Events made with GITHUB_TOKEN start no workflow, so the bot chains its own
runs with workflow_dispatch. Its inputs are checked like any other input: an
issue number and a step name from a fixed list, nothing else.
"""

from __future__ import annotations

import re

from bot.events.issue_request import NeedsInfo
from bot.events.promotion import Result

STEPS = ("continue", "benchmark-finished")


def dispatched(session, event) -> Result:
    inputs = dict(event.inputs or {})
    number, step = str(inputs.get("issue", "")).strip(), str(inputs.get("step", "continue")).strip()
    if not re.fullmatch(r"[1-9][0-9]{0,9}", number):
        return Result("ignored: the dispatch names no issue number", notes=[f"issue={number!r}"])
    if step not in STEPS:
        return Result(f"ignored: unknown step {step!r}", notes=[f"known steps: {', '.join(STEPS)}"])
    issue = session.client.issue(int(number))
    promotion = session.promotion(issue, current=True)
    if promotion is None:
        return Result(f"ignored: #{number} is not a promotion issue")
    try:
        promotion.request()
    except NeedsInfo as exc:
        return promotion.needs_info(exc.problems)
    from bot.events.comments import catch_up

    # a person's command this continuation's run replaced in the queue; or, in the run an earlier one dispatched
    # for what its bound per run left (``Promotion.continue_later``: no sandboxed run's requests), one it deferred
    deferred = step == "continue" and not str(inputs.get("requests_run") or "").strip()
    late = catch_up(session, promotion, deferred=deferred)
    result = promotion.advance()
    result.notes = [*late, *result.notes]
    return result
