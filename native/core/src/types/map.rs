//! String-keyed maps: the concrete [`MapType`] and the declared [`MapConstraint`].

use std::collections::BTreeMap;
use std::fmt;

use super::children::{self, Key, Pairs};
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::trace_type::{TraceType, TypeRef};
use super::record::NestConstraint;
use crate::serial::form::{SerialError, SerialForm};
use crate::serial::registry::{encode_type, Fields};
use serde_json::json;

/// A map with an exact key set and one type per value (covariant). Keys are sorted, which
/// fixes the flatten order regardless of the Java map's iteration order.
///
/// ```
/// use polyfn_core::{DType, MapType, Shape, TensorSpec, TypeRef};
/// let m = MapType::new([("a".to_string(), TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::scalar())))].into());
/// assert_eq!(m.to_string(), "Map{'a': TensorSpec(FLOAT, [])}");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct MapType {
    pub entries: BTreeMap<String, TypeRef>,
}

impl MapType {
    pub fn new(entries: BTreeMap<String, TypeRef>) -> Self {
        MapType { entries }
    }

    fn same_keys(&self, other: &MapType) -> bool {
        self.entries.len() == other.entries.len() && self.entries.keys().eq(other.entries.keys())
    }

    /// How this map's keys differ from the traced map's.
    fn explain_keys(&self, traced: &MapType) -> String {
        let missing = traced.entries.keys().filter(|k| !self.entries.contains_key(*k));
        let extra = self.entries.keys().filter(|k| !traced.entries.contains_key(*k));
        let (missing, extra) = (quoted(missing), quoted(extra));
        let mut parts = Vec::new();
        if !missing.is_empty() {
            parts.push(format!("missing key {missing}"));
        }
        if !extra.is_empty() {
            parts.push(format!("new key {extra}"));
        }
        format!(
            "map keys [{}] do not match traced keys [{}]: {}",
            quoted(self.entries.keys()),
            quoted(traced.entries.keys()),
            parts.join(", ")
        )
    }
}

/// What a declared map parameter accepts: any keys, every value a subtype of `value`
/// (None = anything).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct MapConstraint {
    pub value: Option<TypeRef>,
}

impl MapConstraint {
    pub fn new(value: Option<TypeRef>) -> Self {
        MapConstraint { value }
    }
}

impl fmt::Display for MapType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Map{")?;
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "'{k}': {v}")?;
        }
        f.write_str("}")
    }
}

impl fmt::Display for MapConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(v) => write!(f, "Map{{str: {v}}}"),
            None => f.write_str("Map{str: *}"),
        }
    }
}

fn quoted<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    keys.map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl MapType {
    fn children(&self) -> impl Iterator<Item = (Key<'_>, &TypeRef)> {
        self.entries.iter().map(|(k, v)| (Key::Name(k), v))
    }

    /// Each value beside what it must fit in `traced` (the same key's value in a map of the same
    /// keys, or a map constraint's value bound), or `None` when the keys differ or nothing bounds
    /// the values.
    fn pairs<'a>(&'a self, traced: &'a dyn TraceType) -> Option<Pairs<'a>> {
        if let Some(o) = traced.as_any().downcast_ref::<MapType>() {
            if !self.same_keys(o) {
                return None;
            }
            return Some(self.children().zip(o.entries.values()).map(|((k, a), b)| (k, a, b.as_dyn())).collect());
        }
        let bound = traced.as_any().downcast_ref::<MapConstraint>()?.value.as_ref()?;
        Some(self.children().map(|(k, a)| (k, a, bound.as_dyn())).collect())
    }
}

impl TraceType for MapType {
    fn kind(&self) -> &'static str {
        "map"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if other.as_any().is::<NestConstraint>() {
            return self.entries.values().all(|v| NestConstraint::admits(v, other));
        }
        match self.pairs(other) {
            Some(pairs) => children::all_fit(&pairs),
            // A constraint that bounds no value admits every map.
            None => matches!(other.as_any().downcast_ref::<MapConstraint>(), Some(MapConstraint { value: None })),
        }
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let Some(maps) = others.iter().map(|o| o.as_any().downcast_ref::<MapType>()).collect::<Option<Vec<_>>>()
        else {
            return super::join_by_constraint::<MapConstraint>(self, others)
                .or_else(|| super::join_by_constraint::<NestConstraint>(self, others));
        };
        if !maps.iter().all(|m| self.same_keys(m)) {
            return None;
        }
        let own: Vec<&TypeRef> = self.entries.values().collect();
        let rest: Vec<Vec<&TypeRef>> = maps.iter().map(|m| m.entries.values().collect()).collect();
        let joined = children::join_each(&own, &rest)?;
        Some(TypeRef::new(MapType::new(self.entries.keys().cloned().zip(joined).collect())))
    }

    fn placeholders(
        &self,
        path: &str,
        ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    ) {
        children::placeholders(self.children(), path, ctx, out);
    }

    fn mismatch_path(&self, traced: &dyn TraceType) -> String {
        self.pairs(traced).map(|p| children::first_mismatch_path(&p)).unwrap_or_default()
    }

    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            return None;
        }
        if let Some(o) = traced.as_any().downcast_ref::<MapType>() {
            if !self.same_keys(o) {
                return Some(self.explain_keys(o));
            }
        }
        match self.pairs(traced) {
            Some(pairs) => children::explain_first(&pairs),
            None => Some(format!("{self} does not match {traced}")),
        }
    }

    fn specialize_for_trace(&self, constraint: &dyn TraceType) -> TypeRef {
        match constraint
            .as_any()
            .downcast_ref::<MapConstraint>()
            .and_then(|c| c.value.as_ref())
        {
            Some(bound) => TypeRef::new(MapType::new(
                self.entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.specialize_for_trace(&**bound)))
                    .collect(),
            )),
            None => TypeRef::new(self.clone()),
        }
    }

    fn to_json(&self) -> Result<SerialForm, SerialError> {
        let entries = self
            .entries
            .iter()
            .map(|(k, v)| Ok((k.clone(), encode_type(&**v)?)))
            .collect::<Result<serde_json::Map<_, _>, SerialError>>()?;
        Ok(SerialForm::new("map").field("entries", serde_json::Value::Object(entries)))
    }

    crate::trace_type_common!();
}

impl TraceType for MapConstraint {
    fn kind(&self) -> &'static str {
        "map"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if other.as_any().is::<NestConstraint>() {
            return self.value.as_ref().is_some_and(|v| NestConstraint::admits_bound(v, other));
        }
        match other.as_any().downcast_ref::<MapConstraint>() {
            Some(MapConstraint { value: None }) => true,
            Some(MapConstraint { value: Some(b) }) => {
                self.value.as_ref().is_some_and(|a| a.is_subtype_of(&**b))
            }
            None => false,
        }
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        if others.iter().any(|o| o.as_any().is::<NestConstraint>()) {
            // The nest decides, whatever the order the types came in.
            return super::join_by_constraint::<NestConstraint>(self, others);
        }
        let mut values: Vec<TypeRef> = Vec::new();
        let mut unbounded = self.value.is_none();
        values.extend(self.value.iter().cloned());
        for o in others {
            if let Some(c) = o.as_any().downcast_ref::<MapConstraint>() {
                unbounded |= c.value.is_none();
                values.extend(c.value.iter().cloned());
            } else if let Some(m) = o.as_any().downcast_ref::<MapType>() {
                values.extend(m.entries.values().cloned());
            } else {
                return None;
            }
        }
        let value = children::join_bounds(&values, unbounded);
        Some(TypeRef::new(MapConstraint::new(value)))
    }

    fn placeholders(
        &self,
        _path: &str,
        _ctx: &mut PlaceholderContext,
        _out: &mut Vec<PlaceholderSpec>,
    ) {
    }


    fn to_json(&self) -> Result<SerialForm, SerialError> {
        let value = self.value.as_ref().map(|v| encode_type(&**v)).transpose()?;
        Ok(SerialForm::new("map_constraint").field("value", json!(value)))
    }

    crate::trace_type_common!();
}

impl MapType {
    /// Decoder of the `map` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        Ok(TypeRef::new(MapType::new(f.take_type_map("entries")?)))
    }
}

impl MapConstraint {
    /// Decoder of the `map_constraint` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        Ok(TypeRef::new(MapConstraint::new(f.take_opt_type("value")?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, DTypeSet, Shape, TensorConstraint, TensorSpec};

    fn t(dims: &[i64]) -> TypeRef {
        TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(dims)))
    }

    fn map(entries: &[(&str, &[i64])]) -> MapType {
        MapType::new(entries.iter().map(|(k, d)| (k.to_string(), t(d))).collect())
    }

    #[test]
    fn display_and_placeholders() {
        let m = map(&[("b", &[1]), ("a", &[2])]);
        assert_eq!(
            m.to_string(),
            "Map{'a': TensorSpec(FLOAT, [2]), 'b': TensorSpec(FLOAT, [1])}"
        );
        assert_eq!(MapConstraint::new(None).to_string(), "Map{str: *}");
        let mut out = Vec::new();
        m.placeholders("m", &mut PlaceholderContext::new(), &mut out);
        assert_eq!(
            out.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(),
            ["m['a']", "m['b']"]
        );
    }

    #[test]
    fn subtyping_and_join() {
        let m = map(&[("a", &[2]), ("b", &[1])]);
        assert!(m.is_subtype_of(&map(&[("a", &[-1]), ("b", &[1])])));
        assert!(!m.is_subtype_of(&map(&[("a", &[2])])));
        assert!(!m.is_subtype_of(&map(&[("a", &[2]), ("c", &[1])])));
        let j = m
            .most_specific_common_supertype(&[&map(&[("a", &[3]), ("b", &[1])])])
            .unwrap();
        assert_eq!(j, TypeRef::new(map(&[("a", &[-1]), ("b", &[1])])));
        assert!(m
            .most_specific_common_supertype(&[&map(&[("a", &[2])])])
            .is_none());
        let c = MapConstraint::new(Some(TypeRef::new(TensorConstraint::new(
            DTypeSet::floating(),
            None,
        ))));
        assert!(m.is_subtype_of(&c));
        assert!(c.is_subtype_of(&MapConstraint::new(None)));
        assert!(!MapConstraint::new(None).is_subtype_of(&c));
        let j = c.most_specific_common_supertype(&[&m]).unwrap();
        assert!(m.is_subtype_of(&*j) && c.is_subtype_of(&*j));
    }

    #[test]
    fn a_constraint_join_bounds_its_values_by_the_join_of_every_bound() {
        let joined = MapConstraint::new(Some(t(&[2])))
            .most_specific_common_supertype(&[&MapConstraint::new(Some(t(&[3])))])
            .unwrap();
        assert_eq!(joined, TypeRef::new(MapConstraint::new(Some(t(&[-1])))));
        let open = MapConstraint::new(None).most_specific_common_supertype(&[&map(&[("a", &[1])])]).unwrap();
        assert_eq!(open, TypeRef::new(MapConstraint::new(None)));
    }

    #[test]
    fn explain() {
        let m = map(&[("a", &[2]), ("c", &[1])]);
        assert_eq!(
            m.explain_mismatch(&map(&[("a", &[2]), ("b", &[1])]))
                .unwrap(),
            "map keys ['a', 'c'] do not match traced keys ['a', 'b']: missing key 'b', new key 'c'"
        );
        assert_eq!(
            m.explain_mismatch(&map(&[("a", &[3]), ("c", &[1])]))
                .unwrap(),
            "key 'a': TensorSpec(FLOAT, [2]) does not match TensorSpec(FLOAT, [3]) at dim 0"
        );
        let c = MapConstraint::new(Some(t(&[-1])));
        assert_eq!(
            m.specialize_for_trace(&c),
            TypeRef::new(map(&[("a", &[2]), ("c", &[1])]))
        );
    }

    #[test]
    fn a_map_constraint_joined_with_an_unbounded_one_is_unbounded() {
        let t = TypeRef::new(crate::TensorSpec::new(crate::DType::FLOAT, crate::Shape::of(&[2])));
        let value = |j: TypeRef| j.downcast_ref::<MapConstraint>().unwrap().value.clone();
        let bounded = MapConstraint::new(Some(t.clone()));
        assert_eq!(value(bounded.most_specific_common_supertype(&[&MapConstraint::new(Some(t.clone()))]).unwrap()), Some(t));
        assert_eq!(value(bounded.most_specific_common_supertype(&[&MapConstraint::new(None)]).unwrap()), None);
    }
}
