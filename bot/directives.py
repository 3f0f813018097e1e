"""The change-request directives each gate applies by rule: one registry the parsers and the texts both read.

A person who requests changes writes prose. A few line forms in that prose are
applied by rule, so the same reason always gives the same artifacts: gate 1's
translator reads ``scorers:`` and ``param NAME: VALUE`` (``bot.golang.translate.
feedback_options``), gate 2's hypothesis generator reads ``exclude:``/``drop:``,
``margin:`` and ``guard:`` (``bot.hypotheses.feedback``), and gate 3's
``rejudge`` is the rerun itself. The parsers take their patterns from here and
the gate comments, the CLI's gate stops and the answer to a change request that
names none of them list the entries here, so what people are told and what is
applied cannot drift apart (tests/review/test_directives.py also checks the
README's table against this registry).

Pure: no I/O, nothing from the rest of the bot, so any layer may read it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from decimal import Decimal


@dataclass(frozen=True)
class Directive:
    gate: int
    name: str  # what people call it: "scorers", "param", "exclude"
    syntax: str  # the form, with placeholders in capitals
    example: str  # one line that applies as written on the bundled example
    effect: str  # what applying it changes, in one clause
    pattern: re.Pattern[str]  # what the parser matches (search over the whole reason)
    effect_github: str = ""  # the effect in the GitHub home's words, where they differ (no local flags there)

    def effect_in(self, github: bool) -> str:
        """The effect as the home it is shown in words it: GitHub has no `--results`, a rehearsal no Actions."""
        return self.effect_github if github and self.effect_github else self.effect


# Gate 1 (stage 2, the translator).
SCORERS = re.compile(r"scorers?\s*[:=]\s*((?:[a-z][a-z-]*\s*:\s*\d+(?:\.\d+)?\s*,?\s*)+)")
#: ``param NAME: VALUE`` with any value: whether the value fits is ``param_value``'s and the plugin's to say, so
#: ``param waitedMsThreshold: 4s`` is answered "takes a number", not "names no directive".
PARAM = re.compile(r"(?im)^[ \t]*[-*]?[ \t]*param[ \t]+([A-Za-z]\w*)[ \t]*[:=][ \t]*(.*?)[ \t]*$")
_SCORER_PAIR = re.compile(r"([a-z][a-z-]*)\s*:\s*(\d+(?:\.\d+)?)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_WORD = re.compile(r"[A-Za-z_][\w.-]*")
_QUOTED = re.compile(r'"([^"\\]*)"')
#: What a ``param`` value must look like, for the answer to one that does not.
PARAM_VALUE_FORM = (
    "a number in plain digits (e.g. 4000 or 0.5: no unit, no exponent), or one word for a string parameter (e.g. batch)"
)
# Gate 2 (stage 3, the hypothesis generator): one line form, ``VERB [ID]: VALUE``.
HYPOTHESIS_VERBS = ("exclude", "drop", "margin", "guard")
HYPOTHESIS_LINE = re.compile(
    r"^\s*[-*]?\s*(" + "|".join(HYPOTHESIS_VERBS) + r")\b\s*([ABC][0-9]+)?\s*:\s*(.*?)\s*$", re.IGNORECASE
)


def _verb_line(*verbs: str) -> re.Pattern[str]:
    return re.compile(r"(?im)^\s*[-*]?\s*(?:" + "|".join(verbs) + r")\b\s*(?:[ABC][0-9]+)?\s*:")


DIRECTIVES: dict[int, tuple[Directive, ...]] = {
    1: (
        Directive(
            1,
            "scorers",
            "scorers: NAME:WEIGHT, NAME:WEIGHT",
            "scorers: prefix-affinity:1, load-balance:1",
            "the BLIS scorer configuration the program was evolved with",
            SCORERS,
        ),
        Directive(
            1,
            "param",
            "param NAME: VALUE",
            "param loadHighThreshold: 9",
            "the value the deployed EndpointPickerConfig carries for one plugin parameter, a number or a word for "
            "a string parameter (the plugin's default keeps BLIS's value)",
            PARAM,
        ),
    ),
    2: (
        Directive(
            2,
            "exclude",
            "exclude: ID, ID (why)",
            "exclude: B2, B4 (this cluster has no LoRA or P/D split)",
            "drops those hypotheses (alias `drop:`), recorded with the reason in the hypotheses index; ids after the "
            "list are the reason and stay; other ids do not move",
            _verb_line("exclude", "drop"),
        ),
        Directive(
            2,
            "margin",
            "margin: FRACTION or margin ID: FRACTION",
            "margin: 0.03",
            "the margin of every (or one) equivalence and no-worse prediction (0.03 or 3%, at most 50%); ids do not "
            "move",
            _verb_line("margin"),
        ),
        Directive(
            2,
            "guard",
            "guard: METRIC",
            "guard: e2e_p99",
            "adds a no-regression hypothesis on that metric for every Track C scenario",
            _verb_line("guard"),
        ),
    ),
    3: (
        Directive(
            3,
            "rejudge",
            "rejudge: WHY",
            "rejudge: replaced the reports of the noisy rate-8 runs",
            "stages 4 and 5 run again: the plan is rebuilt and the benchmark reports present now (in --results, or "
            "on the branch) are judged again",
            re.compile(r"(?im)^\s*[-*]?\s*rejudge\b"),
            effect_github="stages 4 and 5 run again: the plan is rebuilt and the benchmark reports on the branch are "
            "judged again (to judge other reports, replace them with a commit to the branch first); when none of "
            "them belongs to the rebuilt plan, stage 5 runs the GPU benchmark for it",
        ),
    ),
}


#: The checks whose CRITICAL findings no gate-1 directive clears: the plugin fails its generated test or does not
#: build (``toolchain.test``, ``toolchain.build``, gate 1's ``G1.compiles``), or the evolved code writes state every
#: request shares (``hazard.package-state``). Each is in the program as evolved, and a directive sets only what the
#: plugin deploys, so a change request would rerun stage 2 into the same findings. Spelled as their modules spell
#: them (they import this module, not the other way round; tests/review/test_directives.py checks they agree).
NO_DIRECTIVE_CLEARS = frozenset({"toolchain.test", "toolchain.build", "hazard.package-state", "G1.compiles"})


def none_clears(gate: int, findings) -> str:
    """One sentence saying no change request clears gate ``gate``'s open CRITICAL ``findings``, when it is gate 1,
    there is one and all are ``NO_DIRECTIVE_CLEARS``'s; else ''. Found in a researcher's trial: gate 1 offered
    ``param NAME: VALUE`` beside a failing generated test that no deployed value changes."""
    checks = {f.check for f in findings if f.severity.value == "CRITICAL"}
    if gate != 1 or not checks or not checks <= NO_DIRECTIVE_CLEARS:
        return ""
    named = ", ".join(f"`{c}`" for c in sorted(checks))
    return (
        f"No change request clears the open CRITICAL findings ({named}): they are in the evolved program itself, "
        "and a directive sets only what the plugin deploys. Only a re-filed program clears them; otherwise reject it."
    )


def for_gate(gate: int, examples: dict[str, str] | None = None) -> tuple[Directive, ...]:
    """Gate ``gate``'s directives; with ``examples`` (``promotion_examples``), only those it names, each with
    the promotion's own example (an admitter is not offered ``scorers:`` nor another plugin's parameter)."""
    forms = DIRECTIVES.get(gate, ())
    if examples is None:
        return forms
    return tuple(replace(d, example=examples[d.name]) for d in forms if d.name in examples)


def promotion_examples(
    gate: int,
    *,
    parameters: dict[str, float] | None,
    scorers: bool | None,
    suggested: dict[str, float] | None = None,
    inert: frozenset[str] | set[str] = frozenset(),
) -> dict[str, str]:
    """The directives gate ``gate`` offers this promotion, each with an example that applies to it.

    ``parameters`` are the plugin's parameters and defaults (the translation summary's thresholds), ``scorers``
    whether it has a ``scorers`` parameter; None where unknown, and then the registry's own entry stands.
    ``param`` is exemplified with a change that does something: the first of ``suggested`` (the values the gate's
    own findings ask for, e.g. a simulator-scale threshold at pod scale), else the first parameter not in
    ``inert`` (those llm-d gives no input to) at another value than its default: an example that sets a
    parameter to the value it has, or one with no effect, costs a rerun that reopens the gate unchanged.
    """
    examples = {d.name: d.example for d in for_gate(gate)}
    if gate != 1:
        return examples
    if scorers is False:
        examples.pop("scorers", None)
    live = [n for n in sorted(parameters or {}) if n not in inert]
    if suggested:
        name, value = next(iter(suggested.items()))
        examples["param"] = f"param {name}: {plain_number(value)}"
    elif live:
        examples["param"] = f"param {live[0]}: {plain_number(_another_value(parameters[live[0]]))}"
    elif parameters is not None:
        examples.pop("param", None)
    return examples


def param_value(raw: str) -> float | str | None:
    """A ``param`` line's value: a number (``70``, ``-0.5``), a word (``batch``) or a double-quoted string
    (``""``) for a string parameter; None when it is neither (``4s``, ``1e7``, empty), answered with
    ``PARAM_VALUE_FORM``. Whether the parameter takes a number or a word is the plugin's (``bot.golang.params``)."""
    raw = raw.strip()
    if _NUMBER.fullmatch(raw):
        return float(raw)
    if _WORD.fullmatch(raw):
        return raw
    quoted = _QUOTED.fullmatch(raw)
    return quoted.group(1) if quoted else None


def scorers_problems(text: str) -> list[str]:
    """Why a ``scorers:`` line of ``text`` cannot configure BLIS's weighted scoring: a scorer listed twice, or a
    weight that is not > 0. BLIS's ``ParseScorerConfigs`` refuses both, and the plugin's Validate() does too,
    so such a line recorded would rerun stage 2 into a plugin that fails every state; each problem names its line
    and the rule. (Unknown names are the translator's to say: it knows BLIS's scorer names.)"""
    out: list[str] = []
    for m in SCORERS.finditer(text or ""):
        line = m.group(0).strip().rstrip(",").strip()
        pairs = _SCORER_PAIR.findall(m.group(1))
        names = [n for n, _ in pairs]
        twice = list(dict.fromkeys(n for n in names if names.count(n) > 1))
        if twice:
            out.append(
                f"`{line}`: {', '.join(twice)} {'is' if len(twice) == 1 else 'are'} listed twice; each scorer may "
                "appear once with one weight (BLIS's ParseScorerConfigs refuses duplicates)"
            )
        zero = [n for n, w in pairs if float(w) <= 0]
        if zero:
            out.append(
                f"`{line}`: the weight of {', '.join(zero)} is 0; every weight must be > 0 (BLIS's "
                "ParseScorerConfigs refuses it): to leave a scorer out, do not list it"
            )
    return out


def _another_value(default: float) -> float:
    """A value other than ``default`` that keeps its sign and, for a 0-1 fraction, stays one (half of it)."""
    if default == 0:
        return 1.0
    return default / 2 if 0 < default <= 1 else default * 2


def found(gate: int, text: str | None) -> list[Directive]:
    """The directives of ``gate`` whose form appears in ``text`` (whether their values apply is the parser's)."""
    return [d for d in for_gate(gate) if text and d.pattern.search(text)]


def plain_number(value: float) -> str:
    """``10000000`` for 1e7, ``0.9``, ``70``: the digits ``param_value`` reads (it takes no exponent)."""
    text = format(Decimal(repr(float(value))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def listing(gate: int, examples: dict[str, str] | None = None, *, github: bool = False) -> str:
    """One line: the forms gate ``gate`` applies, each with an example (for a terminal or a sentence), in the words
    of the home it is shown in (``github``)."""
    return "; ".join(f"`{d.syntax}` (e.g. `{d.example}`): {d.effect_in(github)}" for d in for_gate(gate, examples))


#: What the local commands a finding offers call the promotion's work directory when the review does not know it
#: (a review read outside a `promote` run): the CLI finds a promotion by its --work (default ./.promote), and a
#: command copied without it fails ("no promotion here") wherever the promotion ran with its own.
WORK_PLACEHOLDER = "W"
#: Said once after a command that carries the placeholder, so that nobody copies ``--work W`` as is (verify2 #6:
#: "/tmp/da1/W: no promotion here").
WORK_SAID = f" ({WORK_PLACEHOLDER}: your --work)"


def work_argument(work: str | None) -> str:
    """The --work value of a command a finding offers: the run's own directory (``StageContext.work``: `promote
    run` knows it), quoted for a shell, else the placeholder, which the text then says once (``WORK_SAID``)."""
    return shlex.quote(work) if work else WORK_PLACEHOLDER


def request_changes_command(gate: int, reason: str, work: str | None = None) -> str:
    """The local change request a finding offers, with the run's --work (``work``), or ``--work W`` and what W is
    when the review does not know it: copied without --work it looked for ./.promote and failed."""
    said = "" if work else WORK_SAID
    return f"`promote request-changes {gate} --reason '{reason}' --work {work_argument(work)}`{said}"


def exclude_command(home: str, ids: str, work: str | None = None) -> str:
    """Gate 2's ``exclude:`` change request in the words of the home a finding is read in: the comment
    `/request-changes exclude: A1 (why)` on GitHub, where a person has no local CLI; `promote request-changes 2
    --reason 'exclude: A1' --work /tmp/s01` in a local rehearsal (``request_changes_command``)."""
    if home == "github":
        return f"`/request-changes exclude: {ids} (why)`"
    return request_changes_command(2, f"exclude: {ids}", work)
