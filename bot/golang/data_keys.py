"""The produced data a plugin reads, under the producer names its parameters select.

In llm-d-router v0.10.0 a data producer stores its data under ``DataKey.WithNonEmptyProducerName(name)``, its
own name: a producer configured with a name of its own, or another producer of the same data (the
precise-prefix-cache-producer instead of the approximate one), stores it under a key the default key never finds.
The plugin would then read nothing and fall back silently (no prefix match: every endpoint as cold). So every
upstream consumer takes the producer's name as a parameter (prefix-cache-scorer's ``prefixMatchInfoProducerName``,
active-request-scorer's ``inFlightLoadProducerName``), reads the key named after it and declares that key in
``Consumes()``; the generated plugin does the same, for each key its adapter reads and only those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.golang.params import ParamSpec


@dataclass(frozen=True)
class DataKeyRead:
    key: str  # the default key, as the dictionary's Map B expressions and the adapter template name it
    field: str  # the plugin's dataKeys field holding the key named after the configured producer
    param: str  # the JSON parameter naming that producer (upstream's name)
    producer: str  # the default producer's type
    data: str  # what the producer provides, for the parameter's doc

    @property
    def go_field(self) -> str:
        return self.param[0].upper() + self.param[1:]


PREFIX = DataKeyRead(
    "attrprefix.PrefixCacheMatchInfoDataKey",
    "PrefixCacheMatchInfoDataKey",
    "prefixMatchInfoProducerName",
    "approx-prefix-cache-producer",
    "the prompt's prefix-cache match (PrefixCacheMatchInfo)",
)
INFLIGHT = DataKeyRead(
    "concurrency.InFlightLoadDataKey",
    "InFlightLoadDataKey",
    "inFlightLoadProducerName",
    "inflight-load-producer",
    "the in-flight requests (InFlightLoad)",
)
KEYS = (PREFIX, INFLIGHT)


def keyed(expr: str) -> str:
    """A Map B expression reading a produced key by its default name, reading the plugin's configured key
    instead (``ep.Get(concurrency.InFlightLoadDataKey.String())`` -> ``ep.Get(keys.InFlightLoadDataKey.String())``)."""
    for k in KEYS:
        expr = re.sub(rf"\b{re.escape(k.key)}\b", f"keys.{k.field}", expr)
    return expr


def reads(expr: str) -> list[DataKeyRead]:
    """The produced keys an adapter expression (after ``keyed``) reads."""
    return [k for k in KEYS if f"keys.{k.field}" in expr]


def param_spec(k: DataKeyRead) -> ParamSpec:
    """The parameter naming the producer whose data the plugin reads; empty keeps the default producer (the
    one the EPP adds when the config names none), as upstream."""
    return ParamSpec(
        k.param,
        k.go_field,
        "string",
        '""',
        f"{k.go_field} names the producer the plugin reads {k.data} from, as the EndpointPickerConfig names "
        f"it; empty means the default {k.producer}. Set it when that producer is configured under another "
        "name, or another producer provides the data: each stores it under its own name.",
        json_default="",
    )


def config_note(k: DataKeyRead) -> str:
    """The comment above the parameter in the EndpointPickerConfig: not an evolved value, and when to set it."""
    return (
        f"{k.param}: empty reads the default {k.producer}; set it to the name of the producer instance to read "
        "from when it has another (not an evolved value)."
    )
