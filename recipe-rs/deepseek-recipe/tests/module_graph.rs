//! The core's module graph has no cycle: neither between its top-level modules (the stages of
//! the data flow: `protocol`, `convert`, `converted`, `encoding`, `tokenizer`, `stream`, …) nor
//! between its source files.
//!
//! Every file under `src/` is parsed (test modules left out); a file depends on another when it
//! names an item defined there: through a `use` declaration, or a path starting with `crate`,
//! `super`, `self` or a module the file declares. Re-exports are followed to the defining file,
//! and a module's re-exports of its own children (its public facade) are not dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::visit::Visit;

#[path = "support/source_files.rs"]
mod source_files;

use source_files::{rust_files, source_root};

/// A module path from the crate root (`["stream", "parser"]`).
type ModulePath = Vec<String>;

/// One parsed source file.
struct SourceFile {
    /// Path relative to `src/`, for messages.
    name: String,
    /// The module the file defines.
    module: ModulePath,
    /// Every path the file names, absolute, with whether it comes from a `pub use` re-export.
    names: Vec<(ModulePath, bool)>,
    /// Names this file re-exports (`pub use`), mapped to their absolute targets.
    reexports: BTreeMap<String, ModulePath>,
}

/// The module a file defines: `lib.rs` is the root, `x/mod.rs` is `x`, `x/y.rs` is `x::y`.
fn module_of(relative: &Path) -> ModulePath {
    let mut parts: ModulePath = relative
        .with_extension("")
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// Collects the paths one file names, resolving relative paths against the module they are
/// written in (inline modules included).
struct Collector {
    /// The module the visited code is in.
    module: ModulePath,
    /// Child modules declared in the visited module (a path may start with one).
    children: Vec<BTreeSet<String>>,
    names: Vec<(ModulePath, bool)>,
    reexports: BTreeMap<String, ModulePath>,
    /// Depth of inline modules (re-exports count only at the file's own level).
    inline_depth: usize,
}

impl Collector {
    /// The absolute form of `segments` written in the current module, if it is a crate path.
    fn absolute(&self, segments: &[String]) -> Option<ModulePath> {
        let first = segments.first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.module.clone(),
            "super" => {
                let mut base = self.module.clone();
                let mut rest = segments;
                while rest.first().is_some_and(|segment| segment == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return Some(base);
            }
            name if self
                .children
                .last()
                .is_some_and(|names| names.contains(name)) =>
            {
                let mut base = self.module.clone();
                base.push(name.to_owned());
                base.extend(segments[1..].iter().cloned());
                return Some(base);
            }
            _ => return None,
        };
        base.extend(segments[1..].iter().cloned());
        Some(base)
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, public: bool) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree, public);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                let ident = name.ident.to_string();
                self.add_use(prefix, &ident, &ident, public);
            }
            syn::UseTree::Rename(rename) => {
                let (ident, alias) = (rename.ident.to_string(), rename.rename.to_string());
                self.add_use(prefix, &ident, &alias, public);
            }
            syn::UseTree::Glob(_) => {
                if let Some(target) = self.absolute(prefix) {
                    self.names.push((target, public));
                }
            }
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree, public);
                }
            }
        }
    }

    fn add_use(&mut self, prefix: &[String], ident: &str, alias: &str, public: bool) {
        let mut segments = prefix.to_vec();
        if ident != "self" {
            segments.push(ident.to_owned());
        }
        let Some(target) = self.absolute(&segments) else {
            return;
        };
        if public && self.inline_depth == 0 {
            let name = if ident == "self" { prefix.last() } else { None };
            self.reexports.insert(
                name.map_or(alias, String::as_str).to_owned(),
                target.clone(),
            );
        }
        self.names.push((target, public));
    }

    fn items(&mut self, items: &[syn::Item]) {
        let children = items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Mod(module) => Some(module.ident.to_string()),
                _ => None,
            })
            .collect();
        self.children.push(children);
        for item in items {
            match item {
                syn::Item::Mod(module) if is_test_only(&module.attrs) => {}
                syn::Item::Mod(module) => {
                    if let Some((_, inner)) = &module.content {
                        self.module.push(module.ident.to_string());
                        self.inline_depth += 1;
                        self.items(inner);
                        self.inline_depth -= 1;
                        self.module.pop();
                    }
                }
                syn::Item::Use(declaration) => {
                    let public = !matches!(declaration.vis, syn::Visibility::Inherited);
                    self.use_tree(&mut Vec::new(), &declaration.tree, public);
                }
                item if is_test_only(item_attrs(item)) => {}
                item => self.visit_item(item),
            }
        }
        self.children.pop();
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Fn(item) => &item.attrs,
        syn::Item::Impl(item) => &item.attrs,
        syn::Item::Const(item) => &item.attrs,
        syn::Item::Static(item) => &item.attrs,
        syn::Item::Struct(item) => &item.attrs,
        syn::Item::Enum(item) => &item.attrs,
        syn::Item::Trait(item) => &item.attrs,
        syn::Item::Type(item) => &item.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        if segments.len() > 1 {
            if let Some(target) = self.absolute(&segments) {
                self.names.push((target, false));
            }
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // Inline modules are walked by `Collector::items`, with their own base path.
    }
}

fn parse_sources() -> Vec<SourceFile> {
    let root = source_root();
    rust_files(&root)
        .iter()
        .map(|path| {
            let relative = path.strip_prefix(&root).expect("under src/");
            let text = std::fs::read_to_string(path).expect("a readable source file");
            let file = syn::parse_file(&text)
                .unwrap_or_else(|err| panic!("{}: {err}", relative.display()));
            let module = module_of(relative);
            let mut collector = Collector {
                module: module.clone(),
                children: Vec::new(),
                names: Vec::new(),
                reexports: BTreeMap::new(),
                inline_depth: 0,
            };
            collector.items(&file.items);
            SourceFile {
                name: relative.display().to_string(),
                module,
                names: collector.names,
                reexports: collector.reexports,
            }
        })
        .collect()
}

/// Where the items of the crate are defined: file index by module path.
struct Resolver<'a> {
    files: &'a [SourceFile],
    by_module: BTreeMap<&'a [String], usize>,
}

impl<'a> Resolver<'a> {
    fn new(files: &'a [SourceFile]) -> Self {
        let by_module = files
            .iter()
            .enumerate()
            .map(|(index, file)| (file.module.as_slice(), index))
            .collect();
        Self { files, by_module }
    }

    /// The file that defines what `path` names: the deepest file module on the path, with a
    /// re-export of the next name followed to its own target.
    fn resolve(&self, path: &[String], hops: usize) -> Option<usize> {
        let (depth, file) = (0..=path.len())
            .rev()
            .find_map(|depth| Some((depth, *self.by_module.get(&path[..depth])?)))?;
        let next = path.get(depth);
        match next.and_then(|name| self.files[file].reexports.get(name)) {
            Some(target) if hops < 8 => {
                let mut target = target.clone();
                target.extend(path[depth + 1..].iter().cloned());
                self.resolve(&target, hops + 1).or(Some(file))
            }
            _ => Some(file),
        }
    }
}

/// File dependency edges: `edges[a]` holds every file `a` depends on.
fn file_edges(files: &[SourceFile]) -> Vec<BTreeSet<usize>> {
    let resolver = Resolver::new(files);
    files
        .iter()
        .enumerate()
        .map(|(index, file)| {
            file.names
                .iter()
                .filter_map(|(path, public)| {
                    let target = resolver.resolve(path, 0)?;
                    let facade = *public && files[target].module.starts_with(&file.module);
                    (target != index && !facade).then_some(target)
                })
                .collect()
        })
        .collect()
}

/// The cycles of a graph: its strongly connected components with more than one node.
fn cycles(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, node: usize) {
            self.index[node] = Some(self.next);
            self.low[node] = self.next;
            self.next += 1;
            self.stack.push(node);
            self.on_stack[node] = true;
            for &next in &self.edges[node] {
                match self.index[next] {
                    None => {
                        self.visit(next);
                        self.low[node] = self.low[node].min(self.low[next]);
                    }
                    Some(index) if self.on_stack[next] => {
                        self.low[node] = self.low[node].min(index);
                    }
                    Some(_) => {}
                }
            }
            if Some(self.low[node]) == self.index[node] {
                let mut component = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    self.components.push(component);
                }
            }
        }
    }
    let count = edges.len();
    let mut tarjan = Tarjan {
        edges,
        index: vec![None; count],
        low: vec![0; count],
        stack: Vec::new(),
        on_stack: vec![false; count],
        next: 0,
        components: Vec::new(),
    };
    for node in 0..count {
        if tarjan.index[node].is_none() {
            tarjan.visit(node);
        }
    }
    tarjan.components
}

/// The top-level module of a file (`lib.rs`, the crate's facade, has none).
fn top_level(file: &SourceFile) -> Option<&str> {
    file.module.first().map(String::as_str)
}

/// Dependencies between top-level modules, by name.
fn module_edges(files: &[SourceFile]) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut modules: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (index, targets) in file_edges(files).iter().enumerate() {
        let Some(from) = top_level(&files[index]) else {
            continue;
        };
        let entry = modules.entry(from).or_default();
        for &target in targets {
            match top_level(&files[target]) {
                Some(to) if to != from => {
                    entry.insert(to);
                }
                _ => {}
            }
        }
    }
    modules
}

#[test]
fn source_files_depend_on_each_other_without_cycles() {
    let files = parse_sources();
    let edges = file_edges(&files);
    let found: Vec<Vec<&str>> = cycles(&edges)
        .into_iter()
        .map(|component| {
            component
                .into_iter()
                .map(|index| files[index].name.as_str())
                .collect()
        })
        .collect();
    assert!(
        found.is_empty(),
        "files that depend on each other: {found:?}"
    );
}

#[test]
fn top_level_modules_depend_on_each_other_without_cycles() {
    let files = parse_sources();
    let modules = module_edges(&files);
    let names: Vec<&str> = modules.keys().copied().collect();
    let edges: Vec<BTreeSet<usize>> = names
        .iter()
        .map(|name| {
            modules[name]
                .iter()
                .filter_map(|target| names.iter().position(|other| other == target))
                .collect()
        })
        .collect();
    let found: Vec<Vec<&str>> = cycles(&edges)
        .into_iter()
        .map(|component| component.into_iter().map(|index| names[index]).collect())
        .collect();
    assert!(
        found.is_empty(),
        "modules that depend on each other: {found:?}\nthe module graph: {modules:#?}"
    );
}

#[test]
fn conversion_and_output_parsing_meet_only_in_the_hand_off_types() {
    let files = parse_sources();
    let modules = module_edges(&files);
    for (from, to) in [("convert", "stream"), ("stream", "convert")] {
        assert!(
            !modules
                .get(from)
                .is_some_and(|targets| targets.contains(to)),
            "{from} depends on {to}: {:?}",
            modules.get(from)
        );
    }
    for stage in ["convert", "stream"] {
        assert!(
            modules[stage].contains("converted"),
            "{stage} reads the hand-offs"
        );
    }
}

#[test]
fn the_graph_sees_the_dependencies_it_checks() {
    let files = parse_sources();
    let modules = module_edges(&files);
    // Known edges of the data flow, one per kind of reference (a `use`, a qualified path).
    assert!(modules["convert"].contains("protocol"));
    assert!(modules["encoding"].contains("tokenizer"));
    assert!(modules["stream"].contains("protocol"));
    let edges = file_edges(&files);
    let index = |name: &str| files.iter().position(|file| file.name == name).unwrap();
    assert!(edges[index("stream/processor.rs")].contains(&index("stream/generator.rs")));
    assert!(cycles(&[BTreeSet::from([1]), BTreeSet::from([0])]) == vec![vec![0, 1]]);
}
