//! Flat graph inputs ([`PlaceholderSpec`]) and the alias bookkeeping used while emitting them.

use std::collections::HashMap;

use crate::dtype::DType;
use crate::shape::Shape;
use crate::wire::{DIM_UNKNOWN, RANK_UNKNOWN};

/// One flat graph input of a traced function: the placeholder Java creates before tracing.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct PlaceholderSpec {
    /// Human path of the value, e.g. `x`, `xs[2]`, `m['a']`.
    pub path: String,
    pub dtype: DType,
    pub shape: Shape,
    /// Identity of an aliased value (e.g. a variable) that must map to a single placeholder.
    pub alias: Option<u64>,
}

/// State shared across one [`crate::FunctionType::placeholders`] walk (after TF's
/// `PlaceholderContext`): values with the same alias id get a single placeholder.
///
/// ```
/// use polyfn_core::PlaceholderContext;
/// let mut ctx = PlaceholderContext::new();
/// assert_eq!(ctx.alias_index(7), None);
/// ctx.record_alias(7, 0);
/// assert_eq!(ctx.alias_index(7), Some(0));
/// ```
#[derive(Clone, Debug, Default)]
pub struct PlaceholderContext {
    aliases: HashMap<u64, usize>,
    /// The static shapes of the composites walked since the last take, in walk order.
    composite_shapes: Vec<Shape>,
}

impl PlaceholderContext {
    pub fn new() -> Self {
        Self::default()
    }

    /// The flat index of the placeholder already emitted for `alias_id`, if any.
    pub fn alias_index(&self, alias_id: u64) -> Option<usize> {
        self.aliases.get(&alias_id).copied()
    }

    /// Remember that `alias_id` was emitted at `flat_index`; the first record wins.
    pub fn record_alias(&mut self, alias_id: u64, flat_index: usize) {
        self.aliases.entry(alias_id).or_insert(flat_index);
    }

    /// Remember the static shape of a composite whose placeholders are being emitted: Java hands
    /// the traced (maybe generalized) shape, not the call's, to the composite's view.
    pub fn record_composite_shape(&mut self, shape: Shape) {
        self.composite_shapes.push(shape);
    }

    /// The composite shapes recorded since the last take, in walk order (flatten order).
    pub fn take_composite_shapes(&mut self) -> Vec<Shape> {
        std::mem::take(&mut self.composite_shapes)
    }
}

/// Placeholder specs as Java reads them (see [`crate::wire`] for the layout).
///
/// ```
/// use polyfn_core::placeholder::{encode_placeholder_specs, PlaceholderSpec};
/// use polyfn_core::{DType, Shape};
/// let spec = |shape| PlaceholderSpec { path: "x".into(), dtype: DType::FLOAT, shape, alias: None };
/// assert_eq!(
///     encode_placeholder_specs(&[spec(Shape::of(&[2, -1])), spec(Shape::Unknown)]),
///     [2, 1, 2, 2, -1, 1, -1]
/// );
/// ```
pub fn encode_placeholder_specs(specs: &[PlaceholderSpec]) -> Vec<i64> {
    let mut flat = vec![specs.len() as i64];
    for spec in specs {
        flat.push(spec.dtype.0 as i64);
        match &spec.shape {
            Shape::Unknown => flat.push(RANK_UNKNOWN),
            Shape::Known(dims) => {
                flat.push(dims.len() as i64);
                flat.extend(dims.iter().map(|d| d.unwrap_or(DIM_UNKNOWN)));
            }
        }
    }
    flat
}

/// Appends the static shapes of a parameter's composites (in flatten order) after its placeholder
/// specs, as Java reads them: `[count, (rank, d0, ..., d(rank-1))...]`, rank [`RANK_UNKNOWN`]
/// with no dims for an unknown shape.
///
/// ```
/// use polyfn_core::placeholder::encode_composite_shapes;
/// use polyfn_core::Shape;
/// let mut flat = vec![0];
/// encode_composite_shapes(&mut flat, &[Shape::of(&[-1, 4]), Shape::Unknown]);
/// assert_eq!(flat, [0, 2, 2, -1, 4, -1]);
/// ```
pub fn encode_composite_shapes(flat: &mut Vec<i64>, shapes: &[Shape]) {
    flat.push(shapes.len() as i64);
    for shape in shapes {
        match shape {
            Shape::Unknown => flat.push(RANK_UNKNOWN),
            Shape::Known(dims) => {
                flat.push(dims.len() as i64);
                flat.extend(dims.iter().map(|d| d.unwrap_or(DIM_UNKNOWN)));
            }
        }
    }
}

/// The placeholder encoded at `at` of `flat` (as [`encode_placeholder_specs`] writes them): its
/// dtype code and dims (`None`: unknown rank); `None` when `flat` holds no whole entry there.
///
/// ```
/// use polyfn_core::placeholder::spec_at;
/// let flat = [2, 1, 2, 2, -1, 1, -1];
/// assert_eq!(spec_at(&flat, 1), Some((1, Some(&[2, -1][..]))));
/// assert_eq!(spec_at(&flat, 5), Some((1, None)));
/// assert_eq!(spec_at(&flat, 6), None);
/// ```
pub fn spec_at(flat: &[i64], at: i64) -> Option<(i32, Option<&[i64]>)> {
    let at = usize::try_from(at).ok()?;
    let dtype = i32::try_from(*flat.get(at)?).ok()?;
    let rank = *flat.get(at.checked_add(1)?)?;
    if rank == RANK_UNKNOWN {
        return Some((dtype, None));
    }
    let start = at + 2;
    let end = start.checked_add(usize::try_from(rank).ok()?)?;
    Some((dtype, Some(flat.get(start..end)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_specs_encode_scalars_and_empty_lists() {
        let spec = |shape| PlaceholderSpec { path: "x".into(), dtype: DType(3), shape, alias: None };
        assert_eq!(encode_placeholder_specs(&[]), [0]);
        assert_eq!(encode_placeholder_specs(&[spec(Shape::scalar())]), [1, 3, 0]);
        assert_eq!(encode_placeholder_specs(&[spec(Shape::of(&[4, -1])), spec(Shape::Unknown)]), [2, 3, 2, 4, -1, 3, -1]);
    }
}
