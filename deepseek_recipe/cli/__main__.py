"""`python -m deepseek_recipe.cli`."""

from deepseek_recipe.cli import main

raise SystemExit(main())
