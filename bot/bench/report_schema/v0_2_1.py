"""Benchmark report v0.2.1 (additive superset of v0.2): llm-d-benchmark's ``BenchmarkReportV021``."""

from __future__ import annotations

from bot.bench.report_schema.pydantic_errors import validate_with

VERSION = "0.2.1"


def validate(doc: dict) -> None:
    from bot.bench.schema.br.schema_v0_2_1 import BenchmarkReportV021

    validate_with(BenchmarkReportV021, doc)
