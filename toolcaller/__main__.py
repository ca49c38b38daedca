"""`python -m toolcaller` runs the command line."""

from toolcaller.cli import main

raise SystemExit(main())
