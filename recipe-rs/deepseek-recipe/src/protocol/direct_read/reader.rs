//! The position in a body being read, and the steps the deserializer takes from it.

use serde::de::Visitor;
use serde::Deserializer;

use super::string::{read_string, Text};

/// Arrays and objects nested deeper than this are left to the two-stage read (serde_json's
/// limit is 128).
const MAX_DEPTH: usize = 64;

/// The reader's one error: the two-stage read decides.
#[derive(Debug)]
pub(super) struct Declined;

impl std::fmt::Display for Declined {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("left to the two-stage read")
    }
}

impl std::error::Error for Declined {}

impl serde::de::Error for Declined {
    fn custom<T: std::fmt::Display>(_message: T) -> Self {
        Declined
    }
}

/// What a step of the reader gives.
pub(super) type Read<T> = Result<T, Declined>;

/// A position in the body being read.
pub(super) struct Reader<'de> {
    text: &'de str,
    at: usize,
    depth: usize,
}

impl<'de> Reader<'de> {
    /// A reader at the start of `text`.
    pub(super) fn new(text: &'de str) -> Self {
        Self {
            text,
            at: 0,
            depth: 0,
        }
    }

    /// Whether only whitespace is left.
    pub(super) fn at_end(&mut self) -> bool {
        self.skip_whitespace();
        self.at == self.text.len()
    }

    /// Consumes the byte [`Self::peek`] returned.
    pub(super) fn advance(&mut self) {
        self.at += 1;
    }

    fn skip_whitespace(&mut self) {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.at), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    /// The next byte that is not whitespace (not consumed).
    pub(super) fn peek(&mut self) -> Read<u8> {
        self.skip_whitespace();
        self.text.as_bytes().get(self.at).copied().ok_or(Declined)
    }

    /// Consumes `byte`, after any whitespace.
    pub(super) fn expect(&mut self, byte: u8) -> Read<()> {
        if self.peek()? != byte {
            return Err(Declined);
        }
        self.advance();
        Ok(())
    }

    /// Consumes the literal `word` (`null`, `true`, `false`) at the current byte.
    pub(super) fn literal(&mut self, word: &str) -> Read<()> {
        if !self.text[self.at..].starts_with(word) {
            return Err(Declined);
        }
        self.at += word.len();
        Ok(())
    }

    /// Reads the string whose opening quote is the current byte.
    pub(super) fn string(&mut self) -> Read<Text<'de>> {
        let (text, end) = read_string(self.text, self.at).ok_or(Declined)?;
        self.at = end;
        Ok(text)
    }

    /// Reads the number at the current byte with serde_json's own parser, so that it parses,
    /// rounds and overflows exactly as the two-stage read's numbers do, and shows it to `visitor`
    /// as the JSON value of the two-stage read would (`u64`, `i64` or `f64`).
    pub(super) fn number<V: Visitor<'de>>(&mut self, visitor: V) -> Read<V::Value> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        while matches!(
            bytes.get(self.at),
            Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
        ) {
            self.at += 1;
        }
        let mut numbers = serde_json::Deserializer::from_str(&self.text[start..self.at]);
        let value = numbers.deserialize_any(visitor).map_err(|_| Declined)?;
        numbers.end().map_err(|_| Declined)?;
        Ok(value)
    }

    /// Steps into an array or object, declining past [`MAX_DEPTH`].
    pub(super) fn enter(&mut self) -> Read<()> {
        self.depth += 1;
        self.at += 1;
        if self.depth > MAX_DEPTH {
            return Err(Declined);
        }
        Ok(())
    }

    /// Steps out of an array or object at its closing `byte`.
    pub(super) fn leave(&mut self, byte: u8) -> Read<()> {
        self.expect(byte)?;
        self.depth -= 1;
        Ok(())
    }
}
