//! The Responses `tools` list as the response object reports it.

use serde_json::Value;

/// Request tools as the response object reports them: functions with `description` and `strict`
/// (null when not set), custom tools by type and name, namespaces with their description (null
/// when not set) and reported functions.
pub fn report_tools(request_tools: &[Value]) -> Vec<Value> {
    request_tools.iter().map(report_tool).collect()
}

fn report_tool(tool: &Value) -> Value {
    let field = |key: &str| tool.get(key).cloned().unwrap_or(Value::Null);
    match tool.get("type").and_then(Value::as_str) {
        Some("function") => {
            let mut reported = serde_json::Map::new();
            reported.insert("type".into(), "function".into());
            reported.insert("name".into(), field("name"));
            reported.insert("description".into(), field("description"));
            reported.insert("parameters".into(), field("parameters"));
            reported.insert("strict".into(), field("strict"));
            Value::Object(reported)
        }
        Some("custom") => serde_json::json!({"type": "custom", "name": field("name")}),
        Some("namespace") => {
            let inner = tool
                .get("tools")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let mut reported = serde_json::Map::new();
            reported.insert("type".into(), "namespace".into());
            reported.insert("name".into(), field("name"));
            reported.insert("description".into(), field("description"));
            reported.insert("tools".into(), Value::Array(report_tools(inner)));
            Value::Object(reported)
        }
        _ => tool.clone(),
    }
}
