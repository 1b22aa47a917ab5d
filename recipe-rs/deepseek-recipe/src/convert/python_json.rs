//! JSON text with Python's default separators (`", "` and `": "`), as the reference spells
//! tool-call arguments it builds from structured input.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};
use serde_json::Value;

/// A compact formatter with a space after `,` and `:`.
struct SpacedFormatter;

impl Formatter for SpacedFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        write_separator(writer, first)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        write_separator(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }
}

/// The `", "` before every array element and object key but the first.
fn write_separator<W: ?Sized + io::Write>(writer: &mut W, first: bool) -> io::Result<()> {
    if first {
        Ok(())
    } else {
        writer.write_all(b", ")
    }
}

/// `value` as JSON text with `", "` / `": "` separators and non-ASCII kept raw.
pub(crate) fn to_spaced_json(value: &Value) -> String {
    let mut out = Vec::new();
    let mut serializer = Serializer::with_formatter(&mut out, SpacedFormatter);
    if value.serialize(&mut serializer).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spaced_separators() {
        assert_eq!(
            to_spaced_json(&json!({"a": [1, {"k": "中"}], "b": null})),
            r#"{"a": [1, {"k": "中"}], "b": null}"#
        );
    }
}
