"""Text utilities for generated Go files: gofmt in the sandbox, line maps across a reformat, imports.

Kept apart from generation so generate.py stays the assembly of one package and these stay testable.
"""

from __future__ import annotations

import difflib
import re

MODULE = "github.com/llm-d/llm-d-router"


def format_go(files: dict[str, str]) -> dict[str, str]:
    """gofmt every Go file with the pinned toolchain (in the sandbox); unchanged when it cannot run."""
    from bot.golang.toolchain import format_source

    out = dict(files)
    for path, text in files.items():
        if path.endswith(".go"):
            formatted = format_source(text)
            out[path] = text if formatted is None else formatted
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
