"""How one review round's findings are put together, and what carries over between rounds.

- The deterministic checklist's findings always stand at their severity: no
  model judgement lowers one. A hazard inherent in the evolved program
  (``hazard.*``: a threshold tuned on simulated load, a signal llm-d does not
  have) that the author justified and the independent reviewer accepted
  carries both texts for the person deciding the gate, and still blocks: a
  model can be talked into accepting (a paraphrased instruction in the
  program's comments passes any scan), so its acceptance informs, never
  decides. A claimed *fix* changes nothing; the checklist sees whether it is
  fixed.
- When text from outside addresses a model (``untrusted.scan_instructions``),
  that is an IMPORTANT finding, and no acceptance by the reviewer counts in
  that round: the same text reached the reviewer, so its judgement is not
  trusted to lower anything.
- A finding that matches a blocking finding of the previous round (after the
  author's fix round) is marked recurring. The engine opens the gate
  unconverged when a round repeats the previous round's blocking findings.
"""

from __future__ import annotations

from bot.agents.record import AuthorRecord, FindingRef
from bot.agents.untrusted import scan_instructions
from bot.model import Finding, ReviewRound, Severity

SECURITY_CHECK = "security.untrusted-instructions"


def security_findings(untrusted: dict[str, str]) -> list[Finding]:
    out = []
    for source, text in sorted(untrusted.items()):
        for hit in scan_instructions(source, text):
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=SECURITY_CHECK,
                    message=f"{source}, line {hit.line}, addresses a language model: “{hit.text}”. It reached the "
                    "author and reviewer only as delimited data; no model judgement lowers a finding this round",
                    fix="remove the instruction from the input, or confirm it is harmless and decide the gate yourself",
                )
            )
    return out


def weigh_responses(
    findings: list[Finding], record: AuthorRecord | None, accepted: dict[str, bool], *, trusted: bool
) -> list[Finding]:
    if record is None or not trusted:
        return findings
    out = []
    for f in findings:
        response = record.response_for(f)
        if (
            f.by is None
            and f.severity.blocking
            and f.check.startswith("hazard.")
            and response is not None
            and response.action == "justified"
            and accepted.get(response.id) is True
        ):
            f = f.model_copy(
                update={
                    "message": f"{f.message} [weighed: the author justified it ({response.id}: {response.note}) and "
                    "the independent reviewer accepted the justification; a person decides]",
                }
            )
        out.append(f)
    return out


def mark_recurring(findings: list[Finding], previous: ReviewRound | None) -> list[Finding]:
    if previous is None:
        return findings
    earlier = [FindingRef.of(p) for p in previous.blocking]
    return [
        f.model_copy(update={"recurring": True}) if f.recurring or any(r.refers_to(f) for r in earlier) else f
        for f in findings
    ]


def dedupe(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in findings:
        key = (f.check, f.file, f.line, f.source_line, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
