"""A failing generated test, worded by the cause the translator already found in the evolved code.

A generated test states what the compiled evolved program did on the case the harness chose, so a plugin failing
it is, short of a translator bug, evolved code that does not decide the same way twice: state its cases share
(a package variable it writes, ``package_vars.shared_state_failures``) or a draw the plugin does not seed (a
``safety.global-rand``: math/rand's process-global source, which Go seeds randomly). When the translation found
one of those, the ``toolchain.test`` finding names it and gives its fix, rather than leaving the researcher to
tell a translator bug from the program by translating again (``gooutput.TEST_FAILURE_STEPS``).

A ``toolchain.test`` finding recorded with no fix (stage 2's record, by a bot older than every failing test
carrying one) gets the fix of its kind, so gate 1 never shows one with an empty "Suggested fix".
"""

from __future__ import annotations

from bot.golang.gooutput import CHECK_TEST, failing_test_fix
from bot.golang.package_vars import shared_state_failures
from bot.golang.safety import CHECK_GLOBAL_RAND
from bot.model import Finding


def with_causes(checked: list[Finding], translated: list[Finding]) -> list[Finding]:
    """The toolchain's findings ``checked``, each failed generated test naming the cause the translation's
    findings ``translated`` show (package state, then an unseeded draw), and carrying a fix (see the module doc)."""
    out = [_with_fix(f) for f in shared_state_failures(checked, translated)]
    draws = [f for f in translated if f.check == CHECK_GLOBAL_RAND]
    if not draws:
        return out
    lines = sorted({f.source_line for f in draws if f.source_line})
    where = f" at evolved line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else ""
    cause = (
        f"the evolved code draws from math/rand's process-global source{where}, see {CHECK_GLOBAL_RAND}: Go seeds "
        "it randomly, so the program is not deterministic and a case's expectation, measured by the harness on one "
        "run, need not hold on the next"
    )
    fixes = "; ".join(dict.fromkeys(f.fix for f in draws if f.fix))
    fix = f"{fixes or 'draw from a seeded source'}; then re-file the program (until then, reject it at gate 1)"
    return [
        f.model_copy(
            update={
                "message": f"{f.message}. {'Another cause' if '. Cause: ' in f.message else 'Cause'}: {cause}",
                "fix": f"{f.fix}; and {fix}" if _names_a_cause(f) else fix,
            }
        )
        if f.check == CHECK_TEST
        else f
        for f in out
    ]


def _names_a_cause(f: Finding) -> bool:
    """``f``'s fix is one a cause gave (package state's), not the generic one."""
    return "Cause: " in f.message


def _with_fix(f: Finding) -> Finding:
    if f.check != CHECK_TEST or f.fix:
        return f
    return f.model_copy(update={"fix": failing_test_fix("test" if f.message.startswith("test ") else "package")})
