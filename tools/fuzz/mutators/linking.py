"""``.amdgpu.info`` mutators: the tagged entries of an object-linking relocatable (llvm #192384;
docs/code-object-format.md), and the relocations that name their symbols.

Entries are walked by the documented layout ``[kind u8][len u8][payload]``, independently of
amdocc's reader.
"""

from __future__ import annotations

from ..fields import Inapplicable, get, interesting, put
from ..formats.elf import ElfView, elf_replace_section
from .registry import mutator

KINDS = tuple(range(1, 12))


def _info(data: bytes):
    elf = ElfView(data)
    section = next((s for s in elf.sections if s.name == ".amdgpu.info"), None)
    if section is None:
        raise Inapplicable("no .amdgpu.info")
    return elf, section, elf.content(section)


def _entries(body: bytes) -> list[int]:
    out, pos = [], 0
    while pos + 2 <= len(body):
        out.append(pos)
        pos += 2 + body[pos + 1]
    return out


@mutator("amdgpu-info.entry", ("co",), 4.0)
def mut_info_entry(rng, data, ctx):
    """One entry's kind, length or payload: a known kind in the wrong place, a length past the
    section or off by one, a u32 at its edges, a string offset outside .amdgpu.strtab."""
    _, section, body = _info(data)
    entries = _entries(body)
    if not entries:
        raise Inapplicable("empty .amdgpu.info")
    at = rng.choice(entries)
    out = bytearray(body)
    what = rng.choice(("kind", "len", "payload", "truncate", "duplicate"))
    if what == "kind":
        out[at] = rng.choice((*KINDS, 0, 12, 0xFF))
    elif what == "len":
        out[at + 1] = interesting(rng, 1, body[at + 1], len(body) - at - 2) & 0xFF
    elif what == "payload" and body[at + 1] >= 4:
        put(out, at + 2, 4, interesting(rng, 4, get(body, at + 2, 4), len(body)))
    elif what == "truncate":
        out = out[: rng.randint(0, len(out))]
    else:
        end = at + 2 + body[at + 1]
        out = out[:end] + out[at:end] + out[end:]
    return elf_replace_section(data, section.index, bytes(out)), f"amdgpu-info.{what}@{at}"


@mutator("amdgpu-info.reloc", ("co",), 2.0)
def mut_info_relocation(rng, data, ctx):
    """A relocation of .rela.amdgpu.info moved, or pointed at another symbol."""
    elf, section, _ = _info(data)
    rela = next((s for s in elf.sections if s.f["sh_type"] == 4 and s.f["sh_info"] == section.index), None)
    if rela is None:
        raise Inapplicable("no .rela.amdgpu.info")
    body = bytearray(elf.content(rela))
    if len(body) < 24:
        raise Inapplicable("no relocations")
    row = rng.randrange(len(body) // 24) * 24
    if rng.random() < 0.5:
        put(body, row, 8, interesting(rng, 8, get(body, row, 8), section.f["sh_size"]))
    else:
        info = get(body, row + 8, 8)
        put(body, row + 8, 8, (interesting(rng, 4, info >> 32) << 32) | (info & 0xFFFFFFFF))
    return elf_replace_section(data, rela.index, bytes(body)), f"amdgpu-info.reloc@{row}"
