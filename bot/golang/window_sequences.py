"""Probe candidates for a per-tenant limit and a window length: one tenant's arrivals, counted and spaced in time.

A rolling window of arrivals per tenant (``len(kept) >= limit``, ``kept`` the tenant's arrivals since
``state.Clock - windowUs``) decides on a SEQUENCE: as many arrivals as the limit inside the window reject the
next one, one fewer admit it, and the same arrivals spread over more than the window admit it again. The
threshold search's own grid (``probe_inputs.candidates``) varies only the knobs of the parameter's signals,
so a limit or a window met every candidate on an idle pool; an admitter that admits everyone while some
endpoint has free KV (the KV-pressure override of an llm-d maintainer's window admitter) then admitted every
candidate, and none of its three parameters got a test. Its warm-ups were also another class's (sheddable),
so a limit for critical requests, counted over the tenant's critical arrivals, was never reached.

So, for a stateful admitter's parameter that is, by the analysis,

- a per-tenant limit: a threshold on a value read from the tenant's history (``TenantID`` among its signals),
  or a number set into the local such a threshold compares (the critical limit, set per class), or
- a window length: a number on the clock (a threshold or an offset on ``Clock``/``ArrivalTime``),

the candidates here come first: the decided request (each priority, from tenant-a) after arrivals like it,
the limit's count less one and the count itself densely inside the window, and the count spaced so that the
window holds two thirds of them (a window twice as long holds all) or all of them (half as long: two thirds),
and spaced wider than the window; each on the pools either side of every other comparison on a pool metric
(``probe_inputs.anchors``' sides), since which side lets the count decide is the code's business. The
sequence one short of the limit comes before the one at it: the harness watches the warm-ups' comparisons
too, and a limit's probe finds the nearest not-past value first, so the at-limit one's lower counts spend no
try (the not-past side already holds a nearer one).

Pure: analysis in, candidate states out.
"""

from __future__ import annotations

import itertools

from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.probe_inputs import (
    DENSE_SPACING,
    MAX_COUNT_WARMUPS,
    PROBE,
    SPACING,
    make_endpoint,
    make_metrics,
    make_request,
    make_state,
    side_values,
)

_HISTORY = frozenset({"TenantID"})
_CLOCK = frozenset({"Clock", "ArrivalTime"})
#: Pool metrics a comparison may read, and the knob of ``make_metrics`` that sets each.
_POOL = {"KVUtilization": "kv", "QueueDepth": "queue", "BatchSize": "running", "InFlightRequests": "running"}
#: The most pools a sequence is tried on (the sides of the other comparisons, strided to this many).
MAX_POOLS = 8
#: A window is a span of time an EPP holds state over: not longer than an hour.
MAX_WINDOW_US = 3_600_000_000


def limits(an: Analysis) -> list[int]:
    """Per-tenant limits: counts a threshold on the tenant's history compares to, and the numbers set into the
    local it compares (a limit set again per class); whole numbers a sequence of warm-ups can reach."""
    counted = [th for th in an.thresholds if th.role == "threshold" and _HISTORY & set(th.signals)]
    locals_ = {th.local for th in counted if th.local}
    values = [th.value for th in counted] + [th.value for th in an.thresholds if th.target and th.target in locals_]
    return sorted({int(v) for v in values if float(v).is_integer() and 2 <= v <= MAX_COUNT_WARMUPS})


def windows(an: Analysis) -> list[int]:
    """Spans on the clock the evolved code keeps arrivals for (``state.Clock - windowUs``) or compares an age to."""
    return sorted(
        {
            int(th.value)
            for th in an.thresholds
            if th.role in ("threshold", "offset") and _CLOCK & set(th.signals) and 0 < th.value <= MAX_WINDOW_US
        }
    )


def applies(an: Analysis, th: Threshold) -> bool:
    """Whether ``th`` is a per-tenant limit or a window length (``limits``, ``windows``) of a counted history."""
    if not limits(an):
        return False
    if th.value in windows(an) and _CLOCK & set(th.signals):
        return True
    counted = [o for o in an.thresholds if o.role == "threshold" and _HISTORY & set(o.signals)]
    return th in counted or bool(th.target and th.target in {o.local for o in counted if o.local})


def pools(an: Analysis, th: Threshold) -> list[list[dict]]:
    """Endpoint pairs at the sides of every other comparison on a pool metric (both endpoints alike: an
    admitter reads the pool's minimum, sum or average), or one idle pool when there is none."""
    grids = {}
    for o in an.thresholds:
        if o is th or o.role != "threshold":
            continue
        for signal in o.signals:
            knob = _POOL.get(signal)
            if knob is not None:
                grids.setdefault(knob, set()).update(side_values(o.value, knob))
    knobs = sorted(grids)
    combos = list(itertools.product(*(sorted(grids[k]) for k in knobs)))
    stride = max(1, -(-len(combos) // MAX_POOLS))
    out = []
    for combo in combos[::stride]:
        metrics = make_metrics(**dict(zip(knobs, combo, strict=True)))
        out.append([make_endpoint(PROBE, metrics), make_endpoint("pod-b", dict(metrics))])
    return out


def sequences(limit: int, window: int | None) -> list[tuple[int, int]]:
    """(arrivals, µs apart) for one limit: one short of it and at it, densely inside the window; then the count
    spread over one and a half windows (the window holds two thirds of it, one twice as long all of it) and over
    three quarters of one (it holds all, one half as long two thirds), and spread wider than the window."""
    dense = max(1, min(DENSE_SPACING, window // (2 * limit))) if window else DENSE_SPACING
    out = [(limit - 1, dense), (limit, dense)]
    if window:
        out += [(limit, max(1, 3 * window // (2 * limit))), (limit, max(1, 3 * window // (4 * limit)))]
        out.append((limit, window + SPACING))
    return out


def candidates(an: Analysis, th: Threshold, kind: str, stateful: bool) -> list[dict]:
    """The sequences (``sequences``) for every limit and window, each priority and pool; none unless ``th`` is
    a stateful admitter's per-tenant limit or window length (``applies``)."""
    if kind != "admission" or not stateful or not applies(an, th):
        return []
    out = []
    for eps, (limit, window), priority in itertools.product(
        pools(an, th), itertools.product(limits(an), windows(an) or [None]), (-1, 0, 1)
    ):
        for count, spacing in sequences(limit, window):
            warm = [make_request(priority=priority, rid=f"w-{k}") for k in range(count)]
            out.append(make_state(eps, make_request(priority=priority), warm, spacing))
    return out
