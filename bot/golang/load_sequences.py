"""Histories whose pool load changes between requests, for an admitter that latches a flag under one cut and clears it
under another.

A hysteresis shedder (a researcher's trial-4 admitter: ``h.shedding = true`` once the pool's pressure reaches 1.0,
``h.shedding = false`` only once it falls below 0.7) decides a request by a flag an earlier request set, on an
earlier pool. Every other history the probes send replays its earlier requests on the decided request's own pool
(``probe_inputs.make_state``): the pressure never fell after shedding started, the lower cut changed no decision
(``translate.untested-parameter``), and the only sequence row was decided as a fresh plugin decides it.

So, when the evolved code sets a receiver field to ``true`` in one place and to ``false`` in another (``latched``:
the shape is read from the source, not from names; any receiver, any field, either order), the candidates here
are walks: a request on an overloaded pool (whatever latches under load has latched), then the request decided on
a pool further down a ladder of loads from idle to that overload (``ladder``); and for the behaviour rows the
same walk with one more step, the ladder's next load up in between (``walks``), so that a row can show the flag
cleared again once the load falls one step further. Which loads sit between the cuts, and which below, is the
compiled plugin's to say: the harness decides every walk, and ``sequences.choose`` keeps what it answered.
A threshold probe gets finer ladders too, one pool metric at a time (``fine_ladders``): the harness then finds a
load whose compared value sits near the cut, so its generated test fails with the cut moved a readable step.

Every earlier request of a walk carries its own pool (a history event that is not ``compact``): the harness and
the generated test (``earlier`` runs) replay it on that pool. Pure: analysis in, candidate states out.
"""

from __future__ import annotations

import itertools

from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.gotree import walk
from bot.golang.probe_inputs import CLOCK, PROBE, SPACING, make_endpoint, make_metrics, make_request, make_state

#: Steps of the ladder from an idle pool (step 0) to an overloaded one (step LEVELS): per step one more waiting
#: request, two more running ones and 1/LEVELS more of the KV cache on every endpoint.
LEVELS = 32
#: The finer ladders of a threshold probe: KV in hundredths, and waiting and running counts up to these.
FINE_KV_STEPS = 100
FINE_QUEUE = 40
FINE_RUNNING = 80
#: The priorities a walk's requests take: a sheddable one (what a shedder sheds) and a default one.
PRIORITIES = (-1, 0)
#: The key that marks a walk's candidate (``sequences.describe`` names its pools; the harness ignores it).
WALK = "walk"
#: Pool metrics a latch may read, and the knob of ``make_metrics`` that sets each.
_POOL = {
    "KVUtilization": "kv",
    "FreeKVBlocks": "kv",
    "KvTokensInUse": "kv",
    "QueueDepth": "queue",
    "BatchSize": "running",
    "InFlightRequests": "running",
    "EffectiveLoad": "running",
}


def latched(an: Analysis) -> bool:
    """Whether the evolved code sets some receiver field (``x.f``) to ``true`` in one assignment and to ``false``
    in another: a flag set under one condition and cleared under another, whose state a history that changes
    the pool's load can move both ways."""
    return bool(flags(an))


def guarded(an: Analysis, th: Threshold) -> bool:
    """Whether a comparison of ``th`` sits under an ``if`` (either branch) whose condition reads such a flag: the
    cut that clears it (``if h.shedding { if pressure < 0.7 ...``) or sets it (its ``else if``), which only a
    walk decides on the far side of the flag. Such a threshold's probe tries the walks first: the harness spends a
    bounded number of tries per side, and the grid's warm-ups on an overloaded pool spent them all before."""
    names = flags(an)
    if not names or an.src is None:
        return False
    root = an.src.tree.root_node
    for o in th.occurrences:
        n = root.descendant_for_byte_range(o.start, o.end)
        while n is not None:
            cond = n.child_by_field_name("condition") if n.type == "if_statement" else None
            if cond is not None and any(
                c.type == "selector_expression"
                and (f := c.child_by_field_name("field")) is not None
                and f.text.decode() in names
                for c in walk(cond)
            ):
                return True
            n = n.parent
    return False


def flags(an: Analysis) -> set[str]:
    """The receiver fields the evolved code sets to ``true`` in one assignment and to ``false`` in another."""
    if an.src is None:
        return set()
    seen: dict[str, set[str]] = {}
    for n in walk(an.src.tree.root_node):
        if n.type != "assignment_statement":
            continue
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if left is None or right is None or left.named_child_count != 1 or right.named_child_count != 1:
            continue
        target, value = left.named_children[0], right.named_children[0]
        if target.type == "selector_expression" and value.type in ("true", "false"):
            field = target.child_by_field_name("field")
            if field is not None:
                seen.setdefault(field.text.decode(), set()).add(value.type)
    return {name for name, values in seen.items() if len(values) == 2}


def pool(level: int) -> list[dict]:
    """Both endpoints at ``level`` of the ladder (an admitter reads the pool's sums, averages and minima)."""
    metrics = make_metrics(queue=level, running=2 * level, kv=round(level / LEVELS, 4))
    return [make_endpoint(PROBE, metrics), make_endpoint("pod-b", dict(metrics))]


def fine_ladders(an: Analysis) -> list[list[dict]]:
    """Pools one metric at a time, the others idle, in fine steps: only the metrics the evolved code reads."""
    knobs = {_POOL[s] for s in an.signal_names if s in _POOL}
    values = {
        "kv": [round(k / FINE_KV_STEPS, 4) for k in range(FINE_KV_STEPS + 1)],
        "queue": list(range(FINE_QUEUE + 1)),
        "running": list(range(0, FINE_RUNNING + 1, 2)),
    }
    out = []
    for knob in sorted(knobs):
        for v in values[knob]:
            metrics = make_metrics(**{knob: v})
            out.append([make_endpoint(PROBE, metrics), make_endpoint("pod-b", dict(metrics))])
    return out


def walk_state(steps: list[tuple[list[dict], dict]], endpoints: list[dict], request: dict) -> dict:
    """A candidate: ``request`` decided on ``endpoints`` after each earlier request on its own pool, SPACING µs
    apart (history events that are not compact: the harness replays each on the pool it carries)."""
    state = make_state(endpoints, request)
    n = len(steps)
    history = [
        {
            "blis": {"clock": CLOCK - (n - i) * SPACING, "request": {}, "snapshots": [], "prefix": {}, "blockSize": 16},
            "llmd": {"request": w, "endpoints": eps},
        }
        for i, (eps, w) in enumerate(steps)
    ]
    return state | {"history": history, WALK: True}


def walks(an: Analysis, kind: str, stateful: bool) -> list[dict]:
    """The behaviour walks of a latching admitter (``latched``), else none: per priority and ladder step below the
    overload, a request on the overloaded pool then one at the step; and the request on the overloaded pool, one
    at the next step up, then one at the step. Lowest step first: the first walk the plugin sheds where a fresh
    one admits sits just above the cut that clears the flag."""
    if kind != "admission" or not stateful or not latched(an):
        return []
    out = []
    for priority, level in itertools.product(PRIORITIES, range(LEVELS)):
        top = (pool(LEVELS), make_request(priority=priority, rid="w-0"))
        out.append(walk_state([top], pool(level), make_request(priority=priority)))
        between = (pool(level + 1), make_request(priority=priority, rid="w-1"))
        if level + 1 < LEVELS:
            out.append(walk_state([top, between], pool(level), make_request(priority=priority)))
    return out


def candidates(an: Analysis, th: Threshold, kind: str, stateful: bool) -> list[dict]:
    """A threshold probe's walks for a latching admitter (else none): a request on the overloaded pool, then one on
    each pool of the ladder and of the finer ladders, per priority. ``probes.specs`` puts them before the probe's
    own grid for a threshold under the flag (``guarded``), after it for the rest (the harness keeps the first of
    two candidates alike near the cut: a threshold the flag does not hold keeps the grid's)."""
    if kind != "admission" or not stateful or not latched(an) or th.role != "threshold":
        return []
    pools = [pool(level) for level in range(LEVELS)] + fine_ladders(an)
    return [
        walk_state([(pool(LEVELS), make_request(priority=priority, rid="w-0"))], eps, make_request(priority=priority))
        for priority, eps in itertools.product(PRIORITIES, pools)
    ]
