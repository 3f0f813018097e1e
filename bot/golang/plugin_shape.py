"""What the generated plugin's types hold, decided from the analysis: the request struct's fields, whether
the carried code reads token slices, whether its RNG is guarded, and which BLIS scorers it carries.

Apart from ``generate`` so that the writing of files stays one readable function and these small decisions
can be read (and tested) on their own.
"""

from __future__ import annotations

import re

from bot.golang.analysis_types import Analysis, default_scorers
from bot.golang.gotree import text_of, walk
from bot.golang.source import EvolvedSource
from bot.model import PolicyKind

#: BLIS scorer names the plugin's baseline terms implement (ParseScorerConfigs names), in BLIS's order.
BASELINE_SCORERS = (
    "prefix-affinity",
    "precise-prefix-cache",
    "queue-depth",
    "kv-utilization",
    "load-balance",
    "active-requests",
    "running-requests",
    "load-aware",
    "vllm-dp",
)

#: The llm-d-router v0.10.0 scorer plugins whose names read like a BLIS scorer's. An llm-d maintainer took the
#: BLIS names in ``scorers`` for references to them, to be declared in the config; ``scorer_terms_note`` says
#: they are not. The BLIS names stay: researchers map them from their BLIS configuration.
LLMD_LOOKALIKES = {
    "prefix-affinity": "prefix-cache-scorer",
    "precise-prefix-cache": "precise-prefix-cache-scorer",
    "queue-depth": "queue-scorer",
    "kv-utilization": "kv-cache-utilization-scorer",
    "load-aware": "load-aware-scorer",
    "active-requests": "active-request-scorer",
    "running-requests": "running-requests-size-scorer",
}


#: How ``scorer_terms_note`` begins (the README's parameter table finds it by this).
SCORER_TERMS_LEAD = "Each entry is a term this plugin computes itself"


def scorer_terms_note(names: list[str]) -> str:
    """What the ``scorers`` entries are, for a reader who knows llm-d's plugins: the field's Go doc, the README's
    Parameters section and the comment above ``scorers:`` in the EndpointPickerConfig all say it."""
    alike = [LLMD_LOOKALIKES[n] for n in names if n in LLMD_LOOKALIKES]
    text = f"{SCORER_TERMS_LEAD}, named as in BLIS ({', '.join(names)}), not an llm-d plugin"
    if alike:
        text += f": llm-d's scorers of similar name ({', '.join(alike)}) need not be declared or put in the profile for them"
    return text + "."


def scorers_config_note(scorer_defaults) -> dict[str, str]:
    """The comment above ``scorers:`` in the EndpointPickerConfig (none when the plugin has no ``scorers``)."""
    if scorer_defaults is None:
        return {}
    text = scorer_terms_note([n for n, _ in scorer_defaults])
    return {"scorers": "scorers: " + text[:1].lower() + text[1:]}


def request_fields(src: EvolvedSource, an: Analysis) -> tuple[list[dict], bool, bool, str]:
    """(the request struct's fields, whether InputTokens / OutputTokens are carried as slices, the token type).

    A token slice is carried only when the evolved code reads it other than through ``len``: a count is
    all llm-d has cheaply, and a slice nobody reads would cost a copy per request."""
    assert an.host_info is not None
    carried_nodes = [an.host_info.node] + [h.node for h in an.helpers]
    token_slice = "InputTokens" in an.request_fields and _uses_token_slice(src, carried_nodes, "InputTokens")
    output_slice = "OutputTokens" in an.request_fields and _uses_token_slice(src, carried_nodes, "OutputTokens")
    token_elem = "int" if an.token_elem == "int" else "tokenID"
    fields: list[dict] = []
    if "ID" in an.request_fields:  # a scheduler's modelled queue names its requests only when the logic reads IDs
        fields.append({"name": "ID", "type": "string"})
    for name, typ in sorted(an.request_fields.items()):
        if name == "ID":
            continue
        if name in ("InputTokens", "OutputTokens"):
            count = "numInputTokens" if name == "InputTokens" else "numOutputTokens"
            fields.append({"name": count, "type": "int"})
            if token_slice if name == "InputTokens" else output_slice:
                fields.append({"name": name, "type": f"[]{token_elem}"})
            continue
        fields.append({"name": name, "type": typ or "float64"})
    if an.kind == PolicyKind.SCHEDULING and not any(f["name"] == "ArrivalTime" for f in fields):
        fields.append({"name": "ArrivalTime", "type": "int64"})
    return fields, token_slice, output_slice, token_elem


def _uses_token_slice(src: EvolvedSource, nodes, fld: str) -> bool:
    for node in nodes:
        for n in walk(node):
            if n.type == "selector_expression" and text_of(src, n.child_by_field_name("field")) == fld:
                p = n.parent
                if (
                    p is not None
                    and p.type == "argument_list"
                    and p.parent is not None
                    and text_of(src, p.parent.child_by_field_name("function")) == "len"
                ):
                    continue
                return True
    return False


def mentions(src: EvolvedSource, nodes, name: str, kinds=("type_identifier",)) -> bool:
    return any(n.type in kinds and text_of(src, n) == name for node in nodes for n in walk(node))


#: A call of math/rand's package functions: randomly seeded since Go 1.20, so the evolved code breaks its ties at
#: random as the picker does (the harness then compares with BLIS's tied set; the plugin keeps the tie).
GLOBAL_RAND = re.compile(
    r"\brand\.(?:Intn|IntN|Int63n|Int31n|Float64|Float32|Perm|Shuffle|Int63|Int31|Int|N|Uint32|Uint64)\("
)


#: The seed base of the rng a plugin hands evolved code that reads one (drawSeeds): the plugin's
#: generated tests set it, and the harness's probes decide with it, so a case a probe found draws the same numbers
#: in the test that holds it.
TEST_DRAW_BASE = 0


def random_ties(src: EvolvedSource, an: Analysis) -> bool:
    """Whether the evolved code picks among its tied top scores at random (its rng field, or math/rand's own)."""
    return an.uses_rng or bool(GLOBAL_RAND.search(src.go_text))


def scorer_defaults_of(an: Analysis, options: dict) -> list[tuple[str, float]]:
    """The ``scorers`` the plugin defaults to: gate 1's ``scorers:`` line, else BLIS's defaults of the era."""
    return options.get("scorers", default_scorers(an.era))


def used_scorers(scorer_defaults) -> list[str]:
    """The BLIS scorers the plugin carries: those its default configuration names (in BLIS's order), so
    no simulator scorer the evolved program never used ships beside llm-d's own."""
    named = {n for n, _ in scorer_defaults or []}
    return [n for n in BASELINE_SCORERS if n in named]


def receiver_type(an: Analysis, receiver: str, uses_scorers: bool) -> str:
    """The receiver's type when the evolved file does not declare it: exactly the fields the evolved code uses (the
    BLIS ones it reads from WeightedScoring first), and the plugin's parameters."""
    lines = [
        f"// {receiver} is the receiver of the evolved method; its type is not in the evolved",
        "// file, so it holds exactly the fields the evolved code uses.",
        f"type {receiver} struct {{",
    ]
    fields_out: list[tuple[str, str]] = []
    if uses_scorers:
        fields_out += [("scorers", "[]scorerFunc"), ("weights", "[]float64")]
    if an.uses_observers:
        fields_out.append(("observers", "[]observerFunc"))
    if an.uses_rng:
        fields_out.append(("rng", "*rand.Rand"))
    for f, t in sorted(an.receiver_fields.items()):
        if f not in ("scorers", "weights", "observers", "rng"):
            fields_out.append((f, t or "float64"))
    lines += [f"\t{f} {t}" for f, t in fields_out] + ["\tparams Parameters", "}"]
    return "\n".join(lines)
