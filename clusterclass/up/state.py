"""Where ``clusterclass up`` keeps things between runs: the state file and the directory beside it.

``--state PATH`` (default :data:`DEFAULT_STATE`) is the management cluster's SQLite file. Next to it,
``PATH.d/`` holds what makes a restart a continuation rather than a new cluster:

- ``pki/ca.crt``, ``pki/ca.key``: the CA of the management cluster's API, so kubeconfigs written
  by an earlier run keep working (each run issues fresh serving and client certificates from it);
- ``port``: the port the API listened on, tried again first;
- ``workloads/<namespace>/<cluster>.db``: each simulated workload cluster's Nodes and Pods;
- ``<namespace>-<cluster>.kubeconfig``: each Cluster's admin kubeconfig, copied from its Secret;
- ``up.log``: the controllers' log.

Everything here is readable by its owner only (directories 0700, files 0600): the state holds Secrets, the CA key
and admin kubeconfigs.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from clusterclass.apiserver.front.serving import DEFAULT_GROUPS, DEFAULT_USER, Credentials
from clusterclass.kube.certs import CertificateAuthority
from clusterclass.privatefiles import write_private

DEFAULT_STATE = Path(".clusterclass/state.db")
CA_NAME = "clusterclass-management-ca"


@dataclass(frozen=True)
class StateLayout:
    """The state file of one ``up`` management cluster and the paths beside it (module doc)."""

    state_file: Path

    @property
    def directory(self) -> Path:
        return self.state_file.with_name(self.state_file.name + ".d")

    @property
    def workloads(self) -> Path:
        return self.directory / "workloads"

    @property
    def log_file(self) -> Path:
        return self.directory / "up.log"

    @property
    def default_kubeconfig(self) -> Path:
        return self.state_file.parent / "kubeconfig"

    def workload_kubeconfig(self, namespace: str, name: str) -> Path:
        return self.directory / f"{namespace}-{name}.kubeconfig"

    @property
    def exists(self) -> bool:
        return self.state_file.exists()

    def prepare(self) -> None:
        """Make the directories, readable by their owner only: they hold the management cluster's CA key, the
        workload clusters' state and admin kubeconfigs (the state file itself is made 0600 by its store)."""
        if self.state_file.parent == DEFAULT_STATE.parent and not self.state_file.parent.exists():
            self.state_file.parent.mkdir(mode=0o700, parents=True)  # our own ``.clusterclass``, not a user's directory
        for directory in (self.directory, self.directory / "pki", self.workloads):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            directory.chmod(0o700)  # a directory an earlier version made with the umask's mode

    def credentials(self) -> Credentials:
        """The management API's credentials, from the kept CA (made on the first run)."""
        pki = self.directory / "pki"
        cert, key = pki / "ca.crt", pki / "ca.key"
        if cert.exists() and key.exists():
            ca = CertificateAuthority.load(cert.read_bytes(), key.read_bytes())
        else:
            ca = CertificateAuthority(CA_NAME)
            cert.write_bytes(ca.cert_pem)
            write_private(key, ca.key_pem)
        server = ca.issue_server(["localhost", "127.0.0.1"])
        client = ca.issue_client(DEFAULT_USER, list(DEFAULT_GROUPS))
        return Credentials(ca.cert_pem, server, client, DEFAULT_USER)

    def last_port(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int((self.directory / "port").read_text().strip())
        return None

    def remember_port(self, port: int) -> None:
        (self.directory / "port").write_text(f"{port}\n")
