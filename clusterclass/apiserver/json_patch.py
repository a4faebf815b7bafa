"""JSON patch (RFC 6902) with kube-apiserver's rules, for ``patch(patch_type="json")``.

The operations themselves are the ``jsonpatch`` library's (see STACK.md). What this module adds is
where kube-apiserver (through its JSON patch library) differs from the bare RFC or answers in its
own words:

- a list index may be negative and counts from the end (``/spec/items/-1`` is the last element;
  for ``add`` it counts from the end of the list *after* the insertion, so ``-1`` appends);
- ``test`` compares JSON values strictly (``true`` is not ``1``), and a ``test`` of a missing
  member against ``null`` holds;
- ``replace`` of a member an object does not have adds it (a list index must exist);
- a body that is not a JSON array is a BadRequest; more than 10000 operations is 413
  RequestEntityTooLarge; an operation that does not apply is a 422 ``Invalid`` with only the
  message "the server rejected our request due to an error in our request" and empty details,
  exactly as kube-apiserver 1.37 answers (verified): the reason is not sent to the client, so
  :class:`PatchFailed`'s message is kept only as the exception's ``__cause__``.
"""

from __future__ import annotations

import copy
import marshal
import re
from typing import Any

import jsonpatch
import jsonpointer

from clusterclass.kube.errors import ApiError, BadRequest, Invalid, make_status
from clusterclass.kube.gotext import json_kind
from clusterclass.schema.jsonvalues import json_equal

#: kube-apiserver refuses JSON patches with more operations than this
MAX_OPERATIONS = 10000

_INDEX = re.compile(r"^-[0-9]+$")


class PatchFailed(Exception):
    """An operation that does not apply to the document; the message is what kube-apiserver reports."""


def apply_json_patch(document: Any, patch: Any) -> Any:
    """``document`` with the RFC 6902 ``patch`` applied; ``document`` is not changed.

    Raises the :class:`~clusterclass.kube.errors.ApiError` kube-apiserver answers with when the
    patch is malformed or does not apply.
    """
    if not isinstance(patch, list):
        raise BadRequest.new(
            f"error decoding patch: json: cannot unmarshal {json_kind(patch)} into Go value of type "
            "[]handlers.jsonPatchOp"
        )
    if len(patch) > MAX_OPERATIONS:
        raise ApiError(
            make_status(
                413,
                "RequestEntityTooLarge",
                f"Request entity too large: The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, "
                f"got {len(patch)}",
            )
        )
    result = _copy(document)
    try:
        for operation in patch:
            result = _apply_one(result, operation)
    except PatchFailed as err:
        raise _rejected() from err
    return result


def _copy(document: Any) -> Any:
    """A deep copy of a JSON document: ``marshal`` is the fastest one of plain data in CPython."""
    try:
        return marshal.loads(marshal.dumps(document))
    except ValueError:  # not plain JSON data
        return copy.deepcopy(document)


def _apply_one(document: Any, operation: Any) -> Any:
    if not isinstance(operation, dict):
        raise PatchFailed(f"Unexpected kind: {json_kind(operation)}")
    op = operation.get("op")
    if op not in ("add", "remove", "replace", "move", "copy", "test"):
        raise PatchFailed(f"Unexpected kind: {op if isinstance(op, str) else 'unknown'}")
    path = operation.get("path")
    if not isinstance(path, str):
        raise PatchFailed(f"{op} operation failed to decode path")
    if op in ("add", "replace", "test") and "value" not in operation:
        raise PatchFailed(f"{op} operation has no value")
    resolved = dict(operation)
    if "value" in resolved:
        resolved["value"] = _copy(resolved["value"])  # the result shares nothing with the caller's patch
    resolved["path"] = _resolve(document, path, inserting=op in ("add", "move", "copy"))
    if op in ("move", "copy"):
        source = operation.get("from")
        if not isinstance(source, str):
            raise PatchFailed(f"{op} operation failed to decode from")
        resolved["from"] = _resolve(document, source, inserting=False)
    if op == "test":
        _test(document, resolved["path"], operation["value"])
        return document
    if op == "replace" and _missing_member(document, resolved["path"]):
        resolved["op"] = "add"
    try:
        return jsonpatch.apply_patch(document, [resolved], in_place=True)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, KeyError, IndexError) as err:
        raise PatchFailed(_describe(op, path, err)) from err


def _resolve(document: Any, path: str, *, inserting: bool) -> str:
    """``path`` with every negative list index replaced by the index it stands for."""
    if not path or not path.startswith("/"):
        return path
    tokens = path[1:].split("/")
    target = document
    for i, raw in enumerate(tokens):
        token = raw.replace("~1", "/").replace("~0", "~")
        last = i == len(tokens) - 1
        if isinstance(target, list) and _INDEX.match(token):
            size = len(target) + (1 if last and inserting else 0)
            index = int(token)
            if -index <= size:
                tokens[i] = str(index + size)
                token = tokens[i]
        if last:
            break
        if isinstance(target, dict):
            target = target.get(token)
        elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            break
    return "/" + "/".join(tokens)


def _missing_member(document: Any, path: str) -> bool:
    """Whether ``path`` names a member its (existing) parent object does not have."""
    parent_path, _, last = path.rpartition("/")
    try:
        parent = jsonpointer.resolve_pointer(document, parent_path) if path else None
    except jsonpointer.JsonPointerException:
        return False
    return isinstance(parent, dict) and last.replace("~1", "/").replace("~0", "~") not in parent


def _test(document: Any, path: str, expected: Any) -> None:
    try:
        found = jsonpointer.resolve_pointer(document, path)
    except jsonpointer.JsonPointerException:
        if expected is None:
            return
        raise PatchFailed(f"testing value {path} failed: test failed") from None
    if not json_equal(found, expected):
        raise PatchFailed(f"testing value {path} failed: test failed")


def _describe(op: str, path: str, err: Exception) -> str:
    if isinstance(err, jsonpatch.JsonPatchConflict | jsonpointer.JsonPointerException | KeyError | IndexError):
        return f'{op} operation does not apply: doc is missing path: "{path}": missing value'
    return f"{op} operation does not apply: {err}"


def _rejected() -> Invalid:
    """The 422 kube-apiserver answers when a JSON patch does not apply (the reason stays on the server)."""
    return Invalid(
        make_status(422, "Invalid", "the server rejected our request due to an error in our request", details={})
    )
