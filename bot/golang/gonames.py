"""Go names and literals for generated code, and the one jinja2 environment for Go templates.

Kept apart from generation so the naming rules (kebab plugin type -> package, struct, file; Go
initialisms in exported names) are one place every generator module and the tests agree on.
"""

from __future__ import annotations

import functools
import math
import re
import sys
import textwrap
from pathlib import Path

import jinja2

from bot.dictionary import Dictionary
from bot.escape import go_comment, go_string, md
from bot.golang.golines import fits, message_call, signature, wrap
from bot.model import PolicyKind

TEMPLATES = Path(__file__).parent / "templates"
MAX_COMMENT = 100  # columns, tabs counted as 4: llm-d-router's line-length convention for comments

#: Words Go spells in capitals (Effective Go, golint's list) plus BLIS's own (KV, SLO, TP, LoRA) and
#: the scheduling policies' (SJF, FCFS, EDF).
INITIALISMS = {
    "api": "API",
    "cpu": "CPU",
    "edf": "EDF",
    "fcfs": "FCFS",
    "gpu": "GPU",
    "http": "HTTP",
    "id": "ID",
    "ids": "IDs",
    "itl": "ITL",
    "json": "JSON",
    "kv": "KV",
    "lora": "LoRA",
    "lru": "LRU",
    "rng": "RNG",
    "sjf": "SJF",
    "slo": "SLO",
    "tp": "TP",
    "ttft": "TTFT",
    "url": "URL",
    "us": "Us",
}


@functools.lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # One escaping filter per format (bot.escape): Go strings, Go comments, markdown (the README).
    env.filters["goquote"] = go_string
    env.filters["gocomment"] = go_comment
    env.filters["goraw"] = go_raw
    env.filters["md"] = md
    # Line width (bot.golang.golines): whether a line fits, and an expression broken to fit where it starts.
    env.filters["gofits"] = fits
    env.filters["gowrap"] = wrap
    env.filters["gofunc"] = signature
    env.filters["gomessage"] = lambda head, message, args, indent: message_call(head, message, args, indent, go_string)
    env.filters["comment"] = lambda text, indent=0: "\n".join(
        "\t" * indent + "// " + go_comment(line) for line in comment_lines(text, indent)
    )
    return env


def render(name: str, **ctx) -> str:
    return _env().get_template(name).render(**ctx)


def go_raw(s: str) -> str:
    """A Go raw string literal for ``s`` when it can be one (JSON reads better without escapes), else quoted."""
    if "`" in s or any(not (c.isprintable() or c in "\n\t") for c in s):
        return go_string(s)
    return f"`{s}`"


def go_quote(s: str) -> str:
    """A Go string literal for ``s`` (bot.escape.go_string: strconv.Quote's escapes, invisibles visible)."""
    return go_string(s)


def go_float(v: float) -> str:
    """``v`` as a Go float literal. An infinite value (a Python ``1e400`` or ``math.inf`` "never" sentinel) is
    printed as the largest finite float64, which compares the same with every finite value: Go has no
    literal for infinity, and ``inf`` would not compile."""
    if math.isinf(v):
        return ("-" if v < 0 else "") + repr(sys.float_info.max)
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v)}"
    return repr(float(v))


def go_value(v: float, go_type: str | None) -> str:
    if go_type in ("int", "int64", "int32"):
        return str(int(v))
    return go_float(v)


def lower_camel(name: str) -> str:
    if not name:
        return name
    m = re.match(r"^([A-Z]+)(?=[A-Z][a-z]|$)", name)
    if m and len(m.group(1)) > 1:  # KVUtilization -> kvUtilization, SLOClass -> sloClass
        return m.group(1).lower() + name[len(m.group(1)) :]
    return name[0].lower() + name[1:]


def upper_camel(name: str) -> str:
    return name[:1].upper() + name[1:]


def camel_words(name: str) -> list[str]:
    return re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|[A-Z]+|\d+", name)


def exported(name: str) -> str:
    """lowerCamel JSON name -> exported Go name with Go initialisms: kvUtilization -> KVUtilization."""
    return "".join(INITIALISMS.get(w.lower(), w[:1].upper() + w[1:]) for w in camel_words(name))


def package_name(plugin_type: str) -> str:
    pkg = re.sub(r"[^a-z0-9]", "", plugin_type.lower())
    if not pkg or pkg[0].isdigit():
        pkg = "p" + pkg
    return pkg


def struct_name(plugin_type: str) -> str:
    parts = [p for p in re.split(r"[^a-zA-Z0-9]+", plugin_type) if p]
    name = "".join(INITIALISMS.get(p.lower(), p[:1].upper() + p[1:]) for p in parts) or "Evolved"
    if name[0].isdigit():
        name = "P" + name
    return name


def file_stem(plugin_type: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "_", plugin_type.lower()).strip("_") or "evolved"
    # Go treats *_test.go as tests and drops *_<GOOS>.go / *_<GOARCH>.go on other platforms.
    if re.search(r"_(test|linux|darwin|windows|amd64|arm64|js|wasm|plan9|386|arm)$", stem) or stem in (
        "adapter",
        "evolved",
        "baseline",
    ):
        stem += "_plugin"
    return stem


def package_dir(d: Dictionary, kind: PolicyKind, plugin_type: str) -> str:
    return d.interface(kind).target_dir.replace("{package}", package_name(plugin_type))


def config_path(plugin_type: str) -> str:
    """The EndpointPickerConfig the translation ships for the plugin, branch-relative."""
    return f"deploy/config/{plugin_type}-epp-config.yaml"


def id_places(package_dir: str, plugin_type: str) -> dict[str, str]:
    """The generated files named for the plugin type -> what a finding's id calls them (``Finding.identity``):
    the package directory, its main file and test (``file_stem``) and the config. `promote translate` derives the
    type from the file and a promotion names its own, so an id quoted from a rehearsal names the same finding in
    the promotion; the package's other files (evolved.go, README.md) keep their names inside ``{package}/``."""
    stem = file_stem(plugin_type)
    return {
        f"{package_dir}/": "{package}/",
        f"{package_dir}/{stem}.go": "{package}/{plugin}.go",
        f"{package_dir}/{stem}_test.go": "{package}/{plugin}_test.go",
        config_path(plugin_type): "{config}",
    }


def comment_lines(text: str, indent: int = 1) -> list[str]:
    """Wrap prose into Go comment lines that stay within MAX_COMMENT columns at that tab depth."""
    width = MAX_COMMENT - 4 * indent - 3
    return textwrap.wrap(" ".join(str(text).split()), width=width, break_on_hyphens=False) or [""]
