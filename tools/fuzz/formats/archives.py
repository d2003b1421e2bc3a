"""Static libraries (``ar``) and source distributions (tar, gzip tar) around the fixtures: a
builder for each, the member table, and member replacement. The ar side is written from the
format (60-byte headers, decimal sizes, GNU ``//`` long names); the tar side is Python's tarfile
(GNU format, so long names ride in ``L`` members). Neither uses amdocc's readers.
"""

from __future__ import annotations

import gzip
import io
import tarfile

from ..fields import Inapplicable
from .elf import Rec

AR_MAGIC = b"!<arch>\n"
GZIP_MAGIC = b"\x1f\x8b"
_MEMBERS_MAX = 256


def is_tar(data: bytes) -> bool:
    return data[257:262] == b"ustar"


def build_ar(members: list[tuple[str, bytes]]) -> bytes:
    """A GNU ar archive (long names in the ``//`` member)."""
    table = b"".join(name.encode() + b"/\n" for name, _ in members if len(name) > 15)
    out = AR_MAGIC
    if table:
        out += _ar_header(b"//", len(table)) + table + (b"\n" if len(table) % 2 else b"")
    at = 0
    for name, data in members:
        if len(name) > 15:
            field = b"/" + str(at).encode()
            at += len(name) + 2
        else:
            field = name.encode() + b"/"
        out += _ar_header(field, len(data)) + data + (b"\n" if len(data) % 2 else b"")
    return out


def _ar_header(name: bytes, size: int) -> bytes:
    return (
        name.ljust(16)
        + b"0".ljust(12)
        + b"0".ljust(6)
        + b"0".ljust(6)
        + b"644".ljust(8)
        + str(size).encode().ljust(10)
        + b"`\n"
    )


def ar_members(data: bytes) -> list[Rec]:
    """The members (not ``//``): Rec(index, header offset, {"start", "size"}, name)."""
    if not data.startswith(AR_MAGIC):
        raise Inapplicable("not an ar archive")
    pos, out, table = len(AR_MAGIC), [], b""
    while pos + 60 <= len(data) and len(out) < _MEMBERS_MAX:
        header = data[pos : pos + 60]
        if header[58:60] != b"`\n" or not header[48:58].strip().isdigit():
            raise Inapplicable("damaged ar header")
        size = int(header[48:58].strip())
        raw = header[:16].rstrip()
        start = pos + 60
        if raw == b"//":
            table = data[start : start + size]
        else:
            if raw.startswith(b"/") and raw[1:].isdigit():
                name = table[int(raw[1:]) :].split(b"/\n", 1)[0]
            else:
                name = raw.rstrip(b"/")
            out.append(Rec(len(out), pos, {"start": start, "size": size}, name.decode("latin-1")))
        pos = start + size + (size & 1)
    return out


def ar_replace(data: bytes, index: int, new: bytes) -> bytes:
    members = ar_members(data)
    return build_ar(
        [(m.name, new if m.index == index else data[m.f["start"] : m.f["start"] + m.f["size"]]) for m in members]
    )


def build_tar(members: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def tar_members(data: bytes) -> list[Rec]:
    """The file members: Rec(index, header offset, {"start", "size"}, name)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as t:
            infos = [i for i in t.getmembers() if i.isfile()][:_MEMBERS_MAX]
    except (tarfile.TarError, EOFError, ValueError, OSError) as exc:
        raise Inapplicable(f"unreadable tar: {exc}") from None
    return [
        Rec(i, info.offset, {"start": info.offset_data, "size": info.size}, info.name) for i, info in enumerate(infos)
    ]


def tar_replace(data: bytes, index: int, new: bytes) -> bytes:
    members = tar_members(data)
    return build_tar(
        [(m.name, new if m.index == index else data[m.f["start"] : m.f["start"] + m.f["size"]]) for m in members]
    )


def gzip_of(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)  # the same bytes every time: the seed contract


def gunzip(data: bytes, limit: int = 64 << 20) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(limit + 1)
    except (OSError, EOFError) as exc:
        raise Inapplicable(f"unreadable gzip: {exc}") from None
    if len(out) > limit:
        raise Inapplicable("gzip expands past the fuzzer's limit")
    return out
