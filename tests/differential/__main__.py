"""`python -m tests.differential --requests N --streams N --seed S --out DIR [--jobs J]`."""

from tests.differential.run import main

raise SystemExit(main())
