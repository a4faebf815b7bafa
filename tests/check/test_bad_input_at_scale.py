"""Bad input at scale: over 10,000 generated documents through the admission webhooks and ``validate``.

Clusters, ClusterClasses and MachinePools in v1beta1 and v1beta2 — the bundled example's, with random parts replaced,
removed or added, and pure noise — go to the six webhooks as AdmissionReview bodies (create, and update of the
valid object), answered by the handlers the webhook server runs over a management cluster's caches, and to
``clusterclass validate``'s loader and rules as YAML. Whatever comes in: no exception escapes, no answer is an
internal error, and every refusal names the field it is about (a Kubernetes ``Invalid`` status whose every cause has
a field path, or — for an object that cannot be read at all — a ``BadRequest`` saying why).

The counts (``EXAMPLES``) add up to more than 10,000 documents per run; in CI (``CI`` set) the examples are a fixed,
derandomized set (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import copy
import io
import json
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
import yaml
from check_support import json_values, mutated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterclass.api.objects import Obj
from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.controllers.workload import StaticWorkloadClusters
from clusterclass.errors import ClusterClassError
from clusterclass.plan.loader import load
from clusterclass.up.example import example_objects
from clusterclass.validate.runner import validate_objects
from clusterclass.webhooks import WEBHOOKS, AdmissionHandlers
from clusterclass.webhooks.review import parse_review, review_answer

#: examples per test; each example is one document (two reviews: create, and update of the valid base)
EXAMPLES = {"Cluster": 4000, "ClusterClass": 3000, "MachinePool": 1500, "validate": 2000}
VERSIONS = ("v1beta1", "v1beta2")


def base_objects(version: str) -> dict[str, Obj]:
    objects = {o["kind"]: o for o in example_objects(version)}
    pool: Obj = {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": "MachinePool",
        "metadata": {"name": "pool", "namespace": "default"},
        "spec": {
            "clusterName": "demo",
            "replicas": 2,
            "template": {
                "spec": {
                    "clusterName": "demo",
                    "version": "v1.28.0",
                    "bootstrap": {"dataSecretName": "data"},
                    "infrastructureRef": (
                        {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachinePool"}
                        if version == "v1beta1"
                        else {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachinePool"}
                    )
                    | {"name": "pool"},
                }
            },
        },
    }
    objects["MachinePool"] = pool
    return objects


BASES = {version: base_objects(version) for version in VERSIONS}
#: the example's ClusterClass and templates: what the rules look at
WORLD = {version: [o for o in example_objects(version) if o["kind"] != "Cluster"] for version in VERSIONS}


class Webhooks:
    """The webhook handlers over a management cluster that has the example ClusterClass, running on an event loop
    in a thread of their own, so hypothesis's synchronous tests can send them reviews."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.reviews = 0
        #: answers by code (200 allowed), to show the documents reach the rules and get refused
        self.codes: Counter[int] = Counter()
        self.call(self._start())

    def call(self, coroutine: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result(timeout=60)

    async def _start(self) -> None:
        self.store = MemoryStore()
        self.client = MemoryClient(self.store)
        self.controllers = Controllers(
            self.client, ControllerOptions(sync_period=None, topology_workers=2), workload=StaticWorkloadClusters()
        )
        await self.controllers.start()
        for obj in WORLD["v1beta2"]:  # the v1beta1 example names the same objects
            await self.client.apply(obj, field_manager="test", force=True)
        handlers = AdmissionHandlers(self.controllers.manager, workload=self.controllers.workload)
        self.handlers = {(w.name, w.kind): handlers.handler(w) for w in WEBHOOKS}
        deadline = asyncio.get_running_loop().time() + 30
        while asyncio.get_running_loop().time() < deadline:  # the class reconciled: webhooks judge against it
            found = await self.client.get("cluster.x-k8s.io/v1beta2", "ClusterClass", "quick-start-pools",
                                          namespace="default")  # fmt: skip
            if (found.get("status") or {}).get("observedGeneration") == found["metadata"]["generation"]:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the example ClusterClass was not reconciled")

    def close(self) -> None:
        async def stop() -> None:
            await self.controllers.stop()
            await self.client.close()
            self.store.close()

        self.call(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)

    def review_all(self, doc: Any, kind: str, old: Obj | None) -> None:
        """``doc`` through every webhook of ``kind``, on create and (with ``old``) update; each answer checked."""
        for (name, webhook_kind), handler in self.handlers.items():
            if webhook_kind != kind:
                continue
            operations = [("CREATE", None)] + ([("UPDATE", old)] if old is not None else [])
            for operation, previous in operations:
                body = json.dumps(review_body(doc, kind, operation, previous)).encode()
                request = parse_review(body)
                response = self.call(handler(request))
                answer = review_answer(request, response)
                self.reviews += 1
                self.codes[int((answer["response"].get("status") or {}).get("code") or 200)] += 1
                check_answer(answer, name, doc)


def review_body(doc: Any, kind: str, operation: str, old: Obj | None) -> Obj:
    api_version = doc.get("apiVersion") if isinstance(doc, dict) else None
    version = str(api_version).rpartition("/")[2] if isinstance(api_version, str) else "v1beta2"
    metadata = doc.get("metadata") if isinstance(doc, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": "cluster.x-k8s.io", "version": version, "kind": kind},
            "resource": {"group": "cluster.x-k8s.io", "version": version, "resource": kind.lower() + "s"},
            "operation": operation,
            "name": name if isinstance(name, str) else "",
            "namespace": "default",
            "object": doc,
            "oldObject": old,
            "userInfo": {"username": "fuzzer"},
        },
    }


def check_answer(answer: Obj, webhook: str, doc: Any) -> None:
    response = answer["response"]
    assert response["uid"], answer
    if response["allowed"]:
        return
    status = response.get("status") or {}
    where = f"{webhook} on {json.dumps(doc)[:300]}"
    assert status.get("code") != 500, f"internal error from {where}: {status}"
    assert status.get("code") in (400, 403, 422), f"unexpected refusal from {where}: {status}"
    if status.get("code") == 422:
        causes = (status.get("details") or {}).get("causes") or []
        assert causes, f"an Invalid answer without causes from {where}: {status}"
        for cause in causes:
            assert cause.get("field"), f"a refusal without a field path from {where}: {cause}"
    else:
        assert status.get("message"), f"a refusal without a message from {where}: {status}"


@pytest.fixture(scope="module")
def webhooks() -> Iterator[Webhooks]:
    served = Webhooks()
    try:
        yield served
    finally:
        served.close()


def documents(kind: str, version: str) -> st.SearchStrategy[Any]:
    base = BASES[version][kind]
    noise = st.dictionaries(st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status"]), json_values)
    return mutated(base, max_mutations=6) | noise.map(lambda d: {**d, "kind": kind})


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", ["Cluster", "ClusterClass", "MachinePool"])
def test_the_webhooks_answer_every_generated_document_with_field_paths(
    webhooks: Webhooks, kind: str, version: str
) -> None:
    base = BASES[version][kind]
    start = webhooks.reviews

    @_settings(EXAMPLES[kind] // len(VERSIONS))
    @given(documents(kind, version))
    def judged(doc: Any) -> None:
        webhooks.review_all(doc, kind, copy.deepcopy(base))

    before = copy.copy(webhooks.codes)
    judged()
    assert webhooks.reviews - start >= EXAMPLES[kind] // len(VERSIONS)
    codes = webhooks.codes - before
    assert codes[200] and codes[422], f"the documents did not reach the rules both ways: {dict(codes)}"


@pytest.mark.parametrize("version", VERSIONS)
def test_validate_reads_and_judges_every_generated_document_with_field_paths(version: str) -> None:
    kinds = st.sampled_from(["Cluster", "ClusterClass", "MachinePool"])
    world = WORLD[version]

    @_settings(EXAMPLES["validate"] // len(VERSIONS))
    @given(kinds.flatmap(lambda kind: documents(kind, version)))
    def validated(doc: Any) -> None:
        text = yaml.safe_dump_all([*world, doc])
        try:
            checked = validate_objects(load(["-"], io.StringIO(text)))
        except ClusterClassError as err:  # what the CLI prints as "error: ..." (exit 1): input it cannot read
            assert str(err)
            return
        for item in checked:
            outcomes["invalid" if item.result.errors else "valid"] += 1
            for error in item.result.errors:
                assert error.field, f"{item.key}: an error without a field path: {error}"
                assert str(error)

    outcomes: Counter[str] = Counter()
    validated()
    assert outcomes["valid"] and outcomes["invalid"], dict(outcomes)
