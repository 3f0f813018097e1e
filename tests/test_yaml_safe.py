"""The bounded YAML reader refuses bombs, cycles and absurd numbers with one line, and reads real files."""

from __future__ import annotations

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.yaml_safe import YAMLLimitError, load

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


def test_reads_the_bundled_request_like_safe_load():
    text = (PROJECT_ROOT / "examples" / "weighted-adaptive" / "promotion.yaml").read_text()
    assert load(text) == yaml.safe_load(text)


def test_an_alias_bomb_is_refused_before_anything_expands_it():
    with pytest.raises(YAMLLimitError, match="expands to more than 200,000 values"):
        load(BOMB)
    nested = "workloads:\n  - name: w\n    overrides:\n" + "".join("      " + line + "\n" for line in BOMB.splitlines())
    with pytest.raises(YAMLLimitError):
        load(nested)


def test_shared_anchors_within_the_limit_are_fine():
    assert load("a: &a [1, 2]\nb: *a\nc: *a\n") == {"a": [1, 2], "b": [1, 2], "c": [1, 2]}


def test_a_self_referencing_alias_is_refused():
    with pytest.raises(YAMLLimitError):
        load("a: &a [*a]\n")


def test_huge_numbers_and_huge_documents_are_refused_with_one_line():
    with pytest.raises(YAMLLimitError, match="more digits than any real value needs"):
        load("rate: " + "9" * 5000 + "\n", what="promotion.yaml")
    with pytest.raises(YAMLLimitError, match="is more than the 100 the bot reads"):
        load("x: " + "y" * 200, max_chars=100)


def test_deep_nesting_is_refused_with_one_line_not_a_recursion_error():
    assert load("[" * 50 + "]" * 50) is not None
    with pytest.raises(YAMLLimitError, match="nested too deeply"):
        load("[" * 5000 + "]" * 5000)
