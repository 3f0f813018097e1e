"""The one way the bot reads YAML: safe tags only, and bounded before anything is built.

Every YAML the bot reads (promotion.yaml, issue forms, the bot's configuration,
the dictionary, benchmark reports, evaluation specs, hypothesis front matter,
EndpointPickerConfigs on the branch) can come from someone else. PyYAML's safe loader refuses arbitrary objects but
not these:

- **alias bombs** ("billion laughs"): nine anchors of nine aliases each load as a
  few hundred shared Python objects, then expand to hundreds of millions of
  values the first time anything walks them (a request fingerprint, pydantic,
  ``json.dumps``): the run hangs far from the file that caused it;
- **deep nesting**: libyaml's composer recurses in C, so ``[[[[...`` 100,000
  levels deep kills the process with a segmentation fault (no exception);
- **huge integers**: Python refuses to convert more than 4,300 digits and the
  loader lets that ``ValueError`` escape as a traceback.

So the text is first scanned as a stream of parser events (libyaml's parser is
iterative and cheap, about a third of a full load), counting nesting depth and
the size the document would have with every alias expanded, and only then
loaded. A document that breaks a bound is refused with ``YamlInputError``,
whose message names the line and the limit; callers prefix their file name and
turn it into their own ``RequestError`` (this module sits below bot.model, so it imports
nothing of ours but ``yaml_fast``, which builds plain documents in one walk).
"""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from bot import yaml_fast

#: The largest YAML document the bot reads. Upstream benchmark reports are tens of kB.
MAX_BYTES = 16 * 1024 * 1024
#: Deepest nesting of mappings and sequences; the bot's own documents stay under 12.
MAX_DEPTH = 64
#: How many values aliases may add to a document beyond those it spells out.
MAX_ALIAS_EXPANSION = 100_000

SAFE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_INTLIKE = re.compile(r"^[-+]?(?:0[box])?[0-9a-fA-F_:]+$")


class YamlInputError(ValueError):
    """A YAML text the bot will not load; the message says where and why, without a file name."""


def load_yaml(text: str, *, loader: type = SAFE_LOADER, first_line: int = 1) -> Any:
    """Parse ``text`` with a safe loader after checking its size, nesting, aliases and integers.

    ``first_line`` is the line of the file ``text`` starts at (front matter starts at 2), so that
    messages point at the file's lines.
    """
    if not issubclass(loader, yaml.constructor.SafeConstructor) or issubclass(loader, yaml.constructor.FullConstructor):
        raise TypeError(f"{loader.__name__} is not a safe loader")
    if len(text) > MAX_BYTES:
        raise YamlInputError(f"the document is {len(text) / 1e6:.1f} MB; the limit is {MAX_BYTES // (1024 * 1024)} MiB")
    if yaml_fast.resolvers(loader) is not None:  # one walk for a plain document; else, or on any refusal, as below
        with contextlib.suppress(yaml_fast.NotPlain, yaml.YAMLError, ValueError):
            return yaml_fast.build(text, loader, MAX_DEPTH, _INT_DIGITS)
    try:
        _check_events(text, first_line - 1)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if "nesting depth" in str(exc) and mark is not None:
            # PyYAML 6.0.3+ scans a flow collection's openings ahead of its events and stops at its own
            # limit (far above ours) before the event walk reaches MAX_DEPTH: the same refusal, one message.
            raise YamlInputError(f"nested deeper than {MAX_DEPTH} levels at line {mark.line + first_line}") from None
        raise YamlInputError(_describe(_pure_parser_error(text) or exc, first_line - 1)) from None
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise YamlInputError(_describe(exc, first_line - 1)) from None
    except ValueError as exc:  # a conversion the scan did not foresee
        raise YamlInputError(f"a value cannot be converted ({str(exc).split(';')[0]})") from None


def read_yaml_text(path: Path) -> str:
    """The text of a YAML file, refusing files over MAX_BYTES before reading them.

    Raises FileNotFoundError, UnicodeDecodeError or YamlInputError; callers name the file.
    """
    check_yaml_size(path)
    return path.read_text(encoding="utf-8")


def check_yaml_size(path: Path) -> None:
    """YamlInputError if the file is larger than any YAML the bot reads (checked before reading it)."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise YamlInputError(f"the file is {size / 1e6:.1f} MB; the limit is {MAX_BYTES // (1024 * 1024)} MiB")


def _check_events(text: str, offset: int) -> None:
    """Walk the parser events once: nesting depth, expanded size, integer lengths, keys repeated in a mapping.

    The scalar, by far the most frequent event, is handled inline: a few function calls per scalar (one per
    bound, and a line number for every key) cost as much again as libyaml's parse. Nothing is skipped: every
    event is counted and every bound checked; a scalar is looked at further only when it is long enough to be
    a refused integer, a line number is computed only for a message.
    """
    physical = 0  # values written out in the text
    expanded_total = 0  # values with every alias expanded
    open_sizes: list[int] = []  # expanded size so far of each open collection
    open_anchors: list[str | None] = []
    sizes: dict[str, int] = {}  # anchor -> expanded size of its node (closed nodes only)
    keys: list[_Keys] = []  # per open collection: the keys a mapping has seen, to refuse a repeated one
    for event in yaml.parse(text, Loader=SAFE_LOADER):
        if isinstance(event, yaml.ScalarEvent):  # the most frequent event first
            physical += 1
            if len(event.value) > _INT_DIGITS:  # both of _check_scalar's refusals need this many characters
                _check_scalar(event, offset)
            if keys:
                parent = keys[-1]
                if parent.is_mapping and not parent.children % 2:  # a key: plain `1:` and `"1":` differ (int, str)
                    parent.add((event.value, not event.style and event.implicit[0]), event, offset)
                parent.children += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
            if open_sizes:
                open_sizes[-1] += 1
            else:
                expanded_total += 1
        elif isinstance(event, yaml.CollectionStartEvent):
            physical += 1
            if len(open_sizes) >= MAX_DEPTH:
                raise YamlInputError(f"nested deeper than {MAX_DEPTH} levels at line {_line(event, offset)}")
            open_sizes.append(1)
            open_anchors.append(event.anchor)
            keys.append(_Keys(isinstance(event, yaml.MappingStartEvent)))
        elif isinstance(event, yaml.CollectionEndEvent):
            size = open_sizes.pop()
            anchor = open_anchors.pop()
            keys.pop()
            if anchor is not None:
                sizes[anchor] = size
            expanded_total = _add(open_sizes, size, expanded_total)
            _child_done(keys)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                what = "refers to a collection that contains it" if event.anchor in open_anchors else "is undefined"
                raise YamlInputError(
                    f"alias *{event.anchor} at line {_line(event, offset)} {what}; write the value out"
                )
            expanded_total = _add(open_sizes, sizes[event.anchor], expanded_total)
            _child_done(keys)
        elif isinstance(event, yaml.DocumentEndEvent) and expanded_total - physical > MAX_ALIAS_EXPANSION:
            raise YamlInputError(
                f"aliases expand to {expanded_total - physical:,} values beyond the {physical:,} written out "
                f"(the limit is {MAX_ALIAS_EXPANSION:,}); a YAML bomb? write the values out instead"
            )


class _Keys:
    """A mapping's keys so far: YAML says a key appears once, PyYAML keeps the last silently (a typo'd copy of
    `title:` below the real one would win without a word)."""

    __slots__ = ("children", "is_mapping", "seen")

    def __init__(self, is_mapping: bool):
        self.is_mapping, self.children, self.seen = is_mapping, 0, set()

    def add(self, key: tuple[str, bool], event: yaml.ScalarEvent, offset: int) -> None:
        if key in self.seen and key[0] != "<<":
            line = _line(event, offset)
            raise YamlInputError(f"the key {key[0]!r} at line {line} appears twice in the same mapping; keep one")
        self.seen.add(key)


def _child_done(keys: list[_Keys]) -> None:
    if keys:
        keys[-1].children += 1


def _add(open_sizes: list[int], size: int, total: int) -> int:
    """Count a finished node into its parent, or into the document total at the top level."""
    if open_sizes:
        open_sizes[-1] += size
        return total
    return total + size


def _check_scalar(event: yaml.ScalarEvent, offset: int) -> None:
    value = event.value
    if len(value) > _INT_DIGITS and not event.style and event.implicit[0] and _INTLIKE.match(value):
        raise YamlInputError(
            f"the number at line {_line(event, offset)} has {len(value):,} digits; integers are limited to "
            f"{_INT_DIGITS:,} digits (quote it if it is text)"
        )
    if event.tag in ("tag:yaml.org,2002:int", "!!int") and len(value) > _INT_DIGITS:
        raise YamlInputError(
            f"the number at line {_line(event, offset)} has {len(value):,} digits; the limit is {_INT_DIGITS:,}"
        )


def _line(event: yaml.Event, offset: int) -> int:
    mark = getattr(event, "start_mark", None)
    return mark.line + 1 + offset if mark is not None else 0


def _pure_parser_error(text: str) -> yaml.YAMLError | None:
    """PyYAML's Python parser names syntax errors better than libyaml ("expected ',' or ']', but got
    '<stream end>'", at the line where the construct started); it is slow, so it runs only on failure."""
    try:
        for _ in yaml.parse(text, Loader=yaml.SafeLoader):
            pass
    except yaml.YAMLError as exc:
        return exc
    return None


def _describe(exc: yaml.YAMLError, offset: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1 + offset}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or "syntax error"
    return f"not valid YAML{where}: {problem}"
