"""`python -m deepseek_recipe_conformance --base-url URL --model NAME ...`."""

import sys

from deepseek_recipe_conformance.cli import main

sys.exit(main())
