//! Thinking mode and reasoning effort resolution (the same for all protocols).

use crate::conversation::ReasoningEffort;
use crate::protocol::{EffortParam, ThinkingType};

/// Resolves the thinking switch and requested effort into `(thinking_mode, effort)`.
///
/// An explicit switch wins; without one, effort `none` turns thinking off, any other effort
/// turns it on, and no effort leaves `default_thinking_mode`. Thinking on without an effort
/// (or with `none`) means `high`; thinking off has no effort.
pub(crate) fn resolve_thinking(
    switch: Option<ThinkingType>,
    effort: Option<EffortParam>,
    default_thinking_mode: bool,
) -> (bool, Option<ReasoningEffort>) {
    let thinking_mode = match (switch, effort) {
        (Some(ThinkingType::Disabled), _) => false,
        (Some(ThinkingType::Enabled | ThinkingType::Adaptive), _) => true,
        (None, Some(EffortParam::None)) => false,
        (None, Some(_)) => true,
        (None, None) => default_thinking_mode,
    };
    if !thinking_mode {
        return (false, None);
    }
    let resolved = match effort {
        Some(EffortParam::Minimal | EffortParam::Low) => ReasoningEffort::Low,
        Some(EffortParam::Xhigh) => ReasoningEffort::Xhigh,
        Some(EffortParam::Ultra | EffortParam::Max) => ReasoningEffort::Max,
        Some(EffortParam::None | EffortParam::Medium | EffortParam::High) | None => {
            ReasoningEffort::High
        }
    };
    (true, Some(resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_switch_wins_over_effort() {
        assert_eq!(
            resolve_thinking(Some(ThinkingType::Disabled), Some(EffortParam::Max), true),
            (false, None)
        );
        assert_eq!(
            resolve_thinking(Some(ThinkingType::Enabled), Some(EffortParam::None), false),
            (true, Some(ReasoningEffort::High))
        );
    }

    #[test]
    fn effort_alone_decides_and_maps() {
        assert_eq!(
            resolve_thinking(None, Some(EffortParam::None), true),
            (false, None)
        );
        assert_eq!(
            resolve_thinking(None, Some(EffortParam::Minimal), false),
            (true, Some(ReasoningEffort::Low))
        );
        assert_eq!(
            resolve_thinking(None, Some(EffortParam::Ultra), false),
            (true, Some(ReasoningEffort::Max))
        );
        assert_eq!(resolve_thinking(None, None, false), (false, None));
        assert_eq!(
            resolve_thinking(None, None, true),
            (true, Some(ReasoningEffort::High))
        );
    }
}
