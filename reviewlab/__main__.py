"""``python -m reviewlab``: the same command line as the ``reviewlab`` script."""

from reviewlab.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
