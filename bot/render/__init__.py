"""Markdown rendering for people: status comments, review reports, findings, the report, the PR body.

Templates live in ``templates/`` (jinja2, StrictUndefined so a missing value
is an error, not an empty cell). Go code templates belong to bot.golang. Every
interpolated string someone else wrote is escaped with ``| md`` (or ``| sh``);
tests/robust/test_escape_templates.py holds the list of interpolations that
need none (numbers, enum values, the bot's own names).
"""

from __future__ import annotations

from functools import lru_cache

import jinja2

from bot import directives
from bot.bench.units import gpu_minutes
from bot.escape import md, sh
from bot.model import finding_ids


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bot.render", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["pct"] = lambda x, digits=1: "n/a" if x is None else f"{x * 100:+.{digits}f}%"
    # Text the bot did not write goes through the filter of its format (bot.escape): `md` for markdown
    # (paragraphs, list items, table cells), `sh` for a word of a command people copy.
    env.filters["gpumin"] = gpu_minutes  # GPU-minutes, written alike on every page (bot.bench.units)
    env.filters["md"] = md
    env.filters["sh"] = sh
    env.globals["directives_for"] = directives.for_gate  # each gate's change-request forms (one registry)
    env.globals["none_clears"] = directives.none_clears  # ...or why none of them clears the open findings
    env.globals["p_adjusted"] = _p_adjusted  # a cell's adjusted p, read alike in every document
    env.globals["mean"] = _mean  # a cell's mean, likewise
    env.globals["finding_ids"] = finding_ids  # each finding's id (check#digest), quoted alike everywhere
    return env


def _p_adjusted(p: float | None, held_by: str) -> str:
    from bot.stats.explain import p_adjusted_text

    return p_adjusted_text(p, held_by)


def _mean(x: float) -> str:
    from bot.stats.explain import mean_text

    return mean_text(x)


def render(template: str, **context) -> str:
    return environment().get_template(template).render(**context)
