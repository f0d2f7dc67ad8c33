//! What the dispatch table indexes a signature by, so a miss does not compare the call with
//! every cached signature.
//!
//! A call's type is concrete (tensor specs, literals, variables, lists and maps of them). Two
//! facts about the built-in kinds make most cached signatures impossible to match:
//! - a cached signature made only of fully defined tensor specs, literals and variables (a
//!   *minimal* one) has no subtype but itself among concrete types, so it can serve a call only
//!   as an exact hit, found by hashing;
//! - a concrete call can only be a subtype of a signature with the same *structure*: parameter
//!   list, dtype and rank of every tensor, length of every list, keys of every map, and the
//!   literals and variables themselves. Signatures whose structure is fixed that way are
//!   bucketed by a hash of it.
//!
//! Anything else (constraints, unknown rank, an unconstrained parameter, a kind defined outside
//! this crate) is *open*: it may serve calls of many structures and is compared with every miss.
//! A call that is not concrete is compared with every signature, as before the index.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::function_type::FunctionType;
use crate::shape::Shape;
use crate::trace_type::TraceType;
use crate::types::{ListType, Literal, MapType, TensorSpec, VariableSpec};

/// How a signature (or a call) sits in the index.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Class {
    /// Built only of the concrete built-in kinds (what a call's type is).
    pub concrete: bool,
    /// Concrete with every tensor shape fully defined and every parameter typed: only an equal
    /// concrete type is a subtype of it.
    pub minimal: bool,
    /// The structure hash; `None` when the structure is open (a signature that must be compared
    /// with every miss).
    pub key: Option<u64>,
}

/// Classifies `t` (a cached signature or a call).
pub(super) fn classify(t: &FunctionType) -> Class {
    let mut w = Walk { h: DefaultHasher::new(), concrete: true, minimal: true, fixed: true };
    w.h.write_usize(t.parameters.len());
    for p in &t.parameters {
        p.name.hash(&mut w.h);
        p.kind.hash(&mut w.h);
        p.optional.hash(&mut w.h);
        match &p.type_constraint {
            Some(ty) => w.value(&**ty),
            None => {
                // Unconstrained is the top for this parameter: never minimal, never bucketed.
                w.h.write_u8(0);
                w.minimal = false;
                w.fixed = false;
            }
        }
    }
    w.h.write_usize(t.captures.len());
    for (name, ty) in &t.captures {
        name.hash(&mut w.h);
        w.value(&**ty);
    }
    Class {
        concrete: w.concrete,
        minimal: w.concrete && w.minimal,
        key: (w.concrete && w.fixed).then(|| w.h.finish()),
    }
}

struct Walk {
    h: DefaultHasher,
    concrete: bool,
    minimal: bool,
    /// Whether every part's structure is fixed (what a bucket key needs).
    fixed: bool,
}

impl Walk {
    fn value(&mut self, t: &dyn TraceType) {
        let any = t.as_any();
        if let Some(s) = any.downcast_ref::<TensorSpec>() {
            self.h.write_u8(1);
            self.h.write_i32(s.dtype.0);
            self.shape(&s.shape);
        } else if let Some(l) = any.downcast_ref::<Literal>() {
            // A literal is a subtype only of itself (or of a class constraint, which is open).
            self.h.write_u8(2);
            l.dyn_hash(&mut self.h);
        } else if let Some(v) = any.downcast_ref::<VariableSpec>() {
            self.h.write_u8(3);
            v.dyn_hash(&mut self.h);
        } else if let Some(l) = any.downcast_ref::<ListType>() {
            self.h.write_u8(4);
            self.h.write_usize(l.elements.len());
            for e in &l.elements {
                self.value(&**e);
            }
        } else if let Some(m) = any.downcast_ref::<MapType>() {
            self.h.write_u8(5);
            self.h.write_usize(m.entries.len());
            for (k, v) in &m.entries {
                k.hash(&mut self.h);
                self.value(&**v);
            }
        } else {
            // A constraint, or a kind this index does not know: it may admit other structures.
            self.h.write_u8(6);
            self.concrete = false;
            self.minimal = false;
            self.fixed = false;
        }
    }

    fn shape(&mut self, s: &Shape) {
        match s {
            Shape::Unknown => {
                // Any rank is a subtype: the structure is open.
                self.h.write_u8(0);
                self.minimal = false;
                self.fixed = false;
            }
            Shape::Known(dims) => {
                self.h.write_u8(1);
                self.h.write_usize(dims.len());
                self.minimal &= dims.iter().all(Option::is_some);
            }
        }
    }
}
