"""OpenEvolve hypothesis-mode comments: the claims the evolved program made about itself.

In hypothesis mode (``examples/blis_router/hypo_explained.md``) the LLM writes,
inside the EVOLVE-BLOCK, triples such as::

    // HYPOTHESIS-1: Large-prefix requests benefit from cache affinity boost
    // MECHANISM-1: Requests with >400 tokens have more KV blocks to reuse,
    //   so routing to high-CacheHitRate instances avoids recomputation
    // EXPECT-1: prefix_caching_e2e_ms < 235
    // RESULT-1: CONFIRMED (actual=228.4)

These are BLIS claims with a mechanism attached, so they become Track A
hypotheses. Rules, so the parse is predictable:

- ``//`` (Go) and ``#`` (Python) comments are both read, anywhere in the file.
- A comment line right after a tagged line whose text starts with two or more
  spaces continues it (the indented wrap above); other comments end it.
- Each N needs HYPOTHESIS-N, MECHANISM-N and EXPECT-N; ``EXPECT-N`` is
  ``<metric> <op> <threshold>`` with op one of ``< <= > >=``; RESULT-N is
  optional and written back by the evaluator.
- A triple whose RESULT is REFUTED did not validate the program in BLIS, so it
  is not transferred (reported as a SUGGESTION finding, never dropped silently).

Malformed triples are IMPORTANT findings; ``generate_hypotheses`` turns the
first one into a HypothesisError so the researcher fixes the comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.hypotheses.errors import HypothesisError
from bot.hypotheses.metrics import MetricTranslation, translate_metric
from bot.model import Finding, Severity

_TAG = re.compile(r"^\s*(?://|#)\s*(HYPOTHESIS|MECHANISM|EXPECT|RESULT)-(\d+)\s*:\s*(.*?)\s*$")
_CONT = re.compile(r"^\s*(?://|#)(\s{2,}\S.*?)\s*$")
_EXPECT = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)\s*(<=|>=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$")
_RESULT = re.compile(r"^(CONFIRMED|REFUTED|INCONCLUSIVE)\b(?:\s*\(\s*actual\s*=\s*([^)]*)\))?", re.IGNORECASE)

CHECK_MALFORMED = "G2.openevolve-malformed"
CHECK_REFUTED = "G2.openevolve-refuted-in-blis"
CHECK_UNMEASURED = "G2.metric-not-in-llm-d-benchmark"


@dataclass(frozen=True)
class OpenEvolveHypothesis:
    n: int
    hypothesis: str
    mechanism: str
    metric: MetricTranslation
    op: str  # < <= > >=
    threshold: float
    expect_text: str
    line: int  # 1-based line of HYPOTHESIS-N in the file
    result: str | None = None  # CONFIRMED / REFUTED / INCONCLUSIVE as BLIS recorded it
    actual: str | None = None

    @property
    def direction(self) -> str:
        """Relaxed to direction: below a threshold = the metric should go down relative to baseline."""
        return "decrease" if self.op.startswith("<") else "increase"


def _collect(text: str) -> dict[int, dict[str, list[tuple[int, str]]]]:
    found: dict[int, dict[str, list[tuple[int, str]]]] = {}
    last: tuple[int, str] | None = None  # (n, tag) a continuation extends
    for lineno, raw in enumerate(text.splitlines(), start=1):
        m = _TAG.match(raw)
        if m:
            tag, n, body = m.group(1), int(m.group(2)), m.group(3)
            found.setdefault(n, {}).setdefault(tag, []).append((lineno, body))
            last = (n, tag)
            continue
        c = _CONT.match(raw)
        if c and last is not None and "EVOLVE-BLOCK" not in raw:
            n, tag = last
            line0, body = found[n][tag][-1]
            found[n][tag][-1] = (line0, f"{body} {c.group(1).strip()}".strip())
            continue
        last = None
    return found


def parse_openevolve(text: str, path: str = "") -> tuple[list[OpenEvolveHypothesis], list[Finding]]:
    """Every well-formed, not-refuted triple (ordered by N) plus findings for the rest."""
    where = path or None
    out: list[OpenEvolveHypothesis] = []
    findings: list[Finding] = []

    def bad(line: int, msg: str, fix: str) -> None:
        findings.append(
            Finding(severity=Severity.IMPORTANT, check=CHECK_MALFORMED, message=msg, file=where, line=line, fix=fix)
        )

    for n, tags in sorted(_collect(text).items()):
        first_line = min(ln for entries in tags.values() for ln, _ in entries)
        dup = [t for t, entries in sorted(tags.items()) if len(entries) > 1]
        if dup:
            lines = ", ".join(str(ln) for t in dup for ln, _ in tags[t])
            bad(
                first_line,
                f"{'/'.join(f'{t}-{n}' for t in dup)} appears more than once (lines {lines})",
                "renumber so each N is used by one triple",
            )
            continue
        missing = [t for t in ("HYPOTHESIS", "MECHANISM", "EXPECT") if t not in tags]
        if missing:
            bad(
                first_line,
                f"hypothesis {n} has no {', '.join(f'{t}-{n}' for t in missing)} line",
                f"write all three: // HYPOTHESIS-{n}: ..., // MECHANISM-{n}: ..., // EXPECT-{n}: <metric> < <threshold>",
            )
            continue
        ((h_line, h_text),) = tags["HYPOTHESIS"]
        ((_, m_text),) = tags["MECHANISM"]
        ((e_line, e_text),) = tags["EXPECT"]
        if not h_text or not m_text:
            bad(h_line, f"HYPOTHESIS-{n} or MECHANISM-{n} is empty", "say what improves and why")
            continue
        em = _EXPECT.match(e_text)
        if not em:
            bad(
                e_line,
                f"EXPECT-{n}: {e_text!r} is not '<metric> <op> <threshold>'",
                f"write e.g. // EXPECT-{n}: e2e_mean_ms < 1200 (op one of < <= > >=)",
            )
            continue
        try:
            metric = translate_metric(em.group(1))
        except HypothesisError as exc:
            bad(e_line, f"EXPECT-{n}: {exc}", "use a metric llm-d-benchmark reports")
            continue
        result = actual = None
        if "RESULT" in tags:
            ((r_line, r_text),) = tags["RESULT"]
            rm = _RESULT.match(r_text)
            if not rm:
                bad(
                    r_line,
                    f"RESULT-{n}: {r_text!r} is not CONFIRMED, REFUTED or INCONCLUSIVE",
                    "leave RESULT lines as the evaluator wrote them",
                )
                continue
            result, actual = rm.group(1).upper(), (rm.group(2) or "").strip() or None
        if result == "REFUTED":
            findings.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=CHECK_REFUTED,
                    file=where,
                    line=h_line,
                    message=f"HYPOTHESIS-{n} was REFUTED in BLIS (actual={actual}); it is not transferred to llm-d",
                    fix="remove the comment triple, or re-run it in BLIS if the code changed since",
                )
            )
            continue
        if metric.short is None:
            findings.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=CHECK_UNMEASURED,
                    file=where,
                    line=e_line,
                    message=f"EXPECT-{n}: {metric.source}: {metric.why_unmeasured}; the Track A hypothesis carries no benchmark prediction",
                    fix="add an EXPECT on e2e_mean_ms / e2e_p95_ms / ttft_mean_ms if the claim is about latency",
                )
            )
        out.append(
            OpenEvolveHypothesis(
                n=n,
                hypothesis=h_text,
                mechanism=m_text,
                metric=metric,
                op=em.group(2),
                threshold=float(em.group(3)),
                expect_text=e_text,
                line=h_line,
                result=result,
                actual=actual,
            )
        )
    return out, findings
