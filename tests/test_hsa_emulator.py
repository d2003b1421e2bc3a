"""The emulated HSA device itself (tools/hsa_emulator): its table, its counting, its loader, its queues.

The emulator is the fixture that lets the real HIP runtime answer here; these tests hold it to
its own promises without HIP: every value of its device table agrees with amdocc's independent
``tables/devices.toml`` / ``targets.toml`` (two tables from separately cited sources), a call it
does not model is counted and written to HSAEMU_REPORT at exit, its loader answers symbol
queries with the bytes of the kernel descriptor (read here with pyelftools), and a queue retires
what is submitted to it by decrementing the completion signal.
"""

from __future__ import annotations

import ctypes
import json
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import amdocc
from amdocc.devices import get_device
from amdocc.targets import get_target
from hip_emulated import ROOT, runtimes

BUILD = ROOT / "tools" / "hsa_emulator" / "build.sh"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory) -> Path:
    """A fresh build of the emulator (what .ci/setup-tests.sh builds), with the system cc."""
    out = tmp_path_factory.mktemp("hsaemu") / "libhsa-runtime64.so.1"
    subprocess.run([str(BUILD), str(out)], check=True)
    return out


def table(emulator: Path) -> list[dict]:
    lib = ctypes.CDLL(str(emulator))
    lib.hsaemu_device_json.restype = ctypes.c_char_p
    lib.hsaemu_device_json.argtypes = [ctypes.c_size_t]
    rows, i = [], 0
    while (row := lib.hsaemu_device_json(i)) is not None:
        rows.append(json.loads(row))
        i += 1
    return rows


def run_c_program(emulator: Path, body: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``body`` (Python using ctypes on the emulator as ``lib``) in a fresh process."""
    code = "import ctypes, json, struct, sys\nlib = ctypes.CDLL(sys.argv[1])\n" + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code, str(emulator)],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def test_the_emulated_processors_include_the_five_the_issue_names(emulator):
    processors = [row["processor"] for row in table(emulator)]
    assert {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"} <= set(processors)
    assert len(processors) == len(set(processors))


def test_the_emulator_table_agrees_with_amdoccs_devices_and_targets_tables(emulator):
    """Two tables from independent citations: the emulator's (rocminfo pastes, AMD documents) and
    amdocc's tables/devices.toml + targets.toml. Every shared fact must agree."""
    checked = 0
    for row in table(emulator):
        device = get_device(row["product"].removesuffix(" Graphics").split("/")[0])  # "...MI250X/MI250" -> MI250X
        target = get_target(row["processor"])
        assert device.processor == row["processor"], row
        assert device.compute_units == row["compute_units"], (device.name, row)
        assert device.lds == row["lds"], (device.name, row)
        assert target.simds_per_cu == row["simds_per_cu"], row
        assert target.max_waves_per_simd * target.simds_per_cu == row["max_waves_per_cu"], row
        assert row["wavefront_size"] == target.wave_sizes[0], row
        assert row["isa"].startswith(f"amdgcn-amd-amdhsa--{row['processor']}")
        checked += 1
    assert checked >= 5


def test_an_unmodeled_call_and_an_unmodeled_attribute_are_counted_and_reported_at_exit(emulator, tmp_path):
    report = tmp_path / "report.json"
    run = run_c_program(
        emulator,
        """
        assert lib.hsa_init() == 0
        assert lib.hsa_amd_ipc_memory_create() == 0x1000          # HSA_STATUS_ERROR, counted
        cpu = []
        CB = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p)
        agents = []
        cb = CB(lambda a, d: agents.append(a) or 0)
        assert lib.hsa_iterate_agents(cb, None) == 0
        value = ctypes.create_string_buffer(64)
        assert lib.hsa_agent_get_info(ctypes.c_uint64(agents[1]), 0xBEEF, value) == 0x1000
        assert lib.hsa_agent_get_info(ctypes.c_uint64(agents[1]), 0, value) == 0   # HSA_AGENT_INFO_NAME
        print(value.value.decode())
        """,
        {"HSAEMU_DEVICE": "gfx950", "HSAEMU_REPORT": str(report)},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["gfx950"]
    counts = json.loads(report.read_text())
    assert counts["device"] == "gfx950"
    assert counts["unexpected"] == {"hsa_amd_ipc_memory_create": 1, "agent_info:0xbeef": 1}
    assert counts["calls"]["hsa_agent_get_info"] == 2 and counts["calls"]["hsa_init"] == 1


def test_an_unknown_device_name_fails_hsa_init_and_names_the_valid_ones(emulator):
    run = run_c_program(emulator, "sys.exit(0 if lib.hsa_init() == 0x1000 else 1)\n", {"HSAEMU_DEVICE": "gfx9999"})
    assert run.returncode == 0
    assert "HSAEMU_DEVICE=gfx9999 is not emulated; valid: gfx90a,gfx942" in run.stderr


def test_the_group_pool_of_each_emulated_gpu_is_its_lds(emulator):
    for row in table(emulator):
        run = run_c_program(
            emulator,
            """
            lib.hsa_init()
            CB = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p)
            agents, pools = [], []
            keep = CB(lambda a, d: agents.append(a) or 0)
            lib.hsa_iterate_agents(keep, None)
            keep2 = CB(lambda p, d: pools.append(p) or 0)
            lib.hsa_amd_agent_iterate_memory_pools(ctypes.c_uint64(agents[1]), keep2, None)
            for p in pools:
                seg, size = ctypes.c_uint32(), ctypes.c_size_t()
                lib.hsa_amd_memory_pool_get_info(ctypes.c_uint64(p), 0, ctypes.byref(seg))   # SEGMENT
                lib.hsa_amd_memory_pool_get_info(ctypes.c_uint64(p), 2, ctypes.byref(size))  # SIZE
                if seg.value == 3:                                                          # GROUP
                    print(size.value)
            """,
            {"HSAEMU_DEVICE": row["processor"]},
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == [str(get_device(row["product"].removesuffix(" Graphics").split("/")[0]).lds)]


def sample(processor: str) -> amdocc.CodeObject:
    (co,) = [c for c in amdocc.load(amdocc.samples_path()) if c.processor == processor]
    return co


def test_the_loader_answers_symbol_queries_from_the_kernel_descriptor_bytes(emulator, tmp_path):
    from elftools.elf.elffile import ELFFile

    co = sample("gfx942")
    path = tmp_path / "k.co"
    path.write_bytes(co.data)
    expected = {}
    with path.open("rb") as f:  # pyelftools, an independent ELF reader: the .kd symbols' bytes
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".dynsym") or elf.get_section_by_name(".symtab")
        for sym in symtab.iter_symbols():
            if sym.name.endswith(".kd"):
                section = elf.get_section(sym["st_shndx"])
                offset = sym["st_value"] - section["sh_addr"] + section["sh_offset"]
                f.seek(offset)
                group, private, kernarg = struct.unpack("<III", f.read(12))
                expected[sym.name] = [group, private, kernarg]
    assert len(expected) == len(co.kernels) == 3
    run = run_c_program(
        emulator,
        """
        lib.hsa_init()
        CB = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p)
        agents = []
        keep = CB(lambda a, d: agents.append(a) or 0)
        lib.hsa_iterate_agents(keep, None)
        gpu = ctypes.c_uint64(agents[1])
        data = open(sys.argv[2], "rb").read()
        reader, exe, sym = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        assert lib.hsa_code_object_reader_create_from_memory(data, len(data), ctypes.byref(reader)) == 0
        assert lib.hsa_executable_create_alt(0, 0, None, ctypes.byref(exe)) == 0
        assert lib.hsa_executable_load_agent_code_object(exe, gpu, reader, None, None) == 0
        assert lib.hsa_executable_freeze(exe, None) == 0
        out = {}
        for name in json.loads(sys.argv[3]):
            assert lib.hsa_executable_get_symbol_by_name(exe, name.encode(), None, ctypes.byref(sym)) == 0
            vals = []
            for attr in (13, 14, 11, 0):  # GROUP_SEGMENT_SIZE, PRIVATE_SEGMENT_SIZE, KERNARG_SIZE, TYPE
                v = ctypes.c_uint32()
                assert lib.hsa_executable_symbol_get_info(sym, attr, ctypes.byref(v)) == 0
                vals.append(v.value)
            out[name] = vals
        missing = lib.hsa_executable_get_symbol_by_name(exe, b"no_such_kernel.kd", None, ctypes.byref(sym))
        print(json.dumps({"symbols": out, "missing": missing}))
        """.replace("sys.argv[2]", repr(str(path))).replace("sys.argv[3]", repr(json.dumps(sorted(expected)))),
        {"HSAEMU_DEVICE": "gfx942"},
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["missing"] == 0x1013  # HSA_STATUS_ERROR_INVALID_SYMBOL_NAME
    assert answer["symbols"] == {name: [*vals, 1] for name, vals in expected.items()}  # kind 1: KERNEL
    assert any(vals[0] > 0 for vals in expected.values())  # a kernel with static LDS is among them


def test_a_queue_retires_a_barrier_packet_without_running_anything(emulator):
    run = run_c_program(
        emulator,
        """
        lib.hsa_init()
        CB = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p)
        agents = []
        keep = CB(lambda a, d: agents.append(a) or 0)
        lib.hsa_iterate_agents(keep, None)
        q = ctypes.c_void_p()
        assert lib.hsa_queue_create(ctypes.c_uint64(agents[1]), 64, 0, None, None, 0, 0, ctypes.byref(q)) == 0
        base = ctypes.c_void_p.from_address(q.value + 8).value            # hsa_queue_t.base_address
        doorbell = ctypes.c_uint64.from_address(q.value + 16).value       # hsa_queue_t.doorbell_signal
        done = ctypes.c_uint64()
        assert lib.hsa_signal_create(ctypes.c_int64(1), 0, None, ctypes.byref(done)) == 0
        lib.hsa_queue_add_write_index_screlease.restype = ctypes.c_uint64
        lib.hsa_queue_load_read_index_scacquire.restype = ctypes.c_uint64
        lib.hsa_signal_load_relaxed.restype = ctypes.c_int64
        index = lib.hsa_queue_add_write_index_screlease(q, ctypes.c_uint64(1))
        packet = base + index * 64
        ctypes.c_uint64.from_address(packet + 56).value = done.value      # completion_signal
        before = lib.hsa_signal_load_relaxed(done)
        ctypes.c_uint16.from_address(packet).value = 3                    # HSA_PACKET_TYPE_BARRIER_AND
        lib.hsa_signal_store_screlease(ctypes.c_uint64(doorbell), ctypes.c_int64(index))
        print(before, lib.hsa_signal_load_relaxed(done), lib.hsa_queue_load_read_index_scacquire(q),
              ctypes.c_uint16.from_address(packet).value)
        """,
        {"HSAEMU_DEVICE": "gfx942"},
    )
    assert run.returncode == 0, run.stderr
    # signal 1 -> 0, read index 0 -> 1, header set to HSA_PACKET_TYPE_INVALID (1)
    assert run.stdout.split() == ["1", "0", "1", "1"]


def test_every_laid_out_runtime_resolves_hsa_to_the_emulator_and_comgr_by_its_dlopen_name():
    """The layout, as the runtime's loader sees it: ldd of libamdhip64 in each folder names the
    emulator (in the folder, or through LD_LIBRARY_PATH), never a real ROCr."""
    for release, directory, processors in runtimes():
        config = json.loads(Path(directory, "runtime.json").read_text())
        hip = (
            Path(directory, config["hip_library"])
            if not config["hip_library"].startswith("/")
            else Path(config["hip_library"])
        )
        env = {"LD_LIBRARY_PATH": directory} if config["ld_library_path"] else {}
        ldd = subprocess.run(["ldd", str(hip)], capture_output=True, text=True, check=True, env=env).stdout
        (line,) = [entry for entry in ldd.splitlines() if "libhsa-runtime64" in entry]
        assert str(Path(directory, config["emulator"])) in line, (release, line)
        emulator = ctypes.CDLL(str(Path(directory, config["emulator"])))
        assert hasattr(emulator, "hsaemu_report_json"), release
        assert processors, f"{release} created a device for no emulated processor: {config.get('no_device')}"
        if release == "rocm-7.14":
            assert Path(directory, "libamd_comgr.so.3").resolve().name.startswith("libamd_comgr-")
