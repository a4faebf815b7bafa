"""String ``format`` checks: the formats the Kubernetes API server validates in CRD schemas.

Kubernetes validates ``bsonobjectid, uri, email, hostname, ipv4, ipv6, cidr, mac, uuid, uuid3,
uuid4, uuid5, isbn, isbn10, isbn13, creditcard, ssn, hexcolor, rgbcolor, byte, password, date,
duration, datetime`` (``date-time`` is the same format) and ignores any other name. Each checker
below follows the definition the Kubernetes documentation gives (mostly "as parsed by Go's X"):

- ``ipv4``/``ipv6``: Go's ``net.ParseIP`` accepts the text *and* it contains ``.`` / ``:``
  (so an IPv4-mapped IPv6 address with dots counts as ipv4, as in Kubernetes); no zones, no
  leading zeros in IPv4 octets.
- ``cidr``: Go's ``net.ParseCIDR``: an address, ``/``, a decimal prefix within the address size;
  host bits may be set.
- ``mac``: Go's ``net.ParseMAC``: 6, 8 or 20 octets as ``xx:xx``/``xx-xx`` pairs or ``xxxx.xxxx``.
- ``uri``: Go's ``url.ParseRequestURI``: an absolute URI (scheme ``:`` ...) or an absolute path,
  no control characters or spaces, valid ``%`` escapes.
- ``email``: Go's ``mail.ParseAddress``: ``local@domain`` optionally inside ``Name <...>``.
  This is a close approximation of RFC 5322 (no comments, no obsolete syntax).
- ``hostname``: RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens,
  each at most 63 characters, at most 255 in all.
- ``byte``: standard base64 with padding (line breaks ignored, as Go's decoder does).
- ``date``: RFC 3339 ``full-date`` (``2006-01-02``, a real calendar day).
- ``datetime``: RFC 3339 ``date-time`` (``T``/``t`` separator, ``Z`` or ``±hh:mm`` offset,
  optional fraction, leap second 60 allowed).
- ``duration``: Go's ``time.ParseDuration`` (``1h30m``, ``-1.5s``, ``0``) or a sequence of
  ``<number> <unit>`` words (``22 ns``, ``3 days``) as Kubernetes' strfmt package also accepts.
- ``isbn*``, ``creditcard``: digit patterns plus their check digits; ``ssn``, ``hexcolor``,
  ``rgbcolor``, ``uuid*``, ``bsonobjectid``: the regular expressions Kubernetes documents.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import ipaddress
import re
from collections.abc import Callable

from goduration import Duration, DurationParseError


def check_format(fmt: str, value: str) -> bool | None:
    """Whether ``value`` is valid for ``fmt``; None when Kubernetes does not validate ``fmt``."""
    checker = _CHECKERS.get(fmt)
    return None if checker is None else checker(value)


# --- IP addresses, CIDRs, MACs -------------------------------------------------------------

_IPV4 = re.compile(r"(?:0|[1-9][0-9]{0,2})(?:\.(?:0|[1-9][0-9]{0,2})){3}\Z", re.ASCII)


def parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Go's ``net.ParseIP``: dotted IPv4 without leading zeros, or IPv6 without a zone."""
    if _IPV4.match(text):
        try:
            return ipaddress.IPv4Address(text)
        except ValueError:
            return None
    if ":" not in text or "%" in text:
        return None
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def is_ipv4(text: str) -> bool:
    return parse_ip(text) is not None and "." in text


def is_ipv6(text: str) -> bool:
    return parse_ip(text) is not None and ":" in text


def is_cidr(text: str) -> bool:
    address, slash, prefix = text.partition("/")
    if not slash or not prefix.isascii() or not prefix.isdigit() or len(prefix) > 3:
        return False
    ip = parse_ip(address)
    if ip is None:
        return False
    bits = 32 if isinstance(ip, ipaddress.IPv4Address) else 128
    return int(prefix) <= bits


_HEX_PAIR = re.compile(r"[0-9a-fA-F]{2}\Z")
_HEX_QUAD = re.compile(r"[0-9a-fA-F]{4}\Z")


def is_mac(text: str) -> bool:
    """Go's ``net.ParseMAC``: EUI-48, EUI-64 or 20-octet IP-over-InfiniBand addresses."""
    if len(text) >= 14 and text[4:5] == ".":
        groups = text.split(".")
        return len(groups) in (3, 4, 10) and all(_HEX_QUAD.match(g) for g in groups)
    for separator in (":", "-"):
        groups = text.split(separator)
        if len(groups) in (6, 8, 20) and all(_HEX_PAIR.match(g) for g in groups):
            return True
    return False


# --- URIs, e-mail addresses, host names ----------------------------------------------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:", re.ASCII)
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def is_uri(text: str) -> bool:
    if not text or any(ch <= " " or ch == "\x7f" for ch in text):
        return False
    if _BAD_ESCAPE.search(text):
        return False
    if text.startswith("/"):
        return True
    if not _SCHEME.match(text):
        return False
    rest = text[text.index(":") + 1 :]
    if not rest.startswith("//"):
        return True
    authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
    return _valid_host(authority.rsplit("@", 1)[-1])


def _valid_host(host: str) -> bool:
    """Go's host check: ``[ipv6]`` in brackets, and an optional all-digit ``:port``."""
    if host.startswith("["):
        end = host.find("]")
        if end < 0 or parse_ip(host[1:end]) is None:
            return False
        port = host[end + 1 :]
        return port == "" or (port.startswith(":") and port[1:].isdigit()) or port == ":"
    _, colon, port = host.rpartition(":")
    return not colon or port == "" or port.isdigit()


_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]"
_DOT_ATOM = rf"{_ATEXT}+(?:\.{_ATEXT}+)*"
_QUOTED = r'"(?:[^"\\\r\n]|\\.)*"'
_DOMAIN_LITERAL = r"\[[^\[\]\\\r\n]*\]"
_ADDR_SPEC = rf"(?:{_DOT_ATOM}|{_QUOTED})@(?:{_DOT_ATOM}|{_DOMAIN_LITERAL})"
_EMAIL = re.compile(rf"(?:{_ADDR_SPEC}|(?:{_QUOTED}|[^<>\"@\r\n]*)\s*<{_ADDR_SPEC}>)\Z")


def is_email(text: str) -> bool:
    return bool(_EMAIL.match(text.strip()))


_LABEL = re.compile(r"(?!-)[A-Za-z0-9\-\u00a1-\U0010ffff]{1,63}(?<!-)\Z")


def is_hostname(text: str) -> bool:
    if not text or len(text) > 255:
        return False
    name = text[:-1] if text.endswith(".") else text
    return all(_LABEL.match(label) for label in name.split("."))


# --- identifiers ----------------------------------------------------------------------------

_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z", re.I)
_UUID3 = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z", re.I)
_UUID4 = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z", re.I)
_UUID5 = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z", re.I)
_BSON = re.compile(r"[0-9a-fA-F]{24}\Z")
_SSN = re.compile(r"[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}\Z")
_HEXCOLOR = re.compile(r"#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
_OCTET = r"\s*(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\s*"
_RGBCOLOR = re.compile(rf"rgb\({_OCTET},{_OCTET},{_OCTET}\)\Z")
_CREDITCARD = re.compile(
    r"(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})\Z"
)


def _regex(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda text: pattern.match(text) is not None


def is_isbn10(text: str) -> bool:
    digits = re.sub(r"[\s-]", "", text)
    if not re.fullmatch(r"[0-9]{9}[0-9X]", digits):
        return False
    total = sum((10 - i) * (10 if ch == "X" else int(ch)) for i, ch in enumerate(digits))
    return total % 11 == 0


def is_isbn13(text: str) -> bool:
    digits = re.sub(r"[\s-]", "", text)
    if not re.fullmatch(r"[0-9]{13}", digits):
        return False
    total = sum(int(ch) * (1 if i % 2 == 0 else 3) for i, ch in enumerate(digits))
    return total % 10 == 0


def is_creditcard(text: str) -> bool:
    digits = re.sub(r"[^0-9]", "", text)
    if not _CREDITCARD.match(digits):
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2 == 1:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


# --- base64, dates, durations ---------------------------------------------------------------


def is_byte(text: str) -> bool:
    cleaned = text.replace("\r", "").replace("\n", "")
    if len(cleaned) % 4:
        return False
    try:
        base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_DATETIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-]([0-9]{2}):([0-9]{2}))\Z"
)


def parse_date(text: str) -> dt.date | None:
    match = _DATE.match(text)
    if not match:
        return None
    try:
        return dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def is_date(text: str) -> bool:
    return parse_date(text) is not None


def is_datetime(text: str) -> bool:
    match = _DATETIME.match(text)
    if not match or parse_date(match[1]) is None:
        return False
    hour, minute, second = int(match[2]), int(match[3]), int(match[4])
    if hour > 23 or minute > 59 or second > 60:
        return False
    return match[7] is None or (int(match[7]) <= 23 and int(match[8]) <= 59)


_DURATION_UNITS = {
    "ns",
    "us",
    "µs",
    "μs",
    "ms",
    "s",
    "m",
    "h",
    "d",
    "w",
    "nanosecond",
    "microsecond",
    "millisecond",
    "second",
    "minute",
    "hour",
    "day",
    "week",
}
_DURATION_WORD = re.compile(r"\s*([0-9]+)\s*([^\s0-9]+)")


def is_duration(text: str) -> bool:
    try:
        Duration.parse(text)
    except (DurationParseError, ValueError, OverflowError):
        pass
    else:
        return True
    position, found = 0, False
    while position < len(text):
        match = _DURATION_WORD.match(text, position)
        if not match:
            return text[position:].strip() == "" and found
        unit = match[2].lower()
        if unit not in _DURATION_UNITS and unit.rstrip("s") not in _DURATION_UNITS:
            return False
        position, found = match.end(), True
    return found


_CHECKERS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": _regex(_BSON),
    "uri": is_uri,
    "email": is_email,
    "hostname": is_hostname,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "cidr": is_cidr,
    "mac": is_mac,
    "uuid": _regex(_UUID),
    "uuid3": _regex(_UUID3),
    "uuid4": _regex(_UUID4),
    "uuid5": _regex(_UUID5),
    "isbn": lambda text: is_isbn10(text) or is_isbn13(text),
    "isbn10": is_isbn10,
    "isbn13": is_isbn13,
    "creditcard": is_creditcard,
    "ssn": _regex(_SSN),
    "hexcolor": _regex(_HEXCOLOR),
    "rgbcolor": _regex(_RGBCOLOR),
    "byte": is_byte,
    "password": lambda text: True,
    "date": is_date,
    "duration": is_duration,
    "datetime": is_datetime,
    "date-time": is_datetime,
}
