"""The HIP bridge without a GPU: the static answer and its source, capture detection at the
function boundary, error codes checked before values, the profile chosen from the runtime's
hipRuntimeGetVersion(), and `amdocc verify` (exiting 3 without HIP, recording with a fake one)."""

from __future__ import annotations

import json
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

    def __init__(self, blocks=3, capture=(0, 0), load_error=None, version=None):
        self.blocks, self.capture, self.load_error, self.loads = blocks, capture, load_error, 0
        self.version = version

    def hipRuntimeGetVersion(self):
        return (0, self.version) if self.version is not None else (self.hipError_t.hipErrorInvalidDevice, 0)

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


@pytest.mark.parametrize(
    "capture,expected",
    [
        ((0, 0), False),  # queried: not capturing
        ((0, 1), True),  # queried: capturing
        ((101, 0), True),  # the query failed: counts as capturing
        (ValueError("32604 is not a valid hipStreamCaptureStatus"), True),  # garbage status
        (RuntimeError("failed to dlopen 'libamdhip64.so'"), True),  # no runtime library
        ("not a tuple", True),
    ],
)
def test_capture_detection(capture, expected):
    assert Hip(FakeHip(capture=capture)).is_capturing(None) is expected


def test_error_codes_are_checked_before_values():
    fake = FakeHip(load_error=FakeHip.hipError_t.hipErrorInvalidDevice)
    with pytest.raises(HipError, match="hipModuleLoadData failed"):
        Hip(fake).occupancy_of(b"\x7fELF", "k", 256)


def test_hip_answers_when_usable_and_disagreements_are_counted(caplog):
    k = _kernel()
    model = 4  # LDS limits: 65536 B per CU // the 16384 B LLVM reported for the kernel
    assert amdocc.occupancy(k, block_size=256).blocks_per_cu == model
    before = dict(stats)
    fake = FakeHip(blocks=model)
    got = max_blocks_per_cu(k, 256, hip=Hip(fake))
    assert (int(got), got.source, got.model, got.hip) == (model, "hip", model, model)
    assert stats["compared"] == before["compared"] + 1 and stats["disagreements"] == before["disagreements"]
    again = max_blocks_per_cu(k, 256, hip=Hip(fake))  # cached per kernel, block and LDS
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
    assert int(got) == 4  # 16 KiB of static LDS in 64 KiB: four blocks (HIP's LDS rule)
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


# -- the profile follows the runtime's own version ------------------------------------------------


def _agpr_user():
    # gfx942, .vgpr_count 92, .sgpr_count 8, no LDS (tests/data/fixtures/elf/gfx942_cov4.hsaco).
    cos = amdocc.load(FIXTURES / "elf" / "gfx942_cov4.hsaco")
    return next(k for k in cos[0].kernels if k.name == "_Z9agpr_userPf")


# hipRuntimeGetVersion() = major*10000000 + minor*100000 + patch (hipamd/CMakeLists.txt HIP_VERSION).
# Model answers for _Z9agpr_userPf at block 256, worked by hand:
#   rocm-6.0.0 rocdevice.cpp: gfx942 (9.4.2) is not 9.4.0 -> 256/4: 256 / alignUp(92, 4) = 2 waves;
#     SGPRs 800 / 16 = 50; 4 SIMDs * 2 * 64 = 512 threads / 256 = 2 blocks.
#   rocm-6.1.0 .. a187df25c (6.4): every 9.4.x -> 512/8: 512 / 96 = 5 waves; 4 * 5 * 64 / 256 = 5.
#   rocm-systems 84e9845 (7.0: the 9.4.x switch case, 512/8) and 55feeef .. aaae694 (7.1 .. 7.14:
#     comgr's gfx942 512/8): 512 / 96 = 5 waves; 800 / 16 = 50; 4 * 5 * 64 / 256 = 5.
#   rocm-5.6.0 device.cpp lists no gfx942: no answer.
# TheRock's runtimes report projects/hip/VERSION of their rocm-systems pin (TheRock CMakeLists.txt):
# 7.9.0 (55feeef) HIP 7.1, 7.10 .. 7.12 HIP 7.2, 7.13 (79e85e1) 7.13, 7.14 (cd52904) 7.14.
@pytest.mark.parametrize(
    "version,profile,model,fallback",
    [
        (60032830, "rocm-6.0", 2, False),  # 6.0.32830
        (60140093, "rocm-6.1", 5, False),  # 6.1.40093
        (60342131, "rocm-6.3", 5, False),  # 6.3.42131
        (60443482, "rocm-6.4", 5, False),  # 6.4.43482
        (50631061, "rocm-5.6", None, False),  # 5.6.31061
        (70051831, "rocm-7.0", 5, False),  # 7.0.51831
        (70125393, "rocm-7.1", 5, False),  # 7.1.25393: also TheRock 7.9.0, built from 55feeef (git date 25393)
        (70226015, "rocm-7.2", 5, False),  # 7.2.x: also TheRock 7.10 .. 7.12
        (71300000, "rocm-7.13", 5, False),  # 7.13.0
        (71460850, "rocm-7.14", 5, False),  # 7.14.60850
        (50221153, "rocm-5.2", None, False),  # 5.2.21153 (Debian's libamdhip64-5): 5.2 runs no gfx942
        (71500000, "rocm-10.0", 5, False),  # HIP 7.15 is ROCm 10.0 (rocm-systems #9648)
        (71600000, "rocm-10.1", 5, False),  # HIP 7.16 is ROCm 10.1: with #10618, 8 SGPRs cost 16 + 16 = 32:
        #                                     800 / 32 = 25 waves, still above the VGPRs' 5
        (60500000, "rocm-6.4", 5, True),  # no ROCm 6.5: the newest known release before it
        (71700000, "rocm-10.1", 5, True),  # HIP 7.17 (ROCm 10.2, #11712): no profile, the newest before it
        (100200000, "rocm-10.1", 5, True),  # HIP 10.2: newer than every release known
        (40500000, "rocm-5.2", None, True),  # older than every release known: the oldest
    ],
)
def test_the_model_reproduces_the_runtimes_own_release(version, profile, model, fallback, caplog):
    k = _agpr_user()
    fake = FakeHip(blocks=5, version=version)
    with caplog.at_level(logging.WARNING, logger="amdocc.runtime"):
        got = max_blocks_per_cu(k, 256, hip=Hip(fake))
    assert (got.source, int(got), got.hip) == ("hip", 5, 5)
    assert (got.profile, got.runtime_version, got.model) == (profile, version, model)
    assert ("is not a ROCm release amdocc has a profile for" in caplog.text) == fallback


def test_a_version_several_releases_report_names_the_ones_that_answer_otherwise(caplog):
    # HIP 7.2 is ROCm 7.2's and TheRock 7.10/7.11/7.12's (VERSION 7.2.x at 598ca70, 318d138, 93bc019);
    # only 7.12 (after 0943dd6) answers otherwise: it leaves numBlocks unchanged on an error.
    with caplog.at_level(logging.WARNING, logger="amdocc.runtime"):
        got = max_blocks_per_cu(_agpr_user(), 256, hip=Hip(FakeHip(blocks=5, version=70226015)))
    assert got.profile == "rocm-7.2"
    assert "rocm-7.12 (caller_value unchanged)" in caplog.text and "rocm-7.11 (" not in caplog.text


def test_without_a_readable_version_the_default_profile_is_used(caplog):
    with caplog.at_level(logging.WARNING, logger="amdocc.runtime"):
        got = max_blocks_per_cu(_agpr_user(), 256, hip=Hip(FakeHip(blocks=5)))
    assert got.profile == "rocm-7.14" and got.runtime_version is None
    assert "could not read the HIP runtime's version" in caplog.text


def test_an_explicit_profile_wins_over_the_runtime_version():
    got = max_blocks_per_cu(_agpr_user(), 256, hip=Hip(FakeHip(blocks=5, version=60443482)), profile="rocm-6.0")
    assert got.profile == "rocm-6.0" and got.model == 2


def test_a_named_profile_must_run_the_kernels_processor_a_runtime_chosen_one_answers_no():
    # rocm-5.6.0 device.cpp lists no gfx942. Named by the caller it is an error naming both; picked
    # from the runtime's version (5.6.31061) the model simply has no answer (the HIP one stands).
    from amdocc.models import ProfileDoesNotRun

    fake = Hip(FakeHip(blocks=5, version=60443482))
    with pytest.raises(ProfileDoesNotRun, match=r"rocm-5\.6 .* does not run gfx942"):
        max_blocks_per_cu(_agpr_user(), 256, hip=fake, profile="rocm-5.6")
    got = max_blocks_per_cu(_agpr_user(), 256, hip=Hip(FakeHip(blocks=5, version=50631061)))
    assert (got.profile, got.model, int(got)) == ("rocm-5.6", None, 5)
    got = max_blocks_per_cu(_agpr_user(), 256, hip=fake, profile="rocm-6.4.1")  # a patch names its line
    assert (got.profile, got.model) == ("rocm-6.4", 5)


def test_hip_is_not_asked_when_the_runtime_would_divide_by_zero():
    # rocm-6.0.0 rocdevice.cpp sets no VGPR values for gfx1151 (11.5.1): alignUp(v, 0) = 0 and HIP
    # divides by it. Asking would kill the process, so the fake runtime is never loaded.
    cos = amdocc.load(FIXTURES / "elf" / "gfx1151_w64_wgp_cov6.hsaco")
    k = next(k for k in cos[0].kernels if k.name.startswith("_Z9saxpy"))
    fake = FakeHip(blocks=1, version=60032830)
    with pytest.raises(amdocc.AmdoccError, match="divide by zero"):
        max_blocks_per_cu(k, 64, hip=Hip(fake))
    assert fake.loads == 0


class FakeDevice(FakeHip):
    """A whole fake runtime for `amdocc verify`: one gfx942, answering like rocm-6.0 would."""

    class Props:
        gcnArchName = b"gfx942:sramecc+:xnack-"
        name = b"AMD Instinct MI300X"
        multiProcessorCount, sharedMemPerBlock, maxThreadsPerMultiProcessor, warpSize = 304, 65536, 2048, 64

    def hipGetDeviceCount(self):
        return (0, 1)

    def hipGetDevice(self):
        return (0, 0)

    def hipGetDeviceProperties(self, index):
        return (0, self.Props())

    def hipDriverGetVersion(self):
        return (0, self.version)


def test_verify_compares_with_the_runtimes_release_and_records_its_version(tmp_path, monkeypatch, capsys):
    import amdocc.runtime as rt_module
    from amdocc import observed

    fake = FakeDevice(blocks=2, version=60032830)  # a ROCm 6.0 runtime: agpr_user gives 2 at block 256
    monkeypatch.setattr(rt_module, "runtime", lambda: Hip(fake))
    record = tmp_path / "measured.toml"
    code = main(
        [
            "verify",
            str(FIXTURES / "elf" / "gfx942_cov4.hsaco"),
            "--kernel",
            "agpr_user",
            "--blocks",
            "256",
            "--dynamic-lds",
            "0",
            "--record",
            str(record),
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and (out["agree"], out["total"]) == (1, 1)
    assert (out["profile"], out["runtime_version"]) == ("rocm-6.0", 60032830)
    rows, _ = observed.load(record)
    assert [(r["runtime_version"], r["profile"], r["blocks_per_cu"]) for r in rows] == [(60032830, "rocm-6.0", 2)]
    # A recorded row without a profile is replayed under the one its runtime version maps to.
    bare = {k: v for k, v in rows[0].items() if k != "profile"}
    assert observed.profile_of(bare) == "rocm-6.0" and observed.answer_of(observed.replay(bare)) == 2
