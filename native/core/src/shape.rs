//! Tensor shapes with unknown dimensions and unknown rank, and their lattice.

use std::fmt;

/// A (possibly partially known) tensor shape. `Unknown` is the top of the shape lattice;
/// in `Known(dims)`, `None` is an unknown dimension.
///
/// ```
/// use polyfn_core::Shape;
/// let s = Shape::of(&[-1, 3]);
/// assert_eq!(s.to_string(), "[-1, 3]");
/// assert!(Shape::of(&[2, 3]).is_subtype_of(&s));
/// assert_eq!(Shape::of(&[2]).most_specific_common_supertype(&[&Shape::of(&[3])]), Shape::of(&[-1]));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Shape {
    Unknown,
    Known(Vec<Option<i64>>),
}

impl Shape {
    /// The rank-0 shape `[]`.
    pub fn scalar() -> Self {
        Shape::Known(Vec::new())
    }

    /// A known-rank shape; any negative dim (conventionally -1) is unknown.
    pub fn of(dims: &[i64]) -> Self {
        Shape::Known(dims.iter().map(|&d| (d >= 0).then_some(d)).collect())
    }

    /// The shape for dims as they come from Java (`-1`: unknown), rejecting any other negative
    /// dim: `Shape::of` would silently read `-5` as unknown and accept any size there.
    pub fn from_wire_dims(dims: &[i64]) -> Result<Shape, String> {
        match dims.iter().position(|&d| d < -1) {
            Some(i) => Err(format!(
                "shape {} has dimension {} at index {i}; a dimension is a size >= 0, or -1 for unknown",
                WireDims(dims),
                dims[i]
            )),
            None => Ok(Shape::of(dims)),
        }
    }

    pub fn rank(&self) -> Option<usize> {
        match self {
            Shape::Unknown => None,
            Shape::Known(d) => Some(d.len()),
        }
    }

    /// Whether every dimension (and the rank) is known.
    pub fn is_fully_defined(&self) -> bool {
        matches!(self, Shape::Known(d) if d.iter().all(Option::is_some))
    }

    pub fn is_subtype_of(&self, other: &Shape) -> bool {
        self.first_difference(other).is_none()
    }

    /// The join: always exists because `Unknown` is the top.
    pub fn most_specific_common_supertype(&self, others: &[&Shape]) -> Shape {
        let mut dims = match self {
            Shape::Unknown => return Shape::Unknown,
            Shape::Known(d) => d.clone(),
        };
        for other in others {
            match other {
                Shape::Known(o) if o.len() == dims.len() => {
                    for (d, o) in dims.iter_mut().zip(o) {
                        if *d != *o {
                            *d = None;
                        }
                    }
                }
                _ => return Shape::Unknown,
            }
        }
        Shape::Known(dims)
    }

    /// Why `self` is not a subtype of `other` ("rank 2 vs 1", "at dim 0"); `None` if it is.
    pub fn first_difference(&self, other: &Shape) -> Option<String> {
        match (self, other) {
            (_, Shape::Unknown) => None,
            (Shape::Unknown, Shape::Known(_)) => Some("unknown rank vs known rank".into()),
            (Shape::Known(a), Shape::Known(b)) if a.len() != b.len() => {
                Some(format!("rank {} vs {}", a.len(), b.len()))
            }
            (Shape::Known(a), Shape::Known(b)) => a
                .iter()
                .zip(b)
                .position(|(x, y)| y.is_some() && x != y)
                .map(|i| format!("at dim {i}")),
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Unknown => f.write_str("<unknown>"),
            Shape::Known(dims) => {
                f.write_str("[")?;
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", d.unwrap_or(-1))?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Raw dims displayed as Java wrote them.
struct WireDims<'a>(&'a [i64]);

impl fmt::Display for WireDims<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn construction_and_display() {
        assert_eq!(Shape::scalar().to_string(), "[]");
        assert_eq!(Shape::of(&[2, 3]).to_string(), "[2, 3]");
        assert_eq!(Shape::of(&[-1, 3]).to_string(), "[-1, 3]");
        assert_eq!(Shape::Unknown.to_string(), "<unknown>");
        assert_eq!(Shape::of(&[-1, 3]), Shape::Known(vec![None, Some(3)]));
        assert_eq!(Shape::of(&[2, 3]).rank(), Some(2));
        assert_eq!(Shape::Unknown.rank(), None);
        assert!(Shape::of(&[2]).is_fully_defined() && !Shape::of(&[-1]).is_fully_defined());
    }

    #[test]
    fn subtyping() {
        let s23 = Shape::of(&[2, 3]);
        assert!(s23.is_subtype_of(&s23));
        assert!(s23.is_subtype_of(&Shape::of(&[-1, 3])));
        assert!(s23.is_subtype_of(&Shape::of(&[-1, -1])));
        assert!(s23.is_subtype_of(&Shape::Unknown));
        assert!(!Shape::of(&[-1, 3]).is_subtype_of(&s23));
        assert!(!Shape::Unknown.is_subtype_of(&s23));
        assert!(!s23.is_subtype_of(&Shape::of(&[2])));
        assert!(Shape::scalar().is_subtype_of(&Shape::scalar()));
    }

    #[test]
    fn first_difference_texts() {
        assert_eq!(
            Shape::of(&[3])
                .first_difference(&Shape::of(&[2]))
                .as_deref(),
            Some("at dim 0")
        );
        assert_eq!(
            Shape::of(&[2, 4])
                .first_difference(&Shape::of(&[-1, 3]))
                .as_deref(),
            Some("at dim 1")
        );
        assert_eq!(
            Shape::of(&[2, 2])
                .first_difference(&Shape::of(&[2]))
                .as_deref(),
            Some("rank 2 vs 1")
        );
        assert_eq!(Shape::of(&[2]).first_difference(&Shape::of(&[-1])), None);
        assert!(Shape::Unknown.first_difference(&Shape::scalar()).is_some());
    }

    #[test]
    fn join() {
        let j = |a: &Shape, b: &Shape| a.most_specific_common_supertype(&[b]);
        assert_eq!(
            j(&Shape::of(&[2, 3]), &Shape::of(&[2, 4])),
            Shape::of(&[2, -1])
        );
        assert_eq!(j(&Shape::of(&[2]), &Shape::of(&[2, 2])), Shape::Unknown);
        assert_eq!(j(&Shape::Unknown, &Shape::of(&[2])), Shape::Unknown);
        assert_eq!(j(&Shape::of(&[2]), &Shape::Unknown), Shape::Unknown);
        assert_eq!(
            Shape::of(&[5]).most_specific_common_supertype(&[]),
            Shape::of(&[5])
        );
        let many = Shape::of(&[1, 2])
            .most_specific_common_supertype(&[&Shape::of(&[1, 3]), &Shape::of(&[1, 4])]);
        assert_eq!(many, Shape::of(&[1, -1]));
    }
}
