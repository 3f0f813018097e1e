"""Text utilities for generated Go files: gofmt in the sandbox, line maps across a reformat, imports.

Kept apart from generation so generate.py stays the assembly of one package and these stay testable.
"""

from __future__ import annotations

import difflib
import re
import tempfile
from pathlib import Path

MODULE = "github.com/llm-d/llm-d-router"


def format_go(files: dict[str, str]) -> dict[str, str]:
    """gofmt every Go file with the pinned toolchain, in one sandboxed run; unchanged when gofmt cannot run
    (or rejects a file: the toolchain check reports that file later with its line)."""
    from bot import sandbox
    from bot.golang.toolchain import ToolchainMissing, _tool_paths

    go_files = {p: t for p, t in files.items() if p.endswith(".go")}
    if not go_files:
        return dict(files)
    try:
        _, gofmt = _tool_paths()
    except ToolchainMissing:
        return dict(files)
    out = dict(files)
    with tempfile.TemporaryDirectory(prefix="promotion-gofmt-", ignore_cleanup_errors=True) as tmp:
        names = {path: f"f{i}.go" for i, path in enumerate(sorted(go_files))}
        for path, name in names.items():
            (Path(tmp) / name).write_text(go_files[path], encoding="utf-8")
        sandbox.run(
            [str(gofmt), "-w", *names.values()],
            cwd=Path(tmp),
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            mounts=sandbox.Mounts(read_only=(gofmt.resolve().parent.parent,), read_write=(Path(tmp),)),
            limits=sandbox.Limits(wall_seconds=120, cpu_seconds=120, memory_bytes=2 << 30),
        )
        for path, name in names.items():
            out[path] = (Path(tmp) / name).read_text(encoding="utf-8")
    return out


def remap_lines(before: str, after: str, mapping: dict[int, int]) -> dict[int, int]:
    """Carry a generated-line -> source-line map across a reformat (gofmt may split or drop lines)."""
    a, b = before.splitlines(), after.splitlines()
    out: dict[int, int] = {}
    sm = difflib.SequenceMatcher(a=[x.strip() for x in a], b=[x.strip() for x in b], autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                if i1 + k + 1 in mapping:
                    out[j1 + k + 1] = mapping[i1 + k + 1]
        elif tag == "replace":
            src = [mapping.get(i + 1) for i in range(i1, i2) if mapping.get(i + 1)]
            if src:
                for k in range(j2 - j1):
                    out[j1 + k + 1] = src[min(k, len(src) - 1)]
    return out


def sort_imports(imports: set[str]) -> list[str]:
    std = sorted(i for i in imports if "." not in i.split('"')[1].split("/")[0])
    ext = sorted(i for i in imports if i not in std and MODULE not in i)
    own = sorted(i for i in imports if MODULE in i)
    out: list[str] = []
    for group in (std, ext, own):
        if group:
            if out:
                out.append("")
            out.extend(group)
    return out


def splice(text: str, blocks: list[tuple[str, int | None, int | None]]) -> tuple[str, dict[int, int]]:
    out: list[str] = []
    mapping: dict[int, int] = {}
    for line in text.split("\n"):
        m = re.fullmatch(r"__PROMOTION_BLOCK_(\d+)__", line.strip())
        if not m:
            out.append(line)
            continue
        block, first, count = blocks[int(m.group(1))]
        for k, bl in enumerate(block.split("\n")):
            out.append(bl)
            if first is not None and (count is None or k < count):
                mapping[len(out)] = first + k
    return "\n".join(out), mapping


def drop_marker_lines(text: str, marker: str) -> str:
    """``text`` with each line that held only a hypothesis-mode comment (``marker`` now) removed where it opens or
    closes a body (right after a ``{`` or right before a ``}``: the blank line left there is evolution scaffolding,
    not the author's spacing) and blank elsewhere, as the separation the comment gave."""
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.strip() != marker:
            out.append(line)
            continue
        following = next((x.strip() for x in lines[i + 1 :] if x.strip() != marker), "")
        at_edge = (out and out[-1].rstrip().endswith("{")) or following.startswith("}")
        if not at_edge and out and out[-1].strip():
            out.append("")
    return "\n".join(out)


#: A file of the simulator or of the evolution run (``sim/routing.go``, ``best_program.py``).
_FILE_REF = re.compile(r"\b[\w./-]*\w\.(?:go|py)\b")


def drop_file_references(text: str) -> str:
    """``text`` without the comment paragraphs that point at files outside the repository (a carried BLIS
    comment naming ``sim/routing_scorers.go``): a reader of the plugin cannot follow them."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip().startswith("//"):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip().startswith("//"):
            j += 1
        paragraphs: list[list[str]] = [[]]
        for line in lines[i:j]:
            if line.strip() == "//":
                paragraphs.append([])
            else:
                paragraphs[-1].append(line)
        kept = [p for p in paragraphs if p and not any(_FILE_REF.search(x) for x in p)]
        sep = next((x for x in lines[i:j] if x.strip() == "//"), "//")
        for k, p in enumerate(kept):
            if k:
                out.append(sep)
            out.extend(p)
        i = j
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


#: Literals whose text is one token (tree-sitter-go splits some into quote and content nodes).
_LITERALS = {"interpreted_string_literal", "raw_string_literal", "rune_literal"}


def code_tokens(text: str) -> list[str]:
    """The syntax tree of ``text`` without its comments and layout, in pre-order (each inner node with its
    type and arity, each token with its text): two files with the same sequence are the same program, so an
    edit that keeps it changed only comments and whitespace. The arity is there because a line break alone can
    end a Go statement (``return`` / ``x`` is not ``return x``)."""
    from bot.golang.source import parse_go

    out: list[str] = []
    data = text.encode("utf-8")
    stack = [parse_go(text).root_node]
    while stack:
        node = stack.pop()
        if node.child_count == 0 or node.type in _LITERALS:
            out.append(data[node.start_byte : node.end_byte].decode("utf-8", "replace"))
            continue
        children = [c for c in node.children if c.type != "comment"]
        out.append(f"<{node.type}/{len(children)}>")
        stack.extend(reversed(children))
    return out


def moved_lines(before: str, after: str) -> dict[int, int]:
    """line in ``before`` -> the same line in ``after``, for an edit that added or removed comment lines (the
    anchors of findings follow the code they point at)."""
    back = remap_lines(before, after, {i: i for i in range(1, len(before.splitlines()) + 1)})
    out: dict[int, int] = {}
    for new, old in sorted(back.items()):
        out.setdefault(old, new)
    return out
