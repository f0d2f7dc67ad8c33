//! Flat graph inputs ([`PlaceholderSpec`]) and the alias bookkeeping used while emitting them.

use std::collections::HashMap;

use crate::dtype::DType;
use crate::shape::Shape;

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
}
