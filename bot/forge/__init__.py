"""Where a promotion's artifacts, conversation and PR live.

``Forge`` is the port; ``LocalForge`` keeps everything on this machine (a git
repository standing in for the llm-d-router fork, markdown files for the
issue thread and the PR). A GitHub forge implements the same protocol, so
stages never know which one they talk to.
"""

from bot.forge.base import Forge, PullRequestRecord, ReviewComment
from bot.forge.local import LocalForge

__all__ = ["Forge", "LocalForge", "PullRequestRecord", "ReviewComment"]
