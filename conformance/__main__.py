"""`python -m conformance --base-url URL --model NAME ...`."""

import sys

from conformance.cli import main

sys.exit(main())
