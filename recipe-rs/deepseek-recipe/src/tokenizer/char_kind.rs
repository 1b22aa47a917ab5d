//! The character kinds the pre-tokenizer regexes distinguish.

/// The class of a character as the pre-tokenizer regexes see it.
///
/// The regexes only use `\p{L}` together with `\p{M}` and `\p{P}` together with `\p{S}`, so each
/// pair is one kind. The kinds are disjoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `\p{L}` or `\p{M}`.
    LetterOrMark,
    /// `\p{N}`.
    Number,
    /// `\p{P}` or `\p{S}`.
    PunctOrSymbol,
    /// `\s` (the White_Space property).
    Space,
    /// Anything else (controls, format characters, unassigned code points, ...).
    Other,
}
