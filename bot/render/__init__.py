"""Markdown rendering for people: status comments, review reports, findings, the report, the PR body.

Templates live in ``templates/`` (jinja2, StrictUndefined so a missing value
is an error, not an empty cell). Go code templates belong to bot.golang.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2


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
    env.filters["cell"] = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    return env


def render(template: str, **context) -> str:
    return environment().get_template(template).render(**context)
