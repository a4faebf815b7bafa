"""Calling extensions over HTTPS with upstream's rules (spec §8.1): discovery, named calls, call-all, failure policy."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sdk_support import Served, discovered, served

from clusterclass.api.objects import Obj
from clusterclass.runtimesdk import Extension, ExtensionFailure
from clusterclass.runtimesdk.client import ExtensionError, Registry, RuntimeClient
from clusterclass.webhooks.certificates import serving_certificate


def make_extension() -> Extension:
    extension = Extension("test")
    seen: list[Obj] = []
    extension.seen = seen  # type: ignore[attr-defined]

    @extension.generate_patches("generate")
    def generate(request: Obj) -> Obj:
        seen.append(request)
        return {"items": []}

    @extension.validate_topology("refuse")
    def refuse(request: Obj) -> Obj:
        raise ExtensionFailure("the topology is not acceptable")

    @extension.before_cluster_upgrade("hold", timeout_seconds=2)
    async def hold(request: Obj) -> Obj:
        seen.append(request)
        return {"retryAfterSeconds": 30, "message": "held"}

    @extension.before_cluster_upgrade("short", failure_policy="Ignore")
    async def short(request: Obj) -> Obj:
        return {"retryAfterSeconds": 5, "message": "short"}

    @extension.before_cluster_create("slow", timeout_seconds=1, failure_policy="Ignore")
    async def slow(request: Obj) -> Obj:
        await asyncio.sleep(3)
        return {}

    @extension.after_cluster_upgrade("slow-fail", timeout_seconds=1)
    async def slow_fail(request: Obj) -> Obj:
        await asyncio.sleep(3)
        return {}

    return extension


async def registered(server: Served, **spec: Any) -> tuple[RuntimeClient, Obj]:
    config = server.extension_config("ext", **spec)
    handlers = await RuntimeClient(Registry(lambda: [])).discover(config)
    config = discovered(config, handlers)
    return RuntimeClient(Registry(lambda: [config]), namespace_labels=namespace_labels), config


async def namespace_labels(namespace: str) -> dict[str, str] | None:
    return {"team": namespace.removeprefix("team-")} if namespace.startswith("team-") else {}


async def test_discovery_names_handlers_after_the_extension_config_and_fills_defaults(tmp_path: Path) -> None:
    async with served(make_extension(), tmp_path) as server:
        handlers = await RuntimeClient(Registry(lambda: [])).discover(server.extension_config("ext"))
    by_name = {h["name"]: h for h in handlers}
    assert by_name["generate.ext"] == {
        "name": "generate.ext",
        "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": "GeneratePatches"},
        "timeoutSeconds": 10,
        "failurePolicy": "Fail",
    }
    assert (by_name["hold.ext"]["timeoutSeconds"], by_name["short.ext"]["failurePolicy"]) == (2, "Ignore")


async def test_a_named_call_sends_the_request_with_its_kind_and_merged_settings(tmp_path: Path) -> None:
    extension = make_extension()
    async with served(extension, tmp_path) as server:
        client, _ = await registered(server, settings={"a": "config", "b": "config"})
        try:
            answer = await client.call_extension(
                "GeneratePatches", "generate.ext", {"items": [], "variables": []}, settings={"b": "patch"}
            )
        finally:
            await client.close()
    assert answer == {
        "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
        "kind": "GeneratePatchesResponse",
        "status": "Success",
        "message": "",
        "items": [],
    }
    (request,) = extension.seen  # type: ignore[attr-defined]
    assert request["kind"] == "GeneratePatchesRequest"
    assert request["settings"] == {"a": "config", "b": "patch"}  # the patch's settings win


async def test_a_failure_answer_fails_the_call_whatever_the_policy(tmp_path: Path) -> None:
    async with served(make_extension(), tmp_path) as server:
        client, _ = await registered(server)
        try:
            with pytest.raises(ExtensionError) as caught:
                await client.call_extension("ValidateTopology", "refuse.ext", {"items": [], "variables": []})
            with pytest.raises(ExtensionError, match="handler is not registered"):
                await client.call_extension("GeneratePatches", "missing.ext", {})
            with pytest.raises(ExtensionError, match="it is a GeneratePatches handler, not ValidateTopology"):
                await client.call_extension("ValidateTopology", "generate.ext", {})
        finally:
            await client.close()
    assert str(caught.value) == (
        'failed to call extension handler "refuse.ext": got failure response with message '
        "'the topology is not acceptable'"
    )


async def test_call_all_aggregates_the_lowest_retry_and_every_message(tmp_path: Path) -> None:
    async with served(make_extension(), tmp_path) as server:
        client, _ = await registered(server)
        try:
            answer = await client.call_all("BeforeClusterUpgrade", {"cluster": {}}, namespace="default")
            nobody = await client.call_all("AfterControlPlaneInitialized", {"cluster": {}}, namespace="default")
        finally:
            await client.close()
    assert (answer["status"], answer["retryAfterSeconds"], answer["message"]) == ("Success", 5, "held, short")
    assert nobody == {
        "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
        "kind": "AfterControlPlaneInitializedResponse",
        "status": "Success",
        "message": "",
    }


async def test_a_timeout_is_ignored_with_policy_ignore_and_fails_with_fail(tmp_path: Path) -> None:
    async with served(make_extension(), tmp_path) as server:
        client, _ = await registered(server)
        try:
            ignored = await client.call_all("BeforeClusterCreate", {"cluster": {}}, namespace="default")
            with pytest.raises(ExtensionError, match=r'failed to call extension handler "slow-fail.ext": .*Timeout'):
                await client.call_all("AfterClusterUpgrade", {"cluster": {}}, namespace="default")
        finally:
            await client.close()
    assert (ignored["status"], ignored["retryAfterSeconds"]) == ("Success", 0)


async def test_an_extension_that_is_down_is_ignored_or_fails_by_policy(tmp_path: Path) -> None:
    async with served(make_extension(), tmp_path) as server:
        client, _ = await registered(server)
    # the server is gone now; the registry still lists its handlers
    try:
        answer = await client.call_all("BeforeClusterCreate", {"cluster": {}}, namespace="default")
        assert answer["status"] == "Success"
        with pytest.raises(ExtensionError, match=r'failed to call extension handler "hold.ext": .*Connect'):
            await client.call_all("BeforeClusterUpgrade", {"cluster": {}}, namespace="default")
    finally:
        await client.close()


async def test_an_untrusted_certificate_is_a_failure(tmp_path: Path) -> None:
    async with served(make_extension(), tmp_path) as server:
        config = server.extension_config("ext")
        config["spec"]["clientConfig"]["caBundle"] = serving_certificate(["127.0.0.1"]).ca_bundle
        with pytest.raises(ExtensionError, match="discovery"):
            await RuntimeClient(Registry(lambda: [])).discover(config)


async def test_namespace_selectors_refuse_a_named_call_and_skip_in_call_all(tmp_path: Path) -> None:
    selector = {"matchLabels": {"team": "a"}}
    async with served(make_extension(), tmp_path) as server:
        client, _ = await registered(server, namespaceSelector=selector)
        try:
            with pytest.raises(ExtensionError, match="does not select namespace 'team-b'"):
                await client.call_extension("GeneratePatches", "generate.ext", {}, namespace="team-b")
            selected = await client.call_extension("GeneratePatches", "generate.ext", {}, namespace="team-a")
            skipped = await client.call_all("BeforeClusterUpgrade", {"cluster": {}}, namespace="team-b")
        finally:
            await client.close()
    assert selected["status"] == "Success"
    assert skipped["retryAfterSeconds"] == 0  # no handler selected: nothing holds
