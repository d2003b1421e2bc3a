"""A directory walk reads every file once and says what it did not read.

Directories reached through links are walked, each once (known by st_dev and st_ino): a second
link to a directory, or a link back up the tree, is a skipped entry naming the path the
directory was walked as, never an endless walk. A subdirectory that cannot be listed is an error
entry beside the results, as an unreadable file is, and the rest of the tree is still read; a
link to nothing, a link that loops on itself and a FIFO are entries with their reason too.

The trees are made here; the expected files are the ones the test wrote, and "the same
directory" is checked with os.path.samefile. A directory that cannot be listed is made two ways:
in-process by making os.scandir fail for one path (what any listing error looks like to the
walker), and for real, chmod 000, read by a process that may not bypass permissions (a normal
user; as root, setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, without which root obeys
the mode bits too).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import amdocc
from amdocc.cli.main import main
from amdocc.containers import NotWalked, iter_files
from conftest import FIXTURES, ROOT, skip_unless_required

CODE_OBJECT = FIXTURES / "elf" / "gfx942_cov4.hsaco"


def put(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CODE_OBJECT, path)
    return path


@pytest.fixture
def looped(tmp_path) -> Path:
    """tree/a/b/k.co, tree/a/z.co; links: tree/a/b/up -> .. (a loop), tree/alias -> a (a second
    way in), tree/a/self -> . (a loop onto itself), tree/ext -> a directory outside the tree."""
    tree = tmp_path / "tree"
    put(tree / "a" / "b" / "k.co")
    put(tree / "a" / "z.co")
    put(tmp_path / "outside" / "o.co")
    (tree / "a" / "b" / "up").symlink_to("..", target_is_directory=True)
    (tree / "a" / "self").symlink_to(".", target_is_directory=True)
    (tree / "alias").symlink_to("a", target_is_directory=True)
    (tree / "ext").symlink_to(tmp_path / "outside", target_is_directory=True)
    return tree


def test_linked_directories_are_walked_once_and_loops_are_named(looped):
    items = list(iter_files(str(looped)))
    files = [i for i in items if isinstance(i, str)]
    assert files == [str(looped / p) for p in ("a/b/k.co", "a/z.co", "ext/o.co")]
    passed = {Path(i.path).relative_to(looped).as_posix(): i for i in items if isinstance(i, NotWalked)}
    assert set(passed) == {"a/b/up", "a/self", "alias"}
    for where, entry in passed.items():
        assert not entry.error
        walked_as = entry.reason.removeprefix("a directory already walked as ")
        assert walked_as != entry.reason and os.path.samefile(looped / where, walked_as)


def test_a_directory_listing_that_fails_is_an_error_in_its_place_and_the_walk_goes_on(looped, monkeypatch, capsys):
    put(looped / "a" / "c" / "hidden.co")
    real_scandir = os.scandir
    locked = str(looped / "a" / "c")

    def scandir(path="."):
        if path == locked:  # any other path, or a file descriptor, is listed as usual
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    items = list(iter_files(str(looped)))
    assert NotWalked(locked, "cannot list directory: Permission denied", True) in items
    assert [i for i in items if isinstance(i, str)] == [str(looped / p) for p in ("a/b/k.co", "a/z.co", "ext/o.co")]
    # The command line: results for the rest, the directory among the errors, exit 2.
    for jobs in ("1", "2"):
        assert main(["inspect", "--json", "--jobs", jobs, str(looped)]) == 2
        captured = capsys.readouterr()
        doc = json.loads(captured.out)
        assert [co["path"] for co in doc["code_objects"]] == [
            str(looped / p) for p in ("a/b/k.co", "a/z.co", "ext/o.co")
        ]
        assert [(e["path"], e["error"]) for e in doc["errors"]] == [
            (locked, f"{locked}: cannot list directory: Permission denied")
        ]
        assert captured.err == f"amdocc: {locked}: cannot list directory: Permission denied\n"
    # The Python API: collected beside the code objects, or raised when strict.
    loaded = amdocc.load(looped, strict=False)
    assert len(loaded) == 3 and [f.origin.path for f in loaded.failed] == [locked]
    assert {s.origin.path for s in loaded.skipped} == {str(looped / p) for p in ("a/b/up", "a/self", "alias")}
    with pytest.raises(amdocc.AmdoccError, match="cannot list directory"):
        amdocc.load(looped)


def test_a_named_directory_that_cannot_be_listed_is_an_error_beside_the_other_paths(tmp_path, monkeypatch, capsys):
    good = put(tmp_path / "good" / "k.co")
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path="."):
        if path == str(locked):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["check", "--no-config", "--json", "--rules", "vgpr-spills", str(locked), str(tmp_path / "good")]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert [e["error"] for e in doc["errors"]] == [f"{locked}: cannot list directory: Permission denied"]
    assert doc["summary"]["kernels"] == 5  # the fixture's five kernels in good/ (its .readelf.txt)
    assert good.exists()


def test_links_to_nothing_self_loops_and_fifos_are_entries_with_their_reason(tmp_path, capsys):
    tree = tmp_path / "tree"
    put(tree / "k.co")
    (tree / "dangling").symlink_to("nothing")
    (tree / "selfloop").symlink_to("selfloop")
    os.mkfifo(tree / "fifo")  # never opened: reading it would wait for a writer
    items = list(iter_files(str(tree)))
    assert items == [
        NotWalked(str(tree / "dangling"), "a link to nothing: its target does not exist", False),
        NotWalked(str(tree / "fifo"), "not a regular file (a FIFO)", False),
        str(tree / "k.co"),
        NotWalked(str(tree / "selfloop"), "cannot follow link: Too many levels of symbolic links", True),
    ]
    assert main(["inspect", str(tree)]) == 2
    out = capsys.readouterr().out
    assert f"skipped {tree / 'dangling'}: a link to nothing: its target does not exist" in out
    assert f"skipped {tree / 'fifo'}: not a regular file (a FIFO)" in out


def _frames() -> int:
    frame, n = sys._getframe(), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n


def test_a_tree_deeper_than_the_recursion_limit_is_walked(tmp_path):
    # The limit is lowered to 50 frames above this one, and the tree made 200 deep: a walk that
    # recursed once per level would raise RecursionError. (A tree deeper than the default limit
    # would do the same to shutil.rmtree, which pytest uses to clean its temporary folders.)
    deepest = tmp_path.joinpath(*["d"] * 200)
    put(deepest / "k.co")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_frames() + 50)
    try:
        items = list(iter_files(str(tmp_path)))
    finally:
        sys.setrecursionlimit(limit)
    assert items == [str(deepest / "k.co")]


def _without_permission_bypass() -> list[str]:
    """A command prefix under which this user obeys file modes: none for a normal user; for
    root, setpriv without the two capabilities that bypass them."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        skip_unless_required("running as root without setpriv: no way to make a directory unlistable for real")
    drop = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", "--"]


def test_an_unlistable_directory_for_real_is_an_error_and_the_rest_is_read(looped):
    put(looped / "a" / "c" / "hidden.co")
    locked = looped / "a" / "c"
    os.chmod(locked, 0)
    try:
        argv = [*_without_permission_bypass(), sys.executable, "-m", "amdocc", "census", "--json", str(looped)]
        proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.chmod(locked, 0o755)
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kernels"] == 3 * 5  # three copies of the fixture's five kernels (its .readelf.txt)
    assert [e["error"] for e in doc["errors"]] == [f"{locked}: cannot list directory: Permission denied"]
    # a/b/up, a/self and alias all lead to a/
    assert doc["skipped"] == {f"a directory already walked as {looped / 'a'}": 3}
