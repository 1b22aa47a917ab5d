//! The direct read of a request body: JSON text straight into the typed request, without the
//! intermediate JSON value of the two-stage read.
//!
//! It accepts a subset of what the two-stage read accepts and gives the same values there: it is
//! strict wherever serde_json's own direct read is lenient (unknown fields are parsed, not
//! skipped; numbers are parsed by serde_json itself, so they round and overflow as in the two
//! stages, and reach every field as the JSON value shows them: an `f32` field gets the `f64`),
//! and it declines (returns `None`) rather than decide anything the two stages decide
//! differently: nesting deeper than 64 levels, `\u` escapes of surrogates other than a high
//! and a low half escaped one after the other (one character, decoded here as serde_json does),
//! enums written as objects, byte strings. A declined body is read in two stages, which also word every error.
//! Its one purpose is speed: strings without escapes are borrowed, escaped ones decoded once
//! into their final `String` (see [`string`]).

mod access;
mod reader;
mod string;

use serde::de::{DeserializeOwned, IntoDeserializer, Visitor};
use serde::Deserializer;

use access::Members;
use reader::{Declined, Read, Reader};
use string::Text;

/// Reads `text` as a `T`, or `None` where the two-stage read must decide.
pub(crate) fn read<T: DeserializeOwned>(text: &str) -> Option<T> {
    let mut reader = Reader::new(text);
    let value = T::deserialize(&mut reader).ok()?;
    reader.at_end().then_some(value)
}

/// The bytes a JSON number starts with (a pattern).
macro_rules! number_start {
    () => {
        b'-' | b'0'..=b'9'
    };
}

/// A `deserialize_*` method that reads the value as [`Deserializer::deserialize_any`] does when
/// its first byte is of the kinds `$first` (what the two-stage read's JSON value takes for that
/// method: `deserialize_str` only a string, `deserialize_u64` only a number, …), and declines any
/// other kind, which the JSON value would reject even where the visitor takes it (a variant
/// identifier takes an index as well as a name).
macro_rules! of_kinds {
    ($($method:ident($($argument:ident: $kind:ty),*) => $first:pat,)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($argument: $kind,)* visitor: V) -> Read<V::Value> {
            match self.peek()? {
                $first => self.deserialize_any(visitor),
                _ => Err(Declined),
            }
        }
    )*};
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
                let value = visitor.visit_seq(Members::new(self))?;
                self.leave(b']')?;
                Ok(value)
            }
            b'{' => {
                self.enter()?;
                let value = visitor.visit_map(Members::new(self))?;
                self.leave(b'}')?;
                Ok(value)
            }
            number_start!() => self.number(visitor),
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

    of_kinds! {
        deserialize_bool() => b't' | b'f',
        deserialize_i8() => number_start!(),
        deserialize_i16() => number_start!(),
        deserialize_i32() => number_start!(),
        deserialize_i64() => number_start!(),
        deserialize_i128() => number_start!(),
        deserialize_u8() => number_start!(),
        deserialize_u16() => number_start!(),
        deserialize_u32() => number_start!(),
        deserialize_u64() => number_start!(),
        deserialize_u128() => number_start!(),
        deserialize_f32() => number_start!(),
        deserialize_f64() => number_start!(),
        deserialize_char() => b'"',
        deserialize_str() => b'"',
        deserialize_string() => b'"',
        deserialize_identifier() => b'"',
        deserialize_unit() => b'n',
        deserialize_unit_struct(_name: &'static str) => b'n',
        deserialize_seq() => b'[',
        deserialize_tuple(_len: usize) => b'[',
        deserialize_tuple_struct(_name: &'static str, _len: usize) => b'[',
        deserialize_map() => b'{',
        deserialize_struct(_name: &'static str, _fields: &'static [&'static str]) => b'[' | b'{',
    }
}

#[cfg(test)]
mod tests;
