"""Conversions of the docker kinds (placeholder: filled in by its own change)."""

from __future__ import annotations

from clusterclass.api.conversion.engine import KindConversion

CONVERSIONS: tuple[KindConversion, ...] = ()
