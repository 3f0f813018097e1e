"""Each format's escaping, on hostile strings: what comes out reads back as text in that format, nothing more."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml

from bot.escape import commit_block, commit_subject, go_comment, go_string, md, sh, yaml_comment, yaml_string
from bot.golang.source import parse_go

HOSTILE = [
    "plain",
    "two\nlines",
    "crlf\r\nand\rcr",
    "sep\u2028line\u2029para\x85nel\x0bvt\x0cff",
    "*/ package main; func init() { panic(1) } /*",
    "<script>alert(1)</script>",
    "<!-- promotion-bot:status -->",
    "| a | b |",
    "[click](https://evil.example) ![img](x)",
    "back\\slash and \"quotes\" and 'single'",
    "`code` and ``` fence",
    "# heading",
    "> quote",
    "tab\there",
    "nul\x00bell\x07esc\x1bdel\x7f",
    "bidi \u202eevil\u202c and zero\u200bwidth \ufeff",
    "emoji 🚀 and accents é ü",
    "${{ secrets.GITHUB_TOKEN }} $(rm -rf /)",
    "Promotion-Stage: 7\nPromotion-Inputs: 0",
    "",
]
IDS = [f"s{i}" for i in range(len(HOSTILE))]


# ----------------------------------------------------------------------- Go
def _go_file(body: str) -> str:
    return f"package p\n\n{body}\n"


def _errors(tree) -> list:
    bad, stack = [], [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            bad.append(n)
        stack.extend(n.children)
    return bad


def _decode_go_string(literal: str) -> str:
    """Interpret the escapes go_string writes (a Go interpreted string literal)."""
    assert literal[0] == literal[-1] == '"'
    simple = {"\\": "\\", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}

    def one(m: re.Match) -> str:
        e = m.group(1)
        if e[0] in simple:
            return simple[e[0]]
        return chr(int(e[1:], 16))

    return re.sub(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)", one, literal[1:-1])


@pytest.mark.parametrize("s", HOSTILE, ids=IDS)
def test_go_comment_stays_one_comment(s):
    src = _go_file(f"// from {go_comment(s)}\nvar X = 1")
    tree = parse_go(src)
    assert _errors(tree) == []
    top = [n.type for n in tree.root_node.children]
    assert top == ["package_clause", "comment", "var_declaration"], top
    assert not any(ch in go_comment(s) for ch in "\n\r\u2028\u2029\u202e\u200b")


@pytest.mark.parametrize("s", HOSTILE, ids=IDS)
def test_go_string_reads_back(s):
    lit = go_string(s)
    tree = parse_go(_go_file(f"var X = {lit}"))
    assert _errors(tree) == []
    assert _decode_go_string(lit) == s
    assert "\u202e" not in lit and "\n" not in lit


# --------------------------------------------------------------------- YAML
@pytest.mark.parametrize("s", HOSTILE, ids=IDS)
def test_yaml_string_reads_back(s):
    doc = yaml.safe_load(f"# {yaml_comment(s)}\nkey: {yaml_string(s)}\nafter: 1\n")
    assert doc == {"key": s, "after": 1}


# ----------------------------------------------------------------- markdown
def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


@pytest.mark.parametrize("s", HOSTILE, ids=IDS)
def test_markdown_stays_inline_text(s):
    out = md(s)
    assert not any(ch in out for ch in "\n\r\u2028\u2029\x85\u202e\u200b\x00")
    row = f"| {md(s)} | {md(s)} |"
    assert _unescaped_pipes(row) == 3, row
    outside_code = re.sub(r"(`+).*?\1", "", out)
    assert "<" not in outside_code
    assert "<!--" not in out
    assert not re.search(r"(?<!\\)\[[^\]]*(?<!\\)\]\(", out), "no link survives"
    assert not re.match(r"\s*[#>]", out)


def test_markdown_keeps_code_spans_and_ordinary_text():
    assert md("`x < 0.5` is read") == "`x < 0.5` is read"
    assert md("ttft_mean fell by 12% (p = 0.01)") == "ttft_mean fell by 12% (p = 0.01)"
    assert md("a `b|c` d") == "a `b\\|c` d"
    assert md("x < y") == "x &lt; y"
    assert md("unmatched ` tick") == "unmatched \\` tick"
    assert md(None) == ""


def test_markdown_mentions_notify_nobody():
    """Found by the red team: `cc @octocat` in an issue title became a live mention in the status comment."""
    assert md("cc @octocat and @llm-d/maintainers") == "cc `@octocat` and `@llm-d/maintainers`"
    assert md("mail a@b.example") == "mail a@b.example"  # an e-mail address is no mention
    assert md("`@x` stays") == "`@x` stays"


def test_markdown_with_a_separator_keeps_a_persons_lines_apart_in_one_cell():
    """A reason and its directive line (gate tables) must not run together into one sentence."""
    reason = "A1 should also be checked at a lower rate\r\n\nmargin: 0.04 | x\n"
    assert md(reason, sep="; ") == "A1 should also be checked at a lower rate; margin: 0.04 \\| x"


# ------------------------------------------------------------ shell and git
@pytest.mark.parametrize("s", HOSTILE, ids=IDS)
def test_shell_word_reads_back(s):
    assert shlex.split(f"promote status --work {sh(s)}") == ["promote", "status", "--work", s]


@pytest.mark.parametrize("s", HOSTILE, ids=IDS)
def test_commit_text_cannot_forge_a_trailer(s):
    subject = commit_subject(s)
    assert "\n" not in subject and len(subject) <= 120
    for line in commit_block(s).split("\n"):
        assert line.startswith("  ")
        assert not re.match(r"^Promotion-", line)


def test_a_long_commit_subject_is_cut_at_a_word_never_mid_word():
    """Found by consistency3 (8): `git log --oneline` showed "verdicts: 5 confirmed, 0 refuted, 9 inconclusiv"."""
    stage5 = (
        "stage 5: run and validate: go vet and go test pass (6 passed, 0 failed); verdicts: 5 confirmed, 0 refuted, "
        "9 inconclusive; 72 runs"
    )
    assert commit_subject(stage5).endswith("verdicts: 5 confirmed, 0 refuted...")
    stage7 = "stage 7: pull request: PR stays a draft; gates 1, 2 and 3's reviews did not converge " + "x" * 40
    cut = commit_subject(stage7)
    assert len(cut) <= 120 and cut.endswith("did not converge...")
    assert commit_subject("short subject") == "short subject"


def test_a_leading_number_is_not_mangled_and_an_ordered_list_marker_is_escaped_where_markdown_allows():
    """Found by a new user: '98.4% agreement' rendered as '\\98.4% agreement' (a backslash before a digit shows)."""
    from bot.escape import md

    assert md("98.4% agreement") == "98.4% agreement"
    assert md("3") == "3"
    assert md("1. not a list") == "1\\. not a list"
    assert md("12) not a list either") == "12\\) not a list either"


def test_line_with_sep_keeps_a_reasons_lines_apart():
    from bot.escape import line as one_line

    assert one_line("a note\r\n\nparam x: 1\n", sep="; ") == "a note; param x: 1"
    assert one_line("a note\nparam x: 1") == "a note param x: 1"
    assert one_line("bad\x1b[31m\nok", sep="; ") == "bad\\u001b[31m; ok"
