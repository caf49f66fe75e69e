"""The engine's read side: load → validate → compile → observe → render → plan.

``Engine`` keeps a compiler (and the skills cache inside the renderer) between calls,
so a long-running supervisor re-plans quickly after a small change. ``plan()`` has no
side effects besides reading files and the state database.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from clawplane._utils.changefeed import open_feed
from clawplane._utils.gcpause import gc_paused
from clawplane.desired import Compiler, DesiredState, RuntimeMode
from clawplane.desired.state import DigestMemo
from clawplane.diagnostics import Diagnostic, Diagnostics
from clawplane.planning import Plan, PlanMemo, RenderProblem, make_plan
from clawplane.reconcile.rendered.outputs import OutputRenderer
from clawplane.reconcile.rendered.writing import content_digest, is_render_problem, problem_doc
from clawplane.secrets import SecretResolver
from clawplane.state import ObservedState, StateDB, store, utcnow
from clawplane.validation import ValidationCache, ValidationResult, validate_paths
from clawplane.workspace import Workspace, read_info, supervisor_alive

PLANNED_ENDPOINT = "http://127.0.0.1:0"
"""Stands in for the supervisor's endpoint in a plan made while none runs."""

Patch = Callable[[ValidationResult], ValidationResult]
"""Rewrites a folder's validated resources before they are compiled."""


class InvalidFolderError(Exception):
    """The folder does not validate; ``diagnostics`` says why."""

    def __init__(self, diagnostics: Diagnostics) -> None:
        super().__init__(f"{len(diagnostics.errors)} error(s) in the folder")
        self.diagnostics = diagnostics


@dataclass(frozen=True, slots=True)
class Planned:
    """A plan with what it was made from."""

    plan: Plan
    desired: DesiredState
    observed: ObservedState
    validation: ValidationResult
    outputs: Mapping[str, str]


class Engine:
    """Plans one folder; keeps caches between calls."""

    def __init__(
        self, ws: Workspace, *, environ: Mapping[str, str] | None = None, watch: bool = False
    ) -> None:
        """``watch``: a long-running engine watches the folders it reads (inotify), so a
        re-plan skips the ``stat`` of every folder and skill file that saw no change."""
        self.ws = ws
        self.environ = os.environ if environ is None else environ
        self.resolver = SecretResolver(self.environ)
        """Resolves every reference of this engine's passes (an apply's values are supplied to it)."""
        self.compiler = Compiler()
        self.validation_cache = ValidationCache()
        self.renderer = OutputRenderer(ws, environ=self.environ)
        # Unchanged agents keep their digested copies across plans, so the plan memo hits.
        self._skill_digests: DigestMemo = {}
        self._digests: dict[str, tuple[str, str]] = {}
        self._plan_memo = PlanMemo()
        self.feed = open_feed() if watch else None
        if self.feed is not None:
            self.validation_cache.walk.feed = self.feed
            self.renderer.engine.cache.feed = self.feed

    def load(self, patch: Patch | None = None) -> tuple[DesiredState, ValidationResult]:
        """Validate and compile the folder; raises ``InvalidFolderError`` on any error.

        ``patch`` rewrites the validated resources before they are compiled (held approvals
        keep a resource as it was applied).
        """
        result = validate_paths([self.ws.folder], cache=self.validation_cache)
        if not result.ok:
            raise InvalidFolderError(result.diagnostics)
        if patch is not None:
            result = patch(result)
        desired = self.compiler.compile(result, folder=self.ws.folder, resolver=self.resolver)
        return desired, result

    def observe(self, db: StateDB) -> ObservedState:
        """The observed state, with the supervisor's liveness checked now."""
        return replace(store.load_observed(db), supervisor_alive=supervisor_alive(self.ws))

    def plan(self, db: StateDB, *, mass_delete_share: float = 0.5, patch: Patch | None = None) -> Planned:
        """A fresh plan for the folder (with ``patch`` applied to its resources, see ``load``)."""
        with gc_paused():
            return self._plan(db, mass_delete_share, patch)

    def _plan(self, db: StateDB, mass_delete_share: float, patch: Patch | None) -> Planned:
        desired, result = self.load(patch)
        observed = self.observe(db)
        expected = self.expected_urls(desired, observed)
        rendered = self.renderer.render(desired, observed, expected_urls=expected)
        desired = self.with_skill_digests(desired)
        digests = self.output_digests(rendered)
        plan = make_plan(
            desired,
            observed,
            outputs=digests,
            created_at=utcnow(),
            mass_delete_share=mass_delete_share,
            memo=self._plan_memo,
        )
        problems = render_problems(self.renderer.diagnostics)
        if problems:
            plan = plan.model_copy(update={"render_problems": problems})
        return Planned(plan, desired, observed, result, digests)

    def output_digests(self, rendered: Mapping[str, str]) -> dict[str, str]:
        """Each rendered file's digest; a file whose text did not change is not hashed again."""
        memo: dict[str, tuple[str, str]] = {}
        for path, text in rendered.items():
            known = self._digests.get(path)
            # The renderer hands back the same string object for unchanged snapshots: `is` is free.
            if known is not None and (known[0] is text or known[0] == text):
                memo[path] = known
            else:
                memo[path] = (text, content_digest(text))
        self._digests = memo
        return {path: digest for path, (_, digest) in memo.items()}

    def expected_urls(self, desired: DesiredState, observed: ObservedState) -> dict[str, str]:
        """Where each hosted server without a recorded endpoint will be served once applied.

        The running supervisor's endpoint when there is one; otherwise a stand-in (the port is
        chosen when the supervisor starts), so the plan still lists every file apply writes.
        """
        info = read_info(self.ws) if observed.supervisor_alive else None
        base = info.endpoint if info is not None and info.endpoint else PLANNED_ENDPOINT
        return {
            d.name: f"{base}/mcp/{d.name}"
            for d in desired.resources.values()
            if d.runtime is RuntimeMode.HOSTED
            and not (d.name in observed.runtimes and observed.runtimes[d.name].endpoint)
        }

    def with_skill_digests(self, desired: DesiredState) -> DesiredState:
        """Fold each agent's last rendered skills snapshot into its config hash."""
        digests = {
            item.key: snapshot.content_hash
            for item in desired.of_kind("Agent")
            if (snapshot := self.renderer.snapshots.get(item.name.lower())) is not None
        }
        return desired.with_digests("skills", digests, self._skill_digests)


def render_problems(diagnostics: Iterable[Diagnostic]) -> list[RenderProblem]:
    """What rendering reported about the configs it wrote (``render.*`` warnings and errors)."""
    return [RenderProblem(**problem_doc(d)) for d in diagnostics if is_render_problem(d)]


def default_state_dir(folder: Path) -> Path:
    """Where the state of ``folder`` lives by default."""
    return Workspace.for_folder(folder).state_dir
