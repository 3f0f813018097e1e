"""Webhook payloads built from GitHub's real examples, with chosen fields replaced.

A test that handcrafts a payload tests the bot against the author's idea of GitHub. These start from the
payload examples GitHub publishes (npm ``@octokit/webhooks-examples``, trimmed in ``fixtures/``), replace only
what the test names (issue number, title, body, labels, sender, comment, label, workflow inputs, repository),
and are validated against GitHub's webhook schema for that event (``x-webhooks`` of the REST description),
so the shape stays GitHub's. ``issues.closed`` has no published example: it is derived from ``reopened``
(closed state, closed_at, state_reason) and validated against ``issues-closed``.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any

from tests.github.contract import FIXTURES, load_contract
from tests.github.state import node_id

EXAMPLES_PATH = FIXTURES / "webhook-examples.json"
SCHEMAS = {
    ("issues", "opened"): "issues-opened",
    ("issues", "edited"): "issues-edited",
    ("issues", "labeled"): "issues-labeled",
    ("issues", "closed"): "issues-closed",
    ("issues", "reopened"): "issues-reopened",
    ("issue_comment", "created"): "issue-comment-created",
    ("workflow_dispatch", None): "workflow-dispatch",
    ("pull_request_review", "submitted"): "pull-request-review-submitted",
    ("pull_request_review_comment", "created"): "pull-request-review-comment-created",
}
_UNSET: Any = object()


@cache
def _examples() -> dict[tuple[str, str | None], dict[str, Any]]:
    """(event, action) -> the published example to start from.

    Preference: one that passes GitHub's own webhook schema (some older examples lack fields GitHub now
    sends), or else the one that misses the fewest, then one without an App installation or organization block
    (closest to what a repository's own Actions workflow receives), then the first.
    """
    candidates: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for event in json.loads(EXAMPLES_PATH.read_text(encoding="utf-8")):
        for found in event["examples"]:
            candidates.setdefault((event["name"], found.get("action")), []).append(found)

    def rank(key: tuple[str, str | None], found: dict[str, Any]) -> tuple[int, bool]:
        missing = len(validate(key[0], key[1], found)) if key in SCHEMAS else 0
        plain = "installation" not in found and "organization" not in found
        return (missing, not plain)

    return {key: min(found, key=lambda x, key=key: rank(key, x)) for key, found in candidates.items()}


def example(event: str, action: str | None = None) -> dict[str, Any]:
    """A deep copy of GitHub's published example for (event, action)."""
    if (event, action) == ("issues", "closed"):
        payload = example("issues", "reopened")
        payload["action"] = "closed"
        payload["issue"].update(
            {"state": "closed", "closed_at": payload["issue"]["updated_at"], "state_reason": "completed"}
        )
        return payload
    try:
        return copy.deepcopy(_examples()[(event, action)])
    except KeyError:
        raise KeyError(f"no published example kept for {event}.{action}; see fixtures/regenerate.py") from None


def _replace_strings(node: Any, old: str, new: str) -> Any:
    if isinstance(node, dict):
        return {key: _replace_strings(value, old, new) for key, value in node.items()}
    if isinstance(node, list):
        return [_replace_strings(value, old, new) for value in node]
    if isinstance(node, str) and old in node:
        return node.replace(old, new)
    return node


def _user(template: dict[str, Any], login: str, kind: str, user_id: int) -> dict[str, Any]:
    user = _replace_strings(template, f"/{template['login']}", f"/{login}")
    user.update({"login": login, "type": kind, "id": user_id, "node_id": node_id(kind, user_id)})
    return user


def _login(value: str | tuple[str, str] | tuple[str, str, int]) -> tuple[str, str, int]:
    if isinstance(value, str):
        return value, "Bot" if value.endswith("[bot]") else "User", 1000 + sum(map(ord, value))
    if len(value) == 2:
        return value[0], value[1], 1000 + sum(map(ord, value[0]))
    return value  # type: ignore[return-value]


def build(
    event: str,
    action: str | None = None,
    *,
    repository: str | None = None,
    number: int | None = None,
    title: str | None = None,
    body: Any = _UNSET,
    labels: list[str] | None = None,
    author: str | tuple | None = None,
    state: str | None = None,
    is_pull: bool = False,
    sender: str | tuple | None = None,
    comment_id: int | None = None,
    comment_body: str | None = None,
    comment_author: str | tuple | None = None,
    label: str | None = None,
    review_id: int | None = None,
    review_body: str | None = None,
    review_state: str | None = None,
    inputs: dict[str, Any] | None = None,
    ref: str | None = None,
    workflow: str | None = None,
    changes: dict[str, Any] | None = None,
    api_url: str | None = None,
    web_url: str | None = None,
) -> dict[str, Any]:
    """A payload for (event, action) from GitHub's example with the named fields replaced, then validated.

    Users are a login ("alice"; a login ending in "[bot]" is a Bot), (login, type) or (login, type, id).
    `ref` may be a branch name or a full ref; `workflow` is the workflow file's path. For a review or a line
    comment on a pull request, `number`, `title`, `body`, `labels`, `author` and `state` are the pull request's,
    and the review's author is the sender's.
    """
    payload = example(event, action)
    if repository is not None:
        old = payload["repository"]["full_name"]
        owner, name = repository.split("/", 1)
        payload = _replace_strings(payload, f"/{old}", f"/{repository}")
        payload = _replace_strings(payload, f":{old}", f":{repository}")
        repo = payload["repository"]
        repo.update({"full_name": repository, "name": name})
        repo["owner"] = _replace_strings(repo["owner"], f"/{repo['owner']['login']}", f"/{owner}")
        repo["owner"]["login"] = owner
        payload.pop("organization", None)
        payload.pop("installation", None)
    if api_url is not None:
        payload = _replace_strings(payload, "https://api.github.com", api_url.rstrip("/"))
    if web_url is not None:
        payload = _replace_strings(payload, "https://github.com", web_url.rstrip("/"))
    template_user = payload["sender"]
    if "issue" in payload:
        issue = payload["issue"]
        if number is not None:
            old_number = issue["number"]
            for key in ("url", "labels_url", "comments_url", "events_url", "html_url", "timeline_url"):
                if isinstance(issue.get(key), str):
                    issue[key] = issue[key].replace(f"/{old_number}", f"/{number}", 1)
            issue["number"] = number
            if "comment" in payload:
                payload["comment"]["issue_url"] = issue["url"]
                payload["comment"]["html_url"] = payload["comment"]["html_url"].replace(
                    f"/{old_number}#", f"/{number}#"
                )
        if title is not None:
            issue["title"] = title
        if body is not _UNSET:
            issue["body"] = body
        if author is not None:
            issue["user"] = _user(template_user, *_login(author))
        if state is not None:
            issue["state"] = state
        if labels is not None:
            issue["labels"] = [_label(payload, name) for name in labels]
        if is_pull:  # GitHub marks a pull request's issue (comments on a PR arrive as issue_comment)
            pulls = issue["url"].replace(f"/issues/{issue['number']}", f"/pulls/{issue['number']}")
            html = issue["html_url"].replace(f"/issues/{issue['number']}", f"/pull/{issue['number']}")
            issue["html_url"] = html
            issue["pull_request"] = {
                "url": pulls,
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": None,
            }
    if "pull_request" in payload and "issue" not in payload:  # a review or a line comment: the PR is the subject
        _pull_request(payload, number, title, body, labels, author, state, template_user)
    if "review" in payload:
        _review(payload, review_id, review_body, review_state)
    if label is not None:
        if "label" not in payload:
            raise ValueError(f"label= applies to labeled/unlabeled events, not {event}.{action}")
        payload["label"] = _label(payload, label)
        if "issue" in payload and label not in [x["name"] for x in payload["issue"]["labels"]]:
            payload["issue"]["labels"].append(payload["label"])
    if "comment" in payload:
        comment = payload["comment"]
        if comment_id is not None:
            old_id = comment["id"]
            comment["url"] = comment["url"].replace(f"/comments/{old_id}", f"/comments/{comment_id}")
            comment["html_url"] = comment["html_url"].replace(f"issuecomment-{old_id}", f"issuecomment-{comment_id}")
            comment.update({"id": comment_id, "node_id": node_id("IssueComment", comment_id)})
            if "pull_request_review_id" in comment:  # a line comment: its own kind of id, and its links
                comment = payload["comment"] = _replace_strings(
                    comment, f"discussion_r{old_id}", f"discussion_r{comment_id}"
                )
                comment["_links"] = _replace_strings(
                    comment["_links"], f"/comments/{old_id}", f"/comments/{comment_id}"
                )
                comment["node_id"] = node_id("PullRequestReviewComment", comment_id)
        if review_id is not None and "pull_request_review_id" in comment:
            comment["pull_request_review_id"] = review_id
        if comment_body is not None:
            comment["body"] = comment_body
        if comment_author is not None:
            comment["user"] = _user(template_user, *_login(comment_author))
    if sender is not None:
        payload["sender"] = _user(template_user, *_login(sender))
        if "review" in payload:  # the person who submitted it
            payload["review"]["user"] = payload["sender"]
    if changes is not None:
        if "changes" not in payload:
            raise ValueError(f"changes= applies to edited events, not {event}.{action}")
        payload["changes"] = changes
    if event == "workflow_dispatch":
        if inputs is not None:
            payload["inputs"] = inputs
        if ref is not None:
            payload["ref"] = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
        if workflow is not None:
            payload["workflow"] = workflow
    errors = validate(event, action, payload)
    if errors:
        raise ValueError(f"{event}.{action} payload is not GitHub's shape: {errors}")
    return payload


def _pull_request(payload, number, title, body, labels, author, state, template_user) -> None:
    """The pull request a review or a line comment is on, with the named fields replaced.

    The published examples predate ``has_discussions`` on the PR's base and head repositories, which the pinned
    schema requires (GitHub sends it): they get the repository's own, or ``False``, GitHub's default."""
    pull = payload["pull_request"]
    if number is not None:
        old = pull["number"]
        for key in ("pull_request", "review", "comment"):
            if key in payload:
                payload[key] = _renumber(payload[key], old, number)
        pull = payload["pull_request"]
        pull["number"] = number
    if title is not None:
        pull["title"] = title
    if body is not _UNSET:
        pull["body"] = body
    if author is not None:
        pull["user"] = _user(template_user, *_login(author))
    if state is not None:
        pull["state"] = state
    if labels is not None:
        pull["labels"] = [_label(payload, name) for name in labels]
    for side in ("base", "head"):
        repo = (pull.get(side) or {}).get("repo")
        if isinstance(repo, dict):
            repo.setdefault("has_discussions", payload["repository"].get("has_discussions", False))


def _renumber(node: Any, old: int, new: int) -> Any:
    """Every link to pull request (or issue) ``old`` made a link to ``new``."""
    if isinstance(node, dict):
        return {key: _renumber(value, old, new) for key, value in node.items()}
    if isinstance(node, list):
        return [_renumber(value, old, new) for value in node]
    if isinstance(node, str):
        return re.sub(rf"/(pulls|pull|issues)/{old}(?![0-9])", rf"/\g<1>/{new}", node)
    return node


def _review(payload: dict[str, Any], review_id: int | None, body: str | None, state: str | None) -> None:
    """The review of a ``pull_request_review`` event, with the named fields replaced (``state`` as the REST API
    spells it, e.g. CHANGES_REQUESTED: the webhook's is lower case)."""
    review = payload["review"]
    if review_id is not None:
        old = review["id"]
        review = payload["review"] = _replace_strings(
            review, f"pullrequestreview-{old}", f"pullrequestreview-{review_id}"
        )
        review.update({"id": review_id, "node_id": node_id("PullRequestReview", review_id)})
    if body is not None:
        review["body"] = body
    if state is not None:
        review["state"] = state.lower()


def _label(payload: dict[str, Any], name: str) -> dict[str, Any]:
    from urllib.parse import quote

    label_id = 2000 + sum(map(ord, name))
    return {
        "id": label_id,
        "node_id": node_id("Label", label_id),
        "url": f"{payload['repository']['url']}/labels/{quote(name)}",
        "name": name,
        "color": "ededed",
        "default": False,
        "description": None,
        # Newer than the pinned description, required by githubkit's models (GitHub sends them).
        "archived_at": None,
        "archived_by": None,
    }


def validate(event: str, action: str | None, payload: dict[str, Any]) -> list[str]:
    """Errors of `payload` against GitHub's webhook schema for (event, action)."""
    contract = load_contract()
    name = SCHEMAS[(event, action)]
    schema = contract.resolve(contract.spec["x-webhooks"][name]["post"]["requestBody"])["content"]["application/json"]
    return contract.validate(("webhook", name), schema["schema"], payload, write=False)
