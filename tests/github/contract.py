"""GitHub's own REST description as the contract every request to the fake GitHub must honour.

The description is ``fixtures/api.github.com.trimmed.json`` (GitHub's published OpenAPI 3.0 description,
trimmed by ``fixtures/regenerate.py``). A request that names no operation of it, sends a query parameter the
operation does not declare, sends a body that fails the operation's ``requestBody`` schema, or sends a body
field the schema does not declare is a *violation*: the bot would be calling an API that does not exist in
that form, and a fake that answered 200 would hide it.

Schemas are validated with openapi-schema-validator (the OpenAPI 3.0 dialect: ``nullable``, ``readOnly``
and ``writeOnly`` handled as the specification says); responses the fake itself produces are validated too,
so the fake cannot drift from GitHub's shapes either.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SPEC_PATH = FIXTURES / "api.github.com.trimmed.json"
SPEC_URI = "urn:github-rest"

# Path parameters that GitHub lets span several segments (a file path).
MULTI_SEGMENT_PARAMS = {("repos/get-content", "path")}


# Request bodies GitHub's description accepts in its prose but not in its schema. Issues' add/set labels:
# "You can also pass an `array` of labels directly, but GitHub recommends passing an object with the `labels`
# key" (PyGithub's Issue.add_to_labels/set_labels send the bare array).
BARE_LABEL_LISTS = {"issues/add-labels", "issues/set-labels"}
BASE_API_VERSION = "2022-11-28"


@dataclass
class Operation:
    operation_id: str
    method: str
    template: str
    regex: re.Pattern[str]
    literal_segments: int
    raw: dict  # the operation object of the description (version 2022-11-28, the base)
    path_params: dict[str, dict] = field(default_factory=dict)
    query_params: dict[str, dict] = field(default_factory=dict)


@dataclass
class RequestCheck:
    """The outcome of checking one request: the operation it names (if any) and what is wrong with it."""

    operation: Operation | None
    path_params: dict[str, str]
    body: Any
    violations: list[str]


def _prepare(node: Any, spec: dict) -> Any:
    """A schema of the description ready for the validator.

    - `$ref`s and discriminator mappings are made absolute (they resolve in the registered description);
    - `null` is added to the `enum` of a `nullable` schema: OpenAPI 3.0.3 says `nullable` does not override
      `enum`, yet GitHub writes ``nullable: true`` beside enums that list no null (an open issue's
      ``state_reason``) and sends null there, so its intent is "or null";
    - a discriminator over a oneOf with a non-object branch is dropped (GitHub's contents answer discriminates
      an array by `type`, which no validator can read); the oneOf alone still decides.
    """
    if isinstance(node, dict):
        out = {
            k: (f"{SPEC_URI}{v}" if k == "$ref" and isinstance(v, str) and v.startswith("#") else _prepare(v, spec))
            for k, v in node.items()
        }
        if isinstance(node.get("discriminator"), dict):
            branches = [_resolve_in(spec, b) for b in node.get("oneOf", []) + node.get("anyOf", [])]
            if any(b.get("type", "object") != "object" for b in branches):
                del out["discriminator"]
            elif isinstance(node["discriminator"].get("mapping"), dict):
                mapping = {k: f"{SPEC_URI}{v}" for k, v in node["discriminator"]["mapping"].items()}
                out["discriminator"] = {**node["discriminator"], "mapping": mapping}
        if out.get("nullable") is True and isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(node, list):
        return [_prepare(v, spec) for v in node]
    return node


def _resolve_in(spec: dict, node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        target: Any = spec
        for part in node["$ref"][2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def apply_breaking_changes(op: dict, version: str) -> dict:
    """The operation as API `version` defines it: its ``x-github-breaking-changes`` up to that version applied.

    A change is a JSON Merge Patch (an object, null deletes) or a JSON Patch (a list of ops) on the operation.
    """
    result = copy.deepcopy(op)
    for change in op.get("x-github-breaking-changes", []):
        if change.get("version", "9999") > version:
            continue
        patch = change["patch"]
        if isinstance(patch, dict):
            result = _merge_patch(result, patch)
        else:
            for step in patch:
                parts = [p.replace("~1", "/").replace("~0", "~") for p in step["path"].strip("/").split("/")]
                parent = result
                for part in parts[:-1]:
                    parent = parent.setdefault(part, {})
                if step["op"] == "remove":
                    parent.pop(parts[-1], None)
                elif step["op"] in ("replace", "add"):
                    parent[parts[-1]] = step["value"]
    return result


def _merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


class Contract:
    """Matches requests to operations of the description and validates them (thread-safe, read-only)."""

    def __init__(self, spec_path: Path = SPEC_PATH):
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT4

        self.spec: dict = json.loads(spec_path.read_text(encoding="utf-8"))
        self._registry = Registry().with_resource(
            SPEC_URI, Resource.from_contents(_prepare(self.spec, self.spec), DRAFT4)
        )
        self._lock = threading.Lock()
        self._validators: dict[tuple, Any] = {}
        self.operations: list[Operation] = []
        self.by_id: dict[str, Operation] = {}
        for template, item in self.spec["paths"].items():
            for method, op in item.items():
                if method == "parameters":
                    continue
                operation = self._operation(template, method, op, item.get("parameters", []))
                self.operations.append(operation)
                self.by_id[operation.operation_id] = operation
        # The most literal template wins: /issues/comments/{id} before /issues/{issue_number}/...
        self.operations.sort(key=lambda op: -op.literal_segments)

    # --- building -------------------------------------------------------------------------------
    def resolve(self, node: Any) -> Any:
        return _resolve_in(self.spec, node)

    def _operation(self, template: str, method: str, op: dict, shared_params: list) -> Operation:
        op_id = op["operationId"]
        params = [self.resolve(p) for p in [*shared_params, *op.get("parameters", [])]]
        pattern = ""
        literal = 0
        for segment in template.strip("/").split("/"):
            name = re.fullmatch(r"\{(\w+)\}", segment)
            if name:
                multi = (op_id, name.group(1)) in MULTI_SEGMENT_PARAMS
                pattern += f"/(?P<{name.group(1)}>{'.*' if multi else '[^/]+'})"
            else:
                pattern += "/" + re.escape(segment)
                literal += 1
        return Operation(
            op_id,
            method.upper(),
            template,
            re.compile(pattern),
            literal,
            op,
            {p["name"]: p for p in params if p["in"] == "path"},
            {p["name"]: p for p in params if p["in"] == "query"},
        )

    def effective(self, operation: Operation, version: str | None) -> dict:
        """The operation object for the API version a client asked for (the base one when it named none)."""
        key = ("op", operation.operation_id, version or BASE_API_VERSION)
        with self._lock:
            if key not in self._validators:
                self._validators[key] = apply_breaking_changes(operation.raw, version or BASE_API_VERSION)
            return self._validators[key]

    def _validator(self, key: tuple, schema: dict, *, write: bool):
        from openapi_schema_validator import OAS30ReadValidator, OAS30WriteValidator

        with self._lock:
            if key not in self._validators:
                cls = OAS30WriteValidator if write else OAS30ReadValidator
                self._validators[key] = cls(_prepare(schema, self.spec), registry=self._registry)
            return self._validators[key]

    def validate(self, key: tuple, schema: dict, value: Any, *, write: bool) -> list[str]:
        """Schema errors of `value` (`key` names the schema for caching its validator)."""
        errors = self._validator(key, schema, write=write).iter_errors(value)
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors][:10]

    # --- requests -------------------------------------------------------------------------------
    def match(self, method: str, path: str) -> tuple[Operation | None, dict[str, str], bool]:
        """(operation, path parameters, path known for another method)."""
        from urllib.parse import unquote

        path_known = False
        for operation in self.operations:
            found = operation.regex.fullmatch(path)
            if not found:
                continue
            params = {k: unquote(v) for k, v in found.groupdict().items()}
            if not all(self._param_ok(operation.path_params[k], v) for k, v in params.items()):
                continue
            if operation.method != method:
                path_known = True
                continue
            return operation, params, True
        return None, {}, path_known

    def _param_ok(self, param: dict, raw: str) -> bool:
        from openapi_schema_validator import OAS30Validator

        schema = self.resolve(param.get("schema", {}))  # parameter schemas are small and inline
        value = self._coerce(schema, raw)
        return value is not _INVALID and OAS30Validator(schema).is_valid(value)

    @staticmethod
    def _coerce(schema: dict, raw: str) -> Any:
        kind = schema.get("type")
        if kind == "integer":
            return int(raw) if re.fullmatch(r"-?\d+", raw) else _INVALID
        if kind == "boolean":
            return {"true": True, "false": False}.get(raw, _INVALID)
        return raw

    def check_request(
        self, method: str, path: str, query: dict[str, list[str]], raw_body: bytes, api_version: str | None = None
    ) -> RequestCheck:
        operation, params, path_known = self.match(method, path)
        if operation is None:
            why = "method not allowed on this path" if path_known else "no such path"
            return RequestCheck(None, {}, None, [f"{method} {path}: {why} in GitHub's REST description (subset)"])
        violations: list[str] = []
        where = f"{method} {path} ({operation.operation_id})"
        for name, values in query.items():
            param = operation.query_params.get(name)
            if param is None:
                violations.append(f"{where}: undeclared query parameter {name!r}")
                continue
            for raw in values:
                if not self._param_ok(param, raw):
                    violations.append(f"{where}: query parameter {name}={raw!r} does not match its schema")
        body: Any = None
        if raw_body.strip():
            try:
                body = json.loads(raw_body)
            except ValueError as exc:
                return RequestCheck(operation, params, None, [*violations, f"{where}: body is not JSON ({exc})"])
        op = self.effective(operation, api_version)
        request_body = self.resolve(op.get("requestBody", {}))
        schema = request_body.get("content", {}).get("application/json", {}).get("schema")
        if operation.operation_id in BARE_LABEL_LISTS and (
            isinstance(body, str) or (isinstance(body, list) and all(isinstance(x, str) for x in body))
        ):
            body = {"labels": [body] if isinstance(body, str) else body}
        if body is not None and schema is None:
            violations.append(f"{where}: this operation takes no request body")
        elif body is None and request_body.get("required"):
            violations.append(f"{where}: the request body is required")
        elif body is not None and schema is not None:
            key = ("request", operation.operation_id, api_version or BASE_API_VERSION)
            violations += [f"{where}: body {error}" for error in self.validate(key, schema, body, write=True)]
            violations += [f"{where}: body {extra}" for extra in self.undeclared_fields(schema, body)]
        return RequestCheck(operation, params, body, violations)

    def undeclared_fields(self, schema: dict, value: Any, at: str = "") -> list[str]:
        """Fields of `value` that no (sub)schema declares where the schema lists its properties.

        JSON Schema lets unknown fields through unless ``additionalProperties: false``; GitHub's descriptions
        rarely say it, yet GitHub ignores such fields, so a bot sending one believes in an API that is not there.
        """
        branches = self._branches(schema, value)
        if not branches:
            return []
        if isinstance(value, dict):
            declared: dict[str, list[dict]] = {}
            open_ended = False
            for branch in branches:
                extra = branch.get("additionalProperties")
                if extra is True or isinstance(extra, dict) or "properties" not in branch:
                    open_ended = True
                for name, sub in branch.get("properties", {}).items():
                    declared.setdefault(name, []).append(sub)
            found = []
            for key, item in value.items():
                if key not in declared:
                    if not open_ended:
                        found.append(f"field {at + key!r} is not declared by the schema")
                    continue
                for sub in declared[key][:1]:
                    found += self.undeclared_fields(sub, item, f"{at}{key}.")
            return found
        if isinstance(value, list):
            found = []
            items = [b["items"] for b in branches if "items" in b]
            for index, item in enumerate(value):
                for sub in items[:1]:
                    found += self.undeclared_fields(sub, item, f"{at}{index}.")
            return found
        return []

    def _branches(self, schema: dict, value: Any) -> list[dict]:
        """The object/array (sub)schemas that can apply to `value`, flattening allOf/anyOf/oneOf."""
        schema = self.resolve(schema)
        combined = [*schema.get("allOf", []), *schema.get("anyOf", []), *schema.get("oneOf", [])]
        kind = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else None
        if kind is None:
            return []
        branches = []
        if schema.get("type") in (kind, None) and ("properties" in schema or "items" in schema or not combined):
            if schema.get("type") == kind or "properties" in schema or "items" in schema:
                branches.append(schema)
        for sub in combined:
            branches += self._branches(sub, value)
        return branches

    # --- responses ------------------------------------------------------------------------------
    def response_schema(self, operation: Operation, status: int, api_version: str | None) -> dict | None:
        """The schema GitHub declares for a JSON response, or None when it declares no JSON body."""
        response = self.effective(operation, api_version).get("responses", {}).get(str(status))
        content = self.resolve(response or {}).get("content", {})
        return content.get("application/json", {}).get("schema")

    def declared_statuses(self, operation: Operation, api_version: str | None = None) -> set[int]:
        responses = self.effective(operation, api_version).get("responses", {})
        return {int(code) for code in responses if code.isdigit()}

    def check_response(self, operation: Operation, status: int, body: Any, api_version: str | None = None) -> list[str]:
        """What is wrong with a successful response the fake produced (the fake's own defects)."""
        if status >= 400:
            return []
        if status not in self.declared_statuses(operation, api_version):
            return [f"{operation.operation_id}: GitHub declares no status {status}"]
        schema = self.response_schema(operation, status, api_version)
        if schema is None:
            return [] if body is None else [f"{operation.operation_id}: GitHub declares no JSON body for {status}"]
        key = ("response", operation.operation_id, status, api_version or BASE_API_VERSION)
        errors = self.validate(key, schema, body, write=False)
        return [f"{operation.operation_id} {status}: {error}" for error in errors]

    def example(self, name: str) -> Any:
        """A response example of the description (``components/examples/<name>``), as GitHub documents it."""
        return json.loads(json.dumps(self.spec["components"]["examples"][name]["value"]))


_INVALID = object()


@cache
def load_contract() -> Contract:
    """The process-wide contract (parsing the description once keeps every test fast)."""
    return Contract()
