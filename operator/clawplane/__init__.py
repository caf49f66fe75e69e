"""clawplane: a declarative control plane for OpenClaw-style AI agent gateways."""

__version__ = "0.1.0"

__all__ = ["__version__"]
