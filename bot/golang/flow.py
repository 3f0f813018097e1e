"""The data-flow walk over one evolved function at a time (see ``bot.golang.analyze``).

Flow-insensitive within a function and run in passes so loop-carried and call-site values settle:
each variable keeps the set of BLIS signals its value derives from, however many assignments later
it is compared. Statements live here; selectors and indexing in ``bot.golang.flow_selectors``; calls,
arithmetic and the literals that become parameters in ``bot.golang.flow_exprs``.
"""

from __future__ import annotations

from bot.dictionary import Dictionary
from bot.golang.analysis_types import COMPARE, EXPR_TYPES, Analysis, FuncInfo, Node, SignalUse
from bot.golang.flow_exprs import ExprMixin
from bot.golang.flow_selectors import SelectorMixin
from bot.golang.flow_values import _ELEM_ROLE, _ROLE_OF_TYPE, Val, _elem_type, field_written
from bot.golang.gotree import id_of, named, norm_type, text_of, walk
from bot.golang.source import EvolvedSource
from bot.model import PolicyKind


class Walker(ExprMixin, SelectorMixin):
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
        self.int_consts: dict[str, str | None] = {}  # "Func::var" -> the int literal it only ever holds
        self.const_lits, self.const_uses = {}, {}  # a local const's number and the types it meets (local_consts)

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
            role = _ROLE_OF_TYPE.get(norm_type(ptype))
            arg = self.call_args.get(f.label, [])
            taint = arg[i].taint if i < len(arg) else frozenset()
            argrole = arg[i].role if i < len(arg) else None
            typ = norm_type(ptype)
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
                    self.const_spec(spec)
        elif t == "inc_statement" or t == "dec_statement":
            target = named(node)[0] if named(node) else None
            if target is not None and target.type == "identifier":
                self._track_const(self.t(target), None)
            self.visit_children(node)
        elif t == "for_statement":
            self.for_stmt(node)
        elif t == "if_statement":
            self.if_stmt(node)
        elif t in ("expression_switch_statement", "type_switch_statement"):
            self.switch_stmt(node)
        elif t == "return_statement":
            taint: frozenset = frozenset()
            for c in named(node):
                for e in named(c) if c.type == "expression_list" else [c]:
                    taint |= self.ex(e).taint
            k = f"@ret::{self.ret_key}"
            old = self.env.get(k, Val())
            self.env[k] = Val(None, old.taint | taint, old.type)
            self.returned_per_class(node)
        elif t == "func_literal" or t in EXPR_TYPES:
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
        typ = norm_type(self.t(tnode)) if tnode is not None else None
        value = spec.child_by_field_name("value")
        vals = [self.ex(v) for v in named(value)] if value is not None else []
        for i, n in enumerate(names):
            v = vals[i] if i < len(vals) else (vals[0] if len(vals) == 1 else Val())
            if typ is None and v.type in ("untyped-int", "untyped-float"):
                v = Val(v.role, v.taint, "int" if v.type == "untyped-int" else "float64")
            role = _ROLE_OF_TYPE.get(typ or "") or v.role
            nodes = named(value) if value is not None else []
            self._track_const(self.t(n), nodes[i] if i < len(nodes) else None)
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
        lefts = named(left) if left is not None else []
        rights = named(right) if right is not None else []
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
                self._track_const(name, r if op in ("=", ":=") else None)
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
                elif (field := field_written(lhs, v.type)) is not None:  # `a.total = v`, `a.byTenant[t] = 0.5`
                    self._set_field(field, v)

    def _track_const(self, name: str, rhs: Node | None) -> None:
        """Remember identifiers that only ever hold one int literal (positional indexing through a variable)."""
        k = self.key(name)
        value = self.t(rhs) if rhs is not None and rhs.type == "int_literal" else None
        if k in self.int_consts and self.int_consts[k] != value:
            value = None
        self.int_consts[k] = value

    def _is_bool_expr(self, node: Node) -> bool:
        while node.type == "parenthesized_expression":
            node = named(node)[0]
        if node.type != "binary_expression":
            return False
        return self.t(node.child_by_field_name("operator")) in COMPARE | {"&&", "||"}

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
            node = node.child_by_field_name("operand") or named(node)[0]
        return self.t(node) if node.type == "identifier" else None

    def for_stmt(self, node: Node) -> None:
        rc = next((c for c in node.children if c.type == "range_clause"), None)
        if rc is not None:
            right = rc.child_by_field_name("right")
            rv = self.ex(right) if right is not None else Val()
            left = rc.child_by_field_name("left")
            names = list(named(left)) if left is not None else []
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
                    for cc in named(c):
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
        self.check_slo_fallback(node)
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
        # `switch { case load > 8: ... default: ... }`: the default runs when no case holds, so it depends on them all.
        labels = [c.child_by_field_name("value") for c in node.children if c.type == "expression_case"]
        cases_taint = frozenset().union(*(self.ex(v).taint for vals in labels if vals is not None for v in named(vals)))
        for c in node.children:
            if c.type == "expression_case":
                vals = c.child_by_field_name("value")
                for v in named(vals) if vals is not None else []:
                    if value is not None:
                        self.check_slo_literal(vv, v, v)
                self.cond_stack.append(
                    (
                        Val(
                            None,
                            vv.taint
                            | frozenset().union(*(self.ex(v).taint for v in (named(vals) if vals is not None else []))),
                        ),
                        value if value is not None else (named(vals)[0] if vals is not None and named(vals) else c),
                    )
                )
                for s in c.children:
                    if s.is_named and s.type not in ("comment",) and s != vals:
                        self.visit(s)
                self.cond_stack.pop()
            elif c.type == "default_case":
                self.check_slo_default(vv, node, c)
                first = next((named(vals)[0] for vals in labels if vals is not None and named(vals)), c)
                self.cond_stack.append((vv, value) if value is not None else (Val(None, cases_taint), first))
                self.visit_children(c)
                self.cond_stack.pop()

    # ---- expressions ---------------------------------------------------

    def ex(self, node: Node | None, lvalue: bool = False) -> Val:
        if node is None:
            return Val()
        t = node.type
        if t == "identifier":
            name = self.t(node)
            v = self.const_value(name) or self.get(name) or self.package_const(name, node)
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
            inner = named(node)
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
            for c in named(node)[1:]:
                self.ex(c)
            return v
        if t == "call_expression":
            return self.call(node)
        if t == "binary_expression":
            return self.binary(node)
        if t == "composite_literal":
            taint: frozenset = frozenset()
            body = node.child_by_field_name("body")
            for el in named(body) if body is not None else []:
                for part in named(el):
                    if part.type == "literal_value":
                        continue
                    taint |= self.ex(part).taint
            typ = norm_type(self.t(node.child_by_field_name("type")))
            if typ in ("RoutingDecision", "&RoutingDecision"):
                for el in named(body) if body is not None else []:
                    key = named(el)[0] if el.type == "keyed_element" and named(el) else None
                    if key is not None and self.t(key).strip() == "Priority":
                        self.an.decision_priority = True
                        self.hazard("decision-priority", el)
                return Val("decision", taint, typ.lstrip("&"))
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
                ptype = norm_type(self.t(p.child_by_field_name("type")))
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
            return Val(None, v.taint, norm_type(self.t(node.child_by_field_name("type"))))
        # anything else: visit children for side effects
        taint = frozenset()
        for c in named(node):
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
