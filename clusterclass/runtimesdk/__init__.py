"""The Runtime SDK: calling Runtime Extensions from the controllers, and writing them in Python.

- ``catalog``: the hooks of ``hooks.runtime.cluster.x-k8s.io/v1alpha1``, their kinds and paths;
- ``client``: the registry of handlers (from ExtensionConfigs) and the HTTPS calls with upstream's rules;
- ``extensionconfig``: the ExtensionConfig controller (discovery into ``status.handlers``);
- ``seams``: the Runtime SDK plugged into the topology and ClusterClass controllers (patches, variables, hooks);
- ``extension``, ``types``, ``testing``: the SDK for writing an extension in Python.

What an extension author imports is re-exported here.
"""

from clusterclass.runtimesdk.extension import Extension, ExtensionFailure
from clusterclass.runtimesdk.testing import ExtensionTester, decoded_patch
from clusterclass.runtimesdk.types import (
    VariableNotFound,
    json_patch_item,
    merge_patch_item,
    merged_variables,
    variable_value,
)

__all__ = [
    "Extension",
    "ExtensionFailure",
    "ExtensionTester",
    "VariableNotFound",
    "decoded_patch",
    "json_patch_item",
    "merge_patch_item",
    "merged_variables",
    "variable_value",
]
