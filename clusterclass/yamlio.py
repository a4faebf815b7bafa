"""YAML in and out: PyYAML's safe loader and dumper (in C when libyaml is there), and a loader that reads as Go does.

:data:`SAFE_LOADER` reads our own inputs (plans, CRD files, kubeconfigs). :data:`GO_YAML_LOADER`
reads YAML the way kube-apiserver and Cluster API read it (go-yaml v2, then JSON): server-side apply
bodies sent to the embedded API front, and the values rendered by ClusterClass patch templates.

:func:`dump_yaml` writes every YAML the CLI prints or diffs (plans, kubeconfigs). It uses libyaml's
emitter: PyYAML's pure-Python one scans every character of every scalar in Python, so one 20 MB string
(an annotation holding a bundle, say) took tens of seconds to print; libyaml writes it in well under a
second. Shared sub-objects are written out in full, never as anchors and aliases, which Kubernetes
users do not expect in an object.
"""

from __future__ import annotations

import math
import re
import struct
from decimal import Decimal
from typing import Any, ClassVar

import yaml

try:
    SAFE_LOADER: Any = yaml.CSafeLoader
    _SAFE_DUMPER: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    SAFE_LOADER = yaml.SafeLoader
    _SAFE_DUMPER = yaml.SafeDumper


class _Dumper(_SAFE_DUMPER):  # type: ignore[misc]
    """The safe dumper, writing shared sub-objects in full instead of as anchors and aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(data: Any, stream: Any = None) -> Any:
    """``data`` as block-style YAML in key order (a string, or written to ``stream`` and None)."""
    return yaml.dump(
        data, stream, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120, allow_unicode=False
    )


# How go-yaml v2 resolves a plain (unquoted, untagged) scalar. PyYAML's YAML 1.1 rules differ:
# ``1e+06``, ``1e3``, ``-.5``, ``09`` and ``0o17`` are numbers to go-yaml but strings to PyYAML;
# ``12:30`` is a string to go-yaml but 750 to PyYAML; ``2024-01-01`` a string (go-yaml decodes
# timestamps into strings) but a ``date`` to PyYAML, which is not even JSON; ``y``/``n`` booleans.
_GO_CONSTANTS: dict[str, Any] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
}
_GO_NOT_JSON = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN"}
_GO_INT = re.compile(r"[-+]?(?:0[bB][01]+|0[oO]?[0-7]+|0[xX][0-9a-fA-F]+|0|[1-9][0-9]*)")
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INT64 = (-(2**63), 2**63 - 1)


def _go_plain_scalar(text: str) -> Any:
    if text in _GO_CONSTANTS:
        return _GO_CONSTANTS[text]
    if text in _GO_NOT_JSON:
        raise yaml.constructor.ConstructorError(None, None, f"unsupported value {text}: not representable in JSON")
    if not text or text[0] not in "+-.0123456789":
        return text
    plain = text.replace("_", "") if text[0] != "." else text
    if _GO_INT.fullmatch(plain):  # strconv.ParseInt(plain, 0, 64), else ParseUint
        body = plain.lstrip("+-")
        base = {"0x": 16, "0X": 16, "0b": 2, "0B": 2, "0o": 8, "0O": 8}.get(body[:2])
        number = int(body[2:], base) if base else int(body[1:], 8) if body[0] == "0" and body != "0" else int(body)
        number = -number if plain[0] == "-" else number
        if _INT64[0] <= number <= _INT64[1] or (plain[0] not in "+-" and number < 2**64):
            return number
    if _GO_FLOAT.fullmatch(plain):
        real = float(plain)
        if math.isinf(real):  # out of range: ParseFloat fails, go-yaml keeps the string
            return text
        # Upstream hands the value on as JSON, where Go writes an integral float as an integer.
        return int(real) if real.is_integer() and abs(real) < 1e21 else real
    return text


def _json_key(key: Any, node: yaml.Node) -> str:
    """A mapping key as sigs.k8s.io/yaml turns it into a JSON member name (``n`` → ``false``, ``0x10`` → ``16``)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _float32_text(key)
    raise yaml.constructor.ConstructorError(
        None, None, f"unsupported map key of type: {type(key).__name__}, key: {key!r}", node.start_mark
    )


def _float32_text(value: float) -> str:
    """Go's ``strconv.FormatFloat(value, 'g', -1, 32)``: float32's shortest digits, exponent form
    below 1e-4 and from 1e+06."""
    single = struct.unpack("f", struct.pack("f", value))[0]
    for precision in range(9):
        text = f"{value:.{precision}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, _, exponent = text.partition("e")
    power = int(exponent)
    if -4 <= power < 6:
        fixed = format(Decimal(text), "f")
        return fixed.rstrip("0").rstrip(".") if "." in fixed else fixed
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{'+' if power >= 0 else '-'}{abs(power):02d}"


class _GoYamlLoader(SAFE_LOADER):  # type: ignore[misc]
    """The safe loader with go-yaml v2's resolution of plain scalars (quoted ones stay strings), and
    mapping keys made JSON member names as sigs.k8s.io/yaml makes them."""

    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, re.Pattern[str]]]]] = {}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
        # keys become strings before they meet in one dict: to Python, True and 1 are the same key
        self.flatten_mapping(node)
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _json_key(self.construct_object(key_node, deep=deep), key_node)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


_GO_PLAIN_TAG = "tag:clusterclass,2024:go-yaml-plain"
_GoYamlLoader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^<<$"), ["<"])
_GoYamlLoader.add_implicit_resolver(_GO_PLAIN_TAG, re.compile(""), None)
_GoYamlLoader.add_constructor(_GO_PLAIN_TAG, lambda loader, node: _go_plain_scalar(node.value))


#: the loader class to pass as ``Loader=``
GO_YAML_LOADER: Any = _GoYamlLoader
