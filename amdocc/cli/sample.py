"""``amdocc sample``: print the path of a code object shipped with amdocc."""

from __future__ import annotations

import argparse

from ..errors import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print the path of the sample code object shipped inside the package "
        "(an offload bundle for gfx90a, gfx942, gfx950, gfx1100 and gfx1201), "
        'e.g. amdocc inspect "$(amdocc sample)".'
    )


def run(args: argparse.Namespace) -> int:
    from ..samples import path

    print(path())
    return ExitCode.OK
