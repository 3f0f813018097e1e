"""The weights of a regime switch are parameters, one per regime, named for the regime they hold in.

A router blends its terms with weights that switch on a load regime (a researcher's trial, trial 4)::

    wBase, wQueue, wKV := 0.6, 0.25, 0.15
    if congested(snapshots, 3.5) {
        wBase, wQueue, wKV = 0.2, 0.55, 0.25
    }

The walk made the congested set parameters as values "in `congested(snapshots, 3.5)`" (``wQueueValue``) and the
calm set stayed literal: a local set again "would stand for only one of its values" (literals.py). Both sets are
one choice, though, each weight held in one regime: so each number is a parameter of its own, named for the
weight's role and its regime (``calmQueueWeight``, ``congestedQueueWeight``), documented as "the weight of
`queueScore` when `congested(snapshots, 3.5)` holds" (or "does not hold"), with the signals of the term it weighs.
The ``if``/``else`` form (``var wQueue float64`` then both branches set it) is the same switch.

Only a local that weighs a term (``wQueue*queueScore``) is taken, and only when the switch is all that sets it: the
declaration and one assignment at the top of each branch of one ``if`` after it, in the same block, nothing reading
it in between, in a method that reaches the parameters. Otherwise a parameter per regime would not say what the code
does, so the numbers the walk did not lift keep their literals with an IMPORTANT finding that says which regime
keeps its evolved value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.golang.analysis_types import Analysis, FuncInfo, Node, Occurrence, Threshold
from bot.golang.gonames import exported, lower_camel
from bot.golang.gotree import named, parse_number, text_of, walk
from bot.golang.literals import CHECK_UNLISTED_LITERAL
from bot.golang.local_scales import meetings
from bot.golang.short_locals import plain_name, use_of
from bot.golang.source import EvolvedSource
from bot.model import Finding, Severity

HOLDS, FAILS = "holds", "does not hold"
_TYPES = {"int_literal": "int", "float_literal": "float64"}
_PARAM_TYPES = ("int", "int64", "float64")
#: The regime a condition's helper does not name, when a word says it better than "not ..." (``congested``: calm).
_OPPOSITE = {"congested": "calm", "overloaded": "normal", "saturated": "unsaturated", "busy": "idle", "idle": "busy"}
_COMPARE_WORDS = {">": ("high", "low"), ">=": ("high", "low"), "<": ("low", "high"), "<=": ("low", "high")}


@dataclass
class _Weight:
    """One local of a switch: the number it holds in each regime (the literal's node, None when none is written)."""

    name: str
    held: Node | None  # what the regime's value is read from when the condition holds
    otherwise: Node | None  # ... when it does not
    sets: list[Node]  # the statements of the switch that set it


def lift_regimes(src: EvolvedSource, an: Analysis) -> None:
    """Each weight a regime switch sets gets one parameter per regime, or an IMPORTANT finding (module doc)."""
    for f in [an.host_info, *an.helpers]:
        if f is None:
            continue
        for decl in [n for n in walk(f.node) if n.type in ("short_var_declaration", "var_spec")]:
            switch = _switch_after(src, decl)
            if switch is None:
                continue
            ifs, weights = switch
            cond = ifs.child_by_field_name("condition")
            words = _regime_words(src, cond)
            for w in weights:
                use = use_of(f.node, w.name, lambda n: text_of(src, n))
                if use is None or use[1] != "Weight":
                    continue
                why = _unsound(src, an, f, decl, ifs, w)
                if why is None:
                    _lift(src, an, f, decl, w, (cond, use[0], words))
                else:
                    _keep(src, an, f, decl, w, cond, why)


def _switch_after(src: EvolvedSource, decl: Node) -> tuple[Node, list[_Weight]] | None:
    """The first ``if`` after ``decl`` in its block whose branches set some of its locals to numbers, and those
    locals with the number each regime gives them, or None."""
    names = decl.child_by_field_name("left") or decl.child_by_field_name("name")
    values = decl.child_by_field_name("right") or decl.child_by_field_name("value")
    if names is None:
        return None
    idents = named(names) if names.type == "expression_list" else [c for c in decl.children if c.type == "identifier"]
    items = named(values) if values is not None and values.type == "expression_list" else []
    stmt = decl.parent if decl.type == "var_spec" else decl
    if stmt is None or stmt.parent is None:
        return None
    after = [s for s in named(stmt.parent) if s.start_byte > stmt.start_byte]
    for ifs in (s for s in after if s.type == "if_statement"):
        weights = []
        for i, ident in enumerate(idents):
            name = text_of(src, ident)
            declared = _number_node(items[i]) if len(items) == len(idents) else None
            then = _set_at_top(src, ifs.child_by_field_name("consequence"), name)
            alt = ifs.child_by_field_name("alternative")
            other = _set_at_top(src, alt, name) if alt is not None and alt.type == "block" else None
            if then is None and other is None:
                continue
            held = then[0] if then is not None else declared
            otherwise = other[0] if other is not None else declared
            sets = [s for s in (then, other) if s is not None]
            weights.append(_Weight(name, held, otherwise, [s[1] for s in sets]))
        if weights:
            return ifs, weights
    return None


def _set_at_top(src: EvolvedSource, block: Node | None, name: str) -> tuple[Node, Node] | None:
    """(the number, the statement) of ``name = <number>`` among the statements of ``block`` itself."""
    stmts = named(block) if block is not None else []
    if len(stmts) == 1 and stmts[0].type == "statement_list":
        stmts = named(stmts[0])
    for s in stmts:
        if s.type != "assignment_statement" or text_of(src, s.child_by_field_name("operator")) != "=":
            continue
        left, right = named(s.child_by_field_name("left")), named(s.child_by_field_name("right"))
        for target, value in zip(left, right, strict=False):
            if len(left) == len(right) and text_of(src, target).strip() == name and _number_node(value) is not None:
                return _number_node(value), s
    return None


def _number_node(n: Node | None) -> Node | None:
    """``n`` when it is a numeric literal or a negated one."""
    if n is None:
        return None
    if n.type == "unary_expression":
        inner = n.child_by_field_name("operand")
        return n if inner is not None and inner.type in _TYPES else None
    return n if n.type in _TYPES else None


def _unsound(src: EvolvedSource, an: Analysis, f: FuncInfo, decl: Node, ifs: Node, w: _Weight) -> str | None:
    """Why one parameter per regime would not say what the code does with ``w``, or None when it would."""
    if f.receiver_type is None:
        return f"it is set in `{f.name}`, a function without a receiver, which cannot reach the plugin's parameters"
    if w.held is None or w.otherwise is None:
        return f"`{w.name}` has no number written for one regime (Go's zero value holds there)"
    if _go_type(src, decl, w) not in _PARAM_TYPES:
        return f"`{w.name}` is of type {_go_type(src, decl, w) or 'unknown'}, which no parameter carries"
    for n in walk(f.node):
        if n is decl or any(n.start_byte == s.start_byte and n.end_byte == s.end_byte for s in [decl, *w.sets]):
            continue
        if n.type in ("short_var_declaration", "assignment_statement", "var_spec", "inc_statement", "dec_statement"):
            left = n.child_by_field_name("left") or n.child_by_field_name("name") or (named(n) or [None])[0]
            targets = named(left) if left is not None and left.type == "expression_list" else [left]
            if any(t is not None and text_of(src, t).strip() == w.name for t in targets):
                return f"`{w.name}` is set again (`{_line(src, n)}`, line {an.line_of(n)})"
        elif n.type == "unary_expression" and text_of(src, n.child_by_field_name("operator")) == "&":
            if text_of(src, n.child_by_field_name("operand")).strip() == w.name:
                return f"its address is taken (`{_line(src, n)}`, line {an.line_of(n)})"
        elif n.type == "identifier" and text_of(src, n) == w.name and decl.end_byte <= n.start_byte < ifs.start_byte:
            return f"`{w.name}` is read before the switch (line {an.line_of(n)}), so its first value acts in both"
    return None


def _go_type(src: EvolvedSource, decl: Node, w: _Weight) -> str | None:
    declared = decl.child_by_field_name("type") if decl.type == "var_spec" else None
    if declared is not None:
        return text_of(src, declared).strip()
    lit = w.otherwise if w.otherwise is not None else w.held
    if lit is not None and lit.type == "unary_expression":
        lit = lit.child_by_field_name("operand")
    return _TYPES.get(lit.type) if lit is not None else None


def _line(src: EvolvedSource, n: Node) -> str:
    text = " ".join(text_of(src, n).split())
    return text if len(text) <= 50 else text[:47] + "..."


def _regime_words(src: EvolvedSource, cond: Node | None) -> tuple[str, str]:
    """(the regime when ``cond`` holds, the one when it does not), as name prefixes: a helper's name says it
    (``congested``: ``congested`` and ``calm``); a comparison says high and low of what it compares."""
    n, negated = cond, False
    while n is not None and (n.type == "parenthesized_expression" or _negation(src, n)):
        negated ^= n.type != "parenthesized_expression"
        n = named(n)[0] if n.type == "parenthesized_expression" else n.child_by_field_name("operand")
    words = ("switched", "default")
    if n is not None and n.type == "call_expression":
        fn = n.child_by_field_name("function")
        fn = fn.child_by_field_name("field") if fn is not None and fn.type == "selector_expression" else fn
        name = re.sub(r"^(?:is|has)(?=[A-Z])", "", text_of(src, fn)) if fn is not None else ""
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
            yes = lower_camel(name)
            words = (yes, _OPPOSITE.get(yes, "not" + exported(yes)))
    elif n is not None and n.type == "binary_expression":
        op = text_of(src, n.child_by_field_name("operator"))
        stem = plain_name(n.child_by_field_name("left"), lambda x: text_of(src, x))
        if op in _COMPARE_WORDS and stem:
            high, low = _COMPARE_WORDS[op]
            words = (high + exported(stem), low + exported(stem))
    return (words[1], words[0]) if negated else words


def _negation(src: EvolvedSource, n: Node) -> bool:
    return n.type == "unary_expression" and text_of(src, n.child_by_field_name("operator")) == "!"


def _stem(src: EvolvedSource, name: str, term: Node) -> str:
    """What a weight weighs, for its name: the local says it (``wQueue``, ``kvWeight``: Queue, KV), else the term it
    multiplies (``queueScore``: Queue)."""
    m = re.fullmatch(r"(?:w|wt|weight)([A-Z]\w*)|([a-z]\w*?)(?:W|Wt|Weight)", name)
    if m:
        return exported(m.group(1) or m.group(2))
    stem = plain_name(term, lambda n: text_of(src, n)) or name
    return exported(re.sub(r"(?<=[a-z])(?:Score|Term)$", "", stem))


def _term_signals(src: EvolvedSource, an: Analysis, f: FuncInfo, term: Node) -> set[str]:
    """The signals the weighed term is computed from: those of the locals it reads and the fields it names."""
    known = {s.name for s in an.signals}
    out: set[str] = set()
    for n in walk(term):
        if n.type == "identifier":
            out |= an.var_signals.get(f"{f.label}::{text_of(src, n)}", set())
        elif n.type == "field_identifier" and text_of(src, n) in known:
            out.add(text_of(src, n))
    return out


def _lift(src: EvolvedSource, an: Analysis, f: FuncInfo, decl: Node, w: _Weight, switch: tuple) -> None:
    """One coefficient parameter per regime of ``w``, in place of what the walk made of either number; ``switch`` is
    (the condition, the term ``w`` weighs, the regimes' words)."""
    cond, term, words = switch
    signals, subject = _term_signals(src, an, f, term), text_of(src, term)
    if not signals:  # the scorers' composite: the doc names the sum the term is in, which reads the signals
        first, signals = meetings(src, an, f, w.sets[0], w.name)
        subject = first or subject
    if not signals:
        return
    stem = _stem(src, w.name, term)
    decided = tuple(sorted({s for lit in (w.held, w.otherwise) for s in _forget(an, lit)}))
    for lit, word, holds in ((w.otherwise, words[1], FAILS), (w.held, words[0], HOLDS)):
        assert lit is not None
        line = an.line_of(lit)
        th = Threshold(
            value=_value(src, lit),
            literal=text_of(src, lit).strip(),
            go_type=_go_type(src, decl, w),
            role="coefficient",
            signals=sorted(signals),
            subject=subject,
            base=word + stem,
            line=line,
            suffix="Weight",
            regime=(" ".join(text_of(src, cond).split()), holds, text_of(src, term), decided),
        )
        th.occurrences.append(Occurrence(lit.start_byte, lit.end_byte, line, "coefficient", owner=f.label))
        at = next((i for i, t in enumerate(an.thresholds) if t.line > line), len(an.thresholds))
        an.thresholds.insert(at, th)
        an.literal_nodes[lit.start_byte] = th


def _forget(an: Analysis, lit: Node | None) -> list[str]:
    """Drop what the walk made of the number ``lit`` (a value "in" the condition): the regime's parameter replaces
    it. Returns its signals, which are those the condition reads (the walk's value takes them from it)."""
    old = an.literal_nodes.pop(lit.start_byte, None) if lit is not None else None
    if old is None:
        return []
    old.occurrences = [o for o in old.occurrences if o.start != lit.start_byte]
    if not old.occurrences and old in an.thresholds:
        an.thresholds.remove(old)
    return list(old.signals)


def _value(src: EvolvedSource, lit: Node) -> float:
    if lit.type == "unary_expression":
        inner = parse_number(text_of(src, lit.child_by_field_name("operand"))) or 0.0
        return -inner if text_of(src, lit.child_by_field_name("operator")) == "-" else inner
    return parse_number(text_of(src, lit)) or 0.0


def _keep(src: EvolvedSource, an: Analysis, f: FuncInfo, decl: Node, w: _Weight, cond: Node, why: str) -> None:
    """The numbers of ``w`` the walk did not make parameters stay literals, listed with a reason, and one IMPORTANT
    finding says which regime keeps its evolved value: tuning the other alone would move the blend off its design."""
    when = " ".join(text_of(src, cond).split())
    kept = []
    for lit, holds in ((w.otherwise, FAILS), (w.held, HOLDS)):
        if lit is None or ((th := an.literal_nodes.get(lit.start_byte)) is not None and th.reason is None):
            continue
        kept.append(f"when `{when}` {holds} keeps the evolved {text_of(src, lit).strip()}")
        if th is None:
            reason = f"one regime of a switch that cannot be lifted soundly: {why}"
            listed = Threshold(
                value=_value(src, lit),
                literal=text_of(src, lit).strip(),
                go_type=_go_type(src, decl, w),
                role="coefficient",
                signals=sorted(meetings(src, an, f, decl, w.name)[1]),
                subject=w.name,
                base=w.name,
                line=an.line_of(lit),
                reason=reason,
            )
            listed.occurrences.append(
                Occurrence(lit.start_byte, lit.end_byte, an.line_of(lit), "coefficient", owner=f.label)
            )
            at = next((i for i, t in enumerate(an.thresholds) if t.line > listed.line), len(an.thresholds))
            an.thresholds.insert(at, listed)
            an.literal_nodes[lit.start_byte] = listed
    if not kept:
        return
    an.findings.append(
        Finding(
            severity=Severity.IMPORTANT,
            check=CHECK_UNLISTED_LITERAL,
            source_line=an.line_of(decl),
            message=(
                f"`{w.name}` is a weight switched on `{when}`, but the translation cannot give each regime its own "
                f"parameter because {why}: the weight {' and the weight '.join(kept)} in the plugin code, so tuning "
                "the switch on real pods moves only part of it and needs a rebuild for the rest"
            ),
            fix=(
                f"set `{w.name}` only in the declaration and in the branches of the switch (the translation then "
                "makes each regime's weight a parameter), or add a parameter for the kept value by hand"
            ),
        )
    )
