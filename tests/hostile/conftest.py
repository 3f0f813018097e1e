"""Fixtures for the hostile-code tests."""

from __future__ import annotations

import pytest

from bot import PROJECT_ROOT


@pytest.fixture(scope="session")
def dictionary_and_translate():
    from bot.dictionary import load_dictionary
    from bot.golang.analyze import analyze
    from bot.golang.source import load_evolved_source
    from bot.golang.translate import translate

    d = load_dictionary()

    def run(corpus_name: str):
        src = load_evolved_source(PROJECT_ROOT / "examples" / "corpus" / corpus_name)
        return translate(src, analyze(src, d), d, plugin_type="t-hostile")

    return run


@pytest.fixture(scope="session")
def go_cache():
    from bot.golang import toolchain

    cache = toolchain.default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    return cache
