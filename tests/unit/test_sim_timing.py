"""Step delays and injected failures of the simulated providers (clusterclass.sim.timing)."""

from __future__ import annotations

import pytest

from clusterclass.sim.timing import (
    ALWAYS,
    FAIL_ANNOTATION,
    NONE,
    FailureRule,
    Step,
    Timing,
    TimingError,
    parse_delay,
    parse_failures,
    profile,
)


def test_the_wait_of_a_step_is_fixed_per_object_and_seed_and_within_the_jitter() -> None:
    timing = Timing(steps={"vm": Step(10.0, 0.5)}, seed=3)
    first = timing.wait("vm", "uid-a")
    assert 10.0 <= first < 15.0
    assert timing.wait("vm", "uid-a") == first, "drawn again (upstream's in-memory provider redraws; we do not)"
    assert Timing(steps={"vm": Step(10.0, 0.5)}, seed=3).wait("vm", "uid-a") == first, "not repeatable"
    others = {timing.wait("vm", f"uid-{i}") for i in range(20)}
    assert len(others) > 10, "every object waits the same"
    assert Timing(steps={"vm": Step(10.0, 0.5)}, seed=4).wait("vm", "uid-a") != first


def test_remaining_counts_down_from_the_first_time_a_step_is_asked_about() -> None:
    timing = Timing(steps={"node": Step(2.0)})
    assert timing.remaining("node", "u", now=100.0) == 2.0
    assert timing.remaining("node", "u", now=101.5) == 0.5
    assert timing.remaining("node", "u", now=103.0) == 0.0
    timing.done("node", "u")
    assert timing.remaining("node", "u", now=200.0) == 2.0, "a finished step's clock was kept"


def test_no_delays_means_every_step_is_instant() -> None:
    assert all(NONE.remaining(step, "u") == 0.0 for step in ("loadBalancer", "vm", "node", "apiServer"))


def test_a_rule_fails_a_step_its_number_of_times_then_lets_it_succeed() -> None:
    timing = Timing(failures=(FailureRule("vm", 2),))
    assert [timing.fails("vm", "u", "m") for _ in range(4)] == [True, True, False, False]
    assert timing.fails("node", "u", "m") is False
    assert timing.fails("vm", "other", "m") is True, "counted across objects"


def test_an_annotation_on_the_object_or_its_cluster_adds_failures() -> None:
    timing = Timing()
    cluster = {FAIL_ANNOTATION: "loadBalancer:always,vm:1"}
    assert all(timing.fails("loadBalancer", "u", "x", [{}, cluster]) for _ in range(5))
    assert timing.fails("vm", "u", "x", [{}, cluster]) is True
    assert timing.fails("vm", "u", "x", [{}, cluster]) is False


def test_a_rule_can_name_the_objects_it_applies_to() -> None:
    timing = Timing(failures=(FailureRule("vm", ALWAYS, name="^demo-md-"),))
    assert timing.fails("vm", "a", "demo-md-0-x") is True
    assert timing.fails("vm", "b", "demo-mp-0-x") is False


def test_profiles_and_overrides() -> None:
    timing = profile("fast", seed=2, delays=["vm=5~0.2"], failures=["node:3"])
    assert timing.steps["vm"] == Step(5.0, 0.2)
    assert timing.steps["node"] == profile("fast").steps["node"]
    assert timing.failures == (FailureRule("node", 3),)
    assert timing.requeue(20) == pytest.approx(2.0)
    assert profile("none").steps == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reboot", "unknown step 'reboot'"),
        ("vm:twice", "must be a number or 'always'"),
        ("vm:-1", "must not be negative"),
    ],
)
def test_bad_failures_are_refused(text: str, message: str) -> None:
    with pytest.raises(TimingError, match=message):
        parse_failures(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("vm", "expected STEP=SECONDS"),
        ("disk=3", "expected STEP=SECONDS"),
        ("vm=x", "must be numbers"),
        ("vm=-1", "not be negative"),
    ],
)
def test_bad_delays_are_refused(text: str, message: str) -> None:
    with pytest.raises(TimingError, match=message):
        parse_delay(text)


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(TimingError, match="unknown delay profile 'slow'"):
        profile("slow")
