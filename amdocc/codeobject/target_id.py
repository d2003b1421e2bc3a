"""Target ids: processor plus the xnack/sramecc feature states, from e_flags or from text.

e_flags encode the processor in bits 0-7 (EF_AMDGPU_MACH) for CO v3+, and the two features in a
version-dependent way (docs/code-object-format.md §1.2): v3 has one on/off bit each, v4+ a two-bit
selector (unsupported, any, off, on), v6+ adds the generic version in bits 24-31. CO v2 keeps the
processor in a note instead (see notes.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..caches import cached
from ..targets import NOT_KNOWN, Target, strip_triple, target_by_mach

EF_MACH = 0xFF
# v3: single bits
EF_V3_XNACK, EF_V3_SRAMECC = 0x100, 0x200
# v4+: selectors
EF_V4_XNACK, EF_V4_SRAMECC = 0x300, 0xC00
SELECTOR = {0: None, 1: "any", 2: "off", 3: "on"}  # 0 = unsupported
EF_GENERIC_VERSION_SHIFT = 24
# v2: xnack and trap-handler bits only
EF_V2_XNACK, EF_V2_TRAP_HANDLER = 0x01, 0x02

KNOWN_BITS = {
    2: EF_V2_XNACK | EF_V2_TRAP_HANDLER,
    3: EF_MACH | EF_V3_XNACK | EF_V3_SRAMECC,
    4: EF_MACH | EF_V4_XNACK | EF_V4_SRAMECC,
    5: EF_MACH | EF_V4_XNACK | EF_V4_SRAMECC,
    6: EF_MACH | EF_V4_XNACK | EF_V4_SRAMECC | (0xFF << EF_GENERIC_VERSION_SHIFT),
}


@dataclass(frozen=True, slots=True)
class TargetId:
    """A processor and its feature states: "on", "off", "any", or None (unsupported/unknown)."""

    processor: str
    sramecc: str | None = None
    xnack: str | None = None

    def __str__(self) -> str:
        # Canonical form: features in alphabetical order, "any" and unsupported omitted.
        out = self.processor
        for name, state in (("sramecc", self.sramecc), ("xnack", self.xnack)):
            if state == "on":
                out += f":{name}+"
            elif state == "off":
                out += f":{name}-"
        return out

    @classmethod
    def parse(cls, text: str) -> TargetId:
        """Parse 'gfx942:sramecc+:xnack-', the triple-prefixed form, or the v2/v3 'gfx906+xnack'."""
        text = strip_triple(text)
        features: dict[str, str] = {}
        if ":" in text:
            processor, *parts = text.split(":")
            for part in parts:
                if part[-1:] in "+-" and part[:-1]:
                    features[_feature_name(part[:-1])] = "on" if part[-1] == "+" else "off"
        else:
            # v2/v3 syntax: processor followed by "+feature" for each feature that is on.
            processor, *parts = text.split("+")
            for part in parts:
                if part:
                    features[_feature_name(part)] = "on"
        return cls(processor.lower(), features.get("sramecc"), features.get("xnack"))

    def matches(self, device: TargetId) -> bool:
        """True when code for this target id may run on ``device`` (same processor, and each
        feature either "any" here or equal to the device's state)."""
        if self.processor != device.processor:
            return False
        for mine, theirs in ((self.sramecc, device.sramecc), (self.xnack, device.xnack)):
            if mine in ("on", "off") and theirs in ("on", "off") and mine != theirs:
                return False
        return True


def _feature_name(name: str) -> str:
    name = name.lower()
    return "sramecc" if name in ("sramecc", "sram-ecc") else name


@dataclass(frozen=True, slots=True)
class DecodedFlags:
    target_id: TargetId
    mach: int | None
    target: Target | None
    generic_version: int
    problems: tuple[str, ...]


@cached(maxsize=512)  # a library repeats a few words thousands of times
def decode_e_flags(flags: int, co_version: int) -> DecodedFlags:
    """Target id from a v3+ e_flags word (v2 keeps the processor in a note; see decode_v2_flags)."""
    problems = []
    mach = flags & EF_MACH
    target = target_by_mach(mach)
    processor = target.name if target else f"unknown-mach-{mach:#04x}"
    if target is None:
        problems.append(f"EF_AMDGPU_MACH {mach:#04x} is {NOT_KNOWN}; it is read as no other processor")
    xnack: str | None
    sramecc: str | None
    if co_version == 3:
        xnack = "on" if flags & EF_V3_XNACK else "off"
        sramecc = "on" if flags & EF_V3_SRAMECC else "off"
    else:
        xnack = SELECTOR[(flags & EF_V4_XNACK) >> 8]
        sramecc = SELECTOR[(flags & EF_V4_SRAMECC) >> 10]
    if target is not None:
        # A feature the processor does not have cannot be on, off or any.
        for name, state, supported in (("xnack", xnack, target.xnack), ("sramecc", sramecc, target.sramecc)):
            if not supported and state is not None and (co_version > 3 or state == "on"):
                problems.append(f"e_flags sets {name} {state}, but {target.name} has no {name}")
        if co_version == 3:
            xnack = xnack if target.xnack else None
            sramecc = sramecc if target.sramecc else None
    generic_version = flags >> EF_GENERIC_VERSION_SHIFT if co_version >= 6 else 0
    if target is not None and target.is_generic and generic_version == 0:
        problems.append(f"generic processor {target.name} without a generic version in e_flags")
    if target is not None and not target.is_generic and generic_version:
        problems.append(f"generic version {generic_version} set for non-generic {target.name}")
    unknown = flags & ~KNOWN_BITS.get(co_version, KNOWN_BITS[6])
    if unknown:
        problems.append(f"unknown e_flags bits {unknown:#x} for code-object v{co_version}")
    return DecodedFlags(TargetId(processor, sramecc, xnack), mach, target, generic_version, tuple(problems))
