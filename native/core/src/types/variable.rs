//! Resource variables: [`VariableSpec`] (a variable's dtype, shape and alias index) and the
//! declared [`VariableConstraint`].
//!
//! A variable is passed by handle, never copied: its graph input is one `DT_RESOURCE` scalar.
//! The alias index says which variable of the call this is (the first distinct variable seen is
//! 0, the next 1, ...), so the same variable passed or captured twice maps to one placeholder
//! (as TensorFlow's PlaceholderContext does) while calls with other variables of the same dtype, shape
//! and aliasing pattern reuse the trace.

use std::fmt;

use crate::dtype::{DType, DTypeSet};
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::shape::Shape;
use crate::trace_type::{TraceType, TypeRef};
use crate::serial::values;
use crate::serial::form::{SerialError, SerialForm};
use crate::serial::registry::Fields;
use serde_json::json;

/// A variable in a call.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct VariableSpec {
    pub dtype: DType,
    pub shape: Shape,
    /// Which distinct variable of the call this is.
    pub alias: u64,
}

impl VariableSpec {
    pub fn new(dtype: DType, shape: Shape, alias: u64) -> Self {
        VariableSpec { dtype, shape, alias }
    }
}

/// What a declared variable parameter or captured variable accepts: variables of these dtypes.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct VariableConstraint {
    pub dtypes: DTypeSet,
}

impl VariableConstraint {
    pub fn new(dtypes: DTypeSet) -> Self {
        VariableConstraint { dtypes }
    }
}

impl fmt::Display for VariableSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VariableSpec({}, {}, alias {})", self.dtype, self.shape, self.alias)
    }
}

impl fmt::Display for VariableConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.dtypes.single() {
            Some(d) => write!(f, "VariableSpec({d})"),
            None => write!(f, "VariableSpec({})", self.dtypes),
        }
    }
}

impl TraceType for VariableSpec {
    fn kind(&self) -> &'static str {
        "variable"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if let Some(c) = other.as_any().downcast_ref::<VariableConstraint>() {
            return c.dtypes.contains(self.dtype);
        }
        self.dyn_eq(other)
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        // A variable's type is exact: which variable of the call it is cannot generalize. Joined
        // with a constraint, the constraint does the join (it must not depend on the order).
        if others.iter().any(|o| o.as_any().downcast_ref::<VariableConstraint>().is_some()) {
            return super::join_by_constraint::<VariableConstraint>(self, others);
        }
        others.iter().all(|o| self.dyn_eq(*o)).then(|| TypeRef::new(self.clone()))
    }

    fn placeholders(&self, path: &str, ctx: &mut PlaceholderContext, out: &mut Vec<PlaceholderSpec>) {
        if ctx.alias_index(self.alias).is_none() {
            ctx.record_alias(self.alias, out.len());
            out.push(PlaceholderSpec {
                path: path.into(),
                dtype: DType::RESOURCE,
                shape: Shape::scalar(),
                alias: Some(self.alias),
            });
        }
    }


    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            return None;
        }
        Some(match traced.as_any().downcast_ref::<VariableSpec>() {
            Some(t) if t.dtype != self.dtype => format!("{self} does not match {t}: dtype {} vs {}", self.dtype, t.dtype),
            Some(t) if t.shape != self.shape => format!("{self} does not match {t}: shape {} vs {}", self.shape, t.shape),
            Some(t) => format!("{self} does not match {t}: another variable aliasing"),
            None => format!("{self} does not match {traced}"),
        })
    }

    fn to_json(&self) -> Result<SerialForm, SerialError> {
        Ok(SerialForm::new("variable_spec")
            .field("dtype", values::dtype_json(self.dtype))
            .field("shape", values::shape_json(&self.shape))
            .field("alias", json!(self.alias)))
    }

    crate::trace_type_common!();
}

impl TraceType for VariableConstraint {
    fn kind(&self) -> &'static str {
        "variable"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        match other.as_any().downcast_ref::<VariableConstraint>() {
            Some(c) => self.dtypes.is_subset_of(&c.dtypes),
            None => false,
        }
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let mut dtypes = self.dtypes.clone();
        for o in others {
            if let Some(c) = o.as_any().downcast_ref::<VariableConstraint>() {
                dtypes = dtypes.union(&c.dtypes);
            } else if let Some(v) = o.as_any().downcast_ref::<VariableSpec>() {
                dtypes = dtypes.union(&DTypeSet::of(&[v.dtype]));
            } else {
                return None;
            }
        }
        Some(TypeRef::new(VariableConstraint::new(dtypes)))
    }

    fn placeholders(&self, _path: &str, _ctx: &mut PlaceholderContext, _out: &mut Vec<PlaceholderSpec>) {}


    fn to_json(&self) -> Result<SerialForm, SerialError> {
        Ok(SerialForm::new("variable_constraint").field("dtypes", values::dtypes_json(&self.dtypes)))
    }

    crate::trace_type_common!();
}

impl VariableSpec {
    /// Decoder of the `variable_spec` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        let (dtype, shape) = (f.take_dtype("dtype")?, f.take_shape("shape")?);
        Ok(TypeRef::new(VariableSpec::new(dtype, shape, f.take("alias")?)))
    }
}

impl VariableConstraint {
    /// Decoder of the `variable_constraint` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        Ok(TypeRef::new(VariableConstraint::new(f.take_dtypes("dtypes")?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FunctionType;

    fn v(alias: u64) -> TypeRef {
        TypeRef::new(VariableSpec::new(DType::FLOAT, Shape::of(&[2]), alias))
    }

    #[test]
    fn a_variable_fits_a_constraint_of_its_dtype() {
        let c = VariableConstraint::new(DTypeSet::of(&[DType::FLOAT]));
        assert!(v(0).is_subtype_of(&c));
        assert!(!TypeRef::new(VariableSpec::new(DType::INT32, Shape::scalar(), 0)).is_subtype_of(&c));
        assert_eq!(c.to_string(), "VariableSpec(FLOAT)");
    }

    #[test]
    fn the_same_alias_is_one_placeholder_and_another_alias_is_another() {
        let placeholders = |f: &FunctionType| {
            let (mut ctx, mut out) = (crate::PlaceholderContext::new(), Vec::new());
            for (name, t) in &f.captures {
                t.placeholders(name, &mut ctx, &mut out);
            }
            out.len()
        };
        let same = FunctionType::new(vec![]).with_captures(vec![("a".into(), v(0)), ("b".into(), v(0))]);
        assert_eq!(placeholders(&same), 1);
        let two = FunctionType::new(vec![]).with_captures(vec![("a".into(), v(0)), ("b".into(), v(1))]);
        assert_eq!(placeholders(&two), 2);
        assert!(!two.is_subtype_of(&same) && !same.is_subtype_of(&two));
    }

    #[test]
    fn explanations_name_what_differs() {
        let why = v(1).explain_mismatch(&*v(0)).unwrap();
        assert!(why.contains("aliasing"), "{why}");
    }

    #[test]
    fn a_join_with_a_constraint_among_others_takes_every_other_in() {
        let var = |d: DType| TypeRef::new(VariableSpec::new(d, Shape::scalar(), 0));
        let ints = VariableConstraint::new(DTypeSet::of(&[DType::INT32]));
        let joined = var(DType::FLOAT).most_specific_common_supertype(&[&*var(DType::DOUBLE), &ints, &*var(DType::INT64)]);
        let all = VariableConstraint::new(DTypeSet::of(&[DType::FLOAT, DType::DOUBLE, DType::INT32, DType::INT64]));
        assert_eq!(joined, Some(TypeRef::new(all)));
    }

    #[test]
    fn a_variable_mismatch_says_whether_dtype_shape_or_aliasing_differs() {
        let var = |d: DType, dims: &[i64], alias: u64| VariableSpec::new(d, Shape::of(dims), alias);
        let why = |a: VariableSpec, b: VariableSpec| a.explain_mismatch(&b).unwrap();
        assert!(why(var(DType::INT32, &[2], 0), var(DType::FLOAT, &[2], 0)).ends_with(": dtype INT32 vs FLOAT"));
        assert!(why(var(DType::FLOAT, &[3], 0), var(DType::FLOAT, &[2], 0)).ends_with(": shape [3] vs [2]"));
        let floats = VariableConstraint::new(DTypeSet::of(&[DType::FLOAT]));
        assert!(floats.is_subtype_of(&VariableConstraint::new(DTypeSet::any())));
        assert!(!VariableConstraint::new(DTypeSet::any()).is_subtype_of(&floats));
    }
}
