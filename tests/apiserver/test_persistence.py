"""SqliteState: the embedded store's objects survive a restart and a SIGKILL, and bad files are refused clearly."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from clusterclass.api.objects import Obj
from clusterclass.apiserver.persistence import Key, SqliteState, StateError
from clusterclass.apiserver.store import MemoryStore
from clusterclass.errors import ClusterClassError
from clusterclass.privatefiles import write_private


def config_map(name: str, namespace: str = "default", **data: str) -> tuple[Key, Obj]:
    obj: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
    if data:
        obj["data"] = data
    return ("", "ConfigMap", namespace, name), obj


def namespace(name: str) -> tuple[Key, Obj]:
    return ("", "Namespace", "", name), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


def test_a_new_file_is_empty_at_resource_version_0(path: Path) -> None:
    with SqliteState(path) as state:
        assert state.load() == ([], 0)
    assert path.is_file()


def test_objects_and_resource_version_survive_reopening(path: Path) -> None:
    odd: Obj = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns", "labels": {"ü": "ñ"}, "resourceVersion": "7"},
        "spec": {"replicas": 3, "ratio": 0.5, "big": 2**62, "none": None, "flag": False, "list": [1, "x", {}]},
    }
    with SqliteState(path) as state:
        state.commit(1, [namespace("ns")], [])
        state.commit(2, [config_map("a", "ns", k="v1"), config_map("b", "ns")], [])
        state.commit(7, [(("cluster.x-k8s.io", "Cluster", "ns", "c1"), odd), config_map("a", "ns", k="v2")], [])
        state.commit(9, [], [("", "ConfigMap", "ns", "b")])
    with SqliteState(path) as state:
        objects, resource_version = state.load()
    assert resource_version == 9
    assert objects == [config_map("a", "ns", k="v2")[1], namespace("ns")[1], odd]  # ordered by key


def test_a_delete_of_a_missing_key_is_harmless(path: Path) -> None:
    with SqliteState(path) as state:
        state.commit(1, [], [("", "ConfigMap", "default", "never")])
        assert state.load() == ([], 1)


def test_one_commit_may_not_name_a_key_twice_or_go_back_in_resource_version(path: Path) -> None:
    with SqliteState(path) as state:
        key, obj = config_map("a")
        with pytest.raises(ValueError, match="more than once"):
            state.commit(1, [(key, obj)], [key])
        state.commit(5, [(key, obj)], [])
        with pytest.raises(ValueError, match="resourceVersion 4 is older than 5"):
            state.commit(4, [config_map("b")], [])
        assert state.load() == ([obj], 5)  # the refused commit left nothing behind


def test_a_second_writer_is_refused_until_the_first_closes(path: Path) -> None:
    first = SqliteState(path)
    with pytest.raises(StateError, match="already open for writing by another store"):
        SqliteState(path)
    first.close()
    first.close()  # idempotent
    SqliteState(path).close()


def test_a_reader_reads_while_a_writer_holds_the_file(path: Path) -> None:
    with SqliteState(path) as writer:
        writer.commit(1, [config_map("a")], [])
        with SqliteState(path, readonly=True) as reader:
            assert reader.load() == ([config_map("a")[1]], 1)
            with pytest.raises(StateError, match="opened read-only"):
                reader.commit(2, [], [])


def test_concurrent_readers_always_see_a_whole_commit(path: Path) -> None:
    """Each commit adds one object and moves a counter: a reader never sees one without the other."""
    commits = 300
    views: dict[int, list[int]] = {}
    problems: list[str] = []
    done = threading.Event()

    def read(reader_id: int) -> None:
        seen = views.setdefault(reader_id, [])
        with SqliteState(path, readonly=True) as reader:
            while not done.is_set():
                objects, resource_version = reader.load()
                items = [o["metadata"]["name"] for o in objects if o["metadata"]["name"].startswith("item-")]
                counter = [o["data"]["last"] for o in objects if o["metadata"]["name"] == "counter"]
                if len(items) != resource_version or counter != items[-1:]:
                    problems.append(f"torn read at resourceVersion {resource_version}: {len(items)} items, {counter}")
                seen.append(resource_version)

    with SqliteState(path, synchronous="NORMAL") as writer:
        readers = [threading.Thread(target=read, args=(i,)) for i in range(3)]
        for thread in readers:
            thread.start()
        for i in range(1, commits + 1):
            writer.commit(i, [config_map(f"item-{i:04}"), config_map("counter", last=f"item-{i:04}")], [])
        done.set()
        for thread in readers:
            thread.join()
    assert problems == []
    for seen in views.values():
        assert seen == sorted(seen)  # a reader's view only moves forward
        assert seen[-1] <= commits


_WRITER = textwrap.dedent(
    """
    import sys
    from clusterclass.apiserver.persistence import SqliteState

    state = SqliteState(sys.argv[1])
    i = 0
    while True:
        i += 1
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "namespace": "default"},
               "data": {"payload": "x" * 2000}}
        state.commit(i, [(("", "ConfigMap", "default", f"cm-{i}"), obj)], [("", "ConfigMap", "default", f"cm-{i - 5}")])
        print(f"ack {i}", flush=True)
    """
)


def test_a_writer_killed_mid_stream_keeps_every_acknowledged_write(path: Path) -> None:
    """SIGKILL a process that commits in a loop; every commit it printed as acknowledged is on disk."""
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    acknowledged = 0
    try:
        for line in writer.stdout:
            acknowledged = int(line.split()[1])
            if acknowledged >= 150:
                break
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert acknowledged >= 150, writer.stderr.read() if writer.stderr else ""
    assert writer.returncode == -signal.SIGKILL

    with SqliteState(path) as state:  # the dead writer's lock is gone with it
        objects, resource_version = state.load()
    names = {o["metadata"]["name"] for o in objects}
    assert resource_version >= acknowledged
    # the last acknowledged commit and its four predecessors are there (but for those deleted by commits the
    # writer made after it and before the kill), and nothing a commit deleted
    assert {f"cm-{i}" for i in range(resource_version - 4, acknowledged + 1)} <= names
    assert names == {f"cm-{i}" for i in range(resource_version - 4, resource_version + 1)}


def test_the_state_error_names_the_file_for_a_missing_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "state.db"
    with pytest.raises(StateError) as err:
        SqliteState(missing)
    assert str(err.value) == f"state file {missing}: directory {missing.parent} does not exist"
    assert isinstance(err.value, ClusterClassError)
    assert err.value.path == str(missing)


def test_a_file_that_is_not_a_database_is_refused(path: Path) -> None:
    path.write_bytes(b"apiVersion: v1\nkind: Config\n" * 200)
    with pytest.raises(StateError, match=r"corrupt or not a clusterclass state file \(file is not a database\)"):
        SqliteState(path)


def test_a_truncated_state_file_is_refused(path: Path) -> None:
    with SqliteState(path) as state:
        state.commit(1, [config_map(f"cm-{i}", payload="x" * 3000) for i in range(50)], [])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    with pytest.raises(StateError, match=r"^state file .*: corrupt or not a clusterclass state file"):
        SqliteState(path).load()


def test_another_applications_database_is_refused(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.commit()
    db.close()
    with pytest.raises(StateError, match="an SQLite database of another application"):
        SqliteState(path)


def test_an_unknown_schema_version_is_refused(path: Path) -> None:
    SqliteState(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    with pytest.raises(StateError, match="schema version 99, but this clusterclass reads version 1"):
        SqliteState(path)


def test_read_only_needs_an_existing_file(path: Path) -> None:
    with pytest.raises(StateError, match="no such file"):
        SqliteState(path, readonly=True)


def test_a_closed_state_refuses_calls(path: Path) -> None:
    state = SqliteState(path)
    state.close()
    with pytest.raises(StateError, match="closed"):
        state.load()


# -- the embedded store on a state file ----------------------------------------------------------------------

_STORE_WRITER = textwrap.dedent(
    """
    import sys
    from clusterclass.apiserver.store import MemoryStore

    store = MemoryStore(state_path=sys.argv[1])
    owner = store.create({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "owner", "namespace": "default"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    i = 0
    while True:
        i += 1
        made = store.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": f"cm-{i}", "namespace": "default", "ownerReferences": [ref]},
                             "data": {"payload": "x" * 2000}})
        print(f"ack {i} {made['metadata']['uid']} {made['metadata']['resourceVersion']}", flush=True)
    """
)


def test_a_store_killed_mid_stream_restarts_with_every_acknowledged_object(path: Path) -> None:
    """SIGKILL a process creating objects through MemoryStore; a new store on its file has each acknowledged one."""
    writer = subprocess.Popen(
        [sys.executable, "-c", _STORE_WRITER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    acknowledged: dict[str, tuple[str, int]] = {}
    try:
        for line in writer.stdout:
            _, i, uid, resource_version = line.split()
            acknowledged[f"cm-{i}"] = (uid, int(resource_version))
            if len(acknowledged) >= 100:
                break
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert len(acknowledged) >= 100, writer.stderr.read() if writer.stderr else ""

    store = MemoryStore(state_path=path)
    try:
        items, resource_version = store.list("v1", "ConfigMap", namespace="default")
        found = {o["metadata"]["name"]: (o["metadata"]["uid"], int(o["metadata"]["resourceVersion"])) for o in items}
        for name, (uid, written_at) in acknowledged.items():
            assert found.get(name) == (uid, written_at), name
        assert int(resource_version) >= max(rv for _, rv in acknowledged.values())
        made = store.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after", "namespace": "default"}}
        )
        assert int(made["metadata"]["resourceVersion"]) > int(resource_version)
        # the owner survived too, so the garbage collector left its dependents alone at start-up
        assert store.delete("v1", "ConfigMap", "owner", namespace="default") is None
        left, _ = store.list("v1", "ConfigMap", namespace="default")
        assert [o["metadata"]["name"] for o in left] == ["after"]
    finally:
        store.close()
    with SqliteState(path, readonly=True) as state:
        names = sorted(o["metadata"]["name"] for o in state.load()[0] if o["kind"] == "ConfigMap")
    assert names == ["after"]  # the cascade reached the file


def test_the_state_file_and_its_log_are_owner_only_even_when_made_under_a_loose_umask(tmp_path: Path) -> None:
    """The state holds Secrets: a new file is 0600 from its first byte, and an older 0644 one is narrowed."""
    old_umask = os.umask(0o022)
    try:
        state = SqliteState(tmp_path / "state.db")
        state.close()
        loose = tmp_path / "loose.db"
        loose.touch(mode=0o644)
        SqliteState(loose).close()
    finally:
        os.umask(old_umask)
    for path in tmp_path.iterdir():
        if path.name.endswith((".db", ".db-wal", ".db-shm", ".lock")):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path.name} is {oct(path.stat().st_mode)}"


def test_write_private_never_shows_the_umask_mode(tmp_path: Path) -> None:
    target = tmp_path / "dir" / "kubeconfig"
    stale = tmp_path / "dir" / ".kubeconfig.tmp"
    stale.parent.mkdir()
    stale.write_bytes(b"left by a crash")
    stale.chmod(0o644)
    write_private(target, b"secret")
    assert target.read_bytes() == b"secret"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert not stale.exists()
