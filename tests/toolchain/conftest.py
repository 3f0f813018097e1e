"""Shared fixtures: one warm Go build cache for the whole session keeps each check to about a second."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.golang import toolchain


@pytest.fixture(scope="session")
def go_cache() -> Path:
    """The bot's own stable cache: the first run compiles the standard library, later runs reuse it."""
    cache = toolchain.default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    return cache
