"""Structure-aware fuzzer for amdocc's readers: real fixtures, mutated where the parsers trust.

    python tools/fuzz --inputs 20000 --seed 7 [--jobs 2] [--out DIR]

Every input starts from a real fixture (``corpus``). The fixture is taken apart into layers
(``layers``: a host ELF's fat-binary section, the containers in it, a CCOB's decompressed
bundle, each bundle entry, ...); one layer is mutated one to four times by structure-aware
mutators (``mutators``, one module per container layer: ELF headers, notes and tables,
MessagePack and YAML metadata, bundles, CCOB, OffloadBinary, PE/COFF, fat-binary regions) or
generic byte mutators, and put back with its sizes, offsets, compressed stream and MD5 rebuilt
(``formats``: the fuzzer's own views of each format, independent of amdocc's parsers). Input
``i`` of seed ``S`` depends on (S, i) only (``inputs``), so ``--replay S:i`` regenerates it
whatever the number of jobs.

Every input must keep the contract (``contract``): only ``amdocc.AmdoccError`` escapes, and
every error names its file and offset; within the limits (``limits``): ``--time-limit`` seconds
of CPU (default 1 s), ``--rss-limit-mib`` of peak RSS (default 1024 MiB), address space capped
at ``--as-limit-mib`` (4 GiB). The campaign (``campaign``) runs inputs on watched worker
processes, and each distinct failure is minimized and written to ``--out`` as a reproducer
(``minimize``). ``cli`` is the command line.

Exit status: 0 when no input failed, 1 otherwise, 2 on bad usage.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: tools/fuzz/ is two levels down
