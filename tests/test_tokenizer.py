"""Tokenizer parity with Hugging Face `tokenizers` (the test oracle) and decoding properties.

Oracles: `hf_special` is the bundled `tokenizer.json` as is; `encode(text,
add_special_tokens=False)` recognises added tokens, like our `allow_special=True`. `hf_plain` is the
same file with `"added_tokens": []`: only pre-tokenizer + BPE model remain, which is what prompt
text encoding (`allow_special=False`) means. The model vocabulary still holds ids 0-2, but their
spellings are not byte-level, so BPE can never produce them.
"""

from __future__ import annotations

import itertools
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HfTokenizer

from deepseek_recipe import IncrementalDecoder, Tokenizer, TokenizerError
from tests.tokenizer_corpus import TOKENIZER_JSON, generate_documents

CORPUS_SEED = 20261129
CORPUS_BYTES = 10 * 1024 * 1024

SPECIALS = [token["content"] for token in json.loads(TOKENIZER_JSON.read_text())["added_tokens"]]


@pytest.fixture(scope="module")
def ours() -> Tokenizer:
    return Tokenizer.deepseek_v4()


@pytest.fixture(scope="module")
def hf_special() -> HfTokenizer:
    return HfTokenizer.from_file(str(TOKENIZER_JSON))


@pytest.fixture(scope="module")
def hf_plain() -> HfTokenizer:
    data = json.loads(TOKENIZER_JSON.read_text(encoding="utf-8"))
    data["added_tokens"] = []
    return HfTokenizer.from_str(json.dumps(data))


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    documents = generate_documents(CORPUS_SEED, CORPUS_BYTES)
    assert sum(len(doc.encode("utf-8")) for doc in documents) >= CORPUS_BYTES
    return documents


def hf_ids(hf: HfTokenizer, texts: list[str]) -> list[list[int]]:
    # `encode_batch_fast` skips offsets (same ids, faster); older releases lack it.
    encode_batch = getattr(hf, "encode_batch_fast", hf.encode_batch)
    return [encoding.ids for encoding in encode_batch(texts, add_special_tokens=False)]


def first_difference(expected: list[list[int]], actual: list[list[int]]) -> str:
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        if want != got:
            at = next(
                (i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b),
                min(len(want), len(got)),
            )
            return f"document {index}, id {at}: want {want[at : at + 6]}, got {got[at : at + 6]}"
    return "none"


@pytest.mark.parametrize("allow_special", [False, True], ids=["plain", "special"])
def test_generated_corpus_parity(ours, hf_plain, hf_special, corpus, allow_special):
    expected = hf_ids(hf_special if allow_special else hf_plain, corpus)
    actual = ours.encode_batch(corpus, allow_special)
    assert actual == expected, first_difference(expected, actual)


def test_known_ids(ours):
    assert ours.vocab_size == 129_280
    assert ours.token_to_id("<｜begin▁of▁sentence｜>") == 0
    assert ours.token_to_id("<｜User｜>") == 128_803
    assert ours.id_to_token(128_803) == "<｜User｜>"
    assert ours.id_to_token(10**9) is None
    assert ours.encode(" <｜User｜>") == [818, 28217, 6756, 28217, 32]
    assert ours.encode(" <｜User｜>", allow_special=True) == [223, 128_803]


def test_every_single_id_decodes_like_hf(ours, hf_special):
    ids = [[token_id] for token_id in range(ours.vocab_size)]
    expected = hf_special.decode_batch(ids, skip_special_tokens=False)
    assert ours.decode_batch(ids) == expected


def test_random_id_sequences_decode_like_hf(ours, hf_special):
    rng = random.Random(7)
    batch = [
        [rng.randrange(ours.vocab_size) for _ in range(rng.randint(0, 40))] for _ in range(3000)
    ]
    assert ours.decode_batch(batch) == hf_special.decode_batch(batch, skip_special_tokens=False)


def test_batch_calls_match_single_calls(ours, corpus):
    texts = corpus[:50]
    encoded = ours.encode_batch(texts)
    assert encoded == [ours.encode(text) for text in texts]
    assert ours.count_batch(texts, True) == [ours.count(text, True) for text in texts]
    assert ours.decode_batch(encoded) == texts


@pytest.mark.parametrize("allow_special", [False, True], ids=["plain", "special"])
def test_parallel_encode_of_long_texts_matches_hf(
    ours, hf_plain, hf_special, corpus, allow_special
):
    # Long texts (well over the 64 KiB parallel threshold) made of whole corpus documents.
    texts = ["".join(corpus[start : start + 40]) for start in range(0, 200, 40)]
    assert min(len(text.encode()) for text in texts) > 256 * 1024
    hf = hf_special if allow_special else hf_plain
    expected = hf_ids(hf, texts)
    single = ours.with_threads(1)
    assert single.threads == 1
    assert [single.encode(text, allow_special) for text in texts] == expected
    for threads in (2, 4):
        parallel = ours.with_threads(threads)
        assert parallel.threads == threads
        actual = [parallel.encode(text, allow_special) for text in texts]
        assert actual == expected, first_difference(expected, actual)
        assert [parallel.count(text, allow_special) for text in texts] == list(map(len, expected))


@pytest.mark.parametrize("unit", ["a", " ", "\n", "-", "0", "中", "😀", "é", "ab", " \n"])
def test_long_runs_of_one_character_match_hf(ours, hf_plain, unit):
    # One huge pre-tokenizer piece each (except digits): the BPE heap path, not the cache.
    texts = [unit * count for count in (5_000, 50_000, 200_000)]
    expected = hf_ids(hf_plain, texts)
    assert [ours.encode(text) for text in texts] == expected
    assert [ours.with_threads(2).encode(f"x {text} y") for text in texts] == hf_ids(
        hf_plain, [f"x {text} y" for text in texts]
    )


def test_errors_are_tokenizer_errors(ours, tmp_path):
    with pytest.raises(TokenizerError, match="unknown token id 129280"):
        ours.decode([1, 129_280])
    with pytest.raises(TokenizerError):
        ours.decode_batch([[1], [10**6]])
    with pytest.raises(TokenizerError, match="cannot read"):
        Tokenizer.from_file(tmp_path / "missing.json")
    with pytest.raises(TokenizerError, match=r"invalid tokenizer\.json"):
        Tokenizer.from_str("{}")
    data = json.loads(TOKENIZER_JSON.read_text(encoding="utf-8"))
    data["normalizer"] = {"type": "NFKC"}
    with pytest.raises(TokenizerError, match=r"unsupported tokenizer\.json: normalizer"):
        Tokenizer.from_str(json.dumps(data))
    decoder = ours.incremental_decoder()
    with pytest.raises(TokenizerError):
        decoder.push([10**6])
    assert isinstance(TokenizerError("x"), ValueError)


def test_from_file_reads_the_same_tokenizer(ours):
    other = Tokenizer.from_file(TOKENIZER_JSON)
    text = "Hello <think> 世界 12345"
    assert other.encode(text, True) == ours.encode(text, True)


def test_incremental_decoder_holds_partial_characters(ours):
    decoder = ours.incremental_decoder()
    first_byte = ours.token_to_id("ä")  # byte 0xE4, the lead byte of 中
    assert first_byte is not None
    assert decoder.push([first_byte]) == ""
    assert decoder.has_pending
    assert decoder.finish() == "\ufffd"
    assert not decoder.has_pending
    assert decoder.finish() == ""


# --- properties ---------------------------------------------------------------------------------

PIECES = st.sampled_from(
    [
        *SPECIALS[:60],
        "<｜User",
        "｜>",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\r",
        "\t",
        "\u3000",
        "\xa0",
        "1234567",
        "٣٤٥",
        "中文字",
        "カタカナ・",
        "😀",
        "👨\u200d👩",
        "\ufe0f",
        "e\u0301",
        "'s",
        "!!!",
        " .",
        "ab",
        "Hello",
    ]
)
TEXT = st.lists(
    st.one_of(st.text(st.characters(codec="utf-8"), max_size=12), PIECES), max_size=24
).map("".join)
PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@PROPERTY_SETTINGS
@given(text=TEXT)
def test_property_parity_on_arbitrary_text(ours, hf_plain, hf_special, text):
    assert ours.encode(text) == hf_plain.encode(text, add_special_tokens=False).ids
    assert ours.encode(text, True) == hf_special.encode(text, add_special_tokens=False).ids


@PROPERTY_SETTINGS
@given(text=TEXT, allow_special=st.booleans())
def test_property_decode_inverts_encode(ours, text, allow_special):
    assert ours.decode(ours.encode(text, allow_special)) == text


@PROPERTY_SETTINGS
@given(
    ids=st.one_of(
        TEXT.map(lambda text: Tokenizer.deepseek_v4().encode(text, True)),
        st.lists(st.integers(0, 129_279), max_size=30),
    ),
    cuts=st.lists(st.integers(0, 64), max_size=10),
)
def test_property_incremental_decoder_on_any_split(ours, ids, cuts):
    decoder = IncrementalDecoder(ours)
    bounds = sorted({0, len(ids), *(cut for cut in cuts if cut <= len(ids))})
    streamed = "".join(decoder.push(ids[a:b]) for a, b in itertools.pairwise(bounds))
    assert streamed + decoder.finish() == ours.decode(ids)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=TEXT.filter(bool), repeats=st.integers(1, 40), allow_special=st.booleans())
def test_property_parallel_encode_matches_single_threaded(ours, text, repeats, allow_special):
    # Repeated to pass the 64 KiB threshold; the seams between copies add more cut candidates.
    long_text = (text * (70_000 // len(text.encode()) + 1)) + text * repeats
    expected = ours.with_threads(1).encode(long_text, allow_special)
    assert ours.with_threads(2).encode(long_text, allow_special) == expected
    assert ours.with_threads(5).encode(long_text, allow_special) == expected
    assert ours.with_threads(2).encode_batch([long_text, text], allow_special)[0] == expected


@PROPERTY_SETTINGS
@given(ids=st.lists(st.integers(0, 129_279), max_size=30))
def test_property_decode_parity(ours, hf_special, ids):
    assert ours.decode(ids) == hf_special.decode(ids, skip_special_tokens=False)


@pytest.mark.parametrize("threads", [1, 3])
def test_array_outputs_match_the_list_outputs(ours, corpus, threads):
    tokenizer = ours.with_threads(threads)
    texts = [*corpus[:40], "", "<｜User｜>hi", "a" * 70_000]
    expected = [tokenizer.encode(text, True) for text in texts]
    # Lists take ids below 65,536 from shared ints and make the others: both kinds are here.
    every_id = [token for ids in expected for token in ids]
    assert min(every_id) < 65_536 <= max(every_id)
    batch = tokenizer.encode_batch_array(texts, True)
    assert batch.ids.format == "I" and batch.offsets.format == "Q"
    assert len(batch) == len(texts) and batch.to_lists() == expected
    assert batch[-1].tolist() == expected[-1] and batch[-3].tolist() == []
    with pytest.raises(IndexError):
        batch[len(texts)]
    assert tokenizer.encode_array(texts[0], True).tolist() == expected[0]
    assert tokenizer.count_batch(texts, True) == [len(ids) for ids in expected]


def test_batch_ids_are_views_numpy_takes_without_copying(ours):
    numpy = pytest.importorskip("numpy")
    batch = ours.encode_batch_array(["hello world", "second text"])
    array = numpy.asarray(batch.ids)
    assert array.dtype == numpy.uint32
    array[0] = 7
    assert batch[0][0] == 7
