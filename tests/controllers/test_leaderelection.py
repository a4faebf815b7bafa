"""Leader election on a Lease as client-go does it: one leader, release on stop, takeover on expiry, renew failure."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from controller_support import FailingClient, eventually

from clusterclass.controllers.runtime.leaderelection import LEASE_API_VERSION, LeaderElectionConfig, LeaderElector
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.kube.client import Client
from clusterclass.kube.errors import ApiError, make_status

MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
#: short enough for a test, in client-go's proportions (duration > deadline > 1.2 x retry)
FAST = {"lease_duration": 1.0, "renew_deadline": 0.6, "retry_period": 0.1}


@dataclass
class Candidate:
    """One elector running in a task, and what it saw."""

    elector: LeaderElector
    started: int = 0
    stopped: int = 0
    task: asyncio.Task[None] | None = None
    metrics: Metrics = field(default_factory=Metrics)

    def run(self) -> Candidate:
        self.task = asyncio.ensure_future(self.elector.run())
        return self

    async def stop(self) -> None:
        self.elector.stop()
        if self.task is not None:
            await asyncio.wait_for(self.task, 10)

    def crash(self) -> None:
        """Gone without a word: no release, no further renewals (a SIGKILLed process)."""
        assert self.task is not None
        self.task.cancel()


def candidate(client: Client, namespace: str, identity: str, **timing: float) -> Candidate:
    metrics = Metrics()
    found = Candidate(elector=None, metrics=metrics)  # type: ignore[arg-type]

    async def started() -> None:
        found.started += 1

    def stopped() -> None:
        found.stopped += 1

    config = LeaderElectionConfig(name="test-election", namespace=namespace, identity=identity, **{**FAST, **timing})
    found.elector = LeaderElector(
        client, config, on_started_leading=started, on_stopped_leading=stopped, metrics=metrics
    )
    return found


@pytest.fixture
async def namespace(backend: Client) -> str:
    created = await backend.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "lease-"}})
    return str(created["metadata"]["name"])


@pytest.fixture
async def cleanup() -> AsyncIterator[list[Candidate]]:
    candidates: list[Candidate] = []
    yield candidates
    for one in candidates:
        if one.task is not None and not one.task.done():
            one.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await one.task


async def lease(client: Client, namespace: str) -> dict:
    return await client.get(LEASE_API_VERSION, "Lease", "test-election", namespace=namespace)


def leader_metric(one: Candidate) -> float:
    for line in one.metrics.exposition().decode().splitlines():
        if line.startswith('leader_election_master_status{name="test-election"}'):
            return float(line.split()[-1])
    raise AssertionError("leader_election_master_status is missing")


async def test_exactly_one_of_two_leads_and_the_lease_says_who(
    backend: Client, namespace: str, cleanup: list[Candidate]
) -> None:
    a = candidate(backend, namespace, "a").run()
    b = candidate(backend, namespace, "b").run()
    cleanup += [a, b]

    async def someone_leads() -> bool:
        return a.elector.is_leader or b.elector.is_leader

    await eventually(someone_leads, what="a leader")
    await asyncio.sleep(1.5)  # longer than the lease: the standby must still not take it over
    assert [a.elector.is_leader, b.elector.is_leader].count(True) == 1
    leader, standby = (a, b) if a.elector.is_leader else (b, a)
    assert (leader.started, standby.started) == (1, 0)
    spec = (await lease(backend, namespace))["spec"]
    assert spec["holderIdentity"] == ("a" if leader is a else "b")
    assert spec["leaseDurationSeconds"] == 1 and spec["leaseTransitions"] == 0
    assert MICRO_TIME.match(spec["acquireTime"]) and MICRO_TIME.match(spec["renewTime"])
    assert spec["renewTime"] > spec["acquireTime"]  # renewed since it was acquired
    assert (leader_metric(leader), leader_metric(standby)) == (1, 0)


async def test_a_graceful_stop_releases_the_lease_and_the_standby_takes_over_at_once(
    backend: Client, namespace: str, cleanup: list[Candidate]
) -> None:
    first = candidate(backend, namespace, "first", lease_duration=30, renew_deadline=20, retry_period=0.1).run()
    cleanup.append(first)

    async def first_leads() -> bool:
        return first.elector.is_leader

    await eventually(first_leads, what="the first candidate to lead")
    second = candidate(backend, namespace, "second", lease_duration=30, renew_deadline=20, retry_period=0.1).run()
    cleanup.append(second)
    await first.stop()
    assert first.stopped == 1 and leader_metric(first) == 0

    async def second_leads() -> bool:
        return second.elector.is_leader

    # a released lease is free at once, far sooner than its 30 s duration
    async with asyncio.timeout(5):
        await eventually(second_leads, what="the standby to take the released lease")
    spec = (await lease(backend, namespace))["spec"]
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("second", 1)


async def test_a_crashed_leader_is_replaced_once_its_lease_expires(
    backend: Client, namespace: str, cleanup: list[Candidate]
) -> None:
    old = candidate(backend, namespace, "old").run()
    cleanup.append(old)

    async def old_leads() -> bool:
        return old.elector.is_leader

    await eventually(old_leads, what="the first leader")
    new = candidate(backend, namespace, "new").run()
    cleanup.append(new)
    await asyncio.sleep(0.3)
    assert not new.elector.is_leader
    old.crash()
    loop = asyncio.get_running_loop()
    crashed_at = loop.time()

    async def new_leads() -> bool:
        return new.elector.is_leader

    await eventually(new_leads, what="the standby to take the expired lease")
    waited = loop.time() - crashed_at
    assert waited >= 0.5, f"took the lease after {waited:.2f}s, before it could have expired"
    spec = (await lease(backend, namespace))["spec"]
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("new", 1)


async def test_a_leader_that_cannot_renew_within_the_deadline_stops_leading(
    backend: Client, namespace: str, cleanup: list[Candidate]
) -> None:
    flaky = FailingClient(backend)
    one = candidate(flaky, namespace, "flaky").run()
    cleanup.append(one)

    async def leads() -> bool:
        return one.elector.is_leader

    await eventually(leads, what="the leader")
    flaky.fail = lambda verb, what: ApiError(make_status(503, "ServiceUnavailable", "the API server is away"))
    assert one.task is not None
    await asyncio.wait_for(one.task, 5)  # run() returns: leadership is lost
    assert not one.elector.is_leader and one.stopped == 1 and leader_metric(one) == 0
    flaky.fail = None
    spec = (await lease(backend, namespace))["spec"]
    assert spec["holderIdentity"] == "flaky"  # not released: it could not write, and nobody else took it yet


def test_timings_must_be_in_client_go_proportions() -> None:
    with pytest.raises(ValueError, match="greater than the renew deadline"):
        LeaderElectionConfig(name="x", namespace="y", identity="z", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError, match=r"1\.2 times the retry period"):
        LeaderElectionConfig(name="x", namespace="y", identity="z", renew_deadline=2, retry_period=2)
