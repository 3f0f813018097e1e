"""Fixtures for tests/bench (helpers live in bench_helpers.py so test modules can import them)."""

from __future__ import annotations

import pytest

from tests.bench.bench_helpers import write_report


@pytest.fixture
def results_factory(tmp_path):
    """Write reports into tmp_path/results; returns (root, write) where write(...) mirrors write_report."""
    root = tmp_path / "results"
    root.mkdir()

    def write(*args, **kwargs):
        return write_report(root, *args, **kwargs)

    return root, write
