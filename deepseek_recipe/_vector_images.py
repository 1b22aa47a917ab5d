"""The image vectors' input generators (`image.generator`), rebuilt from their description in
`shared/vectors/README.md` ("Input generators"): PNG with stored-block zlib, baseline JPEG
with flat blocks, GIF with constant-width LZW codes, raw bytes, embedded files and derived
(damaged) files. Callers compare the result with the record's `sha256`.

This is the project's one generator: the `vectors` command regenerates inputs with it, and
`scripts/gen_image_fixtures.py` writes them once into a fixture folder that
the Rust and Python test suites read instead of regenerating.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Generator = Mapping[str, Any]
Pattern = Callable[[int, int, int], int]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = [
    (0, 0, 8, 8),
    (4, 0, 8, 8),
    (0, 4, 4, 8),
    (2, 0, 4, 4),
    (0, 2, 2, 4),
    (1, 0, 2, 2),
    (0, 1, 1, 2),
]
# ITU-T T.81 Table K.3: luminance DC code lengths (counts per length 1..16) and symbols.
DC_COUNTS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
DC_SYMBOLS = list(range(12))


def generate(generator: Generator, embedded: Mapping[str, bytes]) -> bytes:
    """The bytes a generator describes (`embedded` holds the embedded files by key)."""
    name = generator["name"]
    if name == "png":
        return _png(generator)
    if name == "jpeg":
        return _jpeg(generator)
    if name == "gif":
        return _gif(generator)
    if name == "embedded":
        return embedded[generator["key"]]
    if name == "bytes":
        data = bytes.fromhex(generator["hex"])
        length = generator.get("length")
        if length is not None and length > len(data):
            data += bytes([generator.get("fill", 0)]) * (length - len(data))
        return data
    if name == "derive":
        return _derive(generate(generator["base"], embedded), generator["ops"])
    raise ValueError(f"unknown generator {name!r}")


def _pattern(spec: Mapping[str, Any], modulus: int) -> Pattern:
    """`pattern(x, y, channel)` reduced modulo `modulus`."""

    def at(values: list[int] | None, channel: int) -> int:
        return values[channel] if values and channel < len(values) else 0

    if spec["type"] == "linear":
        k0, kx, ky = spec.get("k0"), spec.get("kx"), spec.get("ky")
        return lambda x, y, c: (at(k0, c) + at(kx, c) * x + at(ky, c) * y) % modulus
    size, a, b = spec["size"], spec["a"], spec["b"]
    return lambda x, y, c: (at(a, c) if (x // size + y // size) % 2 == 0 else at(b, c)) % modulus


def _derive(data: bytes, ops: list[list[Any]]) -> bytes:
    out = bytearray(data)
    for op in ops:
        kind = op[0]
        if kind == "truncate":
            del out[op[1] :]
        elif kind == "drop_tail":
            del out[len(out) - op[1] :]
        elif kind == "xor":
            out[op[1]] ^= op[2]
        elif kind == "prepend":
            out[0:0] = bytes.fromhex(op[1])
        elif kind == "append":
            out += bytes.fromhex(op[1])
        elif kind == "overwrite":
            patch = bytes.fromhex(op[2])
            out[op[1] : op[1] + len(patch)] = patch
        else:
            raise ValueError(f"unknown derive op {kind!r}")
    return bytes(out)


# --- PNG ------------------------------------------------------------------------------------


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _stored_zlib(data: bytes) -> bytes:
    out = bytearray(b"\x78\x01")
    blocks = [data[at : at + 65535] for at in range(0, len(data), 65535)] or [b""]
    for index, block in enumerate(blocks):
        final = 1 if index == len(blocks) - 1 else 0
        out += struct.pack("<BHH", final, len(block), len(block) ^ 0xFFFF) + block
    out += struct.pack(">I", zlib.adler32(data))
    return bytes(out)


def _pack_samples(samples: list[int], bit_depth: int) -> bytes:
    if bit_depth == 8:
        return bytes(samples)
    if bit_depth == 16:
        return struct.pack(f">{len(samples)}H", *samples)
    per_byte = 8 // bit_depth
    out = bytearray()
    for at in range(0, len(samples), per_byte):
        byte = 0
        group = samples[at : at + per_byte]
        for sample in group:
            byte = (byte << bit_depth) | sample
        out.append(byte << (bit_depth * (per_byte - len(group))))
    return bytes(out)


def _row_key(spec: Mapping[str, Any], modulus: int, channels: int) -> Callable[[int], object]:
    """What decides a row's samples: the per-channel offset of a linear pattern, the band
    parity of a checker (equal keys, equal rows)."""
    if spec["type"] == "linear":
        k0: list[int] = spec.get("k0") or []
        ky: list[int] = spec.get("ky") or []
        return lambda y: tuple(
            ((k0[c] if c < len(k0) else 0) + (ky[c] if c < len(ky) else 0) * y) % modulus
            for c in range(channels)
        )
    return lambda y: (y // spec["size"]) % 2


def _png_rows(
    pattern: Pattern,
    row_key: Callable[[int], object],
    xs: range,
    ys: range,
    channels: int,
    bit_depth: int,
) -> list[bytes]:
    """Filtered scanlines (filter type 0) of the pixels at `xs` x `ys`; equal rows are packed
    once."""
    rows: list[bytes] = []
    cache: dict[object, bytes] = {}
    for y in ys:
        key = row_key(y)
        row = cache.get(key)
        if row is None:
            samples = [pattern(x, y, c) for x in xs for c in range(channels)]
            row = b"\x00" + _pack_samples(samples, bit_depth)
            cache[key] = row
        rows.append(row)
    return rows


def _png(g: Generator) -> bytes:
    width, height, color_type, bit_depth = g["width"], g["height"], g["color_type"], g["bit_depth"]
    channels = PNG_CHANNELS[color_type]
    modulus = len(g["palette"]) if color_type == 3 else 1 << bit_depth
    pattern = _pattern(g["pattern"], modulus)
    row_key = _row_key(g["pattern"], modulus, channels)
    interlace = g.get("interlace") or 0
    ihdr = struct.pack(
        ">IIBBBBB",
        g.get("declared_width", width),
        g.get("declared_height", height),
        bit_depth,
        color_type,
        0,
        0,
        interlace,
    )
    out = bytearray(PNG_SIGNATURE + _chunk(b"IHDR", ihdr))
    if color_type == 3:
        out += _chunk(b"PLTE", b"".join(bytes(rgb) for rgb in g["palette"]))
    trns = g.get("trns")
    if trns is not None:
        data = bytes(trns) if color_type == 3 else struct.pack(f">{len(trns)}H", *trns)
        out += _chunk(b"tRNS", data)
    if interlace:
        rows: list[bytes] = []
        for x0, y0, dx, dy in ADAM7:
            xs, ys = range(x0, width, dx), range(y0, height, dy)
            if len(xs) and len(ys):
                rows += _png_rows(pattern, row_key, xs, ys, channels, bit_depth)
    else:
        rows = _png_rows(pattern, row_key, range(width), range(height), channels, bit_depth)
    out += _chunk(b"IDAT", _stored_zlib(b"".join(rows)))
    out += _chunk(b"IEND", b"")
    return bytes(out)


# --- JPEG -----------------------------------------------------------------------------------


def _segment(marker: int, payload: bytes) -> bytes:
    return struct.pack(">BBH", 0xFF, marker, len(payload) + 2) + payload


def _huffman_codes(counts: list[int], symbols: list[int]) -> dict[int, tuple[int, int]]:
    """Canonical Huffman codes: symbol → (code, length)."""
    codes: dict[int, tuple[int, int]] = {}
    code, at = 0, 0
    for length, count in enumerate(counts, start=1):
        for _ in range(count):
            codes[symbols[at]] = (code, length)
            code += 1
            at += 1
        code <<= 1
    return codes


class _BitWriter:
    def __init__(self) -> None:
        self.out = bytearray()
        self.acc = 0
        self.bits = 0

    def write(self, value: int, length: int) -> None:
        self.acc = (self.acc << length) | (value & ((1 << length) - 1))
        self.bits += length
        while self.bits >= 8:
            self.bits -= 8
            byte = (self.acc >> self.bits) & 0xFF
            self.out.append(byte)
            if byte == 0xFF:
                self.out.append(0)
        self.acc &= (1 << self.bits) - 1

    def finish(self) -> bytes:
        if self.bits:
            self.write((1 << (8 - self.bits)) - 1, 8 - self.bits)
        return bytes(self.out)


def _jpeg(g: Generator) -> bytes:
    width, height, components = g["width"], g["height"], g["components"]
    pattern = _pattern(g["pattern"], 256)
    out = bytearray(b"\xff\xd8")
    if g.get("jfif", True):
        out += _segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    orientation = g.get("exif_orientation")
    if orientation is not None:
        tiff = b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1)
        tiff += struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack(">I", 0)
        out += _segment(0xE1, b"Exif\x00\x00" + tiff)
    out += _segment(0xDB, b"\x00" + bytes([8] * 64))
    sof = struct.pack(">BHHB", 8, height, width, components)
    sof += b"".join(bytes([cid, 0x11, 0]) for cid in range(1, components + 1))
    out += _segment(0xC0, sof)
    out += _segment(0xC4, b"\x00" + bytes(DC_COUNTS) + bytes(DC_SYMBOLS))
    out += _segment(0xC4, b"\x10" + bytes([1] + [0] * 15) + b"\x00")
    sos = bytes([components])
    sos += b"".join(bytes([cid, 0]) for cid in range(1, components + 1)) + b"\x00\x3f\x00"
    out += _segment(0xDA, sos)
    dc_codes = _huffman_codes(DC_COUNTS, DC_SYMBOLS)
    writer = _BitWriter()
    previous = [0] * components
    for by in range((height + 7) // 8):
        for bx in range((width + 7) // 8):
            for c in range(components):
                value = pattern(bx, by, c) - 128
                diff = value - previous[c]
                previous[c] = value
                category = abs(diff).bit_length()
                code, length = dc_codes[category]
                writer.write(code, length)
                if category:
                    extra = diff if diff >= 0 else diff + (1 << category) - 1
                    writer.write(extra, category)
                writer.write(0, 1)  # EOB
    out += writer.finish() + b"\xff\xd9"
    return bytes(out)


# --- GIF ------------------------------------------------------------------------------------


def _gif(g: Generator) -> bytes:
    width, height, palette = g["width"], g["height"], g["palette"]
    version = g.get("version", "89a")
    k = 1
    while (1 << k) < len(palette):
        k += 1
    out = bytearray(b"GIF" + version.encode())
    out += struct.pack(
        "<HHBBB",
        g.get("screen_width", width),
        g.get("screen_height", height),
        0x80 | 0x70 | (k - 1),
        0,
        0,
    )
    table = [bytes(rgb) for rgb in palette] + [b"\x00\x00\x00"] * ((1 << k) - len(palette))
    out += b"".join(table)
    if g.get("loop") and version == "89a":
        out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    min_code = max(2, k)
    for frame in g["frames"]:
        frame_width, frame_height = frame.get("width", width), frame.get("height", height)
        if version == "89a":
            transparent = frame.get("transparent")
            packed = (frame.get("disposal", 0) << 2) | (transparent is not None)
            out += struct.pack(
                "<BBBBHBB", 0x21, 0xF9, 4, packed, frame.get("delay", 0), transparent or 0, 0
            )
        out += struct.pack(
            "<BHHHHB", 0x2C, frame.get("left", 0), frame.get("top", 0), frame_width, frame_height, 0
        )
        pattern = _pattern(frame["pattern"], len(palette))
        indices = [pattern(x, y, 0) for y in range(frame_height) for x in range(frame_width)]
        data = _lzw_constant_width(indices, min_code)
        out.append(min_code)
        for at in range(0, len(data), 255):
            block = data[at : at + 255]
            out += bytes([len(block)]) + block
        out.append(0)
    out.append(0x3B)
    return bytes(out)


def _lzw_constant_width(indices: list[int], min_code: int) -> bytes:
    """CLEAR, the indices (a CLEAR before every further group of 2^min - 2), EOI; codes of
    `min_code + 1` bits, LSB-first."""
    clear, end, width = 1 << min_code, (1 << min_code) + 1, min_code + 1
    group = (1 << min_code) - 2
    codes = [clear]
    for at, index in enumerate(indices):
        if at and at % group == 0:
            codes.append(clear)
        codes.append(index)
    codes.append(end)
    out = bytearray()
    acc, bits = 0, 0
    for code in codes:
        acc |= code << bits
        bits += width
        while bits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            bits -= 8
    if bits:
        out.append(acc & 0xFF)
    return bytes(out)


# --- fixture folder -------------------------------------------------------------------------

FIXTURES_ENV = "RECIPE_IMAGE_FIXTURES"
"""The environment variable naming the fixture folder."""
FIXTURES_MANIFEST = "manifest.json"
"""The fixture folder's manifest: `{"vectors_digest", "sources": {source key: sha256}}`."""
FIXTURE_VECTOR_FILES = ("image_preprocess.jsonl", "image_resolve.jsonl")
"""The files of the vectors' `images/` folder whose inputs the fixtures hold, in digest order."""


def default_fixtures_dir() -> Path:
    """`$RECIPE_IMAGE_FIXTURES`, else `~/.cache/deepseek-recipe/image-fixtures`."""
    configured = os.environ.get(FIXTURES_ENV)
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "deepseek-recipe" / "image-fixtures"


def vectors_digest(images_dir: Path) -> str:
    """SHA-256 of the image vector files the fixtures are made from, read in
    `FIXTURE_VECTOR_FILES` order (a different vectors folder gives a different digest)."""
    digest = hashlib.sha256()
    for name in FIXTURE_VECTOR_FILES:
        digest.update((images_dir / name).read_bytes())
    return digest.hexdigest()


def source_key(record_id: str, call: int, source: int) -> str:
    """The manifest key of a resolve record's byte source (`calls[call].sources[source]`)."""
    return f"{record_id} calls[{call}] sources[{source}]"


class ImageFixtures:
    """A fixture folder written by `scripts/gen_image_fixtures.py`: one file per input, named by
    its SHA-256 (every preprocess record's image, every byte source of the resolve records), and
    the manifest naming the resolve sources' files. Every read checks the file's SHA-256."""

    def __init__(self, directory: Path, images_dir: Path) -> None:
        """Opens `directory` for the vectors in `images_dir`; raises `FileNotFoundError` when
        it has no manifest and `ValueError` when it was made from other vectors."""
        self.directory = directory
        manifest_path = directory / FIXTURES_MANIFEST
        if not manifest_path.is_file():
            raise FileNotFoundError(
                f"no image fixtures at {directory}: run `make image-fixtures` "
                f"(scripts/gen_image_fixtures.py)"
            )
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("vectors_digest") != vectors_digest(images_dir):
            raise ValueError(
                f"the image fixtures at {directory} were made from other vectors than "
                f"{images_dir}: run `make image-fixtures` (scripts/gen_image_fixtures.py)"
            )
        self.sources: dict[str, str] = manifest["sources"]

    def image(self, sha256: str) -> bytes:
        """The input whose SHA-256 is `sha256`; raises `ValueError` when missing or altered."""
        path = self.directory / sha256
        if not path.is_file():
            raise ValueError(f"image fixture {sha256} is missing: run `make image-fixtures`")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ValueError(f"image fixture {sha256} does not match its SHA-256")
        return data

    def source(self, key: str) -> bytes:
        """The bytes of the resolve source `key` (see `source_key`)."""
        sha256 = self.sources.get(key)
        if sha256 is None:
            raise ValueError(f"no image fixture for {key}: run `make image-fixtures`")
        return self.image(sha256)
