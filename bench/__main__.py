"""`python -m bench`: the side-by-side benchmark suite (see `bench.suite`)."""

from bench.suite import main

raise SystemExit(main())
