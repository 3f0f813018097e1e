"""The world the differential harness samples: one true cluster state, as BLIS and as llm-d see it.

A sampled state is what is really happening on a few instances: requests queued, running, and routed
but not yet arrived; KV-cache use and size; how much of this request's prompt each instance holds; the
request's class, tenant, session and length. From it come two views (``bot.golang.harness_views``):

- the **BLIS view**: what BLIS's ``RoutingSnapshot``/``Request``/``RouterState`` hold (blis.md, checked
  against inference-sim f90a1e3a): ``InFlightRequests`` counts a request from routing to completion (in
  transit + queued + running), snapshot values are current, the SLO class is one of six strings;
- the **llm-d view**: what llm-d-router v0.10.0 hands a plugin: scraped endpoint metrics (possibly a
  scrape old), the prefix-match attribute, the request's integer priority, headers, body size.

Every difference between the views is a *mapping* (``MAPPINGS``). Requests in transit (routed, not yet
reported by the engine's gauges) number 0, 1 or 2 per instance (``TRANSIT``), and scraped gauges lag by
at most one event (``STALE_SHARE``): both sized from the benchmark's per-pod rates and 50 ms intervals. Switching one off makes both views
agree on it ("on both sides": the world is changed, not the plugin), which is how the harness attributes
each disagreement to its cause. Untranslatable signals are switched off by *bypass* instead: the plugin is
handed BLIS's value for that field after its adapter ran. Pure: no I/O, the same seed gives the same states.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

BLOCK_SIZE = 16  # tokens per KV block, BLIS's default and llm-d's approximate producer's
#: Share of instances whose scrape is one event behind BLIS's snapshot. BLIS's snapshot is itself
#: periodic (--snapshot-refresh-interval, 50 ms at HEAD), so the *difference* between the views is the
#: scrape's extra age (scrape latency plus the engine's metric update lag, about 10 ms), in which a pod
#: at the benchmark's rates (20-45 requests/s over 4 pods: about 15 arrivals and completions per second)
#: sees an event with probability about 0.15: one request more or less, or 1% of KV.
STALE_SHARE = 0.15
#: The generated EndpointPickerConfig runs inflight-load-producer, so llm-d sees BLIS's in-flight count.
INFLIGHT_PRODUCER = True
#: Requests routed since the engine's gauges were scraped (BLIS counts them in InFlightRequests at
#: once): the gauges are on average ~35 ms old at about 7.5 arrivals/s per pod, so P(0, 1, 2) below.
TRANSIT = ((0.77, 0), (0.97, 1), (1.0, 2))

#: SLO class -> the llm-d priority its InferenceObjective would carry (critical above standard, the
#: shed-able classes below 0), and the class the plugin's adapter reads back from that priority.
CLASS_PRIORITY = {"critical": 1, "standard": 0, "": 0, "sheddable": -1, "batch": -1, "background": -2}
ROUND_TRIP = {"critical": "critical", "standard": "standard", "": "standard", "sheddable": "sheddable"}
ROUND_TRIP.update({"batch": "sheddable", "background": "sheddable"})
SLO_PRIORITY = {"critical": 4, "standard": 3, "batch": -1, "sheddable": -2, "background": -3}
#: The header a client sends its TTFT target in (milliseconds), as llm-d-router v0.10.0 names it
#: (metadata.TTFTSLOHeaderKey). A request without a target sends none, as a client without an SLO does.
SLO_TTFT_HEADER = "x-llm-d-slo-ttft-ms"
#: The one base model every sampled endpoint serves (llm-d's endpoints are pre-filtered to the request's model).
BASE_MODEL = "model-a"
#: The LoRA adapters a sampled endpoint can hold, and the signals that read them. They are drawn only for a
#: program that reads one (``sample``): every other program's states, and so its figures, stay as they were.
ADAPTERS = ("lora-a", "lora-b", "lora-c", "lora-d")
ADAPTER_SIGNALS = frozenset({"ResidentAdapters", "Adapter"})
#: Share of an endpoint's resident adapters with no running or queued request: loaded in BLIS's
#: ResidentAdapters, absent from llm-d's ActiveModels (vllm:lora_requests_info lists adapters in use).
IDLE_SHARE = 0.2
#: Signals (dictionary Map B) BLIS's view holds at one value in every sampled state, and why. A program reading
#: one is told so by name (``held_constant``): the figure does not exercise it, so no disagreement is explained by
#: it. tests/golang/test_harness_coverage.py holds every signal to being varied or listed here.
HELD_CONSTANT = {
    "Model": f"every sampled endpoint serves the one base model ({BASE_MODEL}), as llm-d pre-filters endpoints to "
    "the request's model (a LoRA request's TargetModel, which the plugin reads as Model, is its adapter)",
} | dict.fromkeys(
    (
        *("PreemptionCount", "GPUType", "TPDegree", "CostPerHour", "TTFT", "ITL", "DispatchRate", "AvgInTokens"),
        *("AvgOutTokens", "MaxBatchSize", "OutputTokens", "RoundIndex", "ClientID", "PrefixGroup", "PrefixLength"),
        *("Streaming", "LoadingSnapshots", "SelectedInstance"),
    ),
    "no llm-d source, and the harness does not simulate it: it reads zero on both sides, so the figure "
    "cannot show what the plugin's fallback changes",
)


@dataclass(frozen=True)
class Mapping:
    """One way the llm-d view differs from BLIS's; ``signals`` are the BLIS signals it affects."""

    id: str
    title: str
    signals: frozenset[str]
    why: str
    bypass: tuple[str, ...] = ()  # plugin fields overridden with BLIS's value when switched off


MAPPINGS: dict[str, Mapping] = {
    m.id: m
    for m in (
        Mapping(
            "metric-staleness",
            "scraped metrics",
            frozenset(
                {"QueueDepth", "BatchSize", "KVUtilization", "FreeKVBlocks", "KvTokensInUse", "InFlightRequests"}
            ),
            "llm-d reads WaitingQueueSize, RunningRequestsSize and KVCacheUsagePercent as of the last scrape; "
            "BLIS's snapshot is current (dictionary Map B freshness)",
        ),
        Mapping(
            "in-flight-counting",
            "requests in transit",
            frozenset({"InFlightRequests", "EffectiveLoad"}),
            "BLIS counts a request in InFlightRequests from the moment it is routed; llm-d's queued + running "
            "gauges do not see requests routed since the engine last reported",
        ),
        Mapping(
            "prompt-length-estimate",
            "prompt length from body size",
            frozenset({"InputTokens"}),
            "the plugin estimates the prompt's tokens as RequestSizeBytes / 4; real prompts run 3 to 5 bytes per token",
        ),
        Mapping(
            "slo-class-mapping",
            "SLO class from priority",
            frozenset({"SLOClass", "Priority"}),
            "llm-d's integer priority has three levels the adapter reads back as critical / standard / "
            "sheddable; BLIS's batch and background arrive as sheddable and the empty class as standard",
        ),
        Mapping(
            "queue-contents",
            "waiting requests modelled",
            frozenset({"WaitingRequests"}),
            "the EPP sees only each endpoint's WaitingQueueSize, so the plugin orders a pseudo-queue of that many "
            "identical incumbents (its incumbent* parameters: arrivals evenly spaced, and the class and prompt length "
            "where its logic reads them) where BLIS orders the requests really waiting",
        ),
        Mapping(
            "adapter-target-model",
            "adapter from the target model",
            frozenset({"Adapter", "Model"}),
            "llm-d names a LoRA request's adapter as its TargetModel, which the plugin reads as both Adapter and "
            "Model: a base-model request's Adapter reads the base model's name where BLIS's is empty, and a LoRA "
            "request's Model reads the adapter's name where BLIS's is the base model",
        ),
        Mapping(
            "lora-residency",
            "resident adapters from ActiveModels",
            frozenset({"ResidentAdapters"}),
            "llm-d's ActiveModels lists the adapters with a running or queued request (as last scraped), not every "
            "adapter loaded: an idle resident adapter is invisible to the plugin",
        ),
        Mapping(
            "kv-block-counts",
            "published KV block counts",
            frozenset({"FreeKVBlocks", "TotalKvCapacityTokens", "KvTokensInUse"}),
            "CacheNumBlocks comes from vllm:cache_config_info; an engine that does not publish it reports 0 "
            "blocks, so derived free blocks read 0",
        ),
    )
}


def untranslatable_mapping(signal: str, bypass_field: str) -> Mapping:
    """The mapping for a signal llm-d cannot provide: the plugin reads its fallback (zero)."""
    return Mapping(
        f"untranslatable:{signal}",
        f"{signal} has no llm-d source",
        frozenset({signal}),
        f"the plugin reads the dictionary's fallback for {signal} (zero) where BLIS reads the simulated value",
        bypass=(bypass_field,),
    )


@dataclass
class Threshold:
    """A boundary the sampler should put states on: a signal and the evolved value."""

    signal: str
    value: float


@dataclass(frozen=True)
class Incumbents:
    """What a scheduling plugin assumes about the requests waiting on an endpoint it cannot see (its
    incumbent* parameters): the world a switched-off ``queue-contents`` mapping gives BLIS too."""

    slo_class: str = "standard"
    tokens: int = 512
    spacing_us: int = 50_000
    slo_target_us: int = 0  # incumbentSLOTargetMs in µs; 0: none, each falls back to its class's target


@dataclass
class Spec:
    kind: str  # routing | admission | scheduling
    reads: frozenset[str]  # BLIS signals the program reads (canonical names, EffectiveLoad expanded)
    thresholds: list[Threshold] = field(default_factory=list)
    stateful: bool = False  # the receiver keeps state across calls: give states a history (an admitter: some a burst)
    classes: tuple[str, ...] = ("critical", "standard", "sheddable", "batch", "background", "")
    incumbents: Incumbents | None = None  # scheduling: every instance has a wait queue

    def to_json(self) -> dict:
        out = {
            "kind": self.kind,
            "reads": sorted(self.reads),
            "thresholds": [[t.signal, t.value] for t in self.thresholds],
            "stateful": self.stateful,
            "classes": list(self.classes),
        }
        if self.incumbents is not None:
            inc = self.incumbents
            out["incumbents"] = {"class": inc.slo_class, "tokens": inc.tokens, "spacingUs": inc.spacing_us}
            out["incumbents"]["sloTargetUs"] = inc.slo_target_us
        return out

    @classmethod
    def from_json(cls, data: dict) -> Spec:
        """A spec read back from an execution request (data from another job): checked field by field."""
        try:
            kind, reads, stateful = data["kind"], data["reads"], data["stateful"]
            thresholds = [Threshold(str(sig), float(v)) for sig, v in data["thresholds"]]
            classes = tuple(data["classes"])
            inc = data.get("incumbents")
            incumbents = None
            if inc is not None:
                target = int(inc.get("sloTargetUs", 0))
                incumbents = Incumbents(str(inc["class"]), int(inc["tokens"]), int(inc["spacingUs"]), target)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"sampling spec: {exc!r}") from None
        if kind not in ("routing", "admission", "scheduling") or not isinstance(stateful, bool):
            raise ValueError("sampling spec: kind must be routing, admission or scheduling, stateful a boolean")
        if not all(isinstance(x, str) for x in (*reads, *classes)) or not classes:
            raise ValueError("sampling spec: reads and classes must be lists of names")
        if (kind == "scheduling") != (incumbents is not None):
            raise ValueError("sampling spec: a scheduling spec, and only one, says what its incumbents are")
        if incumbents is not None and not (
            0 <= incumbents.tokens <= 1 << 20
            and 0 <= incumbents.spacing_us <= 10**10
            and 0 <= incumbents.slo_target_us <= 10**11
        ):
            raise ValueError(
                "sampling spec: incumbent tokens, spacing and SLO target must be small non-negative integers"
            )
        return cls(kind, frozenset(reads), thresholds, stateful, classes, incumbents)


@dataclass
class Instance:
    name: str
    queued: int
    running: int
    transit: int
    kv: float
    blocks: int
    hit_rate: float
    prefix: int
    published: bool = True
    adapters: frozenset[str] = frozenset()  # LoRA adapters resident (loaded) on it
    idle: frozenset[str] = frozenset()  # the resident adapters with no running or queued request
    stale: tuple[int, int, float] | None = None  # (queued, running, kv) as last scraped
    waiting: list[tuple[Req, int]] | None = None  # scheduling: the queued requests and their arrivals, oldest first


@dataclass
class Req:
    id: str
    tokens: int
    slo_class: str
    session: str
    tenant: str
    max_output: int
    bytes_per_token: float
    deadline_us: int = 0
    slo_target_us: int = 0
    adapter: str = ""  # the LoRA adapter it names; empty: the base model


@dataclass
class TrueState:
    instances: list[Instance]
    request: Req
    clock: int
    seed: int
    history: list[tuple[Req, int]] = field(default_factory=list)  # earlier requests and their clocks
    origin: str = "random"  # random | llm-d-scale | boundary:<signal>
    incumbents: Incumbents | None = None  # scheduling: what the plugin assumes is waiting
    #: Its queues as BLIS holds them, by whether ``queue-contents`` is off: the same for every other
    #: mapping (``_blis_queues``), so each run's view shares them instead of building them again.
    queue_views: dict[bool, dict] = field(default_factory=dict, repr=False, compare=False)


def applicable_mappings(spec: Spec) -> list[str]:
    reads = set(spec.reads)
    if "EffectiveLoad" in reads:
        reads |= {"QueueDepth", "BatchSize", "InFlightRequests"}
    if spec.incumbents is not None:  # a scheduling plugin reads each endpoint's queue length and models its contents
        reads |= {"QueueDepth", "WaitingRequests"}
    if not reads & ADAPTER_SIGNALS:  # no adapters drawn: Model is the base model on both sides
        reads -= {"Model"}
    return [m.id for m in MAPPINGS.values() if m.signals & reads]


def held_constant(reads: frozenset[str]) -> list[str]:
    """The signals ``reads`` names that BLIS's view holds at one value in every sampled state (``HELD_CONSTANT``)."""
    return sorted(set(reads) & set(HELD_CONSTANT))


# --------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------


def sample(spec: Spec, n: int, seed: int = 20260823) -> list[TrueState]:
    """``n`` states: sim-scale and llm-d-scale loads, plus states on every threshold's boundary."""
    rng = random.Random(seed)
    states: list[TrueState] = []
    boundary = [t for t in spec.thresholds if t.signal in _SETTERS]
    for i in range(n):
        pick = rng.random()
        scale = "llm-d-scale" if pick < 0.35 else "random"
        state = _random_state(rng, spec, i, scale)
        if spec.kind == "admission" and spec.stateful:
            _add_burst(state, spec)
        if spec.reads & ADAPTER_SIGNALS:
            _draw_adapters(state)
        if boundary and pick >= 0.7:
            th = boundary[i % len(boundary)]
            inst = rng.choice(state.instances)
            _SETTERS[th.signal](inst, state, th.value + rng.choice((-1, 0, 1)) * _step(th), rng)
            state.origin = f"boundary:{th.signal}"
        if spec.incumbents is not None:
            _fill_queues(rng, spec, state)
        states.append(state)
    return states


#: Longest a sampled request has waited, in µs: a few seconds, as in a saturated vLLM queue.
MAX_WAIT_US = 5_000_000


def _fill_queues(rng: random.Random, spec: Spec, state: TrueState) -> None:
    """Give every instance its queued requests (after any boundary setter moved the counts): classes,
    lengths and deadlines drawn like the incoming request's, arrivals up to MAX_WAIT_US ago, oldest first."""
    state.incumbents = spec.incumbents
    for inst in state.instances:
        ages = sorted((rng.randint(1, MAX_WAIT_US) for _ in range(inst.queued)), reverse=True)
        inst.waiting = [
            (
                _random_request(rng, spec, f"{inst.name}-q{k}", rng.choice((12, 100, 512, 1024, 2048, 4096))),
                state.clock - age,
            )
            for k, age in enumerate(ages)
        ]


def _step(th: Threshold) -> float:
    if th.signal in ("KVUtilization", "CacheHitRate"):
        return 0.01
    if th.signal == "InputTokens":
        return BLOCK_SIZE
    return 1.0


def _random_state(rng: random.Random, spec: Spec, i: int, scale: str) -> TrueState:
    count = rng.choice((2, 3, 4, 4, 4, 6, 8))
    big = scale == "llm-d-scale"
    tokens = rng.choice((0, 12, 100, 512, 1024, 2048, 4096, rng.randint(16, 8192)))
    total_blocks = tokens // BLOCK_SIZE
    instances = []
    for k in range(count):
        queued = rng.randint(0, 64 if big else 6) if rng.random() < 0.8 else 0
        running = rng.randint(0, 256 if big else 8)
        kv = min(1.0, max(0.0, rng.betavariate(2.0, 2.0) if rng.random() < 0.7 else rng.uniform(0.75, 1.0)))
        inst = Instance(
            name=f"pod-{k}",
            queued=queued,
            running=running,
            transit=_transit(rng),
            kv=round(kv, 3),
            blocks=rng.choice((2000, 8000, 20000)),
            hit_rate=round(rng.random(), 3),
            prefix=0 if total_blocks == 0 or rng.random() < 0.5 else rng.randint(0, total_blocks),
            published=rng.random() < 0.9,
        )
        if rng.random() < STALE_SHARE:
            inst.stale = (
                max(0, queued + rng.choice((-1, 0, 1))),
                max(0, running + rng.choice((-1, 0, 1))),
                round(min(1.0, max(0.0, kv + rng.choice((-0.01, 0.0, 0.01)))), 3),
            )
        instances.append(inst)
    request = _random_request(rng, spec, f"req-{i}", tokens)
    clock = 1_000_000_000 + rng.randint(0, 10**9)
    history: list[tuple[Req, int]] = []
    if spec.stateful:
        t = clock - rng.randint(1, 20) * 1_000_000
        for h in range(rng.randint(0, 12)):
            history.append((_random_request(rng, spec, f"req-{i}-h{h}", rng.choice((100, 512, 2048))), t))
            t += rng.randint(10_000, 2_000_000)
        clock = max(clock, t)
    return TrueState(instances, request, clock, seed=rng.randint(1, 2**31), history=history, origin=scale)


#: A stateful admitter's state (a tenant's bucket or share, a learned load) moves with the volume it has seen, and
#: the ordinary history (at most 12 requests of three tenants, seconds apart) is too thin to move it: a per-tenant
#: token bucket sized for the benchmark never emptied, so the BLIS original rejected 1 state in 500 and always-admit
#: would have scored the plugin's 99.8%. So BURST_SHARE of such a program's states end with a burst from the
#: request's tenant, denser than the benchmark's load-spikes peak (30-45 requests/s of ~900-token prompts):
#: BURST requests BURST_GAP_US apart (25 to 200 requests/s) of 512 to 4096 tokens, most of that tenant's.
BURST_SHARE = 0.5
BURST = (8, 96)
BURST_GAP_US = (5_000, 40_000)
BURST_TOKENS = (512, 1024, 2048, 4096)
BURST_OWN = 0.8  # share of a burst's requests from the request's own tenant (the rest: any tenant)


def _add_burst(state: TrueState, spec: Spec) -> None:
    """Append a burst (``BURST_SHARE``) to a stateful admitter's history, the request arriving right after it.
    From a generator of the state's own, so every other state, and every other program's, stays as it was."""
    rng = random.Random(f"burst:{state.seed}")
    if rng.random() >= BURST_SHARE:
        return
    t = state.clock
    for h in range(rng.randint(*BURST)):
        req = _random_request(rng, spec, f"{state.request.id}-b{h}", rng.choice(BURST_TOKENS))
        if rng.random() < BURST_OWN:
            req.tenant = state.request.tenant
        state.history.append((req, t))
        t += rng.randint(*BURST_GAP_US)
    state.clock = t


def _draw_adapters(state: TrueState) -> None:
    """Each endpoint's resident adapters (some idle), and each request's adapter: none, one resident somewhere,
    or now and then one resident nowhere. From a generator of the state's own, so the rest of every state is
    what it is for a program that reads no adapter."""
    rng = random.Random(f"adapters:{state.seed}")
    for inst in state.instances:
        inst.adapters = frozenset(rng.sample(ADAPTERS, rng.choice((0, 1, 1, 2, 2, 3))))
        inst.idle = frozenset(a for a in sorted(inst.adapters) if rng.random() < IDLE_SHARE)
    resident = sorted(set().union(*(inst.adapters for inst in state.instances)))
    for req in (state.request, *(r for r, _ in state.history)):
        pick = rng.random()
        req.adapter = "" if pick < 0.3 else rng.choice(resident) if resident and pick < 0.9 else rng.choice(ADAPTERS)


def _transit(rng: random.Random) -> int:
    """Requests routed since the engine's gauges were scraped (``TRANSIT``)."""
    r = rng.random()
    return next(n for p, n in TRANSIT if r < p)


def _random_request(rng: random.Random, spec: Spec, rid: str, tokens: int) -> Req:
    if spec.kind == "admission":
        cls = rng.choice(spec.classes)
    else:
        cls = rng.choice(("", "standard", "standard", "critical", "sheddable", "batch"))
    return Req(
        id=rid,
        tokens=tokens,
        slo_class=cls,
        session=f"session-{rng.randint(1, 5)}" if rng.random() < 0.5 else "",
        tenant=rng.choice(("tenant-a", "tenant-a", "tenant-b", "tenant-c")),
        max_output=rng.choice((0, 64, 256, 1024)),
        bytes_per_token=round(rng.uniform(3.0, 5.0), 2),
        deadline_us=rng.choice((0, 0, rng.randint(100_000, 30_000_000))),
        slo_target_us=rng.choice((0, 0, rng.randint(100_000, 5_000_000))),
    )


def _set_queue(inst: Instance, _s: TrueState, v: float, _r: random.Random) -> None:
    inst.queued = max(0, round(v))


def _set_batch(inst: Instance, _s: TrueState, v: float, _r: random.Random) -> None:
    inst.running = max(0, round(v))


def _set_kv(inst: Instance, _s: TrueState, v: float, _r: random.Random) -> None:
    inst.kv = round(min(1.0, max(0.0, v)), 4)


def _set_hit(inst: Instance, _s: TrueState, v: float, _r: random.Random) -> None:
    inst.hit_rate = round(min(1.0, max(0.0, v)), 4)


def _set_inflight(inst: Instance, _s: TrueState, v: float, _r: random.Random) -> None:
    target = max(0, round(v))
    inst.queued, inst.running = min(inst.queued, target), min(inst.running, target - min(inst.queued, target))
    inst.transit = target - inst.queued - inst.running


def _set_effective_load(inst: Instance, _s: TrueState, v: float, rng: random.Random) -> None:
    """EffectiveLoad = queued + running + (transit + queued + running)."""
    target = max(0, round(v))
    pair = target // 2
    inst.queued = rng.randint(0, pair)
    inst.running = pair - inst.queued
    inst.transit = target - 2 * pair


def _set_tokens(_inst: Instance, s: TrueState, v: float, _r: random.Random) -> None:
    s.request.tokens = max(0, round(v))
    for i in s.instances:
        i.prefix = min(i.prefix, s.request.tokens // BLOCK_SIZE)


def _set_free_blocks(inst: Instance, _s: TrueState, v: float, _r: random.Random) -> None:
    inst.kv = round(min(1.0, max(0.0, 1 - max(0.0, v) / inst.blocks)), 6)


_SETTERS = {
    "QueueDepth": _set_queue,
    "BatchSize": _set_batch,
    "KVUtilization": _set_kv,
    "CacheHitRate": _set_hit,
    "InFlightRequests": _set_inflight,
    "EffectiveLoad": _set_effective_load,
    "InputTokens": _set_tokens,
    "FreeKVBlocks": _set_free_blocks,
}
