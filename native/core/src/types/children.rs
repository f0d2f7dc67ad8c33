//! The walks over a container's children that lists and maps share. A list's elements are keyed
//! by index, a map's values by key; subtyping, joins, placeholders and mismatch messages visit
//! them the same way, so each walk is written here once and the containers only say which
//! children meet which.

use crate::trace_type::as_dyns;
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::trace_type::{TraceType, TypeRef};

/// Where a child sits in its container.
#[derive(Clone, Copy, Debug)]
pub(super) enum Key<'a> {
    /// A list element.
    Index(usize),
    /// A map value.
    Name(&'a str),
}

impl Key<'_> {
    /// The child's path below its container: `[0]`, `['k']`.
    fn path(self) -> String {
        match self {
            Key::Index(i) => format!("[{i}]"),
            Key::Name(k) => format!("['{k}']"),
        }
    }

    /// The child in a message: `element 0`, `key 'k'`.
    fn describe(self) -> String {
        match self {
            Key::Index(i) => format!("element {i}"),
            Key::Name(k) => format!("key '{k}'"),
        }
    }
}

/// Each child beside what it must fit: the same child of another container, or a constraint's
/// bound on every child.
pub(super) type Pairs<'a> = Vec<(Key<'a>, &'a TypeRef, &'a dyn TraceType)>;

/// Whether every child fits what it is paired with.
pub(super) fn all_fit(pairs: &Pairs<'_>) -> bool {
    pairs.iter().all(|(_, a, b)| a.is_subtype_of(*b))
}

/// The child-by-child join of `own` with the children of `others`, each listed in the same order
/// (same length, same keys): `None` when a pair has no join.
pub(super) fn join_each(own: &[&TypeRef], others: &[Vec<&TypeRef>]) -> Option<Vec<TypeRef>> {
    own.iter()
        .enumerate()
        .map(|(i, a)| {
            let rest: Vec<&dyn TraceType> = others.iter().map(|o| o[i].as_dyn()).collect();
            a.most_specific_common_supertype(&rest)
        })
        .collect()
}

/// The placeholders of every child, each under its path below `path`.
pub(super) fn placeholders<'a>(
    children: impl Iterator<Item = (Key<'a>, &'a TypeRef)>,
    path: &str,
    ctx: &mut PlaceholderContext,
    out: &mut Vec<PlaceholderSpec>,
) {
    for (k, child) in children {
        child.placeholders(&format!("{path}{}", k.path()), ctx, out);
    }
}

/// Why the first child that has a reason not to fit does not: `element 1: ...`.
pub(super) fn explain_first(pairs: &Pairs<'_>) -> Option<String> {
    pairs
        .iter()
        .find_map(|(k, a, b)| a.explain_mismatch(*b).map(|why| format!("{}: {why}", k.describe())))
}

/// The path from the container to the first child that does not fit, down to its leaf.
pub(super) fn first_mismatch_path(pairs: &Pairs<'_>) -> String {
    pairs
        .iter()
        .find(|(_, a, b)| !a.is_subtype_of(*b))
        .map(|(k, a, b)| format!("{}{}", k.path(), a.mismatch_path(*b)))
        .unwrap_or_default()
}

/// The bound a container constraint's join puts on its children: the join of every bound and
/// child type in play, or none (anything) when one side bounds nothing.
pub(super) fn join_bounds(types: &[TypeRef], unbounded: bool) -> Option<TypeRef> {
    if unbounded || types.is_empty() {
        return None;
    }
    types[0].most_specific_common_supertype(&as_dyns(&types[1..]))
}
