"""``clawplane bridge -- COMMAND ARGS…``: serve one stdio MCP server over streamable HTTP.

The container entrypoint of the Kubernetes driver. The child's MCP endpoint is ``/mcp``,
its health ``/healthz``; the bridge exits with the child's exit code when the child exits
and shuts down cleanly (child torn down, exit 0) on SIGTERM or SIGINT.
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from clawplane.cli.console import EXIT_INVALID, EXIT_USAGE, err

if TYPE_CHECKING:
    from clawplane.runtimes import BridgeEndpoint

CONTEXT_SETTINGS = {"allow_interspersed_args": False}
"""Everything after the command (or ``--``) belongs to the child, not to the bridge."""


def bridge(
    command: Annotated[
        list[str],
        typer.Argument(help="The stdio MCP server to run, after `--`.", metavar="-- COMMAND [ARGS]..."),
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0 picks a free one).")] = 8080,
    name: Annotated[str | None, typer.Option("--name", help="Server name in logs and errors.")] = None,
) -> None:
    """Run one stdio MCP server and serve it at http://HOST:PORT/mcp until it exits."""
    if not command:
        err.print("clawplane bridge: give the server command after `--`", markup=False)
        raise typer.Exit(EXIT_USAGE)
    code = anyio.run(_serve, command, host, port, name)
    raise typer.Exit(code)


def _announce(endpoint: BridgeEndpoint) -> None:
    err.print(f"clawplane bridge: serving {endpoint.url()} (health: {endpoint.health_url})", markup=False)


async def _serve(command: list[str], host: str, port: int, name: str | None) -> int:
    # Imported here: the MCP SDK takes most of a second to import, and only this command needs it.
    from clawplane.runtimes import run_bridge

    code = 0
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            nonlocal code
            try:
                code = await run_bridge(command, host=host, port=port, name=name, on_ready=_announce)
            except OSError as exc:
                err.print(
                    f"clawplane bridge: cannot listen on {host}:{port}: {exc.strerror or exc}", markup=False
                )
                code = EXIT_INVALID
            tg.cancel_scope.cancel()

        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            tg.start_soon(run)
            async for received in signals:
                err.print(f"clawplane bridge: {received.name}, shutting down", markup=False)
                tg.cancel_scope.cancel()
                break
    return code
