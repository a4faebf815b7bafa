"""Server-side apply field ownership, held to what kube-apiserver 1.37.2 answered for the same requests.

Every expectation here was observed on a real kube-apiserver (etcd + kube-apiserver 1.37.2): the
``managedFields`` after each write, conflict messages and causes, and what an apply removes. Times are
the ``now`` each call is given; the real server's are its clock, truncated to seconds.

Two kinds are used: ConfigMap, whose types are :class:`ObjectMetaTypes` (granular maps, atomic
lists), and ``Widget``, a custom resource whose schema exercises every list and map type, read by
:class:`SchemaTypes` (a small openAPI reader with the field manager's path convention). The Widget
has a status subresource; ``Gadget`` is the same schema without one.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from clusterclass.apiserver.apply.fieldmanager import apply, record_update
from clusterclass.apiserver.apply.fieldtypes import ITEM, ListType, ObjectMetaTypes, Path
from clusterclass.kube.errors import ApiError, BadRequest, Conflict

T1 = "2026-12-02T20:55:01Z"
T2 = "2026-12-02T20:55:02Z"
T3 = "2026-12-02T20:55:03Z"
T4 = "2026-12-02T20:55:04Z"
T5 = "2026-12-02T20:55:05Z"

Obj = dict[str, Any]


# -- kinds ----------------------------------------------------------------------------------------


class SchemaTypes:
    """FieldTypes read from an openAPI v3 schema: concrete map keys, ITEM for list elements.

    A key that is not a declared property goes through ``additionalProperties``; under
    ``x-kubernetes-preserve-unknown-fields`` everything is untyped (granular maps, atomic lists).
    ``metadata`` has ObjectMeta's types, as kube-apiserver gives every custom resource.
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.meta = ObjectMetaTypes()

    def _resolve(self, path: Path) -> tuple[Mapping[str, Any] | None, bool]:
        node: Mapping[str, Any] | None = self.schema
        declared = True
        for step in path:
            if node is None:
                return None, False
            if step == ITEM:
                node, declared = node.get("items"), True
                continue
            properties = node.get("properties") or {}
            if step in properties:
                node, declared = properties[step], True
            elif isinstance(node.get("additionalProperties"), Mapping):
                node, declared = node["additionalProperties"], False
            else:
                node, declared = None, False
        return node, declared

    def list_type(self, path: Path) -> tuple[ListType, tuple[str, ...]]:
        if path[:1] == ("metadata",):
            return self.meta.list_type(path)
        node, _ = self._resolve(path)
        kind = (node or {}).get("x-kubernetes-list-type", "atomic")
        return kind, tuple((node or {}).get("x-kubernetes-list-map-keys", ()))

    def map_is_atomic(self, path: Path) -> bool:
        if path[:1] == ("metadata",):
            return self.meta.map_is_atomic(path)
        node, _ = self._resolve(path)
        return (node or {}).get("x-kubernetes-map-type") == "atomic"

    def is_declared(self, path: Path) -> bool:
        if path[:1] == ("metadata",):
            return len(path) <= 2 or path[1] not in ("labels", "annotations")
        return self._resolve(path)[1]

    def list_key_defaults(self, path: Path) -> Mapping[str, Any]:
        node, _ = self._resolve((*path, ITEM))
        properties = (node or {}).get("properties") or {}
        return {name: spec["default"] for name, spec in properties.items() if "default" in spec}


def _obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
WIDGET_SCHEMA = _obj(
    {
        "apiVersion": STRING,
        "kind": STRING,
        "metadata": {"type": "object"},
        "spec": _obj(
            {
                "replicas": INTEGER,
                "name": STRING,
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "name"],
                    "items": _obj(
                        {
                            "name": STRING,
                            "port": INTEGER | {"default": 7},
                            "value": STRING,
                            "sub": _obj({"a": STRING, "b": STRING}),
                        },
                        required=["name"],
                    ),
                },
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": STRING},
                "nums": {"type": "array", "x-kubernetes-list-type": "set", "items": INTEGER},
                "alist": {"type": "array", "items": STRING},
                "amap": _obj({"a": STRING, "b": STRING}, **{"x-kubernetes-map-type": "atomic"}),
                "free": {"type": "object", "additionalProperties": _obj({"a": STRING, "b": STRING})},
                "strs": {"type": "object", "additionalProperties": STRING},
                "blob": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "nested": _obj({"inner": _obj({"a": STRING, "b": STRING}), "c": STRING}),
                "empty": _obj({"a": STRING}),
            }
        ),
        "status": _obj(
            {
                "phase": STRING,
                "count": INTEGER,
                "conds": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["type"],
                    "items": _obj({"type": STRING, "status": STRING}),
                },
            }
        ),
    }
)
WIDGETS = SchemaTypes(WIDGET_SCHEMA)
META = ObjectMetaTypes()
WIDGET_API = "probe.example.com/v1"


def configmap(name: str = "c1", data: dict[str, str] | None = None, **meta: Any) -> Obj:
    obj: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns", **meta}}
    if data is not None:
        obj["data"] = data
    return obj


def widget(name: str = "w1", spec: Any = None, status: Any = None, kind: str = "Widget", **meta: Any) -> Obj:
    obj: Obj = {"apiVersion": WIDGET_API, "kind": kind, "metadata": {"name": name, "namespace": "ns", **meta}}
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


def stored(obj: Obj) -> Obj:
    """``obj`` as a store keeps it: with a uid (an object without one counts as being created)."""
    obj = copy.deepcopy(obj)
    obj["metadata"].setdefault("uid", "uid-" + obj["metadata"]["name"])
    return obj


def cm_apply(live: Obj | None, config: Obj, manager: str, now: str = T1, *, force: bool = False) -> Obj:
    result = apply(
        live,
        config,
        manager=manager,
        force=force,
        types=META,
        subresource=None,
        has_status_subresource=False,
        api_version="v1",
        now=now,
    )
    return stored(result)


def cm_update(old: Obj | None, new: Obj, manager: str, now: str = T1) -> Obj:
    """``new`` with the managedFields a create/update by ``manager`` gives it."""
    fields = record_update(
        old,
        new,
        manager=manager,
        types=META,
        subresource=None,
        has_status_subresource=False,
        api_version="v1",
        now=now,
    )
    result = stored(new)
    result["metadata"]["managedFields"] = fields
    if not fields:
        del result["metadata"]["managedFields"]
    return result


def w_apply(
    live: Obj | None,
    config: Obj,
    manager: str,
    now: str = T1,
    *,
    force: bool = False,
    subresource: str | None = None,
    status_subresource: bool = True,
) -> Obj:
    result = apply(
        live,
        config,
        manager=manager,
        force=force,
        types=WIDGETS,
        subresource=subresource,
        has_status_subresource=status_subresource,
        api_version=WIDGET_API,
        now=now,
    )
    return stored(result)


def w_update(old: Obj | None, new: Obj, manager: str, now: str = T1, *, subresource: str | None = None) -> Obj:
    fields = record_update(
        old,
        new,
        manager=manager,
        types=WIDGETS,
        subresource=subresource,
        has_status_subresource=True,
        api_version=WIDGET_API,
        now=now,
    )
    result = stored(new)
    result["metadata"]["managedFields"] = fields
    return result


def edited(obj: Obj, **changes: Any) -> Obj:
    """A client's read-modify-write: a deep copy of ``obj`` with ``changes`` applied to nested paths."""
    out = copy.deepcopy(obj)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = out
        for step in parents:
            node = node.setdefault(step, {})
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return out


DELETE: Any = object()


def entries(obj: Obj) -> list[tuple[str, str, str | None, Any]]:
    """(manager, operation, time, fieldsV1) of each entry, in order; subresource appended to the manager."""
    out = []
    for entry in obj["metadata"].get("managedFields") or []:
        who = entry["manager"] + (f"/{entry['subresource']}" if "subresource" in entry else "")
        out.append((who, entry["operation"], entry.get("time"), entry["fieldsV1"]))
    return out


def conflict_of(call: Any) -> ApiError:
    with pytest.raises(Conflict) as raised:
        call()
    return raised.value


# -- ConfigMap: apply, conflicts, shared ownership ---------------------------------------------------


def test_an_apply_that_creates_owns_exactly_the_configured_fields() -> None:
    obj = cm_apply(None, configmap(data={"x": "1", "y": "2"}, labels={"app": "a"}), "a")
    assert obj["metadata"]["managedFields"] == [
        {
            "manager": "a",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:x": {}, "f:y": {}}, "f:metadata": {"f:labels": {"f:app": {}}}},
        }
    ]
    assert obj["data"] == {"x": "1", "y": "2"}


def test_changing_a_field_another_applier_owns_conflicts_with_kubes_message_and_causes() -> None:
    live = cm_apply(None, configmap(data={"x": "1", "y": "2"}, labels={"app": "a"}), "a")

    one = conflict_of(lambda: cm_apply(live, configmap(data={"x": "9"}), "b"))
    assert one.code == 409 and one.reason == "Conflict"
    assert one.message == 'Apply failed with 1 conflict: conflict with "a": .data.x'
    assert one.details == {
        "causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "a"', "field": ".data.x"}]
    }

    three = conflict_of(lambda: cm_apply(live, configmap(data={"x": "9", "y": "8"}, labels={"app": "z"}), "b"))
    assert three.message == (
        'Apply failed with 3 conflicts: conflicts with "a":\n- .data.x\n- .data.y\n- .metadata.labels.app'
    )
    assert [c["field"] for c in three.details["causes"]] == [".data.x", ".data.y", ".metadata.labels.app"]


def test_applying_the_same_value_shares_ownership_and_a_no_op_apply_sets_no_time() -> None:
    live = cm_apply(None, configmap(data={"x": "1", "y": "2"}, labels={"app": "a"}), "a", T1)
    shared = cm_apply(live, configmap(data={"x": "1"}), "b", T2)
    # entries without a time sort before timed ones
    assert entries(shared) == [
        ("b", "Apply", None, {"f:data": {"f:x": {}}}),
        ("a", "Apply", T1, {"f:data": {"f:x": {}, "f:y": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}),
    ]
    assert {k: v for k, v in shared.items() if k != "metadata"} == {k: v for k, v in live.items() if k != "metadata"}


def test_an_update_takes_the_fields_it_changes_and_conflicts_name_update_managers_with_their_version() -> None:
    live = cm_apply(None, configmap(data={"x": "1", "y": "2"}, labels={"app": "a"}), "a", T1)
    live = cm_apply(live, configmap(data={"x": "1"}), "b", T2)
    updated = cm_update(live, edited(live, data__y="3", data__w="new"), "c", T3)
    assert entries(updated) == [
        ("b", "Apply", None, {"f:data": {"f:x": {}}}),
        ("a", "Apply", T1, {"f:data": {"f:x": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}),
        ("c", "Update", T3, {"f:data": {"f:w": {}, "f:y": {}}}),
    ]

    error = conflict_of(lambda: cm_apply(updated, configmap(data={"x": "7", "y": "7", "w": "7"}), "d"))
    assert error.message == (
        'Apply failed with 4 conflicts: conflicts with "a":\n- .data.x\nconflicts with "b":\n- .data.x\n'
        'conflicts with "c" using v1:\n- .data.w\n- .data.y'
    )
    # kube lists the causes of different managers in map order; here they follow the message
    assert [(c["message"], c["field"]) for c in error.details["causes"]] == [
        ('conflict with "a"', ".data.x"),
        ('conflict with "b"', ".data.x"),
        ('conflict with "c" using v1', ".data.w"),
        ('conflict with "c" using v1', ".data.y"),
    ]


def test_a_create_by_update_marks_the_maps_and_lists_it_created() -> None:
    created = cm_update(
        None,
        configmap(
            "c2", {"x": "1"}, labels={"a": "b"}, annotations={"q": "r"}, finalizers=["x.io/f"], generateName="g-"
        ),
        "e",
        T1,
    )
    assert entries(created) == [
        (
            "e",
            "Update",
            T1,
            {
                "f:data": {".": {}, "f:x": {}},
                "f:metadata": {
                    "f:annotations": {".": {}, "f:q": {}},
                    "f:finalizers": {".": {}, 'v:"x.io/f"': {}},
                    "f:generateName": {},
                    "f:labels": {".": {}, "f:a": {}},
                },
            },
        )
    ]


def test_an_apply_of_nothing_records_no_entry() -> None:
    obj = cm_apply(None, configmap("x"), "a")
    assert "managedFields" not in obj["metadata"]


# -- ConfigMap: what an apply removes ---------------------------------------------------------------


def test_fields_an_applier_drops_are_removed_unless_another_manager_owns_them() -> None:
    live = cm_apply(None, configmap("p", {"x": "1", "y": "2"}, labels={"l1": "a", "l2": "b"}), "a", T1)
    live = cm_apply(live, configmap("p", {"y": "2"}), "b", T2)
    dropped = cm_apply(live, configmap("p", {}), "a", T3)
    assert dropped["data"] == {"y": "2"}
    assert "labels" not in dropped["metadata"]
    # an applied empty map is owned as a whole
    assert entries(dropped) == [
        ("b", "Apply", None, {"f:data": {"f:y": {}}}),
        ("a", "Apply", T3, {"f:data": {}}),
    ]
    last = cm_apply(dropped, configmap("p"), "b", T4)
    # a map emptied by removal is null (kube's typed ConfigMap then omits it; a custom resource
    # whose schema does not allow null is refused with 422 by validation)
    assert last["data"] is None
    assert entries(last) == [("a", "Apply", T3, {"f:data": {}})]


# -- ConfigMap: updates --------------------------------------------------------------------------


def test_an_update_that_changes_nothing_or_only_removes_records_no_entry_for_its_manager() -> None:
    live = cm_apply(None, configmap("u", {"x": "1", "y": "2"}), "a", T1)
    same = cm_update(live, copy.deepcopy(live), "c", T2)
    assert entries(same) == entries(live)

    removed = cm_update(live, edited(live, data__y=DELETE), "c", T2)
    assert entries(removed) == [("a", "Apply", T1, {"f:data": {"f:x": {}}})]


def test_sending_one_empty_entry_stops_tracking_until_the_next_apply() -> None:
    live = cm_apply(None, configmap("u", {"x": "1"}), "a", T1)
    cleared = cm_update(live, edited(live, metadata__managedFields=[{}]), "c", T2)
    assert "managedFields" not in cleared["metadata"]
    untracked = cm_update(cleared, edited(cleared, data__z="3"), "c", T3)
    assert "managedFields" not in untracked["metadata"]


def test_sending_an_empty_list_keeps_ownership_as_for_custom_resources() -> None:
    # kube decodes a custom resource's empty managedFields as none sent (a typed built-in kind
    # would take it as a reset; the documented way is [{}])
    live = w_apply(None, widget("u", {"replicas": 1}), "a", T1)
    kept = w_update(live, edited(live, metadata__managedFields=[], spec__name="n"), "c", T2)
    assert entries(kept) == [
        ("a", "Apply", T1, {"f:spec": {"f:replicas": {}}}),
        ("c", "Update", T2, {"f:spec": {"f:name": {}}}),
    ]


def test_the_first_apply_to_an_untracked_object_conflicts_with_before_first_apply() -> None:
    live = cm_apply(None, configmap("u", {"x": "1"}), "a", T1)
    live = cm_update(live, edited(live, metadata__managedFields=[{}]), "c", T2)
    live = cm_update(live, edited(live, data__z="3"), "c", T2)

    error = conflict_of(lambda: cm_apply(live, configmap("u", {"x": "5", "q": "1"}), "a", T3))
    assert error.message == 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.x'

    forced = cm_apply(live, configmap("u", {"x": "5", "q": "1"}), "a", T3, force=True)
    assert entries(forced) == [
        ("a", "Apply", T3, {"f:data": {"f:q": {}, "f:x": {}}}),
        ("before-first-apply", "Update", T3, {"f:data": {".": {}, "f:z": {}}}),
    ]
    assert forced["data"] == {"x": "5", "z": "3", "q": "1"}


def test_a_client_may_replace_managed_fields_on_update() -> None:
    live = cm_apply(None, configmap("s", {"x": "1"}), "a", T1)
    mine = [
        {
            "manager": "zz",
            "operation": "Update",
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:x": {}}},
        }
    ]
    replaced = cm_update(live, edited(live, metadata__managedFields=mine), "c", T2)
    assert replaced["metadata"]["managedFields"] == mine


def test_managed_fields_the_server_cannot_read_are_ignored_in_favour_of_the_stored_ones() -> None:
    live = cm_apply(None, configmap("s", {"x": "1"}), "a", T1)
    bad = [{"manager": "zz", "operation": "Sideways", "apiVersion": "v1", "fieldsType": "FieldsV1"}]
    kept = cm_update(live, edited(live, metadata__managedFields=bad, data__y="2"), "c", T2)
    assert entries(kept) == [
        ("a", "Apply", T1, {"f:data": {"f:x": {}}}),
        ("c", "Update", T2, {"f:data": {"f:y": {}}}),
    ]


def test_an_update_entry_keeps_its_first_time_when_a_later_write_changes_nothing() -> None:
    live = cm_update(None, configmap("t", {"x": "1"}), "c", T1)
    again = cm_update(live, copy.deepcopy(live), "c", T2)
    assert entries(again) == [("c", "Update", T1, {"f:data": {".": {}, "f:x": {}}})]
    changed = cm_update(again, edited(again, data__y="2"), "c", T3)
    assert entries(changed) == [("c", "Update", T3, {"f:data": {".": {}, "f:x": {}, "f:y": {}}})]


def test_update_entries_are_kept_per_api_version() -> None:
    live = cm_update(None, configmap("t", {"x": "1"}), "c", T1)
    fields = record_update(
        live,
        edited(live, data__y="2"),
        manager="c",
        types=META,
        subresource=None,
        has_status_subresource=False,
        api_version="v2",
        now=T2,
    )
    assert [(e["manager"], e["apiVersion"], e["fieldsV1"]) for e in fields] == [
        ("c", "v1", {"f:data": {".": {}, "f:x": {}}}),
        ("c", "v2", {"f:data": {"f:y": {}}}),
    ]


# -- bad configurations --------------------------------------------------------------------------


def test_an_apply_configuration_may_not_carry_managed_fields_or_another_version() -> None:
    live = cm_apply(None, configmap("m", {"x": "1"}), "a")
    with pytest.raises(BadRequest, match=r"^metadata.managedFields must be nil$"):
        cm_apply(live, configmap("m", managedFields=[]), "a")
    with pytest.raises(BadRequest, match=r"^invalid object type: /v2, Kind=ConfigMap$"):
        cm_apply(live, {**configmap("m"), "apiVersion": "v2"}, "a")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"items": [{"name": "a", "port": 1}, {"name": "a", "port": 1}]},
            '.spec.items: duplicate entries for key [name="a",port=1]',
        ),
        ({"tags": ["a", "a"]}, '.spec.tags: duplicate entries for key [="a"]'),
    ],
    ids=["list-map", "set"],
)
def test_duplicate_list_keys_in_a_configuration_fail_as_kube_fails_them(spec: Obj, message: str) -> None:
    with pytest.raises(ApiError) as raised:
        w_apply(None, widget("e1", spec), "a")
    assert raised.value.code == 500
    assert raised.value.message == (
        f"failed to create typed patch object (ns/e1; probe.example.com/v1, Kind=Widget): {message}"
    )


# -- a custom resource: fieldsV1 of every list and map type ------------------------------------------

FULL_SPEC: Obj = {
    "replicas": 3,
    "items": [
        {"name": "b", "port": 443, "value": "x", "sub": {"a": "1"}},
        {"name": "a", "port": 80},
        {"name": "<&>", "port": 8080},
    ],
    "tags": ["z", "a"],
    "nums": [10, 9],
    "alist": ["q"],
    "amap": {"a": "1"},
    "free": {"k1": {"a": "1"}, "k2": {}},
    "strs": {"s": "t"},
    "blob": {"x": {"y": 1}, "l": [1, 2], "e": {}},
    "nested": {"inner": {"a": "1"}},
    "empty": {},
}
ELEMENT_ODD = 'k:{"name":"\\u003c\\u0026\\u003e","port":8080}'
ELEMENT_A = 'k:{"name":"a","port":80}'
ELEMENT_B = 'k:{"name":"b","port":443}'

APPLIED_FULL_SPEC = {
    "f:spec": {
        "f:alist": {},
        "f:amap": {},
        "f:blob": {"f:e": {}, "f:l": {}, "f:x": {".": {}, "f:y": {}}},
        "f:empty": {},
        "f:free": {"f:k1": {".": {}, "f:a": {}}, "f:k2": {}},
        "f:items": {
            ELEMENT_ODD: {".": {}, "f:name": {}, "f:port": {}},
            ELEMENT_A: {".": {}, "f:name": {}, "f:port": {}},
            ELEMENT_B: {".": {}, "f:name": {}, "f:port": {}, "f:sub": {"f:a": {}}, "f:value": {}},
        },
        "f:nested": {"f:inner": {"f:a": {}}},
        "f:nums": {"v:10": {}, "v:9": {}},
        "f:replicas": {},
        "f:strs": {"f:s": {}},
        "f:tags": {'v:"a"': {}, 'v:"z"': {}},
    }
}


def test_an_applied_custom_resource_owns_list_elements_set_values_and_untyped_maps() -> None:
    obj = w_apply(None, widget("w1", FULL_SPEC, status={"phase": "P"}), "a")
    assert entries(obj) == [("a", "Apply", T1, APPLIED_FULL_SPEC)]
    assert obj["spec"] == FULL_SPEC
    # the main resource of a kind with a status subresource takes no status, not even on create
    assert "status" not in obj


def test_a_custom_resource_created_by_update_marks_every_map_element_and_list_it_created() -> None:
    obj = w_update(None, widget("w2", FULL_SPEC, status={"phase": "P"}), "e", T1)
    assert entries(obj) == [
        (
            "e",
            "Update",
            T1,
            {
                "f:spec": {
                    ".": {},
                    "f:alist": {},
                    "f:amap": {},
                    "f:blob": {".": {}, "f:e": {}, "f:l": {}, "f:x": {".": {}, "f:y": {}}},
                    "f:empty": {},
                    "f:free": {".": {}, "f:k1": {".": {}, "f:a": {}}, "f:k2": {}},
                    "f:items": {
                        ".": {},
                        ELEMENT_ODD: {".": {}, "f:name": {}, "f:port": {}},
                        ELEMENT_A: {".": {}, "f:name": {}, "f:port": {}},
                        ELEMENT_B: {
                            ".": {},
                            "f:name": {},
                            "f:port": {},
                            "f:sub": {".": {}, "f:a": {}},
                            "f:value": {},
                        },
                    },
                    "f:nested": {".": {}, "f:inner": {".": {}, "f:a": {}}},
                    "f:nums": {".": {}, "v:10": {}, "v:9": {}},
                    "f:replicas": {},
                    "f:strs": {".": {}, "f:s": {}},
                    "f:tags": {".": {}, 'v:"a"': {}, 'v:"z"': {}},
                }
            },
        )
    ]


def test_conflicts_are_listed_owned_fields_first_then_deeper_paths() -> None:
    live = w_apply(None, widget("w1", FULL_SPEC), "a")
    config = widget(
        "w1",
        {
            "replicas": 4,
            "items": [{"name": "b", "port": 443, "value": "y"}],
            "tags": ["a"],
            "nums": [10],
            "blob": {"x": {"y": 2}},
            "alist": ["r"],
            "amap": {"a": "2"},
        },
    )
    error = conflict_of(lambda: w_apply(live, config, "b"))
    assert error.message == (
        'Apply failed with 5 conflicts: conflicts with "a":\n- .spec.alist\n- .spec.amap\n- .spec.replicas\n'
        '- .spec.blob.x.y\n- .spec.items[name="b",port=443].value'
    )


def test_metadata_lists_finalizers_are_a_set_and_owner_references_atomic_elements() -> None:
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u-1"}
    obj = w_apply(
        None,
        widget("m1", {}, labels={"a": "b"}, annotations={"x": "y"}, finalizers=["e.com/f"], ownerReferences=[owner]),
        "a",
    )
    assert entries(obj) == [
        (
            "a",
            "Apply",
            T1,
            {
                "f:metadata": {
                    "f:annotations": {"f:x": {}},
                    "f:finalizers": {'v:"e.com/f"': {}},
                    "f:labels": {"f:a": {}},
                    "f:ownerReferences": {'k:{"uid":"u-1"}': {}},
                },
                "f:spec": {},
            },
        )
    ]


def test_a_list_map_key_an_element_omits_takes_its_schema_default() -> None:
    obj = w_apply(None, widget("t1", {"items": [{"name": "a", "value": "2"}]}), "b")
    assert entries(obj)[0][3] == {
        "f:spec": {"f:items": {'k:{"name":"a","port":7}': {".": {}, "f:name": {}, "f:value": {}}}}
    }


# -- a custom resource: the status subresource ------------------------------------------------------


def test_status_in_an_apply_to_the_main_resource_is_neither_owned_nor_applied() -> None:
    live = w_apply(None, widget("w1", {"replicas": 3}), "a", T1)
    live["status"] = {"phase": "P"}
    after = w_apply(live, widget("w1", {"replicas": 3}, status={"phase": "Q"}), "c", T2)
    assert after["status"] == {"phase": "P"}
    # the apply "changed" status before it was reset, so the entry gets a time, as on kube
    assert entries(after) == [
        ("a", "Apply", T1, {"f:spec": {"f:replicas": {}}}),
        ("c", "Apply", T2, {"f:spec": {"f:replicas": {}}}),
    ]


def test_an_apply_to_the_status_subresource_owns_and_changes_only_status() -> None:
    live = w_apply(None, widget("w1", {"replicas": 3}), "a", T1)
    config = widget(
        "w1", {"replicas": 5}, status={"phase": "Q", "conds": [{"type": "Ready", "status": "True"}]}, labels={"x": "y"}
    )
    after = w_apply(live, config, "d", T2, subresource="status")
    assert after["spec"] == {"replicas": 3}
    assert "labels" not in after["metadata"]
    assert after["status"] == {"phase": "Q", "conds": [{"type": "Ready", "status": "True"}]}
    assert after["metadata"]["managedFields"][-1] == {
        "manager": "d",
        "operation": "Apply",
        "apiVersion": WIDGET_API,
        "time": T2,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:status": {"f:conds": {'k:{"type":"Ready"}': {".": {}, "f:status": {}, "f:type": {}}}, "f:phase": {}}
        },
        "subresource": "status",
    }

    error = conflict_of(lambda: w_apply(after, widget("w1", status={"phase": "R"}), "e", subresource="status"))
    assert error.message == 'Apply failed with 1 conflict: conflict with "d" with subresource "status": .status.phase'


def test_an_update_through_the_status_subresource_tracks_only_status() -> None:
    live = w_apply(None, widget("s1", {"replicas": 1}), "a", T1)
    changed = edited(live, status={"phase": "X"}, spec__replicas=7, metadata__labels={"l": "v"})
    after = w_update(live, changed, "f", T2, subresource="status")
    assert entries(after) == [
        ("a", "Apply", T1, {"f:spec": {"f:replicas": {}}}),
        ("f/status", "Update", T2, {"f:status": {".": {}, "f:phase": {}}}),
    ]
    again = w_update(after, edited(after, status__count=2), "f", T3, subresource="status")
    assert entries(again)[-1] == ("f/status", "Update", T3, {"f:status": {".": {}, "f:count": {}, "f:phase": {}}})


def test_without_a_status_subresource_status_is_owned_like_any_field() -> None:
    obj = w_apply(
        None, widget("g1", {"replicas": 1}, status={"phase": "P"}, kind="Gadget"), "a", status_subresource=False
    )
    assert obj["status"] == {"phase": "P"}
    assert entries(obj)[0][3] == {"f:spec": {"f:replicas": {}}, "f:status": {"f:phase": {}}}


# -- a custom resource: what an apply removes -----------------------------------------------------------


def test_an_applier_drops_elements_values_and_declared_parents_nobody_else_owns() -> None:
    first = {
        "items": [{"name": "a", "port": 1, "value": "v"}, {"name": "b", "port": 2}],
        "tags": ["x", "y"],
        "nested": {"inner": {"a": "1", "b": "2"}, "c": "c"},
        "blob": {"x": {"y": 1, "z": 2}},
        "free": {"k": {"a": "1"}},
    }
    live = w_apply(None, widget("p1", first), "a", T1)
    shared = w_apply(
        live,
        widget("p1", {"items": [{"name": "a", "port": 1}], "tags": ["y"], "nested": {"inner": {"b": "2"}}}),
        "b",
        T2,
    )
    assert shared["spec"] == live["spec"]

    dropped = w_apply(shared, widget("p1", {"blob": {"x": {"y": 1}}}), "a", T3)
    assert dropped["spec"] == {
        "blob": {"x": {"y": 1}},
        "items": [{"name": "a", "port": 1}],
        "nested": {"inner": {"b": "2"}},
        "tags": ["y"],
    }
    assert entries(dropped)[-1] == ("a", "Apply", T3, {"f:spec": {"f:blob": {"f:x": {".": {}, "f:y": {}}}}})

    emptied = w_apply(dropped, widget("p1"), "a", T4)
    assert emptied["spec"] == {"items": [{"name": "a", "port": 1}], "nested": {"inner": {"b": "2"}}, "tags": ["y"]}
    assert [e[0] for e in entries(emptied)] == ["b"]

    gone = w_apply(emptied, widget("p1"), "b", T5)
    assert "spec" not in gone
    assert "managedFields" not in gone["metadata"]


def test_fields_an_updater_owns_survive_when_the_applier_drops_their_parent() -> None:
    live = w_apply(None, widget("q1", {"nested": {"inner": {"a": "1"}}, "replicas": 1}), "a", T1)
    live = w_update(live, edited(live, spec__nested__c="C", spec__name="N"), "c", T2)
    assert entries(live)[-1] == ("c", "Update", T2, {"f:spec": {"f:name": {}, "f:nested": {"f:c": {}}}})
    after = w_apply(live, widget("q1", {"replicas": 1}), "a", T3)
    assert after["spec"] == {"name": "N", "nested": {"c": "C"}, "replicas": 1}
    assert entries(after) == [
        ("a", "Apply", T3, {"f:spec": {"f:replicas": {}}}),
        ("c", "Update", T2, {"f:spec": {"f:name": {}, "f:nested": {"f:c": {}}}}),
    ]


def test_force_moves_ownership_and_only_a_change_to_the_object_renews_the_time() -> None:
    live = w_apply(None, widget("f1", {"replicas": 1, "items": [{"name": "a", "port": 1, "value": "v"}]}), "a", T1)
    config = widget("f1", {"replicas": 2, "items": [{"name": "a", "port": 1, "value": "w"}]})
    forced = w_apply(live, config, "b", T2, force=True)
    element = 'k:{"name":"a","port":1}'
    assert entries(forced) == [
        ("a", "Apply", T1, {"f:spec": {"f:items": {element: {".": {}, "f:name": {}, "f:port": {}}}}}),
        (
            "b",
            "Apply",
            T2,
            {"f:spec": {"f:items": {element: {".": {}, "f:name": {}, "f:port": {}, "f:value": {}}}, "f:replicas": {}}},
        ),
    ]
    again = w_apply(forced, config, "b", T3)
    assert entries(again) == entries(forced)

    released = w_apply(again, widget("f1", {"replicas": 2}), "b", T4)
    assert released["spec"] == {"items": [{"name": "a", "port": 1}], "replicas": 2}
    assert entries(released)[-1] == ("b", "Apply", T4, {"f:spec": {"f:replicas": {}}})


def test_numbers_compare_as_json_numbers() -> None:
    live = w_apply(None, widget("f1", {"replicas": 2}), "b", T1)
    same = w_apply(live, widget("f1", {"replicas": 2.0}), "c", T2)
    assert same["spec"]["replicas"] == 2 and isinstance(same["spec"]["replicas"], int)
    assert entries(same)[0] == ("c", "Apply", None, {"f:spec": {"f:replicas": {}}})
    error = conflict_of(lambda: w_apply(same, widget("f1", {"replicas": 3.0}), "c", T3))
    assert error.message == 'Apply failed with 1 conflict: conflict with "b": .spec.replicas'


def test_merged_lists_keep_live_only_elements_in_place_and_shared_ones_in_the_configured_order() -> None:
    live = w_apply(
        None,
        widget(
            "o1",
            {"items": [{"name": n, "port": p} for n, p in (("a", 1), ("b", 2), ("c", 3))], "tags": ["a", "b", "c"]},
        ),
        "a",
    )
    config = widget(
        "o1",
        {"items": [{"name": n, "port": p} for n, p in (("d", 4), ("c", 3), ("a", 1), ("e", 5))], "tags": list("dcae")},
    )
    merged = w_apply(live, config, "b", T2)
    assert [i["name"] for i in merged["spec"]["items"]] == ["b", "d", "c", "a", "e"]
    assert merged["spec"]["tags"] == ["b", "d", "c", "a", "e"]


# -- a custom resource: updates of list elements, caps, untracked objects ---------------------------------


def test_updates_of_list_map_elements() -> None:
    element_a, element_b = 'k:{"name":"a","port":1}', 'k:{"name":"b","port":2}'
    live = w_apply(None, widget("l1", {"items": [{"name": "a", "port": 1, "value": "v"}]}), "a", T1)
    items = [{"name": "a", "port": 1, "value": "w"}, {"name": "b", "port": 2, "sub": {"a": "x"}}]
    updated = w_update(live, edited(live, spec__items=items), "c", T2)
    assert entries(updated) == [
        ("a", "Apply", T1, {"f:spec": {"f:items": {element_a: {".": {}, "f:name": {}, "f:port": {}}}}}),
        (
            "c",
            "Update",
            T2,
            {
                "f:spec": {
                    "f:items": {
                        element_a: {"f:value": {}},
                        element_b: {".": {}, "f:name": {}, "f:port": {}, "f:sub": {".": {}, "f:a": {}}},
                    }
                }
            },
        ),
    ]
    removed = w_update(updated, edited(updated, spec__items=items[1:]), "d", T3)
    assert entries(removed) == [
        (
            "c",
            "Update",
            T2,
            {"f:spec": {"f:items": {element_b: {".": {}, "f:name": {}, "f:port": {}, "f:sub": {".": {}, "f:a": {}}}}}},
        )
    ]


def test_more_than_ten_update_managers_fold_the_oldest_into_ancient_changes() -> None:
    obj = w_apply(None, widget("m1", {}, labels={"a": "b"}), "a", T1)
    for i in range(12):
        now = f"2026-12-02T21:00:{i:02d}Z"
        labels = {**obj["metadata"]["labels"], f"l{i}": "v"}
        obj = w_update(obj, edited(obj, metadata__labels=labels), f"u{i:02d}", now)
    managers = [(e["manager"], e["operation"], e.get("time")) for e in obj["metadata"]["managedFields"]]
    assert managers[:2] == [("a", "Apply", T1), ("ancient-changes", "Update", "2026-12-02T21:00:02Z")]
    assert [m for m, _, _ in managers[2:]] == [f"u{i:02d}" for i in range(3, 12)]
    ancient = obj["metadata"]["managedFields"][1]["fieldsV1"]
    assert ancient == {"f:metadata": {"f:labels": {"f:l0": {}, "f:l1": {}, "f:l2": {}}}}


def test_the_first_apply_to_an_untracked_custom_resource_records_before_first_apply() -> None:
    live = w_apply(None, widget("u1", {"replicas": 1, "nested": {"c": "1"}}, labels={"q": "r"}), "a", T1)
    live = w_update(live, edited(live, metadata__managedFields=[{}]), "c", T2)
    assert live["metadata"]["managedFields"] == []
    after = w_apply(live, widget("u1", {"replicas": 1, "name": "x"}), "a", T3)
    assert entries(after) == [
        ("a", "Apply", T3, {"f:spec": {"f:name": {}, "f:replicas": {}}}),
        (
            "before-first-apply",
            "Update",
            T3,
            {
                "f:metadata": {"f:labels": {".": {}, "f:q": {}}},
                "f:spec": {".": {}, "f:nested": {".": {}, "f:c": {}}, "f:replicas": {}},
            },
        ),
    ]


# -- purity ------------------------------------------------------------------------------------------


def test_apply_and_record_update_never_modify_their_inputs() -> None:
    live = w_apply(None, widget("w1", FULL_SPEC), "a", T1)
    live["status"] = {"phase": "P"}
    config = widget("w1", {"replicas": 9, "items": [{"name": "z", "port": 1}], "free": {"k3": {"b": "2"}}})
    live_before, config_before = copy.deepcopy(live), copy.deepcopy(config)
    result = w_apply(live, config, "b", T2, force=True)
    assert live == live_before and config == config_before
    result["spec"]["free"]["k1"]["a"] = "changed"
    result["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].clear()
    assert live == live_before

    new = edited(live, spec__replicas=4)
    new_before = copy.deepcopy(new)
    fields = record_update(
        live,
        new,
        manager="c",
        types=WIDGETS,
        subresource=None,
        has_status_subresource=True,
        api_version=WIDGET_API,
        now=T3,
    )
    fields[0]["fieldsV1"].clear()
    assert live == live_before and new == new_before


def test_an_applier_of_status_removes_the_status_fields_it_stops_applying() -> None:
    live = w_apply(None, widget("w", {"replicas": 1}), "a", T1)
    live = w_apply(live, widget("w", status={"phase": "A", "count": 1}), "s", T2, subresource="status")
    assert live["status"] == {"phase": "A", "count": 1}
    assert entries(live)[-1] == ("s/status", "Apply", T2, {"f:status": {"f:count": {}, "f:phase": {}}})
    live = w_apply(live, widget("w", status={"phase": "A"}), "s", T3, subresource="status")
    assert live["status"] == {"phase": "A"}
    live = w_apply(live, widget("w"), "s", T4, subresource="status")
    assert "status" not in live
    assert entries(live) == [("a", "Apply", T1, {"f:spec": {"f:replicas": {}}})]


def test_an_update_of_the_main_resource_does_not_own_status() -> None:
    live = w_apply(None, widget("w", {"replicas": 1}), "a", T1)
    after = w_update(live, edited(live, status={"phase": "Z"}, spec__name="n"), "m", T2)
    assert entries(after)[-1] == ("m", "Update", T2, {"f:spec": {"f:name": {}}})


def test_an_apply_of_another_kind_is_refused() -> None:
    live = w_apply(None, widget("w", {"replicas": 1}), "a", T1)
    with pytest.raises(BadRequest, match=r"^invalid object type: probe.example.com/v1, Kind=Gadget$"):
        w_apply(live, widget("w", kind="Gadget"), "a", T2)


def test_set_values_are_json_with_gos_html_escaping() -> None:
    obj = w_apply(None, widget("w2", {"tags": ['a"b', "<x>"], "nums": [3, 1, 20]}), "a", T1)
    assert entries(obj)[0][3] == {
        "f:spec": {"f:nums": {"v:1": {}, "v:20": {}, "v:3": {}}, "f:tags": {'v:"\\u003cx\\u003e"': {}, 'v:"a\\"b"': {}}}
    }


def test_a_map_or_list_whose_every_entry_is_pruned_becomes_null_and_its_owner_keeps_it() -> None:
    # b owns .spec.free itself (it applied free: {}); a owned its entries and stops applying them:
    # kube leaves free null (and then refuses the object, free may not be null), no conflict with b
    live = w_apply(None, widget("n1", {"free": {"k1": {"a": "1"}}, "tags": ["x"]}), "a", T1)
    live = w_apply(live, widget("n1", {"free": {}}), "b", T2)
    after = w_apply(live, widget("n1", {"tags": ["x"]}), "a", T3)
    assert after["spec"] == {"free": None, "tags": ["x"]}
    assert entries(after) == [
        ("b", "Apply", None, {"f:spec": {"f:free": {}}}),
        ("a", "Apply", T3, {"f:spec": {"f:tags": {'v:"x"': {}}}}),
    ]


def test_reordering_list_elements_is_a_change_that_renews_the_time() -> None:
    items = [{"name": "a", "port": 1}, {"name": "b", "port": 2}]
    live = w_apply(None, widget("r1", {"tags": ["a", "b"], "items": items}), "a", T1)
    after = w_apply(live, widget("r1", {"tags": ["b", "a"], "items": items[::-1]}), "a", T2)
    assert after["spec"] == {"tags": ["b", "a"], "items": items[::-1]}
    assert entries(after)[0][2] == T2
