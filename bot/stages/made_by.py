"""What makes each stage's artifacts in this bot, recorded in its ``StageRecord.made_by``.

``bot.__version__`` is not bumped between releases, so it cannot tell two bots apart: the dictionary says its own
version (and its digest, what that version stands for), the translator is the digest of the code and templates that
decide the Go it writes, and on the Claude path each author prompt says its version. A resume by a bot whose
recording differs redoes those stages (``bot.recheck``).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from bot import PROJECT_ROOT
from bot.model import Stage

#: What decides the translation's output: the Go generator and its templates, and the stage that calls it.
TRANSLATOR_FILES = ("bot/golang", "bot/stages/translate.py", "bot/stages/analyze.py", "bot/stages/implement_tests.py")

#: The author prompt each stage uses on the Claude path.
AUTHOR_PROMPTS = {Stage.TRANSLATE: "author/translate.md.j2", Stage.HYPOTHESIZE: "author/hypothesize.md.j2"}

#: The stages whose artifacts depend on what is recorded (stage 1 writes the dictionary's summary; stage 4's Go
#: tests come from the translation); later stages build on these artifacts, which a re-check compares.
RECORDED = (Stage.ANALYZE, Stage.TRANSLATE, Stage.HYPOTHESIZE, Stage.IMPLEMENT_TESTS)


@lru_cache(maxsize=1)
def dictionary() -> str:
    """'1.2.1 (sha256 3f2a9c0b1d4e)': the version the data declares, and the digest of what it holds."""
    from bot.dictionary import content_digest, load_raw

    raw = load_raw()
    return f"{raw.get('version', '?')} (sha256 {content_digest(raw)[:12]})"


@lru_cache(maxsize=1)
def translator() -> str:
    """The sha256 (12 digits) of every file that decides the Go the translation writes."""
    h = hashlib.sha256()
    for name in TRANSLATOR_FILES:
        root = PROJECT_ROOT / name
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".pyc")
        for path in files:
            h.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def made_by(stage: Stage, *, llm: bool) -> dict[str, str]:
    """What makes ``stage``'s artifacts in this bot ({} for a stage a re-check does not redo)."""
    if stage not in RECORDED:
        return {}
    out = {"dictionary": dictionary()}
    if stage in (Stage.TRANSLATE, Stage.IMPLEMENT_TESTS):
        out["translator"] = translator()
    if llm and stage in AUTHOR_PROMPTS:
        from bot.agents.prompts import header

        pid, version = header(AUTHOR_PROMPTS[stage])
        out["prompt"] = f"{pid}@{version}"
    return out


def current(*, llm: bool) -> dict[int, dict[str, str]]:
    """stage -> ``made_by`` for every stage this bot records it for."""
    return {int(s): made_by(s, llm=llm) for s in RECORDED}
