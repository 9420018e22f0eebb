"""``python -m reviewlab``: the same command line as the ``reviewlab`` script."""

from reviewlab.cli import main

raise SystemExit(main())
