"""The README's parameter table: each parameter's Go doc comment said short, what the rows share said once above.

The Go comment on a field must stand alone (a reader lands on it from the code), so it repeats its default and
what the value it acts on is made of. In the README's table those repeats are noise beside a Default column and
five rows reading the same load: a row keeps what the parameter does, and the table's lead says the rest once.
Pure; markdown escaping is the caller's (``plugin_docs``).
"""

from __future__ import annotations

import json
import re

from bot.golang.param_docs import LOAD_COUNT
from bot.golang.params import ParamSpec
from bot.golang.plugin_shape import SCORER_TERMS_LEAD

#: The doc comment's default when it is the evolved value: the table's Default column shows it.
_EVOLVED_DEFAULT = re.compile(r" \(default [^()]*, the evolved value\)")
_LOAD_CLAUSE = f" ({LOAD_COUNT})"

EVOLVED_NOTE = "Defaults are the evolved values where a row does not say otherwise."
LOAD_NOTE = f"An endpoint's waiting + running + in-flight requests, which rows below read, are {LOAD_COUNT}."


def table(params: list[ParamSpec]) -> tuple[str, list[dict]]:
    """(the lead above the table, one row per parameter: name, default as the config writes it, short meaning).
    What the ``scorers`` entries are (BLIS terms, not llm-d plugins) is said in the lead too: in its row, beside
    the default list, it would make the table's longest row."""
    rows, evolved, load, terms = [], False, False, ""
    for p in params:
        text = " ".join(p.doc.split())
        evolved |= bool(_EVOLVED_DEFAULT.search(text))
        load |= _LOAD_CLAUSE in text
        text = _EVOLVED_DEFAULT.sub("", text).replace(_LOAD_CLAUSE, "")
        text, lead, rest = text.partition(" " + SCORER_TERMS_LEAD)
        terms = f"In `{p.name}`, {SCORER_TERMS_LEAD[:1].lower()}{SCORER_TERMS_LEAD[1:]}{rest}" if lead else terms
        # as the EndpointPickerConfig writes it (JSON is YAML too), not as Go source
        rows.append({"name": p.name, "default_text": json.dumps(p.json_default), "doc_text": _without_field(text, p)})
    note = " ".join(n for n, said in ((EVOLVED_NOTE, evolved), (LOAD_NOTE, load), (terms, terms)) if said)
    return note, rows


def _without_field(text: str, p: ParamSpec) -> str:
    """ "DeltaThreshold is the threshold ..." as "The threshold ...": the row already names the parameter."""
    for lead in (f"{p.field} is ", f"{p.field} are ", f"{p.field} "):
        if text.startswith(lead) and len(text) > len(lead):
            rest = text[len(lead) :]
            return rest[:1].upper() + rest[1:]
    return text
