//! The open [`TraceType`] protocol and the shared handle [`TypeRef`].
//!
//! Everything generic (FunctionType, dispatch, explanations) talks to types only through this
//! trait, so a new kind can be added outside the crate.

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use crate::serial::form::{SerialError, SerialForm};
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};

/// The type of one traced value: a node of the subtype lattice used to pick a concrete function.
///
/// Implementors are plain values (`Clone + PartialEq + Hash`); implement the three
/// plumbing methods with [`trace_type_common!`](crate::trace_type_common):
///
/// ```
/// use polyfn_core::*;
///
/// #[derive(Clone, PartialEq, Eq, Hash, Debug)]
/// struct Unit;
/// impl std::fmt::Display for Unit {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str("Unit") }
/// }
/// impl TraceType for Unit {
///     fn kind(&self) -> &'static str { "unit" }
///     fn is_subtype_of(&self, other: &dyn TraceType) -> bool { self.dyn_eq(other) }
///     fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
///         others.iter().all(|o| self.dyn_eq(*o)).then(|| TypeRef::new(Unit))
///     }
///     fn placeholders(&self, _: &str, _: &mut PlaceholderContext, _: &mut Vec<PlaceholderSpec>) {}
///     polyfn_core::trace_type_common!();
/// }
/// assert_eq!(TypeRef::new(Unit), TypeRef::new(Unit));
/// ```
pub trait TraceType: CloneTypeRef + Send + Sync + fmt::Debug + fmt::Display + 'static {
    /// Short kind name: "tensor", "list", "map", "literal", ...
    fn kind(&self) -> &'static str;

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool;

    /// Most specific common supertype of self and others, None if none exists.
    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef>;

    /// Append this type's flat graph inputs (placeholders), in flatten order. `path` is the
    /// human path of this value, e.g. "x", "xs[2]", "m['a']".
    fn placeholders(
        &self,
        path: &str,
        ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    );

    /// Why `self` (a call's type) is not a subtype of `traced`; None if it is. Text without the
    /// parameter name, e.g. "TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0".
    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        (!self.is_subtype_of(traced)).then(|| format!("{self} does not match {traced}"))
    }

    /// Where inside `self` the mismatch with `traced` that [`explain_mismatch`](Self::explain_mismatch)
    /// describes is, as a path suffix (`[1]['k']` for element 1's key `k`); empty when it is the
    /// whole value. Default: empty.
    fn mismatch_path(&self, traced: &dyn TraceType) -> String {
        let _ = traced;
        String::new()
    }

    /// Like [`explain_mismatch`](Self::explain_mismatch) against `closest`, but may also
    /// summarize every traced type of this parameter (`all`), as literals do:
    /// "new value 3 (traced: 1, 2)". Default: `explain_mismatch(closest)`.
    fn explain_mismatch_among(
        &self,
        closest: &dyn TraceType,
        all: &[&dyn TraceType],
    ) -> Option<String> {
        let _ = all;
        self.explain_mismatch(closest)
    }

    /// The type to trace with when a call of type `self` hits a parameter declared with
    /// `constraint` (tf.function input_signature semantics). Default: a clone of self.
    fn specialize_for_trace(&self, constraint: &dyn TraceType) -> TypeRef {
        let _ = constraint;
        self.clone_type_ref()
    }

    /// Short human form of a value, used when listing traced values. Default: Display.
    fn short_repr(&self) -> String {
        self.to_string()
    }

    /// This type's serialized form (see [`crate::serial`] for the format and the built-in
    /// kinds): its serial kind, under which its decoder is registered in a
    /// [`TypeRegistry`](crate::serial::TypeRegistry), and its fields. Default: not serializable.
    fn to_json(&self) -> Result<SerialForm, SerialError> {
        Err(SerialError::NotSerializable(format!(
            "{self}: type kind '{}' has no serial form (implement TraceType::to_json)",
            self.kind()
        )))
    }

    fn dyn_eq(&self, other: &dyn TraceType) -> bool;
    fn dyn_hash(&self, state: &mut dyn Hasher);
    fn as_any(&self) -> &dyn Any;
}

/// Clones a concrete trace type into a [`TypeRef`]; implemented for every `Clone` TraceType,
/// so trait default methods can return "a copy of self".
pub trait CloneTypeRef {
    fn clone_type_ref(&self) -> TypeRef;
}

impl<T: TraceType + Clone> CloneTypeRef for T {
    fn clone_type_ref(&self) -> TypeRef {
        TypeRef::new(self.clone())
    }
}

/// Implements `dyn_eq`, `dyn_hash` and `as_any` for a `PartialEq + Hash` trace type.
/// Use inside the `impl TraceType for X` block: `polyfn_core::trace_type_common!();`
#[macro_export]
macro_rules! trace_type_common {
    () => {
        fn dyn_eq(&self, other: &dyn $crate::TraceType) -> bool {
            other
                .as_any()
                .downcast_ref::<Self>()
                .is_some_and(|o| o == self)
        }
        fn dyn_hash(&self, mut state: &mut dyn ::std::hash::Hasher) {
            // The TypeId keeps equal-looking values of different kinds apart.
            ::std::hash::Hash::hash(&::std::any::TypeId::of::<Self>(), &mut state);
            ::std::hash::Hash::hash(self, &mut state);
        }
        fn as_any(&self) -> &dyn ::std::any::Any {
            self
        }
    };
}

/// A shared, immutable trace type. Equality and hashing go through the protocol, so
/// `TypeRef` can key hash maps.
///
/// ```
/// use polyfn_core::{DType, Shape, TensorSpec, TypeRef};
/// let t = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2])));
/// assert_eq!(t.kind(), "tensor");
/// assert_eq!(t.downcast_ref::<TensorSpec>().unwrap().dtype, DType::FLOAT);
/// assert_eq!(t.to_string(), "TensorSpec(FLOAT, [2])");
/// ```
#[derive(Clone)]
pub struct TypeRef(pub Arc<dyn TraceType>);

impl TypeRef {
    pub fn new<T: TraceType>(t: T) -> TypeRef {
        TypeRef(Arc::new(t))
    }

    /// The concrete type, if it is a `T`.
    pub fn downcast_ref<T: TraceType>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }

    pub fn as_dyn(&self) -> &dyn TraceType {
        &*self.0
    }
}

impl Deref for TypeRef {
    type Target = dyn TraceType;
    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl PartialEq for TypeRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.dyn_eq(&*other.0)
    }
}

impl Eq for TypeRef {}

impl Hash for TypeRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.dyn_hash(state)
    }
}

impl fmt::Debug for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

/// Borrow a slice of handles as protocol objects.
pub(crate) fn as_dyns(types: &[TypeRef]) -> Vec<&dyn TraceType> {
    types.iter().map(|t| t.as_dyn()).collect()
}

#[cfg(test)]
#[path = "trace_type_tests.rs"]
mod tests;
