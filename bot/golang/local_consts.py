"""Numbers declared as a local ``const`` in the carried code (``const windowUs = 2_000_000``, then ``cutoff :=
state.Clock - windowUs``): a number like any other the decision reads, yet one the translation once kept silently,
neither a parameter nor listed (an llm-d maintainer's rolling-window admitter, whose README promised a window
length no config could set).

The data-flow walk reads the constant where it is used as if its number were written there (``ConstMixin``), so
every rule for a literal applies: ``state.Clock - windowUs`` is an offset on the clock, ``load > busy`` a
threshold. ``lift_local_consts`` then checks that the constant can be read from the parameter: it is declared
alone, read only where a signal meets it, and with one type at every read (Go gives an untyped constant the type
of each use; a variable has one). The plugin then declares it from the parameter (``windowUs :=
w.params.WindowLength``); otherwise the number keeps its literal with the reason, and a constant the walk could not
follow to a signal (``float64(n*busy)``) is listed as ``translate.unlisted-literal``.
"""

from __future__ import annotations

import re
from functools import cached_property

from bot.golang.analysis_types import Analysis, FuncInfo, Node, Threshold
from bot.golang.flow_values import Val
from bot.golang.gonames import lower_camel
from bot.golang.gotree import named, parse_number, text_of, walk
from bot.golang.local_scales import meetings
from bot.golang.package_vars import decl_specs, written_vars
from bot.golang.source import EvolvedSource
from bot.model import Finding, Severity

#: A unit at the end of a constant's name (``windowUs``, ``timeoutMs``): the parameter's doc names the constant,
#: so the unit stays in view; the parameter's name says the role.
_UNIT = re.compile(r"(?<=[a-z0-9])(?:Us|Usec|Micros|Ms|Msec|Millis|Ns|Nanos|Sec|Secs|Seconds)$")
#: A name that already says its role: it keeps no role word after it (``maxQueue``, not ``maxQueueThreshold``;
#: ``kvPressureKnee``, ``criticalBoost``). The rule for a constant, local or package-level: it keeps the name its
#: author gave it when that name ends in a word for what a number does to a signal (a limit, a knee, a weight, a
#: boost, a slope...); any other gets the role's word (``busy`` compared with a queue: ``busyThreshold``).
_ROLE_NAME = re.compile(
    r"(?i:limit|threshold|cap|ceiling|floor|max|min|bound|cutoff|knee|interval|timeout|ttl|period|length|duration"
    r"|weight|factor|coeff|coefficient|multiplier|boost|gain|scale|slope|penalty|bonus|decay|alpha|margin|headroom"
    r"|budget|target|ratio|share|fraction|exponent|offset|bias|count)$"
    r"|^(?:max|min)(?=[A-Z0-9])"
)
_TRIVIAL = {0.0, 1.0, -1.0}


class ConstMixin:
    """The walk's view of a local constant: its number at every use (a mixin of ``flow.Walker``, which holds
    ``const_lits``, "Func::name" -> the literal it is declared with, and ``const_uses``, literal start -> {use
    start: the type of what it meets there})."""

    def const_spec(self, spec: Node) -> None:
        """A ``const`` spec: tracked as a variable (``var_spec``), and its number kept for ``const_value``."""
        self.var_spec(spec)
        value = spec.child_by_field_name("value")
        names = [c for c in spec.children if c.type == "identifier"]
        lit = self._numeric_literal(named(value)[0]) if value is not None and len(named(value)) == 1 else None
        if lit is not None and len(names) == 1:
            self.const_lits[self.key(self.t(names[0]))] = lit

    def const_value(self, name: str) -> Val | None:
        """The value of a local constant where it is read: its literal, untyped unless declared with a type, so the
        walk treats ``state.Clock - windowUs`` as ``state.Clock - 2_000_000``."""
        lit = self.const_lits.get(self.key(name))
        return self._const_val(lit) if lit is not None else None

    @cached_property
    def pkg_lits(self) -> dict[str, Node]:
        """Each package-level constant declared by a number: name -> its literal (package_consts.py)."""
        return package_literals(self.src)

    @cached_property
    def pkg_reads(self) -> dict[str, dict[int, tuple[Node, str]]]:
        """Package constant -> {identifier start: (the identifier, the function)} of each read the walk followed."""
        return {}

    def package_const(self, name: str, node: Node) -> Val | None:
        """The value of a package-level constant where the decision reads it (no local of that name hides it), read
        as its number like a local constant's; each read is kept, since the plugin reads the parameter there."""
        lit = self.pkg_lits.get(name)
        if lit is None:
            return None
        if self.recording:
            self.pkg_reads.setdefault(name, {})[node.start_byte] = (node, self.fn_label)
        return self._const_val(lit)

    def _const_val(self, lit: Node) -> Val:
        spec = _spec_of(lit)
        declared = spec.child_by_field_name("type") if spec is not None else None
        untyped = "untyped-float" if re.search(r"[.eE]", self.t(lit)) else "untyped-int"
        if spec is not None and spec.type == "var_spec":  # a variable has the type of its number, not each use's
            untyped = untyped.removeprefix("untyped-").replace("float", "float64")
        return Val(None, frozenset(), self.t(declared).strip() if declared is not None else untyped, lit)

    def note_const_use(self, node: Node, v: Val, other: Val) -> None:
        """Record the type a constant meets in ``node`` (a binary expression): one parameter can stand for it only
        when every use agrees."""
        if v.lit is not None and v.lit.start_byte in self.const_lit_starts():
            self.const_uses.setdefault(v.lit.start_byte, {})[node.start_byte] = other.type

    def const_lit_starts(self) -> set[int]:
        return {lit.start_byte for lit in (*self.const_lits.values(), *self.pkg_lits.values())}


def lift_local_consts(src: EvolvedSource, an: Analysis, const_lits: dict[str, Node], uses: dict[int, dict]) -> None:
    """Each local constant whose number the walk made a parameter is declared from it, named by the constant
    (``windowUs`` -> ``windowLength``), or keeps its literal with the reason; one the walk left alone that still
    meets signals is listed (see the module doc)."""
    funcs = {f.label: f for f in (an.host_info, *an.helpers) if f is not None}
    for key, lit in const_lits.items():
        label, name = key.rsplit("::", 1)
        f, spec = funcs.get(label), _spec_of(lit)
        if f is None or spec is None:
            continue
        th = an.literal_nodes.get(lit.start_byte)
        if th is None:
            an.findings.extend(unfollowed(src, an, f, spec, lit, name))
            continue
        if th.reason is not None:
            continue
        why = _unliftable(src, f, spec, name, th, uses.get(lit.start_byte, {}))
        if why is not None:
            th.reason = f"it is the local constant `{name}`, {why}, so no parameter can stand for it"
            continue
        const_name(th, name)


def const_name(th: Threshold, name: str) -> None:
    """A number a constant declares is the parameter named by the constant (``windowUs`` -> ``windowLength``)."""
    th.const_decl = name
    stem = lower_camel(_UNIT.sub("", name))
    if len(stem) > 2:
        th.base = stem
        th.suffix = "Length" if stem.lower().endswith("window") else "" if _ROLE_NAME.search(stem) else None


def _unliftable(src: EvolvedSource, f: FuncInfo, spec: Node, name: str, th: Threshold, uses: dict) -> str | None:
    decl = spec.parent
    if decl is None or len([s for s in named(decl) if s.type == "const_spec"]) != 1:
        return "declared in a group (`const (...)`)"
    for n in walk(f.node):
        if n.type == "identifier" and text_of(src, n) == name and not _inside(n, spec):
            if n.parent is None or n.parent.start_byte not in uses:
                at = n.parent if n.parent is not None else n
                return f"read at `{text_of(src, at).strip()[:50]}`, where no signal meets it"
    types = {t for t in uses.values() if t and not t.startswith("untyped")} | {th.go_type or "an unknown type"}
    if len(types) > 1:
        return f"used as {' and '.join(sorted(types))}"
    return None


def unfollowed(src: EvolvedSource, an: Analysis, f: FuncInfo, spec: Node, lit: Node, name: str) -> list[Finding]:
    """A constant the walk did not follow to a signal where it is read, which still meets one further on."""
    value = parse_number(text_of(src, lit).replace(" ", ""))
    if value is None or value in _TRIVIAL:
        return []
    subject, signals = meetings(src, an, f, spec, name)
    if not signals:
        return []
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check="translate.unlisted-literal",
            source_line=an.line_of(lit),
            message=(
                f"`const {text_of(src, spec).strip()[:60]}`: the number {text_of(src, lit).strip()} is combined with "
                f"{', '.join(sorted(signals))} (through `{subject or name}`), so it decides outcomes, but the "
                f"translation keeps it a literal because the constant `{name}` is read where no signal meets it "
                "directly: it is neither a plugin parameter nor listed as a kept literal, and tuning it on real pods "
                "needs a rebuild"
            ),
            fix=f"compare or combine `{name}` with the signal where it is read, or add a parameter for it by hand",
        )
    ]


def doc_part(th: Threshold, part: str, subject: str) -> str:
    """What a parameter declared by a local constant is, for its doc: the constant (whose name keeps the unit)
    and where the number acts (``subtracted from `state.Clock```) or the role's own words."""
    op = th.occurrences[0].op if th.occurrences else None
    if th.role == "offset" and op in ("-", "+"):
        part = f"{'subtracted from' if op == '-' else 'added to'} `{subject}`"
    lead = "how long the window lasts: " if th.suffix == "Length" else ""
    return f"{lead}the evolved {th.const_kind} `{th.const_decl}`, {part}"


def carried_decl(src: EvolvedSource, an: Analysis, node: Node, params: str) -> str | None:
    """``windowUs := w.params.WindowLength`` for a ``const`` declaration whose number is a parameter, else None."""
    for spec in (s for s in named(node) if s.type == "const_spec"):
        value = spec.child_by_field_name("value")
        for v in named(value) if value is not None else []:
            th = an.literal_nodes.get(v.start_byte)
            if th is not None and th.const_decl and th.param:
                return f"{th.const_decl} := {params}.{th.field}"
    return None


def package_literals(src: EvolvedSource) -> dict[str, Node]:
    """Name -> literal of each package-level ``const`` declared alone in its spec by a number (``overloadQueue =
    12``, in a group or not), and of each package-level ``var`` so declared that the file never writes after its
    declaration (``var kvCeiling = 0.9``: in effect a constant, package_vars.py); ``iota``, a string or an
    expression is no number the walk can carry."""
    out = {}
    written = written_vars(src)
    for decl in (n for n in src.tree.root_node.children if n.type in ("const_declaration", "var_declaration")):
        for spec in decl_specs(decl):
            value = spec.child_by_field_name("value")
            names = [c for c in spec.children if c.type == "identifier"]
            lit = number_node(named(value)[0]) if value is not None and len(named(value)) == 1 else None
            if lit is not None and len(names) == 1 and text_of(src, names[0]) not in written:
                out[text_of(src, names[0])] = lit
    return out


def number_node(node: Node) -> Node | None:
    """``node`` as a number literal (``12``, ``0.4``, ``-3``, in parentheses or not), else None."""
    while node.type == "parenthesized_expression" and named(node):
        node = named(node)[0]
    if node.type in ("int_literal", "float_literal"):
        return node
    inner = node.child_by_field_name("operand") if node.type == "unary_expression" else None
    minus = node.child_by_field_name("operator") if inner is not None else None
    if inner is not None and minus is not None and minus.type == "-" and inner.type in ("int_literal", "float_literal"):
        return node
    return None


def _spec_of(lit: Node) -> Node | None:
    n = lit.parent
    while n is not None and n.type not in ("const_spec", "var_spec"):
        n = n.parent
    return n


def _inside(n: Node, outer: Node) -> bool:
    return outer.start_byte <= n.start_byte and n.end_byte <= outer.end_byte
