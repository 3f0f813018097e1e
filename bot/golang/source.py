"""Reading an evolved BLIS program in whatever shape it arrives, and parsing it with tree-sitter-go.

Evolved policies reach the bot in four shapes (blis.md §2): a full ``package sim``
copy of ``routing.go``/``admission.go``/``scheduler.go`` with EVOLVE-BLOCK markers,
an OpenEvolve Python program holding that copy in a ``GO_ROUTING_CODE`` triple-quoted string
(or another ``GO_*_CODE``), a Go file without markers (sim2real's
``best_program.go``), or a single function pasted on its own. Everything
downstream works on one Go text, so this module normalises the four shapes to
Go while remembering how every Go line maps back to the file the researcher
gave us: findings must point at *their* lines, not ours.

Unusable input raises ``SourceError`` (a ``RequestError``) with one line naming
the problem and the fix, plus ``check``/``line``/``column`` attributes so the
corpus manifest and the CLI can assert where it is. Check ids (stable, part of
the contract with ``examples/corpus/manifest.yaml``):

- ``source.not-text``         the file is not UTF-8 text
- ``source.not-go``           no Go code found (e.g. a Python file without GO_*_CODE, YAML, prose)
- ``source.ambiguous-go``     several GO_*_CODE strings and no way to pick one
- ``source.syntax-error``     tree-sitter-go found a syntax error (line and column in the original file)
- ``source.two-evolve-blocks``  more than one EVOLVE-BLOCK pair: the evolved region is ambiguous
- ``source.evolve-markers``   a START without END, an END before START, or nested markers
- ``source.too-deep``         syntax nested deeper than MAX_NESTING (the analysis recurses over the tree)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import tree_sitter
import tree_sitter_go

from bot.model import RequestError

Form = Literal["package-file", "openevolve-python", "go-file", "function"]

CHECK_NOT_TEXT = "source.not-text"
CHECK_NOT_GO = "source.not-go"
CHECK_AMBIGUOUS = "source.ambiguous-go"
CHECK_SYNTAX = "source.syntax-error"
CHECK_TWO_BLOCKS = "source.two-evolve-blocks"
CHECK_MARKERS = "source.evolve-markers"
CHECK_TOO_DEEP = "source.too-deep"

#: Deepest syntax tree the analysis walks. Real evolved programs nest about 20 levels; the analysis
#: recurses over the tree, so 1,000 nested parentheses would end in RecursionError without this bound.
MAX_NESTING = 200

START_MARKER = "EVOLVE-BLOCK-START"
END_MARKER = "EVOLVE-BLOCK-END"

# OpenEvolve's evaluator extracts GO_ROUTING_CODE with GO_ROUTING_CODE\s*=\s*"""(.*?)""";
# we accept any GO_<NAME>_CODE (the corpus uses GO_ADMISSION_CODE) and both quote styles.
_GO_VAR = re.compile(r'^(?P<name>GO_[A-Z0-9_]*CODE)\s*(?::\s*str\s*)?=\s*[rR]?(?P<q>"""|\'\'\')', re.M)
_PACKAGE = re.compile(r"^\s*package\s+[A-Za-z_]\w*", re.M)


class SourceError(RequestError):
    """The evolved program cannot be used as given; the message says where and how to fix it."""

    def __init__(self, message: str, *, check: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.check = check
        self.line = line
        self.column = column


@functools.lru_cache(maxsize=1)
def go_language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_go.language())


def parse_go(text: str) -> tree_sitter.Tree:
    return tree_sitter.Parser(go_language()).parse(text.encode("utf-8"))


@dataclass
class EvolvedSource:
    """The evolved program as Go text, with the way back to the original file's lines."""

    path: str
    form: Form
    go_text: str
    original_text: str
    line_offset: int = 0  # original line = go line + line_offset
    first_line_column_offset: int = 0  # python form: Go line 1 starts after `GO_X_CODE = """`
    evolve_block: tuple[int, int] | None = None  # original lines of the START and END marker lines
    code_variable: str | None = None  # GO_ROUTING_CODE etc. for the python form
    wrapped: bool = False  # function form: we prepended a package clause
    _tree: tree_sitter.Tree | None = field(default=None, repr=False)

    def to_original_line(self, go_line: int) -> int:
        return go_line + self.line_offset

    def to_go_line(self, original_line: int) -> int:
        return original_line - self.line_offset

    def to_original_column(self, go_line: int, column: int) -> int:
        return column + (self.first_line_column_offset if go_line == 1 else 0)

    @property
    def tree(self) -> tree_sitter.Tree:
        if self._tree is None:
            self._tree = parse_go(self.go_text)
        return self._tree

    @property
    def go_bytes(self) -> bytes:
        return self.go_text.encode("utf-8")

    @property
    def evolve_block_go(self) -> tuple[int, int] | None:
        if self.evolve_block is None:
            return None
        return (self.to_go_line(self.evolve_block[0]), self.to_go_line(self.evolve_block[1]))


def load_evolved_source(path: Path) -> EvolvedSource:
    """Read a file and normalise it; SourceError when it is missing or not usable."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(
            f"{path}: no such file; pass the evolved program (.go or OpenEvolve .py)", check=CHECK_NOT_TEXT
        )
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise SourceError(
            f"{path}: binary file, not a program; pass the evolved .go or .py source", check=CHECK_NOT_TEXT
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SourceError(f"{path}: not UTF-8 text; pass the evolved .go or .py source", check=CHECK_NOT_TEXT) from None
    return parse_evolved_source(text, str(path))


def parse_evolved_source(text: str, filename: str) -> EvolvedSource:
    """Normalise one of the four input forms to Go text and check it parses."""
    text = text.replace("\r\n", "\n")
    go_vars = list(_GO_VAR.finditer(text))
    if go_vars:
        src = _from_python(text, filename, go_vars)
    elif filename.endswith(".py"):
        raise SourceError(
            f'{filename}: Python file without a GO_ROUTING_CODE = """...""" string; pass the OpenEvolve '
            "program that holds the Go source (or the .go file itself)",
            check=CHECK_NOT_GO,
        )
    elif _PACKAGE.search(_strip_leading_comments(text)[:4096] if text else ""):
        src = EvolvedSource(path=filename, form="go-file", go_text=text, original_text=text)
    else:
        if not re.search(r"^\s*func\s", text, re.M):
            raise SourceError(
                f"{filename}: not Go source (no package clause and no func declaration); pass the evolved "
                "routing.go/admission.go/scheduler.go, a single Go function, or the OpenEvolve .py program",
                check=CHECK_NOT_GO,
            )
        src = EvolvedSource(
            path=filename,
            form="function",
            go_text="package sim\n" + text,
            original_text=text,
            line_offset=-1,
            wrapped=True,
        )
    _check_syntax(src)
    _check_nesting(src)
    _find_evolve_block(src)
    if src.form == "go-file" and src.evolve_block is not None:
        src.form = "package-file"
    return src


def _strip_leading_comments(text: str) -> str:
    return re.sub(r"^(\s*(//[^\n]*\n|/\*.*?\*/))*", "", text, flags=re.S)


def _from_python(text: str, filename: str, matches: list[re.Match]) -> EvolvedSource:
    chosen = matches
    if len(matches) > 1:
        with_markers = [m for m in matches if START_MARKER in _python_string_body(text, m)[0]]
        routing = [m for m in matches if m.group("name") == "GO_ROUTING_CODE"]
        chosen = with_markers if len(with_markers) == 1 else routing if len(routing) == 1 else matches
    if len(chosen) != 1:
        names = ", ".join(m.group("name") for m in matches)
        raise SourceError(
            f"{filename}: several Go strings ({names}) and none is the evolved one; keep only the evolved GO_*_CODE "
            "or put EVOLVE-BLOCK markers in exactly one",
            check=CHECK_AMBIGUOUS,
        )
    m = chosen[0]
    body, body_start = _python_string_body(text, m)
    if body is None:
        line = text.count("\n", 0, m.start()) + 1
        raise SourceError(
            f"{filename}:{line}: {m.group('name')} string is never closed; fix the Python file",
            check=CHECK_NOT_GO,
            line=line,
        )
    start_line = text.count("\n", 0, body_start) + 1
    col = body_start - (text.rfind("\n", 0, body_start) + 1)
    if not body.strip():
        raise SourceError(
            f"{filename}:{start_line}: {m.group('name')} is empty; it must hold the Go source",
            check=CHECK_NOT_GO,
            line=start_line,
        )
    wrapped = False
    offset = start_line - 1
    go_text = body
    if not _PACKAGE.search(_strip_leading_comments(body)[:4096]):
        go_text = "package sim\n" + body
        offset -= 1
        wrapped = True
    return EvolvedSource(
        path=filename,
        form="openevolve-python",
        go_text=go_text,
        original_text=text,
        line_offset=offset,
        first_line_column_offset=0 if wrapped else col,
        code_variable=m.group("name"),
        wrapped=wrapped,
    )


def _python_string_body(text: str, m: re.Match) -> tuple[str | None, int]:
    quote = m.group("q")
    start = m.end()
    end = text.find(quote, start)
    if end < 0:
        return None, start
    return text[start:end], start


def _check_syntax(src: EvolvedSource) -> None:
    root = src.tree.root_node
    if not root.has_error:
        return
    bad = _first_error(root)
    go_line = bad.start_point[0] + 1
    go_col = bad.start_point[1] + 1
    line = src.to_original_line(go_line)
    col = src.to_original_column(go_line, go_col)
    if line < 1:  # the error is in our own wrapper line: report the first line of the input
        line, col = 1, 1
    if bad.is_missing:
        what = f"missing `{bad.type}`"
    else:
        snippet = src.go_bytes[bad.start_byte : min(bad.end_byte, bad.start_byte + 40)].decode("utf-8", "replace")
        snippet = snippet.splitlines()[0] if snippet.strip() else snippet
        what = f"unexpected `{snippet.strip()}`" if snippet.strip() else "unexpected end of input"
    raise SourceError(
        f"{src.path}:{line}:{col}: Go syntax error ({what}); the evolved program must compile in BLIS — fix it and retry",
        check=CHECK_SYNTAX,
        line=line,
        column=col,
    )


def _check_nesting(src: EvolvedSource) -> None:
    """Refuse a tree deeper than MAX_NESTING, at the first node that goes past it (walked without recursion)."""
    cursor = src.tree.walk()
    depth = 0
    while True:
        if depth > MAX_NESTING:
            go_line = cursor.node.start_point[0] + 1
            line = max(src.to_original_line(go_line), 1)
            raise SourceError(
                f"{src.path}:{line}: the code is nested deeper than {MAX_NESTING} levels here "
                "(parentheses, blocks or calls); no evolved policy needs that, flatten the expression",
                check=CHECK_TOO_DEEP,
                line=line,
            )
        if cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return
            depth -= 1


def _first_error(node: tree_sitter.Node) -> tree_sitter.Node:
    """The earliest ERROR or MISSING node in document order."""
    best: tree_sitter.Node | None = None
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            if best is None or n.start_byte < best.start_byte:
                best = n
            continue
        if n.has_error:
            stack.extend(n.children)
    return best or node


def _find_evolve_block(src: EvolvedSource) -> None:
    """Exactly one START/END pair, START before END; two pairs make the evolved region ambiguous."""
    markers: list[tuple[str, int]] = []
    for node in _comments(src.tree.root_node):
        text = src.go_bytes[node.start_byte : node.end_byte].decode("utf-8", "replace")
        go_line = node.start_point[0] + 1
        if START_MARKER in text:
            markers.append(("start", src.to_original_line(go_line)))
        elif END_MARKER in text:
            markers.append(("end", src.to_original_line(go_line)))
    if not markers:
        return
    pairs: list[tuple[int, int]] = []
    open_line: int | None = None
    for kind, line in markers:
        if kind == "start":
            if open_line is not None:
                raise SourceError(
                    f"{src.path}:{line}: {START_MARKER} inside the block opened at line {open_line}; close it with "
                    f"{END_MARKER} first (exactly one pair is allowed)",
                    check=CHECK_MARKERS,
                    line=line,
                )
            open_line = line
        else:
            if open_line is None:
                raise SourceError(
                    f"{src.path}:{line}: {END_MARKER} without a preceding {START_MARKER}; the markers are inverted "
                    "or one is missing — restore the OpenEvolve markers",
                    check=CHECK_MARKERS,
                    line=line,
                )
            pairs.append((open_line, line))
            open_line = None
    if open_line is not None:
        raise SourceError(
            f"{src.path}:{open_line}: {START_MARKER} has no matching {END_MARKER}; restore the end marker",
            check=CHECK_MARKERS,
            line=open_line,
        )
    if len(pairs) > 1:
        second = pairs[1][0]
        spans = ", ".join(f"{a}-{b}" for a, b in pairs)
        raise SourceError(
            f"{src.path}:{second}: {len(pairs)} EVOLVE-BLOCK pairs (lines {spans}); the evolved region is ambiguous — "
            "keep exactly one START/END pair around the evolved code",
            check=CHECK_TWO_BLOCKS,
            line=second,
        )
    src.evolve_block = pairs[0]


def _comments(node: tree_sitter.Node):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "comment":
            yield n
        else:
            stack.extend(reversed(n.children))
