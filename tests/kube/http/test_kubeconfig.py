"""Reading kubeconfig files and in-cluster configuration as kubectl and client-go read them."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterclass.kube.http.kubeconfig import (
    ConfigError,
    in_cluster_config,
    load_config,
    load_kubeconfig,
    parse_kubeconfig,
)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(
    *,
    clusters: dict[str, dict[str, Any]] | None = None,
    users: dict[str, dict[str, Any]] | None = None,
    contexts: dict[str, dict[str, Any]] | None = None,
    current: str | None = None,
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in (clusters or {}).items()],
        "users": [{"name": n, "user": u} for n, u in (users or {}).items()],
        "contexts": [{"name": n, "context": c} for n, c in (contexts or {}).items()],
    }
    if current is not None:
        document["current-context"] = current
    return document


def write(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document))
    return path


def simple(server: str = "https://k.example:6443", **user: Any) -> dict[str, Any]:
    return kubeconfig(
        clusters={"c": {"server": server, "certificate-authority-data": b64(b"CA")}},
        users={"u": user or {"token": "t0k"}},
        contexts={"ctx": {"cluster": "c", "user": "u", "namespace": "team"}},
        current="ctx",
    )


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No developer kubeconfig or Pod environment leaks into these tests."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


# -- one file --------------------------------------------------------------------------------------


def test_current_context_gives_server_ca_token_and_namespace(tmp_path: Path) -> None:
    config = load_kubeconfig(write(tmp_path / "config", simple()))
    assert config.server == "https://k.example:6443"
    assert config.ca_data == b"CA"
    assert config.token == "t0k"
    assert config.namespace == "team"
    assert 'context "ctx"' in config.source


def test_context_chosen_by_name(tmp_path: Path) -> None:
    document = simple()
    document["clusters"].append({"name": "other", "cluster": {"server": "https://other:443/"}})
    document["contexts"].append({"name": "o", "context": {"cluster": "other"}})
    config = load_kubeconfig(write(tmp_path / "config", document), context="o")
    assert config.server == "https://other:443"  # trailing slash dropped
    assert config.token is None
    assert config.namespace is None


def test_server_without_scheme_is_https_and_path_prefix_is_kept(tmp_path: Path) -> None:
    config = load_kubeconfig(write(tmp_path / "c", simple(server="rancher.example/k8s/clusters/c-1")))
    assert config.server == "https://rancher.example/k8s/clusters/c-1"


def test_every_cluster_and_user_field(tmp_path: Path) -> None:
    document = kubeconfig(
        clusters={
            "c": {
                "server": "https://10.0.0.1",
                "insecure-skip-tls-verify": True,
                "tls-server-name": "kubernetes.default",
                "proxy-url": "http://proxy:3128",
            }
        },
        users={
            "u": {
                "client-certificate-data": b64(b"CERT"),
                "client-key-data": b64(b"KEY"),
                "as": "jane",
                "as-uid": "42",
                "as-groups": ["dev", "ops"],
                "as-user-extra": {"reason": ["debug"]},
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    config = load_kubeconfig(write(tmp_path / "c", document))
    assert config.insecure_skip_tls_verify is True
    assert config.tls_server_name == "kubernetes.default"
    assert config.proxy_url == "http://proxy:3128"
    assert (config.client_cert, config.client_key) == (b"CERT", b"KEY")
    assert config.impersonate is not None
    assert config.impersonate.user == "jane"
    assert config.impersonate.groups == ("dev", "ops")
    assert config.impersonate.extra == (("reason", ("debug",)),)


def test_relative_paths_resolve_against_the_kubeconfig_directory(tmp_path: Path) -> None:
    directory = tmp_path / "kube"
    (directory / "pki").mkdir(parents=True)
    (directory / "pki" / "ca.crt").write_bytes(b"CA-FILE")
    (directory / "pki" / "me.crt").write_bytes(b"CERT-FILE")
    (directory / "pki" / "me.key").write_bytes(b"KEY-FILE")
    (directory / "token").write_text("tok\n")
    document = kubeconfig(
        clusters={"c": {"server": "https://k", "certificate-authority": "pki/ca.crt"}},
        users={
            "u": {
                "client-certificate": "pki/me.crt",
                "client-key": "pki/me.key",
                "tokenFile": "token",
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": "./bin/plugin",
                    "interactiveMode": "Never",
                },
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    config = load_kubeconfig(write(directory / "config", document))
    assert config.ca_data == b"CA-FILE"
    assert (config.client_cert, config.client_key) == (b"CERT-FILE", b"KEY-FILE")
    assert config.token_file == str(directory / "token")
    assert config.exec is not None
    assert config.exec.command == str(directory / "bin" / "plugin")


def test_exec_command_without_a_separator_stays_a_path_lookup(tmp_path: Path) -> None:
    exec_config = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws", "args": ["eks"]}
    config = load_kubeconfig(write(tmp_path / "c", simple(exec=exec_config)))
    assert config.exec is not None
    assert config.exec.command == "aws"
    assert config.exec.args == ("eks",)
    assert config.exec.interactive_mode == "IfAvailable"  # v1beta1's default


def test_exec_cluster_info_carries_the_server_ca_and_extension(tmp_path: Path) -> None:
    document = simple(
        exec={
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "plugin",
            "interactiveMode": "Never",
            "provideClusterInfo": True,
            "env": [{"name": "REGION", "value": "eu"}],
        }
    )
    document["clusters"][0]["cluster"]["extensions"] = [
        {"name": "client.authentication.k8s.io/exec", "extension": {"audience": "k8s"}}
    ]
    config = load_kubeconfig(write(tmp_path / "c", document))
    assert config.exec is not None
    assert config.exec.env == (("REGION", "eu"),)
    assert dict(config.exec.cluster_info) == {
        "server": "https://k.example:6443",
        "certificate-authority-data": b64(b"CA"),
        "config": {"audience": "k8s"},
    }


def test_parse_kubeconfig_takes_a_decoded_document(tmp_path: Path) -> None:
    config = parse_kubeconfig(simple(), path=tmp_path / "virtual")
    assert config.token == "t0k"


# -- several files ---------------------------------------------------------------------------------


def test_kubeconfig_env_merges_files_first_one_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = kubeconfig(
        clusters={"shared": {"server": "https://first"}},
        users={"u1": {"tokenFile": "first-token"}},
        contexts={"a": {"cluster": "shared", "user": "u1"}},
    )
    second = kubeconfig(
        clusters={"shared": {"server": "https://second"}, "only2": {"server": "https://only2"}},
        users={"u1": {"token": "never"}, "u2": {"token": "two"}},
        contexts={"a": {"cluster": "only2"}, "b": {"cluster": "only2", "user": "u2"}},
        current="a",
    )
    third = kubeconfig(current="b")
    paths = [
        write(tmp_path / "one" / "config", first),
        tmp_path / "missing",
        write(tmp_path / "two" / "config", second),
        write(tmp_path / "three", third),
    ]
    monkeypatch.setenv("KUBECONFIG", ":".join(str(p) for p in paths))
    config = load_kubeconfig()
    # current-context "a" comes from the second file (the first that sets one); context "a",
    # cluster "shared" and user "u1" come from the first file, whose directory the token is in
    assert config.server == "https://first"
    assert config.token_file == str(tmp_path / "one" / "first-token")
    assert config.token is None
    other = load_kubeconfig(context="b")
    assert (other.server, other.token) == ("https://only2", "two")


def test_default_file_is_home_kube_config(tmp_path: Path) -> None:
    write(tmp_path / "home" / ".kube" / "config", simple())
    assert load_kubeconfig().token == "t0k"


def test_no_kubeconfig_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"no kubeconfig found: the default kubeconfig names .*\.kube/config"):
        load_kubeconfig()
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path}/a:{tmp_path}/b")
    with pytest.raises(ConfigError, match=r"KUBECONFIG names .*/a, .*/b, none exists"):
        load_kubeconfig()


def test_an_explicit_path_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"/nope: cannot read kubeconfig: No such file"):
        load_kubeconfig(tmp_path / "nope")


# -- bad kubeconfigs name the file and the field ---------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["users"][0]["user"].update({"client-key-data": "!!", "client-certificate-data": "a2V5"}),
            r'users\["u"\]\.client-key-data: not valid base64',
        ),
        (
            lambda d: d["users"][0]["user"].update({"client-key-data": "a2V5", "client-certificate-data": "!!"}),
            r'users\["u"\]\.client-certificate-data: not valid base64',
        ),
        (
            lambda d: d["clusters"][0]["cluster"].update({"certificate-authority-data": "%%%"}),
            r'clusters\["c"\]\.certificate-authority-data: not valid base64',
        ),
        (
            lambda d: d["clusters"][0]["cluster"].update({"server": ""}),
            r'clusters\["c"\]\.server: must be set to the URL of the API server',
        ),
        (
            lambda d: d["clusters"][0]["cluster"].update({"server": "ftp://x"}),
            r"the scheme must be https or http",
        ),
        (
            lambda d: d["clusters"][0]["cluster"].update({"insecure-skip-tls-verify": "yes"}),
            r'clusters\["c"\]\.insecure-skip-tls-verify: must be true or false',
        ),
        (
            lambda d: d["clusters"][0]["cluster"].update({"insecure-skip-tls-verify": True}),
            r'clusters\["c"\]: a certificate authority and insecure-skip-tls-verify together are not allowed',
        ),
        (
            lambda d: d["clusters"][0]["cluster"].update({"certificate-authority": "/x"}),
            r'clusters\["c"\]: certificate-authority-data and certificate-authority are both set',
        ),
        (
            lambda d: d["clusters"][0]["cluster"].update({"proxy-url": "socks5://p:1080"}),
            r'clusters\["c"\]\.proxy-url: .*only http:// and https:// proxies are supported',
        ),
        (
            lambda d: d["users"][0]["user"].update({"client-certificate-data": b64(b"c")}),
            r'users\["u"\]: client-key\(-data\) is missing',
        ),
        (
            lambda d: d["users"][0]["user"].update({"client-certificate": "nope.crt", "client-key": "nope.key"}),
            r'users\["u"\]\.client-certificate: cannot read .*/nope\.crt: No such file',
        ),
        (
            lambda d: d["users"][0]["user"].update({"username": "a", "password": "b"}),
            r'users\["u"\]: username/password and a token may not both be set',
        ),
        (
            lambda d: d["users"][0]["user"].update({"auth-provider": {"name": "gcp"}}),
            r'users\["u"\]\.auth-provider: auth provider gcp is not supported',
        ),
        (
            lambda d: d["users"][0]["user"].update(
                {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "p"}}
            ),
            r'users\["u"\]\.exec\.interactiveMode: must be set for client\.authentication\.k8s\.io/v1',
        ),
        (
            lambda d: d["users"][0]["user"].update(
                {"exec": {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "p"}}
            ),
            r'users\["u"\]\.exec\.apiVersion: .*v1alpha1.* is not supported',
        ),
        (
            lambda d: d["users"][0]["user"].update({"exec": {"apiVersion": "client.authentication.k8s.io/v1"}}),
            r"exec\.command: must be set",
        ),
        (
            lambda d: d["users"][0]["user"].update(
                {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": "p",
                        "interactiveMode": "Sometimes",
                    }
                }
            ),
            r"exec\.interactiveMode: 'Sometimes' must be one of Never, IfAvailable, Always",
        ),
        (lambda d: d["users"][0]["user"].update({"as-groups": ["g"]}), r'users\["u"\]\.as: must be set'),
        (lambda d: d.update({"current-context": "gone"}), r'context "gone" not found \(contexts: ctx\)'),
        (lambda d: d["contexts"][0]["context"].update(cluster="nope"), r'\.cluster: cluster "nope" not found'),
        (lambda d: d["contexts"][0]["context"].update(user="nope"), r'\.user: user "nope" not found'),
        (lambda d: d.update(clusters={"c": {}}), r"clusters: must be a list"),
        (lambda d: d["clusters"].append({"cluster": {}}), r"clusters\[1\]\.name: must be a non-empty string"),
        (lambda d: d.pop("current-context"), r"no context given and current-context is not set"),
    ],
)
def test_bad_kubeconfig(tmp_path: Path, change: Any, message: str) -> None:
    document = simple()
    change(document)
    path = write(tmp_path / "config", document)
    with pytest.raises(ConfigError, match=message) as caught:
        load_kubeconfig(path)
    assert str(path) in str(caught.value)


def test_not_yaml_and_not_a_mapping(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.write_text("clusters: [\n")
    with pytest.raises(ConfigError, match=f"{bad}: not valid YAML"):
        load_kubeconfig(bad)
    bad.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match=f"{bad}: a kubeconfig must be a YAML mapping, not list"):
        load_kubeconfig(bad)


# -- in-cluster ------------------------------------------------------------------------------------


def service_account(directory: Path, *, namespace: str | None = "tenant") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "token").write_text("sa-token")
    (directory / "ca.crt").write_bytes(b"CLUSTER-CA")
    if namespace is not None:
        (directory / "namespace").write_text(namespace)
    return directory


def test_in_cluster_config(tmp_path: Path) -> None:
    sa = service_account(tmp_path / "sa")
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    config = in_cluster_config(environ=env, service_account_dir=sa)
    assert config.server == "https://10.96.0.1:443"
    assert config.ca_data == b"CLUSTER-CA"
    assert config.token_file == str(sa / "token")
    assert config.token is None
    assert config.namespace == "tenant"


def test_in_cluster_ipv6_host_is_bracketed(tmp_path: Path) -> None:
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"}
    config = in_cluster_config(environ=env, service_account_dir=service_account(tmp_path, namespace=None))
    assert config.server == "https://[fd00::1]:6443"
    assert config.namespace is None


def test_in_cluster_needs_the_environment_and_the_token(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set"):
        in_cluster_config(environ={}, service_account_dir=service_account(tmp_path))
    env = {"KUBERNETES_SERVICE_HOST": "h", "KUBERNETES_SERVICE_PORT": "1"}
    with pytest.raises(ConfigError, match="/empty/token: no service account token"):
        in_cluster_config(environ=env, service_account_dir=tmp_path / "empty")


def test_load_config_prefers_an_explicit_path_then_kubeconfig_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explicit = write(tmp_path / "explicit", simple(token="explicit"))
    env_file = write(tmp_path / "env", simple(token="env"))
    write(tmp_path / "home" / ".kube" / "config", simple(token="home"))
    assert load_config().token == "home"
    monkeypatch.setenv("KUBECONFIG", str(env_file))
    assert load_config().token == "env"
    assert load_config(explicit).token == "explicit"
