//! Names Polyfn gives TensorFlow: registered function names and function argument names.
//!
//! A registered function name must be unique in the process, not only in this copy of the
//! library: two class loaders can each load their own copy of Polyfn's native library over the
//! one TensorFlow runtime, and both register functions in the same eager context. Each copy has
//! its own counter, so names also carry a random token drawn once per copy.

use crate::context::EagerContext;
use crate::function::EagerFunction;
use crate::runtime::Runtime;
use std::ffi::CString;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The longest part of a display name kept in a function name (names stay readable in
/// TensorFlow's logs and errors; uniqueness comes from the token and counter).
const MAX_DISPLAY_CHARS: usize = 40;

/// Counts the function names this copy of the library handed out.
static NEXT: AtomicU64 = AtomicU64::new(1);

/// A token that differs between copies of this library in one process (and between processes).
fn instance_token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| {
        // RandomState is seeded from the OS's randomness, separately in each copy of the
        // standard library; the address of a static differs between copies loaded at once; the
        // pid and clock separate processes and runs.
        let mut h = std::hash::RandomState::new().build_hasher();
        (&NEXT as *const AtomicU64 as usize).hash(&mut h);
        std::process::id().hash(&mut h);
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0).hash(&mut h);
        std::time::Instant::now().hash(&mut h);
        format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
    })
}

/// The display name reduced to what every TensorFlow name accepts: lowercase ASCII letters,
/// digits and single underscores, at most 40 characters; `fn` if nothing is left.
pub fn sanitize(display_name: &str) -> String {
    let mut out = String::new();
    for c in display_name.chars() {
        if out.len() >= MAX_DISPLAY_CHARS {
            break;
        }
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("fn");
    }
    out
}

/// A new function name for `display_name`, never returned before by any copy of this library:
/// `polyfn_<sanitized display name>_<instance token>_<counter>`. It starts with a letter and
/// holds only `[a-z0-9_]`, valid for TensorFlow function and node names whatever the display
/// name (which stays on the Java side for messages).
pub fn function_name(display_name: &str) -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("polyfn_{}_{}_{n}", sanitize(display_name), instance_token())
}

/// A [`function_name`] not yet registered in `ctx` (names someone else registered are skipped).
pub fn unused_function_name(rt: &Runtime, ctx: EagerContext, display_name: &str) -> String {
    loop {
        let name = function_name(display_name);
        if !EagerFunction::is_registered(rt, ctx, &name) {
            return name;
        }
    }
}

/// TensorFlow argument names for `n` function outputs (`output_0`, ...): argument names must
/// match `[a-z][a-z0-9_]*`, so user-facing output names stay on the Java side.
pub fn output_arg_names(n: usize) -> Vec<CString> {
    (0..n).map(|i| CString::new(format!("output_{i}")).expect("no NUL in a formatted name")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    }

    #[test]
    fn any_display_name_gives_a_valid_name() {
        for display in ["ü-名前", "_private", "-dash", "", "___", "Add Two", "a/b.c", &"x".repeat(500)] {
            let name = function_name(display);
            assert!(valid(&name), "{display:?} -> {name:?}");
            assert!(name.len() < 100, "{name}");
        }
        assert_eq!(sanitize("Add Two!"), "add_two");
        assert_eq!(sanitize("ü-名前"), "fn");
        assert_eq!(sanitize("_private"), "private");
        assert_eq!(sanitize("-dash--x"), "dash_x");
    }

    #[test]
    fn names_never_repeat_and_carry_this_copys_token() {
        let a = function_name("f");
        let b = function_name("f");
        assert_ne!(a, b);
        let token = instance_token();
        assert_eq!(token.len(), 12);
        assert!(a.contains(token) && b.contains(token));
    }

    #[test]
    fn output_arg_names_are_numbered() {
        let names = output_arg_names(3);
        assert_eq!(names.iter().map(|n| n.to_str().unwrap()).collect::<Vec<_>>(), ["output_0", "output_1", "output_2"]);
    }
}
