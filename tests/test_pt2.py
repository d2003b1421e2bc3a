"""AOTInductor ``.pt2`` packages: each kernel at the launch the package's wrapper records.

Can the ROCm AOTInductor path run here? No: torch 2.13's CPU wheel has no HIP device
(``torch.version.hip`` is None), Inductor's pattern setup runs real tensor ops on the device
("PyTorch is not linked with support for cuda devices"), and AOTInductor's wrapper is compiled
with the device compiler (hipcc) and launched through ``hipModuleLaunchKernel``. So the package
is built here the way AOTInductor builds it, from real parts:

* the archive is written by PyTorch itself, ``torch._inductor.package.package_aoti`` (the
  "PT2 Archive Spec": ``<root>/data/aotinductor/<model>/``);
* the kernels are real ``.hsaco`` files Triton 3.9 compiled offline (tests/triton_cache_fixture.py),
  named ``<hash>.hsaco`` as ``CudaKernelParamCache.set`` names them;
* the wrapper ``<hash>.wrapper.cpp`` holds the lines torch/_inductor/codegen/cpp_wrapper_gpu.py
  writes per kernel (``kernels_.<name> = loadKernel("<path>.hsaco", "<name>", <shared>,
  cubin_dir_, ...)`` and ``launchKernel(kernels_.<name>, grid_0, grid_1, grid_2, <num_warps>,
  <shared>, kernel_args_, stream_)``) and the launcher of codegen/cuda/device_op_overrides.py
  with HIP's wave size in place of CUDA's 32 (``64*numWarps``), with the values Triton's own
  ``CompiledKernel.metadata`` gave.

Expected values: the launch from Triton's metadata, HIP's answer by hand (test_triton.HIP_BY_HAND),
and LLVM's ``; Occupancy:`` in each kernel's ``.amdgcn``.
"""

from __future__ import annotations

import json
import re
import zipfile

import pytest

from amdocc.cli.main import main
from conftest import needs
from triton_cache_fixture import HIP_BY_HAND, session_cache

package = needs("torch._inductor.package", "the .pt2 tests write the archive with PyTorch's own packager")

DRIVER = """
static inline void launchKernel(
        hipFunction_t func, uint32_t gridX, uint32_t gridY, uint32_t gridZ,
        uint32_t numWarps, uint32_t sharedMemBytes, void* args[], hipStream_t stream) {
    CUDA_DRIVER_CHECK(hipModuleLaunchKernel(
        func, gridX, gridY, gridZ, WAVE*numWarps, 1, 1, sharedMemBytes, stream, args, nullptr
    ));
}
"""


@pytest.fixture(scope="session")
def triton_cache(tmp_path_factory):
    return session_cache(tmp_path_factory)


def wrapper_cpp(wave: int, kernels: list[dict], hsaco_names: list[str], *, launch_shared=None) -> str:
    out = [f"// AOTInductor wrapper (layout of cpp_wrapper_gpu.py)\n{DRIVER.replace('WAVE', str(wave))}"]
    for m, file in zip(kernels, hsaco_names, strict=True):
        name, shared = m["name"], m["shared"]
        out.append(
            f"""
    if (kernels_.{name} == nullptr) {{
        kernels_.{name} = loadKernel("/tmp/torchinductor_root/xy/{file}", "{name}", {shared}, cubin_dir_, &kernels_.loaded_modules_);
    }}
    CUdeviceptr var_0 = reinterpret_cast<CUdeviceptr>(buf0.data_ptr());
    void* kernel_args_[] = {{&var_0}};
    launchKernel(kernels_.{name}, grid_0, grid_1, grid_2, {m["num_warps"]}, {shared if launch_shared is None else launch_shared}, kernel_args_, stream_);
"""  # noqa: E501 - one generated line each, as Inductor writes them
        )
    return "".join(out)


def build(tmp_path, made, cases, wave, **kw):
    files, hsaco_names = [], []
    for i, case in enumerate(cases):
        name = f"c{i}{case[0]}{case[1]}aotihash.hsaco"
        path = tmp_path / name
        path.write_bytes(made[case]["hsaco"].read_bytes())
        files.append(str(path))
        hsaco_names.append(name)
    wrapper = tmp_path / "cf5ez6ifexr7i2hezzz.wrapper.cpp"
    wrapper.write_text(wrapper_cpp(wave, [made[c] for c in cases], hsaco_names, **kw))
    files.append(str(wrapper))
    archive = tmp_path / "model.pt2"
    package.package_aoti(str(archive), {"model": files})
    return archive, dict(zip(hsaco_names, cases, strict=True))


def occupancy_json(capsys, *argv):
    code = main(["occupancy", "--json", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


CDNA = [("add", "gfx942"), ("matmul", "gfx942"), ("softmax", "gfx942")]  # names unique, as Inductor makes them
RDNA = [("add", "gfx1100"), ("matmul", "gfx1100"), ("softmax", "gfx1100")]


@pytest.mark.parametrize("cases,wave", [(CDNA, 64), (RDNA, 32)], ids=["gfx942", "gfx1100"])
def test_each_kernel_at_the_wrappers_launch(capsys, triton_cache, tmp_path, cases, wave):
    archive, names = build(tmp_path, triton_cache[1], cases, wave)
    members = zipfile.ZipFile(archive).namelist()
    assert all(f"model/data/aotinductor/model/{n}" in members for n in names)  # PyTorch's layout
    code, doc, err = occupancy_json(capsys, archive)
    assert code == 0, err
    assert len(doc["results"]) == len(cases)
    for r in doc["results"]:
        case = names[r["origin"].rsplit("/", 1)[1]]
        m = triton_cache[1][case]
        assert r["kernel"] == m["name"]
        assert (r["block_size"], r["dynamic_lds"]) == (m["num_warps"] * m["warp_size"], m["shared"])
        assert r["blocks_per_cu"] == HIP_BY_HAND[case]["blocks"], case
        launch = r["launch"]
        assert launch["source"] == "aotinductor" and r["block_source"] == "aotinductor launch"
        assert r["dynamic_lds_source"] == "aotinductor launch"
        assert launch["file"] == f"{archive} [model/data/aotinductor/model/cf5ez6ifexr7i2hezzz.wrapper.cpp]"
        assert launch["fields"] == {"num_warps": m["num_warps"], "warp_size": wave, "shared": m["shared"]}


def test_llvm_model_equals_the_compiler_comment(capsys, triton_cache, tmp_path):
    archive, names = build(tmp_path, triton_cache[1], CDNA, 64)
    _, doc, _ = occupancy_json(capsys, "--model", "llvm", archive)
    for r in doc["results"]:
        m = triton_cache[1][names[r["origin"].rsplit("/", 1)[1]]]
        (comment,) = re.findall(r"^; Occupancy: (\d+)$", m["amdgcn_in_memory"], re.M)
        assert r["waves_per_simd"] == int(comment)


def test_a_kernel_the_wrapper_does_not_launch_has_no_recorded_launch(capsys, triton_cache, tmp_path):
    archive, _ = build(tmp_path, triton_cache[1], [("matmul", "gfx942")], 64)
    with zipfile.ZipFile(archive, "a") as z:  # a second model whose wrapper says nothing
        z.writestr("model/data/aotinductor/other/k.hsaco", triton_cache[1]["matmul", "gfx942"]["hsaco"].read_bytes())
        z.writestr("model/data/aotinductor/other/w.wrapper.cpp", "// no kernels launched\n")
    _, doc, _ = occupancy_json(capsys, archive)
    got = {r["origin"].split("/")[3]: r for r in doc["results"]}
    assert got["model"]["launch"]["block_size"] == 256 and got["model"]["dynamic_lds"] == 8192
    assert got["other"]["launch"] is None and got["other"]["dynamic_lds"] == 0
    assert got["other"]["block_source"] == "max_flat_workgroup_size"


def test_a_wrapper_that_contradicts_itself_is_refused(capsys, triton_cache, tmp_path):
    archive, _ = build(tmp_path, triton_cache[1], [("matmul", "gfx942")], 64, launch_shared=4096)
    code = main(["occupancy", str(archive)])
    err = capsys.readouterr().err
    assert code == 2
    assert "wrapper.cpp]: matmul_kernel is loaded with 8192 B of shared memory but launched with 4096" in err


def test_a_wrapper_for_another_wave_size_is_refused(capsys, triton_cache, tmp_path):
    archive, _ = build(tmp_path, triton_cache[1], [("add", "gfx942")], 32)
    code = main(["occupancy", str(archive)])
    err = capsys.readouterr().err
    assert code == 2 and "launches add_kernel as wave32, but it is wave64" in err


def test_only_members_of_a_models_folder_read_a_wrapper(capsys, triton_cache, tmp_path):
    """A zip whose kernels are not under data/aotinductor/<model>/ (a wheel, say) records no launch,
    even beside a wrapper-like file; nor does a wrapper without the launcher's wave size."""
    hsaco = triton_cache[1]["matmul", "gfx942"]["hsaco"].read_bytes()
    text = wrapper_cpp(64, [triton_cache[1]["matmul", "gfx942"]], ["k.hsaco"])
    archive = tmp_path / "other.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("pkg/kernels/k.hsaco", hsaco)
        z.writestr("pkg/kernels/w.wrapper.cpp", text)
        z.writestr("xdata/aotinductor/model/k.hsaco", hsaco)
        z.writestr("xdata/aotinductor/model/w.wrapper.cpp", text)
        z.writestr("r/data/aotinductor/nowave/k.hsaco", hsaco)
        z.writestr("r/data/aotinductor/nowave/w.wrapper.cpp", text.replace("64*numWarps", "blockDim"))
        z.writestr("r/data/aotinductor/m/k.hsaco", hsaco)
        z.writestr("r/data/aotinductor/m/w.wrapper.cpp", text)
    _, doc, _ = occupancy_json(capsys, archive)
    launches = {r["origin"]: r["launch"] for r in doc["results"]}
    assert launches.keys() == {
        "pkg/kernels/k.hsaco",
        "xdata/aotinductor/model/k.hsaco",
        "r/data/aotinductor/nowave/k.hsaco",
        "r/data/aotinductor/m/k.hsaco",
    }
    assert [o for o, launch in launches.items() if launch] == ["r/data/aotinductor/m/k.hsaco"]
    m = triton_cache[1]["matmul", "gfx942"]
    want = {"num_warps": m["num_warps"], "warp_size": 64, "shared": m["shared"]}
    assert launches["r/data/aotinductor/m/k.hsaco"]["fields"] == want


def test_a_hostile_wrapper_is_read_in_linear_time(tmp_path):
    """Long runs that a generated wrapper never has (a 1 MiB name before '= loadKernel(', an
    unterminated path, a million launchKernel( openings, a 1 MiB number) are scanned in bounded
    CPU time, and record nothing. (Unbounded patterns took 16 s of CPU for 16 KiB here.)"""
    import time

    from amdocc.integrations.launches import aoti_launches

    n = 1 << 20
    text = ("a" * n + ' = loadKernel("' + "x" * n + "\n" + "launchKernel(" * (n // 16) + "1" * n + " *" + " " * n) + (
        'b = loadKernel("p", "k", 1' + " " * 70
    ) * 1000
    archive = tmp_path / "hostile.pt2"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("r/data/aotinductor/m/w.wrapper.cpp", text)
    start = time.process_time()
    assert aoti_launches(str(archive), "r/data/aotinductor/m/") == {}
    assert time.process_time() - start < 10
