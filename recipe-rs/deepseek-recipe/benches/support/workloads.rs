//! Deterministic Chat Completions request bodies for the request benchmarks.
//!
//! `bench/request_workloads.py` builds the same bodies byte for byte (same recipe, keys sorted,
//! compact JSON); keep the two in step.

use serde_json::{json, Value};

/// The model every workload asks for.
const MODEL: &str = "DeepSeek-V4-Pro";
/// Tools offered by the agent workload.
const TOOL_COUNT: usize = 40;
/// Assistant tool-call turns of the agent workload.
const TURN_COUNT: usize = 60;
/// Rows of each tool result (tunes the agent prompt to ~100K tokens).
const RESULT_ROWS: usize = 44;

const VERBS: [&str; 5] = ["search", "fetch", "update", "delete", "summarize"];
const NOUNS: [&str; 8] = [
    "issues", "files", "users", "orders", "events", "metrics", "tickets", "docs",
];
const MODES: [&str; 3] = ["fast", "exact", "fuzzy"];

/// System prompt + one user turn.
pub fn short_chat() -> String {
    body(
        json!([
            {"content": "You are a helpful assistant.", "role": "system"},
            {"content": "What is the capital of France? Answer in one sentence.", "role": "user"},
        ]),
        None,
    )
}

/// An agent conversation: 40 tools, 60 tool-call turns with reasoning, results, follow-ups.
pub fn agent_conversation() -> String {
    let mut messages = vec![json!({
        "content": "You are a coding agent. Use the tools to inspect and change the project.",
        "role": "system",
    })];
    messages.push(json!({"content": "Audit the project and fix what is broken.", "role": "user"}));
    for turn in 0..TURN_COUNT {
        let name = tool_name(turn * 7 % TOOL_COUNT);
        let arguments = json!({
            "filters": {"tags": ["bench", format!("turn-{turn}")]},
            "limit": turn + 1,
            "mode": MODES[turn % 3],
            "query": format!("step {turn}: what does {name} report?"),
        });
        messages.push(json!({
            "content": "",
            "reasoning_content": format!(
                "Turn {turn}. The last result narrows it down; next I call {name} with mode {} \
                 to check the remaining candidates before touching any file.",
                MODES[turn % 3]
            ),
            "role": "assistant",
            "tool_calls": [{
                "function": {"arguments": arguments.to_string(), "name": name},
                "id": format!("call_{turn}"),
                "type": "function",
            }],
        }));
        messages.push(json!({
            "content": tool_result(turn),
            "role": "tool",
            "tool_call_id": format!("call_{turn}"),
        }));
        if turn % 5 == 4 {
            messages.push(json!({
                "content": format!("Good. After step {turn}, keep going but explain what changed."),
                "role": "user",
            }));
        }
    }
    let tools = (0..TOOL_COUNT).map(tool).collect();
    body(Value::Array(messages), Some(tools))
}

fn body(messages: Value, tools: Option<Vec<Value>>) -> String {
    let mut request = json!({
        "messages": messages,
        "model": MODEL,
        "thinking": {"type": "enabled"},
    });
    if let (Some(tools), Value::Object(fields)) = (tools, &mut request) {
        fields.insert("tools".to_owned(), Value::Array(tools));
    }
    request.to_string()
}

fn tool_name(index: usize) -> String {
    format!("{}_{}", VERBS[index % 5], NOUNS[index / 5])
}

/// A function tool with nested objects, arrays and enums.
fn tool(index: usize) -> Value {
    let (verb, noun) = (VERBS[index % 5], NOUNS[index / 5]);
    json!({
        "function": {
            "description": format!("{verb} {noun} records of the project (tool {index})."),
            "name": tool_name(index),
            "parameters": {
                "properties": {
                    "filters": {
                        "properties": {
                            "since": {"description": "ISO date", "type": "string"},
                            "tags": {"items": {"type": "string"}, "type": "array"},
                        },
                        "required": ["tags"],
                        "type": "object",
                    },
                    "limit": {"maximum": 100 + index, "minimum": 1, "type": "integer"},
                    "mode": {"enum": MODES, "type": "string"},
                    "query": {"description": format!("What to {verb} in {noun}."), "type": "string"},
                    "targets": {
                        "items": {
                            "properties": {
                                "id": {"type": "integer"},
                                "label": {"type": "string"},
                            },
                            "required": ["id"],
                            "type": "object",
                        },
                        "type": "array",
                    },
                },
                "required": ["query", "mode"],
                "type": "object",
            },
        },
        "type": "function",
    })
}

/// A tool result: rows of JSON-ish text, code, CJK prose or emoji-laden text, by turn.
fn tool_result(turn: usize) -> String {
    (0..RESULT_ROWS).map(|row| result_row(turn, row)).collect()
}

fn result_row(turn: usize, row: usize) -> String {
    match turn % 4 {
        0 => format!(
            "{{\"id\": {row}, \"name\": \"item-{turn}-{row}\", \"score\": 0.{row}5, \
             \"tags\": [\"alpha\", \"beta\"], \"ok\": true}}\n"
        ),
        1 => format!(
            "fn check_{turn}_{row}(items: &[u32]) -> u32 {{\n    items.iter().filter(|x| **x > {row}).sum()\n}}\n"
        ),
        2 => format!("第{turn}步第{row}项：检查配置文件，发现三个警告。東京のサーバーは正常です。\n"),
        _ => format!("✅ step {turn}.{row} passed 🎉, ⚠️ 2 warnings, ❌ 0 errors — naïve café 👍🏽\n"),
    }
}
