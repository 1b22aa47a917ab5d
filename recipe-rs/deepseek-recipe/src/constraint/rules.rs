//! The rules and terminals of one grammar, written in llguidance's Lark dialect.

use std::collections::HashSet;

/// The rules of one grammar, rendered in the order they were added.
#[derive(Debug)]
pub(super) struct Rules {
    lines: Vec<String>,
    names: HashSet<String>,
    counter: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Self {
            lines: vec!["%llguidance {}".to_owned()],
            names: HashSet::new(),
            counter: 0,
        }
    }
}

impl Rules {
    /// A name not used before: `stem` with the next number.
    pub(super) fn fresh(&mut self, stem: &str) -> String {
        self.counter += 1;
        format!("{stem}_{}", self.counter)
    }

    /// Adds `name: expansion`; returns the name.
    pub(super) fn add(&mut self, name: impl Into<String>, expansion: &str) -> String {
        let name = name.into();
        self.lines.push(format!("{name}: {expansion}"));
        self.names.insert(name.clone());
        name
    }

    /// Adds the terminal `name` unless it exists; returns the name.
    pub(super) fn terminal(&mut self, name: impl Into<String>, definition: &str) -> String {
        let name = name.into();
        if self.names.contains(&name) {
            name
        } else {
            self.add(name, definition)
        }
    }

    /// The grammar text, with the `LT` (`<`) terminal free text is split at.
    pub(super) fn render(mut self) -> String {
        self.terminal(LT, "\"<\"");
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}

/// The terminal of a lone `<`: free text is `TEXT? (LT TEXT?)*`, so the text after each `<` is
/// checked for the markup the output parser would react to.
pub(super) const LT: &str = "LT";
