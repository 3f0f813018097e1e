"""Hostile strings from people and programs reach generated files only escaped for the file's format."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime

import pytest
import yaml

from bot import pipeline
from bot.cli import main
from bot.dictionary import load_dictionary
from bot.golang.analyze import analyze
from bot.golang.source import parse_evolved_source, parse_go
from bot.golang.translate import translate
from bot.model import Decision, GateDecision, PromotionRequest, Stage, Status
from bot.render import render
from bot.yaml_safe import load_yaml
from tests.conftest import EXAMPLE, REQUEST, git

SCRIPT = "<script>alert(document.cookie)</script>"
FORGED_ROW = "| ✅ | 7. pull request | merged |"
ACTOR = f"mallory\n{FORGED_ROW}\n{SCRIPT}"
REASON = f"looks fine\n<!-- promotion-bot:status -->\n{FORGED_ROW}\n[approve here](https://evil.example)"
EVIL_NAME = "best\nfunc init() { panic(1) }\nvar evil = 1 \u202e.py"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def check_markdown(text: str, where: str) -> None:
    """No raw HTML, no hidden comment but the bot's markers, no link to the hostile site, tables intact.

    YAML front matter is data (safe_dump escapes it; GitHub shows it as an escaped table), checked as YAML.
    """
    if text.startswith("---\n"):
        front, text = text[4:].split("\n---\n", 1)
        assert isinstance(load_yaml(front), dict), where
    assert "<script" not in text, where
    for line in text.splitlines():
        if "<!--" in line:
            assert re.fullmatch(r"<!-- promotion-bot:[a-z0-9-]+ -->", line.strip()), (where, line)
    assert not re.search(r"(?<!\\)\]\(https://evil", text), where
    assert "\u202e" not in text, where
    table: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            widths = {unescaped_pipes(row) for row in table}
            assert len(widths) == 1, (where, table)
            table = []
        assert not line.startswith(FORGED_ROW), (where, line)


def go_errors(text: str) -> list[str]:
    bad, stack = [], [parse_go(text).root_node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            bad.append(f"line {n.start_point[0] + 1}")
        stack.extend(n.children)
    return bad


def test_status_comment_with_a_hostile_actor_and_reason():
    request = PromotionRequest.load(REQUEST).model_copy(update={"title": f"Evil | title {SCRIPT}\nsecond line"})
    state = pipeline.new_state("1", "f" * 64, request.branch, actor="t", now=NOW)
    state = state.model_copy(
        update={
            "status": Status.AWAITING_DECISION,
            "open_gate": 2,
            "next_stage": None,
            "decisions": [
                GateDecision(gate=1, decision=Decision.REQUEST_CHANGES, actor=ACTOR, at=NOW, reason=REASON),
                GateDecision(gate=1, decision=Decision.APPROVE, actor=ACTOR, at=NOW),
            ],
        }
    )
    text = render(
        "status_comment.md.j2",
        state=state,
        request=request,
        describe=pipeline.describe(state),
        Stage=Stage,
        gates=pipeline.GATE_COVERS,
        home="local",
        work="/tmp/my work; rm -rf ~",
    )
    check_markdown(text, "status comment")
    assert "approved by mallory \\| ✅ \\| 7. pull request \\| merged \\| &lt;script>alert" in text
    assert "--work '/tmp/my work; rm -rf ~'" in text


def test_generated_go_with_a_hostile_source_name():
    src = parse_evolved_source((EXAMPLE / "best_program.py").read_text(), EVIL_NAME)
    d = load_dictionary()
    tr = translate(src, analyze(src, d, None), d, plugin_type="evolved-adaptive-scorer")
    go_files = {p: t for p, t in tr.files.items() if p.endswith(".go")}
    assert go_files
    for path, text in go_files.items():
        assert go_errors(text) == [], path
        assert not re.search(r"^func init\(\)", text, re.M), path
        assert "\u202e" not in text, path
    # Shipped Go names no file outside the repository: the evolved program's name never reaches it.
    assert not any("func init() { panic(1) }" in text for text in go_files.values())
    for path, text in tr.files.items():
        if path.endswith(".md"):
            check_markdown(text, path)
        if path.endswith((".yaml", ".yml")):
            load_yaml(text)


@pytest.mark.slow
def test_a_promotion_full_of_hostile_strings(tmp_path, capsys):
    """The whole rehearsal, gate by gate, with hostile text in the request, the actor and the reasons."""
    d = tmp_path / "req"
    d.mkdir()
    (d / EVIL_NAME).write_text((EXAMPLE / "best_program.py").read_text())
    (d / "best_program_info.json").write_text((EXAMPLE / "best_program_info.json").read_text())
    doc = yaml.safe_load(REQUEST.read_text())
    doc["title"] = f"Evil | title {SCRIPT}\n<!-- promotion-bot:status -->"
    doc["source"] = EVIL_NAME
    doc["origin"]["run"] = "run`with`ticks | pipe"
    doc["origin"]["blis_version"] = f"v1\n# heading\n{SCRIPT}"
    doc["claims"][0]["statement"] = f"Lower p95 [click](https://evil.example) {SCRIPT}\n| a | b |"
    doc["claims"][0]["mechanism"] = "A mechanism\n\n```\nfenced\n```\n> quoted"
    doc["workloads"][0]["description"] = f"desc\n{SCRIPT}"
    (d / "promotion.yaml").write_text(yaml.safe_dump(doc))
    work, fork = tmp_path / "work", tmp_path / "fork"
    common = ["--work", str(work), "--quiet", "--actor", ACTOR]
    run = ["run", str(d / "promotion.yaml"), "--fork", str(fork), "--results", str(EXAMPLE / "results")]
    assert main([*run, "--allow-sample-data", *common]) == 0
    # A free-text change request (no directive) is answered at once and records nothing (exit 2, one line);
    # the hostile reason goes on record with the approval instead.
    assert main(["request-changes", "1", "--reason", REASON, *common]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["approve", "1", "--reason", REASON, "--approve", "all", *common]) == 0
    capsys.readouterr()

    for f in (work / "issue" / "thread.md", work / "pr" / "pull-request.md"):
        check_markdown(f.read_text(), f.name)
    branch = git(fork, "branch", "--list", "promotion/*").strip().lstrip("* ")
    files = git(fork, "ls-tree", "-r", "--name-only", branch).split()
    changed = set(git(fork, "diff", "--name-only", f"main..{branch}").split())
    for path in sorted(p for p in changed if p.endswith((".md", ".go", ".yaml", ".yml"))):
        text = git(fork, "show", f"{branch}:{path}")
        if path.endswith(".md"):
            check_markdown(text, path)
        elif path.endswith(".go"):
            assert go_errors(text) == [], path
            assert "\u202e" not in text and not re.search(r"^func init\(\)", text, re.M), path
        elif path.endswith((".yaml", ".yml")):
            load_yaml(text)
    assert any(p.endswith(".go") for p in changed) and files
    log = subprocess.run(
        ["git", "-C", str(fork), "log", "--format=%H%x00%B%x01", f"main..{branch}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for entry in filter(str.strip, log.split("\x01")):
        _, body = entry.strip().split("\x00", 1)
        trailers = re.findall(r"^Promotion-Stage: \d+$", body, re.M)
        assert len(trailers) == 1, body
        assert "<!-- promotion-bot" not in body.split("\n", 1)[0]
