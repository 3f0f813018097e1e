"""The generated plugin as an llm-d-router maintainer reviews it: nothing shipped reads as live when it cannot act,
the README speaks config rather than Go, and the code carried from BLIS names its origin and license."""

from __future__ import annotations

import re

import pytest

from .conftest import EXAMPLE, translate_path

ROUTE = 'func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {{\n{body}\n\treturn NewRoutingDecision("x", "y")\n}}\n'
LOOP = "\tfor _, snap := range state.Snapshots {{\n{inner}\n\t\t_ = snap\n\t}}"


@pytest.fixture(scope="module")
def example(dictionary):
    return translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")


def _file(tr, suffix: str) -> str:
    return next(t for p, t in tr.files.items() if p.endswith(suffix))


def _table(readme: str, heading: str) -> dict[str, str]:
    section = readme.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): line for line in section.splitlines() if (m := re.match(r"\| `([^`]+)` \|", line))}


def test_code_carried_from_blis_names_its_origin_and_license(example):
    """Found by a Go reviewer: evolved.go (carried from BLIS) and baseline.go (BLIS's scorers re-implemented) carried
    only the llm-d copyright line; upstream keeps the origin when it copies code."""
    _, _, tr = example
    for name in ("/evolved.go", "/baseline.go"):
        text = _file(tr, name)
        assert text.startswith("/*\nCopyright 2026 The llm-d Authors."), name
        assert "github.com/inference-sim/inference-sim" in text and "Apache License, Version 2.0" in text, name
