"""Who may do what, decided in one place: every handler asks ``authorize`` and obeys.

A label is not authorization: anyone with triage can apply one. A gate counts
only from a person whose role on the repository (the collaborator permission
API's ``role_name``) is one of the configured approver roles, or who is on the
configured approver list. Bots, this bot included, never pass a gate. Pure:
the caller looks the role up and passes it in. A read-only command (``commands.Name.read_only``, `/status`)
changes nothing and is never asked about: anyone may give it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.github.config import BotConfig

#: What a person asks to do; each slash command names the one it needs (``commands.Name``), labels and closing the
#: issue theirs (``bot.events.issues``).
Action = Literal["decide", "retry", "cancel"]


@dataclass(frozen=True)
class Actor:
    login: str
    type: str = "User"  # GitHub's user type: User, Bot, Organization
    role: str = "none"  # role_name from the collaborator permission API

    @property
    def is_bot(self) -> bool:
        return self.type == "Bot" or self.login.endswith("[bot]")


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    why: str


def authorize(actor: Actor, action: Action, config: BotConfig, *, issue_author: str | None = None) -> Verdict:
    if actor.is_bot:
        return Verdict(False, f"{actor.login} is a bot account; only people decide, retry or cancel a promotion")
    approver_by_role = actor.role in config.approvers.roles
    approver_by_name = actor.login.lower() in {u.lower() for u in config.approvers.users}
    if approver_by_role or approver_by_name:
        why = f"role {actor.role}" if approver_by_role else "listed in approvers.users"
        return Verdict(True, why)
    if action == "cancel" and issue_author and actor.login.lower() == issue_author.lower():
        return Verdict(True, "the person who filed the promotion may cancel it")
    roles = ", ".join(config.approvers.roles)
    needs = f"a role in ({roles}) or to be listed" if roles else "to be listed"
    return Verdict(
        False,
        f"@{actor.login} has the role `{actor.role}` on this repository; to {action} a promotion one needs "
        f"{needs} under approvers.users in .github/promotion-bot.yml",
    )


def approvers_text(config: BotConfig) -> str:
    """Who may decide, as the status comment names them; no role list when the configuration names only users
    (an empty one read "people with the role  on this repository")."""
    roles = ", ".join(config.approvers.roles)
    users = ", ".join(f"@{u}" for u in config.approvers.users)
    by_role = f"people with the role {roles} on this repository" if roles else ""
    return " or ".join(part for part in (by_role, users) if part)
