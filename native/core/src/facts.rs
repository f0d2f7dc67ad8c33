//! Decoding the flat `i64` "facts" buffer Java writes for each call into a [`FunctionType`].
//! The layout is the wire contract's (see [`crate::wire`]).

use std::collections::BTreeMap;

use crate::binding::BindError;
use crate::dtype::DType;
use crate::function_type::FunctionType;
use crate::intern::{LiteralTable, StringTable};
use crate::parameter::{ParamKind, Parameter};
use crate::shape::Shape;
use crate::trace_type::TypeRef;
use crate::types::{CompositeType, ListType, Literal, MapType, RecordType, TensorSpec, VariableSpec};
use crate::wire::{MAX_RANK, RANK_UNKNOWN, TAG_COMPOSITE, TAG_LIST, TAG_LITERAL, TAG_MAP, TAG_RECORD, TAG_TENSOR, TAG_VARIABLE};

/// Nesting limit (see [`crate::wire::NEST_MAX_DEPTH`]).
const MAX_DEPTH: usize = crate::wire::NEST_MAX_DEPTH;

/// A cursor over the facts with bounds-checked reads.
struct Reader<'a> {
    facts: &'a [i64],
    pos: &'a mut usize,
}

impl Reader<'_> {
    fn next(&mut self, what: &str) -> Result<i64, BindError> {
        let v = self.facts.get(*self.pos).copied().ok_or_else(|| {
            BindError::BadFacts(format!(
                "truncated: expected {what} at position {}",
                *self.pos
            ))
        })?;
        *self.pos += 1;
        Ok(v)
    }

    /// A length that must also fit in the remaining facts (each item takes >= `min_item` slots).
    fn len(&mut self, what: &str, min_item: usize) -> Result<usize, BindError> {
        let at = *self.pos;
        let n = self.next(what)?;
        let remaining = self.facts.len() - *self.pos;
        usize::try_from(n)
            .ok()
            .filter(|&n| n.saturating_mul(min_item) <= remaining)
            .ok_or_else(|| BindError::BadFacts(format!("bad {what} {n} at position {at}")))
    }

    /// `rank, dims...` of a known shape, checked against TensorFlow's limits: facts also
    /// come from user TensorSpecs, and TensorFlow aborts the process on a shape beyond them.
    fn shape(&mut self) -> Result<Shape, BindError> {
        let invalid = |reason| BindError::InvalidShape { path: String::new(), reason };
        let rank = self.len("rank", 1)?;
        if rank > MAX_RANK {
            return Err(invalid(crate::shape::rank_error(rank)));
        }
        let mut dims = [0i64; MAX_RANK];
        for d in &mut dims[..rank] {
            *d = self.next("a dim")?;
        }
        let shape = Shape::from_wire_dims(&dims[..rank]).map_err(invalid)?;
        shape.validate().map_err(invalid)?;
        Ok(shape)
    }

    /// A shape, or [`Shape::Unknown`] for a rank of [`RANK_UNKNOWN`] (then no dims follow).
    fn shape_or_unknown(&mut self) -> Result<Shape, BindError> {
        if self.facts.get(*self.pos) == Some(&RANK_UNKNOWN) {
            *self.pos += 1;
            return Ok(Shape::Unknown);
        }
        self.shape()
    }

    fn value(
        &mut self,
        strings: &StringTable,
        literals: &LiteralTable,
        depth: usize,
    ) -> Result<TypeRef, BindError> {
        if depth > MAX_DEPTH {
            return Err(BindError::BadFacts(format!(
                "nesting deeper than {MAX_DEPTH}"
            )));
        }
        let at = *self.pos;
        match self.next("a tag")? {
            TAG_TENSOR => {
                let dtype = i32::try_from(self.next("dtype")?).map_err(|_| {
                    BindError::BadFacts(format!("dtype out of range at position {}", at + 1))
                })?;
                let shape = self.shape_or_unknown()?;
                Ok(TypeRef::new(TensorSpec::new(DType(dtype), shape)))
            }
            TAG_VARIABLE => {
                let dtype = i32::try_from(self.next("dtype")?).map_err(|_| {
                    BindError::BadFacts(format!("dtype out of range at position {}", at + 1))
                })?;
                // Unknown for a variable Python declared with shape=None (restored by Function.load).
                let shape = self.shape_or_unknown()?;
                let alias = u64::try_from(self.next("an alias index")?)
                    .map_err(|_| BindError::BadFacts(format!("negative alias at position {}", *self.pos - 1)))?;
                Ok(TypeRef::new(VariableSpec::new(DType(dtype), shape, alias)))
            }
            TAG_LIST => {
                let n = self.len("list length", 1)?;
                let elements = (0..n)
                    .map(|i| {
                        self.value(strings, literals, depth + 1).map_err(|e| e.within(&format!("[{i}]"), false))
                    })
                    .collect::<Result<_, _>>()?;
                Ok(TypeRef::new(ListType::new(elements)))
            }
            TAG_MAP => {
                let n = self.len("map length", 2)?;
                let mut entries = BTreeMap::new();
                for _ in 0..n {
                    let key_id = self.next("a map key id")?;
                    let key = strings.get(key_id).ok_or_else(|| {
                        BindError::BadFacts(format!("unknown string id {key_id}"))
                    })?;
                    let value = self
                        .value(strings, literals, depth + 1)
                        .map_err(|e| e.within(&format!("['{key}']"), false))?;
                    if entries.insert(key.to_string(), value).is_some() {
                        return Err(BindError::BadFacts(format!("duplicate map key '{key}'")));
                    }
                }
                Ok(TypeRef::new(MapType::new(entries)))
            }
            TAG_RECORD => {
                let class_id = self.next("a record class id")?;
                let class = strings
                    .get(class_id)
                    .ok_or_else(|| BindError::BadFacts(format!("unknown string id {class_id}")))?;
                let n = self.len("record length", 2)?;
                let mut fields: Vec<(String, TypeRef)> = Vec::with_capacity(n);
                for _ in 0..n {
                    let name_id = self.next("a record component id")?;
                    let name = strings
                        .get(name_id)
                        .ok_or_else(|| BindError::BadFacts(format!("unknown string id {name_id}")))?;
                    if fields.iter().any(|(n, _)| n == name) {
                        return Err(BindError::BadFacts(format!("duplicate record component '{name}'")));
                    }
                    let value = self
                        .value(strings, literals, depth + 1)
                        .map_err(|e| e.within(&format!(".{name}"), false))?;
                    fields.push((name.to_string(), value));
                }
                Ok(TypeRef::new(RecordType::new(class, fields)))
            }
            TAG_COMPOSITE => {
                let name_id = self.next("a composite name id")?;
                let name = strings
                    .get(name_id)
                    .ok_or_else(|| BindError::BadFacts(format!("unknown string id {name_id}")))?;
                let dtype = i32::try_from(self.next("dtype")?)
                    .map_err(|_| BindError::BadFacts(format!("dtype out of range at position {}", *self.pos - 1)))?;
                let shape = if self.facts.get(*self.pos) == Some(&RANK_UNKNOWN) {
                    *self.pos += 1;
                    Shape::Unknown
                } else {
                    self.shape()?
                };
                let metadata = match self.next("a metadata literal id")? {
                    -1 => None,
                    id => {
                        let (repr, class) = literals
                            .get(id)
                            .ok_or_else(|| BindError::BadFacts(format!("unknown literal id {id}")))?;
                        Some(TypeRef::new(Literal::new(id as u64, repr, class)))
                    }
                };
                let n = self.len("component count", 4)?;
                let mut components = Vec::with_capacity(n);
                for _ in 0..n {
                    let cid = self.next("a component name id")?;
                    let cname = strings
                        .get(cid)
                        .ok_or_else(|| BindError::BadFacts(format!("unknown string id {cid}")))?;
                    if self.facts.get(*self.pos) != Some(&TAG_TENSOR) {
                        return Err(BindError::BadFacts(format!("component '{cname}' of a {name} is not a tensor")));
                    }
                    let t = self.value(strings, literals, depth + 1).map_err(|e| e.within(&format!(".{cname}"), false))?;
                    components.push((cname.to_string(), t));
                }
                Ok(TypeRef::new(CompositeType::new(name, DType(dtype), shape, metadata, components)))
            }
            TAG_LITERAL => {
                let id = self.next("a literal id")?;
                let (repr, class) = literals
                    .get(id)
                    .ok_or_else(|| BindError::BadFacts(format!("unknown literal id {id}")))?;
                Ok(TypeRef::new(Literal::new(id as u64, repr, class)))
            }
            tag => Err(BindError::BadFacts(format!(
                "unknown tag {tag} at position {at}"
            ))),
        }
    }
}

/// Decodes one value starting at `*pos`, advancing `*pos` past it.
pub fn decode_value(
    facts: &[i64],
    pos: &mut usize,
    strings: &StringTable,
    literals: &LiteralTable,
) -> Result<TypeRef, BindError> {
    Reader { facts, pos }.value(strings, literals, 0)
}

/// Whether a value of top-level tag `tag` may be an argument of a parameter of `kind`.
fn tag_fits(kind: ParamKind, tag: i64) -> bool {
    match kind {
        ParamKind::Tensor => tag == TAG_TENSOR,
        ParamKind::List => tag == TAG_LIST,
        ParamKind::Map => tag == TAG_MAP,
        ParamKind::Java => tag == TAG_LITERAL,
        ParamKind::Variable => tag == TAG_VARIABLE,
        ParamKind::Nest => tag == TAG_LIST || tag == TAG_MAP || tag == TAG_RECORD || tag == TAG_COMPOSITE,
    }
}

/// Decodes a whole call into its monomorphic [`FunctionType`]: same parameter list as
/// `parameters`, each type the realized one. A value whose top-level kind disagrees with the
/// parameter's kind is a `TypeMismatch`; trailing facts are `BadFacts`.
///
/// ```
/// use polyfn_core::*;
/// let params = [Parameter::new("x", ParamKind::Tensor)];
/// let call = decode_call(&params, &[TAG_TENSOR, 1, 2, 2, 3], &StringTable::new(), &LiteralTable::new()).unwrap();
/// assert_eq!(call.to_string(), "(x: TensorSpec(FLOAT, [2, 3]))");
/// ```
pub fn decode_call(
    parameters: &[Parameter],
    facts: &[i64],
    strings: &StringTable,
    literals: &LiteralTable,
) -> Result<FunctionType, BindError> {
    let mut pos = 0;
    let mut realized = Vec::with_capacity(parameters.len());
    for p in parameters {
        let tag = *facts.get(pos).ok_or_else(|| {
            BindError::BadFacts(format!("truncated: no value for parameter '{}'", p.name))
        })?;
        let t = decode_value(facts, &mut pos, strings, literals).map_err(|e| e.within(&p.name, true))?;
        if !tag_fits(p.kind, tag) {
            return Err(BindError::TypeMismatch {
                param: p.name.clone(),
                expected: p
                    .type_constraint
                    .as_ref()
                    .map_or_else(|| format!("a {}", p.kind), |c| c.to_string()),
                got: t.to_string(),
            });
        }
        realized.push(Parameter {
            type_constraint: Some(t),
            ..p.clone()
        });
    }
    if pos != facts.len() {
        return Err(BindError::BadFacts(format!(
            "{} trailing facts after the last parameter",
            facts.len() - pos
        )));
    }
    Ok(FunctionType::new(realized))
}

/// Decodes a call whose facts hold the parameters' values followed by the captures' values,
/// into a monomorphic [`FunctionType`] with both (`declared` gives the parameter list and the
/// capture names).
pub fn decode_call_with_captures(
    declared: &FunctionType,
    facts: &[i64],
    strings: &StringTable,
    literals: &LiteralTable,
) -> Result<FunctionType, BindError> {
    let mut pos = 0;
    let mut params_end = 0;
    for p in &declared.parameters {
        decode_value(facts, &mut pos, strings, literals).map_err(|e| e.within(&p.name, true))?;
        params_end = pos;
    }
    let mut call = decode_call(&declared.parameters, &facts[..params_end], strings, literals)?;
    let mut captures = Vec::with_capacity(declared.captures.len());
    for (name, _) in &declared.captures {
        let value = decode_value(facts, &mut pos, strings, literals).map_err(|e| e.within(name, true))?;
        captures.push((name.clone(), value));
    }
    if pos != facts.len() {
        return Err(BindError::BadFacts(format!("{} trailing facts after the last capture", facts.len() - pos)));
    }
    call.captures = captures;
    Ok(call)
}

#[cfg(test)]
#[path = "facts_decode_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "facts_tests.rs"]
mod record_tests;
