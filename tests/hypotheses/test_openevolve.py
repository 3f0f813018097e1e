"""OpenEvolve hypothesis-mode comment parsing."""

from __future__ import annotations

from bot.hypotheses import parse_openevolve
from bot.model import Severity


def _one(text):
    triples, findings = parse_openevolve(text, "prog.go")
    return triples, findings


def test_python_comments_and_ops():
    text = (
        "# HYPOTHESIS-2: throughput rises\n# MECHANISM-2: fewer swaps\n# EXPECT-2: tokens_per_sec >= 1.5e3\n"
        "# HYPOTHESIS-1: ttft falls\n# MECHANISM-1: warm caches\n# EXPECT-1: ttft_p99_ms <= 80\n"
    )
    triples, findings = _one(text)
    assert findings == []
    assert [(t.n, t.metric.short, t.op, t.threshold, t.direction) for t in triples] == [
        (1, "ttft_p99", "<=", 80.0, "decrease"),
        (2, "throughput", ">=", 1500.0, "increase"),
    ]
    assert triples[0].line == 4


def test_plain_comment_after_a_triple_is_not_a_continuation():
    text = "// HYPOTHESIS-1: a\n// MECHANISM-1: b\n// compute scores\n// EXPECT-1: e2e_mean_ms < 3\n"
    (t,), _ = _one(text)
    assert t.mechanism == "b"


def _malformed(text):
    triples, findings = _one(text)
    assert triples == []
    assert len(findings) == 1 and findings[0].severity is Severity.IMPORTANT
    return findings[0]


def test_malformed_expect_is_a_finding_with_the_line():
    f = _malformed("// HYPOTHESIS-1: a\n// MECHANISM-1: b\n// EXPECT-1: e2e_mean_ms is lower\n")
    assert f.line == 3 and f.file == "prog.go" and "EXPECT-1" in f.message and "EXPECT-1: e2e_mean_ms < 1200" in f.fix


def test_missing_mechanism():
    f = _malformed("// HYPOTHESIS-3: a\n// EXPECT-3: e2e_mean_ms < 3\n")
    assert "no MECHANISM-3" in f.message and f.line == 1


def test_duplicate_number():
    f = _malformed("// HYPOTHESIS-1: a\n// MECHANISM-1: b\n// EXPECT-1: e2e_mean_ms < 3\n// HYPOTHESIS-1: c\n")
    assert "HYPOTHESIS-1 appears more than once (lines 1, 4)" in f.message


def test_unknown_expect_metric():
    f = _malformed("// HYPOTHESIS-1: a\n// MECHANISM-1: b\n// EXPECT-1: vibes_ms < 3\n")
    assert "unknown metric 'vibes_ms'" in f.message


def test_unmeasured_metric_is_kept_with_a_suggestion():
    triples, findings = _one("// HYPOTHESIS-1: a\n// MECHANISM-1: b\n// EXPECT-1: combined_score > -4000\n")
    assert len(triples) == 1 and triples[0].metric.short is None
    assert [f.severity for f in findings] == [Severity.SUGGESTION]
    assert "llm-d-benchmark does not report it" in findings[0].message


def test_reported_but_unmapped_metric_blames_the_bot():
    triples, findings = _one("// HYPOTHESIS-1: a\n// MECHANISM-1: b\n// EXPECT-1: e2e_p99p9_ms < 3000\n")
    assert triples[0].metric.short is None and triples[0].metric.reported.endswith("request_latency.p99p9")
    assert "the bot has no metric for it" in findings[0].message and "does not report" not in findings[0].message


def test_bad_result_line():
    f = _malformed("// HYPOTHESIS-1: a\n// MECHANISM-1: b\n// EXPECT-1: e2e_ms < 3\n// RESULT-1: MAYBE\n")
    assert f.line == 4
