"""Benchmark report schema versions: one module per version, chosen by the report's ``version``.

llm-d-benchmark's own loader (``core.load_benchmark_report``) dispatches the same way;
v0.2.1 is an additive superset of v0.2 (multi-modal request statistics), so both feed
the same statistics. Each version module validates with upstream's pydantic model
(``bot/bench/schema/br``, vendored unchanged), so a report is accepted exactly when
upstream would accept it.
"""

from __future__ import annotations

import importlib
from typing import Any

from bot.bench.errors import ReportError

#: version string -> module under bot.bench.report_schema
VERSIONS: dict[str, str] = {"0.2": "v0_2", "0.2.1": "v0_2_1"}
CONVERT_HINT = (
    "convert with `python -m llmdbenchmark.analysis.benchmark_report.cli -w <harness> -b 0.2 <native-file> <out.yaml>`"
)


def check_version(doc: dict) -> str:
    """The report's schema version, or ReportError before schema validation gives a less helpful message."""
    if "version" not in doc:
        raise ReportError(f"wrong version: no 'version' field; expected one of {_known()}")
    version = doc["version"]
    if isinstance(version, str) and version.strip() == "0.1":
        raise ReportError(f"v0.1 report: {CONVERT_HINT}")
    if isinstance(version, float) and f"{version:g}" in VERSIONS:
        raise ReportError(
            f"wrong version {version!r}: expected the string '{version:g}' (quote it: version: '{version:g}')"
        )
    if version not in VERSIONS:
        raise ReportError(f"wrong version {version!r}: expected one of {_known()}; {CONVERT_HINT}")
    return version


def validate(doc: dict) -> str:
    """Validate a parsed report with its version's upstream model; returns the version."""
    version = check_version(doc)
    module = importlib.import_module(f"{__name__}.{VERSIONS[version]}")
    module.validate(doc)
    return version


def _known() -> str:
    return ", ".join(f"'{v}'" for v in VERSIONS)


def _where(parts: list[Any] | tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"
