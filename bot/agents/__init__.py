"""Claude as author and as independent reviewer, on the ``anthropic`` SDK.

- ``settings``  — the CLI flags of ``LLMSettings`` (``bot.model.llm``: CLI flags, run.json, the GitHub config file)
- ``prompts``   — the versioned templates in ``prompts/`` and the four-block request layout
- ``client``    — one structured call: cache breakpoints, validation, one re-ask, budget, usage, errors
- ``schemas``   — the output models, and ``ReviewerInput`` (everything a reviewer may see)
- ``reviewer``  — the independent review, one perspective per checklist item
- ``author``    — translate (hazards, untranslatable signals, findings), hypothesize (wording), document
- ``guard``     — the deterministic checks every author patch must pass
- ``record``    — the author's committed responses and dropped patches
- ``untrusted`` — sanitizing, delimiting and scanning text from outside

``Agents`` is what the runner and the stages hold: ``None`` with ``--llm
offline``, and then nothing here is imported beyond this module and ``bot.model.llm``.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from bot.model.llm import LLMSettings


class Agents:
    """The Claude author and reviewer of one promotion run, and the usage of the step in progress."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        client: Any = None,
        log: Callable[[str], None] = lambda s: None,
        replies: MutableMapping[str, dict] | None = None,
    ):
        from bot.agents.client import LLMClient

        self.settings = settings
        self.llm = LLMClient(settings, client=client, log=log, replies=replies)

    @property
    def label(self) -> str:
        return f"claude ({self.settings.model})"

    def begin_step(self, state) -> None:
        """Before a stage or a review: what the promotion has spent so far counts against the budget."""
        self.llm.begin_step(state.llm.totals().tokens)

    def take_calls(self) -> list:
        """The step's calls, for the state; called once the step's result is being saved."""
        return self.llm.take_calls()

    def review(self, inp):
        from bot.agents.reviewer import review

        return review(self.llm, inp, perspectives=self.settings.perspectives)


def build_agents(
    settings: LLMSettings,
    *,
    log: Callable[[str], None] = lambda s: None,
    replies: MutableMapping[str, dict] | None = None,
) -> Agents | None:
    """Agents for ``settings`` (resolved), or None for the deterministic path. ``replies``: see
    ``bot.agents.client`` (a step that must run again, e.g. after a sandboxed execution, replays its replies)."""
    settings = settings.resolved()
    return Agents(settings, log=log, replies=replies) if settings.uses_model else None


__all__ = ["Agents", "LLMSettings", "build_agents"]
