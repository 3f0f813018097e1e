"""Which lines of a pull request a review comment may anchor to, from its unified diff (pure).

GitHub refuses a whole review if one inline comment sits on a line outside
the diff, so every anchor is checked against this before posting; a finding
that cannot be anchored goes into the review body instead.
"""

from __future__ import annotations

import re

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@")


def commentable_lines(diff: str) -> dict[str, set[int]]:
    """path -> new-file line numbers on the RIGHT side of the diff (added or context lines of a hunk)."""
    out: dict[str, set[int]] = {}
    path: str | None = None
    line = 0
    for raw in diff.split("\n"):
        if raw.startswith("diff --git "):
            path = None
        elif raw.startswith("+++ "):
            target = raw[4:].strip()
            path = None if target == "/dev/null" else target.removeprefix("b/")
            if path is not None:
                out.setdefault(path, set())
        elif path is not None and (m := _HUNK.match(raw)):
            line = int(m.group("start"))
        elif path is not None and line:
            if raw.startswith(("+", " ")):
                out[path].add(line)
                line += 1
            elif raw.startswith(("-", "\\")):
                continue
            else:
                line = 0
    return out


def split_anchored(comments: list, anchors: dict[str, set[int]]) -> tuple[list, list]:
    """(comments whose path and line are in the diff, the rest) for objects with ``path`` and ``line``."""
    inside, outside = [], []
    for c in comments:
        (inside if c.line in anchors.get(c.path, set()) else outside).append(c)
    return inside, outside
