"""`.github/promotion-bot.yml`: who may decide, where the branch and feedback go, GPU and model settings.

Validated by pydantic with field-level errors, so a maintainer sees every
mistake at once (`promote check-config` prints them with the fix).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from bot.model import RequestError, StackSpec
from bot.model.llm import LLMSettings
from bot.yaml_safe import YamlInputError, load_yaml

CONFIG_PATH = ".github/promotion-bot.yml"
#: The bot's two workflow files, by name. Fixed, not settings: benchmark.yml's `publish` job dispatches
#: promotion.yml by name, and a renamed file left a dispatch failing with 404 while the issue showed "running".
WORKFLOW = "promotion.yml"
BENCHMARK_WORKFLOW = "benchmark.yml"
#: Settings that were removed, with the one value each still accepted (what it always had to be).
RETIRED = {"workflow": WORKFLOW, "benchmark_workflow": BENCHMARK_WORKFLOW}
Role = Literal["admin", "maintain", "write", "triage", "read"]
_REPO = r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$"
_LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _login(value: str) -> str:
    """A person's GitHub login as authorize compares it (the actor's login): a handle written `@maria` or a
    display name `Tom Smith` never matched anyone, so nobody listed could pass a gate; refused with the fix."""
    if _LOGIN.fullmatch(value):
        return value
    bare = value.strip().lstrip("@").strip()
    if _LOGIN.fullmatch(bare):
        why = f"write {bare}, not {value!r} (the GitHub login alone)"
    elif value.endswith("[bot]"):
        why = f"{value!r} is a bot account, and bots never pass a gate: remove it"
    else:
        why = f"{value!r} is not a GitHub login (letters, digits and '-', as in github.com/<login>): write the login"
    # no context: pydantic formats the message only with context, so braces in the value stay as written
    raise PydanticCustomError("login", why)


class Approvers(_Strict):
    roles: list[Role] = Field(
        default_factory=lambda: ["admin", "maintain", "write"],
        description="repository roles (the collaborator API's role_name) that may pass a gate",
    )
    users: list[Annotated[str, AfterValidator(_login)]] = Field(
        default_factory=list, description="extra logins that may pass a gate whatever their role"
    )

    @model_validator(mode="after")
    def _admits_someone(self) -> Approvers:
        """No role and no user: no gate could ever pass, and every promotion would wait forever at gate 1."""
        if not self.roles and not self.users:
            raise PydanticCustomError(
                "approvers",
                "no role and no user may pass a gate, so every promotion would wait forever: list roles "
                "(admin, maintain, write, triage, read) or users, or remove `approvers:` for the default roles "
                "(admin, maintain, write)",
            )
        return self


class GPUSettings(_Strict):
    runner_labels: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:-]+$")]] = Field(
        default_factory=lambda: ["self-hosted", "gpu"], min_length=1, description="the GPU runners' labels"
    )
    pool: str = Field(
        default="gpu",
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="name of the GPU runners' pool, shown in the benchmark run's summary (how many benchmarks run "
        "at once is how many idle runners carry `runner_labels`)",
    )
    budget_gpu_minutes: float | None = Field(default=None, gt=0, description="cap per promotion; the plan's if unset")
    image_repo: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9][a-z0-9._-]*(?::[0-9]+)?(?:/[a-z0-9][a-z0-9._-]*)+$",
        description="registry/repository the runner pushes the evolved EPP image to; default ghcr.io/<fork>-epp",
    )

    def dispatch_inputs(self) -> dict[str, str]:
        """What benchmark.yml receives with every dispatch: where to run, which pool, what cap."""
        return {
            "runner_labels": json.dumps(self.runner_labels),
            "pool": self.pool,
            # plain decimal (":g" wrote 1e+06, which benchmark.yml's number check refuses)
            "budget_gpu_minutes": format(self.budget_gpu_minutes, "f").rstrip("0").rstrip(".")
            if self.budget_gpu_minutes is not None
            else "",
            "image_repo": self.image_repo or "",
        }


class BotConfig(_Strict):
    version: Literal[1] = 1
    approvers: Approvers = Field(default_factory=Approvers)
    fork: str | None = Field(
        default=None,
        pattern=_REPO,
        description="the llm-d-router fork: only this repository is supported yet (unset means this repository)",
    )
    blis_repository: str | None = Field(default=None, pattern=_REPO, description="where feedback issues go")
    bot_logins: list[str] = Field(
        default_factory=lambda: ["github-actions[bot]"],
        description="more identities whose comments are the bot's own, besides the bot account its token writes as "
        "(an App token's <app>[bot]), which the bot asks GitHub for",
    )
    allow_sample_data: bool = Field(
        default=False,
        description="a demonstration repository may let sample reports count; every verdict, report and PR says so",
    )
    gpu: GPUSettings = Field(default_factory=GPUSettings)
    stack: StackSpec | None = Field(
        default=None,
        description="the GPU cluster's model-server stack every promotion is planned for (the form does not ask: "
        "it is the cluster's, not the researcher's); default: StackSpec's (4 x Llama-3.1-8B on H100)",
    )
    fidelity_floor: float | None = Field(
        default=None,
        ge=0.5,
        le=1.0,
        description="gate 1's agreement floor for every promotion (the share of sampled states where the plugin must "
        "decide like the BLIS original); default 0.99 when every signal is high-fidelity, else 0.95",
    )
    llm: LLMSettings = Field(default_factory=LLMSettings, description="the Claude author and reviewer (bot.agents)")

    @property
    def workflow(self) -> str:
        """The bot's own workflow, which it dispatches to chain its runs."""
        return WORKFLOW

    @property
    def benchmark_workflow(self) -> str:
        """The GPU workflow stage 5 dispatches."""
        return BENCHMARK_WORKFLOW


class ConfigError(RequestError):
    """The configuration file cannot be used; ``problems`` lists every field to fix."""

    def __init__(self, problems: list[str]):
        super().__init__(f"{CONFIG_PATH}: " + "; ".join(problems))
        self.problems = problems


def parse_config(text: str | None, repository: str | None = None) -> BotConfig:
    """The configuration in ``text`` (None or empty: every default); ``repository``, the workflow's owner/name,
    also refuses a ``fork:`` elsewhere (see ``other_fork``)."""
    config = _parse(text)
    problem = other_fork(config, repository) if repository else None
    if problem:
        raise ConfigError([problem])
    return config


def other_fork(config: BotConfig, repository: str) -> str | None:
    """Why ``fork:`` cannot name another repository yet, or None when it names this one (or is unset).

    The bot pushes the branch to ``fork:`` but opens the PR, dispatches the GPU benchmark and lets that run
    check out and commit to the branch in the workflow's own repository, whose token cannot write elsewhere;
    a fork elsewhere failed at stage 2 (GitHub's 422 on the PR's head). Refused up front until that is built."""
    if config.fork is None or config.fork.lower() == repository.lower():
        return None
    return (
        f"fork: {config.fork} is not supported yet: the bot opens the PR and runs the GPU benchmark in the "
        f"repository its workflows run in ({repository}); remove `fork:`, and install the bot in {config.fork} "
        "itself to promote there"
    )


def _parse(text: str | None) -> BotConfig:
    if not text or not text.strip():
        return BotConfig()
    try:
        raw = load_yaml(text)
    except YamlInputError as exc:
        raise ConfigError([str(exc)]) from None
    if not isinstance(raw, dict):
        raise ConfigError(["expected a mapping of settings at the top level"])
    problems = retired(raw)
    raw = {k: v for k, v in raw.items() if k not in RETIRED}
    try:
        config = BotConfig.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            msg = (
                "unknown setting (check the spelling in docs/github-setup.md)"
                if err["type"] == "extra_forbidden"
                else err["msg"]
            )
            problems.append(f"{loc}: {msg}")
        raise ConfigError(problems) from None
    if problems:
        raise ConfigError(problems)
    return config


def retired(raw: dict) -> list[str]:
    """The removed `workflow:` / `benchmark_workflow:` settings naming another file: the bot would dispatch a
    workflow that does not exist, or one benchmark.yml never answers. The fixed name itself is still accepted, so
    a configuration copied from the old example keeps working."""
    return [
        f"{key}: {raw[key]} cannot be set: the bot's workflow files must be named .github/workflows/{name} "
        f"(benchmark.yml and the bot dispatch them by these names); name the file {name} and remove `{key}:`"
        for key, name in RETIRED.items()
        if key in raw and raw[key] != name
    ]
