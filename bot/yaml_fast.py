"""Plain YAML built straight from libyaml's events, in the one walk that also checks its bounds.

``yaml_safe.load_yaml`` walks a document's parser events to check its bounds, then lets PyYAML load it: libyaml
parses it a second time, PyYAML's composer builds a node graph and its constructor turns that graph into Python
values, a few Python calls per value. On a benchmark report (6.5 kB, 700 values) that is most of reading it, and a
rehearsal reads 140 of them. Almost every document the bot reads is plain: mappings, sequences and scalars, no
anchors, aliases, explicit tags, merge keys or timestamps. For those, ``build`` makes the values as it walks the
events once, resolving each scalar exactly as PyYAML's safe loader does (its own resolver table and constructors).

Anything else, and anything a bound refuses, raises ``NotPlain``: the caller then takes the general path, which
checks and loads the document as before and says what is wrong with it in the same words. So the values are
PyYAML's and the errors are ``yaml_safe``'s; this only skips the work a plain document does not need.
"""

from __future__ import annotations

import functools
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import BaseResolver

_CONSTRUCTOR = SafeConstructor()
_TAG = "tag:yaml.org,2002:"
#: The implicit tags built here, each by the safe constructor's own method; any other (merge ``<<``, timestamp,
#: value ``=``) sends the document down the general path.
_BUILDERS = {
    _TAG + "bool": _CONSTRUCTOR.construct_yaml_bool,
    _TAG + "int": _CONSTRUCTOR.construct_yaml_int,
    _TAG + "float": _CONSTRUCTOR.construct_yaml_float,
    _TAG + "null": _CONSTRUCTOR.construct_yaml_null,
}
#: What a loader builds from a plain document: its mappings, sequences and the scalars above.
_PLAIN_TAGS = ("map", "seq", "str", "bool", "int", "float", "null")
_NO_KEY = object()


class NotPlain(Exception):
    """The document needs PyYAML's general path: it uses a feature not built here, or breaks a bound."""


class _Open:
    """A mapping or sequence being filled, with a mapping's pending key and the keys it has seen."""

    __slots__ = ("is_mapping", "key", "seen", "value")

    def __init__(self, value: dict | list):
        self.value, self.is_mapping, self.key, self.seen = value, isinstance(value, dict), _NO_KEY, set()


@functools.cache
def resolvers(loader: type) -> dict | None:
    """The loader's implicit resolvers by first character, if it builds plain documents as the safe loader does:
    the safe constructor's own methods for every plain tag and no path resolvers. A loader may drop a resolver (the
    benchmark reports' keeps timestamps as text); one with its own constructors takes the general path (None)."""
    own = getattr(loader, "yaml_constructors", {})
    safe = SafeConstructor.yaml_constructors
    if getattr(loader, "yaml_path_resolvers", None) or any(
        own.get(_TAG + t) is not safe[_TAG + t] for t in _PLAIN_TAGS
    ):
        return None
    methods = [m for m in dir(SafeConstructor) if m.startswith(("construct", "flatten"))]
    if any(getattr(loader, m, None) is not getattr(SafeConstructor, m) for m in methods):
        return None  # a subclass that builds some value its own way
    if getattr(loader, "resolve", None) is not BaseResolver.resolve:
        return None
    return loader.yaml_implicit_resolvers


def build(text: str, loader: type, max_depth: int, max_digits: int) -> Any:
    """The value ``yaml.load(text, Loader=loader)`` gives, for a plain document within the bounds; else ``NotPlain``.

    ``loader`` is a safe loader (``yaml_safe`` checks that); libyaml's syntax errors propagate as PyYAML raises
    them, and the caller's general path reports them.
    """
    table = resolvers(loader)
    if table is None:
        raise NotPlain
    wildcard = table.get(None, [])
    stack: list[_Open] = []
    root: Any = None
    documents = 0
    for event in yaml.parse(text, Loader=loader):
        kind = event.__class__
        if kind is yaml.ScalarEvent:
            if event.anchor is not None or len(event.value) > max_digits:
                raise NotPlain
            value = _scalar(event, table, wildcard)
            if not stack:
                root = value
                continue
            top = stack[-1]
            if not top.is_mapping:
                top.value.append(value)
            elif top.key is _NO_KEY:
                seen = (event.value, not event.style and event.implicit[0])
                if seen in top.seen:
                    raise NotPlain
                top.seen.add(seen)
                top.key = value
            else:
                top.value[top.key] = value
                top.key = _NO_KEY
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if event.anchor is not None or event.tag not in (None, "!") or len(stack) >= max_depth:
                raise NotPlain
            if stack and stack[-1].is_mapping and stack[-1].key is _NO_KEY:
                raise NotPlain  # a collection as a mapping key
            stack.append(_Open({} if kind is yaml.MappingStartEvent else []))
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            done = stack.pop().value
            if not stack:
                root = done
            elif stack[-1].is_mapping:
                stack[-1].value[stack[-1].key] = done
                stack[-1].key = _NO_KEY
            else:
                stack[-1].value.append(done)
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise NotPlain
        elif kind is yaml.AliasEvent:
            raise NotPlain
    return root


def _scalar(event: yaml.ScalarEvent, table: dict, wildcard: list) -> Any:
    """The scalar as PyYAML's composer tags it (``Resolver.resolve``) and its safe constructor builds it."""
    if event.tag not in (None, "!"):
        raise NotPlain
    value = event.value
    if not event.implicit[0]:
        return value  # quoted or a block scalar without a tag: a string
    for tag, pattern in table.get(value[0] if value else "", []) + wildcard:
        if pattern.match(value):
            builder = _BUILDERS.get(tag)
            if builder is None:
                raise NotPlain
            return builder(ScalarNode(tag, value))
    return value
