"""Entry point for ``python -m clawplane``."""

from clawplane.cli import main

if __name__ == "__main__":
    main()
