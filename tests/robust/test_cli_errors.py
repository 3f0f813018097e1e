"""Broken input on every command: one line on stderr naming the problem and the fix, exit 2, no traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot import PROJECT_ROOT
from bot.cli import main
from tests.conftest import EXAMPLE, REQUEST, RESULTS, git

PROMOTE = Path(sys.executable).parent / "promote"
CORPUS = PROJECT_ROOT / "examples" / "corpus"


def one_line_error(capsys, code: int) -> str:
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("promote: error: ") and "\n" not in err, err
    assert "Traceback" not in err
    return err


def deep_program(tmp_path: Path, depth: int) -> Path:
    src = (CORPUS / "r01_pattern_a_penalties.go").read_text()
    line = "\t\t\ts := dim[snap.ID]\n"
    assert line in src
    path = tmp_path / "deep.go"
    path.write_text(src.replace(line, "\t\t\ts := " + "(" * depth + "dim[snap.ID]" + ")" * depth + "\n", 1))
    return path


# ------------------------------------------------------------ the program
def test_a_thousand_nested_parentheses(tmp_path, capsys):
    err = one_line_error(
        capsys, main(["translate", str(deep_program(tmp_path, 1000)), "--out", str(tmp_path / "o"), "--no-check"])
    )
    assert "deep.go:" in err and "nested" in err and "deeper than" in err
    assert not (tmp_path / "o").exists(), "nothing is written for a refused program"


def test_nesting_real_programs_use_still_translates(tmp_path, capsys):
    assert main(["translate", str(deep_program(tmp_path, 40)), "--out", str(tmp_path / "o"), "--no-check"]) == 0


# ---------------------------------------------------------------- --out
@pytest.mark.parametrize("under", [False, True], ids=["a-file", "under-a-file"])
def test_translate_out_naming_a_file(tmp_path, capsys, under):
    (tmp_path / "taken").write_text("mine\n")
    out = tmp_path / "taken" / "sub" if under else tmp_path / "taken"
    err = one_line_error(capsys, main(["translate", str(EXAMPLE / "best_program.py"), "--out", str(out), "--no-check"]))
    assert "--out" in err and "taken" in err and "not a directory" in err
    assert (tmp_path / "taken").read_text() == "mine\n"


def test_hypothesize_out_under_a_file(tmp_path, capsys):
    (tmp_path / "taken").write_text("mine\n")
    err = one_line_error(capsys, main(["hypothesize", str(REQUEST), "--out", str(tmp_path / "taken" / "h")]))
    assert "--out" in err and "not a directory" in err


# ------------------------------------------------------- the request file
def test_a_5000_digit_integer_in_the_request(tmp_path, capsys):
    (tmp_path / "best_program.py").write_text((EXAMPLE / "best_program.py").read_text())
    req = tmp_path / "promotion.yaml"
    req.write_text(REQUEST.read_text().replace("iteration: 32", "iteration: " + "7" * 5000))
    err = one_line_error(capsys, main(["run", str(req), "--work", str(tmp_path / "w"), "--quiet"]))
    assert "promotion.yaml: the number at line" in err and "5,000 digits" in err


@pytest.mark.parametrize(
    "edit, says",
    [
        (
            ("best_program_info.json", None),
            "origin.metadata_file best_program_info.json: no such file beside promotion.yaml",
        ),
        (("iteration: 32", "iteration: 33"), "origin.iteration is 33 but best_program_info.json says iteration 32"),
        (
            ("fitness: -3859.2", "fitness: -3800.0"),
            "origin.fitness is -3800.0 but best_program_info.json says metrics.combined_score -3859.2",
        ),
        (("best_program_info.json", "[1, 2]"), "best_program_info.json: not a JSON object"),
    ],
    ids=["missing", "iteration", "fitness", "not-an-object"],
)
def test_the_origin_must_be_the_program_its_metadata_file_describes(tmp_path, capsys, edit, says):
    """Found by a researcher: `origin.metadata_file` was never read, so a missing best_program_info.json, or one of
    another program, passed silently while the PR cites the request's origin as the program's provenance."""
    (tmp_path / "best_program.py").write_text((EXAMPLE / "best_program.py").read_text())
    info = (EXAMPLE / "best_program_info.json").read_text()
    text = REQUEST.read_text()
    old, new = edit
    if old == "best_program_info.json":
        if new is not None:
            (tmp_path / old).write_text(new)
    else:
        (tmp_path / "best_program_info.json").write_text(info)
        assert old in text
        text = text.replace(old, new, 1)
    (tmp_path / "promotion.yaml").write_text(text)
    err = one_line_error(
        capsys, main(["run", str(tmp_path / "promotion.yaml"), "--work", str(tmp_path / "w"), "--quiet"])
    )
    assert says in err, err
    assert not (tmp_path / "w").exists()


# ------------------------------------------------------ --results
def test_another_plugins_sample_reports_are_refused_before_anything_is_committed(tmp_path, capsys):
    """Found by a researcher rehearsing their own plugin with the bundled sample reports: stages 1-4 were committed,
    then stage 5 stopped (exit 2) on reports of another plugin's image, with the --results layout as the fix, and
    `promote status` said "interrupted: run promote resume", which fails the same way. The image the plan pins is
    known from the request, so the reports are held to it before stage 1, and a rehearsal is told how to make its
    own sample reports."""
    (tmp_path / "best_program.py").write_text((EXAMPLE / "best_program.py").read_text())
    (tmp_path / "best_program_info.json").write_text((EXAMPLE / "best_program_info.json").read_text())
    req = tmp_path / "promotion.yaml"
    req.write_text(REQUEST.read_text().replace("plugin_name: evolved-adaptive-scorer", "plugin_name: my-scorer"))
    assert "plugin_name: my-scorer" in req.read_text()
    work = tmp_path / "w"
    argv = ["run", str(req), "--results", str(RESULTS), "--allow-sample-data", "--work", str(work), "--quiet"]
    err = one_line_error(capsys, main(argv))
    assert "promotion-1-evolved-adaptive-scorer" in err and "promotion-1-my-scorer" in err, err
    assert "expected RESULTS/<treatment>" not in err, err
    assert f"make_sample_reports.py --request {req} --out" in err, err
    assert not (work / "fork").exists() and not (work / "state.json").exists()


# ------------------------------------------------------ --fork and --work
def test_a_fork_path_whose_parent_does_not_exist_is_refused_and_nothing_is_created(tmp_path, capsys):
    """Found by a new user: `--fork /nonexistent/dir/fork` created /nonexistent at the filesystem root."""
    fork = tmp_path / "nonexistent" / "dir" / "fork"
    err = one_line_error(
        capsys, main(["run", str(REQUEST), "--work", str(tmp_path / "w"), "--fork", str(fork), "--quiet"])
    )
    assert f"--fork {fork}: {fork.parent} does not exist" in err
    assert not (tmp_path / "nonexistent").exists() and not (tmp_path / "w").exists()


def test_fork_naming_a_regular_file(tmp_path, capsys):
    (tmp_path / "fork").write_text("not a repository\n")
    err = one_line_error(
        capsys,
        main(["run", str(REQUEST), "--work", str(tmp_path / "w"), "--fork", str(tmp_path / "fork"), "--quiet"]),
    )
    assert "--fork" in err and "is a file" in err


def test_work_naming_a_regular_file(tmp_path, capsys):
    (tmp_path / "w").write_text("x\n")
    err = one_line_error(capsys, main(["run", str(REQUEST), "--work", str(tmp_path / "w"), "--quiet"]))
    assert "--work" in err and "not a directory" in err


# ------------------------------------------- a broken work directory, every command
def _work_with(tmp_path: Path, *, state: bytes | None, run: bytes | None) -> Path:
    work = tmp_path / "w"
    work.mkdir()
    if run == GOOD_RUN:
        run = json.dumps({"request": str(REQUEST), "fork": str(tmp_path / "fork"), "results": None}).encode()
    if state is not None:
        (work / "state.json").write_bytes(state)
    if run is not None:
        (work / "run.json").write_bytes(run)
    return work


COMMANDS = [
    ["status"],
    ["status", "--json"],
    ["resume", "--quiet"],
    ["approve", "1", "--quiet"],
    ["request-changes", "1", "--reason", "x", "--quiet"],
    ["reject", "1", "--reason", "x", "--quiet"],
]


GOOD_RUN = b"<a run.json of the example, fork under tmp_path>"


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
@pytest.mark.parametrize(
    "state",
    [b'{"schema_version": 1, "request_id": "1", "request_fing', b"\x89PNG\r\n\x1a\n\xff\xfe\x00binary", b"[]"],
    ids=["truncated", "binary", "wrong-shape"],
)
def test_every_command_on_a_broken_state_file(tmp_path, capsys, command, state):
    work = _work_with(tmp_path, state=state, run=GOOD_RUN)
    err = one_line_error(capsys, main([*command, "--work", str(work)]))
    assert "state.json" in err and "unreadable" in err
    assert not (tmp_path / "fork").exists(), "nothing is created for a promotion that cannot continue"


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
@pytest.mark.parametrize(
    "change, shown",
    [({"schema_version": 2}, "schema_version 2"), ({"gate_votes": {}}, "gate_votes")],
    ids=["schema-2", "unknown-field"],
)
def test_every_command_on_a_state_a_newer_bot_saved(tmp_path, capsys, command, change, shown):
    """A rollback of the bot: the state is not damaged, so no advice to move it away; it names what is newer
    and the version to run, and nothing is written."""
    state = json.loads(_minimal_state()) | change
    work = _work_with(tmp_path, state=json.dumps(state).encode(), run=GOOD_RUN)
    before = (work / "state.json").read_bytes()
    err = one_line_error(capsys, main([*command, "--work", str(work)]))
    assert f"state.json was saved by a newer promotion bot (fields: {shown}); run that version or newer" in err
    assert "unreadable" not in err and "move it away" not in err
    assert (work / "state.json").read_bytes() == before
    assert not (tmp_path / "fork").exists()


@pytest.mark.parametrize("command", COMMANDS[2:], ids=[" ".join(c[:2]) for c in COMMANDS[2:]])
@pytest.mark.parametrize(
    "run",
    [None, b'{"request": "/x", "fo', b"\xff\xfe\x00\x01", b'{"fork": "f"}', b"[1, 2]"],
    ids=["missing", "truncated", "binary", "missing-key", "wrong-shape"],
)
def test_every_command_on_a_broken_run_file(tmp_path, capsys, command, run):
    work = _work_with(tmp_path, state=None, run=run)
    err = one_line_error(capsys, main([*command, "--work", str(work)]))
    assert ("no promotion here" in err) if run is None else ("run.json" in err and "unreadable" in err)


def test_run_on_a_broken_run_file(tmp_path, capsys):
    work = _work_with(tmp_path, state=None, run=b"\xff\xfe\x00\x01")
    err = one_line_error(capsys, main(["run", str(REQUEST), "--work", str(work), "--quiet"]))
    assert "run.json" in err and "unreadable" in err


# -------------------------------------------------------------- pipes
def test_status_into_a_closed_pipe(tmp_path):
    """`promote status | head -2`: the reader is gone; no traceback, the conventional SIGPIPE exit status."""
    work = tmp_path / "w"
    fork = tmp_path / "fork"
    fork.mkdir()
    git(fork, "init", "-q", "-b", "main")
    (work).mkdir()
    (work / "state.json").write_text(_minimal_state())
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [str(PROMOTE), "status", "--work", str(work)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert proc.stderr == ""
    assert proc.returncode == 128 + 13


def _minimal_state() -> str:
    from datetime import UTC, datetime

    from bot import pipeline

    state = pipeline.new_state("1", "f" * 64, "promotion/1-x", actor="t", now=datetime(2026, 1, 1, tzinfo=UTC))
    return state.model_dump_json(indent=2)


def test_a_run_whose_reader_goes_away_still_reaches_its_gate(tmp_path):
    """`promote run ... 2>&1 | head -1`: the progress lines after the first go nowhere, and the run still
    finishes its stages and stops at gate 1 (before, it died at the next progress line, mid-stage, exit 141)."""
    work = tmp_path / "w"
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [str(PROMOTE), "run", str(REQUEST), "--work", str(work)], stdout=write_end, stderr=write_end
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        assert reader.readline()  # `head -1`: one line, then the reader is gone
    assert proc.wait(timeout=600) == 0
    status = subprocess.run(
        [str(PROMOTE), "status", "--work", str(work)], capture_output=True, text=True, check=True, timeout=60
    )
    assert "waiting for a decision at gate 1" in status.stdout.splitlines()[0], status.stdout
    assert "interrupted" not in status.stdout


def test_status_says_an_interrupted_promotion_needs_resume(tmp_path, capsys):
    """A stage is due and no command is running (the run was killed): `status` says what continues it."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "state.json").write_text(_minimal_state())
    assert main(["status", "--work", str(work)]) == 0
    out = capsys.readouterr().out
    assert "stage 1 (" in out.splitlines()[0] and "is due" in out.splitlines()[0]
    assert f"interrupted: run `promote resume --work {work}`" in out


def test_status_does_not_call_an_error_that_recurs_on_resume_an_interruption(tmp_path, capsys):
    """A resume that stopped on an error (a bug, such as an older bot's artifact crashing a template) stops the
    same way each time: `status` says so and which error, not "interrupted: run `promote resume`"."""
    from bot.cli.workdir import record_crash

    work = tmp_path / "w"
    work.mkdir()
    (work / "state.json").write_text(_minimal_state())
    record_crash(work, "resume", KeyError("tests_lost"))
    assert main(["status", "--work", str(work)]) == 0
    out = capsys.readouterr().out
    assert "stopped by an error in `promote resume`: KeyError: 'tests_lost'" in out
    assert "bug in the promotion bot" in out and "interrupted" not in out
    (work / "state.json").write_text(_minimal_state() + "\n")  # a later command moved the promotion on
    assert main(["status", "--work", str(work)]) == 0
    assert "interrupted: run `promote resume" in capsys.readouterr().out


def test_status_of_a_promotion_stopped_before_its_first_step_says_resume_continues_it(tmp_path, capsys):
    """run.json but no state.json (the run was stopped while the fork was seeded): not "start one with `promote
    run`" (the request and the fork are recorded), but the resume that goes on, and it does."""
    work = _work_with(tmp_path, state=None, run=GOOD_RUN)
    assert main(["status", "--work", str(work)]) == 2
    assert one_line_error(capsys, 2) == (
        f"promote: error: {work}: the promotion started here stopped before its first step was saved; "
        f"`promote resume --work {work}` continues it"
    )
    assert main(["resume", "--work", str(work), "--quiet"]) == 0
    assert "stopped at gate 1" in capsys.readouterr().out


def test_status_keeps_the_lines_of_a_reason_apart(tmp_path, capsys):
    """A reason's note and its directive read as two parts ("; "), as in the PR's gate table, not one sentence."""
    from datetime import UTC, datetime

    from bot.model import Decision, PipelineState
    from bot.model.state import GateDecision

    state = PipelineState.model_validate_json(_minimal_state())
    state.decisions.append(
        GateDecision(
            gate=1,
            decision=Decision.REQUEST_CHANGES,
            actor="root",
            at=datetime(2026, 1, 1, tzinfo=UTC),
            reason="pods run ~40 concurrent requests\nparam loadThreshold: 60",
        )
    )
    work = tmp_path / "w"
    work.mkdir()
    (work / "state.json").write_text(state.model_dump_json())
    assert main(["status", "--work", str(work)]) == 0
    assert ": pods run ~40 concurrent requests; param loadThreshold: 60" in capsys.readouterr().out


# ------------------------------------------------- the machine or the person stops a command
def _limit_file_size(n: int):
    def preexec() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))

    return preexec


def test_a_file_size_limit_while_the_fork_is_seeded_says_so_and_resume_goes_on(tmp_path, capsys):
    """`ulimit -f` (or a full disk) while the mirror is copied into WORK/fork: one short line naming the fork,
    the work directory and the way on, never a 12 kB list of copy errors, the bot's install path, or a
    half-made fork that every later command refuses ("set fork.base_branch")."""
    work = tmp_path / "w"
    proc = subprocess.run(
        [
            str(PROMOTE),
            "run",
            str(REQUEST),
            "--results",
            str(RESULTS),
            "--allow-sample-data",
            "--work",
            str(work),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=_limit_file_size(4 << 10),  # Python ignores SIGXFSZ: a larger write fails with EFBIG
    )
    err = proc.stderr.strip()
    assert proc.returncode == 2, err
    assert err == (
        f"promote: error: {work / 'fork'}: File too large; free space on the filesystem holding {work} "
        f"(or raise `ulimit -f`), then `promote resume --work {work}`"
    )
    assert sorted(p.name for p in work.iterdir()) == ["run.json"]  # no fork, no half-made one beside it
    code = main(["resume", "--work", str(work), "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert "stopped at gate 1" in capsys.readouterr().out
    assert git(work / "fork", "rev-parse", "--verify", "-q", "main").strip()


def test_git_finding_no_room_in_a_later_stage_says_free_space_and_resume(tmp_path, capsys):
    """A full disk or `ulimit -f` hitting git itself (here: only git is limited, to 1 KiB, so stage 3's commit
    is what fails): the same line as any full disk, naming the fork, not git's bare "killed by SIGXFSZ" or
    "unable to write new index file" with no fix."""
    work = tmp_path / "w"
    assert main(["run", str(REQUEST), "--work", str(work), "--quiet"]) == 0
    capsys.readouterr()
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nulimit -f 1\nexec {shutil.which("git")} "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [str(PROMOTE), "approve", "1", "--work", str(work), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"promote: error: {work / 'fork'}: git read-tree: File too large (killed by SIGXFSZ); free space on the "
        f"filesystem holding {work} (or raise `ulimit -f`), then `promote resume --work {work}`"
    )
    assert main(["resume", "--work", str(work), "--quiet"]) == 0
    assert "stopped at gate 2" in capsys.readouterr().out


def _args(*argv: str):
    from bot.cli import build_parser

    return build_parser().parse_args(list(argv))


def test_a_failed_copy_is_its_first_file_and_a_count_with_the_bot_s_paths_relative(tmp_path):
    from shutil import Error

    from bot.cli.stopped import os_error_line

    mirror = PROJECT_ROOT / "gomirror" / "llm-d-router"
    entries = [
        (str(mirror / f"f{i}.go"), str(tmp_path / f"f{i}.go"), "[Errno 28] No space left on device") for i in range(36)
    ]
    text = os_error_line(Error(entries), _args("translate", "x.go", "--out", str(tmp_path)))
    assert text == (
        f"promote: error: {tmp_path / 'f0.go'}: No space left on device (and 35 more files); free space on the "
        f"filesystem holding {tmp_path} (or raise `ulimit -f`), then run the command again"
    )
    denied = PermissionError(13, "Permission denied", str(mirror / "go.mod"))
    assert os_error_line(denied, _args("status")) == (
        "promote: error: the bot's gomirror/llm-d-router/go.mod: Permission denied; fix the path or its permissions"
    )
    nameless = OSError(28, "No space left on device")  # a full disk during a stage: no file named
    assert os_error_line(nameless, _args("approve", "1", "--work", "my w")) == (
        "promote: error: No space left on device; free space on the filesystem holding my w (or raise `ulimit -f`), "
        "then `promote resume --work 'my w'`"
    )


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "r.yaml", "--work", "W"], "state was saved after the last finished step, `promote resume --work W`"),
        (["resume", "--work", "W"], "`promote resume --work W` continues"),
        (["reject", "2", "--reason", "no", "--work", "W"], "`promote resume --work W` continues"),
        (
            ["bench", "run", "b", "--commit", "c", "--results", "r", "--workspace", "ws", "-p", "n"],
            "promote: interrupted; finished cells are kept, the same command plus --resume continues",
        ),
        (
            ["bench", "teardown", "b", "--commit", "c", "--results", "r", "--workspace", "ws", "-p", "n", "--resume"],
            "promote: interrupted; finished cells are kept, the same command continues",
        ),
        (["translate", "p.go", "--out", "o"], "promote: interrupted; o may be incomplete: run the command again"),
    ],
)
def test_the_interrupt_line_says_how_this_command_goes_on(argv, says):
    from bot.cli.stopped import interrupted_line

    text = interrupted_line(_args(*argv))
    assert says in text
    assert ("promote resume" in text) == (argv[0] in ("run", "resume", "reject"))


def test_ctrl_c_in_a_run_names_the_work_directory_to_resume(tmp_path):
    import signal

    work = tmp_path / "w"
    proc = subprocess.Popen(
        [str(PROMOTE), "run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", "--work", str(work)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # A shell starts a background job with SIGINT ignored, and a child inherits that: restore what a terminal
        # gives a command (the suite run in the background let the promotion ignore every Ctrl-C).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    assert proc.stderr.readline().strip() == "stage 1: analyze"  # working: past the imports, inside the command
    # Ctrl-C until it stops, as a person would press it again, and faster: a Ctrl-C that lands while the first
    # one's answer is written or the interpreter winds down must not turn the stop into a death by SIGINT (-2).
    import threading

    def interrupt() -> None:
        while proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            time.sleep(0.02)

    threading.Thread(target=interrupt, daemon=True).start()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, err
    assert err.strip().splitlines()[-1] == (
        f"promote: interrupted; state was saved after the last finished step, `promote resume --work {work}` continues"
    )
