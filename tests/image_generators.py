"""The image vectors' input generator, for tests that build their own images from a generator
description; it lives in the package (`deepseek_recipe._vector_images`), where the `vectors`
command and `scripts/gen_image_fixtures.py` use it too."""

from deepseek_recipe._vector_images import generate

__all__ = ["generate"]
