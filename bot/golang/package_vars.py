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
(``seen[k] = v``, ``cfg.n++``), ``delete``/``clear``/``copy`` into it, an in-place sort, its address taken, a
method called on it; and, for a map or a slice, any use that hands the same storage on (assigned to a local,
passed to a function other than ``len``/``cap``, returned), since it may be written through the copy. A local or a
parameter of the same name hides it.

The plugin still declares the variable, so it builds, and its generated test then runs every case in one process:
the variable carries over from one case to the next, so a case whose expectation the harness measured on a fresh
process can fail. That ``toolchain.test`` failure is the same hazard seen from the test, not a bug in the test, so
``shared_state_failures`` rewords it to name the variable, its write and the hazard, with the hazard's fix.
"""

from __future__ import annotations

import re

from bot.golang.analysis_types import Analysis, Node
from bot.golang.gooutput import CHECK_TEST
from bot.golang.gotree import named, text_of, walk
from bot.golang.source import EvolvedSource
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
    """Package variable -> the first place in the file that writes it, or hands a map's or slice's storage on (see
    the module doc); a variable missing is never written after its declaration."""
    specs = package_var_specs(src)
    out: dict[str, Node] = {}
    for n in walk(src.tree.root_node):
        name = text_of(src, n) if n.type == "identifier" else ""
        spec = specs.get(name)
        if spec is None or name in out or _inside(n, spec) or hidden_by_local(src, n, name):
            continue
        if _writes(src, n, _shares_storage(src, spec)):
            out[name] = n
    return out


def _writes(src: EvolvedSource, n: Node, shares: bool) -> bool:
    """``n``, an identifier naming the package variable, is where it may change."""
    top = n
    while (p := top.parent) is not None and (
        (p.type in ("index_expression", "slice_expression") and p.child_by_field_name("operand") == top)
        or (p.type == "selector_expression" and p.child_by_field_name("operand") == top)
        or p.type == "parenthesized_expression"
    ):
        top = p
    p = top.parent
    if p is None:
        return False
    if p.type == "expression_list" and p.parent is not None and p.parent.type == "assignment_statement":
        if p == p.parent.child_by_field_name("left"):
            return True
    if p.type in ("inc_statement", "dec_statement"):
        return True
    if p.type == "unary_expression" and text_of(src, p.child_by_field_name("operator")) == "&":
        return True
    if p.type == "call_expression" and top.type == "selector_expression":
        return True  # a method called on it, or on an element of it: it may change it
    call = p.parent if p.type == "argument_list" else None
    fn = text_of(src, call.child_by_field_name("function")) if call is not None else ""
    if call is not None and named(p) and named(p)[0] == top:
        if fn in _CHANGES_FIRST or fn.startswith(_CHANGES_FIRST_PREFIX):
            return True
    if not shares or top is not n:
        return False  # an element or a field read, or a value copied
    if call is not None:
        return fn not in _READS and not (fn == "append" and named(p)[0] != n)
    return p.type in ("expression_list", "return_statement", "literal_element", "keyed_element")


def _shares_storage(src: EvolvedSource, spec: Node) -> bool:
    """The variable is a map or a slice: a copy of it is the same storage."""
    typ = spec.child_by_field_name("type")
    value = spec.child_by_field_name("value")
    shown = text_of(src, typ) if typ is not None else text_of(src, value).lstrip("&") if value is not None else ""
    return shown.startswith(("map[", "[]"))


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
        if p is not None and p.type in (*_DECLARING, "short_var_declaration", "range_clause"):
            return True
    return False


def check(src: EvolvedSource, an: Analysis) -> None:
    """A CRITICAL ``hazard.package-state`` at the first write of each package variable the carried code names
    (see the module doc)."""
    carried = [f.node for f in (an.host_info, *an.helpers) if f is not None]
    carried += [n for n in (an.constructor.node if an.constructor else None, an.receiver_decl, *an.types) if n]
    written = written_vars(src)
    named_there = {
        text_of(src, n)
        for node in carried
        for n in walk(node)
        if n.type == "identifier" and text_of(src, n) in written and not hidden_by_local(src, n, text_of(src, n))
    }
    for name, at in written.items():
        if name not in named_there:
            continue
        shown = (text_of(src, at.parent) if at.parent is not None else name).strip().splitlines()[0][:60]
        an.findings.append(
            Finding(
                severity=Severity.CRITICAL,
                check=PACKAGE_STATE,
                source_line=an.line_of(at),
                message=(
                    f"`{shown}` {_NAMES_VAR.format(name=name)}: state every request shares. In BLIS it "
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


def _inside(n: Node, outer: Node) -> bool:
    return outer.start_byte <= n.start_byte and n.end_byte <= outer.end_byte
