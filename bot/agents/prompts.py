"""The prompt templates in ``prompts/`` and the one request layout every call uses.

A request is four blocks, in this order, so that the prompt cache can serve
every call after the first (``prompts/README.md``):

1. the shared reference (identical bytes in every call of every role), cached;
2. the role's instructions (the template's ``system`` block), cached;
3. the artifacts under work (committed files and untrusted inputs, all delimited as data), cached;
4. the task (the template's ``task`` block), not cached.

Rendering is deterministic: the same inputs give the same bytes, or the cache
would silently miss.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jinja2
from pydantic import BaseModel

from bot import PROJECT_ROOT
from bot.model import RequestError

PROMPTS_DIR = PROJECT_ROOT / "prompts"
_HEADER = re.compile(r"\A\{#-?\s*prompt:\s*(?P<id>[\w/.-]+)\s+version:\s*(?P<version>\d+)")


class PromptError(RequestError):
    """A prompt template is missing or has no version header."""


@dataclass(frozen=True)
class Prompt:
    id: str
    version: int
    template: jinja2.Template

    @property
    def tag(self) -> str:
        return f"{self.id}@{self.version}"

    def render_block(self, block: str, **variables: Any) -> str:
        """One part of the template (``system``, ``task``; reviewers also ``checklist``)."""
        return self.template.render(part=block, **variables).strip() + "\n"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def header(name: str) -> tuple[str, int]:
    """(id, version) from a template's first line; raises PromptError without one."""
    path = PROMPTS_DIR / name
    if not path.is_file():
        raise PromptError(f"prompt template {path} is missing; restore prompts/ from git")
    m = _HEADER.match(path.read_text(encoding="utf-8"))
    if not m:
        raise PromptError(f"{path}: the first line must be a version header {{#- prompt: <id> version: <n> -#}}")
    return m.group("id"), int(m.group("version"))


@lru_cache(maxsize=16)
def load(name: str) -> Prompt:
    pid, version = header(name)
    return Prompt(pid, version, _environment().get_template(name))


@lru_cache(maxsize=1)
def reference() -> tuple[str, str]:
    """(text, tag) of the shared reference block: the same bytes in every call."""
    from bot.dictionary import load_dictionary
    from bot.dictionary_doc import render_markdown

    prompt = load("reference/reference.md.j2")
    text = prompt.template.render(
        version=prompt.version,
        blis_standards=(PROMPTS_DIR / "reference" / "blis-standards.md").read_text(encoding="utf-8").strip(),
        llmd_router=(PROMPTS_DIR / "reference" / "llm-d-router.md").read_text(encoding="utf-8").strip(),
        dictionary=render_markdown(load_dictionary()).strip(),
    )
    return text.strip() + "\n", prompt.tag


def checklist(gate: int) -> list[tuple[str, str]]:
    """The gate's checklist as (number, text), read from the reviewer template itself."""
    prompt = load(f"reviewer/gate{gate}.md.j2")
    text = prompt.render_block("checklist")
    return [(m.group(1), m.group(2).strip()) for m in re.finditer(r"^(\d+)\. (.+)$", text, re.M)]


# --------------------------------------------------------------------------
# The request layout
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptRequest:
    """One call: which prompt, the four blocks, the output model, and where it belongs in the promotion."""

    prompt: str  # id@version of the role template
    role: str  # author | reviewer
    role_text: str
    context: str
    task: str
    output: type[BaseModel]
    stage: int | None = None
    gate: int | None = None
    round: int | None = None
    label: str = ""  # e.g. "gate 1 item 3", for messages
    extra: dict[str, Any] = field(default_factory=dict)

    def system_blocks(self) -> list[str]:
        return [reference()[0], self.role_text]


def numbered(text: str) -> str:
    """Lines prefixed with their 1-based number, so findings can cite lines exactly."""
    lines = text.splitlines()
    width = len(str(len(lines))) if lines else 1
    return "\n".join(f"{i:>{width}}| {line}" for i, line in enumerate(lines, 1))


def artifacts_block(title: str, files: dict[str, str], untrusted: dict[str, str] | None = None) -> str:
    """The committed files, then the untrusted inputs, in a stable order; each numbered and delimited.

    The committed files are delimited like the inputs they come from: the plugin carries the evolved
    program's comments and identifiers, the hypotheses the claims' wording, the reports quote both. No
    text from outside reaches a model outside a nonce-tagged delimiter, by way of an artifact or directly.
    """
    from bot.agents.untrusted import delimit

    parts = [f"# {title}"]
    for path in sorted(files):
        parts.append(f"## `{path}`\n\n{delimit(path, numbered(files[path]))}")
    for label in sorted(untrusted or {}):
        parts.append(f"## {label} (untrusted)\n\n{delimit(label, numbered(untrusted[label]))}")
    return "\n\n".join(parts).strip() + "\n"


def as_json(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) if data else "[]"


def as_data(label: str, data: Any) -> str:
    """``as_json`` inside a delimiter: findings, earlier findings and author responses quote the artifacts
    and the untrusted inputs (a finding names the evolved line it comes from, a model's note may repeat it)."""
    from bot.agents.untrusted import delimit

    return delimit(label, as_json(data)) if data else "[]"
