"""`python -m deepseek_recipe COMMAND ...`: the `deepseek-recipe` command line."""

from deepseek_recipe.cli import main

raise SystemExit(main())
