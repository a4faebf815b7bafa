"""AdmissionReview in and out: what kube-apiserver sends a webhook, and the three answers a webhook gives.

kube-apiserver POSTs an ``admission.k8s.io/v1`` ``AdmissionReview`` whose ``request`` carries the object (and,
on an update, the stored one in ``oldObject``; on a delete only ``oldObject``); the webhook answers an
``AdmissionReview`` of the same apiVersion whose ``response`` echoes the request's ``uid`` and says:

- **allowed**, perhaps with a ``JSONPatch`` (base64, RFC 6902) that turns the object into its defaulted form —
  a mutating webhook's answer, computed here from the object as sent and the defaulted copy, so only what
  defaulting changed is in the patch;
- **denied**, with a ``Status`` (``Invalid``, 422, one cause per field error, as
  :func:`~clusterclass.topology.check.result.invalid_status` renders it), which kube-apiserver returns to the
  client as ``admission webhook "<name>" denied the request: <message>``;
- either one with ``warnings``, which kubectl prints as ``Warning: ...``.

A review that cannot be read is answered as controller-runtime answers it: not allowed, code 400.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonpatch

from clusterclass.api.objects import Obj
from clusterclass.kube.errors import Status, make_status

REVIEW_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")

Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]


class BadReview(ValueError):
    """The body is not an AdmissionReview this webhook can answer."""


@dataclass(frozen=True)
class AdmissionRequest:
    """The parts of ``AdmissionReview.request`` a handler reads."""

    uid: str
    api_version: str
    operation: Operation
    kind: str
    name: str
    namespace: str
    object: Obj | None
    old_object: Obj | None
    dry_run: bool = False
    user: str = ""
    #: the version the object was sent in, when the handlers see it converted (``v1beta2``); "" otherwise
    user_version: str = ""

    @property
    def subject(self) -> Obj:
        """The object the request is about: the new one, or for a delete the stored one."""
        return self.object if self.object is not None else (self.old_object or {})


@dataclass
class AdmissionResponse:
    """An answer: allowed or not, an optional JSON patch, a Status when denied, warnings."""

    allowed: bool
    patch: list[Obj] = field(default_factory=list)
    status: Status | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def code(self) -> int:
        """The HTTP-like code of the answer, as controller-runtime's webhook metrics label it."""
        if self.status is not None:
            return int(self.status.get("code") or (200 if self.allowed else 403))
        return 200 if self.allowed else 403


def parse_review(body: bytes) -> AdmissionRequest:
    """The request of an AdmissionReview body (:class:`BadReview` when it is not one)."""
    try:
        review = json.loads(body)
    except ValueError as err:
        raise BadReview(f"couldn't decode the AdmissionReview: {err}") from err
    if not isinstance(review, dict) or review.get("kind") != "AdmissionReview":
        raise BadReview("the body is not an AdmissionReview")
    api_version = review.get("apiVersion")
    if api_version not in REVIEW_VERSIONS:
        raise BadReview(f"unsupported AdmissionReview apiVersion {api_version!r}")
    request = review.get("request")
    if not isinstance(request, dict) or not request.get("uid"):
        raise BadReview("the AdmissionReview has no request uid")
    kind = request.get("kind")
    kind = kind if isinstance(kind, dict) else {}
    obj, old = request.get("object"), request.get("oldObject")
    return AdmissionRequest(
        uid=str(request["uid"]),
        api_version=str(api_version),
        operation=request.get("operation") or "CREATE",
        kind=str(kind.get("kind") or ""),
        name=str(request.get("name") or ""),
        namespace=str(request.get("namespace") or ""),
        object=obj if isinstance(obj, dict) else None,
        old_object=old if isinstance(old, dict) else None,
        dry_run=bool(request.get("dryRun")),
        user=str((request.get("userInfo") or {}).get("username") or ""),
    )


def patched(original: Obj, defaulted: Obj, warnings: list[str] | None = None) -> AdmissionResponse:
    """Allowed, with the JSON patch from ``original`` to ``defaulted`` (none when they are equal)."""
    operations = jsonpatch.make_patch(original, defaulted).patch
    return AdmissionResponse(allowed=True, patch=list(operations), warnings=list(warnings or []))


def allowed(warnings: list[str] | None = None) -> AdmissionResponse:
    return AdmissionResponse(allowed=True, warnings=list(warnings or []))


def denied(status: Status, warnings: list[str] | None = None) -> AdmissionResponse:
    return AdmissionResponse(allowed=False, status=status, warnings=list(warnings or []))


def review_answer(request: AdmissionRequest, response: AdmissionResponse) -> Obj:
    """The AdmissionReview body answering ``request``."""
    answer: dict[str, Any] = {"uid": request.uid, "allowed": response.allowed}
    if response.status is not None:
        answer["status"] = response.status
    if response.patch:
        answer["patchType"] = "JSONPatch"
        answer["patch"] = base64.b64encode(json.dumps(response.patch, separators=(",", ":")).encode()).decode()
    if response.warnings:
        answer["warnings"] = response.warnings
    return {"apiVersion": request.api_version, "kind": "AdmissionReview", "response": answer}


def bad_review_answer(error: BadReview) -> Obj:
    """What a body that is no AdmissionReview gets: not allowed, code 400."""
    return {
        "apiVersion": REVIEW_VERSIONS[0],
        "kind": "AdmissionReview",
        "response": {"uid": "", "allowed": False, "status": make_status(400, "BadRequest", str(error))},
    }
