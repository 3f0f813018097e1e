"""``make_plan`` once per set of inputs in a process.

A rehearsal (``promote run --approve all``) makes the same plan twice: gate 2's
brief prices it (``bot.review.brief``) and stage 4 writes it, and its power and
sequential-design simulations are most of the work either time. The plan is a
pure function of the request, the hypotheses, the options and the bundled
priority-mix profile (seeded simulations), so it is kept under a key made of
all of them: a changed request, program, hypothesis or option is a new key.
A plan sized from earlier results (``prior_results``) reads a directory of
reports, so it is not kept; nor is a plan that fails (the error is raised
again, every time). Each caller gets its own deep copy, so no caller can change
another's plan.

Kept on disk too (``disk_path``), under the same key and a digest of the bot's own code and data (every file
under ``bot/`` and ``dictionary/``) and of numpy's and scipy's versions: the next process on the machine that
plans the same promotion with the same bot (a second rehearsal, ``promote plan`` after ``promote run``, every
``promote bench run`` and ``bench teardown`` on a GPU runner, which re-plan to check the committed
``evaluation.yaml``) reads it instead of simulating again. Only the bot writes there (never the sandbox, which
mounts none of it); a file that does not read as a plan is planned again and replaced.
``PROMOTION_PLAN_CACHE=off`` turns the disk copy off.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from bot import PROJECT_ROOT
from bot.bench.plan import plan_for
from bot.bench.plan_model import BenchmarkPlan
from bot.bench.priority_plan import UPSTREAM_PROFILE
from bot.model import Hypothesis, PromotionRequest, sha256_text

#: Plans kept: a process plans one promotion, or a test module a few dozen small ones.
SIZE = 16
#: Option values whose ``repr`` says all they are; any other value is planned for without the cache.
_PLAIN = (type(None), bool, int, float, str)


class _Inputs:
    """``plan_for``'s arguments, equal to another's when their key is (``_key``)."""

    def __init__(self, request: PromotionRequest, hypotheses: list[Hypothesis], options: dict[str, Any]):
        self.request, self.hypotheses, self.options = request, hypotheses, options
        self.key = _key(request, hypotheses, options)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Inputs) and other.key == self.key


def _key(request: PromotionRequest, hypotheses: Sequence[Hypothesis], options: dict[str, Any]) -> str:
    """Everything the plan is made from. ``source_text`` and ``base_dir`` are left out of the request's JSON
    (``exclude=True``), so they are named here; options are every parameter with its default filled in."""
    parts = [
        type(request).__qualname__,
        request.model_dump_json(),
        request.source_text,
        request.base_dir,
        [(type(h).__qualname__, h.model_dump_json()) for h in hypotheses],
        sorted((name, repr(value)) for name, value in options.items()),
        sha256_text(UPSTREAM_PROFILE.read_bytes()) if UPSTREAM_PROFILE.is_file() else None,
    ]
    return sha256_text(json.dumps(parts))


@lru_cache(maxsize=SIZE)
def _plan(inputs: _Inputs) -> BenchmarkPlan:
    path = disk_path(inputs.key)
    if path is not None and path.is_file():
        try:
            return BenchmarkPlan.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            pass  # unreadable or not a plan (an older model, a torn write by something else): planned again
    plan = plan_for(inputs.request, inputs.hypotheses, **inputs.options)
    if path is not None:
        _write(path, plan.model_dump_json().encode("utf-8"))
    return plan


def disk_path(key: str) -> Path | None:
    """Where the plan of ``key`` is kept on this machine for this bot (None: the disk copy is off)."""
    if os.environ.get("PROMOTION_PLAN_CACHE", "").strip().lower() in ("off", "0", "false", "no"):
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "promotion-bot" / "plans" / f"{sha256_text(key + code_digest())}.json"


@cache
def code_digest() -> str:
    """The bot's code and data and the numerical libraries' versions: a plan kept by another bot is not this one's."""
    import numpy
    import scipy

    h = hashlib.sha256(f"numpy {numpy.__version__} scipy {scipy.__version__}".encode())
    for top in ("bot", "dictionary"):
        for path in sorted((PROJECT_ROOT / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                h.update(path.relative_to(PROJECT_ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _write(path: Path, data: bytes) -> None:
    """Whole or not at all (``atomic_write``: another process may read it meanwhile); a cache that cannot be
    written is no error."""
    from bot.bench.run.manifest import atomic_write

    try:
        atomic_write(path, data)
    except OSError:
        return


def memoised_plan(
    request: PromotionRequest, hypotheses: Sequence[Hypothesis], options: dict[str, Any]
) -> BenchmarkPlan:
    """``plan_for(request, hypotheses, **options)``, computed once per key; a private copy every time."""
    bound = inspect.signature(plan_for).bind(request, list(hypotheses), **options)  # TypeError as plan_for's
    bound.apply_defaults()
    args = dict(bound.arguments)
    request, hypotheses = args.pop("request"), args.pop("hypotheses")
    if args.get("prior_results") is not None or any(type(v) not in _PLAIN for v in args.values()):
        return plan_for(request, hypotheses, **args)
    return _plan(_Inputs(request, hypotheses, args)).model_copy(deep=True)


def cache_info():
    """Hits and misses of the plans kept (``functools.lru_cache``'s ``cache_info``): the seam that shows a run
    planned once."""
    return _plan.cache_info()


def cache_clear() -> None:
    _plan.cache_clear()


__all__ = ["SIZE", "cache_clear", "cache_info", "code_digest", "disk_path", "memoised_plan"]
