"""llm-d-benchmark side of a promotion: metric names, v0.2 reports, and the benchmark plan."""
