"""``clawplane token list|show|rotate``: the hosted endpoint's bearer tokens, one per consumer.

Consumers are ``openclaw`` (the gateway's openclaw.json), ``codex:<agent>`` (each Codex
projection), and ``cli`` (this operator: ``/metrics``). A token reaches only the hosted
servers rendered into its consumer's config. ``rotate`` issues new tokens, rewrites the
configs that carry them, and from then on the old ones get 401.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio
import typer

from clawplane.cli.common import FolderArg, OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import out
from clawplane.state import StateDB, StateError, load_tokens
from clawplane.workspace import ControlError, SupervisorClient, supervisor_alive

token_app = typer.Typer(help="The hosted endpoint's bearer tokens (one per consumer).", no_args_is_help=True)


def _db(folder: FolderArg, state_dir: StateDirOpt, out_dir: OutDirOpt) -> StateDB:
    ws = workspace(folder, state_dir, out_dir)
    try:
        return StateDB.open(ws.state_dir, create=False)
    except StateError as exc:
        fail(str(exc))
        raise AssertionError("unreachable") from None


@token_app.command("list")
def token_list(
    folder: FolderArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """List the consumers, what each token reaches, and when it was issued (no token values)."""
    records = load_tokens(_db(folder, state_dir, out_dir))
    rows: list[dict[str, Any]] = [
        {
            "consumer": r.consumer,
            "servers": sorted(r.servers),
            "createdAt": r.created_at,
            "rotatedAt": r.rotated_at,
        }
        for r in records.values()
    ]
    if as_json:
        out.print(json.dumps(rows, indent=2), markup=False)
        return
    if not rows:
        out.print("no tokens yet: `clawplane apply` issues them", markup=False)
    for row in rows:
        reach = ", ".join(row["servers"]) or "no hosted server"
        when = row["rotatedAt"] or row["createdAt"]
        out.print(f"{row['consumer']}: reaches {reach} (since {when})", markup=False)


@token_app.command("show")
def token_show(
    folder: FolderArg,
    consumer: Annotated[str, typer.Argument(help="openclaw, codex:<agent> or cli.")],
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Print one consumer's token (for scripts: `Authorization: Bearer $(clawplane token show . cli)`)."""
    records = load_tokens(_db(folder, state_dir, out_dir))
    record = records.get(consumer)
    if record is None:
        known = ", ".join(records) or "none yet; `clawplane apply` issues them"
        fail(f"no token for consumer {consumer!r} (known: {known})")
        return
    typer.echo(record.token)


@token_app.command("rotate")
def token_rotate(
    folder: FolderArg,
    consumers: Annotated[
        list[str] | None, typer.Argument(help="Consumers to rotate (default: every consumer).")
    ] = None,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Issue new tokens, rewrite the configs that carry them, refuse the old ones from now on."""
    ws = workspace(folder, state_dir, out_dir)
    db = _db(folder, state_dir, out_dir)
    known = load_tokens(db)
    unknown = [c for c in consumers or () if c not in known]
    if unknown:
        fail(f"no token for {', '.join(unknown)} (known: {', '.join(known) or 'none'})")
    chosen = list(consumers) if consumers else None
    if supervisor_alive(ws):
        try:
            answer = anyio.run(_ask, str(ws.socket_path), chosen)
        except ControlError as exc:
            fail(f"the supervisor did not rotate the tokens: {exc}")
            return
    else:
        from clawplane.reconcile.engine import Engine
        from clawplane.supervisor import rotate

        answer = rotate(Engine(ws), db, chosen).to_dict()
    rotated: list[str] = list(answer.get("rotated") or [])
    written: list[str] = list(answer.get("written") or [])
    for consumer in rotated:
        out.print(f"rotated {consumer}", markup=False)
    for path in written:
        out.print(f"wrote {path}", markup=False)
    if answer.get("note"):
        out.print(f"note: {answer['note']}", markup=False)


async def _ask(socket_path: str, consumers: list[str] | None) -> dict[str, Any]:
    final = await SupervisorClient(socket_path, timeout=60).rotate_tokens(consumers)
    if not final.get("ok"):
        raise ControlError(str(final.get("error") or "no answer"))
    return final
