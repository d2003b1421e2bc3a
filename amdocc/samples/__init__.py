"""Real code objects shipped with amdocc, for the quickstart and for trying the tool.

``sample_kernels.hipfb`` is a clang-22 offload bundle (host + gfx90a, gfx942, gfx950, gfx1100,
gfx1201) built by ``python tools/fixtures sample`` from tools/fixture_src/sample.hip: a saxpy with 16 KiB
of static LDS, a register-heavy kernel, and on CDNA targets an MFMA kernel using AGPRs.
"""

from __future__ import annotations

from pathlib import Path

SAMPLES = {"sample_kernels": "sample_kernels.hipfb"}


def path(name: str = "sample_kernels") -> Path:
    return Path(__file__).resolve().parent / SAMPLES[name]
