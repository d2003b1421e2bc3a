"""HIP itself answers, in every CI run: the real runtimes (ROCm 7.14 from PyPI, Debian's 5.2.3) on
the emulated HSA device (tools/hsa_emulator), compared with amdocc's hip model and kernel fields.

Every expected value here is the runtime's own answer, asked through the ctypes worker
(tools/hsa_emulator/hip_oracle.py, independent of amdocc and hip-python). The comparisons are
counted per release and processor and printed at the end of the session ("HIP comparisons: ..."),
and every worker must end a test with no emulator call or attribute it does not model.
"""

from __future__ import annotations

import pytest

import amdocc
from amdocc.devices import get_device
from amdocc.models.hip import profile_for_runtime
from amdocc.targets import get_target
from amdocc.testing import SynthSpec, synthesize
from hip_emulated import record, runtime_dir, runtimes

# Block sizes at the edges: one thread, not a wave multiple either side of one and two waves,
# the largest legal, and above the largest (1025 and 2048, refused or answered as HIP does).
BLOCKS = (1, 31, 32, 33, 63, 64, 65, 96, 128, 192, 255, 256, 257, 384, 512, 640, 768, 1000, 1023, 1024, 1025, 2048)


def product(name: str) -> str:
    """The product a HIP device name stands for: "AMD Instinct MI250X/MI250 [hsaemu]" -> MI250X."""
    return name.removesuffix(" [hsaemu]").removesuffix(" Graphics").split("/")[0]


def samples(processor: str) -> list[amdocc.CodeObject]:
    return [co for co in amdocc.load(amdocc.samples_path()) if co.processor == processor]


def dynamic_lds_edges(lds: int, static: int) -> tuple[int, ...]:
    """Dynamic LDS: none, one byte, a page, and exactly filling the device's LDS with the
    kernel's static LDS, then one byte over."""
    fill = max(lds - static, 0)
    return tuple(sorted({0, 1, 4096, fill // 2, fill, fill + 1}))


def compare(hip, release, processor, kernel, module, block, dyn, profile):
    occ = amdocc.occupancy(kernel, block_size=block, dynamic_lds=dyn, profile=profile)
    answer = hip.occupancy(module, kernel.name, block, dyn)
    record(release, processor)
    if answer["ok"]:
        return occ.blocks_per_cu, answer["value"], occ
    return occ.error, answer["error"], occ


def test_hello_each_runtime_creates_the_emulated_device_with_the_tables_facts(hip_oracle):
    """What HIP itself makes of the emulated agent: its gcnArchName, and the device values that
    move occupancy (LDS, CUs or WGPs, threads per CU)."""
    for release, directory, processors in runtimes():
        for processor in processors:
            hello = hip_oracle(directory, processor).hello()
            assert hello["ok"] and hello["device_count"] == 1, (release, processor, hello)
            assert hello["gcnArchName"].split(":")[0] == processor
            if release == "rocm-7.14":
                assert hello["runtime_version"] == 71460850
                assert hello["name"].endswith(" [hsaemu]")  # the device says it is emulated
                device = get_device(product(hello["name"]))
                target = get_target(processor)
                assert hello["sharedMemPerBlock"] == device.lds
                # multiProcessorCount is CUs on gfx9 and WGPs (half) on gfx10+ in WGP mode
                assert hello["multiProcessorCount"] == device.compute_units // (2 if target.wgp else 1)
                assert hello["warpSize"] == target.wave_sizes[0]
                record(release, processor, 3)


def test_the_runtime_version_picks_amdoccs_profile():
    """7.14 -> rocm-7.14; Debian's ROCm 5.2.3 (50221153) -> rocm-5.2, read from hipamd/ROCclr's
    rocm-5.2.x source. Both without a fallback warning."""
    for version, name in ((71460850, "rocm-7.14"), (50221153, "rocm-5.2")):
        chosen = profile_for_runtime(version)
        assert (chosen.profile.name, chosen.warning) == (name, None), chosen


@pytest.mark.parametrize("processor", ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"])
def test_rocm714_occupancy_of_the_shipped_samples_equals_amdoccs_hip_model(hip_oracle, processor):
    directory = runtime_dir("rocm-7.14")
    hip = hip_oracle(directory, processor)
    lds = get_device(product(hip.hello()["name"])).lds
    (co,) = samples(processor)
    module = hip.load(co.data)
    assert module["ok"], module
    compared, disagreements = 0, []
    for kernel in co.kernels:
        for block in BLOCKS:
            for dyn in dynamic_lds_edges(lds, kernel.resources.lds):
                ours, theirs, occ = compare(
                    hip, "rocm-7.14", processor, kernel, module["module"], block, dyn, "rocm-7.14"
                )
                compared += 1
                if ours != theirs:
                    disagreements.append((kernel.name, block, dyn, ours, theirs, occ.limiter))
    assert not disagreements, disagreements[:10]
    assert compared >= len(co.kernels) * len(BLOCKS) * 4


@pytest.mark.parametrize("processor", ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"])
def test_rocm714_attributes_equal_the_kernels_metadata(hip_oracle, processor):
    """hipFuncGetAttribute: NUM_REGS is .vgpr_count (AGPRs included on gfx90a+), SHARED_SIZE_BYTES
    the static LDS, LOCAL_SIZE_BYTES the scratch, MAX_THREADS_PER_BLOCK .max_flat_workgroup_size."""
    hip = hip_oracle(runtime_dir("rocm-7.14"), processor)
    (co,) = samples(processor)
    module = hip.load(co.data)["module"]
    for k in co.kernels:
        attrs = hip.attributes(module, k.name)
        assert attrs["ok"], attrs
        r = k.resources
        assert attrs["NUM_REGS"] == r.vgprs == k.metadata[".vgpr_count"], k.name
        assert attrs["SHARED_SIZE_BYTES"] == r.lds == k.metadata[".group_segment_fixed_size"], k.name
        assert attrs["LOCAL_SIZE_BYTES"] == r.scratch == k.metadata[".private_segment_fixed_size"], k.name
        assert attrs["MAX_THREADS_PER_BLOCK"] == r.max_flat_workgroup_size, k.name
        record("rocm-7.14", processor, 4)


@pytest.mark.parametrize("processor", ["gfx942", "gfx1100"])
def test_rocm714_potential_block_size_is_the_c_apis_no_search_answer(hip_oracle, processor):
    """hipModuleOccupancyMaxPotentialBlockSize, as the runtime answers it (docs/hip-occupancy.md §3:
    no search; the block is min(ALU threads, alignUp(limit, wave)) and the grid CUs x blocks)."""
    hip = hip_oracle(runtime_dir("rocm-7.14"), processor)
    hello = hip.hello()
    (co,) = samples(processor)
    module = hip.load(co.data)["module"]
    for k in co.kernels:
        for limit in (0, 64, 100, 256, 1024):
            answer = hip.potential_block_size(module, k.name, 0, limit)
            assert answer["ok"], answer
            block = answer["block"]
            assert 0 < block <= (limit or 1024) + 63 and block % k.resources.wavefront_size == 0, (
                k.name,
                limit,
                answer,
            )
            occ = amdocc.occupancy(k, block_size=block, profile="rocm-7.14")
            assert answer["grid"] == hello["multiProcessorCount"] * occ.blocks_per_cu, (k.name, limit, answer)
            record("rocm-7.14", processor)


def test_each_runtime_creates_the_devices_it_knows():
    """Of the emulated processors, ROCm 7.14 creates a device for all eight; Debian's ROCm 5.2.3
    for gfx90a, gfx908 and gfx1030 only ("Unsupported HSA device" for the newer ones)."""
    found = {release: processors for release, _directory, processors in runtimes()}
    runtime_dir("rocm-7.14"), runtime_dir("rocm-5.2")  # skip, or fail in CI, when one is missing
    assert found["rocm-7.14"] == ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx908", "gfx1030", "gfx1151"]
    assert found["rocm-5.2"] == ["gfx90a", "gfx908", "gfx1030"]


def test_rocm52_loads_a_v4_code_object_and_answers(hip_oracle, tmp_path):
    """ROCm 5.2.3 on gfx90a: a code object v6 is refused (hipErrorSharedObjectInitFailed, "COMGR
    failed to get code object ISA name"); v4 loads and answers occupancy and attributes."""
    hip = hip_oracle(runtime_dir("rocm-5.2"), "gfx90a")
    hello = hip.hello()
    assert hello["runtime_version"] == 50221153 and hello["gcnArchName"] == "gfx90a:sramecc+:xnack-"
    (v6,) = samples("gfx90a")
    assert v6.code_object_version == 6
    assert hip.load(v6.data) == {"ok": False, "error": "hipErrorSharedObjectInitFailed"}
    image = synthesize(SynthSpec("gfx90a", 128, 0, 40, 16384, code_object_version=4))
    (co,) = amdocc.load(image)
    (k,) = co.kernels
    module = hip.load(image)
    assert module["ok"], module
    attrs = hip.attributes(module["module"], k.name)
    assert (attrs["NUM_REGS"], attrs["SHARED_SIZE_BYTES"]) == (128, 16384)
    answers = {block: hip.occupancy(module["module"], k.name, block)["value"] for block in (64, 256, 1024)}
    record("rocm-5.2", "gfx90a", 5)
    # 128 VGPRs of 512 per SIMD: 4 waves per SIMD, 16 per CU; 16 KiB of 64 KiB LDS: 4 blocks
    assert answers == {64: 4, 256: 4, 1024: 1}


def wave0_kernel(tmp_path) -> bytes:
    """A gfx90a code object v4 whose metadata claims .wavefront_size 0 (descriptor and code as
    usual), assembled and linked by LLVM 22's llvm-mc and ld.lld."""
    import subprocess

    from amdocc.testing.synth import assembly, find_llvm_tool

    text = assembly(SynthSpec("gfx90a", 64, 0, 40, 0, code_object_version=4))
    assert ".wavefront_size: 64" in text
    src, obj, out = tmp_path / "k.s", tmp_path / "k.o", tmp_path / "k.co"
    src.write_text(text.replace(".wavefront_size: 64", ".wavefront_size: 0"))
    mc = [find_llvm_tool("llvm-mc"), "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-filetype=obj", str(src)]
    subprocess.run([*mc, "-o", str(obj)], check=True)
    subprocess.run([find_llvm_tool("ld.lld"), "-shared", str(obj), "-o", str(out)], check=True)
    return out.read_bytes()


def test_a_query_that_kills_the_runtime_answers_crashed_and_the_worker_comes_back(hip_oracle, tmp_path):
    """ROCm 7.14 reads .wavefront_size from the metadata and divides by it: SIGFPE. The client
    answers crashed:SIGFPE, starts a new worker and reloads the module on its next use. ROCm
    5.2.3 overwrites the wave size with the agent's (64) and answers as for a wave64 kernel."""
    image = wave0_kernel(tmp_path)
    (k,) = amdocc.load(image)[0].kernels
    twin = amdocc.load(synthesize(SynthSpec("gfx90a", 64, 0, 40, 0, code_object_version=4)))[0].kernels[0]

    hip = hip_oracle(runtime_dir("rocm-7.14"), "gfx90a")
    module = hip.load(image)
    assert module["ok"], module
    assert hip.occupancy(module["module"], k.name, 256) == {"ok": False, "error": "crashed:SIGFPE"}
    assert hip.occupancy(module["module"], k.name, 64) == {"ok": False, "error": "crashed:SIGFPE"}
    assert hip.crashes == 2
    (co,) = samples("gfx90a")
    again = hip.load(co.data)["module"]
    sample_kernel = co.kernels[0]
    assert hip.occupancy(again, sample_kernel.name, 256) == {
        "ok": True,
        "value": amdocc.occupancy(sample_kernel, block_size=256, profile="rocm-7.14").blocks_per_cu,
    }
    record("rocm-7.14", "gfx90a", 3)

    old = hip_oracle(runtime_dir("rocm-5.2"), "gfx90a")
    module = old.load(image)["module"]
    # 64 VGPRs: 512 / 64 = 8 waves per SIMD; 40 SGPRs: 800 / alignUp(40, 16) = 16; so 8 waves per
    # SIMD, 32 per CU: 256 threads of wave64 = 4 waves -> 8 blocks, 64 threads -> 32 blocks
    got = {block: old.occupancy(module, k.name, block) for block in (64, 256)}
    assert got == {64: {"ok": True, "value": 32}, 256: {"ok": True, "value": 8}}
    for block, answer in got.items():
        assert answer["value"] == amdocc.occupancy(twin, block_size=block, profile="rocm-5.6").blocks_per_cu
    record("rocm-5.2", "gfx90a", 2)


def synthesized(processor: str, n: int, seed: int) -> list[bytes]:
    """``n`` code objects v4 (both runtimes read v4) with drawn VGPRs, SGPRs, static LDS and wave
    size, assembled and linked by LLVM 22's tools."""
    import random

    rng = random.Random(f"{processor}-{seed}")
    target = get_target(processor)
    out = []
    for _ in range(n):
        lds = rng.choice((0, 0, 1024, 12288, 32768, 65536 - 4096))
        spec = SynthSpec(
            processor,
            rng.randint(1, 64) * 4,
            0,
            rng.randint(1, 100),
            lds,
            wave=rng.choice(target.wave_sizes),
            code_object_version=4,
        )
        out.append(synthesize(spec))
    return out


@pytest.mark.slow  # assembles and links 66 kernels
def test_synthesized_kernels_on_every_emulated_processor_of_every_runtime(hip_oracle, request):
    seed = int(request.config.getoption("hypothesis_seed", None) or 0)
    for release, directory, processors in runtimes():
        version = {"rocm-7.14": 71460850, "rocm-5.2": 50221153}[release]
        profile = profile_for_runtime(version).profile.name
        for processor in processors:
            hip = hip_oracle(directory, processor)
            for image in synthesized(processor, 6, seed):
                (k,) = amdocc.load(image)[0].kernels
                module = hip.load(image)
                assert module["ok"], (release, processor, module)
                for block in (1, 32, 64, 100, 256, 1024, 1025):
                    for dyn in (0, 8192, 65536 - k.resources.lds, 65537 - k.resources.lds):
                        ours, theirs, _ = compare(hip, release, processor, k, module["module"], block, dyn, profile)
                        assert ours == theirs, (release, processor, profile, k.resources, block, dyn)
                hip.unload(module["module"])


@pytest.mark.parametrize("processor", ["gfx942", "gfx1201"])
def test_rocm714_with_flags_answers_as_without(hip_oracle, processor):
    """hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags with hipOccupancyDefault (0) and
    hipOccupancyDisableCachingOverride (1): HIP ignores the flag in its computation."""
    hip = hip_oracle(runtime_dir("rocm-7.14"), processor)
    (co,) = samples(processor)
    module = hip.load(co.data)["module"]
    for k in co.kernels:
        for block in (64, 256, 1024):
            plain = hip.occupancy(module, k.name, block, 4096)
            for flags in (0, 1):
                assert hip.occupancy(module, k.name, block, 4096, flags=flags) == plain
            want = amdocc.occupancy(k, block_size=block, dynamic_lds=4096, profile="rocm-7.14").blocks_per_cu
            assert plain == {"ok": True, "value": want}
            record("rocm-7.14", processor, 3)


def test_bad_images_are_refused_by_the_runtime_without_a_crash_or_an_unmodelled_call(hip_oracle):
    """Not an ELF, a truncated code object, and a code object for another processor: HIP says no
    (its own error names for the first and the last), the worker lives on, the emulator is asked
    nothing it does not model (the fixture checks at teardown)."""
    hip = hip_oracle(runtime_dir("rocm-7.14"), "gfx942")
    (co,) = samples("gfx942")
    (other,) = samples("gfx1100")
    assert hip.load(b"not an elf at all" * 10) == {"ok": False, "error": "hipErrorInvalidImage"}
    # A code object cut after 1500 bytes: hipErrorInvalidImage in a fresh process; once a module
    # has been loaded, HIP 7.14 instead throws inside (its log: "HIP Exception: C++ Exception:
    # basic_string::_M_create") and answers hipErrorUnknown, before any HSA call; about one run in
    # eight it answers hipErrorOutOfMemory (a size read past the cut, seen in whole-file runs).
    cut = hip.load(co.data[:1500])
    assert cut["ok"] is False and cut["error"] in ("hipErrorInvalidImage", "hipErrorUnknown", "hipErrorOutOfMemory")
    half = hip.load(co.data[: len(co.data) // 2])
    assert half["ok"] is False and half["error"].startswith("hipError"), half
    assert hip.load(other.data) == {"ok": False, "error": "hipErrorNoBinaryForGpu"}
    assert hip.crashes == 0
    assert hip.load(co.data)["ok"]  # and it still loads what it should
