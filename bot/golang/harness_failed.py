"""What a differential harness that did not answer says: whose problem it is, and how loudly to say it.

``fidelity_of`` reads the answer's fidelity, or why it is not measured (translate's IMPORTANT
``translate.fidelity-not-measured``). Two failures are the evolved program's own, so they are CRITICAL and replace
that finding: it prints on every call (``flood_findings``), or it does not compile as BLIS Go
(``does_not_compile``). Loading the program refuses Go syntax errors; type errors (an import left unused, a
variable declared and not used, a wrong type) show only when Go compiles it, and the harness is the first thing
that does: it builds BLIS's package ``sim`` with the program as ``evolved_program.go`` beside the mirror. A build
failing at a line of that file means the program is not one BLIS could have run (OpenEvolve scores such a program
as a failure), so nothing measured or approved after it means anything. A build that fails anywhere else (the
generated plugin, the mirror) is the bot's, and stays the IMPORTANT not-measured finding.
"""

from __future__ import annotations

import re

from bot.golang.blis_mirror import PROGRAM_FILE, program_line
from bot.golang.source import EvolvedSource
from bot.model import Fidelity, Finding, Severity

CHECK_DOES_NOT_COMPILE = "translate.program-does-not-compile"
CHECK_OUTPUT_FLOOD = "translate.output-flood"
#: Why no parameter has a generated test when the harness did not answer (the report's "not exercised" list).
HARNESS_DID_NOT_RUN = "the differential harness did not run, so no test case could be chosen (see the findings)"
#: How many of the compiler's errors the finding quotes.
_SHOWN = 3

#: A compiler error at a line of the composed program: ``../blis/sim/evolved_program.go:5:2: "math" imported ...``
_AT_PROGRAM = re.compile(rf"(?:^|[\s/]){re.escape(PROGRAM_FILE)}:(\d+)(?::(\d+))?:\s*(.+)$")


def program_errors(answer: dict) -> list[tuple[int, str]]:
    """(line of the composed program, the compiler's message) for each error the harness build reported in the
    evolved program's own file, in the compiler's order; none when the harness built or failed elsewhere."""
    if answer.get("ok") or answer.get("failed") != "build":
        return []
    out = []
    for raw in answer.get("build_log", "").splitlines():
        m = _AT_PROGRAM.search(raw.strip())
        if m and not m.group(3).startswith("too many errors"):
            out.append((int(m.group(1)), m.group(3).strip()))
    return out


def does_not_compile(answer: dict, src: EvolvedSource) -> list[Finding]:
    """CRITICAL when the evolved program itself does not compile as BLIS Go, at its first error's evolved line."""
    errors = program_errors(answer)
    if not errors:
        return []
    lines = [program_line(src, f"{PROGRAM_FILE}:{n}") for n, _ in errors]
    said = "; ".join(
        f"{_where(at, n)}: {message}" for at, (n, message) in list(zip(lines, errors, strict=True))[:_SHOWN]
    )
    more = f" (and {len(errors) - _SHOWN} more)" if len(errors) > _SHOWN else ""
    return [
        Finding(
            severity=Severity.CRITICAL,
            check=CHECK_DOES_NOT_COMPILE,
            source_line=lines[0],
            message=(
                f"the evolved program does not compile as BLIS Go, so BLIS could not have run it: {said}{more}; "
                "nothing was measured against it, and no generated test case could be chosen (both run it)"
            ),
            fix=(
                f"make the program compile as BLIS Go ({_hint(errors[0][1])}), then translate again; if this very "
                "program compiles in your BLIS checkout, the bot's BLIS mirror lacks what it uses: report the gap "
                "in gomirror/blis"
            ),
        )
    ]


def _where(evolved_line: int | None, program_line_: int) -> str:
    """An error's place for the author: the evolved line, or the import block the bot added to a pasted function."""
    return (
        f"line {evolved_line}" if evolved_line else f"{PROGRAM_FILE}:{program_line_} (the import block the bot added)"
    )


def _hint(message: str) -> str:
    """What to change for the commonest compiler messages an evolution leaves behind."""
    if "imported and not used" in message:
        return "delete the import the program no longer uses, or use it again"
    if "declared and not used" in message:
        return "delete the variable or use it"
    return "the compiler's message above says what to change; `go build ./sim/` in BLIS shows the same"


#: How a not-measured fidelity's reason starts when the harness did not compile (else it died at run time).
NOT_BUILT = "the differential harness did not build"


def fidelity_of(answer: dict) -> Fidelity | None:
    """The harness's measured fidelity, or why it is not measured: the first line of a crash, or of a build error."""
    if not answer.get("ok"):
        lines = [ln.strip() for ln in answer.get("build_log", "").splitlines() if ln.strip()]
        if answer.get("failed") == "run":  # its first line says how it died (harness_run.RUN_FAILED)
            first = lines[0] if lines else "the harness failed at run time"
            return Fidelity(measured=False, reason=first.replace("the harness", "the differential harness", 1))
        first = next((ln for ln in lines if ".go:" in ln), lines[0] if lines else "no output")
        return Fidelity(measured=False, reason=f"{NOT_BUILT}: {first}")
    return Fidelity.model_validate(answer["fidelity"]) if answer.get("fidelity") else None


def flood_findings(answer: dict) -> list[Finding]:
    """CRITICAL when the harness printed past the sandbox's output limit: the static print warning says a print
    call exists, this says it runs on every decision (in the EPP: its standard output, on every request)."""
    if answer.get("ok") or not answer.get("flooded"):
        return []
    stopped = answer.get("build_log", "").split(":", 1)[0]  # "the harness was stopped by ... limit (64 MiB ...)"
    return [
        Finding(
            severity=Severity.CRITICAL,
            check=CHECK_OUTPUT_FLOOD,
            message=(
                f"the evolved code prints on every call: {stopped}, so its fidelity is unknown, and in the EPP the "
                "plugin would write to the EPP's standard output on every request"
            ),
            fix="delete the evolved logic's fmt.Print*, print and println calls (the IMPORTANT safety.print "
            "findings name their lines) and translate again",
        )
    ]
