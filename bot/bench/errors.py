"""The error every benchmark-report check raises (one line naming the problem and the fix), and how a
loader turns the results it cannot use into listed rejections instead of errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from bot.model import RequestError


class ReportError(RequestError):
    """A benchmark report, or a results directory, that cannot be used."""


class NoUsableReports(ReportError):
    """A results directory with no report to judge: where it is (``root``), what is wrong (``problem``) and what
    to do (``advice``: the ``--results`` layout, or the flag that admits sample data), kept apart so that stage 5,
    which judges the reports on the promotion branch from a temporary copy, names the branch's directory instead
    of its copy and gives the advice of the home it runs in (``bot.stages.run_validate``)."""

    def __init__(self, root: object, problem: str, advice: str):
        super().__init__(f"{root}: {problem}; {advice}")
        self.root, self.problem, self.advice = str(root), problem, advice


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


class _Hashed(Protocol):
    rel: str
    sha256: str


H = TypeVar("H", bound=_Hashed)


def bound_then_deduped(
    items: list[H],
    binder: Callable[[H], str | None] | None,
    rejected: list[tuple[str, str]],
    dedupe: Callable[[list[H], list[tuple[str, str]]], list[H]],
    settle: Callable[[list[H], list[tuple[str, str]]], list[H]] | None = None,
) -> list[H]:
    """The items that bind, less duplicates among them: bound first, so a copy filed under the wrong arm is
    refused for that, and the genuine result it copies still counts (once), instead of being called its
    duplicate and left out with it. A refused item that is byte-identical to a counted one says so.
    ``settle`` refuses what only the bound items together show (reports of two runner builds merged)."""
    start = len(rejected)
    bound = keep_bound(items, binder, rejected)
    if settle is not None:
        bound = settle(bound, rejected)
    refused = len(rejected)
    kept = dedupe(bound, rejected)
    counted = {i.sha256: i.rel for i in kept}
    sha = {i.rel: i.sha256 for i in items}
    for n in range(start, refused):
        rel, reason = rejected[n]
        twin = counted.get(sha.get(rel, ""))
        if twin is not None and twin != rel:
            rejected[n] = (rel, f"{reason} (a copy of {twin}, which is counted there)")
    return kept
