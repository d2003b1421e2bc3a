"""Any file or buffer → AMDGPU code-object blobs with their origins. Knows nothing about kernels."""
from .model import DEFAULT_LIMITS, Blob, Failed, Limits, Skipped
from .pieces import Piece, plan, scan_piece
from .scan import iter_files, recognised, scan, scan_file

__all__ = ["Blob", "DEFAULT_LIMITS", "Failed", "Limits", "Piece", "Skipped", "iter_files", "plan",
           "recognised", "scan", "scan_file", "scan_piece"]
