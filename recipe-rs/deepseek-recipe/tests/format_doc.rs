//! The examples of `docs/format.md` render exactly as written.
//!
//! An example is a fenced block whose info string is `json conversation v4` (or `v41`), followed
//! by a `text prompt` block (the exact prompt, without the block's final newline) and optionally
//! a `text specials` block (the special tokens in order, separated by whitespace).

use std::path::PathBuf;

use deepseek_recipe::conversation::Conversation;
use deepseek_recipe::Encoding;

struct Block {
    info: String,
    body: String,
}

fn fenced_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut current: Option<Block> = None;
    for line in markdown.split('\n') {
        match current.take() {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    current = Some(Block {
                        info: info.trim().to_owned(),
                        body: String::new(),
                    });
                }
            }
            Some(mut block) => {
                if line == "```" {
                    block.body.pop();
                    blocks.push(block);
                } else {
                    block.body.push_str(line);
                    block.body.push('\n');
                    current = Some(block);
                }
            }
        }
    }
    blocks
}

#[test]
fn format_doc_examples_render_as_written() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/format.md");
    let markdown = std::fs::read_to_string(&path).expect("docs/format.md is readable");
    let blocks = fenced_blocks(&markdown);
    let mut checked = 0;
    for (index, block) in blocks.iter().enumerate() {
        let encoding = match block.info.as_str() {
            "json conversation v4" => Encoding::v4(),
            "json conversation v41" => Encoding::v41(),
            _ => continue,
        };
        let conversation: Conversation = serde_json::from_str(&block.body)
            .unwrap_or_else(|error| panic!("example {index}: bad conversation: {error}"));
        let rendered = encoding.render(&conversation);
        let prompt = blocks
            .get(index + 1)
            .filter(|next| next.info == "text prompt");
        let prompt = prompt.unwrap_or_else(|| panic!("example {index}: no `text prompt` block"));
        assert_eq!(rendered.prompt, prompt.body, "example {index}: prompt");
        if let Some(specials) = blocks
            .get(index + 2)
            .filter(|next| next.info == "text specials")
        {
            let expected: Vec<&str> = specials.body.split_whitespace().collect();
            let ours: Vec<&str> = rendered.special_texts().collect();
            assert_eq!(ours, expected, "example {index}: special tokens");
        }
        checked += 1;
    }
    assert!(
        checked >= 8,
        "only {checked} examples found in docs/format.md"
    );
}
