"""The one YAML reader for untrusted text: bounded in size, in expanded nodes, and in number length.

``yaml.safe_load`` constructs only plain data, but an alias bomb ("billion
laughs") of a few hundred bytes expands to billions of nodes as soon as
anything walks the result (pydantic validation does), and a 5,000-digit
integer raises a bare ``ValueError``. Every YAML the bot reads from a person
(requests, issue forms, reports, specs, front matter) goes through ``load``,
which refuses both with one line naming the limit.
"""

from __future__ import annotations

from typing import Any

import yaml

from bot.model import RequestError

MAX_CHARS = 5_000_000
MAX_NODES = 200_000


class YAMLLimitError(RequestError):
    """The YAML is too large once its aliases are expanded, or holds a number too long to read."""


def load(text: str, *, what: str = "YAML", max_chars: int = MAX_CHARS, max_nodes: int = MAX_NODES) -> Any:
    """Parse one YAML document. Raises yaml.YAMLError for syntax errors and YAMLLimitError for bombs."""
    if len(text) > max_chars:
        raise YAMLLimitError(f"{what}: {len(text):,} characters is more than the {max_chars:,} the bot reads")
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # PyYAML composes recursively
            raise YAMLLimitError(f"{what}: nested too deeply to be a real document; flatten it") from None
        if node is None:
            return None
        expanded = _expanded_size(node, max_nodes)
        if expanded > max_nodes:
            raise YAMLLimitError(
                f"{what}: expands to more than {max_nodes:,} values through anchors and aliases; "
                "write the values out instead of nesting aliases"
            )
        try:
            return loader.construct_document(node)
        except ValueError as exc:  # int() refuses more than sys.get_int_max_str_digits() digits
            if "digits" in str(exc):
                raise YAMLLimitError(
                    f"{what}: a number has more digits than any real value needs; shorten it"
                ) from None
            raise
    finally:
        loader.dispose()


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """Values the document holds once every alias is expanded (each shared node counted per use)."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # on the current path: meeting one again is a cycle (`&a [*a]`)
    # Iterative post-order walk: aliases make the node graph a DAG (or worse), and nesting can be deep.
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if not done:
            if id(node) in open_:
                return limit + 1  # a cycle expands without end
            open_.add(id(node))
            stack.append((node, True))
            for c in children:
                if id(c) in open_:
                    return limit + 1
                if id(c) not in sizes:
                    stack.append((c, False))
            continue
        open_.discard(id(node))
        sizes[id(node)] = min(limit + 1, 1 + sum(sizes[id(c)] for c in children))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []
