"""Entry point for ``python -m clawplane``."""

from clawplane.entry import main

if __name__ == "__main__":
    main()
