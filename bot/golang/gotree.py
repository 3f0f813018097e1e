"""Small helpers over tree-sitter-go nodes: source text, pre-order walks, named children, numbers."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.golang.analysis_types import Node
from bot.golang.source import EvolvedSource


def text_of(src: EvolvedSource, node: Node | None) -> str:
    if node is None:
        return ""
    return src.go_bytes[node.start_byte : node.end_byte].decode("utf-8")


def walk(node: Node) -> Iterable[Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def named(node: Node) -> list[Node]:
    return [c for c in node.children if c.is_named and c.type != "comment"]


def parse_number(lit: str) -> float | None:
    s = lit.replace("_", "")
    try:
        if s.lower().startswith(("0x", "0o", "0b")):
            return float(int(s, 0))
        if re.fullmatch(r"0[0-7]+", s):
            return float(int(s, 8))
        return float(s)
    except ValueError:
        return None


def strip_ptr(t: str) -> str:
    return t.strip().lstrip("*").strip()


def norm_type(t: str) -> str:
    return re.sub(r"\s+", "", t)


def id_of(node: Node) -> int:
    return node.start_byte * 100003 + node.end_byte
