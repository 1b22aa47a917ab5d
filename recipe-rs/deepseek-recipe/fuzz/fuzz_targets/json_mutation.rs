//! Structure-aware mutation of JSON inputs (request bodies): an input that parses as JSON is
//! mutated as a tree — a node replaced, removed, duplicated, wrapped, grafted from elsewhere in
//! this or another input, or its string/key bytes mutated by libFuzzer (so comparison hints land
//! inside strings) — and written back as JSON. Inputs that do not parse, and one mutation in
//! eight, get libFuzzer's byte-level mutation, which keeps malformed bodies in the corpus.

use libfuzzer_sys::fuzzer_mutate;
use serde_json::{Map, Value};

/// SplitMix64, seeded by libFuzzer's per-mutation seed (so a run is reproducible).
struct Rng(u64);

impl Rng {
    fn new(seed: u32) -> Self {
        Self(u64::from(seed))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

/// Numbers at the edges of the ranges requests are checked against (sampling ranges, token
/// budgets, integer widths) and of JSON number parsing.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "20",
    "21",
    "0.5",
    "-0.0",
    "2.0000001",
    "1e-320",
    "1e308",
    "-1e308",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "393216",
    "393217",
];

/// Strings with a meaning to the prompt format (special-token and DSML spellings, thinking tags)
/// or to text handling (empty, lone combining mark, astral character, NUL).
const STRINGS: &[&str] = &[
    "",
    "<｜User｜>",
    "<｜Assistant｜>",
    "<｜end▁of▁sentence｜>",
    "<｜begin▁of▁sentence｜>",
    "<think>",
    "</think>",
    "<｜DSML｜invoke name=\"f\">",
    "<｜image｜>",
    "\u{301}",
    "😀",
    "\u{0}",
    "{}",
    "[]",
    "null",
];

/// Mutates `data[..size]` in place (at most `max_size` bytes); returns the new size.
pub fn mutate(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    let mut rng = Rng::new(seed);
    if rng.one_in(8) {
        return fuzzer_mutate(data, size, max_size);
    }
    let Ok(mut value) = serde_json::from_slice::<Value>(&data[..size]) else {
        return fuzzer_mutate(data, size, max_size);
    };
    for _ in 0..=rng.below(3) {
        let donor = random_subtree(&value, &mut rng);
        mutate_node(&mut value, donor, &mut rng);
    }
    write_json(&value, data, max_size).unwrap_or_else(|| fuzzer_mutate(data, size, max_size))
}

/// Writes into `out` a copy of `first` with one node replaced by (or, in an object, one entry
/// added from) a node of `second`; falls back to a byte splice when either is not JSON.
pub fn crossover(first: &[u8], second: &[u8], out: &mut [u8], seed: u32) -> usize {
    let mut rng = Rng::new(seed);
    let parsed = (
        serde_json::from_slice::<Value>(first),
        serde_json::from_slice::<Value>(second),
    );
    if let (Ok(mut value), Ok(other)) = parsed {
        let donor = random_subtree(&other, &mut rng);
        graft(&mut value, donor, &mut rng);
        if let Some(size) = write_json(&value, out, out.len()) {
            return size;
        }
    }
    let head = rng.below(first.len() + 1).min(out.len());
    out[..head].copy_from_slice(&first[..head]);
    let tail = second.len() - rng.below(second.len() + 1);
    let tail = tail.min(out.len() - head);
    out[head..head + tail].copy_from_slice(&second[second.len() - tail..]);
    head + tail
}

/// Serialises `value` into `out` when it fits in `max_size` bytes.
fn write_json(value: &Value, out: &mut [u8], max_size: usize) -> Option<usize> {
    let bytes = serde_json::to_vec(value).ok()?;
    if bytes.len() > max_size.min(out.len()) {
        return None;
    }
    out[..bytes.len()].copy_from_slice(&bytes);
    Some(bytes.len())
}

/// Number of nodes (every value, containers included) in `value`.
fn count_nodes(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(map) => map.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// The `index`-th node in pre-order, counting `index` down as nodes are passed.
fn node_at<'a>(value: &'a mut Value, index: &mut usize) -> Option<&'a mut Value> {
    if *index == 0 {
        return Some(value);
    }
    *index -= 1;
    match value {
        Value::Array(items) => items.iter_mut().find_map(|item| node_at(item, index)),
        Value::Object(map) => map.values_mut().find_map(|item| node_at(item, index)),
        _ => None,
    }
}

fn random_node_mut<'a>(value: &'a mut Value, rng: &mut Rng) -> &'a mut Value {
    let mut index = rng.below(count_nodes(value));
    node_at(value, &mut index).expect("the index is below the node count")
}

/// A copy of a random node of `value`.
fn random_subtree(value: &Value, rng: &mut Rng) -> Value {
    random_node_mut(&mut value.clone(), rng).take()
}

/// Applies one structural mutation to a random node of `root`; `donor` is a node of the same
/// document, for grafts.
fn mutate_node(root: &mut Value, donor: Value, rng: &mut Rng) {
    let node = random_node_mut(root, rng);
    match rng.below(6) {
        0 => graft_at(node, donor, rng),
        1 => *node = scalar(rng),
        2 => *node = Value::Array(vec![node.take()]),
        3 => mutate_bytes(node, rng),
        _ => reshape(node, rng),
    }
}

/// Puts `donor` at a random node of `root` (replacing it, or as a new entry of an object).
fn graft(root: &mut Value, donor: Value, rng: &mut Rng) {
    let node = random_node_mut(root, rng);
    graft_at(node, donor, rng);
}

fn graft_at(node: &mut Value, donor: Value, rng: &mut Rng) {
    match node {
        Value::Object(map) if rng.one_in(2) => {
            let key = map
                .keys()
                .nth(rng.below(map.len().max(1)))
                .cloned()
                .unwrap_or_default();
            map.insert(key, donor);
        }
        Value::Array(items) if rng.one_in(2) => items.insert(rng.below(items.len() + 1), donor),
        _ => *node = donor,
    }
}

/// A number or string from the tables, or another JSON type.
fn scalar(rng: &mut Rng) -> Value {
    match rng.below(4) {
        0 => serde_json::from_str(NUMBERS[rng.below(NUMBERS.len())]).unwrap_or(Value::Null),
        1 => Value::String(STRINGS[rng.below(STRINGS.len())].to_owned()),
        2 => Value::Bool(rng.one_in(2)),
        _ => match rng.below(3) {
            0 => Value::Null,
            1 => Value::Array(Vec::new()),
            _ => Value::Object(Map::new()),
        },
    }
}

/// libFuzzer's byte mutation applied inside a string (or to one key of an object), so the
/// result stays JSON while comparison hints from the target can land in it.
fn mutate_bytes(node: &mut Value, rng: &mut Rng) {
    match node {
        Value::String(text) => *text = mutated_text(text),
        Value::Object(map) if !map.is_empty() => {
            let key = map
                .keys()
                .nth(rng.below(map.len()))
                .cloned()
                .unwrap_or_default();
            if let Some(value) = map.remove(&key) {
                map.insert(mutated_text(&key), value);
            }
        }
        _ => *node = Value::String(mutated_text(&node.to_string())),
    }
}

fn mutated_text(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let size = bytes.len();
    bytes.resize(size * 2 + 16, 0);
    let max_size = bytes.len();
    let new_size = fuzzer_mutate(&mut bytes, size, max_size);
    String::from_utf8_lossy(&bytes[..new_size]).into_owned()
}

/// Edits a container (remove, duplicate or swap an element or entry, empty it) or a scalar
/// (number to a neighbour or an edge value, string appended with a special spelling).
fn reshape(node: &mut Value, rng: &mut Rng) {
    match node {
        Value::Array(items) if !items.is_empty() => {
            let at = rng.below(items.len());
            match rng.below(4) {
                0 => {
                    items.remove(at);
                }
                1 => items.insert(at, items[at].clone()),
                2 => {
                    let other = rng.below(items.len());
                    items.swap(at, other);
                }
                _ => items.clear(),
            }
        }
        Value::Object(map) if !map.is_empty() => {
            let key = map
                .keys()
                .nth(rng.below(map.len()))
                .cloned()
                .unwrap_or_default();
            if rng.one_in(4) {
                map.clear();
            } else {
                map.remove(&key);
            }
        }
        Value::Number(number) if rng.one_in(2) => {
            let step = if rng.one_in(2) { 1 } else { -1 };
            *node = match (number.as_i64(), number.as_f64()) {
                (Some(integer), _) => Value::from(integer.saturating_add(step)),
                (None, Some(float)) => Value::from(float + 0.5 * step as f64),
                (None, None) => scalar(rng),
            };
        }
        Value::String(text) => text.push_str(STRINGS[rng.below(STRINGS.len())]),
        _ => *node = scalar(rng),
    }
}
