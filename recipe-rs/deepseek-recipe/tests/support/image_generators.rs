//! The image vectors' input generators (`image.generator`, see the vectors README): PNG, JPEG
//! and GIF writers, raw bytes, embedded files (looked up by key) and derived byte edits.

use std::collections::HashMap;

use serde_json::Value;

/// Regenerates the bytes a generator describes; `embedded` maps embedded keys to their bytes.
pub fn generate(generator: &Value, embedded: &HashMap<String, Vec<u8>>) -> Result<Vec<u8>, String> {
    match generator["name"].as_str().unwrap_or_default() {
        "png" => Ok(png(generator)),
        "jpeg" => Ok(jpeg(generator)),
        "gif" => Ok(gif(generator)),
        "bytes" => Ok(bytes(generator)),
        "embedded" => {
            let key = generator["key"].as_str().unwrap_or_default();
            embedded
                .get(key)
                .cloned()
                .ok_or_else(|| format!("unknown embedded key {key}"))
        }
        "derive" => derive(generator, embedded),
        other => Err(format!("unknown generator {other}")),
    }
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

fn usize_field(generator: &Value, key: &str) -> usize {
    generator[key].as_u64().unwrap_or(0) as usize
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex bytes"))
        .collect()
}

/// A pixel pattern: the sample of channel `c` at (x, y), reduced modulo `modulus`.
enum Pattern {
    Linear {
        k0: Vec<i64>,
        kx: Vec<i64>,
        ky: Vec<i64>,
    },
    Checker {
        size: usize,
        a: Vec<i64>,
        b: Vec<i64>,
    },
}

impl Pattern {
    fn new(spec: &Value) -> Self {
        let list = |key: &str| -> Vec<i64> {
            spec[key]
                .as_array()
                .map(|values| values.iter().map(int).collect())
                .unwrap_or_default()
        };
        match spec["type"].as_str() {
            Some("checker") => Self::Checker {
                size: int(&spec["size"]).max(1) as usize,
                a: list("a"),
                b: list("b"),
            },
            _ => Self::Linear {
                k0: list("k0"),
                kx: list("kx"),
                ky: list("ky"),
            },
        }
    }

    fn sample(&self, x: usize, y: usize, channel: usize, modulus: i64) -> i64 {
        let at = |values: &Vec<i64>| values.get(channel).copied().unwrap_or(0);
        let value = match self {
            Self::Checker { size, a, b } => {
                if (x / size + y / size) % 2 == 0 {
                    at(a)
                } else {
                    at(b)
                }
            }
            Self::Linear { k0, kx, ky } => at(k0) + at(kx) * x as i64 + at(ky) * y as i64,
        };
        value.rem_euclid(modulus)
    }
}

// ---------------------------------------------------------------- PNG

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in bytes.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream of stored blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = if data.is_empty() {
        vec![&[]]
    } else {
        data.chunks(65535).collect()
    };
    let last = blocks.len() - 1;
    for (index, block) in blocks.iter().enumerate() {
        out.push(u8::from(index == last));
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

fn png(g: &Value) -> Vec<u8> {
    let (width, height) = (usize_field(g, "width"), usize_field(g, "height"));
    let color_type = int(&g["color_type"]) as u8;
    let bit_depth = int(&g["bit_depth"]) as usize;
    let channels = match color_type {
        2 => 3,
        4 => 2,
        6 => 4,
        _ => 1,
    };
    let palette = g["palette"].as_array();
    let modulus = match (color_type, palette) {
        (3, Some(palette)) => palette.len().max(1) as i64,
        _ => 1i64 << bit_depth,
    };
    let pattern = Pattern::new(&g["pattern"]);
    let interlaced = int(&g["interlace"]) == 1;
    let passes: Vec<(usize, usize, usize, usize)> = if interlaced {
        vec![
            (0, 0, 8, 8),
            (4, 0, 8, 8),
            (0, 4, 4, 8),
            (2, 0, 4, 4),
            (0, 2, 2, 4),
            (1, 0, 2, 2),
            (0, 1, 1, 2),
        ]
    } else {
        vec![(0, 0, 1, 1)]
    };
    let mut raw = Vec::new();
    for (x0, y0, dx, dy) in passes {
        let pass_width = if width > x0 {
            (width - x0).div_ceil(dx)
        } else {
            0
        };
        let pass_height = if height > y0 {
            (height - y0).div_ceil(dy)
        } else {
            0
        };
        if pass_width == 0 || pass_height == 0 {
            continue;
        }
        for row in 0..pass_height {
            let y = y0 + row * dy;
            raw.push(0);
            let mut bits: u32 = 0;
            let mut filled = 0;
            for column in 0..pass_width {
                let x = x0 + column * dx;
                for channel in 0..channels {
                    let sample = pattern.sample(x, y, channel, modulus) as u32;
                    match bit_depth {
                        16 => raw.extend_from_slice(&(sample as u16).to_be_bytes()),
                        8 => raw.push(sample as u8),
                        depth => {
                            bits = (bits << depth) | sample;
                            filled += depth;
                            if filled == 8 {
                                raw.push(bits as u8);
                                bits = 0;
                                filled = 0;
                            }
                        }
                    }
                }
            }
            if filled > 0 {
                raw.push((bits << (8 - filled)) as u8);
            }
        }
    }
    let declared_width = g["declared_width"].as_u64().unwrap_or(width as u64) as u32;
    let declared_height = g["declared_height"].as_u64().unwrap_or(height as u64) as u32;
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&declared_width.to_be_bytes());
    ihdr.extend_from_slice(&declared_height.to_be_bytes());
    ihdr.extend_from_slice(&[bit_depth as u8, color_type, 0, 0, u8::from(interlaced)]);
    chunk(&mut out, b"IHDR", &ihdr);
    if let (3, Some(palette)) = (color_type, palette) {
        let plte: Vec<u8> = palette
            .iter()
            .flat_map(|rgb| rgb.as_array().into_iter().flatten().map(|v| int(v) as u8))
            .collect();
        chunk(&mut out, b"PLTE", &plte);
    }
    if let Some(trns) = g["trns"].as_array() {
        let data: Vec<u8> = if color_type == 3 {
            trns.iter().map(|v| int(v) as u8).collect()
        } else {
            trns.iter()
                .flat_map(|v| (int(v) as u16).to_be_bytes())
                .collect()
        };
        chunk(&mut out, b"tRNS", &data);
    }
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

// ---------------------------------------------------------------- JPEG

/// Writes bits MSB-first with 0xFF byte stuffing.
#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    current: u32,
    filled: u32,
}

impl BitWriter {
    fn put(&mut self, value: u32, count: u32) {
        for shift in (0..count).rev() {
            self.current = (self.current << 1) | ((value >> shift) & 1);
            self.filled += 1;
            if self.filled == 8 {
                self.flush_byte();
            }
        }
    }

    fn flush_byte(&mut self) {
        let byte = self.current as u8;
        self.out.push(byte);
        if byte == 0xFF {
            self.out.push(0);
        }
        self.current = 0;
        self.filled = 0;
    }

    fn finish(mut self) -> Vec<u8> {
        if self.filled > 0 {
            let pad = 8 - self.filled;
            self.put((1 << pad) - 1, pad);
        }
        self.out
    }
}

/// ITU-T T.81 Table K.3 (luminance DC): code counts per length and symbols 0..=11.
const DC_COUNTS: [u8; 16] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];

/// Canonical Huffman codes (code, length) for symbols in order.
fn canonical_codes(counts: &[u8; 16]) -> Vec<(u32, u32)> {
    let mut codes = Vec::new();
    let mut code = 0u32;
    for (index, &count) in counts.iter().enumerate() {
        for _ in 0..count {
            codes.push((code, index as u32 + 1));
            code += 1;
        }
        code <<= 1;
    }
    codes
}

fn segment(out: &mut Vec<u8>, marker: u8, data: &[u8]) {
    out.extend_from_slice(&[0xFF, marker]);
    out.extend_from_slice(&((data.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(data);
}

fn jpeg(g: &Value) -> Vec<u8> {
    let (width, height) = (usize_field(g, "width"), usize_field(g, "height"));
    let components = usize_field(g, "components").max(1);
    let pattern = Pattern::new(&g["pattern"]);
    let mut out = vec![0xFF, 0xD8];
    if g.get("jfif").and_then(Value::as_bool).unwrap_or(true) {
        segment(&mut out, 0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    }
    if let Some(orientation) = g.get("exif_orientation").and_then(Value::as_u64) {
        let mut exif = b"Exif\0\0MM\0\x2A\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01".to_vec();
        exif.extend_from_slice(&(orientation as u16).to_be_bytes());
        exif.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        segment(&mut out, 0xE1, &exif);
    }
    let mut dqt = vec![0];
    dqt.extend_from_slice(&[8; 64]);
    segment(&mut out, 0xDB, &dqt);
    let mut sof = vec![8];
    sof.extend_from_slice(&(height as u16).to_be_bytes());
    sof.extend_from_slice(&(width as u16).to_be_bytes());
    sof.push(components as u8);
    for id in 1..=components {
        sof.extend_from_slice(&[id as u8, 0x11, 0]);
    }
    segment(&mut out, 0xC0, &sof);
    let mut dht = vec![0x00];
    dht.extend_from_slice(&DC_COUNTS);
    dht.extend(0u8..12);
    segment(&mut out, 0xC4, &dht);
    let mut dht_ac = vec![0x10, 1];
    dht_ac.extend_from_slice(&[0; 15]);
    dht_ac.push(0x00);
    segment(&mut out, 0xC4, &dht_ac);
    let mut sos = vec![components as u8];
    for id in 1..=components {
        sos.extend_from_slice(&[id as u8, 0x00]);
    }
    sos.extend_from_slice(&[0, 63, 0]);
    segment(&mut out, 0xDA, &sos);
    let codes = canonical_codes(&DC_COUNTS);
    let mut writer = BitWriter::default();
    let mut previous = vec![0i64; components];
    for by in 0..height.div_ceil(8) {
        for bx in 0..width.div_ceil(8) {
            for (component, previous) in previous.iter_mut().enumerate() {
                let value = pattern.sample(bx, by, component, 256) - 128;
                let diff = value - *previous;
                *previous = value;
                let category = 64 - diff.unsigned_abs().leading_zeros();
                let (code, length) = codes[category as usize];
                writer.put(code, length);
                if category > 0 {
                    let extra = if diff > 0 {
                        diff
                    } else {
                        diff + (1 << category) - 1
                    };
                    writer.put(extra as u32, category);
                }
                writer.put(0, 1);
            }
        }
    }
    out.extend(writer.finish());
    out.extend_from_slice(&[0xFF, 0xD9]);
    out
}

// ---------------------------------------------------------------- GIF

/// Writes LZW codes of a constant width LSB-first.
#[derive(Default)]
struct LsbWriter {
    out: Vec<u8>,
    current: u64,
    filled: u32,
}

impl LsbWriter {
    fn put(&mut self, code: u32, width: u32) {
        self.current |= u64::from(code) << self.filled;
        self.filled += width;
        while self.filled >= 8 {
            self.out.push(self.current as u8);
            self.current >>= 8;
            self.filled -= 8;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.filled > 0 {
            self.out.push(self.current as u8);
        }
        self.out
    }
}

fn gif(g: &Value) -> Vec<u8> {
    let palette = g["palette"].as_array().cloned().unwrap_or_default();
    let version = g["version"].as_str().unwrap_or("89a");
    let is_89a = version == "89a";
    let screen_width = g["screen_width"]
        .as_u64()
        .unwrap_or(g["width"].as_u64().unwrap_or(0)) as u16;
    let screen_height = g["screen_height"]
        .as_u64()
        .unwrap_or(g["height"].as_u64().unwrap_or(0)) as u16;
    let mut k = 1;
    while (1usize << k) < palette.len() {
        k += 1;
    }
    let mut out = format!("GIF{version}").into_bytes();
    out.extend_from_slice(&screen_width.to_le_bytes());
    out.extend_from_slice(&screen_height.to_le_bytes());
    out.extend_from_slice(&[0x80 | 0x70 | (k as u8 - 1), 0, 0]);
    for index in 0..1usize << k {
        match palette.get(index).and_then(Value::as_array) {
            Some(rgb) => out.extend(rgb.iter().map(|v| int(v) as u8)),
            None => out.extend_from_slice(&[0, 0, 0]),
        }
    }
    if is_89a
        && g.get("loop")
            .is_some_and(|value| !value.is_null() && value != &Value::Bool(false))
    {
        out.extend_from_slice(b"\x21\xFF\x0BNETSCAPE2.0\x03\x01\x00\x00\x00");
    }
    let modulus = palette.len().max(1) as i64;
    for frame in g["frames"].as_array().into_iter().flatten() {
        let width = frame["width"]
            .as_u64()
            .unwrap_or(g["width"].as_u64().unwrap_or(0)) as usize;
        let height = frame["height"]
            .as_u64()
            .unwrap_or(g["height"].as_u64().unwrap_or(0)) as usize;
        if is_89a {
            let transparent = frame.get("transparent").and_then(Value::as_u64);
            let disposal = frame["disposal"].as_u64().unwrap_or(0) as u8;
            let delay = frame["delay"].as_u64().unwrap_or(0) as u16;
            out.extend_from_slice(&[
                0x21,
                0xF9,
                0x04,
                (disposal << 2) | u8::from(transparent.is_some()),
            ]);
            out.extend_from_slice(&delay.to_le_bytes());
            out.extend_from_slice(&[transparent.unwrap_or(0) as u8, 0]);
        }
        out.push(0x2C);
        for value in [&frame["left"], &frame["top"]] {
            out.extend_from_slice(&(value.as_u64().unwrap_or(0) as u16).to_le_bytes());
        }
        out.extend_from_slice(&(width as u16).to_le_bytes());
        out.extend_from_slice(&(height as u16).to_le_bytes());
        out.push(0);
        let min_code = k.max(2) as u32;
        let (clear, end) = (1u32 << min_code, (1u32 << min_code) + 1);
        let group = (1usize << min_code) - 2;
        let pattern = Pattern::new(&frame["pattern"]);
        let mut writer = LsbWriter::default();
        writer.put(clear, min_code + 1);
        let mut count = 0;
        for y in 0..height {
            for x in 0..width {
                if count > 0 && count % group == 0 {
                    writer.put(clear, min_code + 1);
                }
                writer.put(pattern.sample(x, y, 0, modulus) as u32, min_code + 1);
                count += 1;
            }
        }
        writer.put(end, min_code + 1);
        out.push(min_code as u8);
        for block in writer.finish().chunks(255) {
            out.push(block.len() as u8);
            out.extend_from_slice(block);
        }
        out.push(0);
    }
    out.push(0x3B);
    out
}

// ---------------------------------------------------------------- bytes, derive

fn bytes(g: &Value) -> Vec<u8> {
    let mut out = hex(g["hex"].as_str().unwrap_or_default());
    if let Some(length) = g["length"].as_u64() {
        out.resize(length as usize, int(&g["fill"]) as u8);
    }
    out
}

fn derive(g: &Value, embedded: &HashMap<String, Vec<u8>>) -> Result<Vec<u8>, String> {
    let mut data = generate(&g["base"], embedded)?;
    let index = |data: &Vec<u8>, value: &Value| {
        let i = int(value);
        if i < 0 {
            (data.len() as i64 + i) as usize
        } else {
            i as usize
        }
    };
    for op in g["ops"].as_array().into_iter().flatten() {
        let name = op[0].as_str().unwrap_or_default();
        match name {
            "truncate" => data.truncate(int(&op[1]) as usize),
            "drop_tail" => data.truncate(data.len().saturating_sub(int(&op[1]) as usize)),
            "xor" => {
                let i = index(&data, &op[1]);
                data[i] ^= int(&op[2]) as u8;
            }
            "prepend" => {
                let mut head = hex(op[1].as_str().unwrap_or_default());
                head.extend_from_slice(&data);
                data = head;
            }
            "append" => data.extend(hex(op[1].as_str().unwrap_or_default())),
            "overwrite" => {
                let i = index(&data, &op[1]);
                for (offset, byte) in hex(op[2].as_str().unwrap_or_default())
                    .into_iter()
                    .enumerate()
                {
                    if i + offset < data.len() {
                        data[i + offset] = byte;
                    } else {
                        data.push(byte);
                    }
                }
            }
            other => return Err(format!("unknown derive op {other}")),
        }
    }
    Ok(data)
}
