//! Tensor shapes with unknown dimensions and unknown rank, and their lattice.

use std::fmt;

use crate::wire::MAX_RANK;

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

    /// Checks the shape against TensorFlow's limits, whose C++ aborts the process on a shape
    /// beyond them: at most [`MAX_RANK`] dims, known dims >= 0, and a count of elements (the
    /// product of the known dims) that fits in an `i64`.
    ///
    /// ```
    /// use polyfn_core::Shape;
    /// assert!(Shape::of(&[2, -1, 3]).validate().is_ok());
    /// assert!(Shape::of(&[i64::MAX, 2]).validate().is_err());
    /// assert!(Shape::of(&vec![1; 300]).validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        let Shape::Known(dims) = self else { return Ok(()) };
        if dims.len() > MAX_RANK {
            return Err(rank_error(dims.len()));
        }
        let mut count: i64 = 1;
        for d in dims.iter().flatten() {
            if *d < 0 {
                return Err(format!("shape {self} has a negative dimension {d}"));
            }
            count = match count.checked_mul(*d) {
                Some(c) => c,
                None => return Err(format!("shape {self} has more elements than fit in a 64-bit count")),
            };
        }
        Ok(())
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
        self.difference(other).is_none()
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
        self.difference(other).map(|d| d.to_string())
    }

    /// Where `self` stops being a subtype of `other`, without building text: subtype checks run
    /// once per cached signature a call is compared with, so they must not allocate.
    pub fn difference(&self, other: &Shape) -> Option<ShapeDifference> {
        match (self, other) {
            (_, Shape::Unknown) => None,
            (Shape::Unknown, Shape::Known(_)) => Some(ShapeDifference::UnknownRank),
            (Shape::Known(a), Shape::Known(b)) if a.len() != b.len() => Some(ShapeDifference::Rank(a.len(), b.len())),
            (Shape::Known(a), Shape::Known(b)) => {
                a.iter().zip(b).position(|(x, y)| y.is_some() && x != y).map(ShapeDifference::Dim)
            }
        }
    }
}

/// How a shape fails to be a subtype of another ([`Shape::difference`]); displays as the text of
/// [`Shape::first_difference`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ShapeDifference {
    /// The shape has unknown rank, the other a known one.
    UnknownRank,
    /// Both ranks are known and differ: (this rank, the other's).
    Rank(usize, usize),
    /// The first dimension (index) where the other has a known size this one does not match.
    Dim(usize),
}

impl fmt::Display for ShapeDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeDifference::UnknownRank => f.write_str("unknown rank vs known rank"),
            ShapeDifference::Rank(a, b) => write!(f, "rank {a} vs {b}"),
            ShapeDifference::Dim(i) => write!(f, "at dim {i}"),
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

/// The error for a rank beyond [`MAX_RANK`] (the dims themselves are too many to show).
pub(crate) fn rank_error(rank: usize) -> String {
    format!("shape of rank {rank} exceeds TensorFlow's limit of {MAX_RANK} dimensions")
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
        assert_eq!(Shape::Unknown.difference(&Shape::scalar()), Some(ShapeDifference::UnknownRank));
        assert_eq!(Shape::of(&[2, 4]).difference(&Shape::of(&[-1, 3])), Some(ShapeDifference::Dim(1)));
        assert_eq!(Shape::of(&[2]).difference(&Shape::of(&[2, 2])), Some(ShapeDifference::Rank(1, 2)));
        assert_eq!(Shape::of(&[-1]).difference(&Shape::Unknown), None);
    }

    #[test]
    fn validation_against_tensorflow_limits() {
        assert!(Shape::Unknown.validate().is_ok());
        assert!(Shape::scalar().validate().is_ok());
        assert!(Shape::of(&vec![1; MAX_RANK]).validate().is_ok());
        assert_eq!(
            Shape::of(&vec![1; MAX_RANK + 1]).validate().unwrap_err(),
            "shape of rank 255 exceeds TensorFlow's limit of 254 dimensions"
        );
        assert_eq!(
            Shape::of(&[i64::MAX, i64::MAX, 4]).validate().unwrap_err(),
            "shape [9223372036854775807, 9223372036854775807, 4] has more elements than fit in a 64-bit count"
        );
        // Unknown dims do not count; a zero dim does not excuse an overflow before it.
        assert!(Shape::of(&[i64::MAX, -1, 2]).validate().is_err());
        assert!(Shape::of(&[i64::MAX, -1]).validate().is_ok());
        assert!(Shape::of(&[1 << 31, 1 << 31]).validate().is_ok());
        assert!(Shape::of(&[1 << 32, 1 << 31]).validate().is_err());
        assert!(Shape::Known(vec![Some(-3)]).validate().is_err());
        assert!(Shape::from_wire_dims(&[2, -1]).is_ok());
        assert!(Shape::from_wire_dims(&[-2]).is_err());
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
