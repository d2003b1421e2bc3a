"""The bridge's cache of HIP answers (amdocc/runtime: design review 2026-12, "_hip_answers is
unbounded and keyed on id(image)"): keyed by the code object's content, bounded, per runtime.

A fake runtime stands in for hip-python here (what it answers is set by the test, per image), so
that a stale answer would show as the wrong number; the real runtime's answers are in
test_hip_emulated.py and test_hip_emulated_live.py.
"""

from __future__ import annotations

import gc
import hashlib

import pytest

import amdocc
import amdocc.runtime as bridge
from amdocc.runtime import Hip, max_blocks_per_cu
from amdocc.testing import SynthSpec, synthesize


class ImageHip:
    """hip-python's shape; each loaded image answers its own number of blocks."""

    class hipError_t:
        hipSuccess = 0

    class hipStreamCaptureStatus:
        hipStreamCaptureStatusNone = 0

    def __init__(self, answers: dict[str, int]) -> None:
        self.answers, self.loads, self.current = answers, 0, None

    def hipStreamIsCapturing(self, stream):
        return (0, 0)

    def hipModuleLoadData(self, image):
        self.loads += 1
        self.current = hashlib.sha256(bytes(image)).hexdigest()
        return (0, "module")

    def hipModuleGetFunction(self, module, name):
        return (0, "function")

    def hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(self, fn, block, dyn):
        return (0, self.answers[self.current])

    def hipModuleUnload(self, module):
        return (0,)


@pytest.fixture(scope="module")
def images():
    """Two code objects, one kernel of the same name in each, different static LDS."""
    return [synthesize(SynthSpec("gfx942", 32, 0, 16, lds)) for lds in (8192, 16384)]


def kernel_of(image: bytes):
    (co,) = amdocc.load(image)
    (k,) = co.kernels
    return k


def test_the_answer_follows_the_content_not_the_object(images):
    a, b = images
    fake = ImageHip({hashlib.sha256(a).hexdigest(): 7, hashlib.sha256(b).hexdigest(): 3})
    rt = Hip(fake)
    assert int(max_blocks_per_cu(kernel_of(a), 256, hip=rt)) == 7
    assert int(max_blocks_per_cu(kernel_of(b), 256, hip=rt)) == 3  # same kernel name, other image
    assert fake.loads == 2
    copy = bytes(bytearray(a))  # equal content in another object: answered from the cache
    assert copy is not a
    assert int(max_blocks_per_cu(kernel_of(copy), 256, hip=rt)) == 7
    assert fake.loads == 2


def test_the_cache_is_bounded_and_drops_the_least_recently_used(images, monkeypatch):
    (a, _) = images
    monkeypatch.setattr(bridge, "HIP_ANSWERS_KEPT", 2)
    fake = ImageHip({hashlib.sha256(a).hexdigest(): 5})
    rt, k = Hip(fake), kernel_of(a)
    for block in (64, 128, 64, 256):  # 64 is used again before 256 arrives: 128 goes
        max_blocks_per_cu(k, block, hip=rt)
    assert fake.loads == 3
    assert len(bridge._hip_answers[fake]) == 2
    max_blocks_per_cu(k, 64, hip=rt)
    assert fake.loads == 3
    max_blocks_per_cu(k, 128, hip=rt)
    assert fake.loads == 4


def test_the_cache_goes_with_its_runtime(images):
    (a, _) = images
    fake = ImageHip({hashlib.sha256(a).hexdigest(): 5})
    max_blocks_per_cu(kernel_of(a), 64, hip=Hip(fake))
    assert fake in bridge._hip_answers
    before = len(bridge._hip_answers)
    del fake
    gc.collect()
    assert len(bridge._hip_answers) == before - 1
