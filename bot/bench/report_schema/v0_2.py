"""Benchmark report v0.2: llm-d-benchmark's ``BenchmarkReportV02`` (vendored unchanged)."""

from __future__ import annotations

from bot.bench.report_schema.pydantic_errors import validate_with

VERSION = "0.2"


def validate(doc: dict) -> None:
    from bot.bench.schema.br.schema_v0_2 import BenchmarkReportV02

    validate_with(BenchmarkReportV02, doc)
