"""The embedded store's state on disk: :class:`SqliteState`, one SQLite file (stdlib ``sqlite3``, WAL).

:class:`~clusterclass.apiserver.store.MemoryStore` keeps every object in memory and serves reads from
there; this module only makes its writes survive a restart. It stores each object as JSON under its
key ``(group, kind, namespace, name)`` (namespace ``""`` for cluster-scoped kinds), plus the last
``resourceVersion``, so a restarted store hands out larger resourceVersions than any a client saw.
The store calls :meth:`SqliteState.commit` once per write (or once per batch of writes that must
land together, such as a garbage-collection cascade) *before* it acknowledges the write;
:meth:`SqliteState.load` gives everything back on start.

Durability. ``commit`` returns only after the transaction is on disk: the database runs in WAL mode
with ``synchronous=FULL``, so every commit fsyncs the write-ahead log. ``synchronous=NORMAL`` would
be enough to survive a *process* crash (a committed transaction is in the WAL file, in the kernel's
page cache, the moment ``COMMIT`` returns), but on power loss or a kernel crash it can lose the last
transactions before the next checkpoint. "A crash mid-write loses nothing that was acknowledged"
has to hold for a machine that loses power too, so FULL is the default; ``synchronous="NORMAL"`` is
there for callers that accept that risk for speed (benchmarks, throwaway clusters). A crash in the
middle of a commit leaves the previous state: SQLite's transaction is all or nothing.

One writer. A second process writing the same file would hold its own in-memory copy and overwrite
the first one's writes, so the writer takes an exclusive ``flock`` on ``<path>.lock`` and a second
writer gets a clear :class:`StateError`. Readers (``readonly=True``) take no lock and, thanks to WAL,
read a consistent snapshot while the writer goes on.

The schema is versioned with ``PRAGMA user_version`` and marked as ours with ``PRAGMA
application_id``; a file with another version, another application's database, or a file that is
not a database at all is refused with a :class:`StateError` naming the path, never a traceback.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from clusterclass.api.objects import Obj
from clusterclass.errors import ClusterClassError

#: (group, kind, namespace, name); namespace "" for cluster-scoped kinds
Key = tuple[str, str, str, str]

#: ``PRAGMA application_id`` of a clusterclass state file ("CCst")
APPLICATION_ID = 0x43437374
#: the schema this module writes and reads; a file of another version is refused
SCHEMA_VERSION = 1

_SCHEMA = (
    """CREATE TABLE objects (
        api_group TEXT NOT NULL,
        kind TEXT NOT NULL,
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (api_group, kind, namespace, name)
    ) WITHOUT ROWID""",
    "CREATE TABLE state (id INTEGER PRIMARY KEY CHECK (id = 1), resource_version INTEGER NOT NULL)",
    "INSERT INTO state (id, resource_version) VALUES (1, 0)",
)


class StateError(ClusterClassError):
    """The state file cannot be used: missing directory, not a state file, unknown schema, I/O error.

    ``path`` is the file; the message says what is wrong with it and starts with the path.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"state file {path}: {message}")
        self.path = path
        self.message = message


class SqliteState:
    """The objects and last resourceVersion of one embedded store, in the SQLite file at ``path``.

    The file is created (with its schema) when missing; its directory must exist. ``readonly``
    opens an existing file for :meth:`load` only, without taking the writer's lock. Safe to share
    between threads: calls are serialised by a lock.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["FULL", "NORMAL"] = "FULL",
        readonly: bool = False,
    ) -> None:
        self.path = str(path)
        self.readonly = readonly
        self._lock = threading.Lock()
        self._lock_file: int | None = None
        self._db: sqlite3.Connection | None = None
        parent = Path(self.path).parent
        if not parent.is_dir():
            raise StateError(self.path, f"directory {parent} does not exist")
        if readonly and not Path(self.path).is_file():
            raise StateError(self.path, "no such file")
        try:
            if not readonly:
                self._lock_file = _lock_exclusively(self.path)
                _owner_only(self.path)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a commit is exactly one transaction
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal" and not readonly:
                raise StateError(self.path, f"cannot use write-ahead logging (journal mode is {mode})")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._check_schema()
        except StateError:
            self.close()
            raise
        except (sqlite3.Error, OSError) as err:
            self.close()
            raise StateError(self.path, _describe(err)) from err

    # -- the API the store uses ----------------------------------------------------------------------

    def load(self) -> tuple[list[Obj], int]:
        """Every stored object (ordered by key) and the last resourceVersion, read as one snapshot."""
        with self._lock:
            db = self._connection()
            try:
                db.execute("BEGIN")
                try:
                    (resource_version,) = db.execute("SELECT resource_version FROM state WHERE id = 1").fetchone()
                    rows = db.execute(
                        "SELECT api_group, kind, namespace, name, body FROM objects "
                        "ORDER BY api_group, kind, namespace, name"
                    ).fetchall()
                finally:
                    db.execute("COMMIT")
            except sqlite3.Error as err:
                raise StateError(self.path, _describe(err)) from err
        objects: list[Obj] = []
        for *key, body in rows:
            try:
                obj = json.loads(body)
            except ValueError as err:
                raise StateError(self.path, f"object {'/'.join(key)} is not valid JSON: {err}") from err
            if not isinstance(obj, dict):
                raise StateError(self.path, f"object {'/'.join(key)} is not a JSON object")
            objects.append(obj)
        return objects, int(resource_version)

    def commit(self, resource_version: int, puts: Iterable[tuple[Key, Obj]], deletes: Iterable[Key]) -> None:
        """Store ``puts``, remove ``deletes`` and record ``resource_version``, as one transaction.

        Durable when it returns (see the module docstring). A key may appear once in all: the
        caller reduces a batch of writes to its net effect. ``resource_version`` may not go back.
        On failure nothing is stored and :class:`StateError` is raised: the write must not be
        acknowledged.
        """
        rows = [(*key, json.dumps(obj, separators=(",", ":"), ensure_ascii=False)) for key, obj in puts]
        gone = [tuple(key) for key in deletes]
        keys = [row[:4] for row in rows] + gone
        if len(set(keys)) != len(keys):
            raise ValueError("commit: a key appears more than once in one commit")
        with self._lock:
            db = self._connection()
            if self.readonly:
                raise StateError(self.path, "opened read-only")
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    (last,) = db.execute("SELECT resource_version FROM state WHERE id = 1").fetchone()
                    if resource_version < last:
                        raise ValueError(f"commit: resourceVersion {resource_version} is older than {last}")
                    db.executemany("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)", rows)
                    db.executemany(
                        "DELETE FROM objects WHERE api_group = ? AND kind = ? AND namespace = ? AND name = ?", gone
                    )
                    db.execute("UPDATE state SET resource_version = ? WHERE id = 1", (resource_version,))
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            except sqlite3.Error as err:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise StateError(self.path, _describe(err)) from err

    def close(self) -> None:
        """Close the file (checkpointing the log) and release the writer's lock; idempotent."""
        with self._lock:
            if self._db is not None:
                try:
                    self._db.close()
                finally:
                    self._db = None
            if self._lock_file is not None:
                os.close(self._lock_file)  # releases the flock
                self._lock_file = None

    def __enter__(self) -> SqliteState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            raise StateError(self.path, "closed")
        return self._db

    def _check_schema(self) -> None:
        """Create the schema in a new file; refuse a file that is not ours or of an unknown version."""
        db = self._connection()
        db.execute("BEGIN" if self.readonly else "BEGIN IMMEDIATE")
        try:
            (application_id,) = db.execute("PRAGMA application_id").fetchone()
            (version,) = db.execute("PRAGMA user_version").fetchone()
            (tables,) = db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if application_id == 0 and version == 0 and tables == 0:
                if self.readonly:
                    raise StateError(self.path, "empty file, not a clusterclass state file")
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif application_id != APPLICATION_ID:
                raise StateError(self.path, "an SQLite database of another application, not a clusterclass state file")
            elif version != SCHEMA_VERSION:
                raise StateError(
                    self.path,
                    f"schema version {version}, but this clusterclass reads version {SCHEMA_VERSION} "
                    "(written by a different clusterclass release)",
                )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


def _owner_only(path: str) -> None:
    """Create the state file readable and writable by its owner only (0600), or narrow an existing one to that: it
    holds Secrets. SQLite makes its write-ahead log and shared-memory files with the database file's mode."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    os.chmod(path, 0o600)


def _lock_exclusively(path: str) -> int:
    """An open descriptor of ``<path>.lock`` holding an exclusive flock; StateError when another writer has it."""
    lock_path = path + ".lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as err:
        os.close(fd)
        raise StateError(path, f"already open for writing by another store ({lock_path} is locked)") from err
    except OSError:
        os.close(fd)
        raise
    return fd


def _describe(err: BaseException) -> str:
    """SQLite's message, with what it usually means for a state file."""
    text = str(err) or type(err).__name__
    if isinstance(err, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
        return f"corrupt or not a clusterclass state file ({text})"
    return text
