"""Negative controls of the first hour (issue 25): break each promise on purpose, and its named
tests must fail at their named checks (harness: tests/cloudguard_mutants.py).

Never silently clean (an unjudged resource fails the audit), unknown never
zero (in any format), odd input is a message and its code (never a traceback,
never 1), the table and the page fit where they are read, help keeps its
brackets, a reader that leaves is not an error, and `init` never replaces a
file. And from issue 36: a file option is checked when parsed, and a sweep
says each scope as it goes (a slow one off a terminal too).
"""

from __future__ import annotations

from pathlib import Path

import cloudguard_aws
import pytest
from cloudguard_mutants import Mutation, assert_turns_red

AWS = Path(cloudguard_aws.__file__).resolve().parent

ODD = "tests/cli/test_odd_inputs.py"
ROW = f"{ODD}::test_an_odd_input_gets_one_line_and_its_exit_code"
FIGURES = "tests/audit/test_audit_figures_agree.py"
HTML = "tests/audit/test_audit_html.py::test_every_column_is_visible_at_common_window_widths"
SETUP = "tests/cli/test_setup_commands.py"
WORDS = (
    "tests/audit/test_audit_html.py::"
    "test_at_1400_px_no_word_is_broken_and_a_one_day_trend_is_one_narrow_column"
)

MUTATIONS = [
    Mutation(
        name="an unjudged fleet resource passes the audit",
        module="documents/findings.py",
        original="    if policy.fail_on_unverified:\n",
        broken="    if False:\n",
        tests=(
            "tests/audit/test_audit_cli.py::"
            "test_an_audit_without_evidence_fails_unless_unverified_is_accepted_by_name",
        ),
        check="an-unjudged-resource-fails-the-audit",
    ),
    Mutation(
        name="the HTML chart counts an unknown cost as zero",
        module="audit/formats/html.py",
        original="    if not cost.unknown:\n",
        broken="    if True:\n",
        tests=(f"{FIGURES}::test_the_html_charts_never_count_an_unknown_cost_as_zero",),
        check="an-unknown-cost-is-not-zero",
    ),
    Mutation(
        name="a VM whose compute does not bill is priced 0 per hour",
        module="audit/formats/rows.py",
        original='    return ("no (disks bill)" if vm else "no"), "-", "-"\n',
        broken=(
            '    return ("no (disks bill)" if vm else "no"), money(cost.hourly, currency), "-"\n'
        ),
        tests=(
            f"{FIGURES}::test_the_table_says_what_the_json_says",
            f"{FIGURES}::test_junit_says_what_the_json_says",
        ),
        check={
            f"{FIGURES}::test_the_table_says_what_the_json_says": (
                "the-table-says-what-the-json-says"
            ),
            f"{FIGURES}::test_junit_says_what_the_json_says": "the-junit-says-what-the-json-says",
        },
    ),
    Mutation(
        name="a JSON nested too deeply is a traceback again",
        module="json_input.py",
        original="    except (json.JSONDecodeError, UnicodeDecodeError):\n        raise\n"
        "    except (RecursionError, ValueError) as error:\n",
        broken="    except (json.JSONDecodeError, UnicodeDecodeError):\n        raise\n"
        "    except ValueError as error:\n",
        tests=(f"{ROW}[controller records 100,000 deep]",),
        check="no-traceback",
    ),
    Mutation(
        name="a missing --ca-bundle is found inside the sweep",
        module="settings/core_options.py",
        original="        check=readable_file,\n",
        broken="",
        tests=(f"{ROW}[ca-bundle missing]", f"{ROW}[ca-bundle a directory]"),
        check="its-exit-code",
    ),
    Mutation(
        name="a sweep's scopes go untold",
        module="cloud/progress.py",
        original="    say(scope, READING)\n",
        broken="    pass\n",
        tests=(
            "tests/audit/test_scope_lines.py::"
            "test_on_a_terminal_each_scope_is_said_as_it_begins_and_ends",
        ),
        check="a-sweep-says-each-scope",
    ),
    Mutation(
        name="a slow scope is silent off a terminal",
        module="audit/scope_lines.py",
        original="        timer.start()\n",
        broken="        pass\n",
        tests=(
            "tests/audit/test_scope_lines.py::"
            "test_off_a_terminal_a_slow_scope_is_said_once_it_is_slow_and_when_it_ends",
        ),
        check="a-slow-scope-is-said",
    ),
    Mutation(
        name="a duration past a century overflows",
        module="cloud/options.py",
        original="    if seconds_in_all > longest.total_seconds():\n",
        broken="    if False:\n",
        tests=(f"{ROW}[grace 20 digits of days]",),
        check="no-traceback",
    ),
    Mutation(
        name="tags of the wrong shape make a fleet VM look untagged",
        module="cloud/exports.py",
        original="    if not isinstance(raw, dict):\n        raise InventoryFormatError(",
        broken=(
            "    if not isinstance(raw, dict):\n        return {}\n"
            "        raise InventoryFormatError("
        ),
        tests=(f"{ROW}[az tags as a list]",),
        check="its-exit-code",
    ),
    Mutation(
        name="a reader that leaves makes the audit exit 1",
        module="cli/presentation.py",
        original="    if not isinstance(sys.stdout, ReaderMayLeave):\n",
        broken="    if False:\n",
        tests=(f"{ODD}::test_a_reader_that_leaves_is_not_an_error[True-0]",),
        check="the-audits-own-code",
    ),
    Mutation(
        name="help text is read as rich markup",
        module="cli/presentation.py",
        original="    rich_utils._make_rich_text = plain_text\n",
        broken="",
        tests=(
            f"{ODD}::test_help_keeps_brackets_literal[reap apply]",
            f"{ODD}::test_help_keeps_brackets_literal[audit]",
        ),
        check="brackets-kept-literal",
    ),
    Mutation(
        name="an HTML cell never breaks",
        module="audit/formats/html.py",
        original="td.long{overflow-wrap:anywhere}",
        broken="td.long{}",
        tests=(f"{HTML}[1280]",),
        check="every-cell-on-screen",
    ),
    Mutation(
        name="an HTML cell breaks any word, wherever",
        module="audit/formats/html.py",
        original="td{overflow-wrap:break-word;word-break:normal}",
        broken="td{overflow-wrap:anywhere}",
        tests=(f"{WORDS}",),
        check="no-word-broken-where-it-fits",
    ),
    Mutation(
        name="a one-day trend drawn as a full-width block",
        module="audit/formats/html.py",
        original="    step = min((width - left) / max(len(columns), 1), MAX_COLUMN_WIDTH)\n",
        broken="    step = (width - left) / max(len(columns), 1)\n",
        tests=(f"{WORDS}",),
        check="one-day-is-one-narrow-column",
    ),
    Mutation(
        name="a chart of zeros drawn with a scale of zero",
        module="audit/formats/html.py",
        original="    drawn = any(value for _, value in columns)\n",
        broken="    drawn = bool(columns)\n",
        tests=(
            "tests/audit/test_audit_html.py::test_the_charts_show_cost_by_account_and_by_verdict",
        ),
        check="an-empty-chart-draws-no-zero",
    ),
    Mutation(
        name="a device or a FIFO read as an inventory",
        module="audit/inventory_files.py",
        original="    if not stat.S_ISREG(status.st_mode):\n        return f",
        broken="    if False:\n        return f",
        tests=(f"{ROW}[inventory a device]",),
        check="its-exit-code",
    ),
    Mutation(
        name="two reports written to one file",
        module="cli/audit.py",
        original="        if where in seen:\n",
        broken="        if False:\n",
        tests=(f"{ROW}[report twice to one file]",),
        check="its-exit-code",
    ),
    Mutation(
        name="a webhook to the metadata service accepted",
        module="notify/send.py",
        original="    if _link_local(parts.hostname):\n",
        broken="    if False:\n",
        # Accepted, the audit posts to it: the guard this suite runs under refuses the reach.
        tests=(f"{ROW}[webhook to the metadata service]",),
        check="no-traceback",
    ),
    Mutation(
        name="history resource takes only a whole id",
        module="cli/history.py",
        original="            if len(candidates) == 1:\n",
        broken="            if False:\n",
        tests=(
            "tests/history/test_history_cli.py::"
            "test_history_resource_takes_a_name_or_the_end_of_an_id_and_lists_an_ambiguous_one",
        ),
        check="a-name-finds-its-resource",
    ),
    Mutation(
        name="the default reap log dropped into the working directory",
        module="documents/reap_log.py",
        original="    where = directory or default_log_directory()\n",
        broken="    where = directory or Path.cwd()\n",
        tests=(
            "tests/reap/test_reap_log_faults.py::test_the_default_log_is_new_unguessable_and_private",
        ),
        check="the-default-log-is-not-in-the-checkout",
    ),
    Mutation(
        name="a metavar as long as its choices squeezes the help",
        module="options.py",
        original='    metavar="ENGINE",\n    help="AWS: auto|tagging|resource-explorer:',
        broken='    metavar="auto|tagging|resource-explorer",\n'
        '    help="AWS: auto|tagging|resource-explorer:',
        tests=(f"{ODD}::test_help_at_80_columns_reads_as_a_table[command0]",),
        check="help-reads-as-a-table",
        package=AWS,
    ),
    Mutation(
        name="no reach summary after an INTERNALERROR",
        module="guard/pytest/session_guard.py",
        original="            if self.pytest_status == pytest.ExitCode.INTERNAL_ERROR:\n",
        broken="            if False:\n",
        tests=(
            "tests/pytest_plugin/test_plugin_first_hour.py::"
            "test_an_internalerror_after_a_reach_still_says_the_reaches_and_where_the_log_is",
        ),
        check="an-internalerror-says-the-summary",
    ),
    Mutation(
        name="init replaces an existing file",
        module="cli/init.py",
        original="            os.link(temporary, output)",
        broken="            os.replace(temporary, output)",
        # Both guards: the look before the answers, and the link that fails on a file
        # that appeared since.
        also=(("cli/init.py", "    if output.exists() and not force:\n", "    if False:\n"),),
        tests=(f"{SETUP}::test_init_never_replaces_a_file_without_force",),
        check="an-existing-file-is-kept",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_breaking_a_first_hour_promise_turns_its_tests_red(
    tmp_path_factory: pytest.TempPathFactory, mutation: Mutation
) -> None:
    assert_turns_red(tmp_path_factory, mutation, MUTATIONS)
