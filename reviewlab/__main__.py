"""``python -m reviewlab``: the same command line as the ``reviewlab`` script."""

from reviewlab.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    raise SystemExit(main())
