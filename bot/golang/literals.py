"""Numbers that decide outcomes yet are neither plugin parameters nor listed as kept literals.

The plugin's Parameters promise every number the evolved logic compares a signal with; a number the analysis
does not follow (a bare constant in arithmetic, a local set from a literal and compared later) would break that
promise silently. Each gets a ``translate.unlisted-literal`` finding, so the report names what only a rebuild
can tune.
"""

from __future__ import annotations

from bot.golang.analysis_types import Analysis
from bot.golang.gotree import named, parse_number, text_of, walk
from bot.golang.source import EvolvedSource
from bot.model import Finding, Severity

CHECK_UNLISTED_LITERAL = "translate.unlisted-literal"
_TRIVIAL = {0.0, 1.0, -1.0, 2.0, 100.0, 1e3, 1e6, 1e9}


def unlisted_literals(src: EvolvedSource, an: Analysis) -> None:
    """Numbers in the carried logic's arithmetic and comparisons that are neither parameters nor listed
    as kept literals: they decide outcomes, yet only a rebuild changes them and no report names them."""
    host = an.host_info
    if host is None:
        return
    seen: set[int] = set()
    for f in [host, *an.helpers]:
        for n in walk(f.node):
            if n.type not in ("int_literal", "float_literal") or n.start_byte in an.literal_nodes:
                continue
            parent = n.parent
            if parent is not None and parent.type == "unary_expression":
                if parent.start_byte in an.literal_nodes:
                    continue
                parent = parent.parent
            if parent is not None and parent.type == "expression_list" and n.start_byte not in seen:
                seen.add(n.start_byte)
                an.findings.extend(_decisive_local(src, an, f.node, n, parent))
                continue
            if parent is None or parent.type != "binary_expression" or n.start_byte in seen:
                continue
            value = parse_number(text_of(src, n))
            if value is None or value in _TRIVIAL:
                continue
            seen.add(n.start_byte)
            an.findings.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=CHECK_UNLISTED_LITERAL,
                    source_line=an.line_of(n),
                    message=(
                        f"`{text_of(src, parent)[:80]}`: the number {text_of(src, n)} decides outcomes but compares or "
                        "combines no signal the analysis follows, so it is neither a plugin parameter nor listed as a "
                        "kept literal; tuning it needs a rebuild"
                    ),
                    fix="check whether it is simulator-scale; make it a constant with a name if it is part of the design",
                )
            )


_COMPARE = {">", "<", ">=", "<="}


def _decisive_local(src: EvolvedSource, an: Analysis, fn, lit, values) -> list[Finding]:
    """A local set from a literal (``shedLimit := 0.75``) and compared later (``loadRatio > shedLimit``): the number
    decides outcomes like any threshold, but the analysis follows numbers compared where they are written, so it
    became no parameter. It gets a finding rather than silence."""
    decl = values.parent
    if decl is None or decl.type not in ("short_var_declaration", "var_spec"):
        return []
    names = decl.child_by_field_name("left") or decl.child_by_field_name("name")
    if names is None or (decl.child_by_field_name("right") != values and decl.type != "var_spec"):
        return []
    idents = named(names) if names.type == "expression_list" else [names]
    index = next((i for i, v in enumerate(named(values)) if v.start_byte == lit.start_byte), -1)
    value = parse_number(text_of(src, lit))
    if not 0 <= index < len(idents) or idents[index].type != "identifier" or value is None or value in _TRIVIAL:
        return []
    name = text_of(src, idents[index])
    compared = next((c for c in walk(fn) if _compares(src, c, name)), None)
    if compared is None:
        return []
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check=CHECK_UNLISTED_LITERAL,
            source_line=an.line_of(lit),
            message=(
                f"`{text_of(src, decl)[:60]}`: the number {text_of(src, lit)} is what `{text_of(src, compared)[:60]}` "
                "compares with, so it decides outcomes, but a local set from a literal is neither a plugin parameter "
                "nor listed as a kept literal: the Parameters comment's 'every number compared' does not cover it, "
                "and tuning it on real pods needs a rebuild"
            ),
            fix=(
                f"write the number where `{name}` is compared (the translation then makes it a parameter), or add a "
                "parameter for it by hand"
            ),
        )
    ]


def _compares(src: EvolvedSource, node, name: str) -> bool:
    """``node`` is a comparison with ``name`` on one side and no literal on the other."""
    if node.type != "binary_expression" or text_of(src, node.child_by_field_name("operator")) not in _COMPARE:
        return False
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    sides = {text_of(src, left).strip(), text_of(src, right).strip()}
    other = (sides - {name}) or {""}
    return name in sides and not any(ch.isdigit() for ch in next(iter(other))[:1])
