"""A slash command is one ``commands.Name`` member and one handler (contributor findings 1 and 2).

A command's name used to live in five parallel structures (the parser's tuple, the decision and authorization
maps in ``bot.events.comments``, ``authz.Action``, and two "status needs no role" exemptions), and ``answer``'s
if/elif chain ended in ``else: # cancel``: a half-added command cancelled the promotion (and stopped its GPU
run), one added to the parser alone crashed with a KeyError. Now the enum carries each command's authorization,
``HANDLERS`` maps each to its handler, and these tests hold the two to each other, without a fake GitHub.
"""

from __future__ import annotations

import re
import typing

import pytest

from bot import PROJECT_ROOT
from bot.events import comments
from bot.github import authz, commands
from bot.github.commands import Name


def test_every_command_has_a_handler_and_no_handler_is_for_something_else():
    assert set(comments.HANDLERS) == set(Name)
    assert all(type(name) is Name for name in comments.HANDLERS)  # a plain string key would never be looked up


def test_every_command_says_what_authorization_it_needs_or_that_it_is_read_only():
    actions = set(typing.get_args(authz.Action))
    for name in Name:
        assert name.read_only == (name.action is None), name
        assert name.read_only or name.action in actions, f"/{name} needs an authz.Action, not {name.action!r}"
    assert [n for n in Name if n.read_only] == [Name.STATUS]  # the one command anyone may give


def test_a_name_that_is_not_a_command_cannot_reach_a_handler():
    with pytest.raises(commands.CommandError, match=r"`/ping` is not a command; use one of `/approve`"):
        commands.parse("/ping")
    with pytest.raises(ValueError):
        Name("ping")


def test_parse_gives_the_enum_and_it_still_reads_as_its_name():
    command = commands.parse("/Adopt-Branch")
    assert command.name is Name.ADOPT_BRANCH and command == commands.Command("adopt-branch")
    assert f"`/{command.name}`" == "`/adopt-branch`"


@pytest.mark.parametrize("doc", ["README.md", "docs/github-setup.md"])
def test_the_documented_commands_are_the_commands(doc):
    text = (PROJECT_ROOT / doc).read_text(encoding="utf-8")
    missing = [f"/{n}" for n in Name if not re.search(rf"`/{re.escape(n)}\b", text)]
    assert missing == [], f"{doc} does not mention {missing}"
