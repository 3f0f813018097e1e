"""The candidate inputs a probe runs the compiled plugin on, in llm-d terms (``probes`` says what for).

Per parameter: a grid over the llm-d inputs of the signals it reads (endpoint metrics, prompt size,
class, tenant, earlier requests), placed around its value and around the values of the comparisons it
must pass with; for an admitter, a pool whose endpoints move together (it reads sums, averages and
minima) and a load ramp the harness bisects to find the edge where the decision changes (``ramp``).
The grid is capped, and spread over its combinations so that every inner knob keeps all its values.
Pure: analysis in, candidate states out.
"""

from __future__ import annotations

import itertools
import json
import math

from bot.golang.analysis_types import Analysis, Node, Threshold
from bot.golang.gotree import named, walk

PROBE = "pod-a"
CLOCK = 1_700_000_000_000_000  # µs; any fixed wall-clock time
MAX_CANDIDATES = 160
#: An admitter's cap: its candidates also put pod-b at pod-a's metrics, and its class and warm-ups multiply
#: the grid (compact warm-ups keep the request the size the scorers' 160 were).
MAX_ADMISSION_CANDIDATES = 240
#: µs between a stateful admitter's warm-up requests (and the request decided): within any learning window.
SPACING = 200_000

#: The largest count (requests, blocks, prompt tokens) a candidate holds: the largest integer a float64 holds
#: exactly, since evolved code compares counts as floats. A threshold past it (``load > 1e19``, a "never"
#: sentinel) cannot be crossed by any count the plugin is given: clamped here, its probe finds no side past it
#: and says so, instead of an integer past int64 that neither JSON nor Go's int can carry. Sums of a few such
#: counts (a pool's, a ramp's) stay within int64.
MAX_COUNT = 2**53

#: BLIS signal -> the llm-d inputs a candidate varies for it.
_KNOBS = {
    "QueueDepth": ("queue",),
    "BatchSize": ("running",),
    "InFlightRequests": ("queue", "running"),
    "EffectiveLoad": ("queue", "running"),
    "KVUtilization": ("kv",),
    "FreeKVBlocks": ("kv", "blocks"),
    "TotalKvCapacityTokens": ("blocks",),
    "KvTokensInUse": ("kv", "blocks"),
    "InputTokens": ("tokens",),
    "SessionID": ("session",),
    "SLOClass": ("priority",),
    "Priority": ("priority",),
    "TenantID": ("tenant", "warmups"),
    "Clock": ("warmups",),
    "ArrivalTime": ("warmups",),
}


#: A scheduling plugin orders a pseudo-queue of the probe endpoint's waiting requests: their ages and number
#: come from its queue length (incumbents arrive incumbentSpacingUs apart), the request's class from its priority.
_SCHEDULING_KNOBS = _KNOBS | {"Clock": ("queue",), "ArrivalTime": ("queue",), "SLOClass": ("queue", "priority")}
#: Queue lengths a scheduling probe tries: the oldest incumbent has waited length x incumbentSpacingUs, so an
#: age term needs long queues to outweigh a class term.
_SCHEDULING_QUEUES = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256]


def count(v: float) -> int:
    """``v`` as a count a candidate can carry: an integer within +-MAX_COUNT (NaN: 0)."""
    if isinstance(v, float) and math.isnan(v):
        return 0
    return int(max(-MAX_COUNT, min(MAX_COUNT, v)))


def make_metrics(queue: int = 0, running: int = 0, kv: float = 0.0, blocks: int = 8000) -> dict:
    return {
        "WaitingQueueSize": count(queue),
        "RunningRequestsSize": count(running),
        "KVCacheUsagePercent": kv,
        "CacheNumBlocks": count(blocks),
        "CacheBlockSize": 16,
    }


def make_state(endpoints: list[dict], request: dict, warmups: list[dict] | None = None, spacing: int = SPACING) -> dict:
    """A candidate: ``request`` decided on ``endpoints`` at CLOCK, after ``warmups`` decided on the same
    endpoints ``spacing`` µs apart (compact events: the harness completes them from the state's views)."""
    return {
        "seed": 1,
        "blis": {"clock": CLOCK, "request": {}, "snapshots": [], "prefix": {}, "blockSize": 16},
        "llmd": {"request": request, "endpoints": endpoints},
        "history": [
            {
                "compact": True,
                "prefixTotal": 32,
                "blis": {"clock": CLOCK - (len(warmups) - i) * spacing, "request": {}},
                "llmd": {"request": w},
            }
            for i, w in enumerate(warmups or [])
        ],
    }


def make_request(
    tokens: int = 512, priority: int = 0, session: str = "", tenant: str = "tenant-a", rid: str = "r-1"
) -> dict:
    return {
        "RequestID": rid,
        "TargetModel": "model-a",
        "Headers": {"x-session-token": session} if session else {},
        "Priority": priority,
        "FairnessID": tenant,
        "RequestSizeBytes": count(tokens) * 4,
    }


def make_endpoint(name: str, metrics: dict | None, match: int = 0, total: int = 32) -> dict:
    return {"name": name, "metrics": metrics, "prefix": {"match": match, "total": total, "blockSize": 16}}


def _values(v: float, knob: str, spacings: tuple[int, ...] = (SPACING,), counts: tuple[int, ...] = ()) -> list:
    if knob in ("queue", "running", "blocks", "tokens"):
        v = count(v)  # a threshold past any count (or infinite) is probed at the largest count
    if knob in ("queue", "running"):
        top = max(4, int(abs(v)) * 2 + 2)
        return sorted({0, 1, 2, max(0, int(v) - 1), int(v), int(v) + 1, int(v) + 2, top, top * 4})
    if knob == "kv":
        base = [0.0, 0.5, 0.9, 1.0]
        if 0 <= v <= 1:
            base += [round(v, 2), round(min(1.0, v + 0.01), 2), round(max(0.0, v - 0.01), 2)]
        return sorted(set(base))
    if knob == "blocks":
        return sorted({0, 100, 8000, int(abs(v)) + 1})
    if knob == "tokens":
        return sorted({0, 64, 512, 4096, max(0, int(v)), int(v) + 16})
    if knob == "session":
        return ["", "session-1"]
    if knob == "priority":
        return [1, 0, -1]
    if knob == "tenant":
        return ["tenant-a", "tenant-b"]
    if knob == "warmups":
        # (how many, µs apart): a few and many within one window; a few spread past every time threshold, so
        # a window that closes (and what it learned: a moving average's coefficients) decides too.
        # And many, densely, past every limit on a tenant's count of earlier requests (``warmup_counts``).
        spaced = [(4, s) for s in spacings if s != SPACING]
        return [(0, SPACING), (4, SPACING), (12, SPACING)] + spaced + [(n, DENSE_SPACING) for n in counts]
    return [0]


#: Roles whose number multiplies or adds to a signal-derived value: it says nothing of the signal's scale.
_SCALELESS = ("coefficient", "factor", "step", "exponent")


#: Knobs with a scale: the rest (class, tenant, warm-ups, ...) always take their whole grid.
_NUMERIC = ("queue", "running", "kv", "blocks", "tokens")


def anchors(an: Analysis, th: Threshold, kind: str) -> dict[str, list | None]:
    """Values for the knobs a candidate needs beyond the parameter's own scale. A threshold decides only when
    the other comparisons of its condition (on its line) hold: in ``inputLen > 4096 && queuePerInstance > 8``
    the first needs a queue past 8, so its candidates also take queues either side of 8. A coefficient, factor
    or step says nothing of its signals' scale: an admitter's (a yes or no it changes only where a comparison
    holds) takes values either side of the first threshold on the same signal (``inputLenStep``'s prompt
    length either side of 4096); a scorer's, whose every use moves a score, sits around its own value.
    None: the knob's whole grid."""
    table = _SCHEDULING_KNOBS if kind == "scheduling" else _KNOBS

    def knobs(t: Threshold) -> set[str]:
        return {k for s in t.signals for k in table.get(s, ())}

    own = knobs(th)
    compared = [o for o in an.thresholds if o.role == "threshold"]
    out: dict[str, list | None] = {}
    if th.role in _SCALELESS and kind == "admission":
        for signal in th.signals:  # each knob placed by a threshold on the very signal it sets
            o = next((o for o in compared if signal in o.signals), None)
            for k in table.get(signal, ()) if o is not None else ():
                out.setdefault(k, side_values(o.value, k) if k in _NUMERIC else None)
        return out
    for o in (o for o in compared if o.line == th.line and o is not th):
        for k in sorted(knobs(o) - own):
            out.setdefault(k, side_values(o.value, k) if k in _NUMERIC else None)
    for signal in th.regime[3] if th.regime is not None else ():  # a regime's weight acts only in its regime
        for k in sorted(set(table.get(signal, ())) - own):
            out.setdefault(k, None)
    return out


#: Request signals that carry its class: a branch on a value derived from them needs candidates of every priority.
_CLASS = frozenset({"SLOClass", "Priority"})
_FUNCS = ("function_declaration", "method_declaration", "func_literal")


def class_guarded(an: Analysis, th: Threshold) -> bool:
    """Whether a condition ``th`` acts under reads the request's class, directly or through a local set by class
    (``loadW`` set in a ``switch req.SLOClass``, then ``if loadW > 0.5 && snap.QueueDepth > 6``): its candidates
    must then vary the priority, or every one takes the same class and the branch never opens (newprog2 7).
    A threshold that reads the class itself already varies it (``_KNOBS``)."""
    if an.src is None:
        return False
    root = an.src.tree.root_node
    for o in th.occurrences:
        n = root.descendant_for_byte_range(o.start, o.end)
        func = n
        while func is not None and func.type not in _FUNCS:
            func = func.parent
        if func is None:
            continue
        derived = _class_locals(an, func, o.owner)
        while n is not None and n is not func:
            cond = n.child_by_field_name("condition") if n.type == "if_statement" else None
            if cond is not None and _reads_class(an, cond, derived, o.owner):
                return True
            n = n.parent
    return False


def _reads_class(an: Analysis, node: Node, derived: set[str], owner: str | None) -> bool:
    """``node`` reads the class: a ``.SLOClass`` or ``.Priority`` field, or a local derived from it."""
    for n in walk(node):
        if n.type == "field_identifier" and n.text.decode() in _CLASS:
            return True
        if n.type == "identifier" and (
            (name := n.text.decode()) in derived or an.var_signals.get(f"{owner}::{name}", set()) & _CLASS
        ):
            return True
    return False


def _class_locals(an: Analysis, func: Node, owner: str | None) -> set[str]:
    """Locals ``func`` assigns inside a branch on the class (a case of ``switch req.SLOClass``, an ``if`` on it):
    their value stands for the class, whatever table or literal it comes from."""
    out: set[str] = set()
    for n in walk(func):
        if n.type == "expression_switch_statement":
            value = n.child_by_field_name("value")
            if value is None or not _reads_class(an, value, set(), owner):
                continue
            bodies = [c for c in named(n) if c.type in ("expression_case", "default_case")]
        elif n.type == "if_statement":
            cond = n.child_by_field_name("condition")
            if cond is None or not _reads_class(an, cond, set(), owner):
                continue
            bodies = [b for b in (n.child_by_field_name(f) for f in ("consequence", "alternative")) if b is not None]
        else:
            continue
        for stmt in (s for b in bodies for s in walk(b)):
            if stmt.type in ("assignment_statement", "short_var_declaration"):
                left = stmt.child_by_field_name("left")
                out |= {i.text.decode() for i in (named(left) if left is not None else []) if i.type == "identifier"}
    return out


def side_values(v: float, knob: str) -> list:
    """A few values of ``knob`` either side of ``v``: the extremes of its grid and the nearest on each side."""
    grid = _values(v, knob)
    below, above = [x for x in grid if x < v], [x for x in grid if x > v]
    return sorted({grid[0], grid[-1], *below[-1:], *above[:1]})


def warmup_spacings(an: Analysis) -> tuple[int, ...]:
    """Spacings of the warm-up requests: SPACING, and one past every threshold on the clock (a window the
    evolved logic closes after that long: ``clock-a.windowStart > 10_000_000``)."""
    clock = [th.value for th in an.thresholds if th.role == "threshold" and {"Clock", "ArrivalTime"} & set(th.signals)]
    return (SPACING, *sorted({int(v) + SPACING for v in clock if 0 < v < 3600e6}))


#: µs between warm-ups sent past a count limit: the harness's densest burst (harness_world.BURST_GAP_US), so they
#: fall inside any window the limit counts over.
DENSE_SPACING = 5_000
#: The most warm-ups a count limit gets (each costs the harness a decision).
MAX_COUNT_WARMUPS = 256


def warmup_counts(an: Analysis) -> tuple[int, ...]:
    """Numbers of warm-ups past every limit on a count of the tenant's earlier requests (``len(kept) >= limit``,
    and the values the evolved code sets that limit to per class): below it a stateful admitter admits whatever
    else holds, so a parameter that acts only on a tenant past its limit (a KV override that admits it anyway)
    decides nothing unless a candidate sends that many. Two past it: the first warm-up is another tenant's."""
    counted = [th for th in an.thresholds if th.role == "threshold" and "TenantID" in th.signals]
    locals_ = {th.local for th in counted if th.local}
    limits = [th.value for th in counted] + [th.value for th in an.thresholds if th.target and th.target in locals_]
    return tuple(sorted({int(v) + 2 for v in limits if 12 < int(v) + 2 <= MAX_COUNT_WARMUPS}))


def _warmups(count: int) -> list[dict]:
    """``count`` earlier sheddable requests, the first from tenant-b and the rest from tenant-a: a tenant-a
    request then comes from a tenant far above the average per tenant, a tenant-b one from one below it."""
    return [
        make_request(tokens=512, priority=-1, tenant="tenant-b" if k == 0 else "tenant-a", rid=f"w-{k}")
        for k in range(count)
    ]


def _stride(least: int, sizes: list[int], coprime: bool) -> int:
    """The step through the grid's combinations that spreads the cap over the whole grid: at least ``least``
    and, for an admitter (whose class and warm-ups multiply the grid), prime to the inner knobs' sizes, so
    every inner knob still takes every value (a step of 18 through 12 inner combinations would visit only two
    of them: never a sheddable request after spaced warm-ups). A scorer's grid keeps the plain step."""
    inner = math.prod(sizes[1:])
    stride = max(1, least)
    while coprime and stride > 1 and math.gcd(stride, inner) != 1:
        stride += 1
    return stride


def candidates(
    th: Threshold,
    kind: str,
    extra: tuple[str, ...] = (),
    anchored: dict[str, list | None] | None = None,
    spacings: tuple[int, ...] = (SPACING,),
    counts: tuple[int, ...] = (),
) -> list[dict]:
    """Inputs varying the llm-d sources of the signals the threshold reads (pod-a is the probe) around its
    value, the knobs ``anchored`` names (``anchors``) over their values, and the ``extra`` inputs the branch
    may also depend on (the request's class, earlier requests). An admitter reads the pool as a whole (sums,
    averages, minima), so its candidates also put pod-b at pod-a's metrics: an average past a KV threshold
    needs both pods there."""
    table = _SCHEDULING_KNOBS if kind == "scheduling" else _KNOBS
    knobs = sorted({k for s in th.signals for k in table.get(s, ())})
    if not knobs:
        return []
    anchored = anchored or {}
    knobs += sorted(set(anchored) - set(knobs))
    knobs += [k for k in extra if k not in knobs]
    grids = [
        anchored[k]
        if anchored.get(k)
        else _SCHEDULING_QUEUES
        if kind == "scheduling" and k == "queue"
        else _values(th.value, k, spacings, counts)
        for k in knobs
    ]
    out: list[dict] = []
    others = [make_metrics(), make_metrics(queue=2, running=4, kv=0.3)] + ([None] if kind == "admission" else [])
    combos = list(itertools.product(*grids))
    cap = MAX_ADMISSION_CANDIDATES if kind == "admission" else MAX_CANDIDATES
    stride = _stride(-(-len(combos) * len(others) // cap), [len(g) for g in grids], kind == "admission")
    for combo in combos[::stride]:
        setting = dict(zip(knobs, combo, strict=True))
        metrics = make_metrics(
            queue=setting.get("queue", 0),
            running=setting.get("running", 0),
            kv=setting.get("kv", 0.0),
            blocks=setting.get("blocks", 8000),
        )
        request = make_request(
            tokens=setting.get("tokens", 512),
            priority=setting.get("priority", -1 if kind == "admission" else 0),
            session=setting.get("session", ""),
            tenant=setting.get("tenant", "tenant-a"),
        )
        count, spacing = setting.get("warmups", (0, SPACING))
        warm = _warmups(count)
        for other in others:
            eps = [make_endpoint(PROBE, metrics), make_endpoint("pod-b", dict(metrics) if other is None else other)]
            out.append(make_state(eps, request, warm, spacing))
            if len(out) >= cap:
                return out
    return out


#: Requests a rival endpoint carries beyond the probed one's load (``rivals``): just past it, a few and many past it.
RIVAL_EXTRA = (1, 4, 16)
#: The most rival candidates a live parameter gets: each costs the harness one or two decisions.
MAX_RIVALS = 48


def rivals(cands: list[dict]) -> list[dict]:
    """Candidates for a scorer's live parameter (a coefficient, a penalty) in which pod-b carries pod-a's whole load,
    as running requests, plus each of RIVAL_EXTRA, at pod-a's KV. The plugin rescales scores so the lowest sits at 0
    (``endpointScores``): beside an idle or lightly loaded pod-b, a pod-a the parameter pushes down is that lowest
    endpoint however far it is pushed, so doubling the parameter never moves pod-a's score. A rival as busy or
    busier keeps pod-a off the bottom; how much busier depends on what else favours it (g09's queue-depth scorer
    prefers its empty queue: only 16 more requests outweighed that), hence a few steps. Its queue stays empty, so
    a branch on one endpoint's queue (g09's ``snap.QueueDepth > 6``) opens on pod-a only. One set per distinct
    pod-a and request in the grid, in grid order, strided to MAX_RIVALS: the harness takes the first candidate
    that decides, so appended after the grid they change no test the grid already found."""
    seen: dict[str, dict] = {}
    for c in cands:
        probe = next(e for e in c["llmd"]["endpoints"] if e["name"] == PROBE)
        if probe["metrics"] is not None:
            key = json.dumps([probe, c["llmd"]["request"], c["history"]], sort_keys=True)
            seen.setdefault(key, c)
    bases = list(seen.values())
    per = max(1, MAX_RIVALS // len(RIVAL_EXTRA))
    out = []
    for c in bases[:: -(-len(bases) // per) or 1]:
        probe = next(e for e in c["llmd"]["endpoints"] if e["name"] == PROBE)
        m = probe["metrics"]
        load = m["WaitingQueueSize"] + m["RunningRequestsSize"]
        for extra in RIVAL_EXTRA:
            rival = make_metrics(running=load + extra, kv=m["KVCacheUsagePercent"], blocks=m["CacheNumBlocks"])
            eps = [probe, make_endpoint("pod-b", rival)]
            out.append(c | {"llmd": c["llmd"] | {"endpoints": eps}})
    return out[:MAX_RIVALS]


#: The most requests a ramp adds to every endpoint: past any per-instance limit a simulator calibrates.
RAMP_MAX = 512


def ramp(an: Analysis, kind: str) -> dict:
    """How the harness adds load to an admitter's candidates to find the edge where its decision changes
    (``rampFlips`` in the harness): running requests when it reads an in-flight or running count, waiting ones
    when it reads only the queue. A scorer's outcome is a number any parameter it uses moves: no ramp."""
    reads = set(an.signal_names)
    if kind != "admission":
        return {}
    if reads & {"InFlightRequests", "BatchSize", "EffectiveLoad"}:
        return {"ramp": "running", "rampMax": RAMP_MAX}
    if "QueueDepth" in reads:
        return {"ramp": "queue", "rampMax": RAMP_MAX}
    return {}


def ramped(state: dict, field: str, k: int) -> dict:
    """``state`` with ``k`` more running (or waiting) requests on every endpoint, for the warm-ups too (they
    meet the state's endpoints): the state the harness decided when it answered with that ramp (``withRamp``)."""
    if not k:
        return state
    key = "WaitingQueueSize" if field == "queue" else "RunningRequestsSize"

    def view(v: dict) -> dict:
        eps = [
            e | {"metrics": e["metrics"] | {key: e["metrics"][key] + k}} if e.get("metrics") else e
            for e in v["endpoints"]
        ]
        return v | {"endpoints": eps}

    # A compact warm-up meets the state's endpoints; a walk's (``load_sequences``) carries its own, ramped alike.
    history = [h | {"llmd": view(h["llmd"])} if h["llmd"].get("endpoints") else h for h in state["history"]]
    return state | {"llmd": view(state["llmd"]), "history": history}
