"""Where the API server is and who we are to it: kubeconfig files and in-cluster configuration.

:func:`load_kubeconfig` reads kubeconfig files the way kubectl does: ``KUBECONFIG`` may list several
files, merged so that the first file naming a cluster, user or context wins it and the first
``current-context`` wins; ``~/.kube/config`` is the default; relative paths in a file resolve
against that file's directory. :func:`in_cluster_config` reads the service account a Pod is given.
:func:`load_config` picks between them in controller-runtime's order.

Both produce a :class:`Config`, a frozen, fully resolved description (certificates read into memory,
paths made absolute) that :mod:`~clusterclass.kube.http.auth` and :mod:`~clusterclass.kube.http.tls`
turn into request headers and TLS contexts. A bad kubeconfig is a :class:`ConfigError` naming the
file and the field (``/home/me/.kube/config: users["admin"].client-key-data: not valid base64``), never
a traceback. Written here rather than taken from a library: the clients that parse kubeconfig are
synchronous or wrap their own HTTP stack, and this one has to feed aiohttp.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from clusterclass.errors import ClusterClassError
from clusterclass.yamlio import SAFE_LOADER

#: where a Pod's service account credentials are mounted
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")

EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
#: the cluster extension whose value an exec plugin receives as ``spec.cluster.config``
EXEC_CLUSTER_EXTENSION = "client.authentication.k8s.io/exec"


class ConfigError(ClusterClassError):
    """A kubeconfig or in-cluster configuration that cannot be used, with the file and field at fault."""


@dataclass(frozen=True)
class ExecConfig:
    """A credential plugin (``users[].user.exec``): a command that prints an ``ExecCredential``."""

    #: absolute when the kubeconfig gave a path with a separator; otherwise looked up on PATH
    command: str
    args: tuple[str, ...] = ()
    #: added to this process's environment
    env: tuple[tuple[str, str], ...] = ()
    api_version: str = "client.authentication.k8s.io/v1"
    interactive_mode: str = "IfAvailable"
    #: pass the cluster (``cluster_info``) to the plugin in ``KUBERNETES_EXEC_INFO``
    provide_cluster_info: bool = False
    install_hint: str = ""
    #: ``spec.cluster`` of the ExecCredential the plugin receives, when ``provide_cluster_info``
    cluster_info: Mapping[str, Any] = field(default_factory=dict)
    #: where it was configured, for error messages
    source: str = ""


@dataclass(frozen=True)
class Impersonation:
    """Act as another user (``as``, ``as-uid``, ``as-groups``, ``as-user-extra``)."""

    user: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Config:
    """Everything needed to reach and authenticate to one API server."""

    #: ``https://host:port`` with any path prefix, no trailing slash
    server: str
    #: PEM of the CAs that sign the server's certificate; None trusts the system's CAs
    ca_data: bytes | None = None
    insecure_skip_tls_verify: bool = False
    #: the name to check the server's certificate against, when not the host of ``server``
    tls_server_name: str | None = None
    client_cert: bytes | None = None
    client_key: bytes | None = None
    token: str | None = None
    #: read again every minute (service account tokens rotate); wins over ``token``
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec: ExecConfig | None = None
    impersonate: Impersonation | None = None
    proxy_url: str | None = None
    #: the context's namespace, for commands that need a default; the Client never assumes it
    namespace: str | None = None
    #: where this came from: ``kubeconfig /path, context "x"`` or ``in-cluster``
    source: str = ""

    @property
    def client_pair(self) -> tuple[bytes, bytes] | None:
        """The configured client certificate and key, when both are given (an exec plugin may supply another)."""
        return (self.client_cert, self.client_key) if self.client_cert and self.client_key else None


# -- kubeconfig files ------------------------------------------------------------------------------


def default_kubeconfig_paths() -> list[Path]:
    """The files kubectl reads: every entry of ``KUBECONFIG``, else ``~/.kube/config``."""
    env = os.environ.get("KUBECONFIG", "")
    if env:
        seen: list[Path] = []
        for entry in env.split(os.pathsep):
            if entry and Path(entry) not in seen:
                seen.append(Path(entry))
        return seen
    return [Path.home() / ".kube" / "config"]


def load_kubeconfig(path: str | os.PathLike[str] | None = None, *, context: str | None = None) -> Config:
    """The configuration of ``context`` (default: the current one) in ``path`` or the default files.

    With ``path`` only that file is read and it must exist. Without it, the files of ``KUBECONFIG``
    are merged (files that do not exist are skipped, as kubectl skips them), or ``~/.kube/config``.
    """
    if path is not None:
        files = [_read_file(Path(path))]
    else:
        candidates = default_kubeconfig_paths()
        files = [_read_file(p) for p in candidates if p.exists()]
        if not files:
            where = "KUBECONFIG" if os.environ.get("KUBECONFIG") else "the default kubeconfig"
            raise ConfigError(f"no kubeconfig found: {where} names {', '.join(map(str, candidates))}, none exists")
    return _merged(files).config(context)


def parse_kubeconfig(document: Any, *, path: str | os.PathLike[str], context: str | None = None) -> Config:
    """The configuration of ``context`` in an already decoded kubeconfig that lives at ``path``."""
    return _merged([_KubeconfigFile(Path(path).absolute(), document)]).config(context)


class _KubeconfigFile:
    """One decoded kubeconfig with its location, for errors and relative paths."""

    def __init__(self, path: Path, document: Any) -> None:
        self.path = path
        if document is None:
            document = {}
        if not isinstance(document, dict):
            raise ConfigError(f"{path}: a kubeconfig must be a YAML mapping, not {type(document).__name__}")
        self.document: dict[str, Any] = document

    def named(self, section: str, inner: str) -> list[tuple[str, dict[str, Any]]]:
        """The ``name`` and ``inner`` mapping of every entry of ``section`` (``clusters``/``cluster``)."""
        entries = self.document.get(section)
        if entries is None:
            return []
        if not isinstance(entries, list):
            raise ConfigError(f"{self.path}: {section}: must be a list")
        found: list[tuple[str, dict[str, Any]]] = []
        for index, entry in enumerate(entries):
            where = f"{self.path}: {section}[{index}]"
            if not isinstance(entry, dict):
                raise ConfigError(f"{where}: must be a mapping")
            name = entry.get("name")
            if not isinstance(name, str) or not name:
                raise ConfigError(f"{where}.name: must be a non-empty string")
            body = entry.get(inner)
            if body is None:
                body = {}
            if not isinstance(body, dict):
                raise ConfigError(f'{self.path}: {section}["{name}"].{inner}: must be a mapping')
            found.append((name, body))
        return found


def _read_file(path: Path) -> _KubeconfigFile:
    try:
        text = path.read_text()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read kubeconfig: {err.strerror or err}") from err
    try:
        document = yaml.load(text, Loader=SAFE_LOADER)
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from err
    return _KubeconfigFile(path.absolute(), document)


@dataclass
class _Entry:
    """A cluster, user or context and the file it came from."""

    name: str
    body: dict[str, Any]
    file: _KubeconfigFile

    def where(self, section: str, key: str | None = None) -> str:
        suffix = f".{key}" if key else ""
        return f'{self.file.path}: {section}["{self.name}"]{suffix}'


class _Merged:
    """Several kubeconfig files seen as one, with kubectl's first-one-wins rules."""

    def __init__(self) -> None:
        self.clusters: dict[str, _Entry] = {}
        self.users: dict[str, _Entry] = {}
        self.contexts: dict[str, _Entry] = {}
        self.current_context = ""
        self.paths: list[Path] = []

    def config(self, context_name: str | None) -> Config:
        files = ", ".join(map(str, self.paths))
        name = context_name or self.current_context
        if not name:
            raise ConfigError(f"{files}: no context given and current-context is not set")
        context = self.contexts.get(name)
        if context is None:
            known = ", ".join(sorted(self.contexts)) or "none"
            raise ConfigError(f'{files}: context "{name}" not found (contexts: {known})')
        cluster_name = _string(context, "contexts", "cluster")
        user_name = _string(context, "contexts", "user")
        if not cluster_name:
            raise ConfigError(f"{context.where('contexts', 'cluster')}: must name a cluster")
        cluster = self.clusters.get(cluster_name)
        if cluster is None:
            raise ConfigError(f'{context.where("contexts", "cluster")}: cluster "{cluster_name}" not found')
        user: _Entry | None = None
        if user_name:
            user = self.users.get(user_name)
            if user is None:
                raise ConfigError(f'{context.where("contexts", "user")}: user "{user_name}" not found')
        source = f'kubeconfig {context.file.path}, context "{name}"'
        config = _cluster_config(cluster, source=source)
        _check_cluster(config, cluster.where("clusters"))
        if user is not None:
            config = _with_user(config, user, cluster)
            _check_user(config, user.where("users"))
        return replace(config, namespace=_string(context, "contexts", "namespace") or None)


def _merged(files: list[_KubeconfigFile]) -> _Merged:
    merged = _Merged()
    for file in files:
        merged.paths.append(file.path)
        for section, inner, target in (
            ("clusters", "cluster", merged.clusters),
            ("users", "user", merged.users),
            ("contexts", "context", merged.contexts),
        ):
            for name, body in file.named(section, inner):
                target.setdefault(name, _Entry(name, body, file))
        current = file.document.get("current-context")
        if current is not None and not isinstance(current, str):
            raise ConfigError(f"{file.path}: current-context: must be a string")
        if current and not merged.current_context:
            merged.current_context = current
    return merged


def _string(entry: _Entry, section: str, key: str) -> str:
    value = entry.body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ConfigError(f"{entry.where(section, key)}: must be a string")
    return value


def _bool(entry: _Entry, section: str, key: str) -> bool:
    value = entry.body.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ConfigError(f"{entry.where(section, key)}: must be true or false")
    return value


def _resolve(entry: _Entry, value: str) -> Path:
    """``value`` as a path; a relative one is relative to the kubeconfig that holds it."""
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else entry.file.path.parent / path


def _file_bytes(entry: _Entry, section: str, key: str) -> bytes | None:
    value = _string(entry, section, key)
    if not value:
        return None
    path = _resolve(entry, value)
    try:
        return path.read_bytes()
    except OSError as err:
        raise ConfigError(f"{entry.where(section, key)}: cannot read {path}: {err.strerror or err}") from err


def _data_bytes(entry: _Entry, section: str, key: str) -> bytes | None:
    value = _string(entry, section, key)
    if not value:
        return None
    try:
        return base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError) as err:
        raise ConfigError(f"{entry.where(section, key)}: not valid base64") from err


def _data_or_file(entry: _Entry, section: str, data_key: str, file_key: str) -> bytes | None:
    """The inline ``*-data`` field or the file's contents; both at once is an error, as in kubectl."""
    if entry.body.get(data_key) and entry.body.get(file_key):
        raise ConfigError(f"{entry.where(section)}: {data_key} and {file_key} are both set; keep one")
    return _data_bytes(entry, section, data_key) or _file_bytes(entry, section, file_key)


def _normalized_server(server: str, where: str) -> str:
    if not server:
        raise ConfigError(f"{where}: must be set to the URL of the API server")
    if "://" not in server:
        server = "https://" + server
    scheme = server.split("://", 1)[0].lower()
    if scheme not in ("https", "http"):
        raise ConfigError(f"{where}: {server!r}: the scheme must be https or http")
    return server.rstrip("/")


def _cluster_config(cluster: _Entry, *, source: str) -> Config:
    section = "clusters"
    server = _normalized_server(_string(cluster, section, "server"), cluster.where(section, "server"))
    proxy_url = _string(cluster, section, "proxy-url") or None
    if proxy_url and not proxy_url.lower().startswith(("http://", "https://")):
        raise ConfigError(
            f"{cluster.where(section, 'proxy-url')}: {proxy_url!r}: only http:// and https:// proxies are supported"
        )
    return Config(
        server=server,
        ca_data=_data_or_file(cluster, section, "certificate-authority-data", "certificate-authority"),
        insecure_skip_tls_verify=_bool(cluster, section, "insecure-skip-tls-verify"),
        tls_server_name=_string(cluster, section, "tls-server-name") or None,
        proxy_url=proxy_url,
        source=source,
    )


def _with_user(config: Config, user: _Entry, cluster: _Entry) -> Config:
    section = "users"
    if user.body.get("auth-provider") is not None:
        name = user.body["auth-provider"].get("name") if isinstance(user.body["auth-provider"], dict) else None
        raise ConfigError(
            f"{user.where(section, 'auth-provider')}: auth provider {name or ''!s} is not supported "
            "(the legacy auth providers were removed from Kubernetes clients; use an exec plugin)"
        )
    token_file = _string(user, section, "tokenFile")
    exec_body = user.body.get("exec")
    return replace(
        config,
        client_cert=_data_or_file(user, section, "client-certificate-data", "client-certificate"),
        client_key=_data_or_file(user, section, "client-key-data", "client-key"),
        token=_string(user, section, "token") or None,
        token_file=str(_resolve(user, token_file)) if token_file else None,
        username=_string(user, section, "username") or None,
        password=_string(user, section, "password") or None,
        exec=_exec_config(user, exec_body, cluster, config) if exec_body is not None else None,
        impersonate=_impersonation(user),
    )


def _impersonation(user: _Entry) -> Impersonation | None:
    section = "users"
    name = _string(user, section, "as")
    uid = _string(user, section, "as-uid")
    groups = user.body.get("as-groups") or []
    extra = user.body.get("as-user-extra") or {}
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise ConfigError(f"{user.where(section, 'as-groups')}: must be a list of strings")
    if not isinstance(extra, dict) or not all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in extra.values()
    ):
        raise ConfigError(f"{user.where(section, 'as-user-extra')}: must map names to lists of strings")
    if not (name or uid or groups or extra):
        return None
    if not name:
        raise ConfigError(f"{user.where(section, 'as')}: must be set when impersonating groups, uid or extra")
    return Impersonation(
        user=name,
        uid=uid,
        groups=tuple(groups),
        extra=tuple((str(k), tuple(v)) for k, v in sorted(extra.items())),
    )


def _exec_config(user: _Entry, body: Any, cluster: _Entry, config: Config) -> ExecConfig:
    where = user.where("users", "exec")
    if not isinstance(body, dict):
        raise ConfigError(f"{where}: must be a mapping")

    def field_of(key: str) -> str:
        return f"{where}.{key}"

    command = body.get("command")
    if not isinstance(command, str) or not command:
        raise ConfigError(f"{field_of('command')}: must be set to the plugin's command")
    if os.sep in command and not Path(command).is_absolute():
        command = str(_resolve(user, command))
    api_version = body.get("apiVersion")
    if api_version not in EXEC_API_VERSIONS:
        raise ConfigError(
            f"{field_of('apiVersion')}: {api_version!r} is not supported (use one of {', '.join(EXEC_API_VERSIONS)})"
        )
    mode = body.get("interactiveMode")
    if mode is None or mode == "":
        if api_version == "client.authentication.k8s.io/v1":
            raise ConfigError(f"{field_of('interactiveMode')}: must be set for {api_version}")
        mode = "IfAvailable"
    if mode not in INTERACTIVE_MODES:
        raise ConfigError(f"{field_of('interactiveMode')}: {mode!r} must be one of {', '.join(INTERACTIVE_MODES)}")
    args = body.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{field_of('args')}: must be a list of strings")
    env_list = body.get("env") or []
    if not isinstance(env_list, list):
        raise ConfigError(f"{field_of('env')}: must be a list of name/value pairs")
    env: list[tuple[str, str]] = []
    for index, item in enumerate(env_list):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            raise ConfigError(f"{field_of('env')}[{index}]: must have a non-empty name")
        value = item.get("value", "")
        if not isinstance(value, str):
            raise ConfigError(f"{field_of('env')}[{index}].value: must be a string")
        env.append((item["name"], value))
    provide = body.get("provideClusterInfo", False)
    if not isinstance(provide, bool):
        raise ConfigError(f"{field_of('provideClusterInfo')}: must be true or false")
    hint = body.get("installHint") or ""
    if not isinstance(hint, str):
        raise ConfigError(f"{field_of('installHint')}: must be a string")
    return ExecConfig(
        command=command,
        args=tuple(args),
        env=tuple(env),
        api_version=str(api_version),
        interactive_mode=str(mode),
        provide_cluster_info=provide,
        install_hint=hint,
        cluster_info=_exec_cluster_info(cluster, config) if provide else {},
        source=where,
    )


def _exec_cluster_info(cluster: _Entry, config: Config) -> dict[str, Any]:
    """``spec.cluster`` of an ExecCredential: the cluster as the plugin needs it to mint a credential."""
    info: dict[str, Any] = {"server": config.server}
    if config.tls_server_name:
        info["tls-server-name"] = config.tls_server_name
    if config.insecure_skip_tls_verify:
        info["insecure-skip-tls-verify"] = True
    if config.ca_data:
        info["certificate-authority-data"] = base64.b64encode(config.ca_data).decode()
    if config.proxy_url:
        info["proxy-url"] = config.proxy_url
    extensions = cluster.body.get("extensions") or []
    if isinstance(extensions, list):
        for extension in extensions:
            if isinstance(extension, dict) and extension.get("name") == EXEC_CLUSTER_EXTENSION:
                info["config"] = extension.get("extension")
    return info


def _check_cluster(config: Config, where: str) -> None:
    """The cluster settings client-go refuses, refused here too, before any request is made."""
    if config.insecure_skip_tls_verify and config.ca_data and config.server.startswith("https://"):
        raise ConfigError(
            f"{where}: a certificate authority and insecure-skip-tls-verify together are not allowed "
            "(either trust the CA or skip verification)"
        )


def _check_user(config: Config, where: str) -> None:
    """The credential combinations client-go refuses."""
    if bool(config.client_cert) != bool(config.client_key):
        missing = "client-key" if config.client_cert else "client-certificate"
        raise ConfigError(f"{where}: {missing}(-data) is missing: a client certificate needs its key and vice versa")
    if (config.username or config.password) and (config.token or config.token_file):
        raise ConfigError(f"{where}: username/password and a token may not both be set; keep one way to log in")
    if config.password and not config.username:
        raise ConfigError(f"{where}: password is set without a username")


# -- in-cluster ------------------------------------------------------------------------------------


def in_cluster_config(
    *, environ: Mapping[str, str] | None = None, service_account_dir: str | os.PathLike[str] | None = None
) -> Config:
    """The configuration a Pod has: the API server's service address and its mounted service account.

    The token is a ``token_file``, read again every minute, because kubelet rotates projected
    service account tokens. ``environ`` and ``service_account_dir`` are for tests.
    """
    env = os.environ if environ is None else environ
    directory = Path(service_account_dir) if service_account_dir is not None else SERVICE_ACCOUNT_DIR
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ConfigError(
            "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set "
            "(is this running in a Pod?)"
        )
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    token_file = directory / "token"
    if not token_file.is_file():
        raise ConfigError(f"in-cluster configuration: {token_file}: no service account token")
    ca_file = directory / "ca.crt"
    try:
        ca_data = ca_file.read_bytes()
    except OSError as err:
        raise ConfigError(f"in-cluster configuration: {ca_file}: cannot read: {err.strerror or err}") from err
    namespace: str | None
    try:
        namespace = (directory / "namespace").read_text().strip() or None
    except OSError:
        namespace = None
    return Config(
        server=f"https://{host}:{port}",
        ca_data=ca_data,
        token_file=str(token_file),
        namespace=namespace,
        source="in-cluster configuration",
    )


def in_cluster() -> bool:
    """Whether this process runs in a Pod with a service account (what :func:`load_config` checks)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and (SERVICE_ACCOUNT_DIR / "token").is_file()


def load_config(path: str | os.PathLike[str] | None = None, *, context: str | None = None) -> Config:
    """controller-runtime's order: ``path``, then ``KUBECONFIG``, then in-cluster, then ``~/.kube/config``."""
    if path is not None or os.environ.get("KUBECONFIG"):
        return load_kubeconfig(path, context=context)
    if in_cluster() and context is None:
        return in_cluster_config()
    return load_kubeconfig(None, context=context)
