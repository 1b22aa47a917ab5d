//! The free-form input of a custom tool call (Responses `apply_patch`), read from the call's
//! argument fragments.

use super::parser::ArgumentFragment;

/// The arguments text that starts a custom tool's input: a string parameter named `input`.
const INPUT_PREFIX: &str = "{\"input\": \"";

/// How a custom tool call's argument fragments become input deltas: when the arguments' JSON
/// text starts with `{"input": "`, the JSON string that follows, decoded as it arrives (the rest
/// of the arguments is ignored); otherwise the arguments' JSON text itself. Fragments that may
/// still start `{"input": "` are held back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomInput {
    /// The arguments so far may still start with `{"input": "`.
    Pending(String),
    /// Inside the `input` string; holds an escape sequence not complete yet.
    Input(String),
    /// The `input` string ended: the rest of the arguments is ignored.
    Done,
    /// The arguments are something else: they pass on as JSON text.
    Arguments,
}

impl Default for CustomInput {
    fn default() -> Self {
        Self::Pending(String::new())
    }
}

impl CustomInput {
    /// The input delta `fragment` gives, if any.
    pub fn push(&mut self, fragment: &ArgumentFragment) -> Option<String> {
        let text = fragment.json_text();
        match self {
            Self::Pending(held) => {
                held.push_str(&text);
                if let Some(rest) = held.strip_prefix(INPUT_PREFIX) {
                    let rest = rest.to_owned();
                    *self = Self::Input(String::new());
                    self.decode(&rest)
                } else if INPUT_PREFIX.starts_with(held.as_str()) {
                    None
                } else {
                    let text = std::mem::take(held);
                    *self = Self::Arguments;
                    Some(text)
                }
            }
            Self::Input(_) => self.decode(&text),
            Self::Done => None,
            Self::Arguments => (!text.is_empty()).then(|| text.into_owned()),
        }
    }

    /// The text still held back when the call closes: undecided arguments, an unfinished
    /// escape sequence (passed on as written).
    pub fn finish(&mut self) -> Option<String> {
        match std::mem::replace(self, Self::Done) {
            Self::Pending(held) | Self::Input(held) if !held.is_empty() => Some(held),
            _ => None,
        }
    }

    /// Decodes more of the `input` string; returns the text it gives, if any.
    fn decode(&mut self, more: &str) -> Option<String> {
        let Self::Input(held) = self else {
            return None;
        };
        held.push_str(more);
        let chars: Vec<char> = held.chars().collect();
        let mut out = String::new();
        let mut at = 0;
        let mut closed = false;
        while at < chars.len() {
            match chars[at] {
                '"' => {
                    closed = true;
                    break;
                }
                '\\' => match escape(&chars[at..]) {
                    Escape::Incomplete => break,
                    Escape::Decoded(decoded, len) => {
                        out.push(decoded);
                        at += len;
                    }
                    Escape::Literal(len) => {
                        out.extend(&chars[at..at + len]);
                        at += len;
                    }
                },
                other => {
                    out.push(other);
                    at += 1;
                }
            }
        }
        if closed {
            *self = Self::Done;
        } else {
            *held = chars[at..].iter().collect();
        }
        (!out.is_empty()).then_some(out)
    }
}

/// What an escape sequence at the start of some text stands for.
enum Escape {
    /// More text is needed to tell.
    Incomplete,
    /// A character, and the escape's length in characters.
    Decoded(char, usize),
    /// Not a valid escape: this many characters stay as written.
    Literal(usize),
}

/// Reads the escape sequence at the start of `text` (which starts with `\`) the way the reference
/// does: the JSON escapes, `\u` with a surrogate pair; an invalid escape stays as written, a high
/// surrogate without its low half together with what followed it.
fn escape(text: &[char]) -> Escape {
    let Some(&kind) = text.get(1) else {
        return Escape::Incomplete;
    };
    let simple = match kind {
        '"' => '"',
        '\\' => '\\',
        '/' => '/',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'u' => return unicode_escape(text),
        _ => return Escape::Literal(2),
    };
    Escape::Decoded(simple, 2)
}

/// Reads `\uXXXX` (and, after a high surrogate, the `\uXXXX` of its low half). A non-hex
/// character ends the escape there, written as is with everything read so far.
fn unicode_escape(text: &[char]) -> Escape {
    let code = match hex4(text, 2) {
        Hex::Value(code) => code,
        Hex::Invalid(len) => return Escape::Literal(len),
        Hex::Incomplete => return Escape::Incomplete,
    };
    if (0xDC00..=0xDFFF).contains(&code) {
        return Escape::Literal(6);
    }
    if !(0xD800..=0xDBFF).contains(&code) {
        return char::from_u32(code).map_or(Escape::Literal(6), |ch| Escape::Decoded(ch, 6));
    }
    match (text.get(6), text.get(7)) {
        (None, _) | (Some('\\'), None) => return Escape::Incomplete,
        (Some(&next), _) if next != '\\' => return Escape::Literal(6),
        (_, Some(&next)) if next != 'u' => return Escape::Literal(8),
        _ => {}
    }
    match hex4(text, 8) {
        Hex::Value(low @ 0xDC00..=0xDFFF) => {
            let code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            char::from_u32(code).map_or(Escape::Literal(12), |ch| Escape::Decoded(ch, 12))
        }
        Hex::Value(_) => Escape::Literal(12),
        Hex::Invalid(len) => Escape::Literal(len),
        Hex::Incomplete => Escape::Incomplete,
    }
}

/// Four hex digits read from `text[from..]`.
enum Hex {
    Value(u32),
    /// A non-hex character; the escape so far is this long, that character included.
    Invalid(usize),
    Incomplete,
}

fn hex4(text: &[char], from: usize) -> Hex {
    let mut value = 0;
    for at in from..from + 4 {
        let Some(&ch) = text.get(at) else {
            return Hex::Incomplete;
        };
        let Some(digit) = ch.to_digit(16) else {
            return Hex::Invalid(at + 1);
        };
        value = value * 16 + digit;
    }
    Hex::Value(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deltas(fragments: &[ArgumentFragment]) -> Vec<String> {
        let mut input = CustomInput::default();
        let mut out: Vec<String> = fragments.iter().filter_map(|f| input.push(f)).collect();
        out.extend(input.finish());
        out
    }

    fn value(raw: &str) -> ArgumentFragment {
        ArgumentFragment::Value {
            raw: raw.into(),
            string: true,
        }
    }

    #[test]
    fn the_input_string_is_decoded_and_the_rest_is_ignored() {
        let fragments = [
            ArgumentFragment::Open,
            ArgumentFragment::Key("\"input\"".into()),
            ArgumentFragment::Colon,
            ArgumentFragment::Quote,
            value("a\"b"),
            value(""),
            value("c"),
            ArgumentFragment::Quote,
            ArgumentFragment::Separator,
            ArgumentFragment::Key("\"input\"".into()),
            ArgumentFragment::Close,
        ];
        assert_eq!(deltas(&fragments), ["a\"b", "c"]);
    }

    #[test]
    fn raw_input_text_is_read_as_a_json_string() {
        let raw = |text: &str| ArgumentFragment::Value {
            raw: text.into(),
            string: false,
        };
        let start = [
            ArgumentFragment::Open,
            ArgumentFragment::Key("\"input\"".into()),
            ArgumentFragment::Colon,
        ];
        let pieces = [
            "\"ab",
            "c\\",
            "nd\\u00",
            "41\\ud83d",
            "\\ude00\\ud83d\\u0041\\x\"rest",
        ];
        let fragments: Vec<_> = start.iter().cloned().chain(pieces.map(raw)).collect();
        assert_eq!(
            deltas(&fragments),
            ["ab", "c", "\nd", "A", "😀\\ud83d\\u0041\\x"]
        );
        let unfinished: Vec<_> = start
            .iter()
            .cloned()
            .chain([raw("\"a\\u00"), ArgumentFragment::Close])
            .collect();
        assert_eq!(deltas(&unfinished), ["a", "\\u00}"]);
        let invalid: Vec<_> = start
            .iter()
            .cloned()
            .chain([raw("\"a\\u0z\"q\\ud83d\\u\"")])
            .collect();
        assert_eq!(deltas(&invalid), ["a\\u0z"]);
    }

    #[test]
    fn other_arguments_pass_as_json_text_once_they_differ() {
        let fragments = [
            ArgumentFragment::Open,
            ArgumentFragment::Key("\"x\"".into()),
            ArgumentFragment::Colon,
            ArgumentFragment::Quote,
            value("v"),
        ];
        assert_eq!(deltas(&fragments), ["{\"x\"", ": ", "\"", "v"]);
        assert_eq!(deltas(&[ArgumentFragment::Empty]), ["{}"]);
    }

    #[test]
    fn undecided_arguments_are_released_at_the_end() {
        let fragments = [ArgumentFragment::Open, ArgumentFragment::Key("\"in".into())];
        assert_eq!(deltas(&fragments), ["{\"in"]);
    }
}
