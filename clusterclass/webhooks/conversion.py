"""The CRD conversion webhook: ``ConversionReview`` (``apiextensions.k8s.io/v1``) answered with the Cluster API
conversions.

A Cluster API CRD installed with ``spec.conversion.strategy: Webhook`` (``config/crd``) makes kube-apiserver call
this endpoint whenever an object is read or written in a version other than the one it is stored in: the review
carries the objects and ``desiredAPIVersion``; the answer carries every object converted, in order, or a failure
whose message kube-apiserver passes on (``conversion webhook for ... failed: <message>``). The conversions are
:mod:`clusterclass.api.conversion`'s, the same the embedded management cluster runs in process.

A v1beta2 reference names only a group and kind; converting it down asks :class:`ApiVersions` (the management
cluster's CRDs and their contract labels, as upstream's webhook asks its client).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from aiohttp import web

from clusterclass.api.conversion import ApiVersions, ConversionError, convert

REVIEW_API_VERSION: Final = "apiextensions.k8s.io/v1"
REVIEW_KIND: Final = "ConversionReview"
#: where upstream's managers serve it, and where ``config/crd``'s patches point
PATH: Final = "/convert"


class BadConversionReview(ValueError):
    """A body that is no ConversionReview v1."""


def convert_review(body: bytes, api_versions: ApiVersions) -> dict[str, Any]:
    """The ConversionReview answering the one in ``body``; raises :class:`BadConversionReview` for anything else."""
    try:
        review = json.loads(body)
    except ValueError as err:
        raise BadConversionReview(f"the body is not JSON: {err}") from None
    if not isinstance(review, dict) or review.get("kind") != REVIEW_KIND:
        raise BadConversionReview("the body is not a ConversionReview")
    if review.get("apiVersion") != REVIEW_API_VERSION:
        raise BadConversionReview(f"unsupported ConversionReview version {review.get('apiVersion')!r} (want v1)")
    request = review.get("request")
    if not isinstance(request, dict):
        raise BadConversionReview("the ConversionReview has no request")
    desired = request.get("desiredAPIVersion")
    objects = request.get("objects")
    response: dict[str, Any] = {"uid": request.get("uid", "")}
    try:
        if not isinstance(desired, str) or not desired:
            raise ConversionError("desiredAPIVersion is required")
        if not isinstance(objects, list):
            raise ConversionError("objects must be a list")
        converted = []
        for index, obj in enumerate(objects):
            if not isinstance(obj, dict):
                raise ConversionError(f"objects[{index}] is not an object")
            converted.append(convert(obj, desired, api_versions=api_versions))
    except ConversionError as err:
        response["result"] = {"status": "Failure", "message": str(err)}
        response["convertedObjects"] = []
    else:
        response["result"] = {"status": "Success"}
        response["convertedObjects"] = converted
    return {"apiVersion": REVIEW_API_VERSION, "kind": REVIEW_KIND, "response": response}


def conversion_endpoint(
    api_versions: Callable[[], ApiVersions],
) -> Callable[[web.Request], Any]:
    """The aiohttp handler for :data:`PATH`; ``api_versions`` is asked for the current CRDs on each review."""

    async def serve(http_request: web.Request) -> web.StreamResponse:
        try:
            answer = convert_review(await http_request.read(), api_versions())
        except BadConversionReview as err:
            return web.json_response({"error": str(err)}, status=400)
        return web.json_response(answer)

    return serve
