"""The work queue's rules (clusterclass/kube/workqueue.py), driven by a fake clock: no test sleeps."""

from __future__ import annotations

import asyncio

import pytest

from clusterclass.kube.workqueue import (
    ExponentialBackoff,
    FakeClock,
    MaxOf,
    ShutDown,
    TokenBucket,
    WorkQueue,
    default_rate_limiter,
    run_workers,
)


def make_queue(clock: FakeClock | None = None) -> WorkQueue[str]:
    clock = clock or FakeClock()
    return WorkQueue(name="test", clock=clock, rate_limiter=default_rate_limiter(clock=clock))


async def settle() -> None:
    """Let every runnable task run until it waits again."""
    for _ in range(10):
        await asyncio.sleep(0)


# -- de-duplication and one reconcile per key ------------------------------------------------------


async def test_a_key_added_while_queued_is_queued_once() -> None:
    queue = make_queue()
    for key in ("a", "b", "a", "a", "c", "b"):
        queue.add(key)
    assert queue.queued() == ["a", "b", "c"]
    assert len(queue) == 3


async def test_a_key_added_while_processing_is_queued_again_at_done_not_before() -> None:
    queue = make_queue()
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0, "a key being reconciled is not handed to a second worker"
    assert queue.get_nowait() is None
    queue.done("a")
    assert queue.queued() == ["a"]
    assert await queue.get() == "a"
    queue.done("a")
    assert len(queue) == 0


async def test_done_without_a_new_add_does_not_requeue() -> None:
    queue = make_queue()
    queue.add("a")
    await queue.get()
    queue.done("a")
    assert len(queue) == 0 and queue.processing == frozenset()


async def test_keys_come_out_in_the_order_they_were_first_added() -> None:
    queue = make_queue()
    for key in ("c", "a", "b"):
        queue.add(key)
    assert [await queue.get() for _ in range(3)] == ["c", "a", "b"]


async def test_a_waiting_get_is_woken_by_add() -> None:
    queue = make_queue()
    getter = asyncio.ensure_future(queue.get())
    await settle()
    assert not getter.done()
    queue.add("x")
    assert await getter == "x"


async def test_a_cancelled_getter_passes_its_wake_up_on() -> None:
    queue = make_queue()
    first = asyncio.ensure_future(queue.get())
    second = asyncio.ensure_future(queue.get())
    await settle()
    queue.add("x")
    first.cancel()
    assert await second == "x"
    assert first.cancelled()


# -- add_after -------------------------------------------------------------------------------------


async def test_add_after_queues_the_key_when_the_delay_has_passed() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add_after("a", 30)
    assert len(queue) == 0 and queue.waiting == 1
    clock.advance(29.999)
    assert len(queue) == 0
    clock.advance(0.001)
    assert queue.queued() == ["a"] and queue.waiting == 0


async def test_add_after_keeps_the_earliest_due_time_of_a_key() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add_after("a", 10)
    queue.add_after("a", 60)  # later: ignored
    queue.add_after("a", 5)  # earlier: replaces
    assert queue.waiting == 1
    clock.advance(5)
    assert queue.queued() == ["a"]
    clock.advance(100)
    assert queue.queued() == ["a"], "the replaced timers never fire"


async def test_add_after_with_no_delay_adds_at_once() -> None:
    queue = make_queue()
    queue.add_after("a", 0)
    queue.add_after("b", -1)
    assert queue.queued() == ["a", "b"]


async def test_a_delayed_key_already_queued_is_not_queued_twice() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add("a")
    queue.add_after("a", 1)
    clock.advance(1)
    assert queue.queued() == ["a"]


# -- rate limiting ---------------------------------------------------------------------------------


def test_exponential_backoff_doubles_from_5ms_to_1000s_per_key_and_forget_resets() -> None:
    backoff: ExponentialBackoff[str] = ExponentialBackoff()
    delays = [backoff.when("a") for _ in range(20)]
    assert delays[:4] == [0.005, 0.01, 0.02, 0.04]
    assert delays[-1] == 1000.0 and max(delays) == 1000.0
    assert backoff.num_requeues("a") == 20
    assert backoff.when("b") == 0.005, "keys back off independently"
    backoff.forget("a")
    assert backoff.num_requeues("a") == 0
    assert backoff.when("a") == 0.005


def test_exponential_backoff_survives_very_many_failures() -> None:
    backoff: ExponentialBackoff[str] = ExponentialBackoff(0.001, 10)
    for _ in range(2000):
        delay = backoff.when("a")
    assert delay == 10


def test_token_bucket_allows_a_burst_then_spreads_requeues_at_qps() -> None:
    clock = FakeClock()
    bucket: TokenBucket[str] = TokenBucket(qps=10, burst=3, clock=clock)
    assert [bucket.when(k) for k in "abc"] == [0, 0, 0]
    assert bucket.when("d") == pytest.approx(0.1)
    assert bucket.when("e") == pytest.approx(0.2), "each reservation waits behind the previous ones"
    clock.advance(10)
    assert [bucket.when(k) for k in "fgh"] == [0, 0, 0], "tokens refill up to the burst"
    assert bucket.when("i") == pytest.approx(0.1)


def test_the_default_limiter_is_the_larger_of_backoff_and_bucket() -> None:
    clock = FakeClock()
    limiter: MaxOf[str] = default_rate_limiter(clock=clock, qps=1, burst=2)
    assert limiter.when("a") == 0.005
    assert limiter.when("a") == 0.01
    assert limiter.when("b") == pytest.approx(1.0), "the bucket is empty: it dominates"
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


async def test_add_rate_limited_delays_by_backoff_and_forget_resets_it() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add_rate_limited("a")
    assert len(queue) == 0
    clock.advance(0.005)
    assert await queue.get() == "a"
    queue.done("a")
    queue.add_rate_limited("a")
    clock.advance(0.005)
    assert len(queue) == 0, "the second failure waits twice as long"
    clock.advance(0.005)
    assert queue.queued() == ["a"]
    assert queue.num_requeues("a") == 2
    queue.forget("a")
    assert queue.num_requeues("a") == 0


def test_rate_limiter_arguments_are_checked() -> None:
    with pytest.raises(ValueError):
        ExponentialBackoff(0, 1)
    with pytest.raises(ValueError):
        TokenBucket(qps=0, clock=FakeClock())
    with pytest.raises(ValueError):
        MaxOf()


# -- shutdown --------------------------------------------------------------------------------------


async def test_shutdown_hands_out_what_is_queued_then_raises_and_ignores_adds() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    queue.add("a")
    queue.add_after("later", 5)
    queue.shutdown()
    queue.add("b")
    assert queue.queued() == ["a"], "adds after shutdown are ignored"
    assert await queue.get() == "a"
    with pytest.raises(ShutDown):
        await queue.get()
    clock.advance(10)
    assert len(queue) == 0, "delayed keys are dropped at shutdown"
    assert clock.pending == 0


async def test_shutdown_wakes_waiting_getters() -> None:
    queue = make_queue()
    getter = asyncio.ensure_future(queue.get())
    await settle()
    queue.shutdown()
    with pytest.raises(ShutDown):
        await getter


async def test_shutdown_with_drain_waits_for_queued_and_in_flight_keys() -> None:
    queue = make_queue()
    queue.add("a")
    queue.add("b")
    key = await queue.get()
    drained = asyncio.ensure_future(queue.shutdown_with_drain())
    await settle()
    assert not drained.done()
    queue.done(key)
    await settle()
    assert not drained.done(), "b is still queued"
    other = await queue.get()
    await settle()
    assert not drained.done(), "b is in flight"
    queue.done(other)
    await drained


# -- workers ---------------------------------------------------------------------------------------


async def test_workers_reconcile_each_key_once_at_a_time_and_stop_at_shutdown() -> None:
    queue = make_queue()
    in_flight: set[str] = set()
    seen: list[str] = []
    release = asyncio.Event()

    async def reconcile(key: str) -> float | None:
        assert key not in in_flight, "two reconciles of one key at once"
        in_flight.add(key)
        seen.append(key)
        await release.wait()
        in_flight.discard(key)
        return None

    workers = asyncio.ensure_future(run_workers(queue, reconcile, 3))
    for key in ("a", "b", "a"):
        queue.add(key)
    await settle()
    assert sorted(seen) == ["a", "b"]
    queue.add("a")  # while a is in flight: one more reconcile after it
    queue.add("a")
    release.set()
    await settle()
    assert sorted(seen) == ["a", "a", "b"]
    queue.shutdown()
    await workers


async def test_a_failing_reconcile_is_requeued_with_backoff_and_success_forgets() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    calls: list[str] = []

    async def reconcile(key: str) -> float | None:
        calls.append(key)
        if len(calls) < 3:
            raise RuntimeError("not yet")
        return None

    workers = asyncio.ensure_future(run_workers(queue, reconcile, 1))
    queue.add("a")
    await settle()
    assert calls == ["a"] and queue.waiting == 1
    clock.advance(0.005)
    await settle()
    assert calls == ["a", "a"]
    clock.advance(0.005)
    await settle()
    assert calls == ["a", "a"], "the second retry waits 10 ms"
    clock.advance(0.005)
    await settle()
    assert calls == ["a", "a", "a"]
    assert queue.num_requeues("a") == 0, "success forgets the backoff"
    assert queue.waiting == 0
    queue.shutdown()
    await workers


async def test_a_requeue_after_result_schedules_the_key_again() -> None:
    clock = FakeClock()
    queue = make_queue(clock)
    calls: list[str] = []

    async def reconcile(key: str) -> float | None:
        calls.append(key)
        return 30.0 if len(calls) == 1 else None

    workers = asyncio.ensure_future(run_workers(queue, reconcile, 2))
    queue.add("a")
    await settle()
    assert calls == ["a"] and queue.waiting == 1
    clock.advance(30)
    await settle()
    assert calls == ["a", "a"] and queue.waiting == 0
    queue.shutdown()
    await workers


async def test_cancelling_the_workers_releases_the_key_in_flight() -> None:
    queue = make_queue()
    started = asyncio.Event()

    async def reconcile(key: str) -> float | None:
        started.set()
        await asyncio.Event().wait()
        return None

    workers = asyncio.ensure_future(run_workers(queue, reconcile, 1))
    queue.add("a")
    await started.wait()
    assert queue.processing == {"a"}
    workers.cancel()
    with pytest.raises(asyncio.CancelledError):
        await workers
    assert queue.processing == frozenset()


async def test_run_workers_needs_a_worker() -> None:
    async def reconcile(key: str) -> float | None:
        return None

    with pytest.raises(ValueError):
        await run_workers(make_queue(), reconcile, 0)
