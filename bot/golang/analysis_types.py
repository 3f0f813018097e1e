"""The analysis result types and the BLIS names they refer to, shared by analysis, hazards and generation.

Kept apart from the walk that fills them so the hazard checks and the generator import plain data
types, never the analysis itself (imports point down: analyze -> hazards -> analysis_types).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tree_sitter

from bot.golang.source import EvolvedSource
from bot.model import Finding, PolicyKind

Node = tree_sitter.Node

#: BLIS built-in policies copied alongside the evolved one; never the evolved host.
BUILTIN_RECEIVERS = {
    "RoundRobin",
    "LeastLoaded",
    "AlwaysBusiest",
    "PrefixAffinity",
    "AlwaysAdmit",
    "TokenBucket",
    "RejectAll",
    "TierShedAdmission",
    "GAIELegacyAdmission",
    "TenantBudgetAdmission",
    "FCFSScheduler",
    "PriorityFCFSScheduler",
    "SJFScheduler",
    "ReversePriority",
    "ReversePriorityScheduler",
}

#: BLIS types the generated package re-declares (reduced to what the evolved code uses).
SHIMMED_TYPES = {
    "RoutingSnapshot": "routingSnapshot",
    "RouterState": "routerState",
    "Request": "blisRequest",
    "RoutingDecision": "routingDecision",
    "TokenID": "tokenID",
    "scorerFunc": "scorerFunc",
    "observerFunc": "observerFunc",
    "SLOPriorityMap": "sloPriorityMap",
}
#: BLIS's SLO priority functions (sim/slo_priority.go; SLOTierPriority is admission.go's deprecated form): the
#: generated package declares its own copies (evolved.go.j2), so a copy the program declares is never carried.
SLO_PRIORITY_FUNCS = {
    "DefaultSLOPriorityMap": "defaultSLOPriorityMap",
    "NewSLOPriorityMap": "newSLOPriorityMap",
    "SLOTierPriority": "sloTierPriority",
}
SHIMMED_FUNCS = {
    "NewRoutingDecision": "newRoutingDecision",
    "NewRoutingDecisionWithScores": "newRoutingDecisionWithScores",
}
#: Interfaces and plumbing of the copied BLIS file that are never carried over.
NEVER_CARRIED = {
    "RoutingPolicy",
    "AdmissionPolicy",
    "InstanceScheduler",
    "PriorityPolicy",
    "NewRoutingPolicy",
    "NewAdmissionPolicy",
    "NewScheduler",
    "NewRoutingSnapshot",
    "EffectiveLoad",
}

SIGNATURES = {
    PolicyKind.ROUTING: "func (p *X) Route(req *Request, state *RouterState) RoutingDecision",
    PolicyKind.ADMISSION: "func (p *X) Admit(req *Request, state *RouterState) (bool, string)",
    PolicyKind.SCHEDULING: "func (p *X) OrderQueue(requests []*Request, clock int64)",
}

EXPR_TYPES = {
    "identifier",
    "selector_expression",
    "call_expression",
    "index_expression",
    "slice_expression",
    "binary_expression",
    "unary_expression",
    "parenthesized_expression",
    "composite_literal",
    "func_literal",
    "type_assertion_expression",
    "type_conversion_expression",
    "int_literal",
    "float_literal",
    "interpreted_string_literal",
    "raw_string_literal",
    "rune_literal",
    "true",
    "false",
    "nil",
    "iota",
    "imaginary_literal",
}
COMPARE = {"<", "<=", ">", ">=", "==", "!="}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
LOAD_SIGNALS = {"QueueDepth", "BatchSize", "InFlightRequests", "EffectiveLoad"}
KV_FRACTION = {"KVUtilization"}
KV_ABSOLUTE = {"FreeKVBlocks", "KvTokensInUse", "TotalKvCapacityTokens"}


@dataclass
class SignalUse:
    """One read of a BLIS signal in the evolved logic (or in code it calls)."""

    name: str  # canonical dictionary name, or the written name when the dictionary has none
    written: str  # as written: PendingRequests, InputLen, ...
    scope: str  # snapshot | request | state | method
    line: int  # original file line
    via: str  # how it was reached: field, alias x, EffectiveLoad(), len(), helper f, baseline scorer term
    known: bool  # the dictionary has an entry


@dataclass
class Occurrence:
    start: int  # byte offsets in src.go_text of the literal (or of the unary minus around it)
    end: int
    line: int  # original line
    role: str
    op: str | None = None  # comparison with the subject on the left
    cond_id: int | None = None  # id of the comparison node (tests target the branch it guards)
    owner: str | None = None  # function holding it
    divisor: bool = False  # the right operand of `/` (`-dt / 5.0`): the value is divided by it
    #: The helper's parameter a number passed as an argument is compared through (``limit`` of ``ws.overloaded(snap,
    #: 0.85)``, flow_args.py): ``cond_id`` is the helper's comparison, the harness watches it there (carry.py).
    param: str | None = None


@dataclass
class Threshold:
    """A number the evolved logic compares a signal against or combines it with; becomes a plugin parameter."""

    value: float
    literal: str
    go_type: str | None  # int | int64 | float64 ; None = type unknown -> not parameterized
    role: str  # threshold | offset | coefficient | floor | cap | exponent | factor
    signals: list[str]
    subject: str  # source text of the operand the number relates to
    base: str  # name stem for the parameter
    line: int
    occurrences: list[Occurrence] = field(default_factory=list)
    param: str | None = None  # lowerCamel JSON name
    field: str | None = None  # Go field name of Parameters
    reason: str | None = None  # why it is not a parameter
    scale: str | None = None  # dictionary blis_scale of its signals
    target: str | None = None  # the variable a factor or step changes (`batchLimit *= 0.8`), when it is one
    local: str | None = None  # the local a lifted limit initialises (`shedLimit := 0.75`), compared later
    compared_line: int | None = None  # original line of the comparison a lifted local decides (its doc's step)
    assigned: bool = (
        False  # a field the carried code sets from it (`b.capacity = 20000`), read from the parameter there
    )
    #: The unexported constant the carried code reads instead, for a number that cannot act in llm-d (no parameter).
    constant: str | None = None
    #: (line, guard) of the branch for an SLO class llm-d never sends that holds every use of it (dead_branches.py).
    dead_branch: tuple[int, str] | None = None
    #: The signals without an llm-d source that are all it acts on: it changes no decision in llm-d (inert.py).
    inert: tuple[str, ...] = ()
    #: (variable, "decay" | "sample") for one weight of an exponential moving average (param_names.py).
    moving_average: tuple[str, str] | None = None
    #: (the term it weighs, the other term) for one weight of a blend ``x = a*x + b*y`` made in one call.
    blend: tuple[str, str] | None = None
    #: "max" | "min" for the bound of a clamp, ``if p > 200 { p = 200 }`` (param_names.clamp).
    clamp: str | None = None
    #: The role word a number set on a one- or two-letter local takes from the local's use (``Weight`` for ``w`` in
    #: ``w * load``), instead of its role's (short_locals.used_for).
    suffix: str | None = None
    #: The signals that pick which entry of a per-class table applies (SLOClass for ``return 0.2, 0.6`` in a branch
    #: on the class), beside those it acts on: it acts on none of them (inert.py).
    chosen_by: tuple[str, ...] = ()
    #: The local ``const`` it is declared by (``windowUs`` of ``const windowUs = 2_000_000``): the plugin declares
    #: that name from the parameter instead (local_consts.py).
    const_decl: str | None = None
    #: What ``const_decl`` is, for the parameter's doc: a constant, or a package variable never assigned after its
    #: declaration (package_vars.py).
    const_kind: str = "constant"
    #: The SLO class a value is chosen for (``critical`` for ``limit = 60`` under ``if req.SLOClass == "critical"``;
    #: ``other`` for a default or a last else), when it is one entry of a per-class choice.
    case: str | None = None
    #: What the compared value measures, when its text does not say (short_locals.measured): ``the mean of
    #: `totalQueue` per endpoint, `float64(totalQueue)/float64(n)`,`` or ``the count `len(kept)` ...``.
    subject_words: str | None = None
    #: (the condition, the statement, what it changes) for a value set on a local that then multiplies or divides a
    #: variable (``adj = 0.1`` under ``kv > 0.9``, then ``scores[snap.ID] *= adj``): a factor, said as one.
    applied: tuple[str, str, str] | None = None
    #: The quotient ``x/(x+k)`` an offset ``k`` is the half-saturation point of (param_names.saturation).
    saturation: str | None = None
    #: (the helper, its parameter, the comparison as written there) for a number passed to a helper that compares a
    #: signal with it (``overloaded``, ``limit``, ``s.KVUtilization > limit``; arg_thresholds.py).
    passed: tuple[str, str, str] | None = None
    #: (the condition, "holds" | "does not hold", the term it weighs, the signals the condition reads) for one
    #: regime's weight of a switch that sets a local per regime (``wQueue`` = 0.55 under ``congested(...)``, 0.25
    #: otherwise; regime_weights.py). Its probes vary what the condition reads, so the regime is reached.
    regime: tuple[str, str, str, tuple[str, ...]] | None = None
    #: The key it is a term of, added to every candidate's (``slack`` for ``slack := 250.0 + ...`` in a key compared
    #: only between requests): it cancels in every comparison, so it is a constant, no parameter (order_keys.py).
    cancels: str | None = None

    @property
    def lines(self) -> list[int]:
        return sorted({o.line for o in self.occurrences})

    @property
    def numerator(self) -> bool:
        """A coefficient the evolved code only divides by a term (``criticalBoost / (1 + pressure)``): the term is its
        divisor, so it is no coefficient of that term; the quotient grows with it."""
        uses = [o for o in self.occurrences if o.role == "coefficient"]
        return self.role == "coefficient" and bool(uses) and all(o.op == "/" and not o.divisor for o in uses)

    @property
    def divides(self) -> bool:
        """A coefficient the evolved code only divides by (``math.Exp(-dt / 5.0)``): a scale or time constant in
        the units of its subject, whose rise shrinks the quotient, and which must never be 0."""
        uses = [o for o in self.occurrences if o.role == "coefficient"]
        return self.role == "coefficient" and bool(uses) and all(o.divisor for o in uses)


@dataclass
class FuncInfo:
    node: Node
    name: str
    receiver_type: str | None
    receiver_var: str | None
    receiver_pointer: bool
    params: list[tuple[str, str]]  # (name, type text)
    result: str
    kind: PolicyKind | None = None
    legacy: bool = False

    @property
    def label(self) -> str:
        return f"{self.receiver_type}.{self.name}" if self.receiver_type else self.name


@dataclass
class Analysis:
    kind: PolicyKind
    host: str
    signals: list[SignalUse]
    thresholds: list[Threshold]
    findings: list[Finding]
    src: EvolvedSource | None = None
    host_info: FuncInfo | None = None
    helpers: list[FuncInfo] = field(default_factory=list)  # functions/methods the host calls, carried over
    types: list[Node] = field(default_factory=list)  # type declarations carried over
    constructor: FuncInfo | None = None
    receiver_decl: Node | None = None  # type_spec of the receiver struct, when the file declares it
    receiver_fields: dict[str, str] = field(default_factory=dict)  # field -> Go type (declared or inferred)
    imports: dict[str, str] = field(default_factory=dict)  # package name -> import path used by carried code
    snapshot_fields: dict[str, str] = field(default_factory=dict)  # canonical field -> Go type
    request_fields: dict[str, str] = field(default_factory=dict)
    state_fields: dict[str, str] = field(default_factory=dict)
    uses_scorers: bool = False
    uses_rng: bool = False
    uses_observers: bool = False
    uses_input_len_method: bool = False
    token_slice_used: bool = False  # InputTokens used as a slice (not only len())
    output_slice_used: bool = False
    token_elem: str = "tokenID"  # Go element type of token slices in the carried code
    decision_priority: bool = False  # RoutingDecision.Priority written
    era: str = "head"
    #: The metadata's evidence that the copy predates BLIS 9a603bca when the file names neither counter (a
    #: timestamp, ``origin.blis_version``; ``blis_era``), "" otherwise: ``counter_era`` then treats it as pre-rename
    dated_before: str = ""
    literal_nodes: dict[int, Threshold] = field(default_factory=dict)  # literal start byte -> threshold
    #: literal end byte -> the comment its line gets, for each value of a per-class rank kept as evolved (order_keys.py)
    rank_notes: dict[int, str] = field(default_factory=dict)
    #: argument start byte -> the occurrence of a number passed there, with the role the helper's parameter has
    #: (flow_args.py): a package constant read there takes it (package_consts.py)
    passed: dict[int, Occurrence] = field(default_factory=dict)
    #: identifier start byte -> the threshold of the package constant it reads, read from its parameter there
    const_reads: dict[int, Threshold] = field(default_factory=dict)
    cond_nodes: dict[int, Node] = field(default_factory=dict)  # comparison node id -> node
    bool_aliases: dict[str, Node] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    pseudo_signals: set[str] = field(default_factory=set)
    slo_names: set[str] = field(default_factory=set)  # SLO class names the logic compares the class with
    #: (line, code, written) of each index whose key carries the SLO class (``a.budgets[req.TenantID + "/" +
    #: req.SLOClass]``): a key BLIS's six classes fill apart, llm-d's three share (fidelity_classes.class_uses)
    slo_keys: list[tuple[int, str, bool]] = field(default_factory=list)
    var_signals: dict[str, set[str]] = field(default_factory=dict)  # "Func::var" -> signals its value derives from
    field_signals: dict[str, set[str]] = field(default_factory=dict)  # receiver field -> signals stored in it
    #: receiver map -> the line of its first write keyed by a client value (hazard.unbounded-client-keyed-state)
    client_keyed_maps: dict[str, int] = field(default_factory=dict)
    #: receiver map -> (function, key as written) of each of those client-keyed writes: the plugin evicts the least
    #: recently touched entries when it can name the key in the request (state_caps.request_keys), else clears
    client_map_keys: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: receiver map or slice -> the empty value BLIS's uncarried constructor makes it (``make(map[string]string)``),
    #: which newPolicy makes too, so the evolved code's writes do not hit a nil map (ctor_fields.py)
    made_fields: dict[str, Node] = field(default_factory=dict)

    @property
    def signal_names(self) -> list[str]:
        return sorted({s.name for s in self.signals})

    @property
    def constructed_fields(self) -> list[tuple[str, str]]:
        """(receiver field, Parameters field) the plugin sets when it is built: the fields BLIS sets outside the
        carried code. A field the carried code sets itself (``assigned``) reads its parameter there instead."""
        return [
            (th.receiver_field, th.field)  # type: ignore[attr-defined]
            for th in self.thresholds
            if th.role == "field" and th.param and not th.assigned
        ]

    def line_of(self, node: Node) -> int:
        assert self.src is not None
        return self.src.to_original_line(node.start_point[0] + 1)


#: EffectiveLoad() as the snapshot fields it adds (a scorer that ranks by it reads all three).
EFFECTIVE_LOAD_PARTS = ("QueueDepth", "BatchSize", "InFlightRequests")

#: The snapshot signals each BLIS scorer the plugin can carry reads (templates/baseline.go.j2, one function each):
#: the prefix scorers read the prompt's prefix-cache match, which is no snapshot signal. queue-depth ranked by
#: EffectiveLoad() before BLIS #960 (``scorer_signals`` takes the era). The plugin carries only the scorers its
#: ``scorers`` parameter names by default (``plugin_shape.used_scorers``: Validate() refuses any other), so these
#: are all it reads beside the evolved logic: a program composing the default three reads no in-flight count.
SCORER_READS: dict[str, tuple[str, ...]] = {
    "prefix-affinity": (),
    "precise-prefix-cache": (),
    "queue-depth": ("QueueDepth",),
    "kv-utilization": ("KVUtilization",),
    "load-balance": EFFECTIVE_LOAD_PARTS,
    "active-requests": ("InFlightRequests",),
    "running-requests": ("BatchSize",),
    "load-aware": ("QueueDepth",),
    "vllm-dp": ("QueueDepth", "BatchSize"),
}

#: The order ``scorer_signals`` lists them in: the order the adapter fills them in.
_SCORER_SIGNAL_ORDER = ("QueueDepth", "BatchSize", "InFlightRequests", "KVUtilization")


def default_scorers(era: str) -> list[tuple[str, float]]:
    """BLIS's DefaultScorerConfigs of the program's era: the ``scorers`` the plugin carries unless gate 1 names
    others (``scorers:``)."""
    if era == "head":
        return [("precise-prefix-cache", 2.0), ("queue-depth", 1.0), ("kv-utilization", 1.0)]
    return [("prefix-affinity", 3.0), ("queue-depth", 2.0), ("kv-utilization", 2.0)]


def scorers_read_effective_load(scorers, era: str) -> bool:
    """Whether a carried scorer calls the snapshot's EffectiveLoad(): load-balance, and queue-depth before #960."""
    names = {n for n, _ in scorers or []}
    return "load-balance" in names or (era != "head" and "queue-depth" in names)


def scorer_signals(scorers, era: str) -> list[str]:
    """The snapshot signals the named BLIS scorers read, in the adapter's order."""
    read: set[str] = set()
    for name, _ in scorers or []:
        read |= set(SCORER_READS.get(name, ()))
    if scorers_read_effective_load(scorers, era):
        read |= set(EFFECTIVE_LOAD_PARTS)
    return [s for s in _SCORER_SIGNAL_ORDER if s in read]


def signals_read(an: Analysis, kind: PolicyKind, scorers=None) -> set[str]:
    """Every signal the plugin will read: the logic's own and, for a program composing BLIS's scorers, those of the
    scorers it carries (``scorers``, by default its era's defaults)."""
    if not (an.uses_scorers and kind == PolicyKind.ROUTING):
        return set(an.signal_names)
    return set(an.signal_names) | set(scorer_signals(scorers or default_scorers(an.era), an.era))
