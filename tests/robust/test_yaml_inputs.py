"""Every YAML the bot reads is bounded: alias bombs, deep nesting, huge integers and huge files are refused
with one line naming the line and the limit, before anything walks the document."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.bench.evaluation_spec import EvaluationSpecError, load_evaluation_spec
from bot.bench.reports import ReportError, load_report, load_results, parse_report
from bot.dictionary import DictionaryError, load_raw
from bot.hypotheses.document import parse_hypothesis
from bot.hypotheses.errors import HypothesisError
from bot.model import PromotionRequest, RequestError
from bot.yaml_safe import MAX_ALIAS_EXPANSION, MAX_DEPTH, YamlInputError, load_yaml
from tests.bench.bench_helpers import EXAMPLE as REPORT_EXAMPLE
from tests.conftest import EXAMPLE, REQUEST

#: Nine anchors, each a list of nine aliases of the previous one: 9**9 (387 million) strings once expanded.
BOMB_LINES = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'] + [
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)
]


def _indent(lines: list[str], n: int) -> str:
    return "".join(" " * n + line + "\n" for line in lines)


def _request_with(tmp_path: Path, old: str, new: str) -> Path:
    text = REQUEST.read_text()
    assert old in text
    (tmp_path / "best_program.py").write_text((EXAMPLE / "best_program.py").read_text())
    path = tmp_path / "promotion.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


# ------------------------------------------------------------- the loader
def test_a_bomb_is_refused_quickly_and_names_the_limit():
    started = time.monotonic()
    with pytest.raises(YamlInputError, match=r"aliases expand to .* \(the limit is 100,000\); a YAML bomb"):
        load_yaml("overrides:\n" + _indent(BOMB_LINES, 2))
    assert time.monotonic() - started < 5


def test_reads_the_bundled_request_like_safe_load():
    text = REQUEST.read_text()
    assert load_yaml(text) == yaml.safe_load(text)


def test_modest_aliases_still_load():
    doc = load_yaml("base: &b {a: 1, b: [1, 2, 3]}\nx: *b\ny: {<<: *b, c: 2}\n")
    assert doc["x"] == {"a": 1, "b": [1, 2, 3]} and doc["y"]["c"] == 2
    many = "v: &v [" + ", ".join(["1"] * 100) + "]\nw: [" + ", ".join(["*v"] * (MAX_ALIAS_EXPANSION // 101)) + "]\n"
    assert len(load_yaml(many)["w"]) == MAX_ALIAS_EXPANSION // 101


def test_recursive_and_undefined_aliases():
    with pytest.raises(YamlInputError, match=r"alias \*a at line 1 refers to a collection that contains it"):
        load_yaml("a: &a [1, *a]\n")
    with pytest.raises(YamlInputError, match=r"alias \*nope at line 2 is undefined"):
        load_yaml("a: 1\nb: *nope\n")


def test_deep_nesting_is_refused_without_crashing_the_process():
    """libyaml's composer recurses in C: 100,000 levels used to end the process with SIGSEGV."""
    code = (
        "from bot.yaml_safe import load_yaml, YamlInputError\n"
        "try:\n    load_yaml('a: ' + '[' * 100000 + ']' * 100000)\n"
        "except YamlInputError as e:\n    print(e)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert f"nested deeper than {MAX_DEPTH} levels at line 1" in proc.stdout
    assert load_yaml("a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)) is not None  # MAX_DEPTH levels in all
    # one level more is refused: the limit is the one the message names, not merely below 100,000
    with pytest.raises(YamlInputError, match=f"nested deeper than {MAX_DEPTH} levels at line 1"):
        load_yaml("a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH)


def test_huge_integers_name_the_line():
    with pytest.raises(YamlInputError, match=r"the number at line 2 has 5,000 digits"):
        load_yaml("a: 1\nb: " + "9" * 5000 + "\n")
    assert load_yaml("b: '" + "9" * 5000 + "'\n")["b"] == "9" * 5000  # quoted: text, fine


def test_first_line_offsets_messages():
    with pytest.raises(YamlInputError, match="not valid YAML at line 3, column 4"):
        load_yaml("a: 1\nb: : c\n", first_line=2)
    with pytest.raises(YamlInputError, match="the number at line 3 has"):
        load_yaml("a: 1\nb: " + "1" * 5000, first_line=2)


def test_only_safe_loaders():
    with pytest.raises(TypeError):
        load_yaml("a: 1", loader=yaml.UnsafeLoader)


def test_no_other_yaml_reader_in_the_bot():
    """One loader in one place: nothing under bot/ but yaml_safe (and its one-walk build, yaml_fast) calls yaml.load /
    safe_load / compose directly."""
    direct = re.compile(r"\byaml\.(safe_load|load|full_load|unsafe_load|compose|load_all|safe_load_all)\(")
    offenders = [
        f"{p.relative_to(PROJECT_ROOT)}:{n}"
        for p in sorted((PROJECT_ROOT / "bot").rglob("*.py"))
        if p.name not in ("yaml_safe.py", "yaml_fast.py")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if direct.search(line)
    ]
    assert offenders == []


# ---------------------------------------------------------- every reader
def test_request_with_a_bomb_inside_workload_overrides(tmp_path):
    bomb = "    overrides:\n" + _indent(BOMB_LINES, 6)
    path = _request_with(tmp_path, "    overrides:\n      api.streaming: true\n", bomb)
    started = time.monotonic()
    with pytest.raises(RequestError, match=r"promotion\.yaml: aliases expand to .* a YAML bomb"):
        PromotionRequest.load(path)
    assert time.monotonic() - started < 5


def test_request_with_a_5000_digit_integer(tmp_path):
    path = _request_with(tmp_path, "iteration: 32", "iteration: " + "7" * 5000)
    with pytest.raises(RequestError, match=r"promotion\.yaml: the number at line \d+ has 5,000 digits"):
        PromotionRequest.load(path)


def test_request_too_large_is_refused_before_reading(tmp_path, monkeypatch):
    import bot.yaml_safe

    monkeypatch.setattr(bot.yaml_safe, "MAX_BYTES", 1000)
    with pytest.raises(RequestError, match=r"promotion\.yaml: the file is .* MB; the limit is"):
        PromotionRequest.load(REQUEST)


def test_report_with_a_5000_digit_integer(tmp_path):
    text = REPORT_EXAMPLE.read_text()
    huge = re.sub(r"(\n\s+total: )\d+", lambda m: m.group(1) + "3" * 5000, text, count=1)
    assert huge != text
    with pytest.raises(ReportError, match="has 5,000 digits"):
        parse_report(huge)
    d = tmp_path / "results" / "baseline" / "w" / "rate-10" / "rep-1"
    d.mkdir(parents=True)
    (d / "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml").write_text(huge)
    with pytest.raises(ReportError, match="has 5,000 digits"):
        load_report(d / "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml")
    with pytest.raises(ReportError, match="no valid benchmark report .* has 5,000 digits"):
        load_results(tmp_path / "results")


def test_report_with_a_bomb():
    with pytest.raises(ReportError, match="a YAML bomb"):
        parse_report("version: '0.2'\nextra:\n" + _indent(BOMB_LINES, 2))


def test_evaluation_spec_and_hypothesis_front_matter_with_a_bomb():
    with pytest.raises(EvaluationSpecError, match="evaluation spec: aliases expand"):
        load_evaluation_spec(_indent(BOMB_LINES, 0))
    with pytest.raises(HypothesisError, match=r"A1\.md: front matter: aliases expand"):
        parse_hypothesis("---\nid: A1\n" + _indent(BOMB_LINES, 0) + "---\n# A1\n", "A1.md")
    with pytest.raises(HypothesisError, match=r"A1\.md: front matter: the number at line 3 has"):
        parse_hypothesis("---\nid: A1\nx: " + "1" * 5000 + "\n---\n", "A1.md")


def test_dictionary_file_with_a_bomb(tmp_path):
    import shutil

    shutil.copytree(PROJECT_ROOT / "dictionary", tmp_path / "dictionary")
    target = next(p for p in sorted((tmp_path / "dictionary").glob("*.yaml")))
    target.write_text(target.read_text() + "\n" + "".join(line + "\n" for line in BOMB_LINES))
    with pytest.raises(DictionaryError, match="aliases expand"):
        load_raw(tmp_path)


def test_a_key_written_twice_is_refused_with_its_line():
    """Found by a new user: a second `title:` appended to promotion.yaml silently won."""
    from bot.yaml_safe import YamlInputError, load_yaml

    with pytest.raises(YamlInputError, match=r"the key 'title' at line 3 appears twice"):
        load_yaml("title: First\nkind: routing\ntitle: Second title wins\n")
    with pytest.raises(YamlInputError, match=r"the key 'rate' at line 4 appears twice"):
        load_yaml("workloads:\n  - name: a\n    rate: 1\n    rate: 2\n")
    with pytest.raises(YamlInputError, match=r"the key 'id' at line 4 appears twice"):  # front matter: line 2 on
        load_yaml("id: A1\ntitle: t\nid: A2\n", first_line=2)
    # the same key in different mappings, YAML merge keys, and a plain 1 beside a quoted "1" (int and str) are fine
    assert load_yaml('1: a\n"1": b\n') == {1: "a", "1": "b"}
    assert load_yaml("a: {k: 1}\nb: {k: 2}\nbase: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n")["c"] == {"x": 1, "y": 2}
