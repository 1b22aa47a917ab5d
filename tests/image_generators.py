"""The image vectors' input generators; they live in the package (`deepseek_recipe._vector_images`)
so that the `vectors` command and the tests share them."""

from deepseek_recipe._vector_images import generate

__all__ = ["generate"]
