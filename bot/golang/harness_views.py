"""The two views of a sampled state (``bot.golang.harness_world``): what BLIS's ``RoutingSnapshot``/``Request``/
``RouterState`` hold, and what llm-d-router hands a plugin (endpoint metrics, the prefix-match attribute, the
request's priority, headers and body size), with the mappings in ``off`` switched off on both sides.

The world (what is really happening, and how it is sampled) and its views are apart so that a new signal is two
small edits: where the world holds it (harness_world) and where each side reads it (here). Pure.
"""

from __future__ import annotations

from bot.golang.harness_world import (
    BASE_MODEL,
    BLOCK_SIZE,
    CLASS_PRIORITY,
    INFLIGHT_PRODUCER,
    ROUND_TRIP,
    SLO_PRIORITY,
    SLO_TTFT_HEADER,
    Req,
    TrueState,
)

#: The mappings a compact history event reads (``_blis_request``, ``_llmd_request``): with none of them off, a
#: state's history is the as-deployed one, and ``views`` is given that (a test holds every other mapping to it).
HISTORY_MAPPINGS = frozenset({"slo-class-mapping", "adapter-target-model", "prompt-length-estimate"})


def views(state: TrueState, off: frozenset[str] = frozenset(), history: list[dict] | None = None) -> dict:
    """The state as BLIS and as llm-d see it, with the mappings in ``off`` switched off on both sides.

    The requests of a stateful program's history meet the same instances as the state's own
    request, so a history event carries only what differs (``compact``): its request, its clock
    and the prefix-match total its length gives; the harness fills in the rest from the state's
    views (``expand_event`` says how, and a test holds it to the full views). For a stateful
    program that is most of the input the harness reads. ``history``: the state's events as
    another ``off`` gave them, when that ``off`` differs from this one in no ``HISTORY_MAPPINGS``
    (a stateful admitter's bursts made building them again for each mapping switched off most
    of its translation's Python time).
    """
    snapshots, endpoints = _blis_snapshots(state, off), _llmd_endpoints(state, state.request, off)
    return {
        "seed": state.seed,
        "origin": state.origin,
        "blis": _blis_view(state, state.request, state.clock, off, snapshots),
        "llmd": {"request": _llmd_request(state.request, off), "endpoints": endpoints},
        "history": history if history is not None else _history(state, off),
    }


def _history(state: TrueState, off: frozenset[str]) -> list[dict]:
    return [
        {
            "compact": True,
            "blis": {"clock": clock, "request": _blis_request(r, clock, off)},
            "llmd": {"request": _llmd_request(r, off)},
            "prefixTotal": _prefix_total(r),
        }
        for r, clock in state.history
    ]


def expand_event(state_view: dict, event: dict) -> dict:
    """A history event as the harness reads it: a compact one completed from its state's views."""
    if not event.get("compact"):
        return event
    blis = {k: v for k, v in state_view["blis"].items() if k not in ("clock", "request")} | event["blis"]
    endpoints = [
        e | ({"prefix": e["prefix"] | {"total": event["prefixTotal"]}} if e.get("prefix") is not None else {})
        for e in state_view["llmd"]["endpoints"]
    ]
    return {"blis": blis, "llmd": {"request": event["llmd"]["request"], "endpoints": endpoints}}


def _blis_class(req: Req, off: frozenset[str]) -> str:
    return ROUND_TRIP[req.slo_class] if "slo-class-mapping" in off else req.slo_class


def _blis_view(
    state: TrueState, req: Req, clock: int, off: frozenset[str], snapshots: list[dict] | None = None
) -> dict:
    view = {
        "clock": clock,
        "request": _blis_request(req, clock, off),
        "snapshots": _blis_snapshots(state, off) if snapshots is None else snapshots,
        "prefix": {inst.name: inst.prefix for inst in state.instances},
        "blockSize": BLOCK_SIZE,
    }
    if state.incumbents is not None:
        view["queues"] = _blis_queues(state, off)
    return view


def _blis_queues(state: TrueState, off: frozenset[str]) -> dict[str, list[dict]]:
    """Each instance's wait queue as BLIS holds it, oldest first. With ``queue-contents`` switched off the
    world's queues are what the plugin assumes: as many incumbents, of its class, length and SLO target,
    evenly spaced (``queuePosition`` in the scorer template). The class and adapter mappings are the incoming
    request's: waiting requests never pass through the plugin's adapter, so their classes stay as they are."""
    inc = state.incumbents
    assert inc is not None
    contents_off = "queue-contents" in off
    if contents_off in state.queue_views:
        return state.queue_views[contents_off]
    keep = off - {"slo-class-mapping", "adapter-target-model"}
    out = state.queue_views[contents_off] = {}
    for inst in state.instances:
        waiting = inst.waiting or []
        if contents_off:
            n = len(waiting)
            waiting = [
                (
                    Req(f"queued-{k}", inc.tokens, inc.slo_class, "", "", 0, 4.0, slo_target_us=inc.slo_target_us),
                    state.clock - (n - k) * inc.spacing_us,
                )
                for k in range(n)
            ]
        out[inst.name] = [_blis_request(r, arrival, keep) for r, arrival in waiting]
    return out


def _blis_snapshots(state: TrueState, off: frozenset[str]) -> list[dict]:
    """With ``adapter-target-model`` off every snapshot's Model is the request's target, as the plugin reads it
    (a stateful program's history requests share these snapshots: theirs is the state's own request's)."""
    transit_on = "in-flight-counting" not in off
    model = (state.request.adapter or BASE_MODEL) if "adapter-target-model" in off else BASE_MODEL
    snapshots = []
    for inst in state.instances:
        blocks = inst.blocks
        snap = {
            "ID": inst.name,
            "QueueDepth": inst.queued,
            "BatchSize": inst.running,
            "KVUtilization": inst.kv,
            "FreeKVBlocks": int(blocks * (1 - inst.kv)),
            "CacheHitRate": inst.hit_rate,
            "InFlightRequests": inst.queued + inst.running + (inst.transit if transit_on else 0),
            "TotalKvCapacityTokens": blocks * BLOCK_SIZE,
            "KvTokensInUse": int(blocks * BLOCK_SIZE * inst.kv),
            "Model": model,
        }
        if inst.adapters:  # only a program reading adapters gets them (and the key): no one else pays for it
            snap["ResidentAdapters"] = dict.fromkeys(sorted(inst.adapters), True)
        snapshots.append(snap)
    return snapshots


def _blis_request(req: Req, clock: int, off: frozenset[str]) -> dict:
    """``req`` as BLIS's Request holds it, arrived at ``clock``; with ``adapter-target-model`` off its Adapter and
    Model are the model llm-d's request names."""
    cls = _blis_class(req, off)
    target = "adapter-target-model" in off
    adapter = (req.adapter or BASE_MODEL) if target else req.adapter
    out = {
        "ID": req.id,
        "InputTokens": req.tokens,
        "SLOClass": cls,
        "SessionID": req.session,
        "TenantID": req.tenant,
        "MaxOutputLen": req.max_output,
        "Priority": float(4 - SLO_PRIORITY.get(cls, 3)),
        "ArrivalTime": clock,
        "Model": adapter if target else BASE_MODEL,
        "Deadline": clock + req.deadline_us if req.deadline_us else 0,
        "SLOTargetUs": req.slo_target_us,
    }
    if adapter:
        out["Adapter"] = adapter
    return out


def slo_header_value(target_us: int) -> str:
    """BLIS's µs target as the header's milliseconds: the shortest decimal that reads back as the same
    float, so the adapter's ``round(ms * 1000)`` gives BLIS's value exactly (1234567 µs -> "1234.567")."""
    return repr(target_us / 1000)


def _prefix_total(req: Req) -> int:
    return req.tokens // BLOCK_SIZE


def _llmd_view(state: TrueState, req: Req, off: frozenset[str]) -> dict:
    return {"request": _llmd_request(req, off), "endpoints": _llmd_endpoints(state, req, off)}


def _llmd_endpoints(state: TrueState, req: Req, off: frozenset[str]) -> list[dict]:
    fresh = "metric-staleness" in off
    endpoints = []
    for inst in state.instances:
        queued, running, kv = (inst.queued, inst.running, inst.kv) if fresh or inst.stale is None else inst.stale
        published = inst.published or "kv-block-counts" in off
        metrics = {
            "WaitingQueueSize": queued,
            "RunningRequestsSize": running,
            "KVCacheUsagePercent": kv,
            "CacheNumBlocks": inst.blocks if published else 0,
            "CacheBlockSize": BLOCK_SIZE,
        }
        if inst.adapters:  # ActiveModels: the adapters in use (an idle one shows with lora-residency off)
            active = inst.adapters if "lora-residency" in off else inst.adapters - inst.idle
            metrics["ActiveModels"] = dict.fromkeys(sorted(active), 1)
        endpoints.append(
            {
                "name": inst.name,
                "metrics": metrics,
                "prefix": {"match": inst.prefix, "total": _prefix_total(req), "blockSize": BLOCK_SIZE},
                # inflight-load-producer counts at dispatch, like BLIS: without it, the scraped gauges only.
                "inflight": inst.queued + inst.running + (inst.transit if "in-flight-counting" not in off else 0)
                if INFLIGHT_PRODUCER
                else None,
            }
        )
    return endpoints


def _llmd_request(req: Req, off: frozenset[str]) -> dict:
    cls = _blis_class(req, off)
    bpt = 4.0 if "prompt-length-estimate" in off else req.bytes_per_token
    headers = {"x-session-token": req.session} if req.session else {}
    if req.slo_target_us:
        headers[SLO_TTFT_HEADER] = slo_header_value(req.slo_target_us)
    return {
        "RequestID": req.id,
        "TargetModel": req.adapter or BASE_MODEL,
        "Headers": headers,
        "Priority": CLASS_PRIORITY[cls],
        "FairnessID": req.tenant,
        "RequestSizeBytes": round(req.tokens * bpt),
    }
