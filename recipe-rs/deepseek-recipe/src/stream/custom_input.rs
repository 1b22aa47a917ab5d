//! The free-form input of a custom tool call (Responses `apply_patch`), read from the call's
//! argument fragments.

use super::parser::ArgumentFragment;

/// The arguments text that starts a custom tool's input: a string parameter named `input`.
const INPUT_PREFIX: &str = "{\"input\": \"";

/// How a custom tool call's argument fragments become input deltas: the raw text of the first
/// parameter when it is the string `input` (the rest of the arguments is ignored), otherwise the
/// arguments' JSON text itself. Fragments that may still start `{"input": "` are held back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomInput {
    /// The arguments so far may still start with `{"input": "`.
    Pending(String),
    /// Inside the `input` string: value text passes on raw.
    Input,
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
        match self {
            Self::Pending(held) => {
                held.push_str(&fragment.json_text());
                if held == INPUT_PREFIX {
                    *self = Self::Input;
                    None
                } else if INPUT_PREFIX.starts_with(held.as_str()) {
                    None
                } else {
                    let text = std::mem::take(held);
                    *self = Self::Arguments;
                    Some(text)
                }
            }
            Self::Input => match fragment {
                ArgumentFragment::Value { raw, .. } => Some(raw.clone()),
                ArgumentFragment::Quote => {
                    *self = Self::Done;
                    None
                }
                _ => None,
            },
            Self::Done => None,
            Self::Arguments => Some(fragment.json_text().into_owned()),
        }
    }

    /// The text still held back when the call closes (undecided arguments pass on as they are).
    pub fn finish(&mut self) -> Option<String> {
        match std::mem::replace(self, Self::Done) {
            Self::Pending(held) if !held.is_empty() => Some(held),
            _ => None,
        }
    }
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
    fn the_input_string_passes_raw_and_the_rest_is_ignored() {
        let fragments = [
            ArgumentFragment::Open,
            ArgumentFragment::Key("\"input\"".into()),
            ArgumentFragment::Colon,
            ArgumentFragment::Quote,
            value("a\"b"),
            value("c"),
            ArgumentFragment::Quote,
            ArgumentFragment::Separator,
            ArgumentFragment::Key("\"input\"".into()),
            ArgumentFragment::Close,
        ];
        assert_eq!(deltas(&fragments), ["a\"b", "c"]);
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
