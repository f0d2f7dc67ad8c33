//! The Rust side's architecture, checked on the sources of the three crates (run with the other
//! tests, and so by Maven's `verify`):
//!
//! - `polyfn-core` depends on neither `polyfn-tf` nor `polyfn-jni` and forbids unsafe code;
//!   `polyfn-tf` does not depend on `polyfn-jni`;
//! - no import cycle between files of different modules: a cycle may only join a folder module's
//!   own files (`function/mod.rs` and `function/call.rs`: one type over several files), never
//!   files of two modules (`context.rs` and `function/mod.rs`);
//! - `polyfn-jni` calls TensorFlow only through `polyfn-tf`'s functions, never its C API table;
//! - inside a crate, code imports by module path (`crate::shape::Shape`), not through the crate
//!   root's re-exports (`crate::Shape`), which would hide where an import goes.
//!
//! `tools/rust_imports.py` prints the same import graph with each file's floor.

#[path = "architecture/imports.rs"]
mod imports;

use std::fs;
use std::path::{Path, PathBuf};

const CRATES: [&str; 3] = ["core", "tf", "jni"];

fn native() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The lines of a Cargo.toml that are not comments.
fn manifest(krate: &str) -> Vec<String> {
    let path = native().join(krate).join("Cargo.toml");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| l.split('#').next().unwrap_or("").trim().to_owned()).filter(|l| !l.is_empty()).collect()
}

fn depends_on(krate: &str, other: &str) -> Vec<String> {
    manifest(krate).into_iter().filter(|l| l.contains(other) || l.contains(&other.replace('-', "_"))).collect()
}

#[test]
fn core_depends_on_neither_tf_nor_jni_and_tf_not_on_jni() {
    let mut found = depends_on("core", "polyfn-tf");
    found.extend(depends_on("core", "polyfn-jni"));
    assert!(found.is_empty(), "native/core/Cargo.toml must name neither polyfn-tf nor polyfn-jni (the core is pure logic), found: {found:?}");
    let found = depends_on("tf", "polyfn-jni");
    assert!(found.is_empty(), "native/tf/Cargo.toml must not name polyfn-jni (the JNI shims sit above it), found: {found:?}");
}

#[test]
fn core_forbids_unsafe_code() {
    let lib = fs::read_to_string(native().join("core/src/lib.rs")).unwrap();
    let forbids = lib.lines().any(|l| l.trim().replace(' ', "") == "#![forbid(unsafe_code)]");
    assert!(forbids, "native/core/src/lib.rs must keep #![forbid(unsafe_code)]: everything unsafe lives in polyfn-tf and polyfn-jni");
}

/// Whether a cycle only joins one folder module's own files: the files' module paths share a
/// non-empty prefix and go at most one level below it.
fn within_one_folder(cycle: &[String], graph: &imports::Graph) -> bool {
    let paths: Vec<&Vec<String>> = cycle.iter().map(|f| &graph.module_of[f]).collect();
    let mut common = paths[0].clone();
    for p in &paths[1..] {
        let n = common.iter().zip(p.iter()).take_while(|(a, b)| a == b).count();
        common.truncate(n);
    }
    !common.is_empty() && paths.iter().all(|p| p.len() <= common.len() + 1)
}

#[test]
fn no_import_cycle_between_files_of_different_modules() {
    let mut broken = Vec::new();
    for krate in CRATES {
        let graph = imports::scan(&native().join(krate).join("src"));
        assert!(graph.edges.len() > 5, "native/{krate}/src: the scan found only {} files", graph.edges.len());
        for cycle in graph.cycles() {
            if !within_one_folder(&cycle, &graph) {
                broken.push(format!("native/{krate}/src: {}", cycle.join(" ")));
            }
        }
    }
    assert!(broken.is_empty(), "import cycles between files of different modules (see tools/rust_imports.py -v):\n{}", broken.join("\n"));
}

#[test]
fn code_imports_by_module_path_not_through_the_crate_root() {
    let mut found = Vec::new();
    for krate in CRATES {
        let graph = imports::scan(&native().join(krate).join("src"));
        found.extend(graph.via_root.iter().map(|(file, path)| format!("native/{krate}/src/{file}: {path}")));
    }
    assert!(found.is_empty(), "paths through lib.rs's re-exports (write the module path, e.g. crate::shape::Shape):\n{}", found.join("\n"));
}

#[test]
fn jni_calls_tensorflow_only_through_polyfn_tf() {
    let dir = native().join("jni/src");
    let mut found = Vec::new();
    for entry in fs::read_dir(&dir).unwrap().flatten() {
        let text = imports::strip(&fs::read_to_string(entry.path()).unwrap());
        for (n, line) in text.lines().enumerate() {
            if line.contains(".api()") {
                found.push(format!("native/jni/src/{}:{}: {}", entry.file_name().to_string_lossy(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "the JNI shims call TensorFlow's C API table directly (add a function to polyfn-tf):\n{}", found.join("\n"));
}

/// The scan itself: a cycle through a re-export is seen, a `pub use` is no import, test code is
/// left out, and a folder's own cycle is told from a cycle across modules.
#[test]
fn the_scan_sees_cycles_through_re_exports_and_skips_test_code() {
    let dir = std::env::temp_dir().join(format!("polyfn-architecture-{}", std::process::id()));
    let src = dir.join("src");
    fs::create_dir_all(src.join("f")).unwrap();
    let write = |name: &str, text: &str| fs::write(src.join(name), text).unwrap();
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod f;\npub use a::A;\n");
    // b reaches a through the root's re-export, a reaches b by module path: a cycle.
    write("a.rs", "use crate::b::B;\npub struct A(B);\n#[cfg(test)]\nmod tests { use crate::c::C; }\n");
    write("b.rs", "use crate::{A, c};\npub struct B;\nfn f(_: &A) { c::g() }\n");
    // c's re-export of a is no import; its test module's import of b is left out.
    write("c.rs", "pub use crate::a::A as Alias;\npub fn g() {}\n// crate::b::B in a comment\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n");
    write("f/mod.rs", "mod x;\npub struct F;\nfn h() { x::y() }\n");
    write("f/x.rs", "use super::F;\npub fn y() {}\n");
    let graph = imports::scan(&src);
    fs::remove_dir_all(&dir).ok();
    assert_eq!(graph.via_root, vec![("b.rs".to_owned(), "crate::A".to_owned())]);
    assert_eq!(graph.edges["c.rs"].len(), 0, "{:?}", graph.edges["c.rs"]);
    let cycles = graph.cycles();
    assert_eq!(cycles, vec![vec!["a.rs".to_owned(), "b.rs".to_owned()], vec!["f/mod.rs".to_owned(), "f/x.rs".to_owned()]]);
    assert!(!within_one_folder(&cycles[0], &graph));
    assert!(within_one_folder(&cycles[1], &graph));
}

#[test]
fn use_trees_expand_to_paths() {
    let paths = imports::expand_use_tree("crate::{a::{B, c::D as E}, self, f::*}");
    let got: Vec<(String, String)> = paths.into_iter().map(|(p, a)| (p.join("::"), a)).collect();
    let want = [("crate::a::B", "B"), ("crate::a::c::D", "E"), ("crate", "crate"), ("crate::f::*", "*")];
    assert_eq!(got, want.map(|(p, a)| (p.to_owned(), a.to_owned())));
}

