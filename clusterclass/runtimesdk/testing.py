"""Calling an extension's handlers in a test, without a network: what ``clusterclass`` would send, and the answer.

:class:`ExtensionTester` wraps an :class:`~clusterclass.runtimesdk.extension.Extension` and calls a handler with a
request completed as the Runtime SDK client completes it (``apiVersion``, ``kind``), returning the answer exactly as
the server would send it (defaults filled in, failures as ``status: Failure``)::

    tester = ExtensionTester(extension)
    answer = tester.call("GeneratePatches", {"variables": [...], "items": [...]})
    assert answer["status"] == "Success"
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.runtimesdk import catalog
from clusterclass.runtimesdk.extension import Extension


class ExtensionTester:
    def __init__(self, extension: Extension) -> None:
        self.extension = extension

    def discover(self) -> Obj:
        return self.extension.discovery()

    async def acall(self, hook: str, request: Obj, *, handler: str | None = None) -> Obj:
        """Call ``handler`` of ``hook`` (default: the extension's only handler of that hook)."""
        if handler is None:
            names = [h.name for h in self.extension.handlers if h.hook.name == hook]
            if len(names) != 1:
                raise ValueError(f"the extension has {len(names)} {hook} handlers: name one ({', '.join(names)})")
            handler = names[0]
        body = {"apiVersion": catalog.API_VERSION, "kind": catalog.hook(hook).request_kind, **request}
        answer = await self.extension.answer(hook, handler, json.loads(json.dumps(body)))
        return dict(json.loads(json.dumps(answer)))

    def call(self, hook: str, request: Obj, *, handler: str | None = None) -> Obj:
        """:meth:`acall` from synchronous code (not from inside a running event loop: use ``acall`` there)."""
        return asyncio.run(self.acall(hook, request, handler=handler))


def decoded_patch(item: Obj) -> Any:
    """The patch document of a GeneratePatches response item (its ``patch`` is base64)."""
    return json.loads(base64.b64decode(item["patch"]))
