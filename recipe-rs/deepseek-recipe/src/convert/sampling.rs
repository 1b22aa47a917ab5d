//! Sampling-parameter validation and resolution shared by the protocols.

use crate::converted::ModelVersion;
use crate::error::ApiError;

/// Checks `temperature ∈ [0, 2]`.
pub(crate) fn check_temperature(temperature: Option<f32>) -> Result<(), ApiError> {
    match temperature {
        Some(value) if !(0.0..=2.0).contains(&value) => Err(ApiError::invalid_request(
            "Invalid temperature value, the valid range of temperature is [0, 2]",
        )),
        _ => Ok(()),
    }
}

/// Checks `top_p ∈ (0, 1]`.
pub(crate) fn check_top_p(top_p: Option<f32>) -> Result<(), ApiError> {
    match top_p {
        Some(value) if !(value > 0.0 && value <= 1.0) => Err(ApiError::invalid_request(
            "Invalid top_p value, the valid range of top_p is (0, 1.0]",
        )),
        _ => Ok(()),
    }
}

/// Checks a penalty (`frequency_penalty`, `presence_penalty`) is in [-2, 2].
pub(crate) fn check_penalty(name: &str, value: Option<f32>) -> Result<(), ApiError> {
    match value {
        Some(value) if !(-2.0..=2.0).contains(&value) => Err(ApiError::invalid_request(format!(
            "Invalid {name} value, the valid range of {name} is [-2, 2]"
        ))),
        _ => Ok(()),
    }
}

/// The `max_tokens` range error for `bound`.
fn max_tokens_error(bound: u32) -> ApiError {
    ApiError::invalid_request(format!(
        "Invalid max_tokens value, the valid range of max_tokens is [1, {bound}]"
    ))
}

/// Chat Completions / Responses: `max_tokens` must be in [1, bound].
pub(crate) fn check_max_tokens(
    max_tokens: Option<u32>,
    bound: u32,
) -> Result<Option<u32>, ApiError> {
    match max_tokens {
        Some(value) if value == 0 || value > bound => Err(max_tokens_error(bound)),
        other => Ok(other),
    }
}

/// Messages: 0 is rejected, values above the bound are clamped to it.
pub(crate) fn clamp_max_tokens(
    max_tokens: Option<u32>,
    bound: u32,
) -> Result<Option<u32>, ApiError> {
    match max_tokens {
        Some(0) => Err(max_tokens_error(bound)),
        other => Ok(other.map(|value| value.min(bound))),
    }
}

/// `top_logprobs` must be at most 20.
pub(crate) fn check_top_logprobs(top_logprobs: Option<u8>) -> Result<(), ApiError> {
    match top_logprobs {
        Some(value) if value > 20 => Err(ApiError::invalid_request(
            "Invalid top_logprobs value, the valid range of top_logprobs is [0, 20].",
        )),
        _ => Ok(()),
    }
}

/// Resolved temperature: thinking ignores the request.
pub(crate) fn resolve_temperature(thinking_mode: bool, requested: Option<f32>) -> f32 {
    if thinking_mode {
        1.0
    } else {
        requested.unwrap_or(1.0)
    }
}

/// Resolved top_p, which depends on the model version, thinking and active tools.
pub(crate) fn resolve_top_p(
    version: ModelVersion,
    thinking_mode: bool,
    tools_active: bool,
    requested: Option<f32>,
) -> f32 {
    match (version, thinking_mode) {
        (ModelVersion::DeepseekV4Pro, true) => {
            if tools_active {
                0.95
            } else {
                1.0
            }
        }
        (ModelVersion::DeepseekV4Pro, false) => requested.unwrap_or(1.0),
        (ModelVersion::DeepseekV41Flash, true) => requested.map_or(1.0, |value| value.max(0.95)),
        (ModelVersion::DeepseekV41Flash, false) => 1.0,
    }
}

/// Stop sequences: at most 16 (checked first), none empty.
pub(crate) fn check_stop(stop: &[String], single: bool) -> Result<(), ApiError> {
    if stop.len() > 16 {
        return Err(ApiError::invalid_request(format!(
            "Stop string array too long: {}",
            stop.len()
        )));
    }
    for (index, sequence) in stop.iter().enumerate() {
        if sequence.is_empty() {
            let name = if single {
                "stop".to_owned()
            } else {
                format!("stop[{index}]")
            };
            return Err(ApiError::invalid_request(format!(
                "Invalid '{name}': empty string. Expected a string with minimum length 1, but got an empty string instead."
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_p_depends_on_model_thinking_and_tools() {
        use ModelVersion::{DeepseekV41Flash as V41, DeepseekV4Pro as V4};
        assert_eq!(resolve_top_p(V4, true, true, Some(0.2)), 0.95);
        assert_eq!(resolve_top_p(V4, true, false, Some(0.2)), 1.0);
        assert_eq!(resolve_top_p(V4, false, true, Some(0.2)), 0.2);
        assert_eq!(resolve_top_p(V41, true, false, Some(0.2)), 0.95);
        assert_eq!(resolve_top_p(V41, true, false, Some(0.97)), 0.97);
        assert_eq!(resolve_top_p(V41, true, false, None), 1.0);
        assert_eq!(resolve_top_p(V41, false, false, Some(0.2)), 1.0);
    }

    #[test]
    fn max_tokens_bounds() {
        assert!(check_max_tokens(Some(0), 10).is_err());
        assert!(check_max_tokens(Some(11), 10).is_err());
        assert_eq!(check_max_tokens(Some(10), 10).unwrap(), Some(10));
        assert_eq!(clamp_max_tokens(Some(11), 10).unwrap(), Some(10));
        assert!(clamp_max_tokens(Some(0), 10).is_err());
    }

    #[test]
    fn stop_sequences() {
        let err = check_stop(&[String::new()], true).unwrap_err();
        assert!(err
            .error
            .message
            .starts_with("Invalid 'stop': empty string."));
        let err = check_stop(&["a".into(), String::new()], false).unwrap_err();
        assert!(err
            .error
            .message
            .starts_with("Invalid 'stop[1]': empty string."));
        let many = vec!["s".to_owned(); 17];
        assert_eq!(
            check_stop(&many, false).unwrap_err().error.message,
            "Stop string array too long: 17"
        );
    }
}
