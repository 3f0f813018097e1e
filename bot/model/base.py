"""The base of the shared vocabulary: strict models, the enumerations every layer uses, request errors and small helpers."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.yaml_safe import YamlInputError, load_yaml, read_yaml_text


class Strict(BaseModel):
    """Unknown keys are errors: a typo in promotion.yaml must not be ignored."""

    model_config = ConfigDict(extra="forbid")


class RequestPart(Strict):
    """Part of what a person asks for: numbers are finite (YAML reads ``.nan`` and ``.inf`` as floats).

    Not for measured results (``Effect``), where a NaN can be a truthful answer.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


#: The characters a git branch name may hold (request.py checks the rest of git's rules).
BRANCH_NAME = re.compile(r"[A-Za-z0-9._/-]+")

#: A request rate in req/s: a positive, finite number (``-5``, ``0``, ``.nan`` and ``.inf`` are refused).
Rate = Annotated[float, Field(gt=0, allow_inf_nan=False)]


# --------------------------------------------------------------------------
# Enumerations
# --------------------------------------------------------------------------


class PolicyKind(StrEnum):
    ROUTING = "routing"
    ADMISSION = "admission"
    SCHEDULING = "scheduling"


class Severity(StrEnum):
    """BLIS convergence-protocol severities. CRITICAL and IMPORTANT block a gate."""

    CRITICAL = "CRITICAL"
    IMPORTANT = "IMPORTANT"
    SUGGESTION = "SUGGESTION"

    @property
    def blocking(self) -> bool:
        return self is not Severity.SUGGESTION


class Stage(IntEnum):
    ANALYZE = 1
    TRANSLATE = 2
    HYPOTHESIZE = 3
    IMPLEMENT_TESTS = 4
    RUN_VALIDATE = 5
    DOCUMENT = 6
    PR = 7

    @property
    def title(self) -> str:
        return _STAGE_TITLES[self]


_STAGE_TITLES = {
    Stage.ANALYZE: "analyze",
    Stage.TRANSLATE: "translate",
    Stage.HYPOTHESIZE: "hypothesize",
    Stage.IMPLEMENT_TESTS: "implement tests",
    Stage.RUN_VALIDATE: "run and validate",
    Stage.DOCUMENT: "document",
    Stage.PR: "pull request",
}


class Decision(StrEnum):
    APPROVE = "approve"
    REQUEST_CHANGES = "request-changes"
    REJECT = "reject"


class DecidedVia(StrEnum):
    """How a gate decision reached the bot: a person at the open gate, or a flag given before it opened."""

    COMMAND = "command"  # `promote approve|request-changes|reject`, or a slash command on the issue
    LABEL = "label"  # the `gate-N-approved` label on GitHub
    APPROVE_FLAG = "--approve"  # `promote run|resume --approve`: approved without stopping, no one read the review

    @property
    def by_person(self) -> bool:
        return self is not DecidedVia.APPROVE_FLAG


class Family(StrEnum):
    """The six BLIS hypothesis families (docs/contributing/standards/experiments.md)."""

    WORKLOAD_ARRIVAL = "workload-arrival"
    SCHEDULER_INVARIANTS = "scheduler-invariants"
    PERFORMANCE_REGIME = "performance-regime"
    STRUCTURAL_MODEL = "structural-model"
    ROBUSTNESS = "robustness-failure-mode"
    CROSS_POLICY = "cross-policy-comparative"


class VVUQ(StrEnum):
    VERIFICATION = "verification"
    VALIDATION = "validation"
    UQ = "uq"


class HypothesisType(StrEnum):
    DETERMINISTIC = "deterministic"
    DOMINANCE = "statistical/dominance"
    MONOTONICITY = "statistical/monotonicity"
    EQUIVALENCE = "statistical/equivalence"
    PARETO = "statistical/pareto"


class Track(StrEnum):
    A = "A"  # transfer: a BLIS claim rewritten for llm-d
    B = "B"  # gap: a sim-to-real difference (Map B freshness, Map C concern)
    C = "C"  # regression: equivalence / no-regression on baseline scenarios


class Direction(StrEnum):
    """What the evolved treatment should do to a metric, relative to baseline."""

    DECREASE = "decrease"
    INCREASE = "increase"
    EQUIVALENT = "equivalent"  # |change| within the margin (TOST)
    NO_WORSE = "no-worse"  # not worse than the margin in the bad direction (one-sided)


class VerdictStatus(StrEnum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    #: The hypothesis's mechanism reads a signal the plugin sets constant or the translation removed, or rests on
    #: logic that cannot act in llm-d (a branch for a class llm-d never sends), so no benchmark of this plugin can
    #: test it: never judged, never given a share of alpha (Hypothesis.not_testable).
    NOT_TESTABLE = "not testable as translated"


def counted_noun(n: int, one: str, many: str | None = None) -> str:
    """'1 parameter', '9 parameters', '1 hypothesis', '0 hypotheses': a count the bot prints, in agreement."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def status_counts(statuses: Iterable[VerdictStatus]) -> str:
    """'14 confirmed, 0 refuted, 7 inconclusive, 2 not testable as translated' (the last only when there are any).

    One wording everywhere a count of verdicts is shown (stage 5's summary, gate 3, verdicts.md, the PR), so the
    numbers always add up to the hypotheses counted.
    """
    counts = dict.fromkeys(VerdictStatus, 0)
    for s in statuses:
        counts[VerdictStatus(s)] += 1
    text = ", ".join(f"{counts[s]} {s.value}" for s in VerdictStatus if s is not VerdictStatus.NOT_TESTABLE)
    if counts[VerdictStatus.NOT_TESTABLE]:
        text += f", {counts[VerdictStatus.NOT_TESTABLE]} {VerdictStatus.NOT_TESTABLE.value}"
    return text


class DeadLogic(Strict):
    """Evolved logic gate 1 found cannot act in llm-d (``bot.golang.dead_branches``): a branch for an SLO class
    llm-d never sends the plugin, or a number that acts only on signals llm-d cannot provide. Kept in
    translation.json (``TranslationSummary.dead_logic``) because a claim whose mechanism rests on it cannot be
    tested by a benchmark of the plugin, as one reading a signal the plugin holds constant cannot
    (``bot.hypotheses.dead_logic``)."""

    line: int = Field(ge=1, description="the evolved program's line: the branch's guard, or the number")
    code: str = Field(description='the logic as the evolved code has it: `case "batch"`, `default:`, a constant')
    classes: list[str] = Field(default_factory=list, description="the SLO classes only its branch serves")
    names: list[str] = Field(default_factory=list, description="the numbers and variables that act only there")
    why: str = Field(description="why it cannot act in llm-d: 'the branch serves only SLO class \"batch\", ...'")


class RequestError(ValueError):
    """Bad input from a person: the message names the problem and the fix; never a traceback."""


#: Name patterns the models use, in words: pydantic's "String should match pattern '^[a-z]...'" names no rule.
_PATTERN_WORDS = {
    r"^[a-z][a-z0-9-]*$": "kebab-case: lowercase letters, digits and '-', starting with a letter",
    r"^[a-z0-9][a-z0-9-]*$": "kebab-case: lowercase letters, digits and '-'",
}
#: A whole-model check's message starts with the field it is about (``evolved_for: ...``,
#: ``claims[x].workload: ...``), as bot.github.issue_form reads it too.
_FIELD_FIRST = re.compile(r"([A-Za-z_][\w.\[\]-]*): (.+)", re.DOTALL)


#: How many of a file's problems one message names (each is one fix; a user should not fix them one run at a time).
SHOWN_ERRORS = 5


def describe_validation_error(exc: ValidationError) -> str:
    """The first pydantic errors as 'field a.b: message; field c: message', the form people can act on, so a file
    with several mistakes is fixed in one go, not one run per mistake."""
    errors = exc.errors()
    more = f" (and {len(errors) - SHOWN_ERRORS} more)" if len(errors) > SHOWN_ERRORS else ""
    return "; ".join(describe_error(e) for e in errors[:SHOWN_ERRORS]) + more


def describe_error(err) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) as 'field a.b: message'; a caller that
    lists every problem at once (the issue form's needs-info comment) calls it for each."""
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown field (check the spelling against examples/)"
    elif err["type"] == "enum":
        expected = err.get("ctx", {}).get("expected", "")
        msg = f"{err.get('input')!r} is not one of {expected}"
    elif err["type"] == "string_pattern_mismatch":
        msg = _pattern_message(err) or msg
    elif err["type"] == "value_error":
        msg = msg.removeprefix("Value error, ")
        field = _FIELD_FIRST.fullmatch(msg) if not err["loc"] else None
        if field:  # a whole-model check: name the field it is about, not "(top level)"
            loc, msg = field.groups()
    return f"field '{loc}': {msg}"


def _pattern_message(err) -> str | None:
    """A name pattern in words, with the value rewritten to fit it when that can be done."""
    pattern = err.get("ctx", {}).get("pattern", "")
    words = _PATTERN_WORDS.get(pattern)
    if words is None or not isinstance(err.get("input"), str):
        return None
    value = err["input"]
    fitted = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
    if pattern.startswith("^[a-z]["):
        fitted = fitted.lstrip("0123456789-")
    hint = f"; write {fitted!r}" if fitted and re.fullmatch(pattern, fitted) else ""
    return f"{value!r} must be {words}{hint}"


def read_yaml_mapping(
    path: Path, error: type[RequestError], *, missing: str, what: str = "fields", text: str | None = None
) -> dict:
    """A YAML file whose top level is a mapping, or ``error`` with one line that says what is wrong and where.
    ``text`` is the file's text when the caller has read it (``read_yaml_text``), to parse what it read."""
    if text is None and not path.is_file():
        raise error(f"{path}: {missing}")
    try:
        raw = load_yaml(read_yaml_text(path) if text is None else text)
    except YamlInputError as exc:
        raise error(f"{path}: {exc}; fix the file") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not UTF-8 text; re-save it as UTF-8") from None
    if not isinstance(raw, dict):
        raise error(f"{path}: expected a mapping of {what} at the top level")
    return raw


def percent(share: float) -> str:
    """A share as a percentage with the decimals it needs, at most two: 0.95 -> 95%, 0.975 -> 97.5%."""
    return f"{round(share * 100, 2):g}%"


def sha256_text(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def slugify(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:48].rstrip("-") or "promotion"
