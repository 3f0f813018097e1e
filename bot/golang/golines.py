"""Break a generated Go expression over lines so that no line runs past WIDTH columns.

The generated unit test spells out its inputs as composite literals (endpoints, their metrics, requests). Written
on one line, a row with two loaded endpoints ran to 300 characters, and the reader scrolled sideways to see which
metric a case was about. ``wrap`` breaks the expression where a Go reader expects it: the last argument's literal
hugs its call (``testEndpoint("pod-a", &fwkdl.Metrics{`` / fields / ``}),``), a list of literals takes one per
line, a list of plain fields fills each line. gofmt (``gofiles.format_go``) then aligns what this leaves; it keeps
the line breaks. A string literal is never split: a subtest's name must stay greppable as ``go test`` prints it.

Pure text in, text out.
"""

from __future__ import annotations

import re

#: The longest line a generated Go file should hold, a tab counted as TAB columns.
WIDTH = 120
TAB = 4
_OPEN, _CLOSE = "{([", "})]"


def _scan(text: str):
    """(index, char, depth before it) for every character outside string and rune literals."""
    depth, i, quote = 0, 0, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote != "`":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'`":
            quote = c
        else:
            if c in _CLOSE:
                depth -= 1
            yield i, c, depth
            if c in _OPEN:
                depth += 1
        i += 1


def _split(inner: str) -> list[str]:
    """The top-level comma-separated elements of a bracket's content."""
    parts, start = [], 0
    for i, c, depth in _scan(inner):
        if c == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    parts.append(inner[start:].strip())
    return [p for p in parts if p]


def _group(expr: str) -> tuple[str, str, str, str] | None:
    """(head, open, inner, close) when a top-level bracket of ``expr`` closes at its end (``[]T{...}``: the brace)."""
    if not expr or expr[-1] not in _CLOSE:
        return None
    opens = [i for i, c, depth in _scan(expr) if depth == 0 and c in _OPEN]
    closes = [i for i, c, depth in _scan(expr) if depth == 0 and c in _CLOSE]
    if not opens or closes[-1] != len(expr) - 1:
        return None
    i = opens[-1]
    return expr[:i], expr[i], expr[i + 1 : -1], expr[-1]


def width(line: str) -> int:
    """A line's columns, each tab TAB wide."""
    return len(line.expandtabs(TAB))


def fits(line: str) -> bool:
    """Whether a line (tabs and all) stays within WIDTH: a template's test for picking a one-line form."""
    return width(line) <= WIDTH


def wrap(expr: str, indent: int, col: int, tail: int = 1) -> str:
    """``expr`` as Go text starting at column ``col`` of a line indented ``indent`` tabs, followed by ``tail``
    more characters on its last line (a trailing comma), broken so that its lines fit WIDTH where brackets allow."""
    if col + len(expr) + tail <= WIDTH:
        return expr
    parts = _group(expr)
    if parts is None:
        return expr
    head, opener, inner, closer = parts
    elements = _split(inner)
    if not elements:
        return expr
    *before, last = elements
    lead = head + opener + "".join(e + ", " for e in before)
    last_group = _group(last)
    # Hug: the call stays on its line and only its last literal opens below (a lone argument list of one literal).
    if last_group is not None and col + len(lead) + len(last_group[0]) + 1 <= WIDTH and _fits_each(before):
        return lead + wrap(last, indent, col + len(lead), tail + len(closer)) + closer
    inside = "\t" * (indent + 1)
    start = (indent + 1) * TAB
    if any(_group(e) for e in elements):  # literals: one a line
        lines = [inside + wrap(e, indent + 1, start) + "," for e in elements]
    else:  # plain fields: fill each line
        lines, line = [], ""
        for e in elements:
            if line and start + len(line) + len(e) + 2 > WIDTH:
                lines.append(inside + line.rstrip())
                line = ""
            line += e + ", "
        lines.append(inside + line.rstrip())
    return head + opener + "\n" + "\n".join(lines) + "\n" + "\t" * indent + closer


def _fits_each(elements: list[str]) -> bool:
    """Whether the arguments before a hugged literal are short (a name, a count), not literals of their own."""
    return all(_group(e) is None and len(e) <= 40 for e in elements)


def message_call(head: str, message: str, args: list[str], indent: int, quote) -> str:
    """``head(<message>, args...)`` as Go text after ``indent`` tabs, fitting WIDTH: on one line when it fits, else
    the arguments on a continuation line, and a message too long for any line cut at spaces into quoted pieces
    joined by ``+`` (``quote`` writes one piece as a Go string; the message reads the same at run time)."""
    tail = "".join(", " + a for a in args) + ")"
    one = f"{head}({quote(message)}{tail}"
    col, inside = indent * TAB, "\n" + "\t" * (indent + 1)
    if col + len(one) <= WIDTH:
        return one
    first = f"{head}({quote(message)},"
    if col + len(first) <= WIDTH and args and (indent + 1) * TAB + len(tail) - 2 <= WIDTH:
        return first + inside + tail[2:]
    pieces, line, room = [], "", WIDTH - col - len(head) - 3  # the first piece shares its line with head( and +
    for word in message.split(" "):
        if line and len(quote(line + word + " ")) > room:
            pieces.append(line)
            line, room = "", WIDTH - (indent + 1) * TAB - 2
        line += word + " "
    pieces.append(line[:-1])
    if (indent + 1) * TAB + len(quote(pieces[-1])) + len(tail) > WIDTH and args:
        tail = "," + inside + tail[2:]  # the arguments after the last piece would run past: a line of their own
    return f"{head}(" + ("+" + inside).join(quote(p) for p in pieces) + tail


def signature(head: str, params: str, results: str = "") -> str:
    """A top-level ``func`` line, ``head(params) results {``: on one line when it fits, else the parameters on their
    own lines below it (gofmt's layout for a long signature), ``) results {`` closing them."""
    after = f" {results} {{" if results else " {"
    return wrap(f"{head}({params})", 0, 0, len(after)) + after


#: Binary operators a Go line may end with (no semicolon is inserted after them), as gofmt spaces them at the top
#: level of an expression: a carried statement breaks after one of these.
_BREAK_AFTER = (" || ", " && ", " + ", " - ", " * ", " / ")


def wrap_statements(text: str) -> str:
    """``text`` with each statement line past WIDTH broken where Go allows it: a call's arguments or a composite
    literal's fields one per line when the line ends with them, else after a top-level binary operator.

    The evolved logic is carried as its author wrote it, but with parameters for its literals
    (``ws.params.KVUtilizationThreshold`` for ``0.9``) a line ran to 157 columns, and a maintainer scrolled
    sideways to read the one line the program's claim rests on. Lines with a comment, and lines that no break
    shortens, are left as they are; the result differs only in layout and trailing commas (``same_code``)."""
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip("\t")
        indent = len(line) - len(stripped)
        if fits(line) or not indent or stripped.startswith("//") or _comment_at(stripped) is not None:
            out.append(line)
            continue
        broken = _list_break(stripped, indent) or _operator_break(stripped, indent)
        out.append("\t" * indent + broken if broken and same_code(stripped, broken) else line)
    return "\n".join(out)


def same_code(before: str, after: str) -> bool:
    """Whether two texts differ only in whitespace and trailing commas (what ``wrap_statements`` adds)."""

    def norm(s: str) -> str:
        return re.sub(r",([)}])", r"\1", re.sub(r"\s+", "", s))

    return norm(before) == norm(after)


def _comment_at(text: str) -> int | None:
    """Where a ``//`` comment starts outside string literals, or None."""
    return next((i for i, c, _ in _scan(text) if c == "/" and text[i + 1 : i + 2] == "/"), None)


def _list_break(stmt: str, indent: int) -> str | None:
    """``f(`` / one argument a line / ``)``: when ``stmt`` ends with a call or a composite literal of two or more
    elements. A parenthesised expression is no list (``(a - b,)`` is not Go), so its bracket is never split."""
    parts = _group(stmt)
    if parts is None:
        return None
    head, opener, inner, closer = parts
    elements = _split(inner)
    before = head.rstrip()[-1:]
    if len(elements) < 2 or opener == "[" or not (before.isalnum() or before in "_)]}"):
        return None
    inside = "\t" * (indent + 1)
    return head + opener + "\n" + "\n".join(inside + e + "," for e in elements) + "\n" + "\t" * indent + closer


def _operator_break(stmt: str, indent: int) -> str | None:
    """``stmt`` broken after top-level binary operators, each line as full as WIDTH allows, the continuation lines
    one tab deeper (gofmt's layout); None when no operator sits where a break shortens the first line."""
    lines, rest, col = [], stmt, indent * TAB
    while col + len(rest) > WIDTH:
        cuts = [
            i + len(op) - 1
            for i, _, depth in _scan(rest)
            if depth == 0
            for op in _BREAK_AFTER
            if rest.startswith(op, i)
        ]
        fitting = [i for i in cuts if col + i <= WIDTH] or cuts[:1]
        if not fitting:
            break
        cut = fitting[-1]
        lines.append(rest[:cut])
        rest, col = rest[cut + 1 :], (indent + 1) * TAB
    if not lines:
        return None
    return ("\n" + "\t" * (indent + 1)).join([*lines, rest])
