"""Package-level variables (``var kvCeiling = 0.9``, ``var classBonus = map[string]int{...}``, ``var routed int``)
the evolved code reads: the plugin once did not declare them, so it failed to build with ``undefined: kvCeiling``,
a CRITICAL toolchain finding that told the researcher nothing about what to do.

One the file never writes after its declaration is in effect a constant, and is treated as one: a number is a
parameter named by it (``local_consts.package_literals`` lists it beside the package constants, so
``package_consts`` lifts it or says why not), and anything else (a slice of weights, a map of class bonuses) is
carried into evolved.go as evolved (``package_consts.carried_consts``): its values are the ones the program was
validated with, and its lines map to the program's.

One the file writes (a counter, a map it fills, a slice it sorts) is state every request shares. In BLIS it lived
for one simulation run, one request at a time; in the EPP it lives as long as the process, and llm-d schedules
requests concurrently, so every write is a data race, with no lock in the plugin to prevent it. ``check`` refuses it
as a CRITICAL ``hazard.package-state`` at the write, saying to move it into the policy's receiver struct (whose
state ``receiver_state`` finds and the plugin guards with its mutex, and ``state_caps`` bounds) or to make it a
local. The plugin does not move it there itself: that would rewrite every read and write of the carried code
(``ws.routed`` for ``routed``), thread the receiver into each function without one that touches it, and move its
initial value into a constructor the program does not have, so the plugin would no longer carry the code that was
validated, and what the state means (per run, per plugin instance, per EPP) is the researcher's choice to make.

A write is anything that can change the value: an assignment, ``++``/``--``, an element or field set through it
(``seen[k] = v``, ``cfg.n++``), ``delete``/``clear`` into it, an in-place sort, ``append`` to it; and the same
through anything that shares its storage (``var_storage`` tells what does from the file's types: a map, a slice, a
pointer, a struct holding one): a local given it (``m := seen``, ``s := &stats``, ``x := st.m``, a ranged element
that is a slice), followed to each use in its function; a parameter of a function or method the file declares,
given it (``fill(seen, k)``, ``bump(&hits)``); a method's receiver (``limiter.Allow()`` with a pointer receiver),
followed into the method. Where the file cannot follow the storage (returned, stored in a literal or a field, sent,
given to a function or method it does not declare, a type it cannot tell), the write is assumed at that line: a
missed one ships a data race, an assumed one is a CRITICAL finding that names its line and the fix. The finding
names the statement that writes and each name the storage went through. A local or a parameter of the same name
hides the variable.

The plugin still declares the variable, so it builds, and its generated test then runs every case in one process:
the variable carries over from one case to the next, so a case whose expectation the harness measured on a fresh
process can fail. That ``toolchain.test`` failure is the same hazard seen from the test, not a bug in the test, so
``shared_state_failures`` rewords it to name the variable, its write and the hazard, with the hazard's fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.golang.analysis_types import Analysis, Node
from bot.golang.gooutput import CHECK_TEST
from bot.golang.gotree import named, text_of, walk
from bot.golang.source import EvolvedSource
from bot.golang.var_storage import SHARED, GoType, Pointer, StorageTypes
from bot.model import Finding, Severity

PACKAGE_STATE = "hazard.package-state"
#: How a ``PACKAGE_STATE`` message names its variable (``check`` writes it, ``shared_state_failures`` reads it).
_NAMES_VAR = "changes the package-level variable `{name}`"
_NAMED_VAR = re.compile(re.escape(_NAMES_VAR).replace(r"\{name\}", r"(?P<name>\w+)"))

#: Calls that change their first argument in place (``sort.Float64s(seen)``, ``delete(seen, k)``).
_CHANGES_FIRST = {"delete", "clear", "copy", "maps.Copy", "maps.DeleteFunc", "slices.Reverse"}
_CHANGES_FIRST_PREFIX = ("sort.", "slices.Sort")
#: Calls whose argument a map or slice can be given without handing its storage on.
_READS = {"len", "cap"}
#: Where a function declares a name of its own: its parameters, ``var``/``const`` and ``:=``, a range's variables.
_DECLARING = ("parameter_declaration", "variadic_parameter_declaration", "var_spec", "const_spec")


def decl_specs(decl: Node) -> list[Node]:
    """The specs of a package-level ``const``/``var`` declaration, in a group (``var (...)``) or not."""
    out: list[Node] = []
    for c in named(decl):
        out += [s for s in named(c) if s.type == "var_spec"] if c.type == "var_spec_list" else [c]
    return [s for s in out if s.type in ("const_spec", "var_spec")]


def package_var_specs(src: EvolvedSource) -> dict[str, Node]:
    """Name -> the spec declaring it, of each package-level variable."""
    out: dict[str, Node] = {}
    for decl in (n for n in src.tree.root_node.children if n.type == "var_declaration"):
        for spec in decl_specs(decl):
            out.update({text_of(src, c): spec for c in spec.children if c.type == "identifier"})
    return out


def written_vars(src: EvolvedSource) -> dict[str, Node]:
    """Package variable -> the first place in the file that writes it, by name or through what shares its storage
    (see the module doc); a variable missing is never written after its declaration."""
    return {name: w.node for name, w in first_writes(src).items()}


@dataclass(frozen=True)
class Write:
    """Where a package variable is written, and each local or parameter that shares its storage on the way there
    (its name, and where it was given the storage: ``m := seen``, ``fill(seen, k)``)."""

    node: Node
    via: tuple[tuple[str, Node], ...] = ()


def first_writes(src: EvolvedSource) -> dict[str, Write]:
    """Package variable -> its first write (see ``written_vars``)."""
    specs = package_var_specs(src)
    follow = _Follow(src, StorageTypes(src, specs))
    out: dict[str, Write] = {}
    for n in walk(src.tree.root_node):
        name = text_of(src, n) if n.type == "identifier" else ""
        spec = specs.get(name)
        if spec is None or name in out or _inside(n, spec) or hidden_by_local(src, n, name):
            continue
        follow.followed.clear()
        if (found := follow.use(n, follow.types.of_var(name), (), 0)) is not None:
            out[name] = found
    return out


class _Follow:
    """Whether a use of a package variable, or of a local or parameter sharing its storage, may write it."""

    def __init__(self, src: EvolvedSource, types: StorageTypes) -> None:
        self.src = src
        self.types = types
        #: The locals and parameters followed from one use of the variable, each with the type it was given.
        self.followed: set[tuple[int, object]] = set()

    def use(self, n: Node, t: GoType, via: tuple, depth: int) -> Write | None:
        """``n`` is an identifier naming the variable (``via`` empty) or an alias of it, of type ``t``: the write it
        leads to, if it may lead to one."""
        src = self.src
        top, owner = n, t
        while (p := top.parent) is not None and _reaches_into(src, p, top):
            owner, t, top = t, self.types.step(t, p), p
        p = top.parent
        if p is None:
            return None
        left = p.type == "expression_list" and p.parent is not None and p == p.parent.child_by_field_name("left")
        if left and p.parent.type in ("assignment_statement", "short_var_declaration", "range_clause"):
            return None if top is n and via else Write(top, via)  # an alias given other storage writes nothing
        if p.type in ("inc_statement", "dec_statement"):
            return Write(top, via)
        if p.type in _DECLARING or p.type == "function_declaration":
            return None  # the name declared, not used
        if p.type == "unary_expression" and text_of(src, p.child_by_field_name("operator")) == "&":
            return self.handed(p, Pointer(t), via, depth)
        if p.type == "call_expression" and top.type == "selector_expression":
            return self.method(top, owner, via, depth)
        call = p.parent if p.type == "argument_list" else None
        fn = text_of(src, call.child_by_field_name("function")) if call is not None else ""
        first = call is not None and named(p)[0] == top
        if first and (fn in _CHANGES_FIRST or fn.startswith(_CHANGES_FIRST_PREFIX) or fn == "append"):
            return Write(top, via) if self.types.shares(t) or fn != "append" else None
        if not self.types.shares(t) or p.type == "binary_expression" or fn in _READS:
            return None  # a value of its own, compared, or measured
        if p.type == "call_expression":
            under = self.types.underlying(t)
            return None if isinstance(under, Node) and under.type == "function_type" else Write(top, via)
        if p.type == "range_clause":
            return self.ranged(p, t, via, depth)
        if fn == "copy":  # into its first argument: shares only what its elements share
            return Write(top, via) if self.types.shares(self.types.element(t)) else None
        if fn == "append":
            return self.handed(call, SHARED, via, depth)
        if call is not None:
            return self.argument(call, named(p).index(top), t, via, depth)
        return self.handed(top, t, via, depth)

    def handed(self, value: Node, t: GoType, via: tuple, depth: int) -> Write | None:
        """``value`` shares the storage: the write where it goes, followed into the local it is given to."""
        if not self.types.shares(t):
            return None
        src = self.src
        p = value.parent
        while p is not None and p.type == "parenthesized_expression":
            value, p = p, p.parent
        if p is not None and p.type == "argument_list" and p.parent is not None:
            fn = text_of(src, p.parent.child_by_field_name("function"))
            return None if fn in _READS else self.argument(p.parent, named(p).index(value), t, via, depth)
        if p is None or p.type != "expression_list" or p.parent is None:
            return Write(value, via)  # returned, stored in a literal, sent, handed to what cannot be followed
        stmt = p.parent
        target = stmt.child_by_field_name("left") if stmt.type != "var_spec" else None
        names = named(target) if target is not None else [c for c in stmt.children if c.type == "identifier"]
        values = named(p)
        if stmt.type not in ("assignment_statement", "short_var_declaration", "var_spec") or len(names) != len(values):
            return Write(value, via)
        to = names[values.index(value)]
        op = text_of(src, stmt.child_by_field_name("operator")) if stmt.type == "assignment_statement" else "="
        if to.type != "identifier" or op != "=":
            return Write(value, via)
        return self.alias(to, _function_of(to), t, (*via, (text_of(src, to), stmt)), depth)

    def alias(self, to: Node, scope: Node | None, t: GoType, via: tuple, depth: int) -> Write | None:
        """Every use of the local or parameter ``to`` in ``scope``, the function declaring it: the first write."""
        name = text_of(self.src, to)
        key = (to.start_byte, _type_key(t))
        if name == "_" or not self.types.shares(t) or key in self.followed:
            return None  # discarded, a copy of its own, or followed already (a recursive call)
        if scope is None or not hidden_by_local(self.src, to, name) or depth >= _MAX_DEPTH:
            return Write(via[-1][1] if via else to, via)  # a name of an outer function, or too far: assumed
        self.followed.add(key)
        for m in walk(scope):
            if m.type == "identifier" and m is not to and text_of(self.src, m) == name:
                if (found := self.use(m, t, via, depth + 1)) is not None:
                    return found
        return None

    def ranged(self, clause: Node, t: GoType, via: tuple, depth: int) -> Write | None:
        """A range over what shares the storage: each element given to its second variable shares it if it is a
        map, a slice, a pointer; a map's key may too."""
        left = clause.child_by_field_name("left")
        names = named(left) if left is not None else []
        under = self.types.underlying(t)
        is_map = isinstance(under, Node) and under.type == "map_type"
        if is_map and names and self.types.shares(under.child_by_field_name("key")):
            return Write(clause, via)
        elem = self.types.element(t)
        if len(names) < 2 and not (isinstance(under, Node) and under.type == "channel_type"):
            return None  # only the indexes, or the keys
        if not self.types.shares(elem):
            return None
        to = names[-1]
        declares = any(c.type == ":=" for c in clause.children)
        if to.type != "identifier" or not declares:
            return Write(clause, via)
        return self.alias(to, _function_of(to), elem, (*via, (text_of(self.src, to), clause)), depth)

    def argument(self, call: Node, at: int, t: GoType, via: tuple, depth: int) -> Write | None:
        """The storage passed as argument ``at`` of ``call``: followed into the parameter of the function or method
        the file declares, else assumed written there."""
        fn = call.child_by_field_name("function")
        name = text_of(self.src, fn.child_by_field_name("field") if fn.type == "selector_expression" else fn)
        want = "method_declaration" if fn.type == "selector_expression" else "function_declaration"
        decls = [f for f in self.types.funcs.get(name, []) if f.type == want]
        params = _params(decls[0]) if len(decls) == 1 else None
        if params is None or at >= len(params) or params[at] is None:
            return Write(call, via)
        return self.alias(params[at], decls[0], t, (*via, (text_of(self.src, params[at]), call)), depth)

    def method(self, sel: Node, owner: GoType, via: tuple, depth: int) -> Write | None:
        """A method called on the storage (``limiter.Allow()``): followed into its receiver when the file declares
        it on the storage's type, else assumed to write it."""
        type_name = self.types.type_name(owner)
        name = text_of(self.src, sel.child_by_field_name("field"))
        decls = [f for f in self.types.funcs.get(name, []) if _receiver_type(self.src, f) == type_name and type_name]
        recv = _params(decls[0], "receiver") if len(decls) == 1 else None
        if not recv or recv[0] is None:
            return Write(sel, via) if recv != [None] else None  # an unnamed receiver cannot be written
        pointer = "*" in text_of(self.src, decls[0].child_by_field_name("receiver"))
        t = Pointer(owner) if pointer else owner
        return self.alias(recv[0], decls[0], t, (*via, (text_of(self.src, recv[0]), sel.parent)), depth)


def hidden_by_local(src: EvolvedSource, n: Node, name: str) -> bool:
    """``n`` may name a local of the function around it (a parameter, a variable) that hides the package-level
    name: the nearest function, method or function literal declares ``name`` somewhere."""
    f = n.parent
    while f is not None and f.type not in ("function_declaration", "method_declaration", "func_literal"):
        f = f.parent
    if f is None:
        return False
    for m in walk(f):
        if m.type != "identifier" or text_of(src, m) != name:
            continue
        p = m.parent
        if p is not None and p.type == "expression_list" and p.parent is not None:
            p = p.parent if p == p.parent.child_by_field_name("left") else p
            if p.type == "range_clause" and any(c.type == ":=" for c in p.children):
                return True  # not ranged over: ``range seen`` reads the package variable
        if p is not None and p.type in (*_DECLARING, "short_var_declaration"):
            return True
    return False


def check(src: EvolvedSource, an: Analysis) -> None:
    """A CRITICAL ``hazard.package-state`` at the first write of each package variable the carried code names
    (see the module doc)."""
    carried = [f.node for f in (an.host_info, *an.helpers) if f is not None]
    carried += [n for n in (an.constructor.node if an.constructor else None, an.receiver_decl, *an.types) if n]
    written = first_writes(src)
    named_there = {
        text_of(src, n)
        for node in carried
        for n in walk(node)
        if n.type == "identifier" and text_of(src, n) in written and not hidden_by_local(src, n, text_of(src, n))
    }
    for name, at in written.items():
        if name not in named_there:
            continue
        through = ", then ".join(
            f"`{alias}` (`{_shown(src, given)}`, line {an.line_of(given)})" for alias, given in at.via
        )
        an.findings.append(
            Finding(
                severity=Severity.CRITICAL,
                check=PACKAGE_STATE,
                source_line=an.line_of(at.node),
                message=(
                    f"`{_shown(src, at.node)}` {_NAMES_VAR.format(name=name)}"
                    + (f" through {through}, which shares its storage" if through else "")
                    + ": state every request shares. In BLIS it "
                    "lived for one simulation run, one request at a time; in the EPP it lives as long as the process "
                    "and llm-d schedules requests concurrently, so every write is a data race (the plugin holds no "
                    "lock for a package variable), and its value carries over from every request the EPP ever saw"
                ),
                fix=(
                    f"move `{name}` into the policy's receiver struct (the plugin guards the receiver's state with "
                    "its mutex, and bounds a map a client fills), initialised where the receiver is built; or make "
                    "it a local of the decision if it need not outlive one request; then re-evolve or re-validate"
                ),
            )
        )


def shared_state_failures(checked: list[Finding], translated: list[Finding]) -> list[Finding]:
    """The toolchain's findings ``checked``, with each failed generated test (``toolchain.test``) of a plugin the
    translation refused for package state (``translated`` holds its ``hazard.package-state`` findings) saying
    that is the cause and giving the hazard's fix; unchanged when there is none (see the module doc)."""
    hazards = [
        (m.group("name"), f) for f in translated if f.check == PACKAGE_STATE and (m := _NAMED_VAR.search(f.message))
    ]
    if not hazards:
        return list(checked)
    shared = ", ".join(
        f"`{name}` (written at evolved line {f.source_line})" if f.source_line else f"`{name}`" for name, f in hazards
    )
    noun = "package variable" if len(hazards) == 1 else "package variables"
    cause = (
        f"the generated cases share {noun} {shared}, see {PACKAGE_STATE}: one case's write carries into the "
        "next, so a case's expectation, measured by the harness on a fresh process, need not hold; the test fails "
        "because of that state, not because the test is wrong"
    )
    fixes = list(dict.fromkeys(f.fix for _, f in hazards if f.fix))
    return [
        f.model_copy(update={"message": f"{f.message}. Cause: {cause}", "fix": "; ".join(fixes) or f.fix})
        if f.check == CHECK_TEST
        else f
        for f in checked
    ]


def _shown(src: EvolvedSource, n: Node) -> str:
    """The statement around ``n`` (``m[k] = true``, ``fill(seen, k)``), as it reads on its first line."""
    while n.parent is not None and n.parent.type not in ("statement_list", "block", "source_file", "for_clause"):
        if n.type.endswith(("_statement", "_declaration", "_clause", "var_spec")) or n.type == "call_expression":
            break
        n = n.parent
    return text_of(src, n).strip().splitlines()[0][:60]


def _inside(n: Node, outer: Node) -> bool:
    return outer.start_byte <= n.start_byte and n.end_byte <= outer.end_byte


#: How far a write is followed through locals and parameters sharing the storage before it is assumed.
_MAX_DEPTH = 8


def _type_key(t: GoType) -> object:
    """``t`` as a value that compares equal for the same type (a tree-sitter node is a new object each time)."""
    if isinstance(t, Pointer):
        return ("*", _type_key(t.to))
    return (t.start_byte, t.end_byte) if isinstance(t, Node) else t


def _reaches_into(src: EvolvedSource, p: Node, top: Node) -> bool:
    """``p`` reads a part of ``top``: an element, a slice, a field, what it points to, its spread elements."""
    if p.type in ("index_expression", "slice_expression", "selector_expression", "type_assertion_expression"):
        return p.child_by_field_name("operand") == top
    if p.type == "unary_expression":
        return text_of(src, p.child_by_field_name("operator")) == "*"
    return p.type in ("parenthesized_expression", "variadic_argument")


def _function_of(n: Node) -> Node | None:
    """The outermost function or method around ``n``: every use of a local declared in it is inside."""
    out = None
    while (n := n.parent) is not None:
        out = n if n.type in ("function_declaration", "method_declaration") else out
    return out


def _params(decl: Node, field: str = "parameters") -> list[Node | None]:
    """The name of each parameter of ``decl`` in order (``None`` for an unnamed one, and for a variadic one,
    whose argument is copied into a slice of its own)."""
    out: list[Node | None] = []
    plist = decl.child_by_field_name(field)
    for pd in named(plist) if plist is not None else []:
        ids = [c for c in pd.children if c.type == "identifier"]
        variadic = pd.type == "variadic_parameter_declaration"
        out += [None] if not ids or variadic else ids
    return out


def _receiver_type(src: EvolvedSource, decl: Node) -> str | None:
    """The type a method is declared on (``rateLimiter`` for ``func (r *rateLimiter) Allow()``)."""
    recv = decl.child_by_field_name("receiver") if decl.type == "method_declaration" else None
    pd = named(recv)[0] if recv is not None and named(recv) else None
    t = pd.child_by_field_name("type") if pd is not None else None
    return text_of(src, t).lstrip("*").strip() if t is not None else None
