"""How the `cloudguard` command presents itself: help, usage errors, and a reader that leaves.

Typer draws help and errors with rich. Four of its defaults read badly where
cloudguard is used, and are changed here, in one place, when the command starts:

- **Help text is plain text.** Rich markup is parsed in every help string, so a
  literal `[reap]` or `[hard]` (a cloudguard.toml table) vanished from the
  help as an unknown style tag ("(default: 24h, or  max-age)").
- **Option names stay whole.** In an 80-column terminal rich shrank every
  column of an options panel alike and cut names (`--all-subscripti…`); the
  negative form of a flag took a column of its own. The names are now
  measured first (never wrapped nor cut; a flag's negative form goes under
  its name) and the help column takes what is left.
- **A usage error is one line**, `cloudguard audit: Invalid value for
  '--grace': ... (cloudguard audit -h)`, not a box redrawn at the terminal's
  width (which split the message over lines, and a CI log over many).
- **A reader that stops reading is not an error.** `cloudguard audit | head -1`:
  once the pipe closes, the rest of the output goes nowhere and the command
  ends with its own exit code (click's default exits 1, which means "orphans
  found", and says nothing).

Flags are labelled by their metavar only, never by their Python type.
"""

from __future__ import annotations

import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table


def apply() -> None:
    """Change typer's presentation for this process (idempotent): now if typer has drawn
    with rich already, else the moment it imports `typer.rich_utils` to draw help or a
    usage error. Importing rich costs a command about 60 ms it mostly never uses."""
    rich_utils = sys.modules.get(_RICH_UTILS)
    if rich_utils is not None:
        _present(rich_utils)
    elif not any(isinstance(finder, _WhenRichIsImported) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WhenRichIsImported())


_RICH_UTILS = "typer.rich_utils"


class _WhenRichIsImported:
    """An import finder that finds nothing itself: it lets the import system find
    `typer.rich_utils`, and changes the module as soon as it has run."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name != _RICH_UTILS:
            return None
        sys.meta_path.remove(self)  # once, and out of the way of the real search
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            loader, run = spec.loader, spec.loader.exec_module

            def run_and_present(module: ModuleType) -> None:
                run(module)
                _present(module)

            loader.exec_module = run_and_present  # type: ignore[method-assign]
        return spec


def _present(rich_utils: Any) -> None:
    from rich.text import Text

    if getattr(rich_utils, "_cloudguard_presentation", False):
        return
    rich_utils._cloudguard_presentation = True
    _no_type_labels_where_they_mislead()

    def plain_text(*, text: str, style: str = "", markup_mode: Any) -> Any:
        import inspect

        # "fold": a word wider than the help column (a list of choices) wraps, never is cut.
        return rich_utils.highlighter(Text(inspect.cleandoc(text), style=style, overflow="fold"))

    rich_utils._make_rich_text = plain_text
    rich_utils.Table = _whole_names_table()
    rich_utils.rich_format_error = one_line_usage_error


def one_line_usage_error(error: Any) -> None:
    """A click usage error as one line on stderr, naming the command and its help."""
    if error.__class__.__name__ == "NoArgsIsHelpError":
        return  # the help was printed instead
    ctx = getattr(error, "ctx", None)
    command = ctx.command_path if ctx is not None else "cloudguard"
    message = " ".join(error.format_message().split())  # one line, whatever it quoted
    hint = f" ({command} -h)" if ctx is not None else ""
    sys.stderr.write(f"{command}: {message}{hint}\n")


def _whole_names_table() -> type[Table]:
    """rich's Table, as typer's options panels use it: the columns before the help (option
    names, short names, metavar) are never wrapped nor cut, and a flag's negative form
    (`--listed-subscriptions`) is shown under its name instead of in a column of its own."""
    from rich.table import Table

    class WholeNamesTable(Table):
        def add_row(self, *cells: Any, **options: Any) -> None:
            if not self.show_header and len(cells) in (6, 7):
                # An options panel: [required,] long, short, negative long, negative short,
                # metavar, help (typer.rich_utils._print_options_panel).
                if not self.columns:
                    for _ in cells[:-1]:
                        self.add_column(no_wrap=True)
                    self.add_column(ratio=1, overflow="fold")
                cells = _negative_under_name(cells)
            super().add_row(*cells, **options)

    return WholeNamesTable


def _negative_under_name(cells: tuple[Any, ...]) -> tuple[Any, ...]:
    from rich.text import Text

    long_at = len(cells) - 6  # after the "required" column when there is one
    name, negative = cells[long_at], cells[long_at + 2]
    if not str(negative):
        return cells
    moved = list(cells)
    moved[long_at] = Text.assemble(name, "\n", negative)
    moved[long_at + 2] = Text("")
    return tuple(moved)


def _no_type_labels_where_they_mislead() -> None:
    # Typer labels every parameter with its Python type: flags too ("--help
    # <bool>", though a flag takes no value) and arguments beside their own
    # metavar ("CMD <list[str]>"). Show the metavar alone, and nothing for a flag.
    from typer.core import TyperArgument, TyperOption

    option_type = TyperOption.display_type_rich

    def option_display(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag and self.metavar is None else option_type(self, ctx)

    def argument_display(self: TyperArgument, ctx: Any) -> str | None:
        return None

    TyperOption.display_type_rich = option_display  # type: ignore[method-assign]
    TyperArgument.display_type_rich = argument_display  # type: ignore[method-assign,assignment]


def reader_may_leave() -> None:
    """From now on, a closed stdout is not an error: the stream of
    `cloudguard.guard.closed_pipe`, which `run`, `check` and `doctor` put on stderr too."""
    from cloudguard.guard.closed_pipe import ReaderMayLeave

    if not isinstance(sys.stdout, ReaderMayLeave):
        sys.stdout = ReaderMayLeave(sys.stdout)
