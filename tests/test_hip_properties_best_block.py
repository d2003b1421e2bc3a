"""The best block size (issue 17 item 5): HIP's hipOccupancyMaxPotentialBlockSize answer and the
block to launch, in the API (amdocc.max_potential_block_size) and the CLI (amdocc best-block).

The runtime is the oracle: ROCm 7.14 on the emulated device answers
hipModuleOccupancyMaxPotentialBlockSize for kernels synthesized with chosen
.max_flat_workgroup_size and LDS, and HIP's header search (hipOccupancyMaxPotentialBlockSizeVariableSMem,
run over the runtime's own occupancy answers and hipFuncGetAttribute's maximum threads) gives the
block to launch; the CLI, told the device by its product name, must print both. The worked example
is docs/hip-occupancy.md §5 example 1 (MI300X).
"""

from __future__ import annotations

import json

import pytest

import amdocc
from amdocc.cli.main import main
from amdocc.testing import SynthSpec, synthesize_many
from amdocc.testing.compare import runtime_launch_block
from hip_emulated import runtime_dir

pytestmark = pytest.mark.llvm22
# The emulated devices (tools/hsa_emulator/devices.def) by the product tables/devices.toml names.
DEVICES = {"gfx90a": "MI250X", "gfx942": "MI300X", "gfx950": "MI350X", "gfx1100": "RX7900XTX", "gfx1201": "RX9070XT"}
KERNELS = [
    SynthSpec("P", 128, 0, 40, 49152, max_flat_workgroup_size=1024, name="lds48k"),
    SynthSpec("P", 64, 0, 24, 0, max_flat_workgroup_size=256, name="flat256"),
    SynthSpec("P", 100, 0, 30, 8192, max_flat_workgroup_size=100, name="flat100"),
    SynthSpec("P", 24, 0, 16, 65536, max_flat_workgroup_size=512, name="ldsfull"),
]


def test_worked_example_mi300x():
    # docs/hip-occupancy.md §5 example 1: 512 / alignUp(128, 8) = 4 waves, 4 SIMDs x 4 x 64 = 1024
    # threads; LDS 65536 // 49152 = 1: HIP's block 1024 and grid 304 x min(1024 // 1024, 1) = 304.
    r = amdocc.max_potential_block_size({"vgprs": 128, "sgprs": 40, "lds": 49152}, device="MI300X")
    assert (r.hip_block_size, r.hip_grid_size) == (1024, 304)
    assert (r.block_size, r.blocks_per_cu, r.min_grid_size) == (1024, 1, 304)
    d = r.as_dict()
    assert d["hip"]["api"] == "hipModuleOccupancyMaxPotentialBlockSize" and d["launch"]["block_size"] == 1024
    # The same kernel with no LDS: HIP stops at the thread budget, 1024, and so does the search.
    r = amdocc.max_potential_block_size({"vgprs": 128, "sgprs": 40}, device="MI300X")
    assert (r.hip_block_size, r.hip_grid_size, r.block_size, r.blocks_per_cu) == (1024, 304, 1024, 1)


def test_hip_ignores_max_flat_workgroup_size_and_the_launch_block_does_not():
    r = amdocc.max_potential_block_size({"vgprs": 64, "max_flat_workgroup_size": 256}, target="gfx942")
    assert r.hip_block_size == 1024 and r.hip_exceeds_max_flat_workgroup_size
    assert r.block_size == 256 and r.blocks_per_cu == 8  # 2048 threads / 256
    assert r.hip_grid_size is None and any("grid sizes are not computed" in w for w in r.warnings)
    assert any("exceeds the kernel's .max_flat_workgroup_size 256" in w for w in r.warnings)


def test_errors_and_arguments():
    bad = amdocc.max_potential_block_size({"vgprs": 520}, target="gfx942", profile="rocm-7.14")
    assert bad.error == "hipErrorUnknown" and bad.block_size is None
    with pytest.raises(amdocc.UsageError):
        amdocc.max_potential_block_size({"vgprs": 8}, target="gfx942", dynamic_lds=-1)
    with pytest.raises(amdocc.UsageError):
        amdocc.max_potential_block_size({"vgprs": 8}, target="gfx942", compute_units=0)
    with pytest.raises(amdocc.UsageError):
        amdocc.max_potential_block_size({"vgprs": 8})  # no target for numbers


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_manual_mode_and_usage_errors(capsys, tmp_path):
    code, out, _ = _cli(
        capsys, "best-block", "--target", "gfx942", "--vgprs", "128", "--lds", "48K", "--device", "MI300X"
    )
    assert code == 0 and "hip block" in out and "launch block" in out and "hipOccupancyMaxPotentialBlockSize" in out
    code, out, _ = _cli(capsys, "best-block", "--json", "--device", "MI300X", "--vgprs", "128", "--lds", "49152")
    (r,) = json.loads(out)["results"]
    assert (r["hip"]["block_size"], r["hip"]["grid_size"], r["launch"]["block_size"]) == (1024, 304, 1024)
    co = tmp_path / "k.co"
    synthesize_many([SynthSpec("gfx942", 64, name="k")], co)
    for argv, what in [
        (("best-block", str(co), "--vgprs", "8"), "--vgprs"),
        (("best-block", "--target", "gfx942", "--vgprs", "8", "--kernel", "k"), "--kernel"),
        (("best-block", "--target", "gfx942"), "manual mode"),
        (("best-block", str(co), "--kernel", "nothing-like-it"), "nothing"),
    ]:
        code, _, err = _cli(capsys, *argv)
        assert code == 2 and what in err and "Traceback" not in err, (argv, err)


@pytest.mark.parametrize("processor", sorted(DEVICES))
def test_cli_against_the_runtime(capsys, tmp_path, hip_oracle, processor):
    client = hip_oracle(runtime_dir("rocm-7.14"), processor)
    hello = client.hello()
    specs = [
        SynthSpec(
            processor,
            k.vgpr_count,
            0,
            k.sgpr_count,
            k.lds,
            max_flat_workgroup_size=k.max_flat_workgroup_size,
            name=k.name,
        )
        for k in KERNELS
    ]
    path = tmp_path / "k.co"
    image = synthesize_many(specs, path)
    module = client.load(image)["module"]
    wave = hello["warpSize"]
    for dyn, limit in ((0, 0), (4096, 0), (0, 200), (16385, 512)):
        code, out, err = _cli(
            capsys,
            "best-block",
            "--json",
            str(path),
            "--device",
            DEVICES[processor],
            "--hip-profile",
            "rocm-7.14",
            "--dynamic-lds",
            str(dyn),
            "--block-limit",
            str(limit),
        )
        assert code == 0, err
        rows = {r["kernel"]: r for r in json.loads(out)["results"]}
        for spec in specs:
            r = rows[spec.name]
            assert r["compute_units"] == hello["multiProcessorCount"]
            hip = client.potential_block_size(module, spec.name, dyn, limit)
            assert (r["hip"]["grid_size"], r["hip"]["block_size"]) == (hip["grid"], hip["block"]), (spec, dyn, limit)
            threads = client.attributes(module, spec.name)["MAX_THREADS_PER_BLOCK"]
            launch = runtime_launch_block(
                lambda b, name=spec.name, dyn=dyn: client.occupancy(module, name, b, dyn)["value"],
                limit,
                threads,
                wave,
                0,  # every size: the block that holds the most (test_the_headers_early_stop_...)
            )
            assert (r["launch"]["block_size"], r["launch"]["blocks_per_cu"]) == launch, (spec, dyn, limit)
            assert r["launch"]["block_size"] <= spec.max_flat_workgroup_size
            assert r["launch"]["min_grid_size"] == launch[1] * hello["multiProcessorCount"]
    client.unload(module)


def test_the_headers_early_stop_misses_the_best_block_of_a_wave64_rdna_kernel(tmp_path, hip_oracle):
    """Found by the property test: HIP's header search stops once a block holds the device's
    maxThreadsPerMultiProcessor, which ROCm 7.14 reports as 2048 on gfx1100 (wave32 slots), while a
    wave64 kernel in WGP mode can hold more. The runtime's own answers: 512 threads x 4 = 2048
    (the header stops there) but 448 x 5 = 2240. amdocc's block to launch is 448."""
    client = hip_oracle(runtime_dir("rocm-7.14"), "gfx1100")
    hello = client.hello()
    spec = SynthSpec("gfx1100", 81, 0, 33, 0, wave=64, wgp=True, max_flat_workgroup_size=512, name="k0")
    image = synthesize_many([spec], tmp_path / "k.co")
    module = client.load(image)["module"]
    dyn = 10923

    def ask(block: int) -> int:
        return client.occupancy(module, "k0", block, dyn)["value"]

    assert hello["maxThreadsPerMultiProcessor"] == 2048
    assert (ask(512), ask(448)) == (4, 5)
    assert runtime_launch_block(ask, 831, 512, 64, hello["maxThreadsPerMultiProcessor"]) == (512, 4)
    assert runtime_launch_block(ask, 831, 512, 64, 0) == (448, 5)
    (k,) = amdocc.load(image)[0].kernels
    r = amdocc.max_potential_block_size(k, dynamic_lds=dyn, block_limit=831, profile="rocm-7.14")
    assert (r.block_size, r.blocks_per_cu) == (448, 5)
    client.unload(module)
