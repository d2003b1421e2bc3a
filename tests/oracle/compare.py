"""Compare amdocc's view of a kernel with LLVM's, field by field; return readable mismatches."""

from __future__ import annotations

import math

# Directives objdump prints that the descriptor does not encode: the disassembler always writes 0
# so that reassembling its text reproduces the same descriptor bits.
NOT_ENCODED = {"reserve_vcc", "reserve_flat_scratch", "reserve_xnack_mask"}
# objdump names bit 0 of rsrc2 by its pre-gfx940 meaning on targets without architected flat scratch.
ALIASES = {"system_sgpr_private_segment_wavefront_offset": "enable_private_segment"}


def descriptor_mismatches(amdocc_descriptor: dict, directives: dict) -> list[str]:
    return compare_descriptor(amdocc_descriptor, directives)[0]


def compare_descriptor(amdocc_descriptor: dict, directives: dict) -> tuple[list[str], int, int]:
    """(mismatches, fields compared, fields LLVM printed that encode something): a caller asserts
    the two counts are equal and not zero, so a comparison can never pass by comparing nothing."""
    if "__error__" in directives:
        return [f"llvm-objdump could not decode: {directives['__error__']}"], 0, 1
    out, compared, expected = [], 0, 0
    for name, value in directives.items():
        if name in NOT_ENCODED:
            continue
        expected += 1
        key = ALIASES.get(name, name)
        if key not in amdocc_descriptor:
            out.append(f".amdhsa_{name} {value}: amdocc does not decode this field")
            continue
        compared += 1
        if amdocc_descriptor[key] != value:
            out.append(f".amdhsa_{name}: llvm-objdump {value}, amdocc {amdocc_descriptor[key]}")
    return out, compared, expected


def same_value(a, b) -> bool:
    """Deep equality where msgpack and YAML may differ only in container types."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def metadata_mismatches(amdocc_metadata: dict, llvm_metadata: dict, path: str = "") -> list[str]:
    return compare_metadata(amdocc_metadata, llvm_metadata, path)[0]


def count_leaves(value) -> int:
    """The values of a metadata document (an empty list counts as one value)."""
    if isinstance(value, dict):
        return sum(count_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_leaves(v) for v in value) or 1
    return 1


def compare_metadata(amdocc_metadata, llvm_metadata, path: str = "") -> tuple[list[str], int]:
    """(mismatches, leaf values compared); when they agree the count is count_leaves(LLVM's)."""
    out, compared = [], 0
    if isinstance(amdocc_metadata, dict) and isinstance(llvm_metadata, dict):
        for k in sorted(set(amdocc_metadata) | set(llvm_metadata), key=str):
            if k not in llvm_metadata:
                out.append(f"{path}{k}: only amdocc has it")
            elif k not in amdocc_metadata:
                out.append(f"{path}{k}: only LLVM has it")
            else:
                more, n = compare_metadata(amdocc_metadata[k], llvm_metadata[k], f"{path}{k}.")
                out += more
                compared += n
    elif (
        isinstance(amdocc_metadata, list)
        and isinstance(llvm_metadata, list)
        and len(amdocc_metadata) == len(llvm_metadata)
        and llvm_metadata
    ):
        for i, (x, y) in enumerate(zip(amdocc_metadata, llvm_metadata, strict=True)):
            more, n = compare_metadata(x, y, f"{path}[{i}].")
            out += more
            compared += n
    else:
        compared = count_leaves(llvm_metadata) if same_value(amdocc_metadata, llvm_metadata) else 0
        if not compared:
            out.append(f"{path.rstrip('.')}: amdocc {amdocc_metadata!r}, LLVM {llvm_metadata!r}")
    return out, compared


LLVM_FEATURE_STATE = {"": "any", "+": "on", "-": "off"}


def target_features_from_readelf(features: list[str], co_version: int) -> dict:
    """llvm-readelf's feature words → {"xnack": state, "sramecc": state} (absent = unsupported).

    For v4+ it prints "xnack" for any, "xnack+" for on, "xnack-" for off; for v3 "xnack" means on.
    """
    out = {}
    for word in features:
        base = word.rstrip("+-")
        if base in ("xnack", "sramecc"):
            suffix = word[len(base) :]
            out[base] = "on" if co_version == 3 and not suffix else LLVM_FEATURE_STATE[suffix]
    return out


def feature_mismatches(target_id, features: list[str], co_version: int) -> list[str]:
    """amdocc's feature states against the words llvm-readelf printed after the processor.

    v3 has one bit per feature and llvm-readelf names only those that are set, so a feature
    amdocc reads as "off" is simply absent there. v2 keeps no processor or features in e_flags
    beyond the xnack bit, and llvm-readelf prints none."""
    if co_version == 2:
        return []
    mine = {
        k: v
        for k, v in (("xnack", target_id.xnack), ("sramecc", target_id.sramecc))
        if v and (co_version != 3 or v == "on")
    }
    llvm = target_features_from_readelf(features, co_version)
    return [] if mine == llvm else [f"features: LLVM {features}, amdocc {mine}"]


def isa_version_from_readelf(text: str):
    """The (major, minor, stepping) of a v2 NT_AMD_HSA_ISA_VERSION note as llvm-readelf shows it."""
    import re

    m = re.search(r"Major: (\d+), Minor: (\d+), Stepping: (\d+)", text)
    return tuple(int(x) for x in m.groups()) if m else None
