"""Upstream's pydantic validation, its first error said as one line a person can act on.

Pydantic locations include union-branch markers (``list[Component]``,
``function-after[...]``) that are not keys of the document; they are dropped by
walking the document along the location and keeping only the steps that exist,
so the message names the report's own path.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from bot.bench.errors import ReportError
from bot.bench.report_schema import _where

_UNITS_MSG = re.compile(r'Invalid units "([^"]*)"(?: for "([^"]+)")?, must be one of: (.*)$')


def _doc_path(doc: Any, loc: tuple[Any, ...]) -> tuple[list[Any], list[Any]]:
    """(steps of ``loc`` that exist in ``doc``, the last step that does not, if a key was expected)."""
    node, path, rest = doc, [], []
    for step in loc:
        if (isinstance(node, dict) and isinstance(step, str) and step in node) or (
            isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        ):
            node = node[step]
            path.append(step)
        else:
            rest.append(step)
    return path, rest


def validate_with(model: type[BaseModel], doc: dict) -> None:
    try:
        model.model_validate(doc)
    except ValidationError as exc:
        raise ReportError(describe(exc, doc)) from None


def describe(exc: ValidationError, doc: dict) -> str:
    err = exc.errors(include_url=False)[0]
    loc = tuple(err.get("loc", ()))
    path, rest = _doc_path(doc, loc)
    kind = err.get("type", "")
    if kind == "missing":
        name = next((s for s in reversed(rest) if isinstance(s, str) and not _is_marker(s)), "?")
        return f"missing required field '{name}' at {_where(path)}"
    if kind == "extra_forbidden":
        return f"unknown field at {_where(path[:-1])}: '{path[-1] if path else '?'}' is not a field of the v0.2 schema"
    if kind == "enum" and path and path[-1] == "units":
        return f"wrong unit {err.get('input')!r} at {_where(path)}; a v0.2 unit is one of {_expected(err)}"
    m = _UNITS_MSG.search(str(err.get("msg", "")))
    if m:
        unit, field, allowed = m.groups()
        field = field or _field_with_unit(_node(doc, path), unit, allowed.split())
        return f"wrong unit {unit!r} at {_where([*path, field, 'units'])}; expected one of {', '.join(allowed.split())}"
    msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    got = err.get("input")
    shown = f" (got {got!r})" if isinstance(got, (str, int, float, bool)) or got is None else ""
    return f"schema violation at {_where(path)}: {msg}{shown}"


def _node(doc: Any, path: list[Any]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _field_with_unit(node: Any, unit: str, allowed: list[str]) -> str:
    """The statistic whose units broke a model's unit rule (v0.2's messages name only the unit)."""
    if isinstance(node, dict):
        for name, stat in node.items():
            if isinstance(stat, dict) and stat.get("units") == unit and unit not in allowed:
                return name
    return "?"


def _is_marker(step: str) -> bool:
    return "[" in step or "(" in step


def _expected(err: dict) -> str:
    expected = (err.get("ctx") or {}).get("expected", "")
    return expected.replace("'", "") or "the units enum"
