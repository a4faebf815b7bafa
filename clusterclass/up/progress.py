"""What ``clusterclass up`` shows while Clusters come up: the describe tree live, or one line per change.

On a terminal, a rich live display redraws every half second: each followed Cluster's ``describe``
tree (:mod:`clusterclass.describe`) and what it is still waiting for
(:func:`clusterclass.describe.readiness.pending`). Anywhere else (a pipe, CI, a log file) it prints a
timestamped line whenever something a Cluster waits for changes — the same facts, as a log. Both end
with the final tree once every followed Cluster is ready.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from clusterclass.describe.collect import collect
from clusterclass.describe.readiness import pending
from clusterclass.describe.render import render_view
from clusterclass.describe.tree import TreeOptions, build_tree
from clusterclass.kube.client import Client
from clusterclass.kube.errors import NotFound

REFRESH = 0.5


@dataclass
class ClusterState:
    namespace: str
    name: str
    waiting: list[str] = field(default_factory=lambda: ["Cluster not created yet"])
    tree: Text | None = None

    @property
    def ready(self) -> bool:
        return not self.waiting


#: the tree ``up`` draws: ``describe cluster``'s default, clusterctl v1.11+'s v1beta2 view
TREE = TreeOptions(v1beta2=True)


async def observe(client: Client, namespace: str, name: str) -> ClusterState:
    """One look at a Cluster: its tree and what it waits for."""
    state = ClusterState(namespace, name)
    try:
        objects = await collect(client, namespace=namespace, name=name, options=TREE)
    except NotFound:
        return state
    state.waiting = pending(objects)
    state.tree = render_view(build_tree(objects, TREE), now=datetime.now(UTC), v1beta2=TREE.v1beta2)
    return state


class Progress:
    """Follow ``clusters`` until all are ready (:meth:`run`), drawing on ``console`` (module doc)."""

    def __init__(
        self,
        client: Client,
        clusters: Sequence[tuple[str, str]],
        console: Console,
        *,
        on_change: Callable[[ClusterState], None] | None = None,
    ) -> None:
        self.client = client
        self.clusters = list(clusters)
        self.console = console
        self.on_change = on_change
        self.started = time.monotonic()
        self._seen: dict[tuple[str, str], set[str]] = {}

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self.started:6.1f}s"

    async def snapshot(self) -> list[ClusterState]:
        states = [await observe(self.client, namespace, name) for namespace, name in self.clusters]
        for state in states:
            if self.on_change is not None:
                self.on_change(state)
        return states

    async def run(self, *, timeout: float | None = None) -> list[ClusterState]:
        """Redraw (or log) until every Cluster is ready or ``timeout`` seconds pass; the last states."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.console.is_terminal:
            with Live(console=self.console, refresh_per_second=4, transient=True) as live:
                while True:
                    states = await self.snapshot()
                    live.update(self._view(states))
                    if all(s.ready for s in states) or (deadline is not None and time.monotonic() > deadline):
                        break
                    await asyncio.sleep(REFRESH)
        else:
            while True:
                states = await self.snapshot()
                self._log(states)
                if all(s.ready for s in states) or (deadline is not None and time.monotonic() > deadline):
                    break
                await asyncio.sleep(REFRESH)
        for state in states:
            if state.tree is not None:
                self.console.print(state.tree)
        return states

    def _view(self, states: list[ClusterState]) -> Group:
        parts: list[Text] = []
        for state in states:
            heading = Text(f"Cluster {state.namespace}/{state.name}  ", style="bold")
            heading.append(self._elapsed().strip(), style="dim")
            parts.append(heading)
            if state.tree is not None:
                parts.append(state.tree)
            if state.waiting:
                parts.append(Text("waiting for:", style="yellow"))
                parts.extend(Text(f"  • {line}") for line in state.waiting)
            else:
                parts.append(Text("ready", style="green"))
            parts.append(Text(""))
        return Group(*parts)

    def _log(self, states: list[ClusterState]) -> None:
        for state in states:
            key = (state.namespace, state.name)
            before = self._seen.get(key)
            now = set(state.waiting)
            if before is None or now != before:
                for line in state.waiting:
                    if before is None or line not in before:
                        self.console.print(f"[{self._elapsed()}] {state.name}: {line}", highlight=False)
                if not state.waiting and before:
                    self.console.print(
                        f"[{self._elapsed()}] Cluster {state.namespace}/{state.name} is ready", highlight=False
                    )
            self._seen[key] = now
