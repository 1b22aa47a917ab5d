//! The Responses `tools` list as the response object reports it.

use serde_json::Value;

/// Request tools as the response object reports them: functions with `description` and `strict`
/// (null when not set), custom tools by type and name, namespaces with their description (null
/// when not set) and reported functions, web search tools with their context size and location,
/// tool search tools with their settings; tools of any other type are left out (found by the
/// differential harness).
pub fn report_tools(request_tools: &[Value]) -> Vec<Value> {
    request_tools.iter().filter_map(report_tool).collect()
}

/// The fields a reported object carries, each null when the request does not set it.
fn fields(object: &Value, keys: &[&str]) -> serde_json::Map<String, Value> {
    keys.iter()
        .map(|&key| {
            (
                key.to_owned(),
                object.get(key).cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn report_tool(tool: &Value) -> Option<Value> {
    let kind = tool.get("type").and_then(Value::as_str)?;
    Some(match kind {
        "function" => {
            let mut reported = serde_json::Map::new();
            reported.insert("type".into(), "function".into());
            reported.extend(fields(
                tool,
                &["name", "description", "parameters", "strict"],
            ));
            Value::Object(reported)
        }
        "custom" => serde_json::json!({"type": "custom", "name": tool.get("name")}),
        "namespace" => {
            let inner = tool
                .get("tools")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let mut reported = serde_json::Map::new();
            reported.insert("type".into(), "namespace".into());
            reported.extend(fields(tool, &["name", "description"]));
            reported.insert("tools".into(), Value::Array(report_tools(inner)));
            Value::Object(reported)
        }
        "web_search" | "web_search_2025_08_26" => {
            let mut reported = serde_json::Map::new();
            reported.insert("type".into(), kind.into());
            reported.extend(fields(tool, &["search_context_size"]));
            let location = match tool.get("user_location") {
                Some(location @ Value::Object(_)) => {
                    Value::Object(fields(location, &["city", "country", "region", "timezone"]))
                }
                _ => Value::Null,
            };
            reported.insert("user_location".into(), location);
            Value::Object(reported)
        }
        "tool_search" => {
            let mut reported = serde_json::Map::new();
            reported.insert("type".into(), "tool_search".into());
            reported.extend(fields(tool, &["execution", "description", "parameters"]));
            Value::Object(reported)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_tools_are_reported_with_nulls_and_others_left_out() {
        let tools = [
            json!({"type": "function", "name": "f", "extra": 1}),
            json!({"type": "file_search"}),
            json!({"type": ""}),
            json!({"type": "web_search", "user_location": {"type": "approximate", "city": "X"}}),
            json!({"type": "tool_search", "execution": "server", "extra": 1}),
            json!({"name": "typeless"}),
        ];
        assert_eq!(
            report_tools(&tools),
            vec![
                json!({"type": "function", "name": "f", "description": null, "parameters": null, "strict": null}),
                json!({"type": "web_search", "search_context_size": null,
                    "user_location": {"city": "X", "country": null, "region": null, "timezone": null}}),
                json!({"type": "tool_search", "execution": "server", "description": null, "parameters": null}),
            ]
        );
    }
}
