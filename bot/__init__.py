"""The promotion bot: BLIS evolved policies → llm-d-router plugins, behind three human gates."""

from bot.home import find_home

__version__ = "0.1.0"

#: The checkout the bot's data is read from (dictionary/, prompts/, gomirror/, the issue form), which a wheel does
#: not carry: $PROMOTION_BOT_HOME when set (the action sets it), else the checkout of an editable install
#: (`pip install -e .`, as the README says). ``bot.home.problem`` says what is missing there and how to fix it.
PROJECT_ROOT = find_home()
