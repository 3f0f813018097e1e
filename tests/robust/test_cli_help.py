"""`--help` is the command line's own documentation: every option says what it does, and `--results` names
both report layouts the README documents, each as a pattern one can copy from the terminal."""

from __future__ import annotations

import argparse

import pytest

from bot.cli import build_parser

BOT_LAYOUT = "RESULTS/<baseline|evolved>/<workload>/rate-<rate>/rep-<n>/"
WORKSPACE_LAYOUT = (
    "RESULTS/setup-treatment-<baseline|evolved>/results/<harness>-<workload>-rate-<rate>-rep-<n>-<ts>-<rand>/"
)


def _subparser(name: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


@pytest.mark.parametrize("command", ["run", "status", "resume", "approve", "request-changes", "reject"])
def test_every_option_of_the_promotion_commands_has_help(command):
    parser = _subparser(command)
    bare = [a.option_strings[0] for a in parser._actions if a.option_strings and not a.help]
    assert bare == [], f"`promote {command} --help` shows {bare} with no word on what they do"


@pytest.mark.parametrize("command", ["run", "evaluate"])
def test_results_help_names_both_layouts_unbroken(command):
    text = _subparser(command).format_help()
    lines = text.splitlines()
    for layout in (BOT_LAYOUT, WORKSPACE_LAYOUT):
        assert any(layout in ln for ln in lines), f"{layout} is not on one line of:\n{text}"
    assert "promote bench run" in text and "llm-d-benchmark workspace" in text
