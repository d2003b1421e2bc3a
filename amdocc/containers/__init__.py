"""Any file or buffer → AMDGPU code-object blobs with their origins. Knows nothing about kernels."""

from .model import DEFAULT_LIMITS, NOT_A_WHOLE_IMAGE, Blob, Failed, Limits, NotWalked, Skipped, Source
from .pieces import Members, Piece, part_path, plan, scan_part
from .scan import iter_files, recognised, scan, scan_file

__all__ = [
    "DEFAULT_LIMITS",
    "NOT_A_WHOLE_IMAGE",
    "Blob",
    "Failed",
    "Limits",
    "Members",
    "NotWalked",
    "Piece",
    "Skipped",
    "Source",
    "iter_files",
    "part_path",
    "plan",
    "recognised",
    "scan",
    "scan_file",
    "scan_part",
]
