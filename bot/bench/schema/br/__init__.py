"""llm-d-benchmark's benchmark report pydantic models, vendored unchanged (see ../NOTICE.md)."""
