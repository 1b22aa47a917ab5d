//! The direct read of a request body: JSON text straight into the typed request, without the
//! intermediate JSON value of the two-stage read.
//!
//! It accepts a subset of what the two-stage read accepts and gives the same values there: it is
//! strict wherever serde_json's own direct read is lenient (unknown fields are parsed, not
//! skipped; numbers are parsed by serde_json itself, so they round and overflow as in the two
//! stages, and reach every field as the JSON value shows them: an `f32` field gets the `f64`),
//! and it declines (returns `None`) rather than decide anything the two stages decide
//! differently: nesting deeper than 64 levels, `\u` escapes of surrogates, enums written as
//! objects, byte strings. A declined body is read in two stages, which also word every error.
//! Its one purpose is speed: strings without escapes are borrowed, escaped ones decoded once
//! into their final `String` (see [`string`]).

mod access;
mod reader;
mod string;

use serde::de::{DeserializeOwned, IntoDeserializer, Visitor};
use serde::Deserializer;

use access::{Entries, Items};
use reader::{Declined, Read, Reader};
use string::Text;

/// Reads `text` as a `T`, or `None` where the two-stage read must decide.
pub(crate) fn read<T: DeserializeOwned>(text: &str) -> Option<T> {
    let mut reader = Reader::new(text);
    let value = T::deserialize(&mut reader).ok()?;
    reader.at_end().then_some(value)
}

impl<'de> Deserializer<'de> for &mut Reader<'de> {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        match self.peek()? {
            b'n' => {
                self.literal("null")?;
                visitor.visit_unit()
            }
            b't' => {
                self.literal("true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.literal("false")?;
                visitor.visit_bool(false)
            }
            b'"' => match self.string()? {
                Text::Borrowed(text) => visitor.visit_borrowed_str(text),
                Text::Owned(text) => visitor.visit_string(text),
            },
            b'[' => {
                self.enter()?;
                let value = visitor.visit_seq(Items::new(self))?;
                self.leave(b']')?;
                Ok(value)
            }
            b'{' => {
                self.enter()?;
                let value = visitor.visit_map(Entries::new(self))?;
                self.leave(b'}')?;
                Ok(value)
            }
            b'-' | b'0'..=b'9' => self.number(visitor),
            _ => Err(Declined),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        if self.peek()? == b'n' {
            self.literal("null")?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Read<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    /// Only unit variants, written as strings; an enum written as an object is declined.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Read<V::Value> {
        if self.peek()? != b'"' {
            return Err(Declined);
        }
        match self.string()? {
            Text::Borrowed(text) => visitor.visit_enum(text.into_deserializer()),
            Text::Owned(text) => visitor.visit_enum(text.into_deserializer()),
        }
    }

    /// Byte strings are declined (no request field reads one).
    fn deserialize_bytes<V: Visitor<'de>>(self, _visitor: V) -> Read<V::Value> {
        Err(Declined)
    }

    /// See [`Self::deserialize_bytes`].
    fn deserialize_byte_buf<V: Visitor<'de>>(self, _visitor: V) -> Read<V::Value> {
        Err(Declined)
    }

    /// Parsed in full, as the two-stage read parses unknown fields.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        self.deserialize_any(visitor)
    }

    // The two-stage read shows a visitor what the JSON value holds, whatever it asks for (a
    // number as `u64`, `i64` or `f64` as parsed, even to an `f32` or `u128` field).
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string unit unit_struct
        seq tuple tuple_struct map struct identifier
    }
}

#[cfg(test)]
mod tests;
