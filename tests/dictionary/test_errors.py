"""Bad dictionary data fails with a one-line DictionaryError naming the file and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.dictionary import DictionaryError, load_dictionary
from bot.model import RequestError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(PROJECT_ROOT / "dictionary", tmp_path / "dictionary")
    return tmp_path


def _edit(root: Path, name: str, fn) -> None:
    path = root / "dictionary" / name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    fn(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _error(root: Path) -> str:
    with pytest.raises(DictionaryError) as exc:
        load_dictionary(root)
    assert isinstance(exc.value, RequestError)
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_copy_loads(root):
    assert load_dictionary(root).version


def test_malformed_yaml_names_file_and_line(root):
    (root / "dictionary" / "map-b-signals.yaml").write_text("signals:\n  - name: [unclosed\n", encoding="utf-8")
    msg = _error(root)
    assert "map-b-signals.yaml" in msg and "line" in msg


def test_unknown_field_names_file_entry_and_field(root):
    _edit(root, "map-b-signals.yaml", lambda d: d["signals"][1].update(colour="red"))
    msg = _error(root)
    assert "map-b-signals.yaml" in msg and "colour" in msg and "QueueDepth" in msg and "unknown field" in msg


def test_bad_enum_in_gap_file(root):
    _edit(root, "map-c-gaps.yaml", lambda d: d["gaps"][0].update(risk="extreme"))
    msg = _error(root)
    assert "map-c-gaps.yaml" in msg and "risk" in msg


def test_track_b_diagnostic_must_be_actionable(root):
    _edit(root, "map-c-gaps.yaml", lambda d: d["gaps"][0]["track_b"].update(diagnostic="It might break."))
    msg = _error(root)
    assert "map-c-gaps.yaml" in msg and "If this fails" in msg


def test_untranslatable_signal_needs_fallback(root):
    def drop(d):
        s = next(s for s in d["signals"] if s["name"] == "CacheHitRate")
        del s["fallback"]

    _edit(root, "map-b-signals.yaml", drop)
    msg = _error(root)
    assert "map-b-signals.yaml" in msg and "CacheHitRate" in msg and "fallback" in msg


def test_dangling_gap_reference_names_the_field(root):
    _edit(root, "map-b-signals.yaml", lambda d: d["signals"][1]["gaps"].append("no-such-gap"))
    msg = _error(root)
    assert "map-b-signals.yaml" in msg and "signals[QueueDepth].gaps" in msg and "no-such-gap" in msg


def test_one_sided_gap_reference_names_the_other_file(root):
    _edit(root, "map-c-gaps.yaml", lambda d: d["gaps"][0]["touched_by_signals"].append("QueueDepth"))
    msg = _error(root)
    assert "map-b-signals.yaml" in msg and "signals[QueueDepth].gaps" in msg and "lora-affinity" in msg


def test_missing_pin(root):
    _edit(root, "dictionary.yaml", lambda d: d["pins"].pop("llm_d_router"))
    msg = _error(root)
    assert "dictionary.yaml" in msg and "llm_d_router" in msg


def test_missing_file(root):
    (root / "dictionary" / "map-a-interfaces.yaml").unlink()
    assert "map-a-interfaces.yaml" in _error(root)


def test_top_level_not_a_mapping(root):
    (root / "dictionary" / "dictionary.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    msg = _error(root)
    assert "dictionary.yaml" in msg and "mapping" in msg


def test_each_file_is_parsed_once_per_text_and_an_edit_is_read(root):
    """Every stage's context loads the dictionary: its YAML is parsed once per file text, each load its own copy."""
    from bot.dictionary import parse_cache_info

    before = parse_cache_info()
    first, second = load_dictionary(root), load_dictionary(root)
    after = parse_cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (4, 4)
    assert first == second and first is not second and first.signals[0] is not second.signals[0]
    _edit(root, "map-b-signals.yaml", lambda d: d["signals"][0].update(notes="edited since the last load"))
    assert load_dictionary(root).signals[0].notes == "edited since the last load"
    assert parse_cache_info().misses - after.misses == 1
