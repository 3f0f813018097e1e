"""Behaviour rows for a stateful admitter: a sequence of requests on one plugin, and the same one spaced wider.

A stateful admitter decides a request by what it admitted before (a tenant's decayed share, a learned load). The
plain behaviour rows decide each request on a fresh plugin, where such a rule rarely has a history to reject on:
a03's six rows all said "admit", so a mutation to "never reject" passed them. This module runs sequences through
the harness as one observe probe: the candidates of the threshold search (``probes.specs``) that replay earlier
requests, and a small grid of its own (``probe_inputs``' warm-ups that skew one tenant, the request's tenant and
priority, an idle and an overloaded pool). When the logic reads the clock, each sequence is also replayed with
its requests further apart. From the answers it keeps:

- the first sequence the plugin rejects, so "never reject" fails the behaviour test, not only a threshold test;
- when one exists, two sequences that differ only in the time between their requests and are decided
  differently, so removing a decay or a window fails it too.

Sequences spaced 0.2 s apart never pass a rate of 5 a second: a per-tenant limit of 25 a second (newprog p2) or a
token bucket of 20,000 tokens (g07) admitted all of them, and the behaviour test held no rejection. So the grid also
sends bursts (``_bursts``): requests like the decided one, from its own tenant, BURST_GAP_US apart just before it,
and every sequence's request is also decided alone, on a fresh plugin. The rejected sequence the test asserts is one
whose request alone is admitted, when there is one, asserted beside that lone request: the earlier requests are what
reject it ("a tenant past its rate is rejected"). A sequence rejected as its request alone is rejected is not
asserted: a fresh plugin decides it alike, so it tests no state (trial 4's "after 4 requests ... is rejected" on the
overloaded pool only repeated "an overloaded pool rejects a request of priority -1").

An admitter that sets a flag under one cut and clears it under another (``load_sequences``) also gets walks whose
pool load changes between requests; when the rejected row is one, the walk that continues it one ladder step lower
and is admitted is asserted after it ("admitted again"), although a fresh plugin admits that request too
(``_released`` says why). A row names tenants only when the plugin reads them (``describe``).

When the evolved code decides on a lifetime count (``lifetime_count``: a03's ``len(t.tenantTokens)``, every tenant
ever seen), a sequence whose earlier requests reach back further than a windowed count would remember
(``lifetime_count.stale_window``) is also decided without those requests (``<sequence>:<spacing>:recent``). One
decided otherwise rests on clients long gone (a03's tenant-b, silent 800 s, still halving tenant-a's fair share):
it is never asserted, since the test would pin that defect as the intended behaviour.

Pure: specs in, rows out (``testgen`` writes them into TestBehaviour).
"""

from __future__ import annotations

import json

from bot.golang import lifetime_count, load_sequences
from bot.golang.probe_inputs import CLOCK, PROBE, SPACING, make_endpoint, make_request, make_state, warmup_spacings
from bot.golang.probes import ADMISSION_POOLS, observe_probe

NAME = "sequence"
#: µs between the requests of a sequence replayed wider apart: a decay or a window on the scale of seconds to
#: half an hour has mostly run its course at one of them.
TIME_SPACINGS = (2_000_000, 20_000_000, 200_000_000, 2_000_000_000)
#: Sequences tried, at most (each replayed at every spacing).
MAX_SEQUENCES = 96
_CLOCK_SIGNALS = {"Clock", "ArrivalTime"}


def _key(state: dict) -> str:
    return json.dumps([state["llmd"], [h["llmd"] for h in state["history"]]], sort_keys=True)


def _grid() -> list[dict]:
    """Sequences of the probe grid's own: 4 or 12 earlier sheddable requests (the first from tenant-b, the rest
    from tenant-a), then a request of each priority from either tenant, on an idle and on an overloaded pool."""
    out = []
    for load in ("overloaded", "idle"):
        eps = [make_endpoint(PROBE, dict(ADMISSION_POOLS[load])), make_endpoint("pod-b", dict(ADMISSION_POOLS[load]))]
        for count in (4, 12):
            warm = [
                make_request(priority=-1, tenant="tenant-b" if k == 0 else "tenant-a", rid=f"w-{k}")
                for k in range(count)
            ]
            for tenant in ("tenant-a", "tenant-b"):
                for priority in (-1, 0, 1):
                    out.append(make_state(eps, make_request(priority=priority, tenant=tenant), warm))
    return out


#: A burst (``_bursts``): BURST requests BURST_GAP_US apart (200 a second, the harness's densest burst:
#: ``harness_world.BURST_GAP_US``) of BURST_TOKENS tokens, past a rate or bucket sized for the benchmark's load.
BURST = 48
BURST_GAP_US = 5_000
BURST_TOKENS = (512, 4096)
#: The label of a sequence's request decided alone (``<sequence>:alone``): its spacing field says no spacing.
ALONE = "alone"
#: The label suffix of a sequence decided without its requests older than a windowed count remembers.
RECENT = "recent"


def _bursts() -> list[dict]:
    """Bursts of the probe grid's own: BURST requests like the decided one (its tenant, priority and size) just
    before it, for each priority and prompt size, on an overloaded and on an idle pool."""
    out = []
    for load in ("overloaded", "idle"):
        eps = [make_endpoint(PROBE, dict(ADMISSION_POOLS[load])), make_endpoint("pod-b", dict(ADMISSION_POOLS[load]))]
        for tokens in BURST_TOKENS:
            for priority in (-1, 0, 1):
                warm = [make_request(tokens=tokens, priority=priority, rid=f"w-{k}") for k in range(BURST)]
                out.append(make_state(eps, make_request(tokens=tokens, priority=priority), warm, BURST_GAP_US))
    return out


def spacing_of(state: dict) -> int:
    """µs between the requests of ``state``'s sequence (the generated test replays them that far apart)."""
    history = state["history"]
    return CLOCK - history[-1]["blis"]["clock"] if history else SPACING


def respaced(state: dict, spacing: int) -> dict:
    """``state`` with its earlier requests ``spacing`` µs apart, the last that long before the decided one."""
    n = len(state["history"])
    history = [h | {"blis": h["blis"] | {"clock": CLOCK - (n - i) * spacing}} for i, h in enumerate(state["history"])]
    return state | {"history": history}


def sequence_specs(kind: str, stateful: bool, an, defaults: dict, probe_specs: list[dict]) -> list[dict]:
    """The observe probe of a stateful admitter's sequences (labels ``<sequence>:<spacing>``), or none."""
    if kind != "admission" or not stateful:
        return []
    seen, bases = set(), []
    searched = [c for s in probe_specs if s["role"] != "observe" for c in s["candidates"]]
    walks = load_sequences.walks(an, kind, stateful)  # a latching admitter's: its pool's load changes
    for state in _grid() + _bursts() + walks + searched:
        if state["history"] and _key(state) not in seen and len(bases) < MAX_SEQUENCES + len(walks):
            seen.add(_key(state))
            bases.append(state)
    spacings = sorted(
        set(warmup_spacings(an)) | (set(TIME_SPACINGS) if _CLOCK_SIGNALS & set(an.signal_names) else set())
    )
    window = lifetime_count.stale_window(an) if lifetime_count.found(an) else None
    cands, labels = [], []
    for i, state in enumerate(bases):
        own = spacing_of(state)
        for spacing in [own] + [s for s in spacings if s != own]:
            cands.append(respaced(state, spacing))
            labels.append(f"{i}:{spacing}")
            recent = _recent(cands[-1], window) if window is not None else None
            if recent is not None:
                cands.append(recent)
                labels.append(f"{i}:{spacing}:{RECENT}")
        cands.append(state | {"history": []})
        labels.append(f"{i}:{ALONE}")
    return [observe_probe(NAME, defaults, cands, labels)]


def _recent(state: dict, window: int) -> dict | None:
    """``state`` without its earlier requests more than ``window`` µs before the decided one (None: none are)."""
    kept = [h for h in state["history"] if CLOCK - h["blis"]["clock"] <= window]
    return state | {"history": kept} if len(kept) < len(state["history"]) else None


def _decisions(spec: dict, result: dict) -> dict[int, bool]:
    """Candidate index -> admitted, for the candidates the plugin decided without an error."""
    return {
        c["candidate"]: bool(c["default"].get("admit"))
        for c in result.get("cases", [])
        if not c["default"].get("error")
    }


def choose(probe_specs: list[dict], results: list[dict]) -> list[int]:
    """The candidates the behaviour test asserts: the first sequence the plugin rejects (as the search spaced it),
    preferring one whose request alone it admits (then that lone request too, right after it), and two of one sequence that only the spacing tells apart and that are decided differently, the two spacings
    closest together of any sequence (the decision then turns on the time scale of the rule rather than on a
    history worn down to nothing). Never one decided otherwise without its requests long gone (``RECENT``): that
    decision rests on a lifetime count."""
    spec = next((s for s in probe_specs if s["name"] == NAME), None)
    result = next((r for r in results if r["name"] == NAME), None)
    if spec is None or result is None:
        return []
    decided = _decisions(spec, result)
    groups: dict[str, list[int]] = {}
    alone: dict[str, int] = {}
    recent: dict[str, int] = {}  # "<sequence>:<spacing>" -> its candidate without the requests long gone
    for i, label in enumerate(spec["labels"]):
        sequence, _, spacing = label.partition(":")
        if spacing == ALONE:
            alone[sequence] = i
        elif spacing.endswith(":" + RECENT):
            recent[label.rsplit(":", 1)[0]] = i
        else:
            groups.setdefault(sequence, []).append(i)
    # A sequence decided otherwise without its long-gone requests rests on a lifetime count: never asserted.
    stale = {i for i, label in enumerate(spec["labels"]) if label in recent and _differ(decided, i, recent[label])}

    def spacing(i: int) -> int:
        return int(spec["labels"][i].split(":")[1])

    pairs = [
        (max(spacing(a), spacing(b)) / min(spacing(a), spacing(b)), k, sorted((a, b), key=spacing))
        for k, members in enumerate(groups.values())
        for a in members
        for b in members
        if a < b and _differ(decided, a, b) and not {a, b} & stale
    ]
    # The earlier requests reject it where the request alone is admitted: both rows, the sequence first.
    rejected = next(
        (
            [g[0], alone[k]]
            for k, g in groups.items()
            if decided.get(g[0]) is False and g[0] not in stale and k in alone and decided.get(alone[k]) is True
        ),
        None,
    )
    # A sequence rejected as its request alone is tests no state: asserted only when the request alone went
    # undecided (the plugin failed on it), so that "never reject" still fails a row.
    rejected = rejected or next(
        (
            [g[0]]
            for k, g in groups.items()
            if decided.get(g[0]) is False and g[0] not in stale and alone.get(k) not in decided
        ),
        [],
    )
    released = _released(spec, decided, groups, rejected[0]) if rejected else None
    rejected += [released] if released is not None else []
    pair = min(pairs, key=lambda p: p[:2])[2] if pairs else []
    # A pair member decided as the rejected row, of its sequence, at a spacing that differs from it only by the
    # search's noise (0.2 s and 0.200004 s, trial 3) would be a second, near-identical row: the asserted row takes
    # its place in the pair (the same time scale).
    pair = [
        rejected[0]
        if rejected
        and spec["labels"][i].split(":")[0] == spec["labels"][rejected[0]].split(":")[0]
        and not _differ(decided, i, rejected[0])
        and abs(spacing(i) / spacing(rejected[0]) - 1) < _NOISE
        else i
        for i in pair
    ]
    return rejected + [i for i in pair if i not in rejected]


def _released(spec: dict, decided: dict[int, bool], groups: dict[str, list[int]], shed: int) -> int | None:
    """The walk (``load_sequences.walks``) that continues the rejected sequence ``shed`` with its own request and
    pool, then admits a request on another pool: what latched is cleared again. Asserted although a fresh plugin
    admits that request too: it is the other side of the cut that clears the flag (moved past that pool's load,
    the walk stays shed), and with the rejected row it brackets that cut between two steps of the ladder."""

    def steps(events: list[dict]) -> list:  # each request on its pool, whatever its id
        return [(e["llmd"].get("endpoints"), e["llmd"]["request"] | {"RequestID": ""}) for e in events]

    state = spec["candidates"][shed]
    if not state.get(load_sequences.WALK):
        return None
    continued = steps(state["history"] + [state])
    return next(
        (
            g[0]
            for g in groups.values()
            if decided.get(g[0]) is True and steps(spec["candidates"][g[0]]["history"]) == continued
        ),
        None,
    )


#: Spacings closer than this (relative) are one spacing: the search's bisection leaves a few µs on 0.2 s.
_NOISE = 1e-3


def _differ(decided: dict[int, bool], a: int, b: int) -> bool:
    return a in decided and b in decided and decided[a] != decided[b]


def rows(probe_specs: list[dict], results: list[dict]) -> list[tuple[dict, str]]:
    """(state, "admit" | "reject") per chosen sequence, as the compiled plugin decided it."""
    spec = next((s for s in probe_specs if s["name"] == NAME), None)
    result = next((r for r in results if r["name"] == NAME), None)
    if spec is None or result is None:
        return []
    decided = _decisions(spec, result)
    return [(spec["candidates"][i], "admit" if decided[i] else "reject") for i in choose(probe_specs, results)]


def exercising(probe_specs: list[dict], results: list[dict], tenants: bool = True) -> dict[str, str]:
    """Parameter -> the name of the first chosen row whose decision its move (``probes.behaviour_moves`` copies of
    this probe) changes: the behaviour test row that exercises it (a03's dtDivisor, through the spaced pair).
    ``tenants``: whether the plugin reads the tenant (``describe``)."""
    chosen = choose(probe_specs, results)
    spec = next((s for s in probe_specs if s["name"] == NAME), None)
    base = next((r for r in results if r["name"] == NAME), None)
    if not chosen or spec is None or base is None:
        return {}
    want = _decisions({}, base)
    out: dict[str, str] = {}
    for r in results:
        probe, _, rest = r["name"].partition("@")
        param = rest.rsplit("@", 1)[0]
        if probe != NAME or not rest or param in out:
            continue
        got = _decisions({}, r)
        row = next((i for i in chosen if i in got and got[i] != want.get(i)), None)
        if row is not None:
            out[param] = describe(spec["candidates"][row], "admit" if want[row] else "reject", tenants)
    return out


def exercised(probe_specs: list[dict], results: list[dict]) -> set[str]:
    """The parameters a chosen sequence row exercises (``exercising``)."""
    return set(exercising(probe_specs, results))


def _pool(state_or_event: dict) -> str:
    """An endpoint's load in a walk (every endpoint of its pool alike), in words."""
    m = state_or_event["llmd"]["endpoints"][0]["metrics"]
    at = f"{m['WaitingQueueSize']} waiting, {m['RunningRequestsSize']} running, KV {m['KVCacheUsagePercent']:g}"
    return f"a pool at {at} per endpoint"


def _describe_walk(state: dict, asked: str, want: str) -> str:
    """A walk's row (``load_sequences``): the pool each earlier request met, and the decided request's."""
    asked = f"{asked} on {_pool(state)}"
    if not state["history"]:
        return f"with no earlier requests, {asked} {'is admitted' if want == 'admit' else 'is rejected'}"
    steps = [_pool(h) for h in state["history"]]
    steps[0] = "an overloaded pool" if len(steps) == 1 or steps[0] != steps[1] else steps[0]
    before = "a request on " + steps[0] + "".join(f" and one on {s}" for s in steps[1:])
    verdict = "is still rejected" if want == "reject" else "is admitted again" if len(steps) > 1 else "is admitted"
    return f"after {before}, {asked} {verdict}"


def describe(state: dict, want: str, tenants: bool = True) -> str:
    """A row's name in llm-d terms: who sent what before, how far apart, and what the plugin does. ``tenants``:
    whether the plugin reads the tenant; if not, no tenant is named (the row would say the plugin counts them)."""
    request = state["llmd"]["request"]
    history = [h["llmd"]["request"] for h in state["history"]]
    who = f" from {request.get('FairnessID') or 'no tenant'}" if tenants else ""
    asked = f"a request of priority {request.get('Priority', 0)}{who}"
    if state.get(load_sequences.WALK):
        return _describe_walk(state, asked, want)
    tenants_seen: dict[str, int] = {}
    for w in history:
        t = w.get("FairnessID") or "no tenant"
        tenants_seen[t] = tenants_seen.get(t, 0) + 1
    spacing = spacing_of(state) / 1e6
    verdict = "is admitted" if want == "admit" else "is rejected"
    if not history:
        return f"with no earlier requests, {asked} {verdict}"
    if not tenants:
        return f"after {len(history)} requests {spacing:g} s apart, {asked} {verdict}"
    spread = ", ".join(f"{n} from {t}" for t, n in tenants_seen.items())
    if want == "reject" and set(tenants_seen) == {request.get("FairnessID") or "no tenant"}:
        return f"a tenant past its rate: after {len(history)} requests {spacing:g} s apart from it, {asked} {verdict}"
    return f"after {len(history)} requests {spacing:g} s apart ({spread}), {asked} {verdict}"
