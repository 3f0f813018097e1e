"""What a GitHub Actions job tells the handler, read once from the environment.

Everything here comes from the runner (GITHUB_*) or from the action's inputs;
nothing comes from the event payload's free text. Tests build it from a dict.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.model import RequestError


class EnvironmentError_(RequestError):
    """The job's environment lacks what the handler needs; the message says which variable."""


#: GITHUB_TOKEN empty inside a job: the action passes its `github-token` input, which a step can set to "".
_EMPTY_TOKEN = (
    "GITHUB_TOKEN is empty: the action's `github-token` input is empty; give the step "
    "`with: github-token: ${{ github.token }}` (or leave the input out: it defaults to the job's token)"
)


@dataclass(frozen=True)
class EventEnv:
    event_name: str
    event_path: Path
    repository: str
    token: str
    api_url: str
    server_url: str
    run_id: str
    run_attempt: str
    ref: str
    work: Path  # scratch space of this job: the fork clone, execution requests, the next dispatch
    config_path: Path
    summary_path: Path | None = None
    output_path: Path | None = None
    app_token: str = ""  # optional GitHub App token: its writes start workflows, GITHUB_TOKEN's do not
    execution_results: Path | None = None  # results.json handed back by the sandboxed job of this run
    replies_in: Path | None = None  # Claude's replies of the step the sandboxed job interrupted (to replay)
    anthropic_key_set: bool = False

    @property
    def run_url(self) -> str:
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    @property
    def event_id(self) -> str:
        """One id per delivered event: a re-run of a workflow run replays the same event with the same run id."""
        return f"run-{self.run_id}"

    def no_anthropic_key(self, engine: str | None) -> tuple[str, str] | None:
        """(why, fix) when the configuration asks for Claude and this job has no key, else None.

        Said before any stage works: otherwise stage 1 and a sandbox round trip run first, and stage 2 then
        fails with the CLI's advice (`--llm offline`), which has no place on GitHub."""
        if engine != "anthropic" or self.anthropic_key_set:
            return None
        why = (
            f"`llm.engine: anthropic` in {self.config_path} needs an Anthropic key, and this job has none (the "
            "action's `anthropic-api-key` input is empty)"
        )
        fix = (
            "add the repository secret `ANTHROPIC_API_KEY` (Settings → Secrets and variables → Actions), or set "
            f"`llm.engine: offline` in {self.config_path} for the deterministic path without Claude"
        )
        return why, fix

    @property
    def write_token(self) -> str:
        return self.app_token or self.token

    @property
    def handoff_dir(self) -> Path:
        """What the next run needs from this one (uploaded as one artifact): execution requests, Claude's replies."""
        return self.work / "handoff"

    @property
    def requests_path(self) -> Path:
        return self.handoff_dir / "execution-requests.json"

    @property
    def replies_path(self) -> Path:
        return self.work / "replies.json"

    @property
    def dispatch_path(self) -> Path:
        return self.work / "dispatch.json"

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, *, command: str = "handle-event") -> EventEnv:
        env = os.environ if environ is None else environ

        def need(name: str) -> str:
            value = env.get(name, "").strip()
            if value:
                return value
            if name == "GITHUB_TOKEN":  # read after GITHUB_EVENT_*: in a job, from the step's `github-token`
                raise EnvironmentError_(_EMPTY_TOKEN)
            raise EnvironmentError_(
                f"{name} is not set; `promote {command}` runs inside a GitHub Actions job (see action.yml)"
            )

        runner_temp = Path(env.get("RUNNER_TEMP") or "/tmp")
        results = env.get("PROMOTION_EXECUTION_RESULTS", "").strip()
        replies = env.get("PROMOTION_REPLIES", "").strip()
        return cls(
            event_name=need("GITHUB_EVENT_NAME"),
            event_path=Path(need("GITHUB_EVENT_PATH")),
            repository=need("GITHUB_REPOSITORY"),
            token=need("GITHUB_TOKEN"),
            api_url=env.get("GITHUB_API_URL", "https://api.github.com"),
            server_url=env.get("GITHUB_SERVER_URL", "https://github.com"),
            run_id=env.get("GITHUB_RUN_ID", "0"),
            run_attempt=env.get("GITHUB_RUN_ATTEMPT", "1"),
            ref=env.get("GITHUB_REF_NAME", "") or "main",
            work=Path(env.get("PROMOTION_WORK") or runner_temp / "promotion-bot"),
            config_path=Path(env.get("PROMOTION_CONFIG") or ".github/promotion-bot.yml"),
            summary_path=Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None,
            output_path=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None,
            app_token=env.get("PROMOTION_APP_TOKEN", "").strip(),
            execution_results=Path(results) if results else None,
            replies_in=Path(replies) if replies else None,
            anthropic_key_set=bool(env.get("ANTHROPIC_API_KEY", "").strip()),
        )
