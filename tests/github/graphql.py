"""The GraphQL the bot needs: `markPullRequestReadyForReview` (REST cannot un-draft a pull request),
`deletePullRequestReviewComment` (aliased many times in one request, so replacing a gate's review costs one call
however many inline comments the last round had; REST deletes one comment per call), and the query
`node(id:) { ... on IssueComment { editor ... } }`: who edited a comment last, which REST never says (the bot
trusts its status comment only when it saved it last, ``bot.github.state.GitHubStateStore.load``), and `viewer`:
who the token writes as (``GitHub.writer``; REST's `GET /user` refuses an installation token).

As on GitHub, an `editor` that is a GitHub App answers `login` without REST's "[bot]" suffix
(`github-actions`, not `github-actions[bot]`) and `__typename` `Bot`; a comment never edited has a null editor.
`viewer` of an installation token answers the login with the suffix (`my-app[bot]`), as GitHub does.

GitHub's REST description has no `draft` field on `PATCH /repos/{o}/{r}/pulls/{n}` (checked in 23.0.2), so
the bot must use GraphQL for stage 7. Queries are parsed and validated by graphql-core against a schema with
exactly that mutation, so a misspelt field or an unsupported operation gets GraphQL's own error, and is also
recorded as a violation: the bot should send nothing else.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from tests.github import pulls
from tests.github.state import ApiError, parse_node_id

if TYPE_CHECKING:
    from tests.github.fake_github import FakeGitHub

SDL = """
type Query {
  node(id: ID!): Node
  viewer: User!
}
scalar DateTime
interface Node {
  id: ID!
}
interface Actor {
  login: String!
}
type User implements Actor {
  login: String!
}
type Bot implements Actor {
  login: String!
}
type IssueComment implements Node {
  id: ID!
  body: String!
  createdAt: DateTime!
  updatedAt: DateTime!
  lastEditedAt: DateTime
  editor: Actor
}
type Mutation {
  markPullRequestReadyForReview(input: MarkPullRequestReadyForReviewInput!): MarkPullRequestReadyForReviewPayload
  deletePullRequestReviewComment(input: DeletePullRequestReviewCommentInput!): DeletePullRequestReviewCommentPayload
}
input DeletePullRequestReviewCommentInput {
  id: ID!
  clientMutationId: String
}
type DeletePullRequestReviewCommentPayload {
  clientMutationId: String
}
input MarkPullRequestReadyForReviewInput {
  pullRequestId: ID!
  clientMutationId: String
}
type MarkPullRequestReadyForReviewPayload {
  clientMutationId: String
  pullRequest: PullRequest
}
enum PullRequestState { OPEN CLOSED MERGED }
type PullRequest {
  id: ID!
  number: Int!
  isDraft: Boolean!
  title: String!
  url: String!
  state: PullRequestState!
}
"""


class GraphQLFailure(Exception):
    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


@cache
def _schema():
    from graphql import build_schema

    return build_schema(SDL)


def execute(fake: FakeGitHub, login: str, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    from graphql import graphql_sync, parse, validate
    from graphql.error import GraphQLError

    query = request.get("query") if isinstance(request, dict) else None
    if not isinstance(query, str):
        return 400, {"message": "A query attribute must be specified and must be a string."}
    try:
        document = parse(query)
    except GraphQLError as exc:
        fake.violations.append(f"POST /graphql: {exc.message}")
        return 200, {"errors": [{"message": exc.message}]}
    errors = validate(_schema(), document)
    if errors:
        fake.violations.extend(f"POST /graphql: {e.message}" for e in errors)
        return 200, {"errors": [e.formatted for e in errors]}

    def mark_ready(_info: Any, input: dict[str, Any]) -> dict[str, Any]:
        found = parse_node_id(str(input["pullRequestId"]))
        for repo in fake.state.repos.values():
            for number, pr in repo.pulls.items():
                if found == ("PullRequest", pr.id):
                    issue = repo.issues[number]
                    try:
                        pulls.mark_ready(fake.state, repo, issue, pr, login)
                    except ApiError as exc:
                        raise GraphQLFailure(exc.message, "FORBIDDEN") from exc
                    return {
                        "clientMutationId": input.get("clientMutationId"),
                        "pullRequest": {
                            "id": input["pullRequestId"],
                            "number": number,
                            "isDraft": pr.draft,
                            "title": issue.title,
                            "url": f"{fake.server_url}/{repo.full_name}/pull/{number}",
                            "state": issue.state.upper(),
                        },
                    }
        raise GraphQLFailure(
            f"Could not resolve to a node with the global id of '{input['pullRequestId']}'", "NOT_FOUND"
        )

    def delete_review_comment(_info: Any, input: dict[str, Any]) -> dict[str, Any]:
        found = parse_node_id(str(input["id"]))
        for repo in fake.state.repos.values():
            if found is not None and found[0] == "PullRequestReviewComment" and found[1] in repo.review_comments:
                try:
                    item = pulls.review_comment(repo, found[1], login)
                    fake.state.may_edit(repo, item.user, login)
                except ApiError as exc:
                    raise GraphQLFailure(exc.message, "FORBIDDEN") from exc
                del repo.review_comments[item.id]
                return {"clientMutationId": input.get("clientMutationId")}
        raise GraphQLFailure(f"Could not resolve to a node with the global id of '{input['id']}'", "NOT_FOUND")

    result = graphql_sync(
        _schema(),
        query,
        root_value={
            "node": lambda _info, id: _node(fake, login, str(id)),
            "viewer": lambda _info: {"login": login},
            "markPullRequestReadyForReview": mark_ready,
            "deletePullRequestReviewComment": delete_review_comment,
        },
        variable_values=request.get("variables") or {},
        operation_name=request.get("operationName"),
    )
    out: dict[str, Any] = {"data": result.data}
    if result.errors:
        out["errors"] = []
        for error in result.errors:
            original = error.original_error
            formatted = dict(error.formatted)
            if isinstance(original, GraphQLFailure):
                formatted["type"] = original.kind
            out["errors"].append(formatted)
    return 200, out


def _node(fake: FakeGitHub, login: str, node: str) -> dict[str, Any] | None:
    """The object a global id names, as far as the schema has it (an issue comment), or GitHub's NOT_FOUND."""
    from tests.github.render import stamp

    found = parse_node_id(node)
    for repo in fake.state.repos.values():
        if found is not None and found[0] == "IssueComment" and found[1] in repo.comments:
            try:
                fake.state.require(repo, login, "read")
            except ApiError:
                break
            c = repo.comments[found[1]]
            return {
                "__typename": "IssueComment",
                "id": node,
                "body": c.body,
                "createdAt": stamp(c.created_at),
                "updatedAt": stamp(c.updated_at),
                "lastEditedAt": stamp(c.last_edited_at),
                "editor": _actor(fake, c.editor) if c.editor else None,
            }
    raise GraphQLFailure(f"Could not resolve to a node with the global id of '{node}'", "NOT_FOUND")


def _actor(fake: FakeGitHub, login: str) -> dict[str, Any]:
    user = fake.state.users.get(login)
    if user is not None and user.type == "Bot":
        return {"__typename": "Bot", "login": login.removesuffix("[bot]")}
    return {"__typename": "User", "login": login}
