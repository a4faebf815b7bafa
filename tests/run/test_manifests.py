"""The generated parts of config/ are what the code needs: roles recorded from its calls, webhooks from its routes."""

from __future__ import annotations

from pathlib import Path

import yaml

from clusterclass.run.manifests import generate

CONFIG = Path(__file__).resolve().parents[2] / "config"


async def test_the_generated_manifests_are_current() -> None:
    for path, text in (await generate()).items():
        committed = (CONFIG / path).read_text()
        assert committed == text, f"config/{path} is stale: python -m clusterclass.run.manifests --write"


def test_no_role_grants_a_wildcard_or_an_unusual_verb() -> None:
    for path in ("rbac/role.yaml", "rbac/providers_role.yaml", "rbac/leader_election_role.yaml", "sim/role.yaml"):
        role = yaml.safe_load((CONFIG / path).read_text())
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule[field], f"config/{path}: a wildcard in {field}"
            assert set(rule["verbs"]) <= {"get", "list", "watch", "create", "update", "patch", "delete"}
            assert "nonResourceURLs" not in rule
