"""Values of JSON patch operations and ``enabledIf`` (spec §5.5, §5.6; upstream's TestRenderValueTemplate,
TestPatchIsEnabled, TestCalculateValue and TestCalculateTemplateData of §10.7).

Expected values are what upstream computes: Go's ``text/template`` with Sprig over the variables
decoded from JSON (numbers are float64), the output read by ``sigs.k8s.io/yaml`` (go-yaml v2).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from patch_support import enabled, lookup, render, value_of

from clusterclass.topology.patches.values import PatchValueError

MP_BUILTIN = {"machinePool": {"class": "mpClass2", "version": "v1.21.1"}}

# --- valueFrom.template --------------------------------------------------------------------------------

#: (id, template, variables, value)
TEMPLATE_CASES: list[tuple[str, str, dict[str, Any], Any]] = [
    ("plain string", "kindest/node:v1.28.0", {}, "kindest/node:v1.28.0"),
    ("string variable", "{{ .name }}", {"name": "cluster-name"}, "cluster-name"),
    ("builtin cluster name", "{{ .builtin.cluster.name }}-mp-0-azure-json", {"builtin": {"cluster": {"name": "c1"}}}, "c1-mp-0-azure-json"),  # noqa: E501
    ("integer variable is a number again", "{{ .replicas }}", {"replicas": 3}, 3),
    ("float variable", "{{ .ratio }}", {"ratio": 1.5}, 1.5),
    # Go prints the float64 1000000 as 1e+06; go-yaml reads that as a number, and JSON writes it 1000000
    ("a million renders 1e+06 and parses back as a number", "{{ .n }}", {"n": 1000000}, 1000000),
    ("boolean variable", "{{ .flag }}", {"flag": True}, True),
    ("missing top-level variable", "{{ .missing }}", {}, "<no value>"),
    ("missing leaf of an object", "{{ .obj.missing }}", {"obj": {"a": 1}}, "<no value>"),
    ("missing intermediate object", "{{ .missing.leaf }}", {}, "<no value>"),
    ("missing leaf in a longer text", "prefix-{{ .missing }}", {}, "prefix-<no value>"),
    (
        "index by builtin machinePool class",
        "{{ (index .mpConfig .builtin.machinePool.class).config }}",
        {"mpConfig": {"mpClass1": {"config": "configValue1"}, "mpClass2": {"config": "configValue2"}}, "builtin": MP_BUILTIN},  # noqa: E501
        "configValue2",
    ),
    (
        "index by builtin machinePool version",
        "{{ (index .mpConfig .builtin.machinePool.version).config }}",
        {"mpConfig": {"v1.21.0": {"config": "configValue1"}, "v1.21.1": {"config": "configValue2"}}, "builtin": MP_BUILTIN},  # noqa: E501
        "configValue2",
    ),
    (
        "index by builtin machineDeployment class",
        "{{ (index .mdConfig .builtin.machineDeployment.class).config }}",
        {"mdConfig": {"mdClass1": {"config": "c1"}}, "builtin": {"machineDeployment": {"class": "mdClass1"}}},
        "c1",
    ),
    ("YAML list", "- a\n- b\n", {}, ["a", "b"]),
    ("JSON list", '["a", 1, true]', {}, ["a", 1, True]),
    ("YAML object", "local:\n  imageTag: 3.5.9-0\n", {}, {"local": {"imageTag": "3.5.9-0"}}),
    ("JSON object", '{"a": {"b": [1, 2]}}', {}, {"a": {"b": [1, 2]}}),
    ("YAML object from a range", "{{ range .l }}- name: {{ . }}\n{{ end }}", {"l": ["a", "b"]}, [{"name": "a"}, {"name": "b"}]),  # noqa: E501
    # go-yaml v2 reads a plain y as true: a value rendered unquoted gets YAML's typing
    # sigs.k8s.io/yaml makes every mapping key a JSON member name: a boolean key is "true"/"false"
    ("rendered keys become member names", "y: a\n1: b\n0x10: c\n1.5: d\n", {}, {"true": "a", "1": "b", "16": "c", "1.5": "d"}),  # noqa: E501
    ("a rendered y is a boolean", "{{ range .l }}- name: {{ . }}\n{{ end }}", {"l": ["x", "y"]}, [{"name": "x"}, {"name": True}]),  # noqa: E501
    ("quote to keep a string", "{{ range .l }}- name: {{ quote . }}\n{{ end }}", {"l": ["x", "y"]}, [{"name": "x"}, {"name": "y"}]),  # noqa: E501
    ("if on a missing variable renders the else branch", "{{ if .missing }}yes{{ else }}no{{ end }}", {}, False),
    ("if on a set variable", "{{ if .x }}set{{ else }}unset{{ end }}", {"x": "v"}, "set"),
    ("empty output is null", "{{ if .missing }}x{{ end }}", {}, None),
    ("whitespace-only output is null", "  \n", {}, None),
    ("empty leaf in an object is null", "imageTag: {{ .tag }}", {"tag": ""}, {"imageTag": None}),
    ("quoted value stays a string", '"{{ .tag }}"', {"tag": "3"}, "3"),
    ("version with build metadata, replace", '{{ .v | replace "+" "_" }}', {"v": "v1.28.0+vmware.1"}, "v1.28.0_vmware.1"),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("template", "variables", "value"),
    [case[1:] for case in TEMPLATE_CASES],
    ids=[case[0] for case in TEMPLATE_CASES],
)
def test_template_value(template: str, variables: dict[str, Any], value: Any) -> None:
    got = render(template, variables)
    assert got == value
    assert type(got) is type(value)


#: how go-yaml v2 (upstream's parser, through sigs.k8s.io/yaml) reads plain scalars, then written as JSON
YAML_SCALARS: list[tuple[str, Any]] = [
    ("3", 3),
    ("-7", -7),
    ("3.0", 3),  # JSON writes the float 3 as 3
    ("2.5", 2.5),
    ("1e+06", 1000000),
    ("1e3", 1000),
    ("2.1e+06", 2100000),
    ("1e+21", 1e21),
    ("-.5", -0.5),
    (".5", 0.5),
    ("010", 8),  # octal, as Go's ParseInt with base 0
    ("0o17", 15),
    ("0x1F", 31),
    ("0b101", 5),
    ("09", 9),  # not octal, but a valid float
    ("1_000", 1000),
    ("true", True),
    ("yes", True),
    ("on", True),
    ("y", True),
    ("False", False),
    ("no", False),
    ("off", False),
    ("n", False),
    ("null", None),
    ("~", None),
    # go-yaml decodes timestamps into strings, and has no sexagesimal numbers or "=" values
    ("2024-01-01", "2024-01-01"),
    ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
    ("12:30", "12:30"),
    ("=", "="),
    ("v1.28.0", "v1.28.0"),
    ("1.2.3", "1.2.3"),
    ("1e400", "1e400"),  # out of range for float64: go-yaml keeps the text
    ('"true"', "true"),
    ("'3'", "3"),
]


@pytest.mark.parametrize(("text", "value"), YAML_SCALARS, ids=[t for t, _ in YAML_SCALARS])
def test_rendered_scalars_are_read_like_go_yaml(text: str, value: Any) -> None:
    got = render(text, {})
    assert got == value
    assert type(got) is type(value)
    json.dumps(got, allow_nan=False)  # always something JSON can carry


def test_rendered_infinity_is_an_error_as_json_cannot_carry_it() -> None:
    with pytest.raises(PatchValueError, match=r"failed to parse rendered template as YAML: unsupported value \.inf"):
        render(".inf", {})


def test_yaml_merge_keys_still_work() -> None:
    assert render("base: &b {a: 1}\nitem:\n  <<: *b\n  c: 2\n", {}) == {"base": {"a": 1}, "item": {"a": 1, "c": 2}}


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{{ .a", "failed to render template"),
        ("{{ nosuchfunction }}", 'function "nosuchfunction" not defined'),
        ("a: b: c", "failed to parse rendered template as YAML"),
        ("[", "failed to parse rendered template as YAML"),
    ],
    ids=["parse error", "unknown function", "not YAML", "unterminated flow"],
)
def test_template_errors(template: str, message: str) -> None:
    with pytest.raises(PatchValueError) as caught:
        render(template, {})
    assert message.replace('"', "") in str(caught.value).replace('"', "").replace("'", "")


# --- enabledIf ------------------------------------------------------------------------------------------

#: (id, enabledIf, variables, enabled)
ENABLED_IF_CASES: list[tuple[str, str | None, dict[str, Any], bool]] = [
    ("unset is enabled", None, {}, True),
    ("set but empty renders null: disabled, as upstream's *string", "", {}, False),
    ("literal true", "true", {}, True),
    ("literal false", "false", {}, False),
    ("variable true", "{{ .enabled }}", {"enabled": True}, True),
    ("variable false", "{{ .enabled }}", {"enabled": False}, False),
    ("surrounding whitespace and newlines are fine", "\n  {{ .enabled }}  \n", {"enabled": True}, True),
    ("trailing newline of a block scalar", "{{ .enabled }}\n", {"enabled": True}, True),
    ("a quoted \"true\" is a string, not true", '"true"', {}, False),
    ("a string variable \"true\" renders true unquoted", "{{ .s }}", {"s": "true"}, True),
    ("quoting the rendered value makes a string", '"{{ .enabled }}"', {"enabled": True}, False),
    ("missing variable renders <no value>", "{{ .missing }}", {}, False),
    ("nested missing variable", "{{ .podSecurityStandard.enabled }}", {}, False),
    ("comparison", '{{ ne .imageRepository "" }}', {"imageRepository": "registry.example.com"}, True),
    ("comparison false", '{{ ne .imageRepository "" }}', {"imageRepository": ""}, False),
    ("semverCompare on a builtin", '{{ semverCompare ">= v1.25" .builtin.controlPlane.version }}', {"builtin": {"controlPlane": {"version": "v1.28.0"}}}, True),  # noqa: E501
    ("and/or", "{{ and .a (or .b .c) }}", {"a": True, "b": False, "c": True}, True),
    ("a number is not true", "{{ .n }}", {"n": 1}, False),
    ("empty output is null, not true", "{{ if .missing }}true{{ end }}", {}, False),
    ("yes is true to go-yaml", "yes", {}, True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("enabled_if", "variables", "expected"),
    [case[1:] for case in ENABLED_IF_CASES],
    ids=[case[0] for case in ENABLED_IF_CASES],
)
def test_enabled_if(enabled_if: str | None, variables: dict[str, Any], expected: bool) -> None:
    assert enabled(enabled_if, variables) is expected


def test_enabled_if_render_error_is_an_error() -> None:
    with pytest.raises(PatchValueError, match="failed to render template"):
        enabled("{{ fail 'no' }}", {})


# --- value / valueFrom rules -------------------------------------------------------------------------------

VARIABLES = {"location": "us-east", "cpu": 4, "obj": {"a": {"b": "c"}}, "builtin": {"cluster": {"name": "c1"}}}

#: (id, operation, value) — operations that compute a value
VALUE_CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("literal string", {"op": "add", "path": "/spec/x", "value": "v"}, "v"),
    ("literal object, verbatim", {"op": "add", "path": "/spec/x", "value": {"a": [1, {"b": None}]}}, {"a": [1, {"b": None}]}),  # noqa: E501
    ("literal false", {"op": "add", "path": "/spec/x", "value": False}, False),
    ("literal zero", {"op": "replace", "path": "/spec/x", "value": 0}, 0),
    ("variable", {"op": "add", "path": "/spec/x", "valueFrom": {"variable": "location"}}, "us-east"),
    ("integer variable stays an integer", {"op": "add", "path": "/spec/x", "valueFrom": {"variable": "cpu"}}, 4),
    ("object variable", {"op": "add", "path": "/spec/x", "valueFrom": {"variable": "obj"}}, {"a": {"b": "c"}}),
    ("nested variable", {"op": "add", "path": "/spec/x", "valueFrom": {"variable": "obj.a.b"}}, "c"),
    ("builtin variable", {"op": "add", "path": "/spec/x", "valueFrom": {"variable": "builtin.cluster.name"}}, "c1"),
    ("template", {"op": "add", "path": "/spec/x", "valueFrom": {"template": "{{ .location }}-{{ .cpu }}"}}, "us-east-4"),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("operation", "value"), [case[1:] for case in VALUE_CASES], ids=[case[0] for case in VALUE_CASES]
)
def test_operation_value(operation: dict[str, Any], value: Any) -> None:
    assert value_of(operation, VARIABLES) == value


def test_value_is_a_copy() -> None:
    """A later patch changing the template must not change the ClusterClass's literal or a variable."""
    literal = {"a": ["x"]}
    variables = {"obj": {"list": ["y"]}}
    from_literal = value_of({"op": "add", "path": "/spec/x", "value": literal}, variables)
    from_variable = value_of({"op": "add", "path": "/spec/x", "valueFrom": {"variable": "obj"}}, variables)
    from_literal["a"].append("changed")
    from_variable["list"].append("changed")
    assert literal == {"a": ["x"]}
    assert variables == {"obj": {"list": ["y"]}}


#: (id, operation, upstream's error text) — §5.6
VALUE_ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("neither value nor valueFrom", {"op": "add", "path": "/spec/x"}, "neither .value nor .valueFrom are set"),
    ("value null counts as unset", {"op": "add", "path": "/spec/x", "value": None}, "neither .value nor .valueFrom are set"),  # noqa: E501
    ("both value and valueFrom", {"op": "add", "path": "/spec/x", "value": 1, "valueFrom": {"variable": "cpu"}}, "both .value and .valueFrom are set"),  # noqa: E501
    ("valueFrom with neither variable nor template", {"op": "add", "path": "/spec/x", "valueFrom": {}}, "neither .valueFrom.variable nor .valueFrom.template are set"),  # noqa: E501
    ("valueFrom with both variable and template", {"op": "add", "path": "/spec/x", "valueFrom": {"variable": "cpu", "template": "x"}}, "both .valueFrom.variable and .valueFrom.template are set"),  # noqa: E501
    ("missing variable", {"op": "add", "path": "/spec/x", "valueFrom": {"variable": "x"}}, 'variable "x" does not exist'),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("operation", "message"), [case[1:] for case in VALUE_ERRORS], ids=[case[0] for case in VALUE_ERRORS]
)
def test_operation_value_errors(operation: dict[str, Any], message: str) -> None:
    with pytest.raises(PatchValueError) as caught:
        value_of(operation, VARIABLES)
    assert message in str(caught.value)


# --- valueFrom.variable paths --------------------------------------------------------------------------------

PATH_VARIABLES = {
    "arr": ["a", "b", "c"],
    "config": {
        "list": [{"name": "first", "tags": ["t0", "t1"]}, {"name": "second"}],
        "nested": {"deep": {"value": 42}},
        "nothing": None,
    },
    "matrix": [[1, 2], [3, 4]],
    "plain": "text",
}

#: (path, value)
PATHS: list[tuple[str, Any]] = [
    ("plain", "text"),
    ("arr", ["a", "b", "c"]),
    ("arr[0]", "a"),
    ("arr[2]", "c"),
    ("config.list[0].name", "first"),
    ("config.list[1]", {"name": "second"}),
    ("config.list[0].tags[1]", "t1"),
    ("config.nested", {"deep": {"value": 42}}),
    ("config.nested.deep.value", 42),
    ("config.nothing", None),
    ("matrix[1]", [3, 4]),
]


@pytest.mark.parametrize(("path", "value"), PATHS, ids=[p for p, _ in PATHS])
def test_variable_paths(path: str, value: Any) -> None:
    assert lookup(PATH_VARIABLES, path) == value


#: (path, error text fragment)
BAD_PATHS: list[tuple[str, str]] = [
    ("x", 'variable "x" does not exist'),
    ("x.y", 'variable "x" does not exist'),
    ("x[0]", 'variable "x" does not exist'),
    ("config.missing", 'variable "config.missing" does not exist'),
    ("config.nested.deep.missing", 'variable "config.nested.deep.missing" does not exist'),
    ("plain.field", 'variable "plain.field" does not exist'),
    ("arr[3]", "arr[3]"),
    ("config.list[5].name", "config.list[5].name"),
    ("arr[-1]", "arr[-1]"),
    ("arr[a]", "arr[a]"),
    ("arr[", "arr["),
    ("arr]", "arr]"),
    ("plain[0]", "plain[0]"),
]


@pytest.mark.parametrize(("path", "fragment"), BAD_PATHS, ids=[p for p, _ in BAD_PATHS])
def test_bad_variable_paths(path: str, fragment: str) -> None:
    with pytest.raises(PatchValueError) as caught:
        lookup(PATH_VARIABLES, path)
    assert fragment in str(caught.value)


def test_out_of_range_and_bad_index_say_why() -> None:
    with pytest.raises(PatchValueError, match="out of range"):
        lookup(PATH_VARIABLES, "arr[3]")
    with pytest.raises(PatchValueError, match="non-negative integer"):
        lookup(PATH_VARIABLES, "arr[-1]")
    with pytest.raises(PatchValueError, match="not an array"):
        lookup(PATH_VARIABLES, "plain[0]")
