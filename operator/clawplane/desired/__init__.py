"""Desired state: the compiled, immutable view of what a folder declares."""

from clawplane.desired.compiler import Compiler
from clawplane.desired.state import AgentView, DesiredResource, DesiredState, RuntimeMode

__all__ = ["AgentView", "Compiler", "DesiredResource", "DesiredState", "RuntimeMode"]
