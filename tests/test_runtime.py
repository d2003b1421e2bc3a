"""The HIP bridge without a GPU: the static answer and its source, capture detection at the
function boundary, error codes checked before values, and `amdocc verify` exiting 3."""
from __future__ import annotations

import logging

import pytest

import amdocc
from amdocc.cli.main import main
from amdocc.runtime import Hip, HipError, HipUnavailable, max_blocks_per_cu, runtime, stats
from conftest import FIXTURES

NO_HIP = runtime() is None


class FakeHip:
    """Stands in for hip-python's module: every call returns (error code, values...)."""

    class hipError_t:
        hipSuccess = 0
        hipErrorInvalidDevice = 101

    class hipStreamCaptureStatus:
        hipStreamCaptureStatusNone = 0
        hipStreamCaptureStatusActive = 1

    def __init__(self, blocks=3, capture=(0, 0), load_error=None):
        self.blocks, self.capture, self.load_error, self.loads = blocks, capture, load_error, 0

    def hipStreamIsCapturing(self, stream):
        if isinstance(self.capture, Exception):
            raise self.capture
        return self.capture

    def hipModuleLoadData(self, image):
        self.loads += 1
        return (self.load_error, None) if self.load_error else (0, "module")

    def hipModuleGetFunction(self, module, name):
        return (0, "function")

    def hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(self, fn, block, dyn):
        return (0, self.blocks)

    def hipModuleUnload(self, module):
        return (0,)


def _kernel():
    cos = amdocc.load(FIXTURES / "elf" / "gfx942_cov4.hsaco")
    return next(k for k in cos[0].kernels if k.name.startswith("_Z9saxpy"))


@pytest.mark.parametrize("capture,expected", [
    ((0, 0), False),                                   # queried: not capturing
    ((0, 1), True),                                    # queried: capturing
    ((101, 0), True),                                  # the query failed: counts as capturing
    (ValueError("32604 is not a valid hipStreamCaptureStatus"), True),   # garbage status
    (RuntimeError("failed to dlopen 'libamdhip64.so'"), True),           # no runtime library
    ("not a tuple", True),
])
def test_capture_detection(capture, expected):
    assert Hip(FakeHip(capture=capture)).is_capturing(None) is expected


def test_error_codes_are_checked_before_values():
    fake = FakeHip(load_error=FakeHip.hipError_t.hipErrorInvalidDevice)
    with pytest.raises(HipError, match="hipModuleLoadData failed"):
        Hip(fake).occupancy_of(b"\x7fELF", "k", 256)


def test_hip_answers_when_usable_and_disagreements_are_counted(caplog):
    k = _kernel()
    model = 4   # LDS limits: 65536 B per CU // the 16384 B LLVM reported for the kernel
    assert amdocc.occupancy(k, block_size=256).blocks_per_cu == model
    before = dict(stats)
    fake = FakeHip(blocks=model)
    got = max_blocks_per_cu(k, 256, hip=Hip(fake))
    assert (int(got), got.source, got.model, got.hip) == (model, "hip", model, model)
    assert stats["compared"] == before["compared"] + 1 and stats["disagreements"] == before["disagreements"]
    again = max_blocks_per_cu(k, 256, hip=Hip(fake))          # cached per kernel, block and LDS
    assert int(again) == model and fake.loads == 1
    with caplog.at_level(logging.WARNING, logger="amdocc.runtime"):
        odd = max_blocks_per_cu(k, 128, hip=Hip(FakeHip(blocks=model + 1)))
    assert odd.source == "hip" and int(odd) == model + 1 and odd.model == model
    assert stats["disagreements"] == before["disagreements"] + 1
    assert "HIP says" in caplog.text


def test_capturing_stream_gets_the_model():
    k = _kernel()
    got = max_blocks_per_cu(k, 256, dynamic_lds=16384, hip=Hip(FakeHip(capture=(0, 1))))
    assert got.source == "model" and "capturing" in got.reason
    # 16384 B static + 16384 B dynamic per block: 65536 // 32768 = 2 blocks per CU.
    assert int(got) == amdocc.occupancy(k, block_size=256, dynamic_lds=16384).blocks_per_cu == 2


@pytest.mark.skipif(not NO_HIP, reason="a HIP runtime is present on this machine")
def test_without_rocm_the_model_answers():
    k = _kernel()
    got = max_blocks_per_cu(k, 256)
    assert got.source == "model" and got.reason.startswith("no HIP runtime")
    assert int(got) == 4            # 16 KiB of static LDS in 64 KiB: four blocks (HIP's LDS rule)
    # From a path, too (one code object, one kernel named).
    got = max_blocks_per_cu(FIXTURES / "elf" / "gfx942_cov4.hsaco", 256, kernel_name="_Z9saxpy_ldsfPKfPfi")
    assert got.source == "model" and int(got) == 4


@pytest.mark.skipif(not NO_HIP, reason="a HIP runtime is present on this machine")
def test_verify_exits_3_without_hip(capsys):
    code = main(["verify", str(FIXTURES / "elf" / "gfx942_cov4.hsaco")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and len(err) == 1 and "needs a ROCm GPU" in err[0]


def test_unavailable_runtime_is_reported_not_raised():
    class Broken(FakeHip):
        def hipGetDeviceCount(self):
            raise RuntimeError("failed to dlopen 'libamdhip64.so'")
    with pytest.raises(HipUnavailable):
        Hip(Broken()).device_count()
