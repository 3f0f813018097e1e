"""The error every benchmark-report check raises (one line naming the problem and the fix), and how a
loader turns the results it cannot use into listed rejections instead of errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from bot.model import RequestError


class ReportError(RequestError):
    """A benchmark report, or a results directory, that cannot be used."""


class _Placed(Protocol):
    rel: str


R = TypeVar("R", bound=_Placed)


def keep_bound(
    items: Iterable[R], binder: Callable[[R], str | None] | None, rejected: list[tuple[str, str]]
) -> list[R]:
    """The items ``binder`` accepts (None: all); each refused one goes to ``rejected`` with the binder's reason,
    so a result bound to another arm, plugin or image is listed as left out, never silently dropped or used."""
    if binder is None:
        return list(items)
    kept = []
    for item in items:
        reason = binder(item)
        if reason is None:
            kept.append(item)
        else:
            rejected.append((item.rel, reason))
    return kept
