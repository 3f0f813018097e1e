"""Where the bot's data lives: the files it reads that sit at the root of its repository, beside the code.

The dictionary, the prompts, the Go mirror and the issue form are not part of the
``bot`` package, so a wheel (``pip install <checkout>``, as the action's install step
does) does not carry them: installed that way, the package's parent is
site-packages and every promotion would fail on a path there. The home is found
once, at import: the checkout named by ``PROMOTION_BOT_HOME`` (the action sets it to
its own path), else the checkout the package sits in (an editable install,
``pip install -e``). ``problem`` says, before any work starts, what is missing and
the two ways to fix it.

Standard library only: ``bot/__init__.py`` imports this, and ``promote --help`` stays fast.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: The variable naming a checkout of the bot's repository (the action sets it to $GITHUB_ACTION_PATH).
HOME_VAR = "PROMOTION_BOT_HOME"

#: What the bot reads from its home (a path relative to it: what needs it). One file or folder per reader.
DATA: dict[str, str] = {
    "dictionary/dictionary.yaml": "the translation dictionary",
    "prompts/author": "the Claude author's and reviewer's prompts",
    "gomirror/llm-d-router/go.mod": "the llm-d-router mirror every plugin is built and tested against",
    "gomirror/blis/sim": "the BLIS mirror the differential harness runs",
    ".github/ISSUE_TEMPLATE/promotion.yml": "the issue form a promotion issue is read with",
}


def find_home(environ: Mapping[str, str] | None = None, package: Path | None = None) -> Path:
    """The checkout the bot's data is read from: ``PROMOTION_BOT_HOME`` when set, else the package's parent."""
    env = os.environ if environ is None else environ
    named = env.get(HOME_VAR, "").strip()
    if named:
        return Path(named).expanduser().resolve()
    return (package or Path(__file__).resolve().parent).parent


def missing(home: Path) -> list[str]:
    """The data ``home`` lacks, as paths relative to it (empty: the bot can run from it)."""
    return [rel for rel in DATA if not (home / rel).exists()]


def problem(home: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """Why the bot cannot run from ``home`` and how to fix it, or None when its data is all there."""
    lacking = missing(home)
    if not lacking:
        return None
    env = os.environ if environ is None else environ
    what = ", ".join(f"{rel} ({DATA[rel]})" for rel in lacking)
    if env.get(HOME_VAR, "").strip():
        return (
            f"{HOME_VAR}={home} is not a checkout of the promotion bot's repository: it lacks {what}; point "
            f"{HOME_VAR} at a checkout of the bot (the action sets it to its own path, $GITHUB_ACTION_PATH)"
        )
    return (
        f"the promotion bot's data is not installed with it: {home} lacks {what}. These files sit at the root of "
        "the bot's repository and a non-editable install (a wheel) does not carry them; install the bot editable "
        f"(`pip install -e <checkout of the bot>`), or set {HOME_VAR} to a checkout of the bot's repository"
    )


def require(home: Path, environ: Mapping[str, str] | None = None) -> None:
    """Raise the ``problem`` as a RequestError (the CLI prints it and exits 2) when the bot cannot run from ``home``."""
    said = problem(home, environ)
    if said is not None:
        from bot.model import RequestError

        raise RequestError(said)
