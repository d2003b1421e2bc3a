"""One AMDGPU code object (an ELF) → CodeObject with decoded, cross-checked kernels."""

from .descriptor import Descriptor
from .model import CodeObject, Finding, Kernel, Resources
from .reader import NotAnHsaCodeObject, parse_code_object
from .target_id import TargetId

__all__ = [
    "CodeObject",
    "Descriptor",
    "Finding",
    "Kernel",
    "NotAnHsaCodeObject",
    "Resources",
    "TargetId",
    "parse_code_object",
]
