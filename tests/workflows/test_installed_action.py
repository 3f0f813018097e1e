"""The bot installed the way action.yml installs it: a wheel in a venv of its own (`pip install "$GITHUB_ACTION_PATH"`),
not the editable checkout every other test imports. A wheel carries the `bot` package only, so the data the bot reads
(dictionary/, prompts/, gomirror/, the issue form) is found through PROMOTION_BOT_HOME, which action.yml sets to the
action's checkout; without it every command that reads the data says so and exits 2, and on GitHub the promotion
issue is told (found in review: every promotion failed on a site-packages path, with nothing on the issue).

The wheel's files are chosen by setuptools' build_py (the step of a wheel build that picks the package and its
package data from pyproject.toml); a whole wheel build needs the `wheel` package, which the test venv lacks offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.home import HOME_VAR
from tests.github.actions_sim import REPO, seed_fork
from tests.github.fake_github import running_fake
from tests.github.forms import example_body

EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive"


@pytest.fixture(scope="module")
def promote(tmp_path_factory) -> Path:
    """`promote` of a venv holding the bot as its wheel would (its dependencies from the test venv, by a .pth)."""
    root = tmp_path_factory.mktemp("installed")
    src = root / "src"
    src.mkdir()
    shutil.copytree(PROJECT_ROOT / "bot", src / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(PROJECT_ROOT / name, src / name)
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(root / "lib"),
        ],
        cwd=src,
        check=True,
        capture_output=True,
    )
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(env_dir), "platbase": str(env_dir)}))
    (site / "test-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")  # a path line: no editable finder
    shutil.copytree(root / "lib" / "bot", site / "bot")
    script = env_dir / "bin" / "promote"
    script.write_text(f"#!{env_dir / 'bin' / 'python'}\nimport sys\nfrom bot.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    where = subprocess.run(
        [env_dir / "bin" / "python", "-c", "import bot; print(bot.__file__)"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(site)), where.stdout  # the installed copy, not this checkout
    return script


def _env(**extra: str) -> dict[str, str]:
    """The job's environment: the Go toolchain and bwrap on PATH (as the test venv has them), no PROMOTION_BOT_HOME
    unless given."""
    env = {k: v for k, v in os.environ.items() if k != HOME_VAR}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


def test_installed_without_its_home_says_what_is_missing_and_the_fix(promote, tmp_path):
    proc = subprocess.run(
        [promote, "translate", str(EXAMPLE / "best_program.py"), "--out", "out"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "dictionary/dictionary.yaml" in proc.stderr and ".github/ISSUE_TEMPLATE/promotion.yml" in proc.stderr
    assert "pip install -e" in proc.stderr and HOME_VAR in proc.stderr
    wrong = subprocess.run(
        [promote, "translate", str(EXAMPLE / "best_program.py"), "--out", "out"],
        cwd=tmp_path,
        env=_env(**{HOME_VAR: str(tmp_path)}),
        capture_output=True,
        text=True,
        check=False,
    )
    assert wrong.returncode == 2 and f"{HOME_VAR}={tmp_path} is not a checkout" in wrong.stderr


def test_check_config_reports_an_install_without_its_data(promote, tmp_path):
    with running_fake(tmp_path / "fake") as fake:
        fake.add_repo(REPO, seed_dir=seed_fork(tmp_path))
        fake.add_user("maria", role="maintain")
        api = {"GITHUB_API_URL": fake.api_url, "GH_TOKEN": fake.token_for("maria")}

        def check(**extra):
            env = {k: v for k, v in _env(**api, **extra).items() if k != "GITHUB_TOKEN"}
            cmd = [promote, "check-config", "--repo", REPO]
            return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)

        bare = check()
        assert bare.returncode == 1, bare.stdout + bare.stderr
        assert "this install of `promote`" in bare.stdout and "pip install -e" in bare.stdout
        homed = check(**{HOME_VAR: str(PROJECT_ROOT)})
        assert homed.returncode == 0 and "this install" not in homed.stdout, homed.stdout + homed.stderr


def _action_env(step: str) -> dict[str, str]:
    """The `env:` action.yml gives a step: PROMOTION_BOT_HOME is `${{ github.action_path }}` on every step that runs
    `promote` (here the checkout, as the action's is)."""
    steps = yaml.safe_load((PROJECT_ROOT / "action.yml").read_text())["runs"]["steps"]
    env = next(s for s in steps if s.get("name") == step)["env"]
    assert env[HOME_VAR] == "${{ github.action_path }}"
    return {HOME_VAR: str(PROJECT_ROOT)}


def _handle_event(promote, fake, tmp_path, **extra) -> tuple[subprocess.CompletedProcess, int]:
    """A promotion issue filed from the form, handled by `promote handle-event` in the action's environment."""
    tmp_path.mkdir(exist_ok=True)
    fake.add_repo(REPO, seed_dir=seed_fork(tmp_path))
    fake.add_user("researcher", role="read")
    number = fake.create_issue(
        REPO, "[promotion] weighted adaptive", example_body(), "researcher", labels=("promotion",)
    )
    event = tmp_path / "event.json"
    event.write_text(json.dumps(fake.webhook("issues", "opened", REPO, number, sender="researcher")))
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env = _env(
        **fake.env(REPO),
        GITHUB_EVENT_NAME="issues",
        GITHUB_EVENT_PATH=str(event),
        GITHUB_RUN_ID="4242",
        GITHUB_REF_NAME="main",
        RUNNER_TEMP=str(temp),
        PROMOTION_CONFIG=".github/promotion-bot.yml",
        **extra,
    )
    proc = subprocess.run(
        [promote, "handle-event"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=900
    )
    return proc, number


def test_handle_event_without_its_home_tells_the_issue(promote, tmp_path):
    with running_fake(tmp_path / "fake") as fake:
        proc, number = _handle_event(promote, fake, tmp_path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr and HOME_VAR in proc.stderr
        said = [c.body for c in fake.comments(REPO, number)]
        assert len(said) == 1, said
        assert "cannot handle this issue" in said[0] and "dictionary/dictionary.yaml" in said[0]


@pytest.mark.slow
def test_installed_like_the_action_translates_and_takes_a_promotion(promote, tmp_path):
    """The bundled example translated from another directory, then a promotion issue taken to the sandbox hand-off."""
    home = _action_env("Rehearse a promotion in the job")
    proc = subprocess.run(
        [promote, "translate", str(EXAMPLE / "best_program.py"), "--out", "out"],
        cwd=tmp_path,
        env=_env(**home),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "out" / "translation.json").is_file()
    with running_fake(tmp_path / "fake") as fake:
        proc, number = _handle_event(promote, fake, tmp_path / "gh", **_action_env("Handle the event"))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert any("**Status:**" in c.body for c in fake.comments(REPO, number)), proc.stdout + proc.stderr
