"""Check amdocc against LLVM 22 over a set of code-object files, field by field.

Used by the fixture tier, the fresh-object tier and the real-corpus test. Every code object
must be a bare AMDGPU ELF file (containers are checked separately against extracted entries).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from . import llvm22
from .compare import compare_descriptor, compare_metadata, count_leaves, feature_mismatches

ABI_TO_CO = {0: 2, 1: 3, 2: 4, 3: 5, 4: 6}


@dataclass
class Report:
    files: int = 0
    kernels: int = 0
    metadata_fields: int = 0  # values compared, all that LLVM printed (else a mismatch)
    metadata_notes: int = 0  # metadata notes LLVM printed (a device link writes one per LTO partition)
    descriptor_fields: int = 0  # directives compared, all that encode something
    mismatches: list[str] = field(default_factory=list)
    # Processors whose descriptors LLVM cannot decode (llvm-objdump has no disassembler for them),
    # and how many kernels that left without a descriptor oracle (counted apart, never as passed).
    no_descriptor_oracle: dict[str, str] = field(default_factory=dict)
    kernels_without_descriptor_oracle: int = 0
    # LLVM's own readings, for tests that check a rule on them: {(file, symbol): {...}}.
    llvm_values: dict = field(default_factory=dict)

    @property
    def kernels_with_descriptor_oracle(self) -> int:
        return self.kernels - self.kernels_without_descriptor_oracle


def merged_documents(docs: list[dict]) -> tuple[dict, list[str]]:
    """One metadata document from the several LLVM printed for one file (a device link writes a
    note per LTO partition): the first document with the kernels of all of them, in note order,
    and the top-level values the later ones state differently (none, in what LLVM builds)."""
    if len(docs) == 1:
        return docs[0], []
    whole = dict(docs[0])
    whole["amdhsa.kernels"] = [k for doc in docs for k in doc.get("amdhsa.kernels") or []]
    disagreements = [
        f"LLVM's metadata note {number} says {key} {value!r}, note 1 {whole.get(key)!r}"
        for number, doc in enumerate(docs[1:], start=2)
        for key, value in doc.items()
        if key != "amdhsa.kernels" and whole.get(key) != value
    ]
    return whole, disagreements


def check_files(paths: list[str], chunk: int = 400) -> Report:
    import amdocc  # the code under test, imported only here

    report = Report()
    parsed = {}
    for p in paths:
        cos = amdocc.load(p)
        if len(cos) != 1:
            report.mismatches.append(f"{p}: amdocc found {len(cos)} code objects, expected 1")
            continue
        parsed[p] = cos[0]
    report.files = len(parsed)

    # 1. Header and metadata, from llvm-readelf (any mix of processors per run).
    names = list(parsed)
    for i in range(0, len(names), chunk):
        group = names[i : i + chunk]
        for name, seen in llvm22.readelf(group).items():
            co = parsed[name]
            hdr = seen["header"]
            co_version = ABI_TO_CO.get(hdr["abi_version"])
            if co_version != co.code_object_version:
                report.mismatches.append(f"{name}: CO version LLVM {co_version}, amdocc {co.code_object_version}")
            if hdr["processor"] != co.processor:
                report.mismatches.append(f"{name}: processor LLVM {hdr['processor']}, amdocc {co.processor}")
            report.mismatches += [
                f"{name}: {m}" for m in feature_mismatches(co.target_id, hdr["features"], co_version or 0)
            ]
            docs = seen["metadata"]
            report.metadata_notes += len(docs)
            if bool(docs) != (co.metadata is not None):
                report.mismatches.append(f"{name}: LLVM shows {len(docs)} metadata notes")
            elif docs:
                whole, disagreements = merged_documents(docs)
                report.mismatches += [f"{name}: {m}" for m in disagreements]
                found, compared = compare_metadata(co.metadata, whole)
                expected = count_leaves(whole)
                report.metadata_fields += compared
                report.mismatches += [f"{name}: metadata {m}" for m in found]
                if not found and (compared != expected or compared == 0):
                    report.mismatches.append(
                        f"{name}: compared {compared} of the {expected} metadata values LLVM printed"
                    )
                for k in whole.get("amdhsa.kernels") or []:
                    report.llvm_values.setdefault((name, k.get(".symbol")), {})["metadata"] = k

    # 2. Descriptors, from llvm-objdump, one run per processor (see llvm22.objdump_descriptors).
    by_processor = defaultdict(list)
    for name, co in parsed.items():
        by_processor[co.processor].append(name)
    for processor, group_names in by_processor.items():
        for i in range(0, len(group_names), chunk):
            group = group_names[i : i + chunk]
            symbols = sorted({k.symbol for n in group for k in parsed[n].kernels})
            try:
                dumped = llvm22.objdump_descriptors(group, symbols)
            except llvm22.OracleUnavailable as exc:
                report.no_descriptor_oracle[processor] = str(exc)
                without = sum(len(parsed[n].kernels) for n in group)
                report.kernels += without
                report.kernels_without_descriptor_oracle += without
                continue
            for name in group:
                seen = dumped.get(name, {})
                for k in parsed[name].kernels:
                    report.kernels += 1
                    if k.descriptor is None:
                        if k.symbol in seen:
                            report.mismatches.append(f"{name}: {k.symbol}: LLVM decodes a descriptor amdocc lacks")
                        continue
                    if k.symbol not in seen:
                        report.mismatches.append(f"{name}: {k.symbol}: llvm-objdump printed no descriptor")
                        continue
                    found, compared, expected = compare_descriptor(k.descriptor.as_dict(), seen[k.symbol])
                    report.descriptor_fields += compared
                    report.mismatches += [f"{name}: {k.symbol}: {m}" for m in found]
                    if not found and (compared != expected or compared == 0):
                        report.mismatches.append(
                            f"{name}: {k.symbol}: compared {compared} of the {expected} "
                            "descriptor fields llvm-objdump printed"
                        )
                    report.llvm_values.setdefault((name, k.symbol), {})["descriptor"] = seen[k.symbol]
    return report
