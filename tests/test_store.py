"""The upload store (calibviz.io.store): content addressing, verified reads, size limit, LRU eviction, atomicity."""
from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import threading
import time

import pytest

from calibviz.errors import InputError
from calibviz.io.store import (DatasetStore, StoreEntryDamaged, StoreFullError, StoreMissing, default_store_dir,
                               mapping_id, store_limit_bytes)

CSV = b"label,p\n" + b"".join(f"{i % 2},{0.2 + 0.6 * (i % 2)}\n".encode() for i in range(50))


def blob(i: int, size: int = 1000) -> bytes:
    return (f"{i}:".encode() * size)[:size]


def test_put_get_round_trip_keyed_by_sha256(tmp_path):
    store = DatasetStore(tmp_path, 10**6)
    key, map_id = store.put(CSV, "preds.csv", {"label": "label", "probs": ("p",), "weight": None})
    assert key == hashlib.sha256(CSV).hexdigest()
    assert map_id == mapping_id({"probs": ["p"], "label": "label"}) != ""
    got = store.get(key, map_id)
    assert (got.data, got.name, got.options) == (CSV, "preds.csv", {"label": "label", "probs": ["p"]})
    # the detected mapping (no options) of the same bytes is a second mapping of the same entry
    key2, map2 = store.put(CSV, "other-name.csv", {})
    assert (key2, map2) == (key, "")
    assert store.get(key, "").options == {} and store.get(key, map_id).options["label"] == "label"
    assert store.get(key).name == "preds.csv"  # the first name is kept
    assert store.keys() == [key]


def test_missing_and_malformed_keys_are_store_missing(tmp_path):
    store = DatasetStore(tmp_path, 10**6)
    with pytest.raises(StoreMissing, match="no longer holds"):
        store.get("0" * 64)
    for bad in ("../../etc/passwd", "abc", "A" * 64, "0" * 63 + "/"):
        with pytest.raises(StoreMissing, match="not a dataset key"):
            store.get(bad)
        assert bad not in store
    key, _ = store.put(CSV, "a.csv")
    with pytest.raises(StoreMissing, match="mapping of the link is not known"):
        store.get(key, "0123456789ab")
    with pytest.raises(StoreMissing, match="not a column-mapping id"):
        store.get(key, "../x")
    assert isinstance(StoreMissing("x"), InputError)


def test_damaged_bytes_are_detected_removed_and_never_returned(tmp_path):
    store = DatasetStore(tmp_path, 10**6)
    key, _ = store.put(CSV, "a.csv")
    path = tmp_path / f"{key}.data"
    path.write_bytes(CSV.replace(b"0.8", b"0.9"))  # same size, other content
    with pytest.raises(StoreEntryDamaged, match="damaged"):
        store.get(key)
    assert key not in store and not (tmp_path / f"{key}.json").exists()
    # an upload of the same file repairs the link
    store.put(CSV, "a.csv")
    assert store.get(key).data == CSV


def test_damaged_metadata_is_reported(tmp_path):
    store = DatasetStore(tmp_path, 10**6)
    key, _ = store.put(CSV, "a.csv")
    (tmp_path / f"{key}.json").write_text("{not json")
    with pytest.raises(StoreEntryDamaged, match="missing or damaged"):
        store.get(key)
    store.put(CSV, "a.csv")  # rewritten on the next upload
    assert store.get(key).name == "a.csv"


def test_limit_evicts_least_recently_used_first(tmp_path):
    store = DatasetStore(tmp_path, 3 * 1000 + 3 * 400)  # room for three 1000-byte entries and their metadata
    keys = [store.put(blob(i), f"{i}.csv")[0] for i in range(3)]
    assert set(store.keys()) == set(keys)
    store.get(keys[0])  # entry 0 used: entry 1 is now the least recently used
    k3, _ = store.put(blob(3), "3.csv")
    assert set(store.keys()) == {keys[0], keys[2], k3}
    assert store.total_bytes() <= store.max_bytes
    with pytest.raises(StoreMissing):
        store.get(keys[1])
    assert store.keys()[0] == k3  # most recently used first


def test_eviction_uses_recorded_use_not_the_file_systems_access_time(tmp_path):
    store = DatasetStore(tmp_path, 2 * 1000 + 2 * 400)
    a, _ = store.put(blob(1), "a.csv")
    b, _ = store.put(blob(2), "b.csv")
    past = time.time() - 3600
    os.utime(tmp_path / f"{b}.data", (past, past))  # b looks old ...
    store.get(b)  # ... until it is read: a read records its use
    c, _ = store.put(blob(3), "c.csv")
    assert set(store.keys()) == {b, c}


def test_a_file_larger_than_the_limit_is_refused_and_nothing_is_evicted(tmp_path):
    store = DatasetStore(tmp_path, 5000)
    small, _ = store.put(blob(1), "small.csv")
    with pytest.raises(StoreFullError, match="larger than the upload store's limit"):
        store.put(blob(2, 6000), "big.csv")
    assert store.keys() == [small]


def test_stale_temporary_files_are_cleaned_and_fresh_ones_kept(tmp_path):
    store = DatasetStore(tmp_path, 10**6)
    stale, fresh = tmp_path / ".tmp-dead", tmp_path / ".tmp-writing"
    stale.write_bytes(b"x" * 10)
    fresh.write_bytes(b"x" * 10)
    old = time.time() - 7200
    os.utime(stale, (old, old))
    store.put(CSV, "a.csv")
    assert not stale.exists() and fresh.exists()
    assert store.total_bytes() == len(CSV) + (tmp_path / f"{store.keys()[0]}.json").stat().st_size


def test_concurrent_writers_of_the_same_and_other_mappings_lose_nothing(tmp_path):
    store = DatasetStore(tmp_path, 10**7)
    data = CSV * 200
    errors = []

    def worker(i):
        try:
            store.put(data, "same.csv", {"label": "label", "positive": str(i)})
            got = store.get(hashlib.sha256(data).hexdigest(), mapping_id({"label": "label", "positive": str(i)}))
            assert got.data == data
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    key = hashlib.sha256(data).hexdigest()
    for i in range(16):  # every mapping survived the concurrent read-modify-write of the metadata
        assert store.get(key, mapping_id({"label": "label", "positive": str(i)})).options["positive"] == str(i)
    assert not list(tmp_path.glob(".tmp-*"))


def _process_writer(root, i, n):
    store = DatasetStore(root, 10**7)
    for j in range(n):
        store.put(blob(j, 20_000), f"{j}.csv", {"label": f"l{i}"})


def test_concurrent_processes_write_whole_files(tmp_path):
    ctx = mp.get_context("fork")  # spawn would import calibviz again in each child (slow)
    procs = [ctx.Process(target=_process_writer, args=(str(tmp_path), i, 4)) for i in range(3)]
    for p in procs:
        p.start()
    store = DatasetStore(tmp_path, 10**7)
    seen_partial = False
    while any(p.is_alive() for p in procs):  # a reader racing the writers sees whole files or none
        for key in store.keys():
            try:
                store.get(key)
            except StoreEntryDamaged:
                seen_partial = True
            except StoreMissing:
                pass
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert not seen_partial
    assert len(store.keys()) == 4
    for j in range(4):
        key = hashlib.sha256(blob(j, 20_000)).hexdigest()
        assert {store.get(key, mapping_id({"label": f"l{i}"})).options["label"] for i in range(3)} == {"l0", "l1", "l2"}


def test_configuration_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIBVIZ_STORE_DIR", str(tmp_path / "s"))
    monkeypatch.setenv("CALIBVIZ_STORE_MB", "1.5")
    store = DatasetStore.from_env()
    assert store.root == tmp_path / "s" and store.root.is_dir() and store.max_bytes == int(1.5 * 1024**2)
    monkeypatch.setenv("CALIBVIZ_STORE_MB", "lots")
    with pytest.raises(InputError, match="CALIBVIZ_STORE_MB"):
        store_limit_bytes()
    monkeypatch.delenv("CALIBVIZ_STORE_DIR")
    monkeypatch.delenv("CALIBVIZ_STORE_MB")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_store_dir() == tmp_path / "cache" / "calibviz" / "uploads"
    assert store_limit_bytes() == 2048 * 1024**2
