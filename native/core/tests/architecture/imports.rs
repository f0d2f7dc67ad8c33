//! The import graph of one crate's sources, file by file (the rules of `tools/rust_imports.py`,
//! which prints the same graph with its floors).
//!
//! A file is a module (`foo.rs`, `foo/mod.rs`, a `#[path]` file). An import is a `crate::`,
//! `super::`, `self::` or child-module path, in a `use` or in code, resolved to the file that
//! defines the item: a path through a re-export leads to the re-exported item's file, so a
//! re-export cannot hide a cycle. A `pub use` is an alias, not an import. Test code (`#[cfg(test)]`
//! modules, inline or in files) is left out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

/// One module: its file and what its code names.
struct Module {
    file: String,
    is_test: bool,
    children: Vec<String>,
    /// Names brought in by `use` (or exported macros, at the root) → their absolute path.
    aliases: HashMap<String, Vec<String>>,
    /// Absolute paths the code uses, with the text as written.
    uses: Vec<(Vec<String>, String)>,
    /// At the root: the exported macros (named from the root, but no re-export).
    macros: Vec<String>,
}

/// A crate's files and the imports between them.
pub struct Graph {
    /// Files (relative to `src/`) → the files they import.
    pub edges: BTreeMap<String, BTreeSet<String>>,
    /// Paths into the crate root's re-exports (`crate::Shape` for `crate::shape::Shape`): file, text.
    pub via_root: Vec<(String, String)>,
    /// Each file's module path (`function::call`).
    pub module_of: BTreeMap<String, Vec<String>>,
}

/// Comments and string literals blanked, so that paths in them are not read (`"x.rs"` kept, for
/// `#[path]`).
pub fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let (mut out, mut i) = (String::with_capacity(text.len()), 0);
    while i < b.len() {
        if text[i..].starts_with("//") {
            i += text[i..].find('\n').unwrap_or(text.len() - i);
        } else if text[i..].starts_with("/*") {
            i += text[i..].find("*/").map_or(text.len() - i, |e| e + 2);
        } else if b[i] == b'"' || (b[i] == b'r' && token_start(text, i) && matches!(b.get(i + 1), Some(b'"' | b'#'))) {
            let raw = b[i] == b'r';
            let hashes = if raw { text[i + 1..].bytes().take_while(|&c| c == b'#').count() } else { 0 };
            let start = if raw { i + 2 + hashes } else { i + 1 };
            let close = format!("\"{}", "#".repeat(hashes));
            let mut j = start;
            while j < b.len() && !text[j..].starts_with(&close) {
                if !raw && b[j] == b'\\' {
                    j += 1;
                }
                j += text[j..].chars().next().map_or(1, char::len_utf8);
            }
            let j = j.min(b.len());
            let s = &text[start.min(j)..j];
            let keep = s.ends_with(".rs") && s.chars().all(|c| c.is_alphanumeric() || "_./-".contains(c));
            out.push_str(if keep { &text[i..(j + close.len()).min(b.len())] } else { "\"\"" });
            i = j + close.len();
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            out.push_str("' '");
            i += 3;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            let end = text[i + 2..].find('\'').map_or(b.len(), |e| i + 3 + e);
            out.push_str("' '");
            i = end;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn ident_end(s: &str, from: usize) -> usize {
    from + s[from..].find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len() - from)
}

fn block_end(s: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// Whether `s[at..]` starts a token (the previous character is no part of a path).
fn token_start(s: &str, at: usize) -> bool {
    at == 0 || !matches!(s.as_bytes()[at - 1], b'_' | b':' | b'$' | b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9')
}

/// Whether the item whose text starts after `before` is declared `pub` or `pub(...)`.
fn is_public(before: &str) -> bool {
    let line = before.rsplit('\n').next().unwrap_or("").trim();
    line == "pub" || (line.starts_with("pub(") && line.ends_with(')'))
}

/// `mod` declarations `(name, #[path], is_test)` and the code with inline test modules removed.
fn scan_mods(text: &str) -> (Vec<(String, Option<String>, bool)>, String) {
    let (mut children, mut code, mut pos, mut from) = (Vec::new(), String::new(), 0, 0);
    while let Some(found) = text[from..].find("mod ") {
        let at = from + found;
        from = at + 4;
        if !token_start(text, at) {
            continue;
        }
        let name_end = ident_end(text, from);
        let rest = text[name_end..].trim_start();
        if name_end == from || !(rest.starts_with(';') || rest.starts_with('{')) {
            continue;
        }
        // the attributes before the declaration (skipping a visibility)
        let head = text[..at].trim_end();
        let head = head.strip_suffix("pub(crate)").or_else(|| head.strip_suffix("pub")).unwrap_or(head).trim_end();
        let attrs: String = head.rsplit('\n').take_while(|l| l.trim_start().starts_with("#[")).collect();
        let is_test = attrs.replace(' ', "").contains("cfg(test)");
        let name = text[from..name_end].to_owned();
        if rest.starts_with(';') {
            let path = attrs.split("path = \"").nth(1).and_then(|p| p.split('"').next()).map(str::to_owned);
            children.push((name, path, is_test));
        } else if is_test {
            code.push_str(&text[pos..at]);
            pos = block_end(text, text[name_end..].find('{').unwrap() + name_end);
            from = pos;
        }
    }
    code.push_str(&text[pos..]);
    (children, code)
}

/// `a::{b, c::{d as e}, f::*}` → `([a,b], b)`, `([a,c,d], e)`, `([a,f,*], *)`.
pub fn expand_use_tree(tree: &str) -> Vec<(Vec<String>, String)> {
    fn walk(prefix: &[String], s: &str, out: &mut Vec<(Vec<String>, String)>) {
        let (mut depth, mut start) = (0, 0);
        let mut parts = Vec::new();
        for (i, c) in s.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        for p in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(brace) = p.find('{') {
                let mut head = prefix.to_vec();
                head.extend(p[..brace].split("::").map(str::trim).filter(|x| !x.is_empty()).map(str::to_owned));
                walk(&head, &p[brace + 1..p.rfind('}').unwrap_or(p.len())], out);
                continue;
            }
            let (path, alias) = match p.split_once(" as ") {
                Some((path, alias)) => (path, Some(alias.trim())),
                None => (p, None),
            };
            let mut segs = prefix.to_vec();
            segs.extend(path.split("::").map(str::trim).filter(|x| !x.is_empty() && *x != "self").map(str::to_owned));
            if let Some(last) = segs.last().cloned() {
                out.push((segs, alias.unwrap_or(&last).to_owned()));
            }
        }
    }
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    walk(&[], &tree, &mut out);
    out
}

/// Reads the crate whose sources are in `src` (from `lib.rs`, following `mod` declarations).
pub fn scan(src: &Path) -> Graph {
    let mut modules: BTreeMap<Vec<String>, Module> = BTreeMap::new();
    let mut codes: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut todo = vec![(Vec::new(), PathBuf::from("lib.rs"), false)];
    while let Some((path, file, is_test)) = todo.pop() {
        let text = fs::read_to_string(src.join(&file)).unwrap_or_else(|e| panic!("{}: {e}", src.join(&file).display()));
        let (children, code) = scan_mods(&strip(&text));
        let base = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let own_dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "mod.rs") => base.clone(),
            _ => base.join(file.file_stem().unwrap()),
        };
        for (name, path_attr, child_test) in &children {
            let child = match path_attr {
                Some(p) => base.join(p),
                None if src.join(&own_dir).join(format!("{name}.rs")).exists() => own_dir.join(format!("{name}.rs")),
                None => own_dir.join(name).join("mod.rs"),
            };
            let mut child_path = path.clone();
            child_path.push(name.clone());
            todo.push((child_path, child, is_test || *child_test));
        }
        let file = file.to_string_lossy().replace('\\', "/");
        let children = children.into_iter().map(|c| c.0).collect();
        modules.insert(path.clone(), Module { file, is_test, children, aliases: HashMap::new(), uses: Vec::new(), macros: Vec::new() });
        codes.insert(path, code);
    }
    read_paths(&mut modules, &codes);
    build(&modules)
}

/// A path as written in module `at`, made absolute; `None` if it leaves the crate.
fn absolute(modules: &BTreeMap<Vec<String>, Module>, at: &[String], segs: &[String]) -> Option<Vec<String>> {
    match segs.first()?.as_str() {
        "crate" => Some(segs[1..].to_vec()),
        "self" | "super" => {
            let mut base = at.to_vec();
            let mut rest = segs;
            while let Some(first) = rest.first().filter(|s| *s == "self" || *s == "super") {
                if first == "super" {
                    base.pop();
                }
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            Some(base)
        }
        first if modules[at].children.iter().any(|c| c == first) => Some(at.iter().chain(segs).cloned().collect()),
        _ => None,
    }
}

fn read_paths(modules: &mut BTreeMap<Vec<String>, Module>, codes: &BTreeMap<Vec<String>, String>) {
    for (at, code) in codes {
        let (mut aliases, mut uses, mut rest) = (HashMap::new(), Vec::new(), String::new());
        let mut pos = 0;
        for (start, _) in code.match_indices("use ") {
            if start < pos || !token_start(code, start) {
                continue;
            }
            let Some(end) = code[start..].find(';').map(|e| start + e) else { continue };
            let public = is_public(&code[..start]);
            rest.push_str(&code[pos..start]);
            pos = end + 1;
            for (segs, alias) in expand_use_tree(&code[start + 4..end]) {
                let Some(abs) = absolute(modules, at, &segs) else { continue };
                if alias != "*" {
                    aliases.insert(alias, abs.clone());
                }
                if !public {
                    let abs = if segs.last().is_some_and(|s| s == "*") { abs[..abs.len() - 1].to_vec() } else { abs };
                    uses.push((abs, segs.join("::")));
                }
            }
        }
        rest.push_str(&code[pos..]);
        let heads: Vec<String> = ["crate", "super", "self"].iter().map(|s| s.to_string()).chain(modules[at].children.clone()).collect();
        for head in &heads {
            for (start, _) in rest.match_indices(&format!("{head}::")) {
                if !token_start(&rest, start) {
                    continue;
                }
                let mut end = start + head.len();
                while rest[end..].starts_with("::") && ident_end(&rest, end + 2) > end + 2 {
                    end = ident_end(&rest, end + 2);
                }
                let segs: Vec<String> = rest[start..end].split("::").map(str::to_owned).collect();
                if let Some(abs) = absolute(modules, at, &segs) {
                    uses.push((abs, rest[start..end].to_owned()));
                }
            }
        }
        let macros = if at.is_empty() { exported_macros(codes) } else { Vec::new() };
        let m = modules.get_mut(at).unwrap();
        m.macros = macros.iter().map(|(name, _)| name.clone()).collect();
        aliases.extend(macros);
        m.aliases = aliases;
        m.uses = uses;
    }
}

/// `#[macro_export]` macros, named from the crate root: name → the path of their module.
fn exported_macros(codes: &BTreeMap<Vec<String>, String>) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (at, code) in codes {
        for (i, _) in code.match_indices("#[macro_export]") {
            if let Some(m) = code[i..].find("macro_rules!") {
                let from = i + m + "macro_rules!".len();
                let from = from + code[from..].len() - code[from..].trim_start().len();
                let name = code[from..ident_end(code, from)].to_owned();
                out.push((name.clone(), at.iter().cloned().chain([name]).collect()));
            }
        }
    }
    out
}

/// The module defining what an absolute path names, and whether the root's re-exports were crossed.
fn target(modules: &BTreeMap<Vec<String>, Module>, segs: &[String], depth: usize) -> (Vec<String>, bool) {
    let mut i = 0;
    while i < segs.len() && modules.contains_key(&segs[..=i]) {
        i += 1;
    }
    let at = segs[..i].to_vec();
    match segs.get(i).and_then(|name| modules[&at].aliases.get(name)).filter(|_| depth < 16) {
        Some(alias) => {
            let next: Vec<String> = alias.iter().chain(&segs[i + 1..]).cloned().collect();
            let (found, crossed) = target(modules, &next, depth + 1);
            let macro_name = modules[&at].macros.contains(&segs[i]);
            (found, crossed || (at.is_empty() && !macro_name))
        }
        None => (at, false),
    }
}

fn build(modules: &BTreeMap<Vec<String>, Module>) -> Graph {
    let mut graph = Graph { edges: BTreeMap::new(), via_root: Vec::new(), module_of: BTreeMap::new() };
    for (at, m) in modules.iter().filter(|(_, m)| !m.is_test) {
        graph.module_of.insert(m.file.clone(), at.clone());
        let out = graph.edges.entry(m.file.clone()).or_default();
        for (abs, text) in &m.uses {
            let (found, via_root) = target(modules, abs, 0);
            let to = &modules[&found];
            if to.is_test || to.file == m.file {
                continue;
            }
            out.insert(to.file.clone());
            if via_root {
                graph.via_root.push((m.file.clone(), text.clone()));
            }
        }
    }
    graph
}

impl Graph {
    /// The strongly connected components of more than one file (Tarjan's algorithm).
    pub fn cycles(&self) -> Vec<Vec<String>> {
        struct State<'g> {
            g: &'g Graph,
            index: HashMap<&'g str, usize>,
            low: HashMap<&'g str, usize>,
            stack: Vec<&'g str>,
            out: Vec<Vec<String>>,
        }
        fn visit<'g>(s: &mut State<'g>, v: &'g str) {
            let i = s.index.len();
            s.index.insert(v, i);
            s.low.insert(v, i);
            s.stack.push(v);
            for w in s.g.edges.get(v).into_iter().flatten() {
                if !s.index.contains_key(w.as_str()) {
                    visit(s, w);
                    let lw = s.low[w.as_str()];
                    s.low.entry(v).and_modify(|l| *l = (*l).min(lw));
                } else if s.stack.contains(&w.as_str()) {
                    let iw = s.index[w.as_str()];
                    s.low.entry(v).and_modify(|l| *l = (*l).min(iw));
                }
            }
            if s.low[v] == s.index[v] {
                let at = s.stack.iter().rposition(|x| *x == v).unwrap();
                let comp: Vec<String> = s.stack.drain(at..).map(str::to_owned).collect();
                if comp.len() > 1 {
                    s.out.push(comp);
                }
            }
        }
        let mut s = State { g: self, index: HashMap::new(), low: HashMap::new(), stack: Vec::new(), out: Vec::new() };
        for v in self.edges.keys() {
            if !s.index.contains_key(v.as_str()) {
                visit(&mut s, v);
            }
        }
        s.out.iter_mut().for_each(|c| c.sort());
        s.out.sort();
        s.out
    }
}
