"""Seeds of the CORP consistency band's redraws: the user's seed and the predictions together.

A band's guarantee (a calibrated model's curve leaves it with probability at most
alpha) holds when its label redraws are independent of the labels observed. With
one fixed seed for every log, each log of a model met the same uniforms, so the
chance of a false alarm was that of one fixed set of redraws: the band was left
by 9.7% of 300 calibrated logs of scores rounded to 2 decimals (5,000 rows)
against its 5% guarantee; seeded with the seed and a digest of the predictions
3.3-4.0% (two runs), as with a fresh seed per log (4.3-6.3%;
benchmarks/bench_seeds.py). The same
data and seed still give the same band (the promise of the dashboard's links and
of the command line's ``--seed``).

The digest reads the predictions (and weights), never the labels: redraws that
depend on the predictions alone are independent of the labels observed, and a
calibrated model's band stays a function of its predictions.

The calibrated-model references of the metrics (:func:`calibviz.metrics.consistency_test`, the scans') keep the
plain seed: for ECE the three seedings did not differ beyond the noise of 300 logs (5.7%, 6.7%, 7.0% +- 1.4), and a
scan draws the in-memory redraws from the same seed (tested), which a digest of rows that a scan never holds would
break.

The digest reads the number of values, their sum and up to 2^16 evenly spaced
values of each array (cheap at 10^7 rows): enough for two logs to get different
redraws, which is all it is for.
"""
from __future__ import annotations

import hashlib
import numbers

import numpy as np

from .errors import InputError

#: Values of each array read into the digest, evenly spaced (all of them below this).
DIGEST_VALUES = 1 << 16


def data_seed(random_state, *arrays):
    """The seed of a band's redraws: ``random_state`` and a digest of ``arrays`` (the predictions and the
    weights, None allowed; not the labels, see the module docstring) in one non-negative int for
    :func:`numpy.random.default_rng`; a Generator or None is
    returned as it is (the caller's stream, or fresh entropy).

    >>> data_seed(0, [0.2, 0.7], None) == data_seed(0, [0.2, 0.7], None)
    True
    >>> data_seed(0, [0.2, 0.7], None) != data_seed(0, [0.2, 0.8], None) != data_seed(1, [0.2, 0.7], None)
    True
    >>> data_seed(None, [0]) is None
    True
    """
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, numbers.Integral) \
            or random_state < 0:
        raise InputError(f"random_state must be None, a non-negative int or a numpy Generator, got {random_state!r}.")
    digest = hashlib.blake2b(digest_size=16)
    for a in arrays:
        if a is None:
            digest.update(b"none")
            continue
        values = np.asarray(a, dtype=np.float64)  # the same data in any dtype (float32 or float64): one digest
        flat = values.reshape(-1)
        step = max(1, flat.size // DIGEST_VALUES)
        digest.update(np.asarray(values.shape, dtype=np.int64).tobytes())
        digest.update(np.asarray([np.nansum(flat)], dtype=np.float64).tobytes())
        digest.update(np.ascontiguousarray(flat[::step]).tobytes())
    return (int(random_state) << 128) | int.from_bytes(digest.digest(), "little")  # an int, as every caller takes
