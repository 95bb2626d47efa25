"""A server-side store of uploaded datasets, content-addressed by SHA-256, so that a link reproduces a view.

The dashboard keeps every uploaded file here, under the SHA-256 of its bytes, together with the column
mappings it was loaded with. A link ``?data=upload:<sha256>&map=<id>`` opened in another browser, or after a
server restart, reads the same bytes back and maps them the same way, so it rebuilds the same
:class:`~calibviz.io.Predictions`.

Layout of the store directory (one flat folder)::

    <sha256>.data     the uploaded bytes, exactly as received (parsed again by calibviz.io.read_table on use)
    <sha256>.json     {"name": file name, "size": bytes, "created": time, "mappings": {id: loading options}}
    .lock             advisory lock file (POSIX flock) that serialises writers across processes

Why the original bytes and not a normalised Parquet: the same reader and mapping code then runs on a link as
on the upload, so a link cannot rebuild data that differs from what the uploader saw, and the digest in the
link is the digest of what the user uploaded. Nothing in the store is ever executed or unpickled: the bytes go
through the same size- and format-checked readers as an upload, and the metadata is JSON.

Safety and limits

- **Atomic writes**: each file is written to a temporary file in the same folder, flushed and fsync'ed,
  then renamed over its final name (``os.replace`` is atomic on POSIX and Windows), so a reader sees the
  whole old file, the whole new file or none, never a part. Writers of the metadata take a lock (a
  ``threading.Lock`` within the process, ``fcntl.flock`` across processes where available).
- **Verified reads**: :meth:`DatasetStore.get` hashes the bytes it read and compares them with the key; a
  damaged entry is deleted and reported (:class:`StoreEntryDamaged`), never returned.
- **Size limit and eviction**: the total size of the entries is kept under ``max_bytes``; when a new entry
  does not fit, the least recently *used* entries go first. Use is recorded explicitly (the data file's
  modification time is set on every read and write), because file-system access times are often not
  kept (``noatime``/``relatime`` mounts). A file larger than the whole limit is not stored
  (:class:`StoreFullError`).
- **Keys**: only 64 lower-case hex digits are accepted as a key, so a link cannot name a path.

Who can read an entry: anyone who can reach the server and knows the digest (the link). The digest of a
file cannot be guessed without the file, but the store is not access-controlled: run the dashboard for
people who may see each other's uploads, or point ``CALIBVIZ_STORE_DIR`` at a folder per audience.

Configuration: ``CALIBVIZ_STORE_DIR`` (default: ``calibviz/uploads`` in the user's cache folder,
``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on
Windows) and ``CALIBVIZ_STORE_MB`` (default 2048).

Examples
--------
>>> import tempfile
>>> store = DatasetStore(tempfile.mkdtemp(), max_bytes=10_000)
>>> key, map_id = store.put(b"label,p\\n1,0.9\\n0,0.2\\n", "tiny.csv", {"label": "label"})
>>> entry = store.get(key, map_id)
>>> entry.name, entry.options, entry.data[:7]
('tiny.csv', {'label': 'label'}, b'label,p')
>>> key in store
True
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from .limits import _size

try:  # POSIX: advisory locks across processes (two dashboards on one store folder)
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process lock only
    fcntl = None

__all__ = ["DatasetStore", "StoredDataset", "StoreError", "StoreMissing", "StoreEntryDamaged", "StoreFullError",
           "default_store_dir", "store_limit_bytes", "mapping_id", "is_key", "DEFAULT_STORE_MB"]

#: Default size limit of the store, in MB (``CALIBVIZ_STORE_MB``).
DEFAULT_STORE_MB = 2048
_KEY = re.compile(r"^[0-9a-f]{64}$")
_MAP = re.compile(r"^[0-9a-f]{12}$")
_TMP_PREFIX = ".tmp-"
#: A temporary file older than this was left by a process that died while writing: removed on eviction.
_STALE_TMP_SECONDS = 3600
_THREAD_LOCK = threading.RLock()


class StoreError(InputError):
    """A stored dataset cannot be used; the message says why and what to do."""


class StoreMissing(StoreError):
    """The store does not hold this dataset (never uploaded here, evicted, or the store was emptied)."""


class StoreEntryDamaged(StoreError):
    """The stored bytes do not match their digest (disk damage or an edit); the entry has been removed."""


class StoreFullError(StoreError):
    """The dataset is larger than the whole store limit, so it is not kept."""


@dataclass(frozen=True)
class StoredDataset:
    """One dataset read back from the store: its bytes (verified), file name and loading options."""

    key: str
    name: str
    data: bytes = field(repr=False)
    options: dict


def is_key(text: str) -> bool:
    """Whether ``text`` is a store key (a SHA-256 in 64 lower-case hex digits)."""
    return bool(_KEY.match(str(text)))


def _canonical(options: dict) -> dict:
    """JSON-ready loading options: tuples as lists, no None/empty values, sorted keys."""
    out = {}
    for k in sorted(options):
        v = options[k]
        if v is None or v == "":
            continue
        out[str(k)] = list(v) if isinstance(v, (tuple, list)) else v
    return out


def mapping_id(options: dict | None) -> str:
    """Short id (12 hex digits) of a set of loading options; ``""`` for none (the detected mapping).

    Two option dicts that load a file the same way (tuples or lists, keys in any order, None values left
    out) get the same id.

    >>> mapping_id({"label": "y", "probs": ("p0", "p1")}) == mapping_id({"probs": ["p0", "p1"], "label": "y"})
    True
    >>> mapping_id({}), mapping_id({"weight": None})
    ('', '')
    """
    canon = _canonical(options or {})
    if not canon:
        return ""
    return hashlib.sha256(json.dumps(canon, sort_keys=True).encode()).hexdigest()[:12]


def default_store_dir() -> Path:
    """``CALIBVIZ_STORE_DIR``, else ``calibviz/uploads`` in the user's cache folder (see the module docstring)."""
    env = os.environ.get("CALIBVIZ_STORE_DIR")
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":  # pragma: no cover - platform specific
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":  # pragma: no cover - platform specific
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "calibviz" / "uploads"


def store_limit_bytes() -> int:
    """``CALIBVIZ_STORE_MB`` (default 2048) in bytes; a value that is not a positive number is an InputError."""
    raw = os.environ.get("CALIBVIZ_STORE_MB")
    if raw is None or raw.strip() == "":
        return DEFAULT_STORE_MB * 1024**2
    try:
        mb = float(raw)
    except ValueError:
        mb = -1.0
    if not mb > 0:
        raise InputError(f"CALIBVIZ_STORE_MB={raw!r} is not a positive number of megabytes; "
                         f"unset it for the default ({DEFAULT_STORE_MB}) or set e.g. CALIBVIZ_STORE_MB=4096.")
    return int(mb * 1024**2)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DatasetStore:
    """Content-addressed store of uploaded files with a size limit and least-recently-used eviction.

    Parameters
    ----------
    root : str or Path
        Folder of the store (created if missing).
    max_bytes : int
        Largest total size of the entries (data and metadata files).

    Notes
    -----
    All methods are safe to call from several threads and processes at once: data files are immutable
    once written (same key, same bytes) and every write goes through a temporary file and a rename.
    """

    def __init__(self, root, max_bytes: int):
        self.root = Path(root)
        self.max_bytes = int(max_bytes)
        if self.max_bytes <= 0:
            raise InputError(f"the store's size limit must be positive, got {max_bytes} bytes.")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the upload store folder {self.root} ({exc.strerror}); set "
                             "CALIBVIZ_STORE_DIR to a writable folder.") from exc

    @classmethod
    def from_env(cls) -> "DatasetStore":
        """The store configured by ``CALIBVIZ_STORE_DIR`` and ``CALIBVIZ_STORE_MB``."""
        return cls(default_store_dir(), store_limit_bytes())

    # -- paths -----------------------------------------------------------------------------------------
    def _check_key(self, key: str) -> str:
        if not is_key(key):
            raise StoreMissing(f"{str(key)[:80]!r} is not a dataset key (64 hex digits); the link is damaged.")
        return key

    def _data_path(self, key: str) -> Path:
        return self.root / f"{self._check_key(key)}.data"

    def _meta_path(self, key: str) -> Path:
        return self.root / f"{self._check_key(key)}.json"

    # -- locking and atomic writes -------------------------------------------------------------------
    @contextlib.contextmanager
    def _lock(self):
        with _THREAD_LOCK:
            if fcntl is None:  # pragma: no cover - Windows
                yield
                return
            with open(self.root / ".lock", "a+b") as fh:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _write_atomic(self, path: Path, data: bytes) -> None:
        tmp = self.root / f"{_TMP_PREFIX}{uuid.uuid4().hex}"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    def _read_meta(self, key: str) -> dict | None:
        try:
            meta = json.loads(self._meta_path(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}
        return meta if isinstance(meta, dict) else {}

    # -- public API -------------------------------------------------------------------------------------
    def __contains__(self, key) -> bool:
        return is_key(key) and self._data_path(key).exists()

    def put(self, data: bytes, name: str, options: dict | None = None) -> tuple[str, str]:
        """Keep ``data`` (a file named ``name``) and the loading ``options``; returns (key, mapping id).

        Storing bytes that are already kept only records the mapping and marks the entry as used. Other
        entries are evicted, least recently used first, until the store fits its limit.

        Raises
        ------
        StoreFullError
            When ``data`` alone is larger than the store's limit.
        """
        data = bytes(data)
        key = _sha256(data)
        opts = _canonical(options or {})
        map_id = mapping_id(opts)
        if len(data) > self.max_bytes:
            raise StoreFullError(
                f"{name} ({_size(len(data))}) is larger than the upload store's limit ({_size(self.max_bytes)}, "
                "CALIBVIZ_STORE_MB), so links to it cannot be opened elsewhere.")
        path = self._data_path(key)
        with self._lock():
            # metadata first: an entry is listed (and readable) once its data file exists
            meta = self._read_meta(key) or {}
            mappings = meta.get("mappings") if isinstance(meta.get("mappings"), dict) else {}
            if not meta.get("name") or mappings.get(map_id) != opts:
                mappings[map_id] = opts
                meta = {"name": meta.get("name") or str(name), "size": len(data),
                        "created": meta.get("created") or time.time(), "mappings": mappings}
                self._write_atomic(self._meta_path(key), json.dumps(meta, sort_keys=True).encode())
            # same key, same bytes: an existing file of the right size is kept (get() verifies the digest)
            if not path.exists() or path.stat().st_size != len(data):
                self._write_atomic(path, data)
            self._touch(path)
            self._evict(keep=key)
        return key, map_id

    def get(self, key: str, map_id: str = "") -> StoredDataset:
        """The dataset ``key`` with the options of mapping ``map_id`` (``""``: the detected mapping).

        Raises
        ------
        StoreMissing
            The store does not hold ``key`` (or not with that mapping).
        StoreEntryDamaged
            The stored bytes do not hash to ``key``; the entry is removed.
        """
        path = self._data_path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise StoreMissing("this server no longer holds the data of the link (it was removed to make room "
                               "for newer uploads, or never uploaded to this server).") from None
        if _sha256(data) != key:
            self.remove(key)
            raise StoreEntryDamaged("the stored copy of the link's data is damaged (its content no longer "
                                    "matches its digest) and has been removed.")
        meta = self._read_meta(key)
        if not meta or not isinstance(meta.get("mappings", {}), dict):
            raise StoreEntryDamaged("the description of the link's data (file name, column mapping) is missing "
                                    "or damaged.")
        if map_id and not _MAP.match(str(map_id)):
            raise StoreMissing(f"{str(map_id)[:40]!r} is not a column-mapping id; the link is damaged.")
        mappings = meta.get("mappings", {})
        if map_id not in mappings and map_id:
            raise StoreMissing("the column mapping of the link is not known to this server.")
        options = mappings.get(map_id, {})
        if not isinstance(options, dict):
            raise StoreEntryDamaged("the stored column mapping of the link's data is damaged.")
        with contextlib.suppress(OSError):
            self._touch(path)
        return StoredDataset(key=key, name=str(meta.get("name") or "upload"), data=data, options=dict(options))

    def remove(self, key: str) -> None:
        """Delete the entry ``key`` (no error when absent)."""
        with self._lock():
            for p in (self._data_path(key), self._meta_path(key)):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()

    def keys(self) -> list[str]:
        """Keys of the stored datasets, most recently used first."""
        return [k for k, _, _ in sorted(self._entries(), key=lambda e: -e[1])]

    def total_bytes(self) -> int:
        """Size of the stored entries (data and metadata files), in bytes."""
        return sum(size for _, _, size in self._entries())

    # -- internals ------------------------------------------------------------------------------------
    @staticmethod
    def _touch(path: Path) -> None:
        now = time.time()
        # strictly increasing within the process: two uses in the same clock tick still have an order
        last = getattr(DatasetStore._touch, "_last", 0.0)
        now = max(now, last + 1e-6)
        DatasetStore._touch._last = now
        os.utime(path, (now, now))

    def _entries(self) -> list[tuple[str, float, int]]:
        """(key, last use, size of data + metadata) of every complete entry."""
        out = []
        for p in self.root.glob("*.data"):
            key = p.stem
            if not is_key(key):
                continue
            try:
                st = p.stat()
            except FileNotFoundError:
                continue
            size = st.st_size
            with contextlib.suppress(FileNotFoundError):
                size += self._meta_path(key).stat().st_size
            out.append((key, st.st_mtime, size))
        return out

    def _evict(self, keep: str | None = None) -> None:
        """Remove least recently used entries until the store fits; called with the lock held."""
        now = time.time()
        for tmp in self.root.glob(f"{_TMP_PREFIX}*"):
            with contextlib.suppress(OSError):
                if now - tmp.stat().st_mtime > _STALE_TMP_SECONDS:
                    tmp.unlink()
        for meta in self.root.glob("*.json"):  # metadata whose data file is gone
            if is_key(meta.stem) and not (self.root / f"{meta.stem}.data").exists():
                with contextlib.suppress(OSError):
                    meta.unlink()
        entries = sorted(self._entries(), key=lambda e: e[1])  # oldest use first
        total = sum(size for _, _, size in entries)
        for key, _, size in entries:
            if total <= self.max_bytes:
                break
            if key == keep:
                continue
            for p in (self._data_path(key), self._meta_path(key)):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
            total -= size
