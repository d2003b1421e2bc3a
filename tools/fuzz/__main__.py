"""``python tools/fuzz ...`` (or ``python -m fuzz`` with tools/ on the path): the command line."""

import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent
if not __package__:
    # Run as a folder, this folder is sys.path[0]; the package lives one level up.
    sys.path[0] = str(TOOLS)
if str(TOOLS.parent) not in sys.path:
    sys.path.insert(0, str(TOOLS.parent))  # this checkout's amdocc, before any installed one

from fuzz.cli import main  # noqa: E402

sys.exit(main())
