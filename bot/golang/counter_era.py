"""A copy older than BLIS 9a603bca reads a counter that no longer exists: ``hazard.counter-meaning-changed``.

``PendingRequests`` became ``InFlightRequests`` in 9a603bca (2026-02-27), and it was not a pure rename
(blis.md, "Checked against the newest source"): ``PendingRequests`` counted the requests routed to an instance
and not yet queued there, usually 0 to 2; ``InFlightRequests`` counts them from routing until they complete
(in transit + queued + running). The dictionary maps both names to one Map B entry, and the plugin reads llm-d's
in-flight count (inflight-load-producer's ``InFlightLoad.Requests``) for either, because that is the only count
llm-d has. So every number a pre-rename program compares with or combines with the counter (directly, through
an average, or through the copy's ``EffectiveLoad()``, which adds it) was tuned on a far smaller value than the
plugin hands it: a threshold of 6 that the old count almost never passed is passed by any pod with six requests.
One IMPORTANT finding, at the evolved logic's first read of the counter, names those numbers (parameter and
evolved line) and says what to do: re-calibrate them at gate 1 with ``param`` lines against a baseline run's
in-flight counts per pod, or re-evolve on current BLIS, where the count is the one the plugin reads.

The differential harness does not model the old counter, and the finding says so. Its sampled world has
requests "in transit" (routed since the engine's gauges were scraped, ``harness_world.TRANSIT``: 0 to 2, sized
from the scrape's age), which the BLIS view counts in neither QueueDepth nor BatchSize; feeding them to the copy
as its ``PendingRequests`` would look like the old meaning, but how long a request stayed routed-and-not-queued
in BLIS before 9a603bca is not known offline (it is not the scrape's age), and the states sampled on each
threshold's boundary set today's count to the threshold, which the old count would rarely reach. A figure built
on a guessed distribution would look measured and not be. So the harness feeds the copy today's count (the
mirror reads ``PendingRequests`` for ``InFlightRequests``, ``blis_mirror``), and the agreement figure compares
the plugin with the copy *as if it had been evolved on today's count*: it cannot show this gap, and the finding
and the report's harness notes say that in words.

A copy that reads the load only through ``EffectiveLoad()`` names neither counter, so its file cannot date it;
its metadata can (a ``best_program_info.json`` timestamp before 2026-02-27, an ``origin.blis_version`` before
9a603bca: ``blis_era``, which fills ``Analysis.dated_before``). Such a copy is pre-rename here too, and the
finding names the metadata that dates it.
"""

from __future__ import annotations

import re

from bot.golang.analysis_types import Analysis, Threshold
from bot.model import Finding, Severity

CHECK = "hazard.counter-meaning-changed"
OLD = "PendingRequests"
NEW = "InFlightRequests"
COMMIT = "9a603bca"
#: What the plugin reads for the counter (dictionary Map B ``InFlightRequests``), as a parameter comment says it.
LLMD_SOURCE = (
    "inflight-load-producer's InFlightLoad.Requests (the requests this EPP dispatched to the endpoint and that "
    "have not completed)"
)
#: The old and the new meaning, in the words every message uses.
OLD_MEANING = "the requests routed and not yet queued (usually 0 to 2)"
NEW_MEANING = "the requests routed until they complete (in transit + queued + running)"
#: Added to the per-line rename suggestion (``hazard.removed-identifier``): a rename is not all a port needs.
RENAME_FIX = f"; the count changed with the name, so re-tune what reads it ({CHECK} names the numbers)"
#: The harness note for such a copy (``blis_mirror``, the report's "How the harness ran the BLIS original").
HARNESS_NOTE = (
    f"the copy predates {COMMIT}: the mirror feeds its {OLD} today's {NEW} (routed until completed), as the plugin "
    "reads it, not the routed-not-yet-queued count it was evolved on, so the agreement figure does not measure "
    f"that change ({CHECK})"
)
#: The harness note for a copy dated before the change by its metadata only (it declares no ``PendingRequests``).
DATED_HARNESS_NOTE = (
    f"the copy's metadata dates it before {COMMIT}: the mirror's EffectiveLoad() adds today's {NEW} (routed until "
    "completed), as the plugin reads it, not the routed-not-yet-queued count the copy was evolved on, so the "
    f"agreement figure does not measure that change ({CHECK})"
)
_ROLE_FIRST = ("threshold", "floor", "cap")
_OLD_FIELD = re.compile(rf"^\s*{OLD}\s+int\b", re.M)


def pre_rename(an: Analysis) -> bool:
    """The copy predates 9a603bca: its logic writes ``PendingRequests``, its ``RoutingSnapshot`` declares it, or
    its metadata dates it before the change (``dated_before``)."""
    if any(u.written == OLD for u in an.signals) or an.dated_before:
        return True
    return an.src is not None and bool(_OLD_FIELD.search(an.src.go_text))


def carried(text: str) -> str:
    """Evolved source text as the plugin carries it (``carry``: ``PendingRequests`` becomes ``InFlightRequests``)."""
    return re.sub(rf"\b{OLD}\b", NEW, text)


def parameter_words(an: Analysis, th: Threshold, evolved_subject: str) -> str:
    """For a parameter comment: what the plugin reads for a number of a pre-rename copy that reads the counter,
    and what the evolved code read (``evolved_subject``, the subject as the evolved source writes it); empty for
    any other number."""
    if NEW not in th.signals or th.role == "factor" or not pre_rename(an):  # a factor's comment names no signal
        return ""
    read = f"`{evolved_subject}`" if re.search(rf"\b{OLD}\b", evolved_subject) else OLD
    return (
        f" The in-flight requests are what the plugin reads as {NEW}: {LLMD_SOURCE}. The evolved code read {read} "
        f"(BLIS before {COMMIT}), which counted only {OLD_MEANING}: the evolved value was tuned on that smaller count."
    )


def check(an: Analysis) -> None:
    """Append the finding for a pre-rename copy whose logic reads the counter (after the parameters are named)."""
    if not pre_rename(an):
        return
    reads = sorted(u.line for u in an.signals if u.name == NEW and not u.via.startswith("baseline"))
    if not reads:
        return
    numbers = _numbers(an)
    an.findings.append(
        Finding(
            severity=Severity.IMPORTANT,
            check=CHECK,
            source_line=reads[0],
            message=_message(numbers, an.dated_before),
            fix=_fix(numbers),
        )
    )


def _numbers(an: Analysis) -> list[Threshold]:
    """The numbers of the logic that read the counter, thresholds (floors, caps) first, then in source order."""
    return sorted(
        (th for th in an.thresholds if NEW in th.signals),
        key=lambda th: (th.role not in _ROLE_FIRST, min(th.lines or [th.line])),
    )


def _first(numbers: list[Threshold]) -> list[str]:
    """The parameters to re-calibrate: the thresholds (floors, caps) when there are any, else every parameter."""
    params = [th.param for th in numbers if th.param]
    return [th.param for th in numbers if th.param and th.role in _ROLE_FIRST] or params


def to_recalibrate(an: Analysis) -> list[str]:
    """The parameters the finding asks a person to re-calibrate at gate 1 (empty when it names none)."""
    return _first(_numbers(an))


def recalibrated(an: Analysis, params: set[str] | dict) -> bool:
    """A person set every parameter the finding asks for (``param`` lines at gate 1): the decision is on record."""
    wanted = to_recalibrate(an)
    return bool(wanted) and all(p in params for p in wanted)


def as_recalibrated(f: Finding, an: Analysis, deployed: dict) -> Finding:
    """The finding once ``recalibrated``: a note that says the values set, no longer blocking (as
    ``recalibration.recalibrated_findings`` does for a simulator-scale threshold)."""
    values = ", ".join(f"`{p}` = {_shown(deployed[p])}" for p in to_recalibrate(an))
    return f.model_copy(
        update={
            "severity": Severity.SUGGESTION,
            "message": f"{f.message.split('. The agreement figure')[0]}; re-calibrated at gate 1: {values} in the "
            "deployed config",
            "fix": "check the values on the GPU run (gate 3)",
        }
    )


def _shown(value: object) -> str:
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _label(th: Threshold) -> str:
    lines = th.lines or [th.line]
    where = f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
    return f"`{th.param}` ({th.literal}, {where})" if th.param else f"the literal {th.literal} ({where}, kept in code)"


def _message(numbers: list[Threshold], dated: str = "") -> str:
    """The finding's text; ``dated`` is the metadata that dates a copy naming neither counter before the change."""
    tuned = (
        f"the numbers it compares with or combines with that count were tuned on the old one: "
        f"{', '.join(map(_label, numbers))}"
        if numbers
        else "no number is compared with it, but what it ranks or adds to changed size"
    )
    reads = (
        f"the program reads {OLD} through its copy's EffectiveLoad(): it names neither counter, but {dated} dates "
        f"its BLIS copy before {COMMIT}, when EffectiveLoad() added {OLD}"
        if dated
        else f"the program reads {OLD} (directly or through its copy's EffectiveLoad())"
    )
    return (
        f"{reads}, which BLIS {COMMIT} renamed "
        f"{NEW} and redefined: it counted {OLD_MEANING}, it now counts {NEW_MEANING}, and the plugin reads the new "
        f"count (llm-d has no other); {tuned}. Today's count passes a threshold tuned on the old one on any pod "
        "with that many requests queued or running, which the old count rarely reached. "
        f"The agreement figure does not show this: the harness feeds the BLIS copy today's count, as the plugin "
        "reads it (the old count's distribution is not known offline)"
    )


def _fix(numbers: list[Threshold]) -> str:
    params = [th.param for th in numbers if th.param]
    first = _first(numbers)
    if not params:
        return (
            f"re-evolve the program on current BLIS ({COMMIT} or later), where the count is the one the plugin reads; "
            "the numbers are kept in code, so re-calibrating them needs a rebuild"
        )
    listed = ", ".join(f"`{p}`" for p in first)
    also = [p for p in params if p not in first]
    more = f" (then {', '.join(f'`{p}`' for p in also)}, which act when they fire)" if also else ""
    return (
        f"re-calibrate {listed}{more} at gate 1 with `param` lines (e.g. `param {first[0]}: <value>`) against a "
        "baseline run's in-flight requests per pod (queued + running + in transit, what the plugin reads), or "
        f"re-evolve the program on current BLIS ({COMMIT} or later), where the count is the one the plugin reads"
    )
