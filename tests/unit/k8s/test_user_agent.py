"""The operator's User-Agent: the product and version first (the field manager), then who it is."""

from __future__ import annotations

from pathlib import Path

from clawplane import __version__
from clawplane.k8s.api.kubeapi import FIELD_MANAGER, user_agent
from clawplane.k8s.ha.election import ElectionSettings
from clawplane.k8s.runner import RunOptions, agent_of

BASE = {"namespaces": (), "state_dir": Path("state"), "bridge_image": "img"}


def test_the_field_manager_is_what_comes_before_the_first_slash() -> None:
    assert user_agent() == f"{FIELD_MANAGER}/{__version__}"
    agent = user_agent("replica=pod-1_ab12; shard=clawplane.dev/shard=a")
    assert agent.split("/", 1)[0] == FIELD_MANAGER
    assert agent == f"{FIELD_MANAGER}/{__version__} (replica=pod-1_ab12; shard=clawplane.dev/shard=a)"


def test_what_a_comment_cannot_hold_is_replaced() -> None:
    agent = user_agent("shard=tier in (a,b)\r\nX-Injected: 1; é")
    assert agent.endswith("(shard=tier in _a,b___X-Injected: 1; _)")
    assert "\n" not in agent and "\r" not in agent
    assert len(user_agent("x" * 1000)) < 250


def test_the_replica_is_the_lease_identity_and_the_shard_the_selector() -> None:
    election = ElectionSettings(namespace="ops", identity="pod-7_0a1b2c3d4e5f")
    options = RunOptions(**BASE, election=election, namespace_selector="clawplane.dev/shard=a")
    assert agent_of(options) == "replica=pod-7_0a1b2c3d4e5f; shard=clawplane.dev/shard=a"
    assert agent_of(RunOptions(**BASE, election=election)) == "replica=pod-7_0a1b2c3d4e5f"
