"""The root typer application and its global options."""

from __future__ import annotations

from typing import Annotated

import typer

from clawplane import __version__
from clawplane.cli import apply as apply_cmd
from clawplane.cli import bridge as bridge_cmd
from clawplane.cli import diff as diff_cmd
from clawplane.cli import doctor as doctor_cmd
from clawplane.cli import explain as explain_cmd
from clawplane.cli import get as get_cmd
from clawplane.cli import importer as importer_cmd
from clawplane.cli import mcp as mcp_cmd
from clawplane.cli import mcpedit as mcpedit_cmd
from clawplane.cli import plan as plan_cmd
from clawplane.cli import run as run_cmd
from clawplane.cli import schema as schema_cmd
from clawplane.cli import skills as skills_cmd
from clawplane.cli import status as status_cmd
from clawplane.cli import validate as validate_cmd

app = typer.Typer(
    name="clawplane",
    help="Declarative control plane for OpenClaw-style AI agent gateways.",
    epilog="The Kubernetes operator is `clawplane k8s run` (see `clawplane k8s run --help`).",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"clawplane {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Declare MCP servers, agents, channels and skills as YAML; validate, plan and converge them."""


app.command("validate")(validate_cmd.validate)
app.command("schema")(schema_cmd.schema)
app.command("get")(get_cmd.get)
app.command("plan")(plan_cmd.plan)
app.command("apply")(apply_cmd.apply)
app.command("status")(status_cmd.status)
app.command("run")(run_cmd.run)
app.command("down")(run_cmd.down)
app.command("import")(importer_cmd.import_config)
app.add_typer(skills_cmd.skills_app, name="skills")
app.command("bridge", context_settings=bridge_cmd.CONTEXT_SETTINGS)(bridge_cmd.bridge)
app.add_typer(mcp_cmd.app, name="mcp")
app.command("explain")(explain_cmd.explain)
app.command("diff")(diff_cmd.diff)
app.command("doctor")(doctor_cmd.doctor)
mcp_cmd.app.command("list")(mcpedit_cmd.mcp_list)
mcp_cmd.app.command("show")(mcpedit_cmd.mcp_show)
mcp_cmd.app.command("set")(mcpedit_cmd.mcp_set)
mcp_cmd.app.command("unset")(mcpedit_cmd.mcp_unset)
mcp_cmd.app.command("tools")(mcpedit_cmd.mcp_tools)
