//! String-keyed maps: the concrete [`MapType`] and the declared [`MapConstraint`].

use std::collections::BTreeMap;
use std::fmt;

use crate::trace_type::as_dyns;
use crate::{NestConstraint, PlaceholderContext, PlaceholderSpec, TraceType, TypeRef};
use crate::serial::{encode_type, Fields, SerialError, SerialForm};
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

impl TraceType for MapType {
    fn kind(&self) -> &'static str {
        "map"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if let Some(o) = other.as_any().downcast_ref::<MapType>() {
            self.same_keys(o)
                && self
                    .entries
                    .values()
                    .zip(o.entries.values())
                    .all(|(a, b)| a.is_subtype_of(&**b))
        } else if let Some(c) = other.as_any().downcast_ref::<MapConstraint>() {
            c.value.as_ref().is_none_or(|v| {
                self.entries.values().all(|a| a.is_subtype_of(&**v))
            })
        } else if other.as_any().is::<NestConstraint>() {
            self.entries.values().all(|v| NestConstraint::admits(v, other))
        } else {
            false
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
        let entries = self
            .entries
            .iter()
            .map(|(k, v)| {
                let rest: Vec<&dyn TraceType> =
                    maps.iter().map(|m| m.entries[k].as_dyn()).collect();
                v.most_specific_common_supertype(&rest)
                    .map(|j| (k.clone(), j))
            })
            .collect::<Option<BTreeMap<_, _>>>()?;
        Some(TypeRef::new(MapType::new(entries)))
    }

    fn placeholders(
        &self,
        path: &str,
        ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    ) {
        for (k, v) in &self.entries {
            v.placeholders(&format!("{path}['{k}']"), ctx, out);
        }
    }


    fn mismatch_path(&self, traced: &dyn TraceType) -> String {
        let bound_of = |k: &str| -> Option<&dyn TraceType> {
            if let Some(o) = traced.as_any().downcast_ref::<MapType>() {
                return o.entries.get(k).map(|t| t.as_dyn());
            }
            match traced.as_any().downcast_ref::<MapConstraint>() {
                Some(MapConstraint { value: Some(bound) }) => Some(bound.as_dyn()),
                _ => None,
            }
        };
        if let Some(o) = traced.as_any().downcast_ref::<MapType>() {
            if !self.same_keys(o) {
                return String::new();
            }
        }
        self.entries
            .iter()
            .find_map(|(k, v)| bound_of(k).filter(|b| !v.is_subtype_of(*b)).map(|b| format!("['{k}']{}", v.mismatch_path(b))))
            .unwrap_or_default()
    }

    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            return None;
        }
        if let Some(o) = traced.as_any().downcast_ref::<MapType>() {
            if !self.same_keys(o) {
                let missing: Vec<_> = o
                    .entries
                    .keys()
                    .filter(|k| !self.entries.contains_key(*k))
                    .collect();
                let extra: Vec<_> = self
                    .entries
                    .keys()
                    .filter(|k| !o.entries.contains_key(*k))
                    .collect();
                let mut parts = Vec::new();
                if !missing.is_empty() {
                    parts.push(format!("missing key {}", quoted(missing.into_iter())));
                }
                if !extra.is_empty() {
                    parts.push(format!("new key {}", quoted(extra.into_iter())));
                }
                return Some(format!(
                    "map keys [{}] do not match traced keys [{}]: {}",
                    quoted(self.entries.keys()),
                    quoted(o.entries.keys()),
                    parts.join(", ")
                ));
            }
            let (k, why) = self
                .entries
                .iter()
                .find_map(|(k, v)| v.explain_mismatch(&*o.entries[k]).map(|w| (k, w)))?;
            return Some(format!("key '{k}': {why}"));
        }
        if let Some(MapConstraint { value: Some(bound) }) =
            traced.as_any().downcast_ref::<MapConstraint>()
        {
            let (k, why) = self
                .entries
                .iter()
                .find_map(|(k, v)| v.explain_mismatch(&**bound).map(|w| (k, w)))?;
            return Some(format!("key '{k}': {why}"));
        }
        Some(format!("{self} does not match {traced}"))
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
        let value = if unbounded || values.is_empty() {
            None
        } else {
            values[0].most_specific_common_supertype(&as_dyns(&values[1..]))
        };
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
}
