"""Fixtures of the figure tests: small deterministic datasets and the demo data."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="session")
def binary_data():
    rng = np.random.default_rng(7)
    p = rng.beta(2, 4, 3000)
    y = (rng.uniform(size=3000) < np.clip(1.2 * p, 0, 1)).astype(int)
    return y, p


@pytest.fixture(scope="session")
def multiclass_data():
    rng = np.random.default_rng(3)
    P = rng.dirichlet([0.5] * 4, 1500)
    y = (rng.uniform(size=1500)[:, None] > P.cumsum(1)).sum(1).clip(0, 3)
    return y, P


def scatter_points(trace):
    """Finite (x, y) pairs of a trace, None separators removed."""
    return [(x, y) for x, y in zip(trace.x, trace.y) if x is not None and y is not None]


def trace_by_name(fig, start):
    hits = [t for t in fig.data if (t.name or "").startswith(start)]
    assert hits, f"no trace named {start!r}: {[t.name for t in fig.data]}"
    return hits[0]
