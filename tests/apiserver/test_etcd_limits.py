"""The size bound that keeps the check cheap never lets a large object through."""

from __future__ import annotations

from clusterclass.apiserver.etcdlimits import MAX_REQUEST_BYTES, size_error


def test_one_string_shared_many_times_counts_every_time() -> None:
    shared = "x" * 100_000  # one str object, twenty places: JSON writes it twenty times (2 MB)
    assert size_error({"spec": {"values": [shared] * 20}}, "/registry/k") is not None


def test_control_characters_count_as_json_escapes_them() -> None:
    escaped = "\x01" * (MAX_REQUEST_BYTES // 5)  # 1 byte each in memory, 6 in JSON
    error = size_error({"data": escaped}, "/registry/k")
    assert error is not None and error.status["code"] == 500


def test_an_ordinary_object_passes() -> None:
    assert size_error({"metadata": {"name": "a"}, "spec": {"replicas": 3}}, "/registry/k") is None
