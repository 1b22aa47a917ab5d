//! Names of the crate's fieldless enums as the wire formats and the Python API spell them:
//! `as_str`, `FromStr` and `ALL` from one table per enum (tested against the serde names).

/// A name that spells none of an enum's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} \"{name}\"; expected {expected}")]
pub struct UnknownName {
    /// What was named (`protocol`, `finish reason`, …).
    pub what: &'static str,
    /// The name given.
    pub name: String,
    /// The names that exist, quoted: `"a", "b" or "c"`.
    expected: String,
}

impl UnknownName {
    /// The error for `name`, which is none of `names`.
    pub(crate) fn new<'a>(
        what: &'static str,
        name: &str,
        names: impl Iterator<Item = &'a str>,
    ) -> Self {
        let quoted: Vec<String> = names.map(|known| format!("\"{known}\"")).collect();
        let expected = match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => quoted.join(""),
        };
        Self {
            what,
            name: name.to_owned(),
            expected,
        }
    }
}

/// Gives a fieldless enum `ALL`, `as_str` and `FromStr` (errors are [`UnknownName`]s naming
/// `$what`) from one table of its variants' names.
macro_rules! enum_names {
    ($type:ty, $what:literal, [$($variant:ident => $name:literal),+ $(,)?]) => {
        impl $type {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The name, as the wire format spells it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }
        }

        impl std::str::FromStr for $type {
            type Err = $crate::names::UnknownName;

            fn from_str(name: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|value| value.as_str() == name)
                    .ok_or_else(|| {
                        $crate::names::UnknownName::new(
                            $what,
                            name,
                            Self::ALL.iter().map(|value| value.as_str()),
                        )
                    })
            }
        }
    };
}

pub(crate) use enum_names;

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use crate::conversation::{ImageDetail, ImageSourceKind};
    use crate::convert::Protocol;
    use crate::converted::ModelVersion;
    use crate::stream::InferenceFinishReason;

    fn names_are_the_serde_names<
        T: Serialize + Copy + std::str::FromStr + PartialEq + std::fmt::Debug,
    >(
        all: &[T],
        as_str: fn(T) -> &'static str,
    ) {
        for &value in all {
            assert_eq!(serde_json::to_value(value).unwrap(), as_str(value));
            assert_eq!(as_str(value).parse::<T>().ok(), Some(value));
        }
    }

    #[test]
    fn every_table_spells_the_serde_names() {
        names_are_the_serde_names(Protocol::ALL, Protocol::as_str);
        names_are_the_serde_names(ModelVersion::ALL, ModelVersion::as_str);
        names_are_the_serde_names(InferenceFinishReason::ALL, InferenceFinishReason::as_str);
        names_are_the_serde_names(ImageDetail::ALL, ImageDetail::as_str);
        names_are_the_serde_names(ImageSourceKind::ALL, ImageSourceKind::as_str);
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = "x".parse::<Protocol>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown protocol \"x\"; expected \"chat_completions\", \"responses\" or \"messages\""
        );
        let err = "stop ".parse::<InferenceFinishReason>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown finish reason \"stop \"; expected \"stop\", \"length\" or \"content_filter\""
        );
    }
}
