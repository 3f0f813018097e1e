"""Numbers declared as a package-level ``const`` (``const overloadQueue = 12`` at file level, or in a ``const (...)``
block) that the evolved decision reads: the plugin once neither made them parameters nor listed them, nor even
declared them, so it did not build.

The walk reads such a constant where the decision reads it as if its number were written there, as it reads a local
one (``local_consts.ConstMixin.package_const``), and keeps each read. ``lift_package_consts`` then names the number
by the constant and moves every occurrence of it to those reads, so the plugin reads the parameter at each
(``snap.QueueDepth > ws.params.OverloadQueue``, a change within the line: the line map stays as it is). It is lifted
only when the parameter can stand for it everywhere the carried code reads it: Go needs a constant for an array's
length or another constant's value, the next constant of its group repeats its value (or its ``iota``), and a
parameter has one type. Otherwise it keeps its number with the reason, and ``carried_consts`` declares in the plugin
each package constant the carried code still names, as evolved.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.golang.analysis_types import COMPARE, FLIP, Analysis, Node, Occurrence, Threshold
from bot.golang.gotree import id_of, named, text_of, walk
from bot.golang.literals import CHECK_UNLISTED_LITERAL
from bot.golang.local_consts import const_name, unfollowed
from bot.golang.package_vars import decl_specs, hidden_by_local
from bot.golang.source import EvolvedSource
from bot.model import Finding, Severity

Reads = dict[int, tuple[Node, str]]


def lift_package_consts(
    src: EvolvedSource, an: Analysis, lits: dict[str, Node], reads: dict[str, Reads], uses: dict[int, dict]
) -> None:
    """Each package constant the walk made a parameter is read from it at every read, or keeps its number with the
    reason; one the walk left alone that still meets signals is listed (see the module doc)."""
    funcs = {f.label: f for f in (an.host_info, *an.helpers) if f is not None}
    for name, lit in lits.items():
        at, spec = reads.get(name, {}), _spec_of(lit)
        th = an.literal_nodes.get(lit.start_byte)
        if th is None and spec is not None:
            for label in sorted({label for _, label in at.values() if label in funcs}):
                found = unfollowed(src, an, funcs[label], spec, lit, name)
                an.findings.extend(found)
                if found:
                    break
            continue
        if th is None or th.reason is not None or not at:
            continue
        why = _unliftable(src, an, name, spec, at, uses.get(lit.start_byte, {}), th)
        if why is not None:
            th.reason = f"it is the package-level {_kind(spec)} `{name}`, {why}, so no parameter can stand for it"
            an.findings.append(_kept(src, an, spec, lit, th, why))
            continue
        first = th.occurrences[0]
        th.occurrences = [_occurrence(an, node, label, first) for node, label in sorted(at.values(), key=_start)]
        for o in th.occurrences:
            an.const_reads[o.start] = th
        const_name(th, name)
        th.const_kind = "package variable" if spec is not None and spec.type == "var_spec" else "constant"


def _kind(spec: Node | None) -> str:
    """How the reason names what declares the number: a ``var`` never assigned (package_vars.py) or a ``const``."""
    return "variable" if spec is not None and spec.type == "var_spec" else "constant"


def _kept(src: EvolvedSource, an: Analysis, spec: Node | None, lit: Node, th: Threshold, why: str) -> Finding:
    """The number of a package constant no parameter can stand for: it decides outcomes, yet only a rebuild tunes it."""
    acts = (
        f"what `{th.subject}` is compared with"
        if th.role == "threshold"
        else f"combined with {', '.join(th.signals)} (through `{th.subject}`)"
    )
    return Finding(
        severity=Severity.SUGGESTION,
        check=CHECK_UNLISTED_LITERAL,
        source_line=an.line_of(lit),
        message=(
            f"`{'var' if _kind(spec) == 'variable' else 'const'} "
            f"{text_of(src, spec if spec is not None else lit).strip()[:60]}`: the number {th.literal} is "
            f"{acts}, so it decides outcomes, but the plugin keeps the package-level {_kind(spec)} as evolved: it is "
            f"{why}, so no parameter can stand for it, and tuning it on real pods needs a rebuild"
        ),
        fix=(
            "declare a second constant for where Go needs one (or where no signal meets it), so the one the decision "
            "compares or weighs is read only there and becomes a parameter; or add a parameter for it by hand"
        ),
    )


def _unliftable(
    src: EvolvedSource, an: Analysis, name: str, spec: Node | None, at: Reads, uses: dict, th: Threshold
) -> str | None:
    decl = spec.parent if spec is not None else None
    if spec is None or decl is None:
        return "declared where the translation cannot follow it"
    later = [s for s in named(decl) if s.type == "const_spec" and s.start_byte > spec.start_byte]
    if later and (later[0].child_by_field_name("value") is None or any("iota" in text_of(src, s) for s in later)):
        return f"followed in its group by `{text_of(src, later[0]).strip()[:40]}`, which repeats its value or its iota"
    for other in (n for n in src.tree.root_node.children if n.type in ("const_declaration", "var_declaration")):
        for s in (s for s in decl_specs(other) if s != spec and _names(src, s, name)):
            if s.type == "const_spec":
                return f"used in the constant `{text_of(src, s).strip()[:50]}`, which Go needs constant"
            return f"used in the package variable `{text_of(src, s).strip()[:50]}`, set before any parameter is"
    carried = [f.node for f in (an.host_info, *an.helpers) if f is not None]
    carried += [n for n in (an.constructor.node if an.constructor else None, an.receiver_decl, *an.types) if n]
    for node in carried:
        for n in _names(src, node, name):
            where = text_of(src, n.parent or n).strip()[:50]
            if n.start_byte in at and (n.parent is None or n.parent.start_byte not in uses):
                return f"read at `{where}`, where no signal meets it"
            if n.start_byte not in at and not hidden_by_local(src, n, name):
                return f"read at `{where}`, where " + (
                    "Go needs a constant" if spec.type == "const_spec" else "the translation cannot follow it"
                )
    if any(_in_literal_hiding(src, an, node) for node, _ in at.values()):
        return "read inside a function literal whose parameter hides the receiver that carries parameters"
    types = {t for t in uses.values() if t and not t.startswith("untyped")} | {th.go_type or "an unknown type"}
    if len(types) > 1:
        return f"used as {' and '.join(sorted(types))}"
    return None


def _start(read: tuple[Node, str]) -> int:
    return read[0].start_byte


def _spec_of(lit: Node) -> Node | None:
    n = lit.parent
    while n is not None and n.type not in ("const_spec", "var_spec"):
        n = n.parent
    return n


def _names(src: EvolvedSource, node: Node, name: str) -> list[Node]:
    return [n for n in walk(node) if n.type == "identifier" and text_of(src, n) == name]


def _in_literal_hiding(src: EvolvedSource, an: Analysis, node: Node) -> bool:
    """``node`` is inside a function literal whose parameter has the receiver's name: ``recv.params`` there would
    read the parameter."""
    recv = an.host_info.receiver_var if an.host_info is not None else None
    n = node.parent
    while recv and n is not None:
        params = n.child_by_field_name("parameters") if n.type == "func_literal" else None
        if params is not None and any(text_of(src, c) == recv for d in named(params) for c in d.children):
            return True
        n = n.parent
    return False


def _occurrence(an: Analysis, node: Node, label: str, first: Occurrence) -> Occurrence:
    """The number's occurrence at one read: the identifier, with the role its expression gives it there; passed as
    an argument (flow_args.py), the role its parameter has in the helper, and for a threshold the helper's
    comparison (``an.passed``; else ``first``'s, where the walk found it)."""
    parent = node.parent
    if parent is not None and parent.type == "argument_list":
        if (passed := an.passed.get(node.start_byte)) is not None:
            return replace(passed, line=an.line_of(node), owner=label)
        return Occurrence(
            node.start_byte, node.end_byte, an.line_of(node), first.role, first.op, None, label, first.divisor
        )
    operator = parent.child_by_field_name("operator") if parent is not None else None
    op = text_of(an.src, operator) if operator is not None else ""
    left = parent.child_by_field_name("left") if parent is not None else None
    on_left = left is not None and (left.start_byte, left.end_byte) == (node.start_byte, node.end_byte)
    line = an.line_of(node)
    if op in COMPARE:
        return Occurrence(
            node.start_byte, node.end_byte, line, "threshold", FLIP[op] if on_left else op, id_of(parent), label
        )
    role = "coefficient" if op in ("*", "/") else "offset"
    return Occurrence(node.start_byte, node.end_byte, line, role, op, None, label, op == "/" and not on_left)


def carried_consts(src: EvolvedSource, an: Analysis, carried_text: str) -> list[Node]:
    """The package-level ``const`` and ``var`` declarations the carried code (``carried_text``) still names, and
    those they name in turn, in file order: declared in the plugin as evolved (``carry.carry_const``), a table
    never written with the values the program was validated with (package_vars.py). One whose every name is now
    read from a parameter is not."""
    lifted = {th.const_decl for th in an.const_reads.values() if th.param or th.constant}
    decls = [n for n in src.tree.root_node.children if n.type in ("const_declaration", "var_declaration")]
    declares = {
        d.start_byte: {text_of(src, c) for s in decl_specs(d) for c in s.children if c.type == "identifier"} - lifted
        for d in decls
    }
    needed: list[Node] = []
    text = carried_text
    while more := [
        d
        for d in decls
        if d not in needed and any(re.search(rf"\b{re.escape(n)}\b", text) for n in declares[d.start_byte])
    ]:
        needed += more
        text = "\n".join(text_of(src, d) for d in more)
    return sorted(needed, key=lambda d: d.start_byte)
