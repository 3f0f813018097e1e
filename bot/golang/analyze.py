"""What an evolved policy reads and which numbers it decides on: stage 1's analysis.

The translator must know, before it writes a line of llm-d code, which BLIS
signals the evolved logic reads (through any alias, range variable, index or
helper), which numeric literals it compares those signals against or combines
them with (they become plugin parameters), and which constructs cannot survive
the move to llm-d (the hazards in ``bot.golang.hazards``). sim2real's regex
extractor missed aliases such as ``sloClass := req.SLOClass``; this walks the
tree-sitter AST with a small data-flow pass instead, so a value keeps the set
of signals it was computed from however many assignments later it is compared.

The walk is deliberately simple (flow-insensitive within a function, two passes
so loop-carried and call-site values settle) and deterministic: the same source
gives the same analysis, in source order.

Check ids raised here (``SourceError.check``, stable; see also ``bot.golang.source``
and the hazard ids in ``bot.golang.hazards``):

- ``source.no-policy-function``  no Route / Admit / OrderQueue with a BLIS signature (the message names them)
- ``source.kind-mismatch``       ``--kind`` contradicts the host function
- ``source.ambiguous-host``      several evolved policy functions and no EVOLVE markers
- ``source.removed-interface``   a PriorityPolicy.Compute program (interface removed from BLIS)
- ``source.legacy-signature``    (finding, SUGGESTION) the design doc's ``Admit(*RouterState, *Request) bool`` shape
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import tree_sitter

from bot.dictionary import Dictionary
from bot.golang.source import EvolvedSource, SourceError
from bot.model import Finding, PolicyKind, Severity

Node = tree_sitter.Node

CHECK_NO_POLICY = "source.no-policy-function"
CHECK_KIND_MISMATCH = "source.kind-mismatch"
CHECK_AMBIGUOUS_HOST = "source.ambiguous-host"
CHECK_LEGACY_SIGNATURE = "source.legacy-signature"
CHECK_REMOVED_INTERFACE = "source.removed-interface"

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

_EXPR_TYPES = {
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
_COMPARE = {"<", "<=", ">", ">=", "==", "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_LOAD_SIGNALS = {"QueueDepth", "BatchSize", "InFlightRequests", "EffectiveLoad"}
_KV_FRACTION = {"KVUtilization"}
_KV_ABSOLUTE = {"FreeKVBlocks", "KvTokensInUse", "TotalKvCapacityTokens"}


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


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

    @property
    def lines(self) -> list[int]:
        return sorted({o.line for o in self.occurrences})


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
    literal_nodes: dict[int, Threshold] = field(default_factory=dict)  # literal start byte -> threshold
    cond_nodes: dict[int, Node] = field(default_factory=dict)  # comparison node id -> node
    bool_aliases: dict[str, Node] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    pseudo_signals: set[str] = field(default_factory=set)
    var_signals: dict[str, set[str]] = field(default_factory=dict)  # "Func::var" -> signals its value derives from

    @property
    def signal_names(self) -> list[str]:
        return sorted({s.name for s in self.signals})

    def line_of(self, node: Node) -> int:
        assert self.src is not None
        return self.src.to_original_line(node.start_point[0] + 1)


# --------------------------------------------------------------------------
# Tree helpers
# --------------------------------------------------------------------------


def text_of(src: EvolvedSource, node: Node | None) -> str:
    if node is None:
        return ""
    return src.go_bytes[node.start_byte : node.end_byte].decode("utf-8")


def walk(node: Node) -> Iterable[Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _named(node: Node) -> list[Node]:
    return [c for c in node.children if c.is_named and c.type != "comment"]


def parse_number(lit: str) -> float | None:
    s = lit.replace("_", "")
    try:
        if s.lower().startswith(("0x", "0o", "0b")):
            return float(int(s, 0))
        if re.fullmatch(r"0[0-7]+", s):
            return float(int(s, 8))
        return float(s)
    except ValueError:
        return None


def lower_camel(name: str) -> str:
    if not name:
        return name
    m = re.match(r"^([A-Z]+)(?=[A-Z][a-z]|$)", name)
    if m and len(m.group(1)) > 1:  # KVUtilization -> kvUtilization, SLOClass -> sloClass
        return m.group(1).lower() + name[len(m.group(1)) :]
    return name[0].lower() + name[1:]


def upper_camel(name: str) -> str:
    return name[:1].upper() + name[1:]


def _strip_ptr(t: str) -> str:
    return t.strip().lstrip("*").strip()


# --------------------------------------------------------------------------
# Finding the host function
# --------------------------------------------------------------------------


def collect_functions(src: EvolvedSource) -> list[FuncInfo]:
    out: list[FuncInfo] = []
    for node in src.tree.root_node.children:
        if node.type not in ("function_declaration", "method_declaration"):
            continue
        name = text_of(src, node.child_by_field_name("name"))
        rtype = rvar = None
        rptr = False
        if node.type == "method_declaration":
            recv = node.child_by_field_name("receiver")
            decls = [c for c in recv.children if c.type == "parameter_declaration"] if recv else []
            if decls:
                t = decls[0].child_by_field_name("type")
                ttext = text_of(src, t)
                rptr = ttext.strip().startswith("*")
                rtype = re.sub(r"\[.*\]$", "", _strip_ptr(ttext))
                n = decls[0].child_by_field_name("name")
                rvar = text_of(src, n) if n is not None else None
                if rvar == "_":
                    rvar = None
        params: list[tuple[str, str]] = []
        plist = node.child_by_field_name("parameters")
        for p in plist.children if plist else []:
            if p.type not in ("parameter_declaration", "variadic_parameter_declaration"):
                continue
            ptype = text_of(src, p.child_by_field_name("type"))
            names = [c for c in p.children if c.type == "identifier"]
            if names:
                params.extend((text_of(src, n), ptype) for n in names)
            else:
                params.append(("", ptype))
        result = text_of(src, node.child_by_field_name("result"))
        info = FuncInfo(node, name, rtype, rvar, rptr, params, result)
        _classify(info)
        out.append(info)
    return out


def _classify(f: FuncInfo) -> None:
    types = [_norm_type(t) for _, t in f.params]
    if f.name == "Route" and "*RouterState" in types:
        f.kind = PolicyKind.ROUTING
        f.legacy = "*Request" not in types
    elif f.name == "Admit" and "*RouterState" in types and "*Request" in types:
        f.kind = PolicyKind.ADMISSION
        f.legacy = types.index("*RouterState") < types.index("*Request") or _norm_type(f.result) == "bool"
    elif f.name == "Admit" and "*RouterState" in types:
        f.kind = PolicyKind.ADMISSION
        f.legacy = True
    elif f.name == "OrderQueue" and any(t in ("[]*Request", "[]Request") for t in types):
        f.kind = PolicyKind.SCHEDULING


def _norm_type(t: str) -> str:
    return re.sub(r"\s+", "", t)


def find_host(src: EvolvedSource, funcs: list[FuncInfo], kind: PolicyKind | None) -> FuncInfo:
    """The function holding the EVOLVE block, else the one non-built-in policy function (of --kind)."""
    policies = [f for f in funcs if f.kind is not None]
    block = src.evolve_block_go
    if block is not None:
        start_byte = _line_start_byte(src, block[0])
        enclosing = [f for f in funcs if f.node.start_byte <= start_byte < f.node.end_byte]
        if enclosing:
            host = enclosing[0]
            if host.kind is None:
                raise SourceError(
                    f"{src.path}:{src.evolve_block[0]}: the EVOLVE block is inside {host.label}, which is not a policy "
                    f"function; expected one of: {'; '.join(SIGNATURES.values())}",
                    check=CHECK_NO_POLICY,
                    line=src.evolve_block[0],
                )
            if kind is not None and host.kind != kind:
                raise SourceError(
                    f"{src.path}: --kind {kind.value}, but the EVOLVE block is inside {host.label} ({host.kind.value}); "
                    f"drop --kind or pass --kind {host.kind.value}",
                    check=CHECK_KIND_MISMATCH,
                    line=src.to_original_line(host.node.start_point[0] + 1),
                )
            return host
    if (
        any(f.name == "Compute" and any(_norm_type(t) == "*Request" for _, t in f.params) for f in funcs)
        and not policies
    ):
        raise SourceError(
            f"{src.path}: PriorityPolicy.Compute was removed from BLIS in ce85515e (2026-05-06) and has no llm-d "
            "counterpart; re-express the ordering as an InstanceScheduler OrderQueue(requests []*Request, clock int64)",
            check=CHECK_REMOVED_INTERFACE,
        )
    cands = [f for f in policies if kind is None or f.kind == kind]
    if not cands:
        expected = [SIGNATURES[kind]] if kind is not None else list(SIGNATURES.values())
        found = f" (found {', '.join(sorted({f.label for f in policies}))})" if policies else ""
        raise SourceError(
            f"{src.path}: no recognizable policy function{found}; expected one of: {'; '.join(expected)}",
            check=CHECK_NO_POLICY if not policies else CHECK_KIND_MISMATCH,
        )
    if len(cands) > 1:
        evolved = [f for f in cands if f.receiver_type not in BUILTIN_RECEIVERS]
        if len(evolved) == 1:
            return evolved[0]
        ws = [f for f in evolved if f.receiver_type == "WeightedScoring"]
        if len(ws) == 1:
            return ws[0]
        raise SourceError(
            f"{src.path}: several policy functions ({', '.join(f.label for f in cands)}) and no EVOLVE-BLOCK markers; "
            "add the markers around the evolved code or pass --kind",
            check=CHECK_AMBIGUOUS_HOST,
        )
    return cands[0]


def _line_start_byte(src: EvolvedSource, go_line: int) -> int:
    lines = src.go_text.split("\n")
    return len("\n".join(lines[: go_line - 1]).encode("utf-8")) + (1 if go_line > 1 else 0)


# --------------------------------------------------------------------------
# The data-flow walk
# --------------------------------------------------------------------------


@dataclass
class Val:
    role: str | None = None  # state snapshots snapshot request requests receiver tokens scorer scorers weights
    taint: frozenset = frozenset()
    type: str | None = None
    lit: Node | None = None  # the node when the value is a numeric literal

    def signals(self) -> set[str]:
        return {t for t in self.taint if not t.startswith("@")}


_ROLE_OF_TYPE = {
    "*RouterState": "state",
    "RouterState": "state",
    "[]RoutingSnapshot": "snapshots",
    "[]*RoutingSnapshot": "snapshots",
    "RoutingSnapshot": "snapshot",
    "*RoutingSnapshot": "snapshot",
    "*Request": "request",
    "Request": "request",
    "[]*Request": "requests",
    "[]Request": "requests",
}
_ELEM_ROLE = {"snapshots": "snapshot", "requests": "request", "scorers": "scorer"}
_MATH_FLOAT = re.compile(r"^math\.[A-Z]\w*$")
_UNIT_POWERS = {1e3, 1e6, 1e9, 1e-3, 1e-6}


class _Walker:
    """Walks one function at a time; env and call-site taints persist across functions and passes."""

    def __init__(
        self,
        src: EvolvedSource,
        d: Dictionary,
        an: Analysis,
        funcs: dict[str, FuncInfo],
        recv_types: set[str],
        struct_fields: dict[str, dict[str, str]],
    ):
        self.src = src
        self.d = d
        self.an = an
        self.funcs = funcs  # name -> FuncInfo (top-level functions) ; "Type.method" -> method
        self.recv_types = recv_types
        self.struct_fields = struct_fields
        self.recording = False
        self.env: dict[str, Val] = {}
        self.fn: FuncInfo | None = None
        self.fn_label = ""
        self.ret_key = ""
        self.call_args: dict[str, list[Val]] = {}  # callee key -> merged arg values per position
        self.closures: dict[str, Node] = {}
        self.cond_stack: list[tuple[Val, Node]] = []
        self.seen_uses: set[tuple] = set()
        self.seen_lits: set[int] = set()
        self.hazard_nodes: list[tuple[str, Node, dict]] = []
        self.seen_hazards: set[tuple] = set()
        self.called: set[str] = set()

    # ---- helpers -------------------------------------------------------

    def t(self, node: Node | None) -> str:
        return text_of(self.src, node)

    def line(self, node: Node) -> int:
        return self.src.to_original_line(node.start_point[0] + 1)

    def key(self, name: str) -> str:
        return f"{self.fn_label}::{name}"

    def get(self, name: str) -> Val | None:
        return self.env.get(self.key(name))

    def set(self, name: str, v: Val, merge: bool = False) -> None:
        k = self.key(name)
        old = self.env.get(k)
        if v.lit is not None:
            v = Val(v.role, v.taint, v.type)
        if merge and old is not None:
            typ = old.type if old.type and not old.type.startswith("untyped") else (v.type or old.type)
            v = Val(v.role or old.role, old.taint | v.taint, typ)
        self.env[k] = v

    def hazard(self, kind: str, node: Node, **info) -> None:
        if not self.recording:
            return
        k = (kind, node.start_byte, node.end_byte)
        if k in self.seen_hazards:
            return
        self.seen_hazards.add(k)
        self.hazard_nodes.append((kind, node, info))

    def use(self, written: str, scope: str, node: Node, via: str) -> str:
        entry = self.d.signal(written, scope if scope != "method" else None)
        name = entry.name if entry is not None else written
        if entry is not None and entry.identifier_only:
            return name
        if self.recording:
            k = (name, written, self.line(node), via)
            if k not in self.seen_uses:
                self.seen_uses.add(k)
                self.an.signals.append(
                    SignalUse(name, written, entry.scope if entry else scope, self.line(node), via, entry is not None)
                )
                if entry is None:
                    self.hazard("unmapped", node, name=written, scope=scope)
                elif entry.oracle:
                    self.hazard("oracle", node, name=written)
                elif entry.removed and written in entry.aliases:
                    self.hazard("renamed", node, name=written, canonical=entry.name, removed=entry.removed)
        return name

    # ---- entry ---------------------------------------------------------

    def run_function(self, f: FuncInfo) -> None:
        self.fn = f
        self.fn_label = f.label
        self.ret_key = f.label
        if f.receiver_var:
            self.set(f.receiver_var, Val("receiver", type=f.receiver_type))
        for i, (name, ptype) in enumerate(f.params):
            if not name or name == "_":
                continue
            role = _ROLE_OF_TYPE.get(_norm_type(ptype))
            arg = self.call_args.get(f.label, [])
            taint = arg[i].taint if i < len(arg) else frozenset()
            argrole = arg[i].role if i < len(arg) else None
            typ = _norm_type(ptype)
            if name == "clock" and typ == "int64" and f.kind == PolicyKind.SCHEDULING:
                taint = taint | {"Clock"}
                self.an.pseudo_signals.add("Clock")
            self.set(name, Val(role or argrole, taint, typ))
        body = f.node.child_by_field_name("body")
        if body is not None:
            self.visit(body)

    # ---- statements ----------------------------------------------------

    def visit(self, node: Node) -> None:
        t = node.type
        if t in ("short_var_declaration", "assignment_statement"):
            self.assign(node)
        elif t == "var_declaration":
            for spec in walk(node):
                if spec.type == "var_spec":
                    self.var_spec(spec)
        elif t == "const_declaration":
            for spec in walk(node):
                if spec.type == "const_spec":
                    self.var_spec(spec)
        elif t == "inc_statement" or t == "dec_statement":
            self.visit_children(node)
        elif t == "for_statement":
            self.for_stmt(node)
        elif t == "if_statement":
            self.if_stmt(node)
        elif t in ("expression_switch_statement", "type_switch_statement"):
            self.switch_stmt(node)
        elif t == "return_statement":
            taint: frozenset = frozenset()
            for c in _named(node):
                for e in _named(c) if c.type == "expression_list" else [c]:
                    taint |= self.ex(e).taint
            k = f"@ret::{self.ret_key}"
            old = self.env.get(k, Val())
            self.env[k] = Val(None, old.taint | taint, old.type)
        elif t == "func_literal" or t in _EXPR_TYPES:
            self.ex(node)
        else:
            self.visit_children(node)

    def visit_children(self, node: Node) -> None:
        for c in node.children:
            if c.is_named and c.type != "comment":
                self.visit(c)

    def var_spec(self, spec: Node) -> None:
        names = [c for c in spec.children if c.type == "identifier"]
        tnode = spec.child_by_field_name("type")
        typ = _norm_type(self.t(tnode)) if tnode is not None else None
        value = spec.child_by_field_name("value")
        vals = [self.ex(v) for v in _named(value)] if value is not None else []
        for i, n in enumerate(names):
            v = vals[i] if i < len(vals) else (vals[0] if len(vals) == 1 else Val())
            if typ is None and v.type in ("untyped-int", "untyped-float"):
                v = Val(v.role, v.taint, "int" if v.type == "untyped-int" else "float64")
            role = _ROLE_OF_TYPE.get(typ or "") or v.role
            self.set(self.t(n), Val(role, v.taint, typ or v.type))

    def assign(self, node: Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op_node = node.child_by_field_name("operator")
        op = (
            self.t(op_node)
            if op_node is not None
            else next((self.t(c) for c in node.children if not c.is_named and self.t(c).endswith("=")), "=")
        )
        lefts = _named(left) if left is not None else []
        rights = _named(right) if right is not None else []
        vals = [self.ex(r) for r in rights]
        if len(vals) == 1 and len(lefts) > 1:
            vals = [Val(None, vals[0].taint, None)] * len(lefts)
        for i, lhs in enumerate(lefts):
            v = vals[i] if i < len(vals) else Val()
            r = rights[i] if i < len(rights) else None
            # control-dependent constants: `adj *= 0.4` under `if load > 7`
            if r is not None and self._numeric_literal(r) is not None:
                self.factor_literal(r, lhs, op)
            if lhs.type == "identifier":
                name = self.t(lhs)
                if name == "_":
                    continue
                if op == ":=" and v.type in ("untyped-int", "untyped-float"):
                    v = Val(v.role, v.taint, "int" if v.type == "untyped-int" else "float64")
                if op in ("=", ":="):
                    if r is not None and r.type == "func_literal":
                        self.closures[name] = r
                    if (
                        r is not None
                        and r.type in ("binary_expression", "parenthesized_expression")
                        and self._is_bool_expr(r)
                    ):
                        self.an.bool_aliases[f"{self.fn_label}::{name}"] = r
                    self.set(name, v, merge=(op == "="))
                else:
                    self.set(name, Val(None, v.taint, None), merge=True)
            else:
                self.ex(lhs)
                base = self._base_ident(lhs)
                if base is not None:
                    bv = self.get(base)
                    self.set(base, Val(bv.role if bv else None, v.taint, bv.type if bv else None), merge=True)
                elif lhs.type == "selector_expression":
                    self._set_field(lhs, v)

    def _is_bool_expr(self, node: Node) -> bool:
        while node.type == "parenthesized_expression":
            node = _named(node)[0]
        if node.type != "binary_expression":
            return False
        return self.t(node.child_by_field_name("operator")) in _COMPARE | {"&&", "||"}

    def _set_field(self, sel: Node, v: Val) -> None:
        operand = sel.child_by_field_name("operand")
        fld = self.t(sel.child_by_field_name("field"))
        ov = self.ex(operand) if operand is not None else Val()
        if ov.role == "receiver":
            k = f"@recv::{fld}"
            old = self.env.get(k, Val())
            self.env[k] = Val(old.role, old.taint | v.taint, old.type or v.type)
            if v.type and fld not in self.an.receiver_fields:
                self.an.receiver_fields.setdefault(fld, v.type)
        elif ov.role == "decision" and fld == "Priority":
            self.an.decision_priority = True
            self.hazard("decision-priority", sel)

    def _base_ident(self, node: Node) -> str | None:
        while node.type in ("index_expression", "parenthesized_expression", "unary_expression"):
            node = node.child_by_field_name("operand") or _named(node)[0]
        return self.t(node) if node.type == "identifier" else None

    def for_stmt(self, node: Node) -> None:
        rc = next((c for c in node.children if c.type == "range_clause"), None)
        if rc is not None:
            right = rc.child_by_field_name("right")
            rv = self.ex(right) if right is not None else Val()
            left = rc.child_by_field_name("left")
            names = list(_named(left)) if left is not None else []
            if names:
                kname = self.t(names[0])
                if kname != "_":
                    ktype = "string" if (rv.type or "").startswith("map[string]") else "int"
                    self.set(kname, Val(None, rv.taint if ktype == "string" else frozenset(), ktype))
            if len(names) > 1:
                vname = self.t(names[1])
                if vname != "_":
                    role = _ELEM_ROLE.get(rv.role or "")
                    etype = _elem_type(rv.type)
                    self.set(
                        vname,
                        Val(
                            role,
                            rv.taint
                            if role not in ("snapshot", "request")
                            else frozenset() | {t for t in rv.taint if t.startswith("@")},
                            etype,
                        ),
                    )
        else:
            for c in node.children:
                if c.type == "for_clause":
                    for cc in _named(c):
                        self.visit(cc)
                elif c.is_named and c.type not in ("block", "comment"):
                    self.ex(c)
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit(body)

    def if_stmt(self, node: Node) -> None:
        init = node.child_by_field_name("initializer")
        if init is not None:
            self.visit(init)
        cond = node.child_by_field_name("condition")
        cv = self.ex(cond) if cond is not None else Val()
        self.cond_stack.append((cv, cond))
        cons = node.child_by_field_name("consequence")
        if cons is not None:
            self.visit(cons)
        alt = node.child_by_field_name("alternative")
        if alt is not None:
            self.visit(alt)
        self.cond_stack.pop()

    def switch_stmt(self, node: Node) -> None:
        init = node.child_by_field_name("initializer")
        if init is not None:
            self.visit(init)
        value = node.child_by_field_name("value")
        vv = self.ex(value) if value is not None else Val()
        for c in node.children:
            if c.type == "expression_case":
                vals = c.child_by_field_name("value")
                for v in _named(vals) if vals is not None else []:
                    lv = self.ex(v)
                    if value is not None:
                        self.check_slo_literal(vv, v, v)
                    self.cond_stack.append((Val(None, vv.taint | lv.taint), v))
                    self.cond_stack.pop()
                self.cond_stack.append(
                    (
                        Val(
                            None,
                            vv.taint
                            | frozenset().union(
                                *(self.ex(v).taint for v in (_named(vals) if vals is not None else []))
                            ),
                        ),
                        value if value is not None else (_named(vals)[0] if vals is not None and _named(vals) else c),
                    )
                )
                for s in c.children:
                    if s.is_named and s.type not in ("comment",) and s != vals:
                        self.visit(s)
                self.cond_stack.pop()
            elif c.type == "default_case":
                self.cond_stack.append((vv, value if value is not None else c))
                self.visit_children(c)
                self.cond_stack.pop()

    # ---- expressions ---------------------------------------------------

    def ex(self, node: Node | None, lvalue: bool = False) -> Val:
        if node is None:
            return Val()
        t = node.type
        if t == "identifier":
            name = self.t(node)
            v = self.get(name)
            if v is not None:
                return v
            if name in ("true", "false"):
                return Val(type="bool")
            return Val()
        if t == "int_literal":
            return Val(type="untyped-int", lit=node)
        if t == "float_literal":
            return Val(type="untyped-float", lit=node)
        if t in ("interpreted_string_literal", "raw_string_literal"):
            return Val(type="string")
        if t in ("true", "false"):
            return Val(type="bool")
        if t == "parenthesized_expression":
            inner = _named(node)
            return self.ex(inner[0]) if inner else Val()
        if t == "unary_expression":
            operand = node.child_by_field_name("operand")
            v = self.ex(operand)
            op = self.t(node.child_by_field_name("operator"))
            if op == "-" and v.lit is not None:
                return Val(v.role, v.taint, v.type, node)
            if op == "!":
                return Val(None, v.taint, "bool")
            return Val(v.role, v.taint, v.type)
        if t == "selector_expression":
            return self.selector(node)
        if t == "index_expression":
            return self.index(node)
        if t == "slice_expression":
            operand = node.child_by_field_name("operand")
            v = self.ex(operand)
            for c in _named(node)[1:]:
                self.ex(c)
            return v
        if t == "call_expression":
            return self.call(node)
        if t == "binary_expression":
            return self.binary(node)
        if t == "composite_literal":
            taint: frozenset = frozenset()
            body = node.child_by_field_name("body")
            for el in _named(body) if body is not None else []:
                for part in _named(el):
                    if part.type == "literal_value":
                        continue
                    taint |= self.ex(part).taint
            typ = _norm_type(self.t(node.child_by_field_name("type")))
            if typ in ("RoutingDecision",):
                return Val("decision", taint, typ)
            return Val(_ROLE_OF_TYPE.get(typ), taint, typ)
        if t == "func_literal":
            saved = self.cond_stack
            saved_ret = self.ret_key
            self.ret_key = f"{self.fn_label}::closure::{id_of(node)}"
            self.cond_stack = []
            params = node.child_by_field_name("parameters")
            for p in params.children if params else []:
                if p.type != "parameter_declaration":
                    continue
                ptype = _norm_type(self.t(p.child_by_field_name("type")))
                for n in p.children:
                    if n.type == "identifier":
                        nm = self.t(n)
                        arg = self.call_args.get(f"{self.fn_label}::closure::{id_of(node)}", [])
                        idx = self._param_index(params, n)
                        taint = arg[idx].taint if idx < len(arg) else frozenset()
                        self.set(nm, Val(_ROLE_OF_TYPE.get(ptype), taint, ptype))
            body = node.child_by_field_name("body")
            if body is not None:
                self.visit(body)
            self.cond_stack = saved
            self.ret_key = saved_ret
            return Val(type="func")
        if t == "type_assertion_expression":
            return self.ex(node.child_by_field_name("operand"))
        if t == "type_conversion_expression":
            v = self.ex(node.child_by_field_name("operand"))
            return Val(None, v.taint, _norm_type(self.t(node.child_by_field_name("type"))))
        # anything else: visit children for side effects
        taint = frozenset()
        for c in _named(node):
            taint |= self.ex(c).taint
        return Val(None, taint)

    def _param_index(self, params: Node, ident: Node) -> int:
        i = 0
        for p in params.children:
            if p.type != "parameter_declaration":
                continue
            for n in p.children:
                if n.type == "identifier":
                    if n == ident:
                        return i
                    i += 1
        return i

    def selector(self, node: Node) -> Val:
        operand = node.child_by_field_name("operand")
        fld = self.t(node.child_by_field_name("field"))
        ov = self.ex(operand)
        role = ov.role
        if role == "state":
            if fld in ("Snapshots",):
                return Val("snapshots", frozenset(), "[]RoutingSnapshot")
            if fld == "LoadingSnapshots":
                self.use(fld, "state", node, "field")
                return Val("snapshots", frozenset({"LoadingSnapshots"}), "[]RoutingSnapshot")
            name = self.use(fld, "state", node, "field")
            self.an.state_fields.setdefault(name, self._entry_type(name, "state"))
            return Val(None, frozenset({name}), self._entry_type(name, "state"))
        if role == "snapshot":
            name = self.use(fld, "snapshot", node, self._via(operand))
            entry = self.d.signal(fld, "snapshot")
            typ = self._entry_type(name, "snapshot")
            if entry is not None and entry.identifier_only:
                self.an.snapshot_fields.setdefault(name, typ or "string")
                return Val("id", frozenset(), typ or "string")
            if fld == "EffectiveLoad":
                return Val("method", frozenset(), "func")
            self.an.snapshot_fields.setdefault(name, typ or "float64")
            return Val(None, frozenset({name}), typ)
        if role == "request":
            if fld in ("InputTokens", "OutputTokens"):
                entry = self.d.signal(fld, "request")
                name = entry.name if entry else fld
                self.use(fld, "request", node, self._via(operand))
                self.an.request_fields.setdefault(name, "[]tokenID")
                return Val("tokens", frozenset({name}), "[]tokenID")
            if fld == "InputLen":
                return Val("method", frozenset(), "func")
            name = self.use(fld, "request", node, self._via(operand))
            entry = self.d.signal(fld, "request")
            typ = self._entry_type(name, "request")
            if entry is not None and entry.identifier_only:
                self.an.request_fields.setdefault(name, typ or "string")
                return Val("id", frozenset(), typ or "string")
            self.an.request_fields.setdefault(name, typ or "float64")
            return Val(None, frozenset({name}), typ)
        if role == "receiver":
            if fld == "scorers":
                self.an.uses_scorers = True
                return Val("scorers", frozenset({"@scorers"}), "[]scorerFunc")
            if fld == "weights":
                self.an.uses_scorers = True
                return Val("weights", frozenset({"@weights"}), "[]float64")
            if fld == "rng":
                self.an.uses_rng = True
                return Val("rng", frozenset(), "*rand.Rand")
            if fld == "observers":
                self.an.uses_observers = True
                return Val("observers", frozenset(), "[]observerFunc")
            if fld in ("cacheWeight", "loadWeight"):
                self.hazard("early-weight", node, name=fld)
                self.an.receiver_fields.setdefault(fld, "float64")
                return Val(None, frozenset({f"@{fld}"}), "float64")
            k = f"@recv::{fld}"
            v = self.env.get(k, Val())
            declared = self.struct_fields.get(self.fn.receiver_type or "", {}).get(fld) if self.fn else None
            if (
                declared is None
                and self.fn
                and self.fn.receiver_type
                and f"{self.fn.receiver_type}.{fld}" in self.funcs
            ):
                return Val("method", v.taint, "func")
            typ = declared or v.type
            if declared is None:
                self.an.receiver_fields.setdefault(fld, typ or "")
            return Val(_ROLE_OF_TYPE.get(typ or ""), v.taint, typ)
        if role == "decision":
            return Val(None, ov.taint, None)
        if role == "rng":
            return Val("rngmethod", ov.taint, "func")
        # package selectors and unknown operands
        otext = self.t(operand)
        if operand is not None and operand.type == "identifier" and self.get(otext) is None:
            full = f"{otext}.{fld}"
            if (otext == "math" and fld.startswith("Max")) or full in (
                "math.MinInt",
                "math.MinInt64",
                "math.SmallestNonzeroFloat64",
            ):
                return Val(type="untyped-int" if "Int" in fld else "untyped-float")
            if otext == "math" and fld.startswith(("Inf",)):
                return Val(type="func")
            return Val(type="pkg")
        if fld == "OutputTokens":
            self.hazard("oracle", node, name=fld)
        return Val(None, ov.taint, None)

    def _via(self, operand: Node | None) -> str:
        if operand is None:
            return "field"
        if operand.type == "identifier":
            return f"via {self.t(operand)}"
        return f"via {self.t(operand)}"

    def _entry_type(self, name: str, scope: str) -> str | None:
        e = self.d.signal(name, scope)
        if e is None:
            return None
        return _go_scalar(e.blis_type)

    def index(self, node: Node) -> Val:
        operand = node.child_by_field_name("operand")
        idx = node.child_by_field_name("index")
        ov = self.ex(operand)
        iv = self.ex(idx)
        if (
            idx is not None
            and idx.type == "int_literal"
            and ({"@scorers", "@weights"} & ov.taint)
            and ov.role not in ("snapshots", "requests")
        ):
            self.hazard("positional", node, operand=self.t(operand), index=self.t(idx))
        role = _ELEM_ROLE.get(ov.role or "")
        if role in ("snapshot", "request"):
            return Val(role, frozenset({t for t in ov.taint if t.startswith("@")}), _elem_type(ov.type))
        if role == "scorer":
            return Val("scorer", ov.taint, "scorerFunc")
        return Val(None, ov.taint | (iv.taint if ov.role is None else frozenset()), _elem_type(ov.type))

    def call(self, node: Node) -> Val:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        args = _named(args_node) if args_node is not None else []
        ftext = self.t(fn)
        # method calls on snapshots / requests
        if fn is not None and fn.type == "selector_expression":
            operand = fn.child_by_field_name("operand")
            fld = self.t(fn.child_by_field_name("field"))
            ov = self.ex(operand)
            if ov.role == "snapshot" and fld == "EffectiveLoad":
                name = self.use("EffectiveLoad", "method", fn, self._via(operand))
                entry = self.d.signal("EffectiveLoad")
                parts = set(entry.expands_to) if entry else {"QueueDepth", "BatchSize", "InFlightRequests"}
                for p in sorted(parts):
                    self.an.snapshot_fields.setdefault(p, self._entry_type(p, "snapshot") or "int")
                    if self.recording:
                        k = (p, "EffectiveLoad", self.line(fn), "EffectiveLoad()")
                        if k not in self.seen_uses:
                            self.seen_uses.add(k)
                            self.an.signals.append(
                                SignalUse(p, "EffectiveLoad", "snapshot", self.line(fn), "EffectiveLoad()", True)
                            )
                return Val(None, frozenset({name}) | parts, "int")
            if ov.role == "request" and fld == "InputLen":
                self.an.uses_input_len_method = True
                entry = self.d.signal("InputTokens", "request")
                self.use("InputLen", "request", fn, "InputLen()") if entry is None else self._record_alias_use(
                    "InputTokens", "InputLen", fn, "InputLen()"
                )
                self.an.request_fields.setdefault("InputTokens", "[]tokenID")
                return Val(None, frozenset({"InputTokens"}), "int64")
            if ov.role == "rng" or (operand is not None and self.t(operand) == "rand"):
                for a in args:
                    self.ex(a)
                if operand is not None and self.t(operand) == "rand":
                    self.an.imports.setdefault("rand", "math/rand")
                return Val(None, frozenset(), "int" if fld.startswith("Int") else "float64")
            if ov.role == "receiver":
                self.called.add(f"{self.fn.receiver_type}.{fld}" if self.fn else fld)
                vals = [self.ex(a) for a in args]
                self._merge_args(f"{self.fn.receiver_type}.{fld}" if self.fn else fld, vals)
                callee = self.funcs.get(f"{self.fn.receiver_type}.{fld}" if self.fn else fld)
                taint = frozenset().union(*(v.taint for v in vals)) if vals else frozenset()
                return Val(None, taint | self._ret_taint(callee), _result_type(callee))
            if ov.role == "scorers" or ov.role == "scorer":
                vals = [self.ex(a) for a in args]
                return Val(None, frozenset({"@scorers"}), "map[string]float64")
            if operand is not None and operand.type == "identifier" and self.get(self.t(operand)) is None:
                pkg = self.t(operand)
                vals = [self.ex(a) for a in args]
                return self._pkg_call(node, pkg, fld, args, vals)
        vals = [self.ex(a) for a in args]
        taint = frozenset().union(*(v.taint for v in vals)) if vals else frozenset()
        if fn is not None and fn.type == "index_expression":
            fv = self.ex(fn)
            if fv.role == "scorer":
                return Val(None, frozenset({"@scorers"}), "map[string]float64")
        if fn is not None and fn.type == "identifier":
            name = ftext
            v = self.get(name)
            if v is not None and v.role == "scorer":
                return Val(None, frozenset({"@scorers"}), "map[string]float64")
            if name == "len" and args:
                av = vals[0]
                if av.role == "tokens":
                    # len(req.InputTokens): the request signal itself
                    return Val(None, av.taint, "int")
                return Val(None, av.taint if av.role not in ("snapshots", "requests") else frozenset(), "int")
            if name in ("float64", "float32", "int", "int64", "int32", "uint64", "uint", "string"):
                return Val(vals[0].role if vals and vals[0].role == "id" else None, taint, name)
            if name in ("min", "max"):
                self._minmax_literals(node, name, args, vals)
                typ = next((v.type for v in vals if v.type and not v.type.startswith("untyped")), None)
                return Val(None, taint, typ or (vals[0].type if vals else None))
            if name == "make":
                typ = _norm_type(self.t(args[0])) if args else None
                return Val(_ROLE_OF_TYPE.get(typ or ""), taint, typ)
            if name == "append":
                return Val(vals[0].role if vals else None, taint, vals[0].type if vals else None)
            if name in self.closures:
                key = f"{self.fn_label}::closure::{id_of(self.closures[name])}"
                self._merge_args(key, vals)
                return Val(None, taint | self.env.get(f"@ret::{key}", Val()).taint, None)
            if name in SHIMMED_FUNCS:
                return Val("decision", taint, "RoutingDecision")
            if name in self.funcs and name not in NEVER_CARRIED:
                self.called.add(name)
                self._merge_args(name, vals)
                callee = self.funcs[name]
                self._check_token_params(callee, vals, node)
                return Val(
                    _ROLE_OF_TYPE.get(_norm_type(callee.result)), taint | self._ret_taint(callee), _result_type(callee)
                )
            if name in SHIMMED_FUNCS:
                return Val("decision", taint, "RoutingDecision")
            if name in ("NewRoutingDecision", "NewRoutingDecisionWithScores"):
                return Val("decision", taint, "RoutingDecision")
        return Val(None, taint)

    def _record_alias_use(self, canonical: str, written: str, node: Node, via: str) -> None:
        if not self.recording:
            return
        entry = self.d.signal(canonical)
        k = (canonical, written, self.line(node), via)
        if k not in self.seen_uses:
            self.seen_uses.add(k)
            self.an.signals.append(
                SignalUse(
                    canonical, written, entry.scope if entry else "request", self.line(node), via, entry is not None
                )
            )

    def _check_token_params(self, callee: FuncInfo, vals: list[Val], node: Node) -> None:
        for i, (_pname, ptype) in enumerate(callee.params):
            if i < len(vals) and vals[i].role == "tokens" and _norm_type(ptype) == "[]int":
                self.an.token_elem = "int"
                self.hazard("int-tokens", node, callee=callee.name)
                self.hazard("int-tokens-decl", callee.node, callee=callee.name)

    def _ret_taint(self, callee: FuncInfo | None) -> frozenset:
        if callee is None:
            return frozenset()
        return self.env.get(f"@ret::{callee.label}", Val()).taint

    def _merge_args(self, key: str, vals: list[Val]) -> None:
        old = self.call_args.get(key, [])
        merged = []
        for i in range(max(len(old), len(vals))):
            a = old[i] if i < len(old) else Val()
            b = vals[i] if i < len(vals) else Val()
            merged.append(Val(a.role or b.role, a.taint | b.taint, a.type or b.type))
        self.call_args[key] = merged

    def _pkg_call(self, node: Node, pkg: str, fld: str, args: list[Node], vals: list[Val]) -> Val:
        taint = frozenset().union(*(v.taint for v in vals)) if vals else frozenset()
        if pkg == "math":
            if fld in ("Max", "Min"):
                self._minmax_literals(node, fld.lower(), args, vals)
            if fld == "Pow" and len(args) == 2 and vals[1].lit is not None and vals[0].signals():
                self.literal(vals[1].lit, "exponent", args[0], vals[0], node)
            return Val(None, taint, "float64")
        if pkg == "sort":
            return Val(None, taint, None)
        if pkg == "fmt":
            return Val(None, frozenset(), "string")
        if pkg == "strings":
            return Val(
                None, taint, "string" if fld not in ("Contains", "HasPrefix", "HasSuffix", "EqualFold") else "bool"
            )
        return Val(None, taint, None)

    def _minmax_literals(self, node: Node, which: str, args: list[Node], vals: list[Val]) -> None:
        tainted = [(a, v) for a, v in zip(args, vals, strict=False) if v.signals()]
        if not tainted:
            return
        for _a, v in zip(args, vals, strict=False):
            if v.lit is not None:
                self.literal(v.lit, "floor" if which == "max" else "cap", tainted[0][0], tainted[0][1], node)

    def binary(self, node: Node) -> Val:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op = self.t(node.child_by_field_name("operator"))
        lv = self.ex(left)
        rv = self.ex(right)
        taint = lv.taint | rv.taint
        if op in _COMPARE:
            self.an.cond_nodes[id_of(node)] = node
            if lv.lit is not None and rv.signals():
                self.literal(lv.lit, "threshold", right, rv, node, op=_FLIP[op])
            elif rv.lit is not None and lv.signals():
                self.literal(rv.lit, "threshold", left, lv, node, op=op)
            if op in ("==", "!="):
                self.check_slo_literal(lv, right, node)
                self.check_slo_literal(rv, left, node)
            return Val(None, taint, "bool")
        if op in ("&&", "||"):
            return Val(None, taint, "bool")
        if op in ("+", "-", "*", "/"):
            if op == "-" and lv.lit is not None and parse_number(self.t(lv.lit)) == 1.0 and "@weights" in rv.taint:
                self.hazard("renorm", node)
            if lv.lit is not None and rv.signals():
                self.literal(lv.lit, "coefficient" if op in ("*", "/") else "offset", right, rv, node, op=op)
            elif rv.lit is not None and lv.signals():
                self.literal(rv.lit, "coefficient" if op in ("*", "/") else "offset", left, lv, node, op=op)
        typ = next((v.type for v in (lv, rv) if v.type and not v.type.startswith("untyped")), None)
        if typ is None:
            typ = "untyped-float" if "untyped-float" in (lv.type, rv.type) else (lv.type or rv.type)
        return Val(None, taint, typ)

    # ---- literals --------------------------------------------------------

    def _numeric_literal(self, node: Node) -> Node | None:
        n = node
        while n.type == "parenthesized_expression":
            n = _named(n)[0]
        if n.type in ("int_literal", "float_literal"):
            return n
        if n.type == "unary_expression" and self.t(n.child_by_field_name("operator")) == "-":
            inner = n.child_by_field_name("operand")
            if inner is not None and inner.type in ("int_literal", "float_literal"):
                return n
        return None

    def factor_literal(self, rhs: Node, lhs: Node, op: str) -> None:
        """A constant assigned under a condition on a signal (adj *= 0.4 inside `if load > 7`)."""
        lit = self._numeric_literal(rhs)
        tainted = [(v, c) for v, c in self.cond_stack if v.signals()]
        if lit is None or not tainted:
            return
        cv, cnode = tainted[-1]
        subject = self._cond_subject(cnode) or cnode
        lhs_v = self.ex(lhs) if lhs.type != "identifier" else (self.get(self.t(lhs)) or Val())
        role = {"*=": "factor", "/=": "factor", "+=": "step", "-=": "step"}.get(op, "value")
        self.literal(lit, role, subject, Val(None, cv.taint, lhs_v.type), rhs, op=op, target=lhs)

    def _cond_subject(self, cnode: Node | None) -> Node | None:
        if cnode is None:
            return None
        for n in walk(cnode):
            if n.type == "binary_expression" and self.t(n.child_by_field_name("operator")) in _COMPARE - {"==", "!="}:
                lhs, r = n.child_by_field_name("left"), n.child_by_field_name("right")
                if self._numeric_literal(r) is not None:
                    return lhs
                if self._numeric_literal(lhs) is not None:
                    return r
        for n in walk(cnode):
            if n.type == "binary_expression" and self.t(n.child_by_field_name("operator")) in _COMPARE:
                lhs, r = n.child_by_field_name("left"), n.child_by_field_name("right")
                if self._numeric_literal(r) is not None:
                    return lhs
                if self._numeric_literal(lhs) is not None:
                    return r
                return lhs
        return None

    def literal(
        self, lit: Node, role: str, subject: Node, sv: Val, ctx: Node, op: str | None = None, target: Node | None = None
    ) -> None:
        if not self.recording or lit.start_byte in self.seen_lits:
            return
        self.seen_lits.add(lit.start_byte)
        raw = self.t(lit)
        num_text = raw.lstrip("-").strip()
        value = parse_number(num_text)
        if value is None:
            return
        if raw.strip().startswith("-"):
            value = -value
        if value == 0:
            return
        if role != "threshold" and abs(value) == 1:
            return
        if role in ("coefficient",) and op in ("*", "/") and abs(value) in _UNIT_POWERS:
            return
        signals = sorted(sv.signals())
        if not signals:
            return
        go_type = _param_type(sv.type, lit, self.src)
        base = self._base_name(subject, signals, target, role)
        th = Threshold(
            value=value,
            literal=raw.strip(),
            go_type=go_type,
            role=role,
            signals=signals,
            subject=self.t(subject),
            base=base,
            line=self.line(lit),
        )
        if go_type is None:
            th.reason = f"the type of `{self.t(subject)}` could not be inferred, so the literal stays in the code"
        owner = self.fn
        if (
            owner is not None
            and owner.receiver_var is None
            and owner is not self.an.host_info
            and owner.receiver_type is None
        ):
            th.reason = f"inside helper function {owner.name}, which has no receiver to carry parameters"
        th.occurrences.append(
            Occurrence(
                lit.start_byte,
                lit.end_byte,
                self.line(lit),
                role,
                op,
                id_of(ctx) if role == "threshold" else None,
                owner.label if owner else None,
            )
        )
        self.an.thresholds.append(th)
        self.an.literal_nodes[lit.start_byte] = th

    def _base_name(self, subject: Node, signals: list[str], target: Node | None, role: str = "") -> str:
        if target is not None and target.type == "identifier" and role == "value":
            return self.t(target)
        n = subject
        while n.type in ("parenthesized_expression",):
            n = _named(n)[0]
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            args = n.child_by_field_name("arguments")
            ftext = self.t(fn)
            if ftext in ("float64", "int", "int64") and args is not None and _named(args):
                n = _named(args)[0]
            elif fn is not None and fn.type == "selector_expression":
                return lower_camel(self.t(fn.child_by_field_name("field")))
            elif ftext == "len" and args is not None and _named(args):
                inner = _named(args)[0]
                if inner.type == "selector_expression":
                    return lower_camel(self.t(inner.child_by_field_name("field")))
        if n.type == "identifier":
            return self.t(n)
        if n.type == "selector_expression":
            return lower_camel(self.t(n.child_by_field_name("field")))
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is not None and fn.type == "selector_expression":
                return lower_camel(self.t(fn.child_by_field_name("field")))
        for c in walk(n):
            if c.type == "selector_expression":
                fld = self.t(c.child_by_field_name("field"))
                if self.d.signal(fld) is not None and fld != "ID":
                    return lower_camel(fld)
        for c in walk(n):
            if c.type == "identifier":
                v = self.get(self.t(c))
                if v is not None and v.signals():
                    return self.t(c)
        return lower_camel(signals[0])

    # ---- SLO names -------------------------------------------------------

    def check_slo_literal(self, v: Val, other: Node | None, ctx: Node) -> None:
        if other is None or "SLOClass" not in v.taint:
            return
        lit = other
        if lit.type != "interpreted_string_literal":
            return
        s = self.t(lit).strip('"')
        if s in ("realtime", "interactive"):
            self.hazard("dead-slo", ctx, name=s)


def id_of(node: Node) -> int:
    return node.start_byte * 100003 + node.end_byte


def _elem_type(t: str | None) -> str | None:
    if not t:
        return None
    if t.startswith("[]"):
        return t[2:]
    m = re.match(r"map\[[^\]]+\](.+)", t)
    if m:
        return m.group(1)
    return None


def _result_type(f: FuncInfo | None) -> str | None:
    if f is None:
        return None
    r = _norm_type(f.result)
    return r if r and not r.startswith("(") else None


def _go_scalar(blis_type: str) -> str:
    return {"[]TokenID": "[]tokenID", "[]RoutingSnapshot": "[]RoutingSnapshot"}.get(blis_type, blis_type)


def _param_type(subject_type: str | None, lit: Node, src: EvolvedSource) -> str | None:
    raw = text_of(src, lit)
    is_float = bool(re.search(r"[.eE]", raw.lstrip("-"))) and not raw.lower().startswith(("0x", "-0x"))
    if subject_type in ("float64", "float32", "untyped-float"):
        return "float64"
    if subject_type in ("int", "int64", "int32"):
        return subject_type if not is_float else None
    if subject_type == "time.Duration":
        return None
    if is_float:
        return "float64"
    return None


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def analyze(src: EvolvedSource, dictionary: Dictionary, kind: PolicyKind | str | None = None) -> Analysis:
    """Classify the policy, find its signals and thresholds, and flag the hazards."""
    from bot.golang import hazards  # local: hazards imports this module's types

    kind = PolicyKind(kind) if kind is not None else None
    funcs = collect_functions(src)
    host = find_host(src, funcs, kind)
    an = Analysis(kind=host.kind, host=host.label, signals=[], thresholds=[], findings=[], src=src, host_info=host)
    if host.legacy:
        an.findings.append(
            Finding(
                severity=Severity.SUGGESTION,
                check=CHECK_LEGACY_SIGNATURE,
                message=(
                    f"{host.label} has the design-doc signature, not BLIS's {SIGNATURES[host.kind]}; "
                    "translated by argument type — check that the copy really ran in BLIS"
                ),
                source_line=src.to_original_line(host.node.start_point[0] + 1),
            )
        )
    by_name: dict[str, FuncInfo] = {}
    for f in funcs:
        by_name.setdefault(f.label, f)
    struct_fields = _struct_fields(src)
    recv_types = {f.receiver_type for f in funcs if f.receiver_type}
    w = _Walker(src, dictionary, an, by_name, recv_types, struct_fields)

    # Pass 1 settles data flow (call-site arguments, loop-carried values); pass 2 records.
    for recording in (False, False, True):
        w.recording = recording
        w.called = set()
        order = [host]
        seen = {host.label}
        i = 0
        while i < len(order):
            f = order[i]
            w.run_function(f)
            for name in sorted(w.called):
                g = by_name.get(name)
                if g is not None and g.label not in seen and g is not host:
                    seen.add(g.label)
                    order.append(g)
            i += 1
        an.helpers = list(order[1:])
    for k, v in w.env.items():
        if "::" in k and not k.startswith("@"):
            an.var_signals[k] = v.signals()

    _collect_types(src, an, funcs, struct_fields)
    _constructor_fields(src, an)
    _collect_imports(src, an)
    an.era = _era(src, an)
    an.signals.sort(key=lambda s: (s.line, s.name, s.via))
    _name_parameters(an)  # first, so hazard fixes can name the JSON parameter a threshold becomes
    hazards.check(src, an, dictionary, w.hazard_nodes)
    return an


def _struct_fields(src: EvolvedSource) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for node in walk(src.tree.root_node):
        if node.type != "type_spec":
            continue
        name = text_of(src, node.child_by_field_name("name"))
        t = node.child_by_field_name("type")
        if t is None or t.type != "struct_type":
            continue
        fields: dict[str, str] = {}
        for fd in walk(t):
            if fd.type == "field_declaration":
                ftype = _norm_type(text_of(src, fd.child_by_field_name("type")))
                for n in fd.children:
                    if n.type == "field_identifier":
                        fields[text_of(src, n)] = ftype
        out[name] = fields
    return out


def _collect_types(src: EvolvedSource, an: Analysis, funcs: list[FuncInfo], struct_fields: dict) -> None:
    """Type declarations the carried code references (besides the shimmed BLIS types), and the receiver's constructor."""
    host = an.host_info
    assert host is not None
    carried_nodes = [host.node] + [h.node for h in an.helpers]
    referenced: set[str] = set()
    for n in carried_nodes:
        for c in walk(n):
            if c.type == "type_identifier":
                referenced.add(text_of(src, c))
    decls: dict[str, Node] = {}
    for node in src.tree.root_node.children:
        if node.type == "type_declaration":
            for spec in node.children:
                if spec.type == "type_spec":
                    decls[text_of(src, spec.child_by_field_name("name"))] = spec
    if host.receiver_type and host.receiver_type in decls:
        an.receiver_decl = decls[host.receiver_type]
        for k, v in struct_fields.get(host.receiver_type, {}).items():
            an.receiver_fields[k] = v
    # transitive closure over referenced local types
    todo = [
        r
        for r in sorted(referenced)
        if r in decls and r not in SHIMMED_TYPES and r != host.receiver_type and r not in NEVER_CARRIED
    ]
    seen = set(todo)
    while todo:
        name = todo.pop(0)
        an.types.append(decls[name])
        for c in walk(decls[name]):
            if c.type == "type_identifier":
                r = text_of(src, c)
                if r in decls and r not in seen and r not in SHIMMED_TYPES and r != host.receiver_type:
                    seen.add(r)
                    todo.append(r)
    if an.receiver_decl is not None:
        for c in walk(an.receiver_decl):
            if c.type == "type_identifier":
                r = text_of(src, c)
                if r in decls and r not in seen and r not in SHIMMED_TYPES and r != host.receiver_type:
                    seen.add(r)
                    an.types.append(decls[r])
    an.types.sort(key=lambda n: n.start_byte)
    # constructor: New<Receiver>() with no parameters returning the receiver
    if host.receiver_type:
        for f in funcs:
            if f.receiver_type is None and f.name.lower() == f"new{host.receiver_type.lower()}" and not f.params:
                an.constructor = f
                break


def _constructor_fields(src: EvolvedSource, an: Analysis) -> None:
    """Numbers the constructor puts into the receiver (`&Shedder{QDThreshold: 5}`) are evolved values too."""
    host = an.host_info
    if an.constructor is None or host is None or host.receiver_type is None:
        return
    for lit in walk(an.constructor.node):
        if (
            lit.type != "composite_literal"
            or text_of(src, lit.child_by_field_name("type")).lstrip("&*") != host.receiver_type
        ):
            continue
        body = lit.child_by_field_name("body")
        for el in _named(body) if body is not None else []:
            if el.type != "keyed_element":
                continue
            key, value = _named(el)[0], _named(el)[-1]
            fname = text_of(src, key).strip()
            vnode = _named(value)[0] if value.type == "literal_element" and _named(value) else value
            raw = text_of(src, vnode).strip()
            num = (
                parse_number(raw.lstrip("-").strip())
                if vnode.type in ("int_literal", "float_literal", "unary_expression")
                else None
            )
            ftype = an.receiver_fields.get(fname)
            if num is None or ftype not in ("int", "int64", "float64"):
                continue
            value_num = -num if raw.startswith("-") else num
            th = Threshold(
                value=value_num,
                literal=raw,
                go_type=ftype,
                role="field",
                signals=[],
                subject=f"{host.receiver_type}.{fname}",
                base=fname,
                line=src.to_original_line(vnode.start_point[0] + 1),
            )
            th.occurrences.append(
                Occurrence(vnode.start_byte, vnode.end_byte, th.line, "field", owner=an.constructor.label)
            )
            th.receiver_field = fname  # type: ignore[attr-defined]
            an.thresholds.append(th)
            an.literal_nodes[vnode.start_byte] = th


def _collect_imports(src: EvolvedSource, an: Analysis) -> None:
    declared: dict[str, str] = {}
    for node in walk(src.tree.root_node):
        if node.type == "import_spec":
            path = text_of(src, node.child_by_field_name("path")).strip('"`')
            alias = node.child_by_field_name("name")
            name = text_of(src, alias) if alias is not None else path.rsplit("/", 1)[-1]
            declared[name] = path
    standard = {
        "math": "math",
        "fmt": "fmt",
        "sort": "sort",
        "strings": "strings",
        "rand": "math/rand",
        "slices": "slices",
        "fnv": "hash/fnv",
        "time": "time",
        "strconv": "strconv",
        "maps": "maps",
        "sync": "sync",
        "errors": "errors",
        "bits": "math/bits",
        "cmp": "cmp",
    }
    nodes = [an.host_info.node] + [h.node for h in an.helpers] + list(an.types)
    if an.receiver_decl is not None:
        nodes.append(an.receiver_decl)
    if an.constructor is not None:
        nodes.append(an.constructor.node)
    used: dict[str, str] = {}
    for n in nodes:
        for c in walk(n):
            if c.type in ("selector_expression", "qualified_type"):
                operand = (
                    c.child_by_field_name("operand")
                    if c.type == "selector_expression"
                    else c.child_by_field_name("package")
                )
                if operand is not None and operand.type in ("identifier", "package_identifier"):
                    name = text_of(src, operand)
                    if name in declared:
                        used[name] = declared[name]
                    elif name in standard and not _is_local(name, an, src):
                        used[name] = standard[name]
    an.imports.update(used)


def _is_local(name: str, an: Analysis, src: EvolvedSource) -> bool:
    for n in [an.host_info.node] + [h.node for h in an.helpers]:
        for c in walk(n):
            if c.type in ("short_var_declaration",) and name in text_of(src, c.child_by_field_name("left")).split(","):
                return True
    return False


def _era(src: EvolvedSource, an: Analysis) -> str:
    text = src.go_text
    if "PendingRequests" in text:
        return "2026-02"
    if re.search(r"\bPriority\s+float64", text) and "RoutingDecision" in text:
        return "2026-03"
    return "head"


def _name_parameters(an: Analysis) -> None:
    """Same number on the same subject = one parameter (kv > 0.82 and kv - 0.82 stay in step)."""
    groups: dict[tuple, Threshold] = {}
    merged: list[Threshold] = []
    role_rank = {
        "threshold": 0,
        "offset": 1,
        "floor": 2,
        "cap": 3,
        "coefficient": 4,
        "exponent": 5,
        "factor": 6,
        "step": 7,
        "value": 8,
        "field": 9,
    }
    for th in an.thresholds:
        key = (th.base, th.value, th.go_type, th.reason is None)
        if key in groups and th.reason is None:
            g = groups[key]
            g.occurrences.extend(th.occurrences)
            if role_rank[th.role] < role_rank[g.role]:
                g.role = th.role
            g.signals = sorted(set(g.signals) | set(th.signals))
            an.literal_nodes[th.occurrences[0].start] = g
            continue
        groups[key] = th
        merged.append(th)
    suffix = {
        "threshold": "Threshold",
        "offset": "Threshold",
        "floor": "Floor",
        "cap": "Cap",
        "coefficient": "Coeff",
        "exponent": "Exponent",
        "factor": "Factor",
        "step": "Step",
        "value": "Value",
        "field": "",
    }
    used: set[str] = set(_RESERVED_PARAMS)
    for th in merged:
        if th.reason is not None:
            continue
        stem = re.sub(r"[^A-Za-z0-9]", "", th.base) or "evolved"
        if stem[0].isdigit():
            stem = "p" + stem
        name = lower_camel(stem) + suffix[th.role]
        cand, i = name, 2
        while cand in used:
            cand = f"{name}{i}"
            i += 1
        used.add(cand)
        th.param = cand
        th.field = upper_camel(cand)
    an.thresholds = merged


_RESERVED_PARAMS = {
    "scorers",
    "pseudoQueue",
    "incumbentSLOClass",
    "incumbentInputTokens",
    "incumbentSpacingUs",
    "maxPseudoQueue",
}
