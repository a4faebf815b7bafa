"""Injected API faults: a :class:`~clusterclass.kube.client.Client` that fails the way a loaded API server does.

:class:`FaultyClient` wraps any Client — the embedded store's or the HTTP one talking to a real kube-apiserver — and,
at the rates a :class:`FaultRates` gives, answers a request with what a management cluster under stress answers:

- ``conflict``: a write (update, status update, patch, apply) refused with 409 Conflict, as when another writer got
  there first;
- ``throttle``: any request refused with 429 TooManyRequests and ``Retry-After`` (priority and fairness; never
  processed);
- ``server_error``: any request answered 500; a write half the time *after* the server applied it (etcd timed out
  answering; the change is there);
- ``timeout``: any request that times out on the client; a write half the time after it was applied (the answer
  was lost);
- ``watch_drop``: a watch stream that ends early (each event has this chance of being the last);
- ``watch_expire``: a watch that falls behind the server's compacted history: instead of an event it ends with 410
  Gone (each event has this chance), so the informer lists again;
- ``slow_list``: a list that takes ``list_delay`` seconds longer.

The faults land where a real one would: before the wrapped client is called (nothing happened) or after it returned
(the change was made, the caller never heard). What was injected is counted in :attr:`FaultyClient.injected`, so a
test can report it beside what survived. Randomness comes from the ``rng`` given, so a run can be repeated.

No library fits: fault-injection proxies (toxiproxy and the like) work on TCP and cannot tell a write from a read,
nor reach the embedded store, which is not behind a socket.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from clusterclass.api.objects import Obj
from clusterclass.kube.client import (
    Client,
    FieldSelectorLike,
    LabelSelector,
    ObjectList,
    PatchType,
    Preconditions,
    PropagationPolicy,
    Resource,
    WatchEvent,
)
from clusterclass.kube.errors import ApiError, Conflict, Gone, make_status

T = TypeVar("T")


@dataclass(frozen=True)
class FaultRates:
    """The chance of each fault per request (module doc); all zero injects nothing."""

    conflict: float = 0.0
    throttle: float = 0.0
    server_error: float = 0.0
    timeout: float = 0.0
    watch_drop: float = 0.0
    watch_expire: float = 0.0
    slow_list: float = 0.0
    #: how much longer a slow list takes
    list_delay: float = 0.2
    #: the Retry-After a throttled request is answered with
    retry_after: int = 1

    @classmethod
    def parse(cls, text: str) -> FaultRates:
        """``conflict=0.05,timeout=0.02,...`` (the ``--faults`` form); ValueError naming a bad part."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, _, value = part.partition("=")
            if name not in known:
                raise ValueError(f"unknown fault {name!r} (known: {', '.join(sorted(known))})")
            try:
                values[name] = int(value) if name == "retry_after" else float(value)
            except ValueError:
                raise ValueError(f"{name}: {value!r} is not a number") from None
        return cls(**values)


class InjectedFault(ApiError):
    """A fault the layer made up (its status says which), distinguishable in logs from a real one."""


def conflict(what: str) -> ApiError:
    return Conflict(
        make_status(
            409,
            "Conflict",
            f"Operation cannot be fulfilled on {what}: the object has been modified; please apply your changes to "
            "the latest version and try again (injected)",
        )
    )


def throttled(retry_after: int) -> ApiError:
    return InjectedFault(
        make_status(
            429,
            "TooManyRequests",
            "The server has received too many requests and has asked us to try again later (injected)",
            details={"retryAfterSeconds": retry_after},
        )
    )


def server_error() -> ApiError:
    return InjectedFault(
        make_status(500, "InternalError", "Internal error occurred: etcdserver: request timed out (injected)")
    )


def timed_out(method: str) -> ApiError:
    # what the HTTP client raises when no answer came (kube.http.client's transport errors)
    return InjectedFault(
        make_status(503, "ServiceUnavailable", f"{method}: cannot reach the API server: timed out (injected)")
    )


class FaultyClient:
    """``client`` with faults injected at ``rates`` (module doc)."""

    def __init__(self, client: Client, rates: FaultRates, *, rng: random.Random | None = None) -> None:
        self.client = client
        self.rates = rates
        self.rng = rng or random.Random()
        #: faults injected, by name
        self.injected: Counter[str] = Counter()

    def _roll(self, rate: float) -> bool:
        return rate > 0 and self.rng.random() < rate

    def _request_fault(self, method: str) -> ApiError | None:
        """The throttle, 500 or timeout this request draws, if any (each counted)."""
        makers: tuple[tuple[str, float, Callable[[], ApiError]], ...] = (
            ("throttle", self.rates.throttle, lambda: throttled(self.rates.retry_after)),
            ("server_error", self.rates.server_error, server_error),
            ("timeout", self.rates.timeout, lambda: timed_out(method)),
        )
        for name, rate, make in makers:
            if self._roll(rate):
                self.injected[name] += 1
                return make()
        return None

    async def _read(self, method: str, call: Callable[[], Awaitable[T]]) -> T:
        fault = self._request_fault(method)
        if fault is not None:
            raise fault
        return await call()

    async def _write(self, method: str, what: str, call: Callable[[], Awaitable[T]], *, conflicts: bool = True) -> T:
        if conflicts and self._roll(self.rates.conflict):
            self.injected["conflict"] += 1
            raise conflict(what)
        lost = self._request_fault(method)
        if lost is not None and lost.status.get("code") == 429:
            raise lost  # a throttled request was never processed
        if lost is not None and self.rng.random() < 0.5:
            raise lost  # refused before anything happened
        result = await call()
        if lost is not None:
            self.injected["after_write"] += 1
            raise lost  # the change was made; the answer is lost
        return result

    # -- the Client protocol -------------------------------------------------------------------------

    async def resource(self, api_version: str, kind: str) -> Resource:
        return await self.client.resource(api_version, kind)

    async def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        return await self._read("GET", lambda: self.client.get(api_version, kind, name, namespace=namespace))

    async def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
    ) -> ObjectList:
        if self._roll(self.rates.slow_list):
            self.injected["slow_list"] += 1
            await asyncio.sleep(self.rates.list_delay)
        return await self._read(
            "LIST",
            lambda: self.client.list(
                api_version, kind, namespace=namespace, label_selector=label_selector, field_selector=field_selector
            ),
        )

    async def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
        resource_version: str | None = None,
        bookmarks: bool = True,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        stream = self.client.watch(
            api_version,
            kind,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
            bookmarks=bookmarks,
            timeout_seconds=timeout_seconds,
        )
        try:
            async for event in stream:
                if self._roll(self.rates.watch_expire):
                    self.injected["watch_expire"] += 1
                    version = (event.get("object") or {}).get("metadata", {}).get("resourceVersion")
                    raise Gone(make_status(410, "Expired", f"too old resource version: {version} (injected)"))
                yield event
                if self._roll(self.rates.watch_drop):
                    self.injected["watch_drop"] += 1
                    return  # the stream ends, as a broken connection ends it
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    async def create(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        return await self._write(
            "POST",
            _what(obj),
            lambda: self.client.create(obj, dry_run=dry_run, field_manager=field_manager),
            conflicts=False,
        )

    async def update(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        return await self._write(
            "PUT", _what(obj), lambda: self.client.update(obj, dry_run=dry_run, field_manager=field_manager)
        )

    async def update_status(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        return await self._write(
            "PUT", _what(obj), lambda: self.client.update_status(obj, dry_run=dry_run, field_manager=field_manager)
        )

    async def apply(
        self, obj: Obj, *, field_manager: str, force: bool = False, dry_run: bool = False, status: bool = False
    ) -> Obj:
        if dry_run:  # a dry run changes nothing: its faults are a read's
            return await self._read(
                "PATCH",
                lambda: self.client.apply(obj, field_manager=field_manager, force=force, dry_run=True, status=status),
            )
        return await self._write(
            "PATCH",
            _what(obj),
            lambda: self.client.apply(obj, field_manager=field_manager, force=force, status=status),
        )

    async def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        *,
        patch_type: PatchType = "merge",
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        status: bool = False,
    ) -> Obj:
        return await self._write(
            "PATCH",
            f'{kind} "{name}"',
            lambda: self.client.patch(
                api_version,
                kind,
                name,
                patch,
                patch_type=patch_type,
                namespace=namespace,
                dry_run=dry_run,
                field_manager=field_manager,
                status=status,
            ),
        )

    async def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy | None = None,
        dry_run: bool = False,
    ) -> Obj | None:
        return await self._write(
            "DELETE",
            f'{kind} "{name}"',
            lambda: self.client.delete(
                api_version,
                kind,
                name,
                namespace=namespace,
                preconditions=preconditions,
                propagation_policy=propagation_policy,
                dry_run=dry_run,
            ),
            conflicts=False,
        )

    async def close(self) -> None:
        await self.client.close()

    def __getattr__(self, name: str) -> Any:
        # what a backend offers beyond the protocol (the memory client's store, an HTTP client's config)
        return getattr(self.client, name)


def _what(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f'{obj.get("kind")} "{meta.get("name") or meta.get("generateName") or ""}"'


def _check_protocol(client: FaultyClient) -> Client:
    """FaultyClient is a Client (checked by mypy, never called)."""
    return client
