"""Credentials per request: tokens, token files, basic auth, impersonation and exec plugins.

The exec plugin is a real program (a small Python script written by the test) run the way kubectl
runs one, so the environment it gets, its output parsing, its expiry and its errors are all real.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from clusterclass.kube.http.auth import Authenticator
from clusterclass.kube.http.execplugin import CredentialError, ExecPlugin
from clusterclass.kube.http.kubeconfig import Config, ExecConfig, Impersonation

V1 = "client.authentication.k8s.io/v1"

PLUGIN = """\
#!{python}
# A stand-in credential plugin: records how it was run, then prints what the test asked for.
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
runs = os.path.join(here, "runs")
count = int(open(runs).read()) + 1 if os.path.exists(runs) else 1
open(runs, "w").write(str(count))
with open(os.path.join(here, "last-run.json"), "w") as record:
    json.dump({{"argv": sys.argv[1:], "exec_info": json.loads(os.environ["KUBERNETES_EXEC_INFO"]),
               "region": os.environ.get("REGION")}}, record)
behaviour = json.load(open(os.path.join(here, "behaviour.json")))
sys.stderr.write(behaviour.get("stderr", ""))
if behaviour.get("exit"):
    sys.exit(behaviour["exit"])
output = behaviour.get("output")
if isinstance(output, dict) and "status" in output and "token" in output["status"]:
    output["status"]["token"] = output["status"]["token"].replace("N", str(count))
sys.stdout.write(output if isinstance(output, str) else json.dumps(output))
"""


class Plugin:
    """A plugin script in a directory, told what to print through ``behaviour.json``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "plugin"
        self.path.write_text(PLUGIN.format(python=sys.executable))
        self.path.chmod(0o755)
        self.behave(output=credential(token="token-N"))

    def behave(self, **behaviour: Any) -> None:
        (self.directory / "behaviour.json").write_text(json.dumps(behaviour))

    @property
    def runs(self) -> int:
        runs = self.directory / "runs"
        return int(runs.read_text()) if runs.exists() else 0

    @property
    def last_run(self) -> dict[str, Any]:
        record: dict[str, Any] = json.loads((self.directory / "last-run.json").read_text())
        return record

    def config(self, **changes: Any) -> ExecConfig:
        settings: dict[str, Any] = {
            "command": str(self.path),
            "api_version": V1,
            "interactive_mode": "Never",
            "source": 'kubeconfig: users["me"].exec',
        }
        settings.update(changes)
        return ExecConfig(**settings)


def credential(api_version: str = V1, **status: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "ExecCredential", "status": status}


@pytest.fixture
def plugin(tmp_path: Path) -> Plugin:
    return Plugin(tmp_path)


def headers(credentials: Any) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, value in credentials.headers:
        found.setdefault(name, []).append(value)
    return found


# -- static credentials ----------------------------------------------------------------------------


async def test_token_and_basic_auth_headers() -> None:
    creds = await Authenticator(Config(server="https://k", token="abc")).credentials()
    assert headers(creds) == {"Authorization": ["Bearer abc"]}
    basic = await Authenticator(Config(server="https://k", username="u", password="p")).credentials()
    assert headers(basic) == {"Authorization": ["Basic " + base64.b64encode(b"u:p").decode()]}


async def test_client_certificate_goes_to_tls_not_headers() -> None:
    creds = await Authenticator(Config(server="https://k", client_cert=b"C", client_key=b"K")).credentials()
    assert creds.headers == ()
    assert creds.client_pair == (b"C", b"K")


async def test_impersonation_sends_one_header_per_group_and_extra_value() -> None:
    who = Impersonation(user="jane", uid="7", groups=("dev", "ops"), extra=(("reason/why", ("a", "b")),))
    creds = await Authenticator(Config(server="https://k", token="t", impersonate=who)).credentials()
    assert headers(creds) == {
        "Authorization": ["Bearer t"],
        "Impersonate-User": ["jane"],
        "Impersonate-Uid": ["7"],
        "Impersonate-Group": ["dev", "ops"],
        "Impersonate-Extra-reason%2Fwhy": ["a", "b"],
    }


async def test_token_file_wins_over_token_and_is_read_again_after_a_refusal(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    auth = Authenticator(Config(server="https://k", token="static", token_file=str(token_file)))
    used = await auth.credentials()
    assert headers(used)["Authorization"] == ["Bearer first"]
    token_file.write_text("second")
    assert headers(await auth.credentials())["Authorization"] == ["Bearer first"]  # cached for a minute
    assert auth.refresh(used) is True  # a 401: worth reading the file again
    assert headers(await auth.credentials())["Authorization"] == ["Bearer second"]
    token_file.unlink()  # mid-rotation: the last good token is kept
    auth.refresh(used)
    assert headers(await auth.credentials())["Authorization"] == ["Bearer second"]


async def test_unreadable_token_file_is_a_credential_error(tmp_path: Path) -> None:
    auth = Authenticator(Config(server="https://k", token_file=str(tmp_path / "missing")))
    with pytest.raises(CredentialError, match=r"getting credentials: cannot read token file .*/missing") as caught:
        await auth.credentials()
    assert caught.value.code == 401


async def test_static_credentials_refused_are_not_retried() -> None:
    auth = Authenticator(Config(server="https://k", token="t"))
    assert auth.refresh(await auth.credentials()) is False


# -- exec plugins ----------------------------------------------------------------------------------


async def test_exec_plugin_token_is_cached_without_expiry(plugin: Plugin) -> None:
    auth = Authenticator(Config(server="https://k", exec=plugin.config(args=("get-token", "--x"))))
    first = await auth.credentials()
    assert headers(first)["Authorization"] == ["Bearer token-1"]
    assert headers(await auth.credentials())["Authorization"] == ["Bearer token-1"]
    assert plugin.runs == 1
    assert plugin.last_run["argv"] == ["get-token", "--x"]
    assert auth.refresh(first) is True  # refused: run it again
    assert headers(await auth.credentials())["Authorization"] == ["Bearer token-2"]


async def test_exec_plugin_receives_exec_info_cluster_and_env(plugin: Plugin) -> None:
    config = plugin.config(
        provide_cluster_info=True,
        cluster_info={"server": "https://k", "config": {"audience": "a"}},
        env=(("REGION", "eu-west"),),
    )
    await ExecPlugin(config, stdin_is_terminal=False).credential()
    assert plugin.last_run["region"] == "eu-west"
    assert plugin.last_run["exec_info"] == {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "spec": {"interactive": False, "cluster": {"server": "https://k", "config": {"audience": "a"}}},
    }


async def test_exec_plugin_expiry_is_honoured(plugin: Plugin) -> None:
    plugin.behave(output=credential(token="token-N", expirationTimestamp="2001-01-01T00:00:00Z"))
    exec_plugin = ExecPlugin(plugin.config(), stdin_is_terminal=False)
    assert (await exec_plugin.credential()).token == "token-1"
    assert (await exec_plugin.credential()).token == "token-2"  # already expired: run again
    plugin.behave(output=credential(token="token-N", expirationTimestamp="2999-01-01T00:00:00Z"))
    assert (await exec_plugin.credential()).token == "token-3"
    assert (await exec_plugin.credential()).token == "token-3"
    assert plugin.runs == 3


async def test_concurrent_requests_run_the_plugin_once(plugin: Plugin) -> None:
    exec_plugin = ExecPlugin(plugin.config(), stdin_is_terminal=False)
    tokens = await asyncio.gather(*(exec_plugin.credential() for _ in range(5)))
    assert {t.token for t in tokens} == {"token-1"}
    assert plugin.runs == 1


async def test_exec_plugin_client_certificate(plugin: Plugin) -> None:
    plugin.behave(output=credential(clientCertificateData="CERT-PEM", clientKeyData="KEY-PEM"))
    creds = await Authenticator(Config(server="https://k", exec=plugin.config())).credentials()
    assert creds.client_pair == (b"CERT-PEM", b"KEY-PEM")
    assert creds.headers == ()


async def test_static_token_overrides_the_exec_plugin(plugin: Plugin) -> None:
    creds = await Authenticator(Config(server="https://k", token="static", exec=plugin.config())).credentials()
    assert headers(creds)["Authorization"] == ["Bearer static"]
    assert plugin.runs == 0


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        ({"exit": 3, "stderr": "error: SSO session expired\n"}, r"exited with status 3; stderr: error: SSO session"),
        ({"output": "not json"}, r"its output is not an ExecCredential in JSON"),
        ({"output": {"kind": "Other"}}, r"its output is not an ExecCredential \(kind 'Other'\)"),
        (
            {"output": credential("client.authentication.k8s.io/v1beta1", token="t")},
            r"configured for client\.authentication\.k8s\.io/v1 and returned apiVersion "
            r"'client\.authentication\.k8s\.io/v1beta1'",
        ),
        ({"output": {"apiVersion": V1, "kind": "ExecCredential"}}, r"its ExecCredential has no status"),
        ({"output": credential()}, r"it returned neither a token nor a client certificate and key"),
        ({"output": credential(clientCertificateData="C")}, r"returned only one of status\.clientCertificateData"),
        (
            {"output": credential(token="t", expirationTimestamp="soon")},
            r"status\.expirationTimestamp 'soon' is not an RFC 3339 time",
        ),
        (
            {"output": credential(), "stderr": "warning: cache miss"},
            r"neither a token nor a client certificate and key; stderr: warning: cache miss",
        ),
    ],
)
async def test_exec_plugin_failures_say_what_the_plugin_did(
    plugin: Plugin, behaviour: dict[str, Any], message: str
) -> None:
    plugin.behave(**behaviour)
    with pytest.raises(CredentialError, match=message) as caught:
        await ExecPlugin(plugin.config(), stdin_is_terminal=False).credential()
    assert str(caught.value).startswith('getting credentials: exec plugin (kubeconfig: users["me"].exec): ')
    assert caught.value.reason == "Unauthorized"


async def test_missing_plugin_mentions_the_install_hint(tmp_path: Path) -> None:
    config = ExecConfig(
        command=str(tmp_path / "no-such-plugin"),
        interactive_mode="Never",
        install_hint="install it with: brew install no-such-plugin",
    )
    with pytest.raises(CredentialError, match=r"not found; install it with: brew install no-such-plugin"):
        await ExecPlugin(config, stdin_is_terminal=False).credential()


async def test_interactive_always_needs_a_terminal(plugin: Plugin) -> None:
    with pytest.raises(CredentialError, match=r"needs an interactive terminal \(interactiveMode: Always\)"):
        await ExecPlugin(plugin.config(interactive_mode="Always"), stdin_is_terminal=False).credential()
    assert plugin.runs == 0
