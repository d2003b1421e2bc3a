"""How to install one of amdocc's extras from where this amdocc was imported.

``pip install 'amdocc[hip]'`` asks an index for amdocc, which is right for an installed amdocc
(pip keeps the installed one and adds the extra's packages) but not for a clone run in place
(``PYTHONPATH=.`` or from its root): there the index's amdocc, or none, is not the code
running. A clone is recognised by the project file beside the package (``pyproject.toml``
naming the project ``amdocc``, which a wheel does not ship); its hint installs that tree
(``pip install -e '.[hip]'``, the path written out unless it is the working directory). The
requirement is always quoted, so that zsh does not take ``[hip]`` for a glob.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

_PROJECT_NAME = re.compile(r'^\s*name\s*=\s*"amdocc"\s*$', re.MULTILINE)


def source_tree(package_dir: Path | None = None) -> Path | None:
    """The root of the clone this amdocc is imported from, or None when it is installed."""
    here = package_dir or Path(__file__).resolve().parent
    project = here.parent / "pyproject.toml"
    try:
        text = project.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return here.parent if _PROJECT_NAME.search(text) else None


def install_hint(*extras: str, package_dir: Path | None = None) -> str:
    """The pip command that adds ``extras`` (``"hip"``, ``"test"``) to this amdocc."""
    wanted = ",".join(extras)
    root = source_tree(package_dir)
    if root is None:
        return f"pip install {shlex.quote(f'amdocc[{wanted}]')}"
    try:
        here = Path.cwd().resolve() == root
    except OSError:  # the working directory was removed
        here = False
    where = "." if here else os.fspath(root)
    return f"pip install -e {shlex.quote(f'{where}[{wanted}]')}"
