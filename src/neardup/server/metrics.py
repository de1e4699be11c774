"""Prometheus text exposition (format 0.0.4), written by hand: no extra dependency.

>>> h = Histogram("neardup_commit_seconds", "Commit time.", (0.01, 0.1))
>>> h.observe(0.05)
>>> print("\\n".join(h.lines()))
# HELP neardup_commit_seconds Commit time.
# TYPE neardup_commit_seconds histogram
neardup_commit_seconds_bucket{le="0.01"} 0
neardup_commit_seconds_bucket{le="0.1"} 1
neardup_commit_seconds_bucket{le="+Inf"} 1
neardup_commit_seconds_sum 0.05
neardup_commit_seconds_count 1
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict
from collections.abc import Mapping

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    if not labels:
        return ""
    inner = ",".join(
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in labels
    )
    return "{" + inner + "}"


class Histogram:
    """Cumulative buckets, sum and count, per label set."""

    def __init__(self, name: str, help: str, buckets: tuple[float, ...] = LATENCY_BUCKETS):
        self.name, self.help, self.buckets = name, help, buckets
        self._counts: dict[tuple[tuple[str, str], ...], list[int]] = {}
        self._sums: dict[tuple[tuple[str, str], ...], float] = defaultdict(float)
        self._lock = threading.Lock()

    def observe(self, value: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            counts = self._counts.setdefault(key, [0] * (len(self.buckets) + 1))
            counts[bisect.bisect_left(self.buckets, value)] += 1
            self._sums[key] += value

    def lines(self) -> list[str]:
        out = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        with self._lock:
            for key, counts in sorted(self._counts.items()):
                total = 0
                for le, c in zip((*map(repr, self.buckets), "+Inf"), counts, strict=True):
                    total += c
                    out.append(f"{self.name}_bucket{_labels((*key, ('le', le)))} {total}")
                out.append(f"{self.name}_sum{_labels(key)} {self._sums[key]:.6g}")
                out.append(f"{self.name}_count{_labels(key)} {total}")
        return out


class Counter:
    """A monotonically increasing count per label set."""

    def __init__(self, name: str, help: str) -> None:
        self.name, self.help = name, help
        self._values: dict[tuple[tuple[str, str], ...], int] = defaultdict(int)
        self._lock = threading.Lock()

    def inc(self, **labels: str) -> None:
        with self._lock:
            self._values[tuple(sorted(labels.items()))] += 1

    def lines(self) -> list[str]:
        out = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter"]
        with self._lock:
            out += [f"{self.name}{_labels(k)} {v}" for k, v in sorted(self._values.items())]
        return out


def gauge(name: str, help: str, values: Mapping[str, float] | float, label: str = "") -> list[str]:
    """A gauge, either one value or one per value of ``label``."""
    out = [f"# HELP {name} {help}", f"# TYPE {name} gauge"]
    if isinstance(values, Mapping):
        out += [f"{name}{_labels(((label, k),))} {_num(v)}" for k, v in sorted(values.items())]
    else:
        out.append(f"{name} {_num(values)}")
    return out


def _num(value: float) -> str:
    """Exact for integers (``1234567``, not ``1.23457e+06``), shortest round trip for floats.

    >>> _num(1234567), _num(0.5)
    ('1234567', '0.5')
    """
    return str(int(value)) if float(value).is_integer() else repr(float(value))
