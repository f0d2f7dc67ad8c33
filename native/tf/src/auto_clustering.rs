//! TensorFlow's XLA auto-clustering pass left out of a function's instantiation where it can do
//! nothing.
//!
//! TensorFlow runs `MarkForCompilationPass` on every function it instantiates, after Grappler.
//! It only makes XLA clusters when auto-clustering is on (`TF_XLA_FLAGS`, or a `ConfigProto`'s
//! global JIT level, which on CPUs also needs `cpu_global_jit`), for operations that ask for it
//! (`_XlaCompile`, from `experimental_jit_scope`) or on XLA devices. On a context with only CPUs
//! and no such flag it clusters nothing, yet it scans every node against XLA's whole op registry:
//! about a tenth of a small function's first call. The pass returns at once when a node carries
//! `_XlaAlreadyClustered` (the mark it leaves on the clusters it made, so that it never runs on
//! them twice), and nothing else reads that attribute; so Polyfn marks the function's arguments,
//! whose `_Arg` nodes Grappler keeps. A placeholder's attributes whose names start with `_` become
//! its argument's (`TF_GraphToFunction`), so a trace marks its placeholders; a restored definition
//! is marked, or unmarked, for the context it is registered in; and definitions leave Polyfn
//! unmarked (a SavedModel Python loads, a trace cache entry read on another machine, a function
//! copied into a graph of the user's).
//!
//! A restored definition whose functions ask for clusters (a node's `_XlaCompile` or `_XlaScope`,
//! from `experimental_jit_scope`, or a called function's `_XlaCompile`) is left unmarked, and so
//! is everything traced in the process after it, since a trace may call it: the pass then runs as
//! before. An operation of a Polyfn body given `_XlaCompile` by hand is not looked for (Polyfn's
//! way to XLA is `withJitCompile`).

use crate::call_options::global_jit_flags;
use crate::context::EagerContext;
use crate::function_def_proto::{nested, single, with_arg_attr, without_arg_attr};
use crate::runtime::Runtime;
use std::borrow::Cow;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

/// The attribute that makes the pass return at once.
pub const ALREADY_CLUSTERED: &CStr = c"_XlaAlreadyClustered";

/// `AttrValue { b: true }`.
const TRUE: &[u8] = b"\x28\x01";

/// Node attributes that ask the pass for a cluster: a definition holding one keeps the pass.
const ASKS_FOR_CLUSTERS: [&[u8]; 2] = [b"_XlaCompile", b"_XlaScope"];

/// Whether a definition restored in this process asked for clusters: nothing is marked after it.
static ASKED: AtomicBool = AtomicBool::new(false);

/// Whether the pass can make no cluster for a function run in `ctx`: the context has no device
/// but CPUs, `TF_XLA_FLAGS` cannot turn auto-clustering on, and no definition restored so far
/// asked for clusters (a `ConfigProto` turning on `cpu_global_jit` for TensorFlow Java's context
/// is not seen; see docs/performance.md).
pub fn pass_does_nothing(rt: &Runtime, ctx: EagerContext) -> bool {
    !global_jit_flags() && !ASKED.load(Ordering::Relaxed) && ctx.only_cpus(rt)
}

/// `def` marked (`mark`) for the pass to return at once, or with any mark removed; borrowed when
/// unchanged. `library` holds the functions it may call. A definition with no argument cannot be
/// marked; one whose functions ask for a cluster is left unmarked, and so is every later one.
pub(crate) fn marked<'a>(def: &'a [u8], library: &[&[u8]], mark: bool) -> Result<Cow<'a, [u8]>, String> {
    let name = ALREADY_CLUSTERED.to_str().map_err(|e| e.to_string())?;
    let mut asks = false;
    if mark {
        for d in std::iter::once(def).chain(library.iter().copied()) {
            asks |= asks_for_clusters(d)?;
        }
        if asks {
            ASKED.store(true, Ordering::Relaxed);
        }
    }
    if mark && !asks && has_arguments(def)? {
        let unmarked = without_arg_attr(def, name)?;
        return Ok(Cow::Owned(with_arg_attr(unmarked.as_deref().unwrap_or(def), 0, name, TRUE)?));
    }
    Ok(without_arg_attr(def, name)?.map_or(Cow::Borrowed(def), Cow::Owned))
}

/// Whether the signature (field 1) has an input argument (field 2).
fn has_arguments(def: &[u8]) -> Result<bool, String> {
    Ok(!nested(def, &[1, 2])?.is_empty())
}

/// Whether a node (field 3) sets an attribute (field 5, map entries keyed by field 1) that asks
/// the pass for a cluster, or the function itself has `_XlaCompile` (its own attributes, field
/// 5), which the pass reads for the nodes calling it.
fn asks_for_clusters(def: &[u8]) -> Result<bool, String> {
    for entry in nested(def, &[3, 5])? {
        if single(entry, 1)?.is_some_and(|k| ASKS_FOR_CLUSTERS.contains(&k)) {
            return Ok(true);
        }
    }
    for entry in nested(def, &[5])? {
        if single(entry, 1)? == Some(ASKS_FOR_CLUSTERS[0]) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3) | 2, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    /// A map entry `key` → `AttrValue { b: true }`.
    fn attr(key: &str) -> Vec<u8> {
        let mut e = field(1, key.as_bytes());
        e.extend(field(2, TRUE));
        e
    }

    /// A node's `_XlaCompile` or `_XlaScope`, and the function's own `_XlaCompile`, ask for
    /// clusters; other attributes do not.
    #[test]
    fn finds_what_asks_for_clusters() {
        let node = |a: &str| {
            let mut n = field(1, b"n");
            n.extend(field(2, b"NoOp"));
            n.extend(field(5, &attr(a)));
            field(3, &n)
        };
        assert!(asks_for_clusters(&node("_XlaCompile")).unwrap());
        assert!(asks_for_clusters(&node("_XlaScope")).unwrap());
        assert!(!asks_for_clusters(&node("_class")).unwrap());
        assert!(asks_for_clusters(&field(5, &attr("_XlaCompile"))).unwrap());
        assert!(!asks_for_clusters(&field(5, &attr("_XlaMustCompile"))).unwrap());
        assert!(asks_for_clusters(&[0xff]).is_err());
    }
}
