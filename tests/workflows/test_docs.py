"""The README and docs/ say what the code does: the command line, adopting the bot on GitHub, the issue form.

A new user copies these lines; each test reads the text and the thing it describes, so neither moves alone.
"""

from __future__ import annotations

import argparse
import re

from bot import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"


def _section(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


# --------------------------------------------------------------------------
# README "Command line" against `promote --help`
# --------------------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every leaf command, e.g. ``"bench run"``, with its parser."""
    out: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = _commands(sub, f"{prefix}{name} ")
                out.update(inner or {f"{prefix}{name}": sub})
    return out


def _options(parser: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """(every long option, the required ones), without --help."""
    every, required = set(), set()
    for action in parser._actions:
        longs = [s for s in action.option_strings if s.startswith("--") and s != "--help"]
        every.update(longs)
        if action.required and longs:
            required.update(longs)
    return every, required


def _readme_command_lines() -> tuple[dict[str, str], dict[str, str]]:
    """The README's ``promote ...`` lines by command, and its option groups (``NAME = [...]``) by name."""
    block = re.search(r"```text\n(.*?)```", _section(README.read_text(), "## Command line"), re.S).group(1)
    lines, groups = {}, {}
    for line in block.splitlines():
        usage = line.split("  #", 1)[0].rstrip()
        if m := re.match(r"^([A-Z][A-Z_]*)\s+=\s+(.+)$", usage):
            groups[m.group(1)] = m.group(2)
        elif usage.startswith("promote ") and not usage.startswith("promote --"):
            words = usage.split()[1:]
            name = " ".join(words[:2]) if words[0] == "bench" else words[0]
            lines[name] = usage
    return lines, groups


def test_the_readme_lists_every_command_and_option_of_promote_and_no_other():
    from bot.cli import build_parser

    commands = _commands(build_parser())
    lines, groups = _readme_command_lines()
    assert set(lines) == set(commands), "the README's command list and `promote --help` name different commands"
    for name, parser in commands.items():
        line = lines[name]
        expanded = re.sub(r"\b[A-Z][A-Z_]*\b", lambda m: groups.get(m.group(), m.group()), line)
        listed = set(re.findall(r"(--[a-z][a-z-]*)", expanded))
        every, required = _options(parser)
        assert listed == every, f"promote {name}: README lists {sorted(listed - every)}, lacks {sorted(every - listed)}"
        outside_brackets = re.sub(r"\[[^\]]*\]", "", line)
        for opt in required:
            assert opt in outside_brackets, f"promote {name}: {opt} is required, so not in [brackets]"
    assert "promote --version" in README.read_text()
