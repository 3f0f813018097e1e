"""YAML as the bot writes it for people and for upstream tools: block style, literal blocks for multi-line text."""

from __future__ import annotations

from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings (EPP configs) as literal blocks."""


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(data: Any, *, sort_keys: bool = False) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=sort_keys, default_flow_style=False, allow_unicode=True, width=100)
