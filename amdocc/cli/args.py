"""The argument contract every subcommand shares.

Each option that takes a value goes through one of the validated types below, so a bad value is
a usage error (exit 2, argparse's usage line, then one line naming what is wrong and what is
valid), never a traceback and never a silent default. Every type also lists values it must
refuse (``invalid_examples``), so a test can walk each subcommand's parser and try them all:
an option added later is covered without editing the test.

Enumerations read their tables when a value is checked, not when the parser is built, so new
processors, devices and HIP profiles are accepted as soon as their table rows exist, and the CLI
starts without reading any table.

The mode checks at the end refuse options that would be ignored: options of another model,
manual resource numbers beside a PATH, file filters without a PATH.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..errors import AmdoccError
from ..errors import UsageError as UsageError  # re-exported: commands raise a.UsageError
from ..numbers import BYTE_SUFFIXES, parse_bytes, parse_integer

if TYPE_CHECKING:
    pass


class Invalid(argparse.ArgumentTypeError):
    """A value an option refuses; argparse prints it after the option's name."""


class ArgType:
    """A validated argparse type: ``__call__`` converts or raises :class:`Invalid`.

    ``sample`` is a value the type accepts and ``refused`` values it must refuse; a type whose
    examples depend on its settings computes them in example() and invalid_examples() instead."""

    # The types are plain classes, not dataclasses: making a dataclass compiles its generated
    # methods at import, and 16 of them cost every run more than parsing (docs/performance.md).
    metavar = "VALUE"
    sample: str
    refused: tuple[str, ...] = ("",)

    def __call__(self, text: str) -> object:
        raise NotImplementedError

    def invalid_examples(self) -> list[str]:
        """Values this type must refuse: empty, of the wrong type, out of range."""
        return list(self.refused)

    def example(self) -> str:
        """A value this type accepts (tests fill required options with it)."""
        return self.sample

    def describe(self) -> str:
        return self.metavar


# -- numbers ----------------------------------------------------------------------------------


class Integer(ArgType):
    """A whole number in [minimum, maximum] (decimal, or 0x hex)."""

    def __init__(self, minimum: int | None = None, maximum: int | None = None, what: str = "an integer") -> None:
        self.minimum, self.maximum, self.what = minimum, maximum, what

    def __call__(self, text: str) -> int:
        value = _parse_int(text, self.what, self.describe())
        return self.check(value, text)

    def check(self, value: int, text: str) -> int:
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise Invalid(f"{text!r} is out of range: expected {self.describe()}")
        return value

    def describe(self) -> str:
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return f"{self.what} from {lo} to {hi}"
        if lo is not None:
            return f"{self.what} >= {lo}"
        if hi is not None:
            return f"{self.what} <= {hi}"
        return self.what

    def example(self) -> str:
        return str(self.minimum if self.minimum is not None else 0)

    def invalid_examples(self) -> list[str]:
        out = ["", "abc", "1.5"]
        if self.minimum is not None:
            out.append(str(self.minimum - 1))
        if self.maximum is not None:
            out.append(str(self.maximum + 1))
        return out


def _parse_int(text: str, what: str, expected: str) -> int:
    value = parse_integer(text)
    if value is None:
        raise Invalid(f"{text!r} is not {what}: expected {expected}" if text else f"empty value: expected {expected}")
    return value


class ByteSize(Integer):
    """A byte count: an integer, optionally with a K/KiB, M/MiB or G/GiB suffix (powers of 1024)."""

    def __init__(self, minimum: int | None = 0, maximum: int | None = None, what: str = "a byte count") -> None:
        super().__init__(minimum, maximum, what)

    def __call__(self, text: str) -> int:
        value = parse_bytes(text)
        if value is None:
            raise Invalid(
                f"{text!r} is not {self.what}: expected {self.describe()}"
                if text
                else f"empty value: expected {self.describe()}"
            )
        return self.check(value, text)

    def describe(self) -> str:
        return super().describe() + f" (bytes, or with a {BYTE_SUFFIXES} suffix)"

    def invalid_examples(self) -> list[str]:
        return [*super().invalid_examples(), "1e3", "64 parsecs"]


class Number(ArgType):
    """A finite real number >= minimum (> minimum when ``exclusive``)."""

    def __init__(self, minimum: float | None = None, exclusive: bool = False, what: str = "a number") -> None:
        self.minimum, self.exclusive, self.what = minimum, exclusive, what

    def __call__(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or value != value or value in (float("inf"), float("-inf")):
            raise Invalid(
                f"{text!r} is not a finite number: expected {self.describe()}"
                if text
                else f"empty value: expected {self.describe()}"
            )
        low = self.minimum
        if low is not None and (value < low or (self.exclusive and value == low)):
            raise Invalid(f"{text!r} is out of range: expected {self.describe()}")
        return value

    def describe(self) -> str:
        if self.minimum is None:
            return self.what
        return f"{self.what} {'>' if self.exclusive else '>='} {self.minimum:g}"

    def example(self) -> str:
        if self.minimum is None:
            return "0"
        return f"{self.minimum + 1 if self.exclusive else self.minimum:g}"

    def invalid_examples(self) -> list[str]:
        low = self.minimum
        out = ["", "abc", "nan", "inf"]
        if low is not None:
            out.append(f"{low - 1:g}")
            if self.exclusive:
                out.append(f"{low:g}")
        return out


class ListOf(ArgType):
    """Comma-separated values of one type, at least one."""

    def __init__(self, item: ArgType) -> None:
        self.item = item

    def __call__(self, text: str) -> list[object]:
        parts = [p.strip() for p in text.split(",")]
        if not text.strip() or any(not p for p in parts):
            raise Invalid(
                f"{text!r}: expected comma-separated values, each {self.item.describe()}"
                if text
                else f"empty value: expected comma-separated values, each {self.item.describe()}"
            )
        return [self.item(p) for p in parts]

    def describe(self) -> str:
        return f"comma-separated {self.item.describe()}"

    def example(self) -> str:
        return self.item.example()

    def invalid_examples(self) -> list[str]:
        return ["", ",", "1,,2"] + [f"{self.item.example()},{bad}" for bad in self.item.invalid_examples() if bad]


class WorkgroupSize(Integer):
    """A workgroup size in threads: 1 to the largest workgroup any AMDGPU processor launches
    (targets.MAX_WORKGROUP_SIZE, 1024: LLVM's flat-workgroup-size cap, HIP's maxThreadsPerBlock).
    A size above one kernel's own maximum is still taken: the models then say what HIP and LLVM
    answer for it."""

    def __init__(
        self, minimum: int | None = 1, maximum: int | None = None, what: str = "a workgroup size in threads"
    ) -> None:
        if maximum is None:
            from ..targets import MAX_WORKGROUP_SIZE

            maximum = MAX_WORKGROUP_SIZE
        super().__init__(minimum, maximum, what)

    def describe(self) -> str:
        return super().describe() + " (no AMDGPU processor launches a larger workgroup)"


class WaveFloor(Number):
    """An occupancy floor in waves per SIMD: above 0 and at most the most wave slots any
    processor of tables/targets.toml has (max_waves_per_simd, LLVM's getMaxWavesPerEU: 20 on
    gfx10-gfx11), read when a value is checked. A floor above the processor's own slots can
    never be met; check_config refuses that per model and processor."""

    def __init__(
        self, minimum: float | None = 0, exclusive: bool = True, what: str = "a number of waves per SIMD"
    ) -> None:
        super().__init__(minimum, exclusive, what)

    def __call__(self, text: str) -> float:
        value = super().__call__(text)
        most = most_waves_per_simd()
        if value > most:
            raise Invalid(f"{text!r} is out of range: expected {self.describe()}")
        return value

    def describe(self) -> str:
        return f"{self.what} above 0 and at most {most_waves_per_simd()} (the most wave slots any processor has)"

    def invalid_examples(self) -> list[str]:
        return [*super().invalid_examples(), str(most_waves_per_simd() + 1), "100"]


class LdsSize(ByteSize):
    """LDS bytes per workgroup (static or dynamic): 0 to the most one workgroup may use on any
    processor of tables/targets.toml (lds_per_workgroup, or lds_per_workgroup_wgp in WGP mode),
    read when a value is checked. Within that, a size above one processor's own limit is taken:
    the models then say the workgroup does not launch there."""

    def __init__(
        self, minimum: int | None = 0, maximum: int | None = None, what: str = "LDS bytes per workgroup"
    ) -> None:
        super().__init__(minimum, maximum, what)

    def __call__(self, text: str) -> int:
        value = super().__call__(text)
        if value > most_lds_per_workgroup():
            raise Invalid(f"{text!r} is out of range: expected {self.describe()}")
        return value

    def describe(self) -> str:
        most = most_lds_per_workgroup()
        return (
            f"{self.what} from 0 to {most} ({most // 1024} KiB, the most any processor gives one workgroup; "
            f"bytes, or with a {BYTE_SUFFIXES} suffix)"
        )

    def invalid_examples(self) -> list[str]:
        return [*super().invalid_examples(), str(most_lds_per_workgroup() + 1), "1G"]


def most_lds_per_workgroup() -> int:
    from ..targets import all_targets

    return max(max(t.lds_per_workgroup, t.lds_per_workgroup_wgp or 0) for t in all_targets())


def most_waves_per_simd() -> int:
    from ..targets import all_targets

    return max(t.max_waves_per_simd for t in all_targets())


def integer(minimum: int | None = None, maximum: int | None = None) -> Integer:
    return Integer(minimum, maximum)


def integers(minimum: int | None = None, maximum: int | None = None) -> ListOf:
    return ListOf(Integer(minimum, maximum))


def byte_size(minimum: int = 0) -> ByteSize:
    return ByteSize(minimum)


def byte_sizes(minimum: int = 0) -> ListOf:
    return ListOf(ByteSize(minimum))


# -- enumerations -------------------------------------------------------------------------------


def did_you_mean(text: str, valid: Iterable[str]) -> str:
    """ " (did you mean 'x'?)" for the valid name nearest ``text``, or nothing when none is near."""
    import difflib  # only when a value is refused: a run whose values are good never needs it

    close = difflib.get_close_matches(text, list(valid), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class OneOf(ArgType):
    """One name from a set read at check time (a table's rows), or a fixed tuple. ``synonyms``
    maps spellings users write to the name they mean (``--findings info``: all, info and above)."""

    def __init__(
        self,
        values: Callable[[], Iterable[str]] | tuple[str, ...],
        what: str = "value",
        convert: Callable[[str], object] = str,
        synonyms: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.values, self.what, self.convert, self.synonyms = values, what, convert, synonyms

    def valid(self) -> list[str]:
        return [str(v) for v in (self.values() if callable(self.values) else self.values)]

    def __call__(self, text: str) -> object:
        valid = self.valid()
        text = dict(self.synonyms).get(text, text)
        if text in valid:
            return self.convert(text)
        raise Invalid(
            f"unknown {self.what} {text!r}{did_you_mean(text, valid)} (choose from {', '.join(valid)})"
            if text
            else f"empty value: choose a {self.what} from {', '.join(valid)}"
        )

    def example(self) -> str:
        return self.valid()[0]

    def invalid_examples(self) -> list[str]:
        return ["", "bogus"]


class ProfileName(OneOf):
    """A HIP profile's name, or a patch release of its release line (rocm-6.4.1 -> rocm-6.4)."""

    def __call__(self, text: str) -> object:
        from ..models.hip_profiles import canonical_name

        return super().__call__(canonical_name(text))

    def example(self) -> str:
        from ..models.hip_profiles import default_profile_name

        return default_profile_name()


class Kinds(ArgType):
    """A comma list of names from a set (a fixed tuple, or read at check time like
    :class:`OneOf`), returned in the set's order without repeats. "all" stands for every name,
    a group's name for its members, and "none" (alone, when ``none`` allows an empty choice)
    for no name."""

    def __init__(
        self,
        kinds: Callable[[], Iterable[str]] | tuple[str, ...],
        groups: tuple[tuple[str, tuple[str, ...]], ...] = (),
        none: bool = True,
        what: str = "kind",
    ) -> None:
        self.kinds, self.groups, self.none, self.what = kinds, groups, none, what

    def names(self) -> tuple[str, ...]:
        return tuple(self.kinds() if callable(self.kinds) else self.kinds)

    def __call__(self, text: str) -> list[str]:
        kinds = self.names()
        chosen = [k.strip() for k in text.split(",")]
        if chosen == ["none"] and self.none:
            return []
        shorthands = {"all": kinds, **dict(self.groups)}
        bad = [k for k in chosen if k not in kinds and k not in shorthands]
        if bad:
            shown = ", ".join(repr(b) for b in bad)
            extra = ", ".join([*shorthands] + (["none"] if self.none else []))
            hint = did_you_mean(bad[0], [*kinds, *shorthands]) if len(bad) == 1 else ""
            raise Invalid(f"unknown {self.what} {shown}{hint} (choose from {', '.join(kinds)}; or {extra})")
        picked = {k for name in chosen for k in shorthands.get(name, (name,))}
        return [k for k in kinds if k in picked]

    def example(self) -> str:
        return self.names()[0]

    def invalid_examples(self) -> list[str]:
        first = self.names()[0]
        return ["", "bogus", f"{first},bogus", f"{first},"] + ([] if self.none else ["none"])


# Target-id feature spellings (sram-ecc is the v2/v3-era name) → the targets table's column.
_FEATURES = {"sramecc": "sramecc", "sram-ecc": "sramecc", "xnack": "xnack"}


class Processor(ArgType):
    """A processor or target id from tables/targets.toml, features allowed:
    ``gfx942``, ``gfx942:sramecc+:xnack-``, ``amdgcn-amd-amdhsa--gfx90a:xnack+``."""

    sample = "gfx942"
    refused = ("", "banana", "gfx9999", "gfx942:xnack")

    def __call__(self, text: str) -> str:
        from ..targets import all_targets, find_target, processor_name, strip_triple

        if not text.strip():
            raise Invalid("empty value: expected a processor such as gfx942 or gfx942:sramecc+:xnack-")
        target = find_target(text)
        if target is None:
            names = ", ".join(t.name for t in all_targets())
            raise Invalid(f"unknown processor {processor_name(text)!r}: not a processor amdocc knows (known: {names})")
        for part in strip_triple(text).split(":")[1:]:
            feature = _FEATURES.get(part[:-1].lower())
            if part[-1:] not in ("+", "-") or feature is None:
                raise Invalid(f"{text!r}: feature {part!r} is not sramecc+/- or xnack+/-")
            if not getattr(target, feature):
                raise Invalid(f"{text!r}: {target.name} has no {feature} setting")
        return text.strip()


class Device(ArgType):
    """A product from tables/devices.toml (MI300X, MI355X, RX7900XTX, ...)."""

    sample = "MI300X"
    refused = ("", "banana")

    def __call__(self, text: str) -> str:
        from ..devices import get_device
        from ..errors import UnknownTargetError

        if not text.strip():
            raise Invalid("empty value: expected a device from tables/devices.toml such as MI300X")
        try:
            get_device(text)
        except UnknownTargetError as exc:
            raise Invalid(str(exc)) from None
        return text


# -- text ---------------------------------------------------------------------------------------


class Pattern(ArgType):
    """A Python regular expression (matched with search), not empty."""

    sample = "."
    refused = ("", "(", "[a-")

    def __call__(self, text: str) -> str:
        if not text:
            raise Invalid("empty pattern: give a regular expression (e.g. a part of the kernel's name)")
        try:
            re.compile(text)
        except re.error as exc:
            raise Invalid(f"{text!r} is not a regular expression: {exc}") from None
        return text


class Checked(ArgType):
    """A value a library function checks: ``check(text)`` raises a UsageError whose message
    argparse then prints after the option's name (a version, a plot file, ...)."""

    def __init__(self, check: Callable[[str], object], sample: str, refused: tuple[str, ...] = ("",)) -> None:
        self.check = check
        self.sample = sample  # a value ``check`` accepts
        self.refused = refused  # values it refuses

    def __call__(self, text: str) -> str:
        try:
            self.check(text)
        except UsageError as exc:
            raise Invalid(exc.message) from None
        return text


class ExistingPath(ArgType):
    """A file or directory that exists; "-" (standard input) when ``stdin`` allows it."""

    sample = "."
    refused = ("", "/nonexistent/amdocc-test-path")

    def __init__(self, stdin: bool = True, directory: bool | None = None) -> None:
        self.stdin = stdin
        self.directory = directory  # True: must be a directory; False: must not be one

    def __call__(self, text: str) -> str:
        if not text:
            raise Invalid("empty path")
        if text == "-" and self.stdin:
            return text
        if not os.path.exists(text):
            raise Invalid(f"{text}: no such file or directory")
        if self.directory is True and not os.path.isdir(text):
            raise Invalid(f"{text}: not a directory")
        if self.directory is False and os.path.isdir(text):
            raise Invalid(f"{text}: is a directory, not a file")
        return text


class OutputFile(ArgType):
    """A file to write: its directory must exist, and its suffix be one of ``suffixes`` (if any);
    "-" is standard output where ``stdout`` allows it."""

    def __init__(self, suffixes: tuple[str, ...] = (), stdout: bool = False) -> None:
        self.suffixes, self.stdout = suffixes, stdout

    def __call__(self, text: str) -> str:
        if not text:
            raise Invalid("empty path")
        if text == "-":
            if self.stdout:
                return text
            raise Invalid("'-': this is not written to standard output; give a file name")
        folder = os.path.dirname(os.path.abspath(text))
        if not os.path.isdir(folder):
            raise Invalid(f"{text}: directory {folder} does not exist")
        if os.path.isdir(text):
            raise Invalid(f"{text}: is a directory, not a file")
        if self.suffixes and os.path.splitext(text)[1].lower() not in self.suffixes:
            raise Invalid(f"{text}: unknown file type (use {', '.join(self.suffixes)})")
        return text

    def example(self) -> str:
        return "out" + (self.suffixes[0] if self.suffixes else ".txt")

    def invalid_examples(self) -> list[str]:
        return (
            ["", "/nonexistent/dir/out" + (self.suffixes[0] if self.suffixes else ".txt")]
            + (["out.xyz"] if self.suffixes else [])
            + ([] if self.stdout else ["-"])
        )


def check_readable(paths: Iterable[str]) -> None:
    """Every PATH exists ("-" is standard input), checked before slow or runtime-dependent work;
    the message is the one reading the file would give."""
    from ..errors import AmdoccError, Origin

    for path in paths:
        if path != "-" and not os.path.exists(path):
            raise AmdoccError("cannot open: No such file or directory", Origin(path))


# -- modes and contradictions ---------------------------------------------------------------


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether the user gave an option (its value differs from the parser's default)."""
    value = getattr(args, dest, None)
    return value not in (None, []) and value != args._parser.get_default(dest)


def flag_of(parser: argparse.ArgumentParser, dest: str) -> str:
    for action in parser._actions:
        if action.dest == dest and action.option_strings:
            return max(action.option_strings, key=len)
    return dest


#: Python parameters (amdocc's API) whose command-line option is not spelled from the name.
PARAM_FLAGS = {"block_size": "--block", "mode": "--wgp/--cu-mode"}


def as_flag(param: str) -> str:
    """The option that gives a parameter of the API: PARAM_FLAGS, else the name as a flag
    ("arch_vgprs": --arch-vgprs)."""
    return PARAM_FLAGS.get(param, "--" + param.replace("_", "-"))


def spell_for(parser: argparse.ArgumentParser | None) -> Callable[[str], str]:
    """How a command names a parameter of the API in its messages: the option of ``parser``
    whose dest it is, else :func:`as_flag`."""

    def spell(param: str) -> str:
        flag = flag_of(parser, param) if parser is not None else param
        return flag if flag != param else as_flag(param)

    return spell


def spelled(exc: AmdoccError, args: argparse.Namespace | None) -> str:
    """An error as the command line shows it: the parameters it names spelled as flags."""
    return exc.spelled(spell_for(getattr(args, "_parser", None)))


def refuse(args: argparse.Namespace, dests: Iterable[str], why: str) -> None:
    """A usage error naming every option of ``dests`` that was given: "OPTIONS: why"."""
    shown = [flag_of(args._parser, d) for d in dests if given(args, d)]
    if shown:
        raise UsageError(f"{', '.join(shown)}: {why}")


def what_if_needs_a_processor(args: argparse.Namespace) -> None:
    """--what-if evaluates code where it cannot run: it needs --target or --device to name where."""
    if given(args, "what_if") and not (args.target or args.device):
        raise UsageError("--what-if needs --target or --device: the processor to evaluate on")


# -- the options of a command that picks kernels out of PATHs --------------------------------
# (--target/--device/--what-if, --kernel, --mangled, --jobs, --block), declared here once so
# that they read alike in every command; app.selection.Selection holds what they select.

TARGET_HELP = (
    "processor or target id, e.g. gfx942 or gfx942:sramecc+:xnack- (with a PATH: "
    "only code objects that can run on it; with --device, its xnack/sramecc modes)"
)
KERNEL_HELP = "only kernels whose name (mangled or demangled) or symbol matches"

Parser = argparse.ArgumentParser | argparse._ArgumentGroup


def add_target_arguments(parser: Parser, target_help: str = TARGET_HELP, *, device: bool = True) -> None:
    """--target, and unless ``device`` is False --device and --what-if: the processor a Selection
    keeps code objects for."""
    parser.add_argument("--target", metavar="GFX", type=Processor(), help=target_help)
    if not device:
        return
    parser.add_argument(
        "--device",
        metavar="NAME",
        type=Device(),
        help="product from tables/devices.toml (e.g. MI300X, MI355X, RX7900XTX)",
    )
    parser.add_argument(
        "--what-if",
        action="store_true",
        help="also evaluate code objects that cannot run on --target/--device, labelled what-if",
    )


def add_kernel_argument(parser: Parser, text: str = KERNEL_HELP) -> None:
    """--kernel, the pattern a Selection matches kernel names against."""
    parser.add_argument("--kernel", metavar="REGEX", type=Pattern(), help=text)


def add_mangled_argument(parser: Parser, applies_to: str = "") -> None:
    """--mangled; ``applies_to`` names the outputs it shapes where others carry both names."""
    where = f" ({applies_to})" if applies_to else ""
    parser.add_argument("--mangled", action="store_true", help="show kernel names as stored, not demangled" + where)


def add_jobs_argument(parser: Parser) -> None:
    """--jobs, the processes reading the PATHs (see parallel.jobs_for)."""
    parser.add_argument(
        "--jobs",
        type=integer(1),
        metavar="N",
        help="processes reading files (default: one per CPU for 32 files or more)",
    )


def add_block_argument(parser: Parser, text: str, maximum: int | None = None) -> None:
    """--block, the workgroup size in threads (1 to the largest workgroup any processor launches)."""
    parser.add_argument("--block", type=WorkgroupSize(maximum=maximum), metavar="N", help=text)
