"""How long ago, the way kubectl and clusterctl say it: :func:`human_duration`.

This is Kubernetes' ``duration.HumanDuration`` (``k8s.io/apimachinery/pkg/util/duration``): two or
three significant figures, from ``95s`` through ``2m10s``, ``6m``, ``3h5m`` and ``4d2h`` up to years.
A moment up to two seconds in the future (clocks of two machines disagree a little) reads ``0s``;
further in the future reads ``<invalid>``.
"""

from __future__ import annotations

from datetime import timedelta

_SECOND = 1_000_000  # microseconds, the precision of a timedelta
_MINUTE = 60 * _SECOND
_HOUR = 60 * _MINUTE


def human_duration(elapsed: timedelta) -> str:
    """``elapsed`` as a short human-readable duration (``95s``, ``2m10s``, ``6m``, ``7h59m``, ``2d``, ``2y3d``)."""
    micros = (elapsed.days * 86_400 + elapsed.seconds) * _SECOND + elapsed.microseconds
    seconds = micros // _SECOND if micros >= 0 else -(-micros // _SECOND)  # toward zero, as Go converts
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = micros // _MINUTE
    if minutes < 10:
        rest = seconds % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = micros // _HOUR
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if rest == 0 else f"{years}y{rest}d"
    return f"{hours // 24 // 365}y"
