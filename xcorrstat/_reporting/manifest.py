"""The manifest of a set of files written into a folder: its format, written and read.

A manifest is a small JSON file beside the files it names, each with its size and SHA-256
(:mod:`xcorrstat._reporting.folder` writes and checks it). It may also name the temporary files of
a write under way, so that a later write removes those an interrupted one left.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MANIFEST_FORMAT", "MANIFEST_LIMIT", "TEMP_PREFIX", "manifest_bytes", "parse_manifest", "version_of"]

#: Manifest format, in every manifest's ``format`` field.
MANIFEST_FORMAT = "xcorrstat-manifest-1"

#: Largest manifest read (a bigger file under that name is not one of ours).
MANIFEST_LIMIT = 1 << 20

#: Prefix of the temporary files written beside the files (``.xcorrstat-<token>-<name>``).
TEMP_PREFIX = ".xcorrstat-"


def version_of(data: bytes) -> dict[str, Any]:
    """The version of a file's content a manifest records: its size and SHA-256."""
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def manifest_bytes(files: Mapping[str, list[dict[str, Any]]], temporary: Sequence[str] = ()) -> bytes:
    """The manifest naming ``files`` (name to the versions recorded) and the ``temporary`` files, as bytes."""
    from .._version import __version__

    doc: dict[str, Any] = {"format": MANIFEST_FORMAT, "written_by": f"xcorrstat {__version__}",
                           "note": "the files xcorrstat wrote here; --overwrite replaces only these",
                           "files": {name: files[name] for name in sorted(files)}}
    if temporary:
        doc["temporary"] = sorted(temporary)
    return (json.dumps(doc, indent=1) + "\n").encode("utf-8")


def parse_manifest(data: bytes) -> tuple[dict[str, list[dict[str, Any]]], list[str]] | None:
    """Files and temporary files of a manifest, or None when ``data`` is not one."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT or not isinstance(doc.get("files"), dict):
        return None
    files, temporary = doc["files"], doc.get("temporary", [])
    plain = all(isinstance(n, str) and os.path.basename(n) == n and n not in ("", ".", "..") for n in [*files, *temporary])
    versions = all(isinstance(v, list) and all(isinstance(x, dict) and isinstance(x.get("size"), int)
                                               and isinstance(x.get("sha256"), str) for x in v)
                   for v in files.values())
    if not (plain and versions and isinstance(temporary, list)):
        return None
    return files, [t for t in temporary if t.startswith(TEMP_PREFIX)]
