//! Argument fragments of a tool call, and JSON string escaping.

use std::borrow::Cow;

/// A fragment of a tool call's argument JSON text, in the order the parser recognises it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentFragment {
    /// `{` before the first parameter.
    Open,
    /// `, ` before every later parameter.
    Separator,
    /// Raw parameter-name text, copied verbatim (normally `"name"` with its quotes).
    Key(String),
    /// `: ` after the name.
    Colon,
    /// The `"` around a string value.
    Quote,
    /// Value text: JSON-escaped for string values, verbatim otherwise.
    Value {
        /// The value text as the model wrote it.
        raw: String,
        /// Whether the value is a string (escaped and quoted in the arguments).
        string: bool,
    },
    /// `}` after the last parameter.
    Close,
    /// `{}` for a call without parameters.
    Empty,
}

impl ArgumentFragment {
    /// The fragment's text inside the arguments JSON.
    pub fn json_text(&self) -> Cow<'_, str> {
        match self {
            Self::Open => Cow::Borrowed("{"),
            Self::Separator => Cow::Borrowed(", "),
            Self::Key(key) => Cow::Borrowed(key),
            Self::Colon => Cow::Borrowed(": "),
            Self::Quote => Cow::Borrowed("\""),
            Self::Value { raw, string: false } => Cow::Borrowed(raw),
            Self::Value { raw, string: true } => Cow::Owned(escape_json_string(raw)),
            Self::Close => Cow::Borrowed("}"),
            Self::Empty => Cow::Borrowed("{}"),
        }
    }
}

/// Escapes text as the inside of a JSON string (`"`, `\`, controls; non-ASCII kept raw).
pub fn escape_json_string(raw: &str) -> String {
    let mut escaped = String::with_capacity(raw.len() + 2);
    for ch in raw.chars() {
        match ch {
            '"' => escaped.push_str("\\\""),
            '\\' => escaped.push_str("\\\\"),
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            '\u{08}' => escaped.push_str("\\b"),
            '\u{0c}' => escaped.push_str("\\f"),
            c if (c as u32) < 0x20 => escaped.push_str(&format!("\\u{:04x}", c as u32)),
            c => escaped.push(c),
        }
    }
    escaped
}
