"""The image vectors' input generators; they live in the package (`deepseek_recipe._vector_images`)
so that the `vectors` command and the tests share them."""

from deepseek_recipe._vector_images import generate, v41_test_tokenizer, v41_test_tokenizer_json

__all__ = ["generate", "v41_test_tokenizer", "v41_test_tokenizer_json"]
