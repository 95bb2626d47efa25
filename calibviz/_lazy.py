"""Names of heavy modules resolved on first use.

``import calibviz`` is paid by every command of the CLI: importing
``scipy.stats`` and ``scipy.optimize`` alone took 0.9 s of the 2.0 s (CPU,
this 2-core box), while a scan (``calibviz metrics FILE --engine duckdb``)
often needs neither. A :class:`LazyName` stands for ``from module import
name`` and imports the module at its first call or attribute access.
"""
from __future__ import annotations

import importlib

__all__ = ["LazyName", "lazy"]


class LazyName:
    """``from module import name``, deferred until the name is used (called or an attribute read)."""

    __slots__ = ("_module", "_name", "_target")

    def __init__(self, module: str, name: str | None = None):
        self._module, self._name, self._target = module, name, None

    def _resolve(self):
        if self._target is None:
            mod = importlib.import_module(self._module)
            self._target = mod if self._name is None else getattr(mod, self._name)
        return self._target

    def __getattr__(self, attr):
        return getattr(self._resolve(), attr)

    def __call__(self, *args, **kwargs):
        return self._resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy {self._module}{'' if self._name is None else '.' + self._name}>"


def lazy(module: str, name: str | None = None) -> LazyName:
    """``lazy("scipy.stats")`` for ``from scipy import stats``; ``lazy("scipy.stats", "chi2")`` for
    ``from scipy.stats import chi2``."""
    return LazyName(module, name)
