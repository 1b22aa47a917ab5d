//! The elements of an array and the entries of an object, as serde's visitors walk them.

use serde::de::{DeserializeSeed, MapAccess, SeqAccess};

use super::reader::{Declined, Read, Reader};

/// The elements of the array, or the entries of the object, whose opening bracket was just read.
pub(super) struct Members<'a, 'de> {
    reader: &'a mut Reader<'de>,
    first: bool,
}

impl<'a, 'de> Members<'a, 'de> {
    pub(super) fn new(reader: &'a mut Reader<'de>) -> Self {
        Self {
            reader,
            first: true,
        }
    }
}

impl<'de> SeqAccess<'de> for Members<'_, 'de> {
    type Error = Declined;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Read<Option<T::Value>> {
        if !next_member(self.reader, &mut self.first, b']')? {
            return Ok(None);
        }
        seed.deserialize(&mut *self.reader).map(Some)
    }
}

impl<'de> MapAccess<'de> for Members<'_, 'de> {
    type Error = Declined;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Read<Option<K::Value>> {
        if !next_member(self.reader, &mut self.first, b'}')? {
            return Ok(None);
        }
        if self.reader.peek()? != b'"' {
            return Err(Declined);
        }
        let key = seed.deserialize(&mut *self.reader)?;
        self.reader.expect(b':')?;
        Ok(Some(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Read<V::Value> {
        seed.deserialize(&mut *self.reader)
    }
}

/// Whether another element or entry follows (consuming the comma before it); `false` at the
/// `close` byte, which is left for the caller. A trailing comma fails at the value after it.
fn next_member(reader: &mut Reader<'_>, first: &mut bool, close: u8) -> Read<bool> {
    let byte = reader.peek()?;
    if byte == close {
        return Ok(false);
    }
    if std::mem::take(first) {
        return Ok(true);
    }
    if byte != b',' {
        return Err(Declined);
    }
    reader.advance();
    Ok(true)
}
