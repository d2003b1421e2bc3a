"""The fuzzer's own minimal views of the formats amdocc reads, independent of amdocc's parsers.

One module per container layer (ELF, MessagePack metadata, offload bundles, compressed bundles,
OffloadBinary, PE/COFF): tolerant readers that find the fields a mutator edits, and builders
that put a changed piece back with its sizes and offsets right. Which host sections carry
device code ties the host formats to the containers inside them.
"""

from __future__ import annotations

BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")


FATBIN_SECTIONS = (".hip_fatbin", ".hip_fat", ".llvm.offloading")
BUNDLE_SECTION_PREFIX = "__CLANG_OFFLOAD_BUNDLE__"
