"""Unit-test inputs found by running the compiled plugin, not by interpreting Go in Python.

For every parameter the plugin gets, this module writes candidate inputs *in llm-d terms* (endpoint
metrics, the prompt's prefix match, request priority, headers and size, earlier requests for
stateful admitters) that vary the signals the parameter's comparison reads. The harness runs the
plugin on each (its comparisons watched), and keeps, per threshold, the input whose watched value
lies nearest the threshold on each side where moving the threshold to a readable value across it
changes the outcome; per coefficient, the first input where doubling it does, or the nearest move the plugin's
Validate() accepts (``live_move``; a scorer's also meets a busier pod-b: ``probe_inputs.rivals``). An admitter's outcome is a yes or no that a parameter changes only
near the edge of the decision, so the harness also adds load to its candidates and bisects for that edge
(``probe_inputs`` writes the candidates and the ramp).
A number that acts only on a signal with no llm-d source is no parameter (``dead_branches.demote``), so it gets
no probe. Pure: specs in, specs out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.golang import average_sequences, load_sequences, queue_properties, window_sequences
from bot.golang.analysis_types import Analysis
from bot.golang.carry import watch_id
from bot.golang.probe_inputs import (
    CLOCK,
    PROBE,
    SPACING,
    anchors,
    candidates,
    class_guarded,
    count,
    ramp,
    ramped,
    rivals,
    warmup_counts,
    warmup_spacings,
)
from bot.golang.probe_inputs import make_endpoint as _endpoint
from bot.golang.probe_inputs import make_metrics as _metrics
from bot.golang.probe_inputs import make_request as _request
from bot.golang.probe_inputs import make_state as _state

__all__ = ["CLOCK", "PROBE", "SPACING", "Case"]


@dataclass
class Case:
    """One generated unit-test case, in llm-d terms."""

    name: str
    param: str
    field: str
    moved: float
    want: str  # lower | higher | reject | admit | earlier | later
    state: dict  # the candidate (llm-d view + warmups) the harness ran
    side: str
    integer: bool


def specs(
    an: Analysis, defaults: dict, kind: str, stateful: bool = False, checks: dict[str, list[dict]] | None = None
) -> tuple[list[dict], list[str]]:
    """Probe specs for the harness, and the parameters left without a test (with the reason). A live parameter's
    probe carries the value the harness moves it to (``live_move``: one the plugin's Validate() accepts, by
    ``checks``, ``ParamSpec.checks`` by name)."""
    out, skipped = [], []
    spacings, counts = warmup_spacings(an), warmup_counts(an)
    for th in an.thresholds:
        if not th.param:
            continue
        extra: tuple[str, ...] = ()
        if kind == "scheduling":
            extra = ("queue", "priority")  # the request's place in a queue depends on both, whatever the term reads
        elif kind == "admission":
            extra = ("priority", "warmups") if stateful else ("priority",)
        elif "SessionID" in an.signal_names:
            extra = ("session",)
        if "priority" not in extra and class_guarded(an, th):  # a branch that opens for one class only
            extra += ("priority",)
        cands = candidates(th, kind, extra, anchors(an, th, kind), spacings, counts)
        # A per-tenant limit or a window decides on one tenant's arrivals spaced in time, a moving average's weight on
        # one tenant's prompts of more than one length: those sequences first.
        # A flag set under one cut and cleared under another decides on a pool whose load fell: those walks too,
        # first for a threshold under the flag.
        walks = load_sequences.candidates(an, th, kind, stateful)
        first, last = (walks, []) if load_sequences.guarded(an, th) else ([], walks)
        cands = (
            first
            + window_sequences.candidates(an, th, kind, stateful)
            + average_sequences.candidates(an, th, kind, stateful)
            + cands
            + last
        )
        if not cands:
            skipped.append(f"`{th.param}`: no llm-d input sets {', '.join(th.signals) or 'its subject'}")
            continue
        comparisons = [o for o in th.occurrences if o.role == "threshold" and o.op in (">", ">=", "<", "<=")]
        if kind == "routing" and not comparisons:
            cands += rivals(cands)  # a pod-b about as busy: the rescaling pins no pod-a it pushes down to 0
        base = {
            **ramp(an, kind),
            "param": th.param,
            "value": th.value,
            "integer": th.go_type in ("int", "int64"),
            "endpoint": PROBE,
            "defaults": defaults,
            "candidates": cands,
        }
        if comparisons:
            occ = comparisons[0]
            out.append({**base, "name": th.param, "role": "threshold", "watch": watch_id(th, occ.line), "op": occ.op})
            continue
        moved = live_move(th.param, defaults.get(th.param, th.value), defaults, checks or {})
        if moved is None:
            skipped.append(
                f"`{th.param}`: the plugin's Validate() accepts no value near the evolved {_fmt(th.value, False)} "
                "(doubled, halved, or either brought back towards it), so no plugin can be built with it moved"
            )
            continue
        out.append({**base, "name": th.param, "role": "live", "watch": "", "op": "", "moved": moved})
    return out, skipped


#: Admission behaviour states: (label, endpoint load, priority). An idle and an overloaded pool, each with a
#: request of higher, default and sheddable priority: what the admitter does with each, in llm-d terms.
_ADMISSION_BEHAVIOUR = [(load, priority) for load in ("idle", "overloaded") for priority in (1, 0, -1)]


#: The endpoint metrics of an idle and of an overloaded pool in those states (the generated test writes them out).
ADMISSION_POOLS = {"idle": _metrics(queue=0, running=2, kv=0.1), "overloaded": _metrics(queue=32, running=64, kv=0.97)}


def _admission_behaviour(defaults: dict) -> list[dict]:
    pools = ADMISSION_POOLS
    cands = [
        _state([_endpoint(PROBE, pools[load]), _endpoint("pod-b", pools[load])], _request(priority=priority))
        for load, priority in _ADMISSION_BEHAVIOUR
    ]
    return [
        observe_probe("behaviour", defaults, cands, [f"{load}:{priority}" for load, priority in _ADMISSION_BEHAVIOUR])
    ]


def observe_probe(name: str, defaults: dict, candidates: list[dict], labels: list[str]) -> dict:
    """A probe that only records what the plugin decides on each candidate (with ``defaults`` as parameters)."""
    return {
        "name": name,
        "param": "",
        "role": "observe",
        "watch": "",
        "op": "",
        "value": 0,
        "integer": False,
        "endpoint": PROBE,
        "defaults": defaults,
        "candidates": candidates,
        "labels": labels,
    }


#: Running requests on the idler of two endpoints (the other runs twice as many) in the recalibration check:
#: pod-scale loads, around thresholds raised to pod scale.
RECALIBRATION_LOADS = (4, 8, 12, 16, 24, 32)
#: The idle endpoint beside each pair that straddles a cut: with it the least-loaded term sees both of the pair
#: as loaded (as a fleet does), so what decides between them is the cut and the taper, not the distance to 0.
IDLE = "pod-idle"


def straddling_pairs(cuts) -> list[tuple[int, int]]:
    """Running counts (idler, busier) on both sides of every cut: a load may count running requests once or
    twice (BatchSize + InFlightRequests), so pairs sit around the cut and around half of it. Without them
    "a busier endpoint scored lower at every pair tried" says nothing about the step the cut makes."""
    pairs = set()
    for v in cuts:
        cut = count(v)  # a cut past any count is tried at the largest one (``probe_inputs.MAX_COUNT``)
        for mid in {cut // 2, cut}:
            pairs |= {(r, r + d) for r in (mid - 1, mid) for d in (1, 2) if r >= 1}
    return sorted(pairs)


def recalibration_specs(
    kind: str, defaults: dict, recalibrated: dict[str, float], alternatives: list[dict] = (), cuts=()
) -> list[dict]:
    """States that check the advice to re-calibrate simulator-scale thresholds: with the thresholds at the
    ``recalibrated`` values and every other parameter as evolved, does a busier endpoint still score lower?
    Two endpoints at r and 2r, and, beside an idle one, two endpoints either side of every value in ``cuts``.
    Each of ``alternatives`` (values for parameters of the same step) is tried beside it, named
    ``recalibrated:<i>``, so a finding can offer values that do not invert instead of only saying which move."""
    if kind != "routing" or not recalibrated:
        return []
    pairs = [(r, 2 * r) for r in RECALIBRATION_LOADS]
    cands = [
        _state(
            [_endpoint(PROBE, _metrics(running=a, kv=0.3)), _endpoint("pod-b", _metrics(running=b, kv=0.3))],
            _request(),
        )
        for a, b in pairs
    ]
    straddle = [p for p in straddling_pairs(cuts) if p not in pairs]
    cands += [
        _state(
            [
                _endpoint(IDLE, _metrics(kv=0.3)),
                _endpoint(PROBE, _metrics(running=a, kv=0.3)),
                _endpoint("pod-b", _metrics(running=b, kv=0.3)),
            ],
            _request(),
        )
        for a, b in straddle
    ]
    labels = [f"{a}:{b}" for a, b in pairs + straddle]
    out = [observe_probe("recalibrated", defaults | recalibrated, cands, labels)]
    out += [
        observe_probe(f"recalibrated:{i}", defaults | recalibrated | alt, cands, labels)
        for i, alt in enumerate(alternatives)
    ]
    return out


def recalibration_pairs(probe_specs: list[dict]) -> int:
    """How many load pairs the recalibration check tried."""
    return next((len(s["labels"]) for s in probe_specs if s["name"] == "recalibrated"), 0)


def recalibration_inversions(
    probe_specs: list[dict], results: list[dict], name: str = "recalibrated"
) -> list[tuple[int, float, int, float]]:
    """(busier running, its score, idler running, its score) wherever the recalibrated plugin scored the busier
    endpoint higher: the re-calibration the config asks for would send traffic to the busier pod."""
    spec = next((s for s in probe_specs if s["name"] == name), None)
    result = next((r for r in results if r["name"] == name), None)
    if spec is None or result is None:
        return []
    out = []
    for c in result.get("cases", []):
        idler, busier = (int(x) for x in spec["labels"][c["candidate"]].split(":"))
        scores = c["default"].get("scores", {})
        a, b = scores.get(PROBE, 0.0), scores.get("pod-b", 0.0)
        if b > a + 1e-9:
            out.append((busier, b, idler, a))
    return out


#: Waiting counts of the endpoints a scheduling behaviour state puts side by side: an idle one, a short and a long
#: queue. Past maxPseudoQueue every count is modelled as the cap: QUEUE_CAP puts one at it and one far beyond.
QUEUE_WAITING = (0, 5, 40)
QUEUE_CAP = (0, 1000)
#: Prompts a scheduling behaviour state sends when the evolved order reads the prompt length: short and long.
QUEUE_TOKENS = (64, 4096)


def _queue_state(waiting: tuple[int, ...], priority: int, tokens: int) -> dict:
    endpoints = [_endpoint(f"waiting-{w}", _metrics(queue=w)) for w in waiting]
    return _state(endpoints, _request(tokens=tokens, priority=priority))


def _queue_behaviour(reads: set[str], defaults: dict) -> list[dict]:
    """States that pin what a queue-position scorer does: the scores it gives endpoints with 0, 5 and 40 waiting
    for each priority (when the evolved order reads a class) and prompt length (when it reads one), and that a
    queue past maxPseudoQueue scores like one at it. The generated test asserts them exactly."""
    priorities = (1, 0, -1) if reads & {"SLOClass", "Priority"} else (0,)
    tokens = QUEUE_TOKENS if "InputTokens" in reads else (512,)
    cases = [(QUEUE_WAITING, p, t) for p in priorities for t in tokens]
    cap = int(defaults.get("maxPseudoQueue", 256))
    cases.append(((QUEUE_CAP[0], cap, QUEUE_CAP[1]), 0, tokens[-1]))
    labels = [
        f"{'cap' if k == len(cases) - 1 else 'queue'}:{p}:{t if 'InputTokens' in reads else ''}:"
        + ",".join(map(str, w))
        for k, (w, p, t) in enumerate(cases)
    ]
    return [observe_probe("queue-behaviour", defaults, [_queue_state(w, p, t) for w, p, t in cases], labels)]


def queue_behaviour(probe_specs: list[dict], results: list[dict]) -> list[dict]:
    """The scheduling behaviour rows the compiled plugin gave: per state, the request (priority, prompt tokens or
    None when the order reads no prompt length), the endpoints' waiting counts, the score of each, and whether
    it is the cap state."""
    spec = next((s for s in probe_specs if s["name"] == "queue-behaviour"), None)
    result = next((r for r in results if r["name"] == "queue-behaviour"), None)
    if spec is None or result is None:
        return []
    rows = []
    for c in result.get("cases", []):
        what, priority, tokens, waiting = spec["labels"][c["candidate"]].split(":")
        counts = [int(w) for w in waiting.split(",")]
        scores = c["default"].get("scores", {})
        if c["default"].get("error") or any(f"waiting-{w}" not in scores for w in counts):
            continue
        rows.append(
            {
                "priority": int(priority),
                "tokens": int(tokens) if tokens else None,
                "waiting": counts,
                "scores": [scores[f"waiting-{w}"] for w in counts],
                "cap": what == "cap",
            }
        )
    return rows


def behaviour_specs(kind: str, reads: set[str], defaults: dict) -> list[dict]:
    """States that say what the plugin does in llm-d terms: a busier endpoint, a fuller KV cache, ... (routing);
    which priorities an idle and an overloaded pool admit (admission); the scores a queue-position scorer gives
    short and long queues per priority and prompt length (scheduling)."""
    if kind == "admission":
        return _admission_behaviour(defaults)
    if kind == "scheduling":
        return _queue_behaviour(reads, defaults)
    if kind != "routing":
        return []
    pairs = []
    if reads & {"QueueDepth", "InFlightRequests", "EffectiveLoad"}:
        pairs.append(("waiting", _metrics(), _metrics(queue=8)))
    if reads & {"BatchSize", "InFlightRequests", "EffectiveLoad"}:
        pairs.append(("running", _metrics(), _metrics(running=16)))
    if reads & {"KVUtilization"}:
        pairs.append(("kv", _metrics(kv=0.2), _metrics(kv=0.95)))
    cands = [_state([_endpoint(PROBE, a), _endpoint("pod-b", b)], _request()) for _, a, b in pairs]
    if reads & {"prefix"}:
        cands.append(_state([_endpoint(PROBE, _metrics(), 0), _endpoint("pod-b", _metrics(), 24)], _request()))
        pairs.append(("prefix", None, None))
    if not cands:
        return []
    return [observe_probe("behaviour", defaults, cands, [p[0] for p in pairs])]


def select(an: Analysis, probe_specs: list[dict], results: list[dict], kind: str) -> list[Case]:
    """Test cases from the harness's probe answers, in parameter order."""
    by_name = {r["name"]: r for r in results}
    fields = {th.param: th.field for th in an.thresholds if th.param}
    cases: list[Case] = []
    for spec in probe_specs:
        if spec["role"] == "observe":
            continue
        for c in by_name.get(spec["name"], {}).get("cases", []):
            cases.append(_case(spec, c, fields.get(spec["param"], spec["param"]), kind))
    return cases


def _case(spec: dict, c: dict, field: str, kind: str) -> Case:
    if kind == "admission":
        want = "admit" if c["movedOut"].get("admit") else "reject"
        outcome = "the request is admitted" if want == "admit" else "the request is rejected"
    else:
        d, m = c["default"]["scores"].get(PROBE, 0), c["movedOut"]["scores"].get(PROBE, 0)
        want = "higher" if m > d else "lower"
        outcome = f"{PROBE} scores {want}"
    moved = _fmt(c["moved"], spec["integer"])
    value = _fmt(spec["value"], spec["integer"])
    x = _fmt(c["x"], False)
    whose = "the" if kind == "admission" else f"{PROBE}'s"  # an admitter's compared value is not one endpoint's
    # The name says what the assertion checks: the outcome with the threshold moved, against the default.
    if c["side"] == "live":
        how = "doubled" if c["moved"] == 2 * spec["value"] else "moved"  # a move Validate() accepts (``live_move``)
        name = f"{spec['param']} is live: {how} to {moved}, {outcome}"
    elif c["side"] == "past":
        name = (
            f"{spec['param']}={value}: {whose} compared value {x} {_RELATION.get(spec.get('op'), _PAST)[0]}, so the "
            f"branch applies; moved to {moved} it does not, and {outcome}"
        )
    else:
        name = (
            f"{spec['param']}={value}: {whose} compared value {x} {_RELATION.get(spec.get('op'), _PAST)[1]}, so the "
            f"branch does not apply; moved to {moved} it does, and {outcome}"
        )
    return Case(
        name=name,
        param=spec["param"],
        field=field,
        moved=c["moved"],
        want=want,
        state=ramped(spec["candidates"][c["candidate"]], spec.get("ramp", ""), c.get("ramp", 0)),
        side=c["side"],
        integer=spec["integer"],
    )


#: (the comparison holds, it does not) in words, by the watched comparison's operator with the compared value on its
#: left (``now-t <= windowUs``: 2.2 s "is at or below it", inside the window; trial 3 read it "past it", as a ``>``).
_RELATION = {
    ">": ("is above it", "is at or below it"),
    ">=": ("is at or above it", "is below it"),
    "<": ("is below it", "is at or above it"),
    "<=": ("is at or below it", "is above it"),
    "==": ("equals it", "differs from it"),
    "!=": ("differs from it", "equals it"),
}
_PAST = ("is past it", "is not past it")


def _fmt(v: float, integer: bool) -> str:
    if integer or float(v).is_integer():
        return str(round(v))
    return f"{v:.6g}"


def behaviour_facts(probe_specs: list[dict], results: list[dict]) -> list[tuple[str, str]]:
    """(label, direction) per behaviour state: how the loaded (or warmer) endpoint scored vs the other."""
    spec = next((s for s in probe_specs if s["name"] == "behaviour"), None)
    result = next((r for r in results if r["name"] == "behaviour"), None)
    if spec is None or result is None:
        return []
    out = []
    for c in result.get("cases", []):
        label = spec["labels"][c["candidate"]]
        if ":" in label:  # admission: admitted or rejected
            if not c["default"].get("error"):
                out.append((label, "admit" if c["default"].get("admit") else "reject"))
            continue
        scores = c["default"].get("scores", {})
        a, b = scores.get(PROBE, 0.0), scores.get("pod-b", 0.0)
        out.append((label, "lower" if b < a else "higher" if b > a else "same"))
    return out


def canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


#: How far each parameter is moved to see whether the behaviour rows depend on it: doubled and halved.
BEHAVIOUR_MOVES = (2.0, 0.5)
_BEHAVIOURS = ("behaviour", "queue-behaviour", "sequence")  # "sequence": a stateful admitter's (``sequences``)
#: How many times a move Validate() refuses is brought halfway back towards the evolved value before it is given up.
_NARROWINGS = 4


#: How a live probe moves its parameter, in the order tried: doubled, else halved (``live_move``).
LIVE_MOVES = (2.0, 0.5)


def live_move(name: str, value: float, defaults: dict, checks: dict[str, list[dict]]) -> float | None:
    """The value a live probe moves ``name`` to: doubled, or 1 from 0, when the plugin's Validate() accepts it;
    else the nearest accepted move towards ``value`` (``valid_move``), first up, then down. The harness builds
    the plugin with it, and a refused value builds none, so the probe would find no input that decides: the
    example's loadFactor 0.4 doubled to 0.8 breaks its taper relation (``loadCoeff*(loadHighThreshold-
    loadLowThreshold) <= 1-loadFactor``), 0.6 does not. None when no accepted value moves it."""
    if value == 0:
        one = 1 if isinstance(value, int) else 1.0
        return one if _accepted(name, one, defaults, checks) else None
    return next(
        (m for f in LIVE_MOVES if (m := valid_move(name, value, f, defaults, checks)) is not None),
        None,
    )


def _accepted(name: str, moved: float, defaults: dict, checks: dict[str, list[dict]]) -> bool:
    """Whether the plugin's Validate() accepts ``defaults`` with ``name`` at ``moved``."""
    from bot.golang import param_relations
    from bot.golang.params import out_of_range

    numbers = {k: v for k, v in defaults.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return not out_of_range(moved, checks.get(name, [])) and not param_relations.broken(checks, numbers | {name: moved})


def valid_move(name: str, value: float, factor: float, defaults: dict, checks: dict[str, list[dict]]) -> float | None:
    """``value`` moved by ``factor``, or, when the plugin's Validate() refuses that (a 0-1 KV threshold of 0.85
    doubled to 1.7), the move brought halfway back towards ``value`` until it is accepted (0.85 -> 0.956): a
    refused value builds no plugin, so the probe would answer nothing and say nothing about the parameter.
    None when no such move is accepted or moves the value at all."""
    for _ in range(_NARROWINGS + 1):
        moved = round(value * factor) if isinstance(value, int) else value * factor
        if moved == value:
            return None
        if _accepted(name, moved, defaults, checks):
            return moved
        factor = 1 + (factor - 1) / 2
    return None


def behaviour_moves(behaviour: list[dict], defaults: dict, checks: dict[str, list[dict]] | None = None) -> list[dict]:
    """Copies of the behaviour probes with one numeric parameter doubled or halved (named
    ``<probe>@<param>@<factor>``), each move kept inside what the plugin's Validate() accepts (``checks``:
    ``ParamSpec.checks`` by name; ``valid_move``). A parameter with no threshold test may still decide a
    behaviour row the generated test asserts (s02's maxWaitUs ages the pseudo-queue's incumbents); these copies
    find out. A parameter at zero stays where it is: doubling or halving zero moves nothing."""
    out = []
    for spec in (s for s in behaviour if s["name"] in _BEHAVIOURS):
        for name, value in sorted(defaults.items()):
            if isinstance(value, bool) or not isinstance(value, int | float) or value == 0:
                continue
            for factor in BEHAVIOUR_MOVES:
                moved = valid_move(name, value, factor, defaults, checks or {})
                if moved is not None:
                    out.append(
                        {**spec, "name": f"{spec['name']}@{name}@{factor:g}", "defaults": defaults | {name: moved}}
                    )
    return out


def _common(result: dict, other: dict) -> dict:
    """``result`` with only the candidates ``other`` answered too (a candidate the plugin failed on has no case)."""
    answered = {c["candidate"] for c in other.get("cases", [])}
    return {**result, "cases": [c for c in result.get("cases", []) if c["candidate"] in answered]}


def _breaks_an_assertion(probe: str, spec: dict, kept: dict, moved: dict) -> bool:
    """Whether the moved answer fails the behaviour test generated from the kept one. A scheduler's test states
    relations that held on the base scores, so another score breaks it only when a relation fails."""
    reader = queue_behaviour if probe == "queue-behaviour" else behaviour_facts
    base, now = (reader([{**spec, "name": probe}], [{**answer, "name": probe}]) for answer in (kept, moved))
    if probe == "queue-behaviour":
        return not queue_properties.still_hold(queue_properties.decide(base), now)
    return now != base


def behaviour_exercised(probe_specs: list[dict], results: list[dict]) -> set[str]:
    """The parameters whose move (``behaviour_moves``) breaks what a behaviour test asserts: a statement a
    scheduler's test makes of its scores (``queue_properties``), the direction or admission of the other kinds.
    The generated behaviour test exercises them."""
    by_name = {r["name"]: r for r in results}
    out: set[str] = set()
    for spec in probe_specs:
        probe, _, rest = spec["name"].partition("@")
        result, base = by_name.get(spec["name"]), by_name.get(probe)
        if not rest or probe not in ("behaviour", "queue-behaviour") or result is None or base is None:
            continue
        # Only the rows both runs answered: a move Validate() refuses answers none (every row "differs" from the
        # base while nothing was decided), and a row the plugin failed on is no row the generated test asserts.
        moved, kept = _common(result, base), _common(base, result)
        if not moved["cases"]:
            continue
        if _breaks_an_assertion(probe, spec, kept, moved):
            out.add(rest.rsplit("@", 1)[0])
    return out
