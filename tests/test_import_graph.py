"""The package's import graph: the flow is one-directional (containers → codeobject → isa →
models → application → cli), so no module imports another that, by any path, imports it back, and nothing
below the facade imports ``amdocc`` itself.

Every ``import`` and ``from ... import`` in ``amdocc/`` counts, wherever it is written: at the
top of a module, inside a function (a deferred import, which hides a cycle from the import
system but not from a reader), or under ``if TYPE_CHECKING:``. ``from pkg import name`` is an
edge to the submodule ``pkg.name`` when there is one, else to ``pkg`` (its ``__init__``). The
implicit import of a parent package by its submodules is not an edge (every submodule would
otherwise be in a cycle with the ``__init__`` that re-exports it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "amdocc"

# Modules above the facade, which may import ``amdocc`` itself: the command line.
ABOVE_THE_FACADE = ("amdocc.__main__", "amdocc.cli")


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under ``root`` (a package directory)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` (at ``path``) imports, anywhere in its text."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    top = next(iter(known)).split(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level > len(package):
                    raise AssertionError(f"{path}:{node.lineno}: a relative import above the package")
                base = package[: len(package) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [
                f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in known else origin for alias in node.names
            ]
        for target in targets:
            if target.split(".")[0] != top:
                continue
            while target not in known and "." in target:  # ``import a.b.attr``: the module a.b
                target = target.rsplit(".", 1)[0]
            if target in known and target != name:
                found.add(target)
    return found


def graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


EDGES = graph(PACKAGE)
CYCLES = cycles(EDGES)
# The rooms of the house: each subpackage, and the top-level modules together as "amdocc".
ROOMS = sorted({name.split(".")[1] if name.count(".") and (PACKAGE / name.split(".")[1]).is_dir() else "amdocc"
                for name in EDGES})  # fmt: skip


def room_of(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else "amdocc"


@pytest.mark.parametrize("room", ROOMS)
def test_no_import_cycle_touches_the_room(room):
    touching = [sorted(c) for c in CYCLES if any(room_of(m) == room for m in c)]
    assert not touching, f"import cycles through amdocc.{room}: {touching}"


def test_nothing_below_the_facade_imports_the_package_itself():
    below = sorted(
        name
        for name, targets in EDGES.items()
        if "amdocc" in targets and not any(name == a or name.startswith(a + ".") for a in ABOVE_THE_FACADE)
    )
    assert below == [], f"import the module you need, not amdocc: {below}"


def test_the_walk_sees_every_kind_of_import(tmp_path):
    # A package written here with a cycle hidden each way the walk must see through.
    pkg = tmp_path / "amdocc"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from .low import thing\n",
        "low.py": "def f():\n    from .sub import deep  # deferred\n",
        "sub/__init__.py": "",
        "sub/deep.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..mid import M\n"),
        "mid.py": "import amdocc.low.attr\nfrom . import low, nothing_here\n",
        "alone.py": "import os\nfrom os import path\n",
        "facade_user.py": "from . import thing\n",
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    edges = graph(pkg)
    assert edges == {
        "amdocc": {"amdocc.low"},
        "amdocc.low": {"amdocc.sub.deep"},
        "amdocc.sub": set(),
        "amdocc.sub.deep": {"amdocc.mid"},
        "amdocc.mid": {"amdocc.low", "amdocc"},  # ``from . import nothing_here``: the package
        "amdocc.alone": set(),
        "amdocc.facade_user": {"amdocc"},
    }
    assert cycles(edges) == [frozenset({"amdocc", "amdocc.low", "amdocc.sub.deep", "amdocc.mid"})]
    # Without the deferred import there is no cycle.
    (pkg / "low.py").write_text("def f():\n    pass\n")
    assert cycles(graph(pkg)) == []


def test_the_models_are_plain_records_and_functions_beside_them():
    # The result record imports nothing that computes: a record is data (its read-only dicts too).
    assert EDGES["amdocc.models.record"] <= {"amdocc.models.usage", "amdocc.targets", "amdocc.errors", "amdocc.frozen"}
    assert EDGES["amdocc.frozen"] == set()
    # The next step re-asks the computation, not the package that re-exports it.
    assert "amdocc.models" not in EDGES["amdocc.models.nextstep"]
