//! The JSON writer used inside prompts: `", "` / `": "` separators, non-ASCII kept raw, key order
//! preserved, and the reference's spelling of numbers.

use serde_json::{Number, Value};

/// How floating-point numbers are spelled in rendered JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberStyle {
    /// V4: fixed notation for 1e-5 ≤ |x| < 1e16 (`0.00001`, `300.0`), otherwise an exponent
    /// without padding (`1e-6`, `1e+16`).
    Shortest,
    /// V4.1: fixed notation for 1e-4 ≤ |x| < 1e16, otherwise an exponent of at least two
    /// digits (`1e-07`, `1e+16`), as Python spells floats.
    Python,
}

impl NumberStyle {
    /// The smallest decimal exponent written in fixed notation.
    fn min_fixed_exponent(self) -> i32 {
        match self {
            Self::Shortest => -5,
            Self::Python => -4,
        }
    }

    /// The minimum number of exponent digits.
    fn exponent_width(self) -> usize {
        match self {
            Self::Shortest => 1,
            Self::Python => 2,
        }
    }
}

/// Exponents at or above this are written in exponent form.
const MAX_FIXED_EXPONENT: i32 = 16;

/// `value` as prompt JSON.
pub(crate) fn to_prompt_json(value: &Value, style: NumberStyle) -> String {
    let mut out = String::new();
    write_value(&mut out, value, style);
    out
}

/// Appends `value` as prompt JSON.
pub(crate) fn write_value(out: &mut String, value: &Value, style: NumberStyle) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number, style),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, style);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_string(out, key);
                out.push_str(": ");
                write_value(out, item, style);
            }
            out.push('}');
        }
    }
}

/// Appends `text` as a JSON string literal (only `"`, `\` and control characters escaped).
pub(crate) fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            control if control < ' ' => {
                out.push_str(&format!("\\u{:04x}", u32::from(control)));
            }
            other => out.push(other),
        }
    }
    out.push('"');
}

fn write_number(out: &mut String, number: &Number, style: NumberStyle) {
    if let Some(unsigned) = number.as_u64() {
        out.push_str(&unsigned.to_string());
    } else if let Some(signed) = number.as_i64() {
        out.push_str(&signed.to_string());
    } else if let Some(float) = number.as_f64() {
        out.push_str(&format_float(float, style));
    } else {
        out.push_str(&number.to_string());
    }
}

/// `value` spelled with the shortest digits that round-trip, in fixed or exponent form.
pub(crate) fn format_float(value: f64, style: NumberStyle) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let sign = if value.is_sign_negative() { "-" } else { "" };
    if value == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, exponent) = shortest_digits(value.abs());
    let body = if (style.min_fixed_exponent()..MAX_FIXED_EXPONENT).contains(&exponent) {
        fixed_notation(&digits, exponent)
    } else {
        exponent_notation(&digits, exponent, style.exponent_width())
    };
    format!("{sign}{body}")
}

/// The shortest round-trip decimal digits of a positive finite `value` and the exponent of the
/// first digit (`value = d.ddd × 10^exponent`).
fn shortest_digits(value: f64) -> (String, i32) {
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exponent.parse().unwrap_or(0))
}

fn fixed_notation(digits: &str, exponent: i32) -> String {
    if exponent < 0 {
        let zeros = "0".repeat(exponent.unsigned_abs() as usize - 1);
        return format!("0.{zeros}{digits}");
    }
    let integer_length = exponent as usize + 1;
    if digits.len() <= integer_length {
        let zeros = "0".repeat(integer_length - digits.len());
        format!("{digits}{zeros}.0")
    } else {
        let (integer, fraction) = digits.split_at(integer_length);
        format!("{integer}.{fraction}")
    }
}

fn exponent_notation(digits: &str, exponent: i32, width: usize) -> String {
    let (first, rest) = digits.split_at(1);
    let mantissa = if rest.is_empty() {
        first.to_owned()
    } else {
        format!("{first}.{rest}")
    };
    let sign = if exponent < 0 { '-' } else { '+' };
    let magnitude = exponent.unsigned_abs();
    format!("{mantissa}e{sign}{magnitude:0width$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(json: &str, style: NumberStyle) -> String {
        let value: Value = serde_json::from_str(json).expect("test JSON is valid");
        to_prompt_json(&value, style)
    }

    #[test]
    fn v4_numbers_follow_the_reference() {
        let cases = [
            ("1e15", "1000000000000000.0"),
            ("1e16", "1e+16"),
            ("1.5e16", "1.5e+16"),
            ("123456789012345680000", "1.2345678901234568e+20"),
            ("0.0001", "0.0001"),
            ("0.00001", "0.00001"),
            ("0.000001", "1e-6"),
            ("9.9e-7", "9.9e-7"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("-1e21", "-1e+21"),
            ("2.5e-10", "2.5e-10"),
            ("100.0", "100.0"),
            ("-0", "-0.0"),
            ("-0.0", "-0.0"),
            ("0", "0"),
            ("9007199254740993", "9007199254740993"),
            ("18446744073709551615", "18446744073709551615"),
            ("18446744073709551616", "1.8446744073709552e+19"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("-9223372036854775809", "-9.223372036854776e+18"),
            ("3.0e2", "300.0"),
            ("12345678.9", "12345678.9"),
            ("0.1e1", "1.0"),
            ("9999999999999998.0", "9999999999999998.0"),
        ];
        for (input, expected) in cases {
            assert_eq!(
                render(input, NumberStyle::Shortest),
                expected,
                "input {input}"
            );
        }
    }

    #[test]
    fn v41_numbers_use_python_exponents() {
        assert_eq!(render("1e-7", NumberStyle::Python), "1e-07");
        assert_eq!(render("0.00001", NumberStyle::Python), "1e-05");
        assert_eq!(render("0.0001", NumberStyle::Python), "0.0001");
        assert_eq!(render("1e16", NumberStyle::Python), "1e+16");
        assert_eq!(render("5e-324", NumberStyle::Python), "5e-324");
    }

    #[test]
    fn structures_use_spaced_separators_and_keep_order() {
        let json = r#"{"k": {"b": 1, "a": [true, false, null, "x"]}, "e": {}, "l": []}"#;
        assert_eq!(render(json, NumberStyle::Shortest), json);
    }

    #[test]
    fn strings_escape_only_quotes_backslashes_and_controls() {
        let value = Value::String("é😀\n\t\"\\\u{1}\u{7f}".to_owned());
        assert_eq!(
            to_prompt_json(&value, NumberStyle::Shortest),
            "\"é😀\\n\\t\\\"\\\\\\u0001\u{7f}\""
        );
    }
}
