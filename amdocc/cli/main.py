"""Entry point: ``amdocc <command> ...``. Commands are imported only when chosen."""

from __future__ import annotations

import argparse
import gc
import importlib
import re
import sys
from collections.abc import Callable
from typing import NoReturn

from ..errors import AmdoccError, ExitCode

# name → (module, one-line help). Each module has add_arguments(parser) and run(args) -> int.
COMMANDS = {
    "inspect": ("amdocc.cli.inspect", "show code objects, kernels, resources and findings"),
    "occupancy": ("amdocc.cli.occupancy", "workgroups per CU for each kernel, the limiter, and the next step"),
    "best-block": (
        "amdocc.cli.best_block",
        "HIP's potential block size and the block to launch (respects .max_flat_workgroup_size)",
    ),
    "sweep": ("amdocc.cli.sweep", "grid of workgroups per CU over block sizes and dynamic LDS for one kernel"),
    "split": ("amdocc.cli.split", "KV split count for AITER's fp8_mqa_logits from the kernel's occupancy"),
    "gate": ("amdocc.cli.gate", "route a prefill to AITER's asm kernel or CK Tile, with every reason"),
    "diff": ("amdocc.cli.diff", "compare two builds kernel by kernel; exit 1 on a regression (CI gate)"),
    "check": (
        "amdocc.cli.check",
        "check every kernel against CI rules (spills, scratch, launch, LDS); baseline; JUnit/SARIF",
    ),
    "census": (
        "amdocc.cli.census",
        "one report (CSV/Parquet/HTML) for every kernel of a tree or wheel; or compare two",
    ),
    "isa": (
        "amdocc.cli.isa",
        "each kernel's machine code decoded by LLVM: loop depth, spills (in loops), instruction mix",
    ),
    "tune-regs": (
        "amdocc.cli.tune_regs",
        "the waves-per-EU frontier (occupancy against spills) from the kernel's own compiler",
    ),
    "verify": ("amdocc.cli.verify", "compare the hip model with the live HIP runtime (needs a ROCm GPU)"),
    "sample": ("amdocc.cli.sample", "print the path of the code object shipped with amdocc"),
}

# Every status a command can give and what it means, as docs/cli-contract.md's table says it:
# the end of every --help (tests/test_cli_contract.py compares the two).
EXIT_STATUSES = (
    (ExitCode.OK, "success (for a gate such as check or diff: nothing failed)"),
    (
        ExitCode.GATE_FAILED,
        "a gate failed: check found a new violation (or a stale baseline entry with --fail-on-stale), "
        "diff or census --fail-on a regression",
    ),
    (
        ExitCode.USAGE_ERROR,
        "bad usage or bad input: an invalid, contradictory or ignored option, a bad AMDOCC_* value, "
        "a selection that matches nothing, an unreadable file, a bad table",
    ),
    (
        ExitCode.RUNTIME_UNAVAILABLE,
        "a HIP runtime (verify) or libLLVM (isa, tune-regs) is needed but not usable here; for tune-regs, "
        "an entry the installed compiler does not reproduce byte for byte",
    ),
    (ExitCode.INTERRUPTED, "interrupted (Ctrl-C)"),
)


def exit_status_help(width: int | None = None) -> str:
    """The "exit status:" section of --help: one status a line, its meaning wrapped under it."""
    import shutil
    import textwrap

    width = width or max(shutil.get_terminal_size().columns - 2, 40)
    lines = ["exit status:"]
    for status, meaning in EXIT_STATUSES:
        lines += textwrap.wrap(
            meaning, width, initial_indent=f"  {int(status):<5}", subsequent_indent=" " * 7, break_on_hyphens=False
        )
    return "\n".join(lines) + "\n"


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error printed as two lines: a one-line usage naming the command
    (the full usage is in --help) and the error itself; and every exit status at the end of
    --help."""

    def format_help(self) -> str:
        return super().format_help() + "\n" + exit_status_help()

    def error(self, message: str) -> NoReturn:
        message = _with_suggestion(message)
        positionals = " ".join(
            _shown(act) + ("..." if act.nargs in ("*", "+") else "")
            for act in self._actions
            if not act.option_strings and act.dest != "command"
        )
        short = f"{self.prog} [options]" + (f" {positionals}" if positionals else "") + f"  (see {self.prog} --help)"
        self.exit(ExitCode.USAGE_ERROR, f"usage: {short}\n{self.prog}: error: {message}\n")

    def _get_value(self, action: argparse.Action, arg_string: str) -> object:
        # amdocc's validated types raise Invalid for a bad value; anything else they raise (a
        # TableError is a ValueError too) is not the value's fault and must not be turned into
        # argparse's "invalid X value": it propagates to main, which prints it as one line.
        from .args import ArgType, Invalid

        if isinstance(action.type, ArgType):
            try:
                return action.type(arg_string)
            except Invalid as exc:
                raise argparse.ArgumentError(action, str(exc)) from None
        return super()._get_value(action, arg_string)


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)$")


def _with_suggestion(message: str) -> str:
    """argparse's "invalid choice" (a misspelled command), with the nearest choice suggested."""
    m = _INVALID_CHOICE.search(message)
    if not m:
        return message
    import difflib  # only when a suggestion is looked for: a run that parses never needs it

    names = re.findall(r"'([^']*)'", m.group("choices"))
    close = difflib.get_close_matches(m.group("given"), names, n=1, cutoff=0.6)
    if not close:
        return message
    given, choices = m.group("given"), m.group("choices")
    return f"{message[: m.start()]}invalid choice: {given!r} (did you mean {close[0]!r}? choose from {choices})"


def unrecognized(parser: argparse.ArgumentParser, extra: list[str]) -> str:
    """ "unrecognized arguments: ...", each misspelled option with the nearest one it has
    (Python 3.11's argparse suggests none): "--blok (did you mean --block?)"."""
    import difflib  # only when a suggestion is looked for: a run that parses never needs it

    options = [o for action in parser._actions for o in action.option_strings]
    shown = []
    for arg in extra:
        name = arg.split("=", 1)[0]
        close = difflib.get_close_matches(name, options, n=1, cutoff=0.6) if name.startswith("-") else []
        shown.append(f"{arg} (did you mean {close[0]}?)" if close else arg)
    return f"unrecognized arguments: {' '.join(shown)}"


def _shown(action: argparse.Action) -> str:
    """A positional's name in the short usage line (a tuple metavar as argparse shows it)."""
    name = action.metavar or action.dest
    return name if isinstance(name, str) else " ".join(name)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``only``, the top level and that command's parser
    alone, so a run builds one parser and imports one command's module (main uses it only
    where the two parse alike: see :func:`_command_named`)."""
    from .. import __version__

    parser = Parser(
        prog="amdocc",
        description="Read AMD GPU code objects (.co/.hsaco, offload bundles, fat .so/.dll) and "
        "report what each kernel uses and how many workgroups fit on a CU.",
        epilog="PATH may be '-' for standard input.",
    )
    parser.add_argument("--version", action="version", version=f"amdocc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name != only:
            continue
        cmd = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        importlib.import_module(module).add_arguments(cmd)
        cmd.set_defaults(_module=module, _parser=cmd)
    return parser


def _command_named(argv: list[str]) -> str | None:
    """The command when the arguments start with one's full name, else None. Only then does the
    top level see nothing but that command and what follows it, which its parser takes, so the
    other commands' parsers cannot change a word printed. Anything else (no command, an
    unknown or abbreviated one, an option before it such as -h, --version or --) needs them
    all: the top level's help lists every command and its errors name every choice."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    """Run one command and return its exit status (docs/cli-contract.md). Standard output and
    standard error are guarded for the whole run, parsing and --help included: a reader that
    goes away (``| head -1``, ``2>&1 | head -0``) loses what is left to print, never the status
    the command would otherwise give (amdocc.cli.output)."""
    from .output import guarded_streams

    with guarded_streams():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    # Parsing allocates many small acyclic objects that reference counting frees; collecting
    # every 700 allocations costs a sixth of the time on a large tree for nothing.
    gc.set_threshold(100_000, 50, 100)
    # A path or name that is not UTF-8 is written as \xNN on both streams, never a traceback
    # (amdocc.printable states the rule every writer follows).
    from ..printable import escape_undecodable

    escape_undecodable(sys.stdout)
    escape_undecodable(sys.stderr)
    parser = build_parser(_command_named(sys.argv[1:] if argv is None else argv))
    try:
        args, extra = parser.parse_known_args(argv)  # an AmdoccError a type meets is caught below
        if extra:
            # Shown with the usage of the subcommand they were given to, not the top level's.
            where = getattr(args, "_parser", parser)
            where.error(unrecognized(where, extra))
    except SystemExit as exc:  # usage errors (2), --help and --version (0): returned, not raised
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE_ERROR
    except AmdoccError as exc:  # a bad table read while checking a value
        from .args import spelled

        print(f"amdocc: {spelled(exc, None)}", file=sys.stderr)
        return exc.exit_code
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        from .. import env

        for warning in env.check("amdocc"):  # a bad AMDOCC_* value: UsageError, exit 2
            print(f"amdocc: warning: {warning}", file=sys.stderr)
        run: Callable[[argparse.Namespace], int] = importlib.import_module(args._module).run
        from .args import spell_for
        from .progress import told

        with told(spell_for(args._parser)):
            return run(args)

    except AmdoccError as exc:
        from .args import spelled

        print(f"amdocc: {spelled(exc, args)}", file=sys.stderr)
        return exc.exit_code  # each error class says its status (errors.py; 3: HipUnavailable)
    except BrokenPipeError:
        # Only a stream written around the guards (another file named "/dev/stdout", say) can
        # get here: the command did not finish, so its verdict is unknown and is not success.
        print("amdocc: an output closed before the command finished", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
