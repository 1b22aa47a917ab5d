//! Regular expressions and string literals as llguidance's Lark dialect spells them.

use crate::encoding::write_json_string;

/// Any text, newlines included.
pub(super) const ANY_TEXT: &str = "(?s:.*)";

/// `text` as a Lark string literal (a JSON string, non-ASCII kept raw).
pub(super) fn lark_string(text: &str) -> String {
    let mut out = String::new();
    write_json_string(&mut out, text);
    out
}

/// `text` as a regex that matches it literally and is safe inside `/.../`: ASCII letters,
/// digits, space, `_`, `-` and non-ASCII characters as they are, every other character as
/// `\xNN`.
pub(super) fn literal_regex(text: &str) -> String {
    let mut out = String::new();
    for character in text.chars() {
        if character.is_ascii_alphanumeric() || " _-".contains(character) || !character.is_ascii() {
            out.push(character);
        } else {
            out.push_str(&format!("\\x{:02X}", u32::from(character)));
        }
    }
    out
}

/// The character class (without brackets) an ASCII class escape stands for.
fn ascii_class(escape: char) -> Option<&'static str> {
    match escape {
        'd' => Some("0-9"),
        'w' => Some("0-9a-zA-Z_"),
        's' => Some(" \\t\\n\\r\\f\\v"),
        _ => None,
    }
}

/// `pattern` (Rust `regex` syntax) as the body of a Lark regex `/.../`: `/` escaped, newlines,
/// carriage returns and tabs written as escapes, a trailing lone `\` dropped. Each class escape
/// (`d`, `w`, `s`) named in `ascii_classes` is replaced by its ASCII class (`\d` → `[0-9]`,
/// `\D` → `[^0-9]`), as JSON Schema patterns mean them.
pub(super) fn lark_regex(pattern: &str, ascii_classes: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut characters = pattern.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => {
                let Some(escaped) = characters.next() else {
                    break;
                };
                let lower = escaped.to_ascii_lowercase();
                match ascii_class(lower).filter(|_| ascii_classes.contains(lower)) {
                    Some(class) if escaped == lower => out.push_str(&format!("[{class}]")),
                    Some(class) => out.push_str(&format!("[^{class}]")),
                    None => push_escaped(&mut out, escaped),
                }
            }
            '/' => out.push_str("\\/"),
            other => push_plain(&mut out, other),
        }
    }
    out
}

/// An escaped character: line breaks and tabs as their escapes, anything else behind `\`.
fn push_escaped(out: &mut String, character: char) {
    match character {
        '\n' | '\r' | '\t' => push_plain(out, character),
        other => {
            out.push('\\');
            out.push(other);
        }
    }
}

/// An unescaped character: line breaks and tabs as their escapes, anything else as it is.
fn push_plain(out: &mut String, character: char) {
    match character {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        other => out.push(other),
    }
}

/// A JSON-Schema `pattern` (a search, not a full match, with ASCII `\d` and `\w`) as a Lark
/// regex over the whole text: unanchored ends match any text.
pub(super) fn search_regex(pattern: &str) -> String {
    let start = pattern.starts_with('^');
    let end = pattern.ends_with('$') && !pattern.ends_with("\\$");
    let from = usize::from(start);
    let to = pattern.len() - usize::from(end);
    let body = pattern.get(from..to.max(from)).unwrap_or_default();
    let (head, tail) = (
        if start { "" } else { ANY_TEXT },
        if end { "" } else { ANY_TEXT },
    );
    format!("/{head}(?:{}){tail}/", lark_regex(body, "dw"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lark_regexes_escape_slashes_and_line_breaks() {
        assert_eq!(lark_regex("a/b", ""), "a\\/b");
        assert_eq!(lark_regex("a\\/b", ""), "a\\/b");
        assert_eq!(lark_regex("x\ny\t\r", ""), "x\\ny\\t\\r");
        assert_eq!(lark_regex("a\\\n", ""), "a\\n");
        assert_eq!(lark_regex("a\\", ""), "a");
        assert_eq!(lark_regex("\\\\d", "dw"), "\\\\d");
    }

    #[test]
    fn named_class_escapes_become_ascii_classes() {
        assert_eq!(lark_regex("\\d+", ""), "\\d+");
        assert_eq!(lark_regex("\\d+", "dw"), "[0-9]+");
        assert_eq!(lark_regex("[\\d\\w]", "dw"), "[[0-9][0-9a-zA-Z_]]");
        assert_eq!(
            lark_regex("\\D\\W\\S\\s", "dw"),
            "[^0-9][^0-9a-zA-Z_]\\S\\s"
        );
        assert_eq!(lark_regex("\\s", "dws"), "[ \\t\\n\\r\\f\\v]");
    }

    #[test]
    fn literals_and_strings() {
        assert_eq!(literal_regex("｜DSML｜"), "｜DSML｜");
        assert_eq!(literal_regex("/think>"), "\\x2Fthink\\x3E");
        assert_eq!(lark_string("a\"b\n"), "\"a\\\"b\\n\"");
    }

    #[test]
    fn search_patterns_are_anchored_only_where_they_say() {
        assert_eq!(search_regex("^a$"), "/(?:a)/");
        assert_eq!(search_regex("a"), "/(?s:.*)(?:a)(?s:.*)/");
        assert_eq!(search_regex("a\\$"), "/(?s:.*)(?:a\\$)(?s:.*)/");
        assert_eq!(search_regex("^"), "/(?:)(?s:.*)/");
        assert_eq!(search_regex("$"), "/(?s:.*)(?:)/");
    }
}
