//! The built-in trace type kinds, one module per kind (each with its constraint form).

mod list;
mod literal;
mod map;
mod tensor;
mod variable;

pub use list::{ListConstraint, ListType};
pub use literal::{Literal, LiteralConstraint};
pub use map::{MapConstraint, MapType};
pub use tensor::{TensorConstraint, TensorSpec};
pub use variable::{VariableConstraint, VariableSpec};
