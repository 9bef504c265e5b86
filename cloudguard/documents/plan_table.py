"""A plan as a table, for a person: what `reap plan` prints beside the plan it writes.

Names, groups and tags come from the cloud: each cell is a rich `Text` (never
markup) and escaped (`one_line`). The plan's writer and reader are
`cloudguard.documents.plan`; rich is imported only when a table is drawn.
"""

from __future__ import annotations

import io

from cloudguard.cloud.adapter_registry import Clouds
from cloudguard.documents.audit_report import untrusted_policy_text
from cloudguard.documents.plan import Plan
from cloudguard.escape import one_line


def plan_table(plan: Plan, clouds: Clouds | None = None) -> str:
    """What would be done, for a person. Names and tags come from the cloud: Text, escaped."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    clouds = clouds or Clouds.installed()
    out = io.StringIO()
    console = Console(file=out, no_color=True, highlight=False, width=1000)
    verdicts = ", ".join(plan.verdicts)
    console.print(
        Text(
            f"cloudguard reap plan: {len(plan.items)} to {plan.requested_action} "
            f"({one_line(verdicts)}) from {one_line(plan.audit_source, 300)}, "
            f"audited {plan.audit_generated_at.isoformat()}; "
            f"{len(plan.not_planned)} not planned."
        ),
        soft_wrap=True,
    )
    if plan.policy.untrusted_keys:  # whose policy chose these: said before what it chose
        console.print(Text(untrusted_policy_text(plan.policy) or ""), soft_wrap=True)
    if plan.items:
        table = Table()
        for header in (
            "action",
            "verdict",
            "provider",
            "name",
            "group",
            "region",
            "power",
            "task id",
            "reasons",
            "holds data",
        ):
            table.add_column(header, no_wrap=True)
        for item in plan.items:
            task = clouds.cloud(item.provider).tag(item.tags, plan.policy.task_tag)
            cells = (
                item.action,
                item.verdict,
                f"{item.provider} {item.kind}",
                one_line(item.name),
                one_line(item.group) if item.group else "-",
                one_line(item.region),
                one_line(item.power_state),
                one_line(task),
                one_line(", ".join(item.reasons)) or "-",
                one_line(item.holds_data) or "-",
            )
            table.add_row(*(Text(c) for c in cells))
            for member in item.members:  # what deleting the group deletes with it
                table.add_row(
                    *(Text(c) for c in ("", member.verdict, f"  with its {member.kind}",
                                        one_line(member.name), "", "", "", "", "",
                                        one_line(member.holds_data) or "-"))
                )  # fmt: skip
        console.print(table)
    for skipped in plan.not_planned:
        console.print(
            Text(
                f"not planned: {one_line(skipped.verdict)} {one_line(skipped.name)}: "
                f"{one_line(skipped.why, 200)}"
            ),
            soft_wrap=True,
        )
    return out.getvalue()
