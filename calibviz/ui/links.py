"""Uploads kept for links: the dashboard's side of :mod:`calibviz.io.store`.

Every file the dashboard loads from the user (an upload, a re-mapped file, the file of ``calibviz app FILE``)
is kept in the server-side store under the SHA-256 of its bytes with the column mapping it was loaded with,
so that ``?data=upload:<sha256>&map=<id>`` rebuilds the same predictions in another browser or after a
restart (:func:`calibviz.ui.session.open_stored`). Demos are not stored: their link names them.
"""
from __future__ import annotations

import logging

from ..io.store import DatasetStore, StoreError

_LOG = logging.getLogger(__name__)

__all__ = ["UPLOAD_PREFIX", "upload_store", "keep_upload", "link_data"]

#: ``data=upload:<digest>`` in a link: the data came from an upload, identified by its content digest.
UPLOAD_PREFIX = "upload:"


def upload_store() -> DatasetStore:
    """The store configured by ``CALIBVIZ_STORE_DIR`` / ``CALIBVIZ_STORE_MB`` (read at each call: cheap)."""
    return DatasetStore.from_env()


def keep_upload(data: bytes, name: str, options: dict) -> dict:
    """Keep a loaded file for links; returns the source fields ``store_key``, ``map`` and, when the file
    could not be kept, ``store_note`` (why links to it will not open elsewhere). Never raises: the data is
    loaded in this session either way."""
    try:
        key, map_id = upload_store().put(data, name, options)
    except StoreError as exc:
        return {"store_key": "", "map": "", "store_note": str(exc)}
    except OSError as exc:  # a full disk or a read-only folder: the session works, links do not
        _LOG.exception("cannot keep %s in the upload store", name)
        return {"store_key": "", "map": "", "store_note": f"the server could not keep a copy of {name} for links "
                f"({exc.strerror or exc}); links to this view open only in this browser tab."}
    return {"store_key": key, "map": map_id}


def link_data(source: dict) -> dict:
    """The URL parameters that name the data of ``source`` (``data`` and, for a re-mapped upload, ``map``)."""
    if source.get("demo"):
        return {"data": source["demo"]}
    if source.get("store_key"):
        return {"data": UPLOAD_PREFIX + source["store_key"], "map": source.get("map") or None}
    if source.get("digest"):  # not kept (too large for the store): the link says it is an upload all the same
        return {"data": UPLOAD_PREFIX + source["digest"]}
    return {}
