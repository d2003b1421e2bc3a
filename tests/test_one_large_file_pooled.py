"""census and check cut one large library into parts for the workers, as inspect does
(parallel.jobs_for given the files, not their count), and print what one process prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from amdocc.app import parallel
from amdocc.cli.main import main
from amdocc.containers import pieces

LIBRARY = Path(__file__).parent / "data" / "fixtures" / "containers" / "libhip_two_tu_ccob.so"


@pytest.mark.parametrize(
    "argv",
    [["census", "--csv", "-"], ["census", "--json"], ["check", "--json", "--no-config"], ["check", "--no-config"]],
)
def test_one_large_library_is_read_by_the_pool_and_prints_the_serial_output(capsys, monkeypatch, argv):
    monkeypatch.setattr(parallel, "SPLIT_BYTES", 0)  # the library counts as large
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # one container per piece: its two translation units
    chosen: list[int] = []
    real_run = parallel.run

    def run(files, work, options, jobs, isolated=False):
        chosen.append(jobs)
        return real_run(files, work, options, jobs, isolated=isolated)

    monkeypatch.setattr(parallel, "run", run)
    outputs = []
    for jobs in ("1", "2"):
        code = main([*argv, "--jobs", jobs, str(LIBRARY)])
        out, _err = capsys.readouterr()
        outputs.append((code, out))
    assert chosen == [1, 2]
    assert outputs[0][0] in (0, 1) and outputs[0][1] and outputs[1] == outputs[0]
