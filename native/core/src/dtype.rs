//! TensorFlow data types ([`DType`]) and dtype families ([`DTypeSet`]).

use std::collections::BTreeSet;
use std::fmt;

/// A `TF_DataType` code, e.g. `DType::FLOAT` (1) or `DType::INT32` (3).
///
/// ```
/// use polyfn_core::DType;
/// assert_eq!(DType::FLOAT.name(), "FLOAT");
/// assert_eq!(DType(3).to_string(), "INT32");
/// assert_eq!(DType(999).to_string(), "DT_999");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct DType(pub i32);

/// Code/name pairs, indexed by code - 1 (codes 1..=23 are contiguous in TF_DataType).
const NAMES: [&str; 23] = [
    "FLOAT",
    "DOUBLE",
    "INT32",
    "UINT8",
    "INT16",
    "INT8",
    "STRING",
    "COMPLEX64",
    "INT64",
    "BOOL",
    "QINT8",
    "QUINT8",
    "QINT32",
    "BFLOAT16",
    "QINT16",
    "QUINT16",
    "UINT16",
    "COMPLEX128",
    "HALF",
    "RESOURCE",
    "VARIANT",
    "UINT32",
    "UINT64",
];

impl DType {
    pub const FLOAT: DType = DType(1);
    pub const DOUBLE: DType = DType(2);
    pub const INT32: DType = DType(3);
    pub const UINT8: DType = DType(4);
    pub const INT16: DType = DType(5);
    pub const INT8: DType = DType(6);
    pub const STRING: DType = DType(7);
    pub const COMPLEX64: DType = DType(8);
    pub const INT64: DType = DType(9);
    pub const BOOL: DType = DType(10);
    pub const QINT8: DType = DType(11);
    pub const QUINT8: DType = DType(12);
    pub const QINT32: DType = DType(13);
    pub const BFLOAT16: DType = DType(14);
    pub const QINT16: DType = DType(15);
    pub const QUINT16: DType = DType(16);
    pub const UINT16: DType = DType(17);
    pub const COMPLEX128: DType = DType(18);
    pub const HALF: DType = DType(19);
    pub const RESOURCE: DType = DType(crate::wire::DT_RESOURCE);
    pub const VARIANT: DType = DType(21);
    pub const UINT32: DType = DType(22);
    pub const UINT64: DType = DType(23);

    /// The upper-case TensorFlow name, or `"UNKNOWN"` for a code this crate does not know
    /// (`Display` prints `DT_<code>` in that case so the code is not lost).
    pub fn name(&self) -> &'static str {
        usize::try_from(self.0 - 1)
            .ok()
            .and_then(|i| NAMES.get(i))
            .copied()
            .unwrap_or("UNKNOWN")
    }

    /// The dtype named `name` (as [`name`](Self::name) spells it), if known.
    pub fn from_name(name: &str) -> Option<DType> {
        NAMES.iter().position(|n| *n == name).map(|i| DType(i as i32 + 1))
    }

    /// Whether the code is one of the known `TF_DataType` values.
    pub fn is_known(&self) -> bool {
        (1..=NAMES.len() as i32).contains(&self.0)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_known() {
            f.write_str(self.name())
        } else {
            write!(f, "DT_{}", self.0)
        }
    }
}

/// A set of dtypes: the dtype family a declared parameter accepts (Java's `TFloating`
/// is `{FLOAT, DOUBLE, BFLOAT16, HALF}`), or `any`.
///
/// ```
/// use polyfn_core::{DType, DTypeSet};
/// let floats = DTypeSet::of(&[DType::FLOAT, DType::DOUBLE]);
/// assert!(floats.contains(DType::FLOAT) && !floats.contains(DType::INT32));
/// assert!(floats.is_subset_of(&DTypeSet::any()));
/// assert_eq!(floats.to_string(), "{FLOAT, DOUBLE}");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct DTypeSet {
    /// `None` = every dtype. A BTreeSet keeps Display and Hash order-independent.
    set: Option<BTreeSet<DType>>,
}

impl DTypeSet {
    /// The unconstrained set.
    pub fn any() -> Self {
        DTypeSet { set: None }
    }

    /// Exactly the given dtypes.
    pub fn of(dtypes: &[DType]) -> Self {
        DTypeSet {
            set: Some(dtypes.iter().copied().collect()),
        }
    }

    /// TF's floating family (Java `TFloating`).
    pub fn floating() -> Self {
        Self::of(&[DType::FLOAT, DType::DOUBLE, DType::BFLOAT16, DType::HALF])
    }

    /// TF's integer family (Java `TIntegral`).
    pub fn integral() -> Self {
        Self::of(&[
            DType::INT8,
            DType::INT16,
            DType::INT32,
            DType::INT64,
            DType::UINT8,
            DType::UINT16,
            DType::UINT32,
            DType::UINT64,
        ])
    }

    pub fn contains(&self, dtype: DType) -> bool {
        self.set.as_ref().is_none_or(|s| s.contains(&dtype))
    }

    pub fn is_any(&self) -> bool {
        self.set.is_none()
    }

    pub fn is_subset_of(&self, other: &DTypeSet) -> bool {
        match (&self.set, &other.set) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => a.is_subset(b),
        }
    }

    /// The smallest set containing both.
    pub fn union(&self, other: &DTypeSet) -> DTypeSet {
        match (&self.set, &other.set) {
            (Some(a), Some(b)) => DTypeSet {
                set: Some(a.union(b).copied().collect()),
            },
            _ => DTypeSet::any(),
        }
    }

    /// The members in code order, or `None` for the unconstrained set.
    pub fn members(&self) -> Option<Vec<DType>> {
        self.set.as_ref().map(|s| s.iter().copied().collect())
    }

    /// The dtypes in both sets.
    pub fn intersection(&self, other: &DTypeSet) -> DTypeSet {
        match (&self.set, &other.set) {
            (None, _) => other.clone(),
            (_, None) => self.clone(),
            (Some(a), Some(b)) => DTypeSet { set: Some(a.intersection(b).copied().collect()) },
        }
    }

    /// Whether no dtype is in the set (`any` is never empty).
    pub fn is_empty(&self) -> bool {
        self.set.as_ref().is_some_and(|s| s.is_empty())
    }

    /// The single member, if the set has exactly one.
    pub fn single(&self) -> Option<DType> {
        match &self.set {
            Some(s) if s.len() == 1 => s.iter().next().copied(),
            _ => None,
        }
    }
}

impl fmt::Display for DTypeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.set {
            None => f.write_str("any"),
            Some(s) => {
                f.write_str("{")?;
                for (i, d) in s.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(DType::FLOAT.name(), "FLOAT");
        assert_eq!(DType::UINT64.name(), "UINT64");
        assert_eq!(DType::HALF.to_string(), "HALF");
        assert_eq!(DType(0).name(), "UNKNOWN");
        assert_eq!(DType(101).to_string(), "DT_101");
        assert_eq!(DType(-5).to_string(), "DT_-5");
    }

    #[test]
    fn sets() {
        let f = DTypeSet::floating();
        let fd = DTypeSet::of(&[DType::DOUBLE, DType::FLOAT]);
        assert!(fd.is_subset_of(&f));
        assert!(!f.is_subset_of(&fd));
        assert!(f.is_subset_of(&DTypeSet::any()));
        assert!(!DTypeSet::any().is_subset_of(&f));
        assert!(DTypeSet::any().contains(DType(77)));
        assert!(DTypeSet::any().is_any() && !f.is_any());
        assert_eq!(fd.to_string(), "{FLOAT, DOUBLE}");
        assert_eq!(DTypeSet::any().to_string(), "any");
        assert_eq!(DTypeSet::of(&[DType::INT32]).single(), Some(DType::INT32));
        assert_eq!(fd.single(), None);
        assert_eq!(
            fd.union(&DTypeSet::of(&[DType::INT32])).to_string(),
            "{FLOAT, DOUBLE, INT32}"
        );
        // order of construction does not matter for equality
        assert_eq!(
            fd,
            DTypeSet::of(&[DType::FLOAT, DType::DOUBLE, DType::FLOAT])
        );
    }
}
