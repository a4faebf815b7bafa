"""How long each simulated provisioning step takes, and which steps fail: seeded, so runs repeat.

A real provider takes time: a load balancer comes up, a machine boots and runs its bootstrap data, a
kubelet joins and turns Ready, static Pods start. The simulated providers wait for each such *step*
as long as :class:`Timing` says, then move on, exactly as upstream's in-memory provider does with its
``startupDuration`` and ``startupJitter`` knobs; with :data:`NONE` every step is instant, which is
what the tests use.

The wait of one step for one object is ``duration * (1 + jitter * u)`` with ``u`` in [0, 1) drawn
from a hash of (seed, object uid, step): fixed for that object (unlike upstream's in-memory provider,
which draws again on every reconcile), different between objects, and the same in the next run with
the same seed. A step's clock starts the first time a controller finds the object ready for it
(:meth:`Timing.remaining`); that start is kept in memory, so after a restart a step in progress
starts over, while every step already done is in the objects' status and is not repeated.

Failures (:class:`FailureRule`) make a step fail a number of times (or always) for the objects they
match, to show and test how the providers report and retry: from the options (``--fail vm=2``) or
from the annotation :data:`FAIL_ANNOTATION` on the object or its Cluster (``vm``, ``vm:2``,
``loadBalancer:always,node``).

Upstream's controllers also poll at fixed periods (the Cluster controller every 5 s while
descendants remain, KCP every 20 s while not ready...). The simulated ones are woken by watches
instead, and keep those polls as a safety net, scaled by :attr:`Timing.requeue_scale`.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from clusterclass.errors import ClusterClassError

#: the steps a simulated provider times, in the order a machine goes through them
STEPS: tuple[str, ...] = ("loadBalancer", "bootstrapData", "vm", "node", "apiServer", "etcd")
STEP_HELP: dict[str, str] = {
    "loadBalancer": "a DockerCluster's load balancer (the control-plane endpoint) comes up",
    "bootstrapData": "a KubeadmConfig's bootstrap data Secret is generated",
    "vm": "a DockerMachine's container is created and runs its bootstrap data",
    "node": "a joined Node turns Ready",
    "apiServer": "a control-plane machine's kube-apiserver (and scheduler, controller manager) run",
    "etcd": "a control-plane machine's etcd member runs",
}

#: on an object or its Cluster: steps that fail (``vm``, ``vm:2``, ``node:always``), comma-separated
FAIL_ANNOTATION = "sim.clusterclass.dev/fail"
ALWAYS = -1


class TimingError(ClusterClassError):
    """A delay or failure setting that does not parse."""


@dataclass(frozen=True)
class Step:
    """How long one step takes: ``duration`` seconds, plus up to ``jitter`` times as much again."""

    duration: float = 0.0
    jitter: float = 0.0


@dataclass(frozen=True)
class FailureRule:
    """``step`` fails ``times`` times (:data:`ALWAYS`: every time) for objects whose name matches ``name``."""

    step: str
    times: int = ALWAYS
    #: a regular expression matched against the object's name (None: every object)
    name: str | None = None


@dataclass
class Timing:
    """Step durations, their seed, the scale of upstream's polls, and injected failures (module doc)."""

    steps: Mapping[str, Step] = field(default_factory=dict)
    seed: int = 0
    #: upstream's fixed requeue periods are multiplied by this (the watches do the real waking)
    requeue_scale: float = 1.0
    failures: tuple[FailureRule, ...] = ()
    _started: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)
    _failed: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)

    def wait(self, step: str, uid: str) -> float:
        """The seconds ``step`` takes for the object ``uid``."""
        settings = self.steps.get(step)
        if settings is None or settings.duration <= 0:
            return 0.0
        digest = hashlib.blake2b(f"{self.seed}/{uid}/{step}".encode(), digest_size=8).digest()
        fraction = int.from_bytes(digest, "big") / 2**64
        return settings.duration * (1 + settings.jitter * fraction)

    def remaining(self, step: str, uid: str, *, now: float | None = None) -> float:
        """Seconds until ``step`` is done for ``uid``; its clock starts at the first call (module doc)."""
        wait = self.wait(step, uid)
        if wait <= 0:
            return 0.0
        moment = time.monotonic() if now is None else now
        started = self._started.setdefault((step, uid), moment)
        left = started + wait - moment
        if left <= 0:
            return 0.0
        return left

    def restart(self, step: str, uid: str) -> None:
        """Start ``step`` over for ``uid`` (after it failed)."""
        self._started.pop((step, uid), None)

    def done(self, step: str, uid: str) -> None:
        """Forget the clock of a finished step."""
        self._started.pop((step, uid), None)

    def fails(self, step: str, uid: str, name: str, annotations: Iterable[Mapping[str, str]] = ()) -> bool:
        """Whether this attempt of ``step`` fails for the object (``uid``, ``name``); counts the attempt.

        Rules come from the options and from :data:`FAIL_ANNOTATION` in ``annotations`` (the object's,
        then its Cluster's); the first rule for ``step`` that matches decides.
        """
        rules = [*self.failures]
        for found in annotations:
            value = found.get(FAIL_ANNOTATION)
            if value:
                try:
                    rules[:0] = parse_failures(value)
                except TimingError:
                    continue
        for rule in rules:
            if rule.step != step or (rule.name is not None and re.search(rule.name, name) is None):
                continue
            failed = self._failed.get((step, uid), 0)
            if rule.times != ALWAYS and failed >= rule.times:
                return False
            self._failed[(step, uid)] = failed + 1
            self.restart(step, uid)
            return True
        return False

    def requeue(self, seconds: float) -> float:
        """One of upstream's fixed requeue periods, scaled."""
        return seconds * self.requeue_scale

    def with_steps(self, **overrides: Step) -> Timing:
        return replace(self, steps={**self.steps, **overrides}, _started={}, _failed={})


def parse_failures(text: str) -> list[FailureRule]:
    """``vm``, ``vm:2``, ``node:always`` (comma-separated) as rules; a TimingError names a bad entry."""
    rules = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        step, _, count = entry.partition(":")
        step = step.strip()
        if step not in STEPS:
            raise TimingError(f"unknown step {step!r} in {text!r}: one of {', '.join(STEPS)}")
        if not count or count.strip() == "always":
            rules.append(FailureRule(step))
            continue
        try:
            times = int(count)
        except ValueError:
            raise TimingError(f"{entry!r}: the count after ':' must be a number or 'always'") from None
        if times < 0:
            raise TimingError(f"{entry!r}: the count must not be negative")
        rules.append(FailureRule(step, times))
    return rules


def parse_delay(text: str) -> tuple[str, Step]:
    """``vm=2.5`` or ``vm=2.5~0.2`` (duration in seconds, then jitter as a fraction) as a step setting."""
    step, sep, value = text.partition("=")
    step = step.strip()
    if not sep or step not in STEPS:
        raise TimingError(f"{text!r}: expected STEP=SECONDS[~JITTER] with STEP one of {', '.join(STEPS)}")
    seconds, _, jitter = value.partition("~")
    try:
        duration = float(seconds)
        spread = float(jitter) if jitter else 0.0
    except ValueError:
        raise TimingError(f"{text!r}: SECONDS and JITTER must be numbers") from None
    if duration < 0 or spread < 0:
        raise TimingError(f"{text!r}: SECONDS and JITTER must not be negative")
    return step, Step(duration, spread)


#: every step instant, upstream's polls at 1/50: for tests and benchmarks
NONE = Timing(requeue_scale=0.02)
#: a few seconds per machine, so a demo shows each stage
FAST = Timing(
    steps={
        "loadBalancer": Step(1.0, 0.5),
        "bootstrapData": Step(0.5, 0.5),
        "vm": Step(2.0, 0.5),
        "node": Step(1.0, 0.5),
        "apiServer": Step(1.0, 0.5),
        "etcd": Step(1.0, 0.5),
    },
    requeue_scale=0.1,
)
#: the durations of upstream's in-memory e2e ClusterClass (vm 30 s, node/apiServer/etcd 10 s, jitter 0.2)
IN_MEMORY = Timing(
    steps={
        "loadBalancer": Step(5.0, 0.2),
        "bootstrapData": Step(1.0, 0.2),
        "vm": Step(30.0, 0.2),
        "node": Step(10.0, 0.2),
        "apiServer": Step(10.0, 0.2),
        "etcd": Step(10.0, 0.2),
    },
    requeue_scale=1.0,
)
PROFILES: dict[str, Timing] = {"none": NONE, "fast": FAST, "in-memory": IN_MEMORY}


def profile(name: str, *, seed: int = 0, delays: Iterable[str] = (), failures: Iterable[str] = ()) -> Timing:
    """A fresh :class:`Timing` from a named profile, with ``STEP=SECONDS[~JITTER]`` overrides and failures."""
    base = PROFILES.get(name)
    if base is None:
        raise TimingError(f"unknown delay profile {name!r}: one of {', '.join(PROFILES)}")
    steps = dict(base.steps)
    for text in delays:
        step, setting = parse_delay(text)
        steps[step] = setting
    rules = tuple(rule for text in failures for rule in parse_failures(text))
    return Timing(steps=steps, seed=seed, requeue_scale=base.requeue_scale, failures=rules)
