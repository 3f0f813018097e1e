"""What every handler gets: the job's environment, one REST client, the configuration, helpers to act."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.events.env import EventEnv
from bot.events.issue_request import is_promotion
from bot.events.promotion import Promotion
from bot.github.authz import Action, Actor, Verdict, authorize
from bot.github.client import GitHub, IssueInfo
from bot.github.config import BotConfig, parse_config


@dataclass
class Session:
    env: EventEnv
    client: GitHub
    config: BotConfig
    #: who the audit names for what this event sets off (a benchmark dispatched or cancelled): the person whose
    #: event it is, or "bot" for the bot's own runs (its continuations) and other bots
    sender: str = "bot"
    #: login -> role on the repository, asked once per run: a burst of one person's commands asks once
    roles: dict[str, str] = field(default_factory=dict)
    #: the commands this run left for a later one (``Promotion.hold``), as markdown for the job summary; "" for none
    waiting: str = ""
    #: a promotion whose answers to missed commands this run replied to after its act: the run's next save records
    #: them, or ``bot.events.handle`` at its end (``comments.record_answered``); None when nothing waits for that
    unrecorded: Promotion | None = None

    @classmethod
    def open(cls, env: EventEnv, *, client_factory: Callable | None = None) -> Session:
        text = env.config_path.read_text(encoding="utf-8") if env.config_path.is_file() else None
        config = parse_config(text, env.repository)
        factory = client_factory or GitHub
        client = factory(env.write_token, env.repository, api_url=env.api_url, bot_logins=tuple(config.bot_logins))
        return cls(env, client, config)

    def promotion(self, issue: IssueInfo, *, current: bool = False) -> Promotion | None:
        """The promotion this issue holds, or None when it is not a promotion issue; ``current``: ``issue`` was
        read from GitHub in this run, not taken from the event's payload."""
        if not is_promotion(issue):
            return None
        return Promotion(self.env, self.client, self.config, issue, current=current, actor=self.sender)

    def sent_by(self, event) -> None:
        """Name the person whose event this is (``sender``); a bot's event, the bot's own included, stays "bot"."""
        sender = getattr(event, "sender", None)
        login = str(getattr(sender, "login", "") or "")
        if login and str(getattr(sender, "type", "") or "") != "Bot" and login.lower() not in self.client.bot_logins:
            self.sender = login

    def authorize(
        self, login: str, user_type: str, action: Action, *, issue_author: str | None = None
    ) -> tuple[Actor, Verdict]:
        """Look the person's role up (one call, once per run) and ask the one authorization rule (a read-only
        command never asks: ``commands.Name.read_only``)."""
        actor = Actor(login=login, type=user_type)
        if not actor.is_bot:
            if login.lower() not in self.roles:
                self.roles[login.lower()] = self.client.role(login)
            actor = Actor(login=login, type=user_type, role=self.roles[login.lower()])
        return actor, authorize(actor, action, self.config, issue_author=issue_author)
