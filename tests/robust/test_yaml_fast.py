"""A plain document built in one walk (``bot.yaml_fast``) is what PyYAML's safe loader gives, type for type; anything
else takes the general path with its own refusals."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT, yaml_fast
from bot.yaml_safe import _INT_DIGITS, MAX_DEPTH, SAFE_LOADER, YamlInputError, load_yaml


def _typed(value):
    """The value with every scalar's type spelled out: 1, 1.0 and True compare equal in Python, not here."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def _fast(text: str):
    return yaml_fast.build(text, SAFE_LOADER, MAX_DEPTH, _INT_DIGITS)


PLAIN = [
    "",
    "# only a comment\n",
    "a: 1\n",
    "just a string",
    "- 1\n- -2\n- +3\n- 0\n- 010\n- 0o10\n- 0x1F\n- 0b101\n- 1_000\n- 190:20:30\n",
    "- 1.5\n- -0.0\n- 1e3\n- 1.0e+3\n- .5\n- 6.8523015e+5\n- 685_230.15\n- 190:20:30.15\n- .inf\n- -.Inf\n- .NaN\n",
    "- yes\n- No\n- on\n- OFF\n- true\n- False\n- y\n- n\n",
    "- ~\n- null\n- Null\n-\n- ''\n- 'null'\n- \"1\"\n- '1.5'\n",
    "a: |\n  block\n  text\nb: >\n  folded\n  text\nc: !!str 1\n".replace("c: !!str 1\n", ""),
    "{a: [1, {b: [c, d]}], e: {}, f: []}\n",
    "1: int key\n'1': string key\n1.5: float key\ntrue: bool key\nnull: null key\n",
    "1: first\n1.0: second\n",  # one key to Python: the last value wins, under the first key, as PyYAML does
    'unicode: "caf\\u00e9 \\U0001F600"\nplain: café\n',
    "---\na: 1\n...\n",
    "a: 2001-12-14\n".replace("2001-12-14", "'2001-12-14'"),
    "deep: " + "[" * 60 + "]" * 60 + "\n",
]

GENERAL = [
    "a: &x 1\nb: *x\n",  # anchors and aliases
    "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",  # merge keys
    "when: 2001-12-14\n",  # a timestamp
    "tagged: !!str 1\n",  # an explicit tag
    "? [complex, key]\n: value\n",  # a collection as a key
    "a: 1\n---\nb: 2\n",  # two documents
    "a: 1\na: 2\n",  # a repeated key (refused)
    "deep: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n",  # too deep (refused)
    "n: " + "9" * (_INT_DIGITS + 1) + "\n",  # too many digits (refused)
    "=: value\n",  # PyYAML's value key
    "a: [1, 2\n",  # a syntax error
]


@pytest.mark.parametrize("text", PLAIN)
def test_a_plain_document_is_built_in_one_walk_as_pyyaml_loads_it(text):
    assert _typed(_fast(text)) == _typed(yaml.load(text, Loader=SAFE_LOADER))
    assert _typed(load_yaml(text)) == _typed(yaml.load(text, Loader=SAFE_LOADER))


@pytest.mark.parametrize("text", GENERAL)
def test_anything_else_takes_the_general_path_which_loads_or_refuses_it_as_before(text):
    with pytest.raises((yaml_fast.NotPlain, yaml.YAMLError)):
        _fast(text)
    try:
        expected = ("value", _typed(yaml.load(text, Loader=SAFE_LOADER)))
    except (yaml.YAMLError, ValueError):
        expected = ("refused",)
    try:
        got = ("value", _typed(load_yaml(text)))
    except YamlInputError:
        got = ("refused",)
    if text.startswith(("a: 1\na: 2", "deep", "n: ")):
        assert got == ("refused",)  # yaml_safe's own bounds, which PyYAML alone does not have
    else:
        assert got == expected


def _repository_yaml() -> list[Path]:
    roots = ("examples", "dictionary", "tests", ".github", "prompts")
    return sorted(p for r in roots for p in (PROJECT_ROOT / r).rglob("*.y*ml") if p.is_file())


def test_every_yaml_in_the_repository_loads_as_pyyaml_loads_it_and_reports_take_the_one_walk():
    files = _repository_yaml()
    assert len(files) > 150
    plain = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = _typed(yaml.load(text, Loader=SAFE_LOADER))
        except (yaml.YAMLError, ValueError):
            continue  # a hostile fixture: the general path's refusals are tested in test_yaml_inputs
        try:
            got = _typed(_fast(text))
        except yaml_fast.NotPlain:
            continue
        plain += 1
        assert got == expected, path
    reports = [p for p in files if p.name.startswith("benchmark_report_v0.2")]
    assert reports
    for path in reports[:20]:
        _fast(path.read_text(encoding="utf-8"))  # no NotPlain: a report is plain, and takes the one walk
    assert plain > len(files) // 2


def test_a_loader_that_builds_a_value_its_own_way_takes_the_general_path_and_the_reports_loader_does_not():
    from bot.bench.reports import _LOADER

    class OwnMappings(SAFE_LOADER):
        def construct_mapping(self, node, deep=False):
            return {"own": True}

    assert yaml_fast.resolvers(OwnMappings) is None
    assert load_yaml("a: 1\n", loader=OwnMappings) == {"own": True}
    assert yaml_fast.resolvers(_LOADER) is not None  # it only leaves timestamps as text
    text = "when: 2001-12-14\nn: 1\n"
    assert _typed(yaml_fast.build(text, _LOADER, MAX_DEPTH, _INT_DIGITS)) == _typed(yaml.load(text, Loader=_LOADER))
