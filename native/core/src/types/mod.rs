//! The built-in trace type kinds, one module per kind (each with its constraint form).

mod children;
mod composite;
mod list;
mod literal;
mod map;
mod record;
mod tensor;
mod variable;

pub use composite::CompositeType;
pub use list::{ListConstraint, ListType};
pub use literal::{Literal, LiteralConstraint};
pub use map::{MapConstraint, MapType};
pub use record::{NestConstraint, RecordType};
pub use tensor::{TensorConstraint, TensorSpec};
pub use variable::{VariableConstraint, VariableSpec};

use crate::trace_type::{TraceType, TypeRef};

/// The join of a concrete type with others among which is a constraint of kind `C`: the
/// constraint knows how to join with concrete types, so it does the join, whatever the order the
/// types came in (a join must not depend on it).
fn join_by_constraint<C: TraceType + 'static>(first: &dyn TraceType, others: &[&dyn TraceType]) -> Option<TypeRef> {
    let at = others.iter().position(|o| o.as_any().downcast_ref::<C>().is_some())?;
    let rest: Vec<&dyn TraceType> =
        std::iter::once(first).chain(others.iter().enumerate().filter(|(i, _)| *i != at).map(|(_, o)| *o)).collect();
    others[at].most_specific_common_supertype(&rest)
}
