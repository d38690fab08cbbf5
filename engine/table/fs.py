"""File access for table data: local paths and object-store URIs behind one small API.

Data files are named by absolute local paths or URIs (``s3a://``, ``hdfs://``, ``file://``);
pyarrow's filesystems do the work so the same code runs on a laptop and against object
storage. Spark spells S3 ``s3a://``; pyarrow wants ``s3://``, so URIs are translated here.
Metadata (snapshots, pointers, locks) always lives in the local workspace, never here.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import shutil

import pyarrow.fs as pafs

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_GLOB_CHARS = set("*?[")


def is_uri(path: str) -> bool:
    """True for ``scheme://...`` paths other than ``file://``."""
    m = _SCHEME.match(path)
    return bool(m) and m.group(1).lower() != "file"


def local_path(path: str) -> str:
    """Strip a ``file://`` prefix; other paths are returned unchanged."""
    return path[len("file://"):] if path.lower().startswith("file://") else path


def normalize(path: str) -> str:
    """The canonical spelling stored in snapshots: absolute local path, or the URI as given."""
    if is_uri(path):
        return path.rstrip("/") if not path.endswith("://") else path
    return os.path.abspath(os.path.expanduser(local_path(path)))


def filesystem(path: str) -> "tuple[pafs.FileSystem, str]":
    """(pyarrow filesystem, path inside it) for a local path or URI."""

    if not is_uri(path):
        return pafs.LocalFileSystem(), normalize(path)
    uri = re.sub(r"^s3[an]://", "s3://", path)
    return pafs.FileSystem.from_uri(uri)


def join(root: str, *parts: str) -> str:
    if is_uri(root):
        return "/".join([root.rstrip("/"), *[p.strip("/") for p in parts]])
    return os.path.join(root, *parts)


def is_under(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or inside it (by spelling: normalize both first).

    >>> is_under("/t/data/a.parquet", "/t/data/"), is_under("/t/data2/a", "/t/data")
    (True, False)
    """
    root = root.rstrip("/")
    return path == root or path.startswith(root + "/")


def has_glob(path: str) -> bool:
    return any(ch in path for ch in _GLOB_CHARS)


def exists(path: str) -> bool:
    if not is_uri(path):
        return os.path.exists(local_path(path))

    fs, inner = filesystem(path)
    return fs.get_file_info(inner).type != pafs.FileType.NotFound


def is_dir(path: str) -> bool:
    if not is_uri(path):
        return os.path.isdir(local_path(path))

    fs, inner = filesystem(path)
    return fs.get_file_info(inner).type == pafs.FileType.Directory


def size(path: str) -> int:
    if not is_uri(path):
        return os.path.getsize(local_path(path))
    fs, inner = filesystem(path)
    return int(fs.get_file_info(inner).size or 0)


def mtime(path: str) -> float:
    """Modification time in seconds since the epoch (0 when the store has none)."""
    if not is_uri(path):
        return os.path.getmtime(local_path(path))
    fs, inner = filesystem(path)
    info = fs.get_file_info(inner)
    return info.mtime.timestamp() if info.mtime is not None else 0.0


def makedirs(path: str) -> None:
    if not is_uri(path):
        os.makedirs(local_path(path), exist_ok=True)
        return
    fs, inner = filesystem(path)
    fs.create_dir(inner, recursive=True)


def delete_file(path: str) -> None:
    if not is_uri(path):
        os.remove(local_path(path))
        return
    fs, inner = filesystem(path)
    fs.delete_file(inner)


def delete_dir(path: str) -> None:
    """Remove a directory tree; missing directories are fine."""
    if not is_uri(path):
        shutil.rmtree(local_path(path), ignore_errors=True)
        return
    fs, inner = filesystem(path)
    try:
        fs.delete_dir(inner)
    except FileNotFoundError:
        pass


def _hidden(name: str) -> bool:
    # Spark and Hive conventions: _SUCCESS, _committed_*, .crc files, _temporary dirs
    return name.startswith("_") or name.startswith(".")


def list_files(root: str, recursive: bool = True, include_hidden: bool = False) -> list[str]:
    """Every file under ``root`` (a file itself is returned alone), sorted naturally."""
    out: list[str] = []
    if not is_uri(root):
        root = normalize(root)
        if os.path.isfile(root):
            return [root]
        for dirpath, dirnames, filenames in os.walk(root):
            if not include_hidden:
                dirnames[:] = [d for d in dirnames if not _hidden(d)]
            else:
                dirnames[:] = list(dirnames)
            if not recursive:
                dirnames[:] = []
            out.extend(os.path.join(dirpath, f) for f in filenames
                       if include_hidden or not _hidden(f))
        return sorted(out, key=natural_key)

    fs, inner = filesystem(root)
    prefix = root[: len(root) - len(inner)] if root.endswith(inner) else root.split("://")[0] + "://"
    info = fs.get_file_info(inner)
    if info.type == pafs.FileType.File:
        return [root]
    for item in fs.get_file_info(pafs.FileSelector(inner, recursive=recursive, allow_not_found=True)):
        if item.type != pafs.FileType.File:
            continue
        rel = item.path[len(inner):].lstrip("/")
        if not include_hidden and any(_hidden(part) for part in rel.split("/")):
            continue
        out.append(prefix + item.path)
    return sorted(out, key=natural_key)


def expand(pattern: str) -> list[str]:
    """Files matching a path, a folder (recursively) or a glob, sorted naturally."""
    if not has_glob(pattern):
        return list_files(pattern) if exists(pattern) else []
    if not is_uri(pattern):
        local = os.path.expanduser(local_path(pattern))
        root = glob_root(local)
        hits: list[str] = []
        for hit in glob.glob(local, recursive=True):
            if not through_directory_link(hit, root):
                hits.extend(list_files(hit) if os.path.isdir(hit) else [normalize(hit)])
        return unique_files(hits)
    # object stores: list below the glob-free prefix, then match
    head = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    base = head.rsplit("/", 1)[0]
    return [f for f in list_files(base) if fnmatch.fnmatch(f, pattern)]


def glob_root(pattern: str) -> str:
    """The folder of a local glob before its first component holding a glob character."""
    parts = pattern.split(os.sep)
    fixed = []
    for part in parts:
        if has_glob(part):
            break
        fixed.append(part)
    return os.sep.join(fixed) or os.curdir


def through_directory_link(path: str, root: str) -> bool:
    """Whether ``path`` reaches below ``root`` through a symbolic link to a folder.

    A recursive glob follows such links (``self -> .`` loops, ``latest -> ../2024-05-01``
    aliases), which would register the same file several times; the folder form of a
    source (:func:`list_files`) never follows them, and neither does a glob."""
    rel = os.path.relpath(path, root)
    if rel.startswith(os.pardir):
        return False
    current = root
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current) and os.path.isdir(current):
            return True
    return False


def unique_files(paths: list[str]) -> list[str]:
    """``paths`` sorted naturally, each file once: of two names of one file (a hard link,
    or a symbolic link to a file) the first in that order is kept."""
    out: list[str] = []
    seen: set[tuple[int, int]] = set()
    for path in sorted(set(paths), key=natural_key):
        stat = os.stat(path)
        if (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            out.append(path)
    return out


def natural_key(path: str) -> list:
    """Sort key treating digit runs as numbers: part-2 < part-10."""
    return [int(tok) if tok.isdigit() else tok for tok in re.split(r"(\d+)", path)]
