"""How each container amdocc reads starts: its magic, and the test of a file's first bytes.

Kept apart from the readers so that telling what a file is imports none of them: the scanner
imports a reader when it meets its magic, and a plain code object needs none (start-up cost,
docs/performance.md). Each reader re-exports its own magic from here.
"""

from __future__ import annotations

from ..binary import Buffer

# How much of a file or member is peeked at to tell what it is (a tar header's magic sits at 257).
PEEK = 512

# Zip (a wheel): a local file header, or an empty archive.
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
# Unix ar (a static library), and its thin form (member names only).
AR_MAGIC = b"!<arch>\n"
THIN_MAGIC = b"!<thin>\n"
# Tar: 512-byte blocks, "ustar" at 257 of a header; gzip around it for a .tar.gz.
BLOCK = 512
GZIP_MAGIC = b"\x1f\x8b"
# Clang offload bundle, its compressed form, LLVM's OffloadBinary: the containers of a region.
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
OFFLOAD_MAGIC = b"\x10\xff\x10\xad"
CONTAINER_MAGICS = (BUNDLE_MAGIC, CCOB_MAGIC, OFFLOAD_MAGIC)
# TheRock's kpack archive.
KPACK_MAGIC = b"KPAK"
# A PE image's DOS stub; a bare COFF object has no magic, only a plausible file header (20 bytes:
# machine, section count, ..., optional header size at 16) for one of these machines.
COFF_HEADER_SIZE = 20
COFF_MACHINES = {0x8664: "x86-64", 0xAA64: "arm64", 0x14C: "i386"}


def is_zip(head: bytes) -> bool:
    return head.startswith(ZIP_MAGICS)


def is_ar(head: bytes) -> bool:
    return head.startswith((AR_MAGIC, THIN_MAGIC))


def is_gzip(head: bytes) -> bool:
    return head.startswith(GZIP_MAGIC)


def is_tar(head: bytes) -> bool:
    """A ustar (POSIX, GNU or pax) header block with a right checksum."""
    return len(head) >= BLOCK and head[257:262] == b"ustar" and tar_checksum_matches(head[:BLOCK])


def tar_checksum_matches(block: bytes) -> bool:
    """A tar header's checksum: the sum of the block's bytes with the checksum field read as
    spaces, unsigned (POSIX) or signed (some old writers)."""
    field = block[148:156].split(b"\0", 1)[0].strip(b" ")
    try:
        stored = int(field, 8)
    except ValueError:
        return False
    rest = block[:148] + b" " * 8 + block[156:]
    unsigned = sum(rest)
    signed = unsigned - 256 * sum(1 for b in rest if b & 0x80)
    return stored in (unsigned, signed)


def is_pe(buf: Buffer) -> bool:
    head: bytes = buf[:2]
    return head == b"MZ"


def looks_like_coff_object(buf: Buffer) -> bool:
    if len(buf) < COFF_HEADER_SIZE:
        return False
    machine = int.from_bytes(buf[0:2], "little")
    count = int.from_bytes(buf[2:4], "little")
    optional = int.from_bytes(buf[16:18], "little")
    return machine in COFF_MACHINES and 0 < count < 4096 and optional == 0
