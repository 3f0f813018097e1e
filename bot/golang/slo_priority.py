"""BLIS's ``SLOPriorityMap`` in the generated plugin: which parts of the local copy the carried code needs, and
the nil maps BLIS's constructors would have filled.

Since e8420fe9 BLIS gives SLO classes priorities through a struct with methods (``DefaultSLOPriorityMap()``,
``NewSLOPriorityMap(overrides)``, ``m.Priority``, ``m.IsSheddable``, ``m.InvertForVLLM``; ``SLOTierPriority`` is
the deprecated free form). The plugin declares its own ``sloPriorityMap`` (``evolved.go.j2``) rather than
carrying the program's, so a program that uses the map from BLIS (HEAD's ``admission.go``) and one that embeds
an older copy of it build the same way. The llm-d adapter fills ``SLOClass`` with critical, standard or
sheddable, whose priorities (4, 3, -2) and sheddability agree with llm-d's ``IsSheddable`` (priority < 0).
"""

from __future__ import annotations

import re

from bot.golang.gotree import norm_type


def slo_priority_parts(carried_text: str) -> dict[str, bool] | None:
    """The parts of ``sloPriorityMap`` the carried (renamed) code uses; None when it uses none."""
    if not re.search(r"\b(sloPriorityMap|defaultSLOPriorityMap|newSLOPriorityMap|sloTierPriority)\b", carried_text):
        return None
    return {
        "is_sheddable": ".IsSheddable(" in carried_text,
        "invert": ".InvertForVLLM(" in carried_text,
        "new": bool(re.search(r"\bnewSLOPriorityMap\(", carried_text)),
        "tier": bool(re.search(r"\bsloTierPriority\(", carried_text)),
    }


def fill_nil_priority_maps(receiver_fields: dict[str, str], default_func: str) -> str:
    """Go lines giving each nil ``*SLOPriorityMap`` field of the receiver ``default_func()``: every BLIS
    constructor that takes a priority map does so (``NewGAIELegacyAdmission(qd, kv, nil)``), but the harness and
    the plugin build the receiver as a zero value, on which the map's methods would dereference nil."""
    lines = []
    for name, typ in sorted(receiver_fields.items()):
        if norm_type(typ) == "*SLOPriorityMap":
            lines += [f"\tif p.{name} == nil {{", f"\t\tp.{name} = {default_func}()", "\t}"]
    if not lines:
        return ""
    return "\n\t// BLIS's constructors replace a nil priority map with the defaults.\n" + "\n".join(lines)
