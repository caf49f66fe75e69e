"""The root typer application and its global options.

Commands are registered from a table and their modules imported only when registered:
``build_app("validate")`` imports what ``clawplane validate`` needs and nothing else, so a
quick command does not pay for starting the supervisor's, the bridge's or the MCP SDK's
imports. ``app`` (every command) is what ``clawplane --help`` and the tests see.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer

from clawplane import __version__
from clawplane.schema.openclaw import OPENCLAW_BUILD, OPENCLAW_VERSION


def _new_app() -> typer.Typer:
    return typer.Typer(
        name="clawplane",
        help="Declarative control plane for OpenClaw-style AI agent gateways.",
        epilog=(
            "The Kubernetes operator is `clawplane k8s run` (see `clawplane k8s run --help`); "
            "the control plane as an MCP server over stdio is `clawplane mcp serve PATH` "
            "(see `clawplane mcp serve --help`)."
        ),
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


def _version(value: bool) -> None:
    if value:
        # The OpenClaw release whose config schema validate checks against and render writes for.
        typer.echo(f"clawplane {__version__} (OpenClaw {OPENCLAW_VERSION} {OPENCLAW_BUILD})")
        raise typer.Exit(0)


def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Declare MCP servers, agents, channels and skills as YAML; validate, plan and converge them."""


# name → (module under clawplane.cli, attribute, "command" or "group" for a sub-app).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "validate": ("validate", "validate", "command"),
    "schema": ("schema", "schema", "command"),
    "get": ("get", "get", "command"),
    "plan": ("plan", "plan", "command"),
    "apply": ("apply", "apply", "command"),
    "status": ("status", "status", "command"),
    "run": ("run", "run", "command"),
    "down": ("run", "down", "command"),
    "import": ("importer", "import_config", "command"),
    "skills": ("skills", "skills_app", "group"),
    "bridge": ("bridge", "bridge", "command"),
    "mcp": ("mcp", "app", "group"),
    "token": ("token", "token_app", "group"),
    "approvals": ("approvals", "approvals_app", "group"),
    "audit": ("audit", "audit", "command"),
    "explain": ("explain", "explain", "command"),
    "diff": ("diff", "diff", "command"),
    "doctor": ("doctor", "doctor", "command"),
    "login": ("login", "login", "command"),
    "logout": ("logout", "logout", "command"),
    "k8s": ("k8s", "k8s_app", "group"),
}
# verb of `clawplane mcp` → (module under clawplane.cli, function), added beside `mcp probe`.
MCP_VERBS = {
    "list": ("mcpedit", "mcp_list"),
    "show": ("mcpedit", "mcp_show"),
    "set": ("mcpedit", "mcp_set"),
    "unset": ("mcpedit", "mcp_unset"),
    "tools": ("mcpedit", "mcp_tools"),
    "serve": ("serve", "mcp_serve"),
}


def _module(name: str) -> Any:
    return importlib.import_module(f"clawplane.cli.{name}")


def build_app(only: str | None = None) -> typer.Typer:
    """The CLI with every command, or with ``only`` that one (unknown names give every command)."""
    names = [only] if only in COMMANDS else list(COMMANDS)
    built = _new_app()
    built.callback()(root)
    for name in names:
        module, attr, kind = COMMANDS[name]
        target = getattr(_module(module), attr)
        if kind == "group":
            registered = {c.name for c in target.registered_commands}
            if name == "mcp" and not registered & set(MCP_VERBS):
                for verb, (where, func) in MCP_VERBS.items():
                    target.command(verb)(getattr(_module(where), func))
            built.add_typer(target, name=name)
        elif name == "bridge":
            built.command(name, context_settings=_module("bridge").CONTEXT_SETTINGS)(target)
        else:
            built.command(name)(target)
    return built


def __getattr__(name: str) -> Any:
    # `app` (every command) is built on first use, so `build_app("validate")` imports no other command.
    if name == "app":
        built = globals()["app"] = build_app()
        return built
    raise AttributeError(name)
