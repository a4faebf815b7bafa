"""String formats the Kubernetes API server validates, each with accepted and rejected examples."""

from __future__ import annotations

import pytest
from var_support import check_value

from clusterclass.schema.formats import check_format

VALID = [
    ("bsonobjectid", "507f1f77bcf86cd799439011"),
    ("uri", "https://example.com/a?b=c#d"),
    ("uri", "http://[::1]:8080/x"),
    ("uri", "/absolute/path"),
    ("uri", "mailto:someone@example.com"),
    ("email", "user@example.com"),
    ("email", "Jane Doe <jane.doe+tag@example.co.uk>"),
    ("email", '"quoted local"@example.com'),
    ("hostname", "example.com"),
    ("hostname", "a-b.c-d.example"),
    ("hostname", "localhost"),
    ("ipv4", "192.168.0.1"),
    ("ipv4", "::ffff:1.2.3.4"),  # Go parses it and it contains a dot
    ("ipv6", "::1"),
    ("ipv6", "2001:db8::8a2e:370:7334"),
    ("cidr", "10.0.0.0/8"),
    ("cidr", "10.1.2.3/8"),  # host bits may be set
    ("cidr", "2001:db8::/32"),
    ("mac", "00:00:5e:00:53:01"),
    ("mac", "00-00-5E-00-53-01"),
    ("mac", "0000.5e00.5301"),
    ("mac", "02:00:5e:10:00:00:00:01"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
    ("uuid", "123E4567E89B12D3A456426614174000"),
    ("uuid3", "a3bb189e-8bf9-3888-9912-ace4e6543002"),
    ("uuid4", "f47ac10b-58cc-4372-a567-0e02b2c3d479"),
    ("uuid5", "886313e1-3b8a-5372-9b90-0c9aee199e5d"),
    ("isbn", "0321751043"),
    ("isbn10", "0-321-75104-3"),
    ("isbn13", "978-0321751041"),
    ("creditcard", "4111 1111 1111 1111"),
    ("ssn", "123-45-6789"),
    ("hexcolor", "#FFF"),
    ("hexcolor", "a0b1c2"),
    ("rgbcolor", "rgb(255, 0, 10)"),
    ("byte", "aGVsbG8="),
    ("byte", ""),
    ("password", "anything at all"),
    ("date", "2024-02-29"),
    ("date-time", "2014-12-15T19:30:20.000Z"),
    ("datetime", "2014-12-15t19:30:20+05:30"),
    ("date-time", "2016-12-31T23:59:60Z"),
    ("duration", "1h30m"),
    ("duration", "-1.5s"),
    ("duration", "0"),
    ("duration", "300ms"),
    ("duration", "22 ns"),
    ("duration", "3 days"),
]

INVALID = [
    ("bsonobjectid", "507f1f77bcf86cd79943901"),
    ("uri", "not a URI"),
    ("uri", "relative/path"),
    ("uri", "http://x/%zz"),
    ("uri", "http://host:port/"),
    ("email", "no-at-sign"),
    ("email", "a@b@c"),
    ("hostname", "-bad.example"),
    ("hostname", "a" * 64 + ".example"),
    ("hostname", "under_score.example"),
    ("ipv4", "256.1.1.1"),
    ("ipv4", "01.1.1.1"),
    ("ipv4", "::1"),
    ("ipv6", "1.2.3.4"),
    ("ipv6", "fe80::1%eth0"),
    ("cidr", "10.0.0.0"),
    ("cidr", "10.0.0.0/33"),
    ("cidr", "10.0.0/8"),
    ("mac", "00:00:5e:00:53"),
    ("mac", "0000.5e00"),
    ("uuid", "123e4567-e89b-12d3-a456-42661417400"),
    ("uuid3", "f47ac10b-58cc-4372-a567-0e02b2c3d479"),
    ("uuid4", "a3bb189e-8bf9-3888-9912-ace4e6543002"),
    ("uuid5", "f47ac10b-58cc-4372-a567-0e02b2c3d479"),
    ("isbn10", "0321751044"),
    ("isbn13", "978-0321751042"),
    ("creditcard", "4111 1111 1111 1112"),
    ("ssn", "123-456-789"),
    ("hexcolor", "#FFFF"),
    ("rgbcolor", "rgb(256,0,0)"),
    ("byte", "aGVsbG8"),
    ("byte", "a*=="),
    ("date", "2023-02-29"),
    ("date", "2023-2-1"),
    ("date-time", "2014-12-15 19:30:20Z"),
    ("date-time", "2014-12-15T24:00:00Z"),
    ("date-time", "2014-12-15T19:30:20"),
    ("duration", "1d 2"),
    ("duration", "5 parsecs"),
    ("duration", ""),
    ("duration", "1x"),
]


@pytest.mark.parametrize(("fmt", "value"), VALID)
def test_valid(fmt: str, value: str) -> None:
    assert check_format(fmt, value) is True
    assert check_value({"type": "string", "format": fmt}, value) == []


@pytest.mark.parametrize(("fmt", "value"), INVALID)
def test_invalid(fmt: str, value: str) -> None:
    assert check_format(fmt, value) is False
    assert check_value({"type": "string", "format": fmt}, value) == [
        ("spec.topology.variables[v].value", "Invalid value", f'must be of type {fmt}: "{value}"')
    ]


def test_unknown_formats_are_ignored() -> None:
    assert check_format("int32", "not checked") is None
    assert check_value({"type": "string", "format": "my-own-format"}, "anything") == []
