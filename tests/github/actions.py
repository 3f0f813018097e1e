"""Workflows and `workflow_dispatch` in the fake GitHub, read from the workflow files in the git repository.

GitHub checks a dispatch against the workflow file *at the dispatched ref*: the ref must exist, the file must
declare ``on: workflow_dispatch``, every input sent must be declared, required inputs must be present and a
``choice`` input must be one of its options. The fake does the same, so the bot's dispatch contract is tested
against the real workflow files it ships.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from tests.github import gitrepo
from tests.github.state import ApiError, Dispatch, Repo, State, not_found, unprocessable

WORKFLOWS_DIR = ".github/workflows"


def _load(repo: Repo, ref: str, path: str) -> dict[str, Any] | None:
    entry = gitrepo.read_path(repo.git_dir, ref, path)
    if entry is None or entry.kind != "file":
        return None
    return copy.deepcopy(_parse(entry.sha, entry.data))


#: Workflow files' YAML by blob sha: every dispatch and workflow listing reads them all, and a blob never changes.
_PARSED: dict[str, dict[str, Any]] = {}


def _parse(blob: str, data: bytes) -> dict[str, Any]:
    """A workflow file's YAML, parsed once per blob, with libyaml's safe loader where PyYAML has it (a tenth of the
    pure-Python one's time)."""
    if blob not in _PARSED:
        try:
            parsed = yaml.load(data.decode("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except (yaml.YAMLError, UnicodeDecodeError):
            parsed = {}
        _PARSED[blob] = parsed if isinstance(parsed, dict) else {}
    return _PARSED[blob]


def workflows(state: State, repo: Repo) -> list[tuple[int, str, str]]:
    """(id, path, name) of each workflow file on the default branch, ids stable for the fake's lifetime."""
    listing = gitrepo.read_path(repo.git_dir, repo.default_branch, WORKFLOWS_DIR)
    found = []
    for child in listing.children if listing is not None and listing.kind == "dir" else []:
        if child.kind != "file" or not child.path.endswith((".yml", ".yaml")):
            continue
        if child.path not in repo.workflow_ids:
            repo.workflow_ids[child.path] = state.next_id()
        data = _load(repo, repo.default_branch, child.path) or {}
        found.append((repo.workflow_ids[child.path], child.path, str(data.get("name") or child.path)))
    return found


def find(state: State, repo: Repo, workflow_id: str) -> tuple[int, str, str]:
    for found in workflows(state, repo):
        if workflow_id in (str(found[0]), found[1].rsplit("/", 1)[-1]):
            return found
    raise not_found()


def _triggers(data: dict[str, Any]) -> Any:
    # YAML 1.1 reads the bare key `on` as the boolean true.
    return data.get("on", data.get(True))


def dispatch(state: State, repo: Repo, actor: str, workflow_id: str, body: dict[str, Any]) -> Dispatch:
    _, path, _ = find(state, repo, workflow_id)
    ref = body.get("ref", "")
    sha = gitrepo.resolve(repo.git_dir, f"refs/heads/{ref}") or gitrepo.resolve(repo.git_dir, f"refs/tags/{ref}")
    if not sha:
        raise unprocessable(message=f"No ref found for: {ref}")
    data = _load(repo, sha, path)
    if data is None:
        raise not_found()
    triggers = _triggers(data)
    if isinstance(triggers, str):
        triggers = {triggers: None}
    elif isinstance(triggers, list):
        triggers = dict.fromkeys(triggers)
    if not isinstance(triggers, dict) or "workflow_dispatch" not in triggers:
        raise unprocessable(message="Workflow does not have 'workflow_dispatch' trigger")
    declared = (triggers.get("workflow_dispatch") or {}).get("inputs") or {}
    inputs = body.get("inputs") or {}
    unexpected = [name for name in inputs if name not in declared]
    if unexpected:
        raise unprocessable(message=f"Unexpected inputs provided: {unexpected}")
    for name, spec in declared.items():
        spec = spec or {}
        if spec.get("required") and name not in inputs and spec.get("default") is None:
            raise unprocessable(message=f"Required input '{name}' not provided")
        if name in inputs and spec.get("type") == "choice" and str(inputs[name]) not in map(str, spec["options"]):
            raise unprocessable(
                message=f"Provided value '{inputs[name]}' for input '{name}' not in the list of allowed values"
            )
        if name in inputs and spec.get("type") == "boolean" and str(inputs[name]).lower() not in ("true", "false"):
            raise unprocessable(message=f"Provided value '{inputs[name]}' for input '{name}' is not a boolean")
        if not isinstance(inputs.get(name, ""), str | bool | int | float):
            raise ApiError(422, f"For 'properties/{name}', {inputs[name]!r} is not a string.")
    title = _run_name(data, inputs) or str(data.get("name") or path)
    record = Dispatch(repo.full_name, path, ref, dict(inputs), actor, state.now(), run_id=state.next_id(), title=title)
    repo.dispatches.append(record)
    state.emit("workflow_dispatch", None, repo, None, actor, inputs=dict(inputs), ref=ref, workflow=path)
    return record


def _run_name(data: dict[str, Any], inputs: dict[str, Any]) -> str:
    """GitHub's ``run-name`` with ``${{ inputs.<name> }}`` filled in (the only expressions the fake evaluates)."""
    template = str(data.get("run-name") or "")
    return re.sub(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}", lambda m: str(inputs.get(m.group(1), "")), template)


def runs_of(state: State, repo: Repo, workflow_id: str) -> list[Dispatch]:
    """The runs of one workflow (the fake's runs are its dispatches), newest first as GitHub lists them."""
    _, path, _ = find(state, repo, workflow_id)
    return [record for record in reversed(repo.dispatches) if record.workflow == path]


def run(repo: Repo, run_id: int) -> Dispatch:
    """The workflow run a dispatch started (the fake's runs are its dispatches), or 404."""
    for record in repo.dispatches:
        if record.run_id == run_id:
            return record
    raise not_found()


def cancel(repo: Repo, run_id: int) -> None:
    """GitHub's cancel: 202 for a run not finished (it ends ``cancelled``), 409 for one that has."""
    record = run(repo, run_id)
    if record.status == "completed":
        raise ApiError(409, "Cannot cancel a workflow run that is completed.")
    record.status, record.conclusion = "completed", "cancelled"
