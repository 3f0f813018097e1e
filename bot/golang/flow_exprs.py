"""The data-flow walk's expressions that create facts: calls, arithmetic, comparisons and the literals
that become plugin parameters (a mixin of ``bot.golang.flow.Walker``; what branches on the SLO class add is in
``bot.golang.flow_classes``)."""

from __future__ import annotations

from bot.golang.analysis_types import (
    COMPARE,
    FLIP,
    NEVER_CARRIED,
    SHIMMED_FUNCS,
    SLO_PRIORITY_FUNCS,
    FuncInfo,
    Node,
    Occurrence,
    SignalUse,
    Threshold,
)
from bot.golang.carry import HELPER_REASON
from bot.golang.flow_args import ArgMixin
from bot.golang.flow_classes import ClassMixin
from bot.golang.flow_values import _ROLE_OF_TYPE, _UNIT_POWERS, Val, _param_type, _result_type
from bot.golang.gonames import exported, lower_camel
from bot.golang.gotree import id_of, named, norm_type, parse_number, walk
from bot.golang.local_consts import ConstMixin
from bot.golang.param_names import blend, clamp, moving_average, saturation
from bot.golang.short_locals import applied_as, held_by, measured, plain_name, returned_by, used_for


class ExprMixin(ClassMixin, ConstMixin, ArgMixin):
    """Calls, binary expressions and literals (SLO names and per-class values: ``ClassMixin``; numbers passed to a
    helper's parameter: ``ArgMixin``); needs the walker's state (see flow.Walker)."""

    def call(self, node: Node) -> Val:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        args = named(args_node) if args_node is not None else []
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
                self.note_tainted_call(node, callee.label if callee else None, None, vals)
                if callee is not None:
                    self.lift_args(callee.label, args_node, args, vals)
                taint = frozenset().union(*(v.taint for v in vals)) if vals else frozenset()
                return Val(None, taint | self._ret_taint(callee), _result_type(callee))
            if ov.role == "scorers" or ov.role == "scorer":
                vals = [self.ex(a) for a in args]
                return Val(None, frozenset({"@scorers"}), "map[string]float64")
            if operand is not None and operand.type == "identifier" and self.get(self.t(operand)) is None:
                pkg = self.t(operand)
                vals = [self.ex(a) for a in args]
                self.note_tainted_call(node, None, pkg, vals)
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
                typ = norm_type(self.t(args[0])) if args else None
                return Val(_ROLE_OF_TYPE.get(typ or ""), taint, typ)
            if name == "append":
                return Val(vals[0].role if vals else None, taint, vals[0].type if vals else None)
            if name in self.closures:
                key = f"{self.fn_label}::closure::{id_of(self.closures[name])}"
                self._merge_args(key, vals)
                return Val(None, taint | self.env.get(f"@ret::{key}", Val()).taint, None)
            if name in SHIMMED_FUNCS:
                return Val("decision", taint, "RoutingDecision")
            if name in SLO_PRIORITY_FUNCS:  # the plugin's own copy (evolved.go.j2), never the program's
                return Val(None, taint, "int" if name == "SLOTierPriority" else "*SLOPriorityMap")
            if name in self.funcs and name not in NEVER_CARRIED:
                self.called.add(name)
                self._merge_args(name, vals)
                callee = self.funcs[name]
                self._check_token_params(callee, vals, node)
                self.note_tainted_call(node, callee.label, None, vals)
                self.lift_args(callee.label, args_node, args, vals)
                return Val(
                    _ROLE_OF_TYPE.get(norm_type(callee.result)), taint | self._ret_taint(callee), _result_type(callee)
                )
            if name in SHIMMED_FUNCS:
                return Val("decision", taint, "RoutingDecision")
            if name in ("NewRoutingDecision", "NewRoutingDecisionWithScores"):
                return Val("decision", taint, "RoutingDecision")
        return Val(None, taint)

    def note_keyed_write(self, node: Node, operand: Node | None, iv: Val) -> None:
        """Record ``r.field[key] = …`` / ``r.field[key]++`` with a signal-derived key: per-key state the plugin
        keeps between requests. The hazard check decides whether the key is client-controlled and unbounded
        (the field's type is only known once the walk is done). Any index keyed by the SLO class is noted too."""
        if self.recording and "SLOClass" in iv.taint:
            self.an.slo_keys.append((self.line(node), self.t(node), _written(node)))
        if operand is None or not iv.signals() or not _written(node):
            return
        fn = self.fn
        if operand.type == "identifier" and fn is not None and fn.receiver_type is None:
            param = self.t(operand)  # a map handed to a plain function (receiver_views.passed_writes)
            if param in {n for n, _ in fn.params}:
                key = self.t(node.child_by_field_name("index"))
                self.hazard(
                    "param-keyed-write", node, param=param, signals=sorted(iv.signals()), key=key, within=fn.label
                )
            return
        if operand.type != "selector_expression":
            return
        recv = operand.child_by_field_name("operand")
        rv = self.get(self.t(recv)) if recv is not None and recv.type == "identifier" else None
        if rv is not None and rv.role == "receiver":
            field = self.t(operand.child_by_field_name("field"))
            key = self.t(node.child_by_field_name("index"))  # the plugin touches it past a cap (state_caps)
            self.hazard(
                "keyed-write",
                node,
                field=field,
                receiver=self.t(recv),
                signals=sorted(iv.signals()),
                key=key,
                within=self.fn_label,
            )

    def note_tainted_call(self, node: Node, callee: str | None, pkg: str | None, vals: list[Val]) -> None:
        """Record a call to a program function or a package that is passed a value derived from request fields
        (signals, or ``@id:`` for the request's identifiers). The hazard check decides whether the callee hashes
        and the field is the client's (imports and every carried function are only known once the walk is done)."""
        reads = sorted(
            {t.removeprefix("@id:") for v in vals for t in v.taint if not t.startswith("@") or t.startswith("@id:")}
        )
        if reads and (callee or pkg):
            self.hazard("tainted-call", node, callee=callee, pkg=pkg, reads=reads, within=self.fn_label)

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
            if i < len(vals) and vals[i].role == "tokens" and norm_type(ptype) == "[]int":
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
        self.note_const_use(node, lv, rv)
        self.note_const_use(node, rv, lv)
        self.note_param_meet(node, left, right, rv, op)
        self.note_param_meet(node, right, left, lv, op)
        taint = lv.taint | rv.taint
        if op in COMPARE:
            self.an.cond_nodes[id_of(node)] = node
            if lv.lit is not None and rv.signals():
                self.literal(lv.lit, "threshold", right, rv, node, op=FLIP[op])
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
                role = "coefficient" if op in ("*", "/") else "offset"
                self.literal(rv.lit, role, left, lv, node, op=op, divisor=op == "/")
        typ = next((v.type for v in (lv, rv) if v.type and not v.type.startswith("untyped")), None)
        if typ is None:
            typ = "untyped-float" if "untyped-float" in (lv.type, rv.type) else (lv.type or rv.type)
        return Val(None, taint, typ)

    # ---- literals --------------------------------------------------------

    def _numeric_literal(self, node: Node) -> Node | None:
        n = node
        while n.type == "parenthesized_expression":
            n = named(n)[0]
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
        if role == "step" and _scores(self.t(lhs), lhs.type):
            role = "bonus" if (op == "+=") != self.t(lit).lstrip().startswith("-") else "penalty"
        self.literal(lit, role, subject, Val(None, cv.taint, lhs_v.type), rhs, op=op, target=lhs)
        th = self.an.literal_nodes.get(lit.start_byte)
        applied = applied_as(self.fn.node, self.t(lhs), self.t) if role == "value" and self.fn is not None else None
        if th is not None and th.role == "value" and lhs.type == "identifier" and applied is not None:
            stmt, changed, how = applied
            th.applied = (" ".join(self.t(cnode).split()), " ".join(self.t(stmt).split()), self.t(changed))
            th.suffix = "Factor" if how == "*=" else "Divisor"  # adjFactor: what it does, not that it is set

    def _cond_subject(self, cnode: Node | None) -> Node | None:
        """What a condition compares, named by the numbers it decides; a guard (``n > 0`` in ``n > 0 &&
        totalQ/n > a.busyQueue``) is skipped: it keeps the rest defined, the rest is what the condition is about."""
        if cnode is None:
            return None
        for n in walk(cnode):
            if self._guard(n, cnode):
                continue
            if n.type == "binary_expression" and self.t(n.child_by_field_name("operator")) in COMPARE - {"==", "!="}:
                lhs, r = n.child_by_field_name("left"), n.child_by_field_name("right")
                if self._numeric_literal(r) is not None:
                    return lhs
                if self._numeric_literal(lhs) is not None:
                    return r
        for n in walk(cnode):
            if self._guard(n, cnode):
                continue
            if n.type == "binary_expression" and self.t(n.child_by_field_name("operator")) in COMPARE:
                lhs, r = n.child_by_field_name("left"), n.child_by_field_name("right")
                if self._numeric_literal(r) is not None:
                    return lhs
                if self._numeric_literal(lhs) is not None:
                    return r
                return lhs
        return None

    def _guard(self, cmp: Node, cnode: Node) -> bool:
        """``cmp`` compares a local with 0 and the rest of the condition reads that local (``n > 0 && totalQ/n > x``)."""
        if cmp.type != "binary_expression" or self.t(cmp.child_by_field_name("operator")) not in COMPARE:
            return False
        left, right = cmp.child_by_field_name("left"), cmp.child_by_field_name("right")
        lit, local = (left, right) if self._numeric_literal(left) is not None else (right, left)
        if local is None or local.type != "identifier" or lit is None or parse_number(self.t(lit)) != 0:
            return False
        name, span = self.t(local), (cmp.start_byte, cmp.end_byte)
        return any(
            n.type == "identifier" and self.t(n) == name and not span[0] <= n.start_byte < span[1] for n in walk(cnode)
        )

    def literal(
        self,
        lit: Node,
        role: str,
        subject: Node,
        sv: Val,
        ctx: Node,
        op: str | None = None,
        target: Node | None = None,
        divisor: bool = False,
        named_as: str | None = None,
        suffix: str | None = None,
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
        # 0 and 1 say nothing alone, but as one case's value of a switch that sets the same variable in others they
        # are that class's entry, listed like the others (as every entry of a per-class table is, literals.py).
        per_case = role == "value" and (
            named_as is not None or (target is not None and self._set_per_case(lit, self.t(target)))
        )
        if (value == 0 or (role != "threshold" and abs(value) == 1)) and not per_case:
            return
        if role in ("coefficient",) and op in ("*", "/") and abs(value) in _UNIT_POWERS:
            return
        signals = sorted(sv.signals())
        if not signals:
            return
        go_type = _param_type(sv.type, lit, self.src)
        # `w = 0.8` set on a one-letter local is named by where `w` is used (`score -= w * load` -> loadWeight)
        use = None
        if (
            named_as is None
            and role == "value"
            and target is not None
            and target.type == "identifier"
            and self.fn is not None
        ):
            use = used_for(self.fn.node, self.t(target), self.t, lambda n: self._base_name(n, [""], None))
        recv = self.fn.receiver_var if self.fn is not None and self.fn.receiver_pointer else None
        mix = blend(lit, self.t, recv) if role == "coefficient" else None
        bound = clamp(lit, self.t) if role in ("threshold", "value") else None
        use = None if bound else use
        base = named_as or (
            use[0] if use else self._base_name(bound[1] if bound else subject, signals, None if bound else target, role)
        )
        base = (plain_name(mix.term, self.t) or base) if mix else base  # the term it weighs: scores[snap.ID] -> scores
        case = self._case_label(lit) if role == "value" else None
        if case:
            base = case + exported(base)  # `case "critical": target = 500_000` -> criticalTarget; kv -> criticalKV
        th = Threshold(
            value=value,
            literal=raw.strip(),
            go_type=go_type,
            role=role,
            signals=signals,
            subject=self.t(subject),
            base=base,
            line=self.line(lit),
            target=self.t(target) if target is not None and target.type == "identifier" else None,
            moving_average=moving_average(lit, self.t, recv) if role == "coefficient" else None,
            blend=(self.t(mix.term), self.t(mix.partner_term)) if mix else None,
            clamp=bound[0] if bound else None,
            suffix="BlendWeight" if mix else use[1] if use else suffix,
            case=case,
        )
        if role == "offset" and (quotient := saturation(lit, self.t)) is not None:
            th.saturation, th.suffix = " ".join(self.t(quotient).split()), "HalfSaturation"
        if role == "threshold" and not bound and (m := measured(subject, self.fn.node if self.fn else None, self.t)):
            th.subject_words = m[1]
        if go_type is None:
            th.reason = f"the type of `{self.t(subject)}` could not be inferred, so the literal stays in the code"
        owner = self.fn
        if (
            owner is not None
            and owner.receiver_var is None
            and owner is not self.an.host_info
            and owner.receiver_type is None
        ):
            th.reason = f"{HELPER_REASON}{owner.name}, which has no receiver to carry parameters"
        elif owner is not None and (hidden := _hides_receiver(self, lit, owner.receiver_var)):
            th.reason = (
                f"inside a function literal whose parameter `{hidden}` hides the receiver that carries parameters"
            )
        th.occurrences.append(
            Occurrence(
                lit.start_byte,
                lit.end_byte,
                self.line(lit),
                role,
                op,
                id_of(ctx) if role == "threshold" else None,
                owner.label if owner else None,
                divisor,
            )
        )
        self.an.thresholds.append(th)
        self.an.literal_nodes[lit.start_byte] = th

    def _base_name(self, subject: Node, signals: list[str], target: Node | None, role: str = "") -> str:
        if target is not None and target.type == "identifier" and role == "value":
            return self.t(target)
        if (measure := measured(subject, self.fn.node if self.fn is not None else None, self.t)) is not None:
            return measure[0]  # a mean or a count: meanQueue, arrivalsCount
        keyed = [_KEYED[s] for s in signals if s in _KEYED]
        if role in ("bonus", "penalty") and keyed:
            return keyed[0]  # +0.4 on the session's home endpoint is a session bonus, whatever else it checks
        n = subject
        while n.type in ("parenthesized_expression",):
            n = named(n)[0]
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            args = n.child_by_field_name("arguments")
            ftext = self.t(fn)
            if ftext in ("float64", "int", "int64") and args is not None and named(args):
                n = named(args)[0]
            elif fn is not None and fn.type == "selector_expression":
                return lower_camel(self.t(fn.child_by_field_name("field")))
            elif ftext == "len" and args is not None and named(args):
                inner = named(args)[0]
                if inner.type == "selector_expression":
                    return lower_camel(self.t(inner.child_by_field_name("field")))
        if n.type == "identifier":
            held = held_by(self.fn.node, self.t(n), self.t) if self.fn is not None else None
            if held is None:
                return returned_by(n, self.t(n), self.t) or self.t(n)  # p, what priorityOf returns: priority
            return self._base_name(held, signals, None, role)
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


def _hides_receiver(walker, lit: Node, receiver_var: str | None) -> str | None:
    """The receiver's name, when a function literal around ``lit`` takes a parameter of that name
    (``weight := func(c string) float64`` in a method on ``c``): a parameter reference there would read the
    parameter, not the receiver."""
    n = lit.parent
    while receiver_var and n is not None:
        params = n.child_by_field_name("parameters") if n.type == "func_literal" else None
        if params is not None and any(
            c.type == "identifier" and walker.t(c) == receiver_var for d in named(params) for c in d.children
        ):
            return receiver_var
        n = n.parent
    return None


def _written(node: Node) -> bool:
    """``node`` is assigned (``=``, ``+=``, …) or incremented/decremented: a map index there adds the key."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("inc_statement", "dec_statement"):
        return True
    stmt = parent.parent
    return (
        parent.type == "expression_list"
        and stmt is not None
        and stmt.type == "assignment_statement"
        and stmt.child_by_field_name("left") == parent
    )


#: Signals that pick out whom a bonus is for (a session's home endpoint, a tenant) rather than how much.
_KEYED = {"SessionID": "session", "TenantID": "tenant"}


def _scores(target: str, node_type: str) -> bool:
    """A literal added to this target changes a score (``scores[snap.ID] += 0.4``, ``score -= 0.3``): it is a bonus
    or a penalty, not a step of the signal its condition compares."""
    return node_type == "index_expression" or "score" in target.lower()
