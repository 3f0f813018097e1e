"""A value set at gate 1 (`param X: V`) is decoded and validated by a generated test, as the EndpointPickerConfig
deploys it. Found by a researcher: after `param pressureMidThreshold: 0.9` the config and the fidelity figures had
0.9, but every generated test built the plugin at its evolved defaults, so nothing showed that the deployed
parameters decode in their types and pass Validate()."""

from __future__ import annotations

import pytest

from bot.golang.analyze import analyze
from bot.golang.generate import generate
from bot.golang.source import load_evolved_source
from bot.golang.testgen import render_test
from bot.golang.toolchain import check_plugin
from bot.golang.translate import translate

from .conftest import EXAMPLE

TYPE = "evolved-adaptive-scorer"
CASE = "the values deployed at gate 1"


def _test_file(dictionary, deployed: dict) -> str:
    src = load_evolved_source(EXAMPLE)
    an = analyze(src, dictionary)
    gen = generate(src, an, dictionary, TYPE, options={"deployed": deployed} if deployed else None)
    return render_test(gen, an, TYPE, [], [])


def test_the_deployed_values_are_a_factory_case_as_the_config_writes_them(dictionary):
    text = _test_file(dictionary, {"deltaThreshold": 0.3, "loadHighThreshold": 12.0})
    at = text.index(f'"{CASE} (deltaThreshold, loadHighThreshold)"')
    case = text[at : text.index("\n\t\t},", at)]
    assert '"deltaThreshold": 0.3' in case
    assert '"loadHighThreshold": 12.0' in case  # in the default's JSON type, as the EndpointPickerConfig writes it
    assert "wantErr" not in case  # decoded and validated without an error


def test_without_a_gate_1_value_there_is_no_such_case(dictionary):
    assert CASE not in _test_file(dictionary, {})


@pytest.mark.slow
def test_the_deployed_case_passes_go_test_with_the_real_toolchain(dictionary):
    src = load_evolved_source(EXAMPLE)
    an = analyze(src, dictionary)
    tr = translate(src, an, dictionary, plugin_type=TYPE, feedback="param deltaThreshold: 0.3")
    test_go = next(text for path, text in tr.files.items() if path.endswith("_test.go"))
    assert f'"{CASE} (deltaThreshold)"' in test_go
    report = check_plugin(tr.files)
    assert report.ok and report.tests_failed == 0, report.output[-2000:]
