"""`python -m inspector` is the `inspector` command."""

from inspector.cli import main

raise SystemExit(main())
