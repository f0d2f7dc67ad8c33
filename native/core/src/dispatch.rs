//! [`DispatchTable`]: concrete functions keyed by their traced [`FunctionType`], looked up
//! by a call's monomorphic type (exactly, or via the most specific cached supertype).

use std::collections::HashMap;

use crate::FunctionType;

/// How a lookup matched.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Hit {
    /// The call's type is a cached key.
    Exact,
    /// A cached key is a strict supertype of the call's type.
    Inexact,
}

/// Bound on memoized facts buffers; the memo is cleared when full (cheap, and hot calls
/// re-memoize on their next slow lookup).
const MEMO_CAPACITY: usize = 4096;

struct Entry<V> {
    ty: FunctionType,
    value: V,
    /// Insertion sequence number: gives insertion order and deterministic tie-breaks.
    seq: u64,
    /// Logical clock value of the last lookup/insert that used this entry (for LRU).
    last_used: u64,
}

#[derive(Clone, Copy)]
struct Memo {
    seq: u64,
    hit: Hit,
}

/// The cache of a polymorphic function: traced type → concrete function `V`.
///
/// ```
/// use polyfn_core::*;
/// let x = |d: &[i64]| FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor)
///     .with_constraint(TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(d))))]);
/// let mut table = DispatchTable::new();
/// table.insert(x(&[-1]), "f_any");
/// assert_eq!(table.lookup(&x(&[3]), Some(&[1, 1, 1, 3])), Some(("f_any", Hit::Inexact)));
/// // the same facts now hit the memo without building a FunctionType
/// assert_eq!(table.lookup_facts(&[1, 1, 1, 3]), Some(("f_any", Hit::Inexact)));
/// ```
pub struct DispatchTable<V: Clone> {
    entries: HashMap<u64, Entry<V>>,
    by_type: HashMap<FunctionType, u64>,
    memo: HashMap<Box<[i64]>, Memo>,
    next_seq: u64,
    clock: u64,
}

impl<V: Clone> Default for DispatchTable<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Clone> DispatchTable<V> {
    pub fn new() -> Self {
        DispatchTable {
            entries: HashMap::new(),
            by_type: HashMap::new(),
            memo: HashMap::new(),
            next_seq: 0,
            clock: 0,
        }
    }

    fn touch(&mut self, seq: u64) -> Option<&Entry<V>> {
        self.clock += 1;
        let clock = self.clock;
        let e = self.entries.get_mut(&seq)?;
        e.last_used = clock;
        Some(e)
    }

    /// Fast path: a previous call with identical facts. O(1), no allocation.
    pub fn lookup_facts(&mut self, facts: &[i64]) -> Option<(V, Hit)> {
        let m = *self.memo.get(facts)?;
        self.touch(m.seq).map(|e| (e.value.clone(), m.hit))
    }

    /// Slow path: exact key, else the most specific cached supertype of `call`. The result
    /// is memoized under `facts` (if given) so the next identical call takes the fast path.
    ///
    /// Among several cached supertypes, the one that is a subtype of all the others wins
    /// (earliest inserted on ties); if they are incomparable, a TF-style greedy scan in
    /// insertion order keeps replacing the pick with any more specific candidate.
    pub fn lookup(&mut self, call: &FunctionType, facts: Option<&[i64]>) -> Option<(V, Hit)> {
        let (seq, hit) = match self.by_type.get(call) {
            Some(&seq) => (seq, Hit::Exact),
            None => (self.most_specific_supertype(call)?, Hit::Inexact),
        };
        if let Some(facts) = facts {
            // Exact memos are bounded by the entries; inexact ones (one per call shape served by
            // a general signature) are what can grow, so they are what gets dropped.
            if self.memo.len() >= MEMO_CAPACITY + self.entries.len() {
                self.memo.retain(|_, m| m.hit == Hit::Exact);
            }
            self.memo.insert(facts.into(), Memo { seq, hit });
        }
        self.touch(seq).map(|e| (e.value.clone(), hit))
    }

    fn most_specific_supertype(&self, call: &FunctionType) -> Option<u64> {
        let mut candidates: Vec<&Entry<V>> = self
            .entries
            .values()
            .filter(|e| call.is_subtype_of(&e.ty))
            .collect();
        candidates.sort_by_key(|e| e.seq);
        let below_all = candidates
            .iter()
            .find(|c| candidates.iter().all(|o| c.ty.is_subtype_of(&o.ty)));
        if let Some(c) = below_all {
            return Some(c.seq);
        }
        let mut pick: Option<&Entry<V>> = None;
        for c in candidates {
            if pick.is_none_or(|p| c.ty.is_subtype_of(&p.ty)) {
                pick = Some(c);
            }
        }
        pick.map(|e| e.seq)
    }

    /// Adds (or replaces) the function for `ty`. Inexact memo entries are dropped: the new
    /// entry may be a more specific match for them.
    pub fn insert(&mut self, ty: FunctionType, v: V) {
        self.memo.retain(|_, m| m.hit == Hit::Exact);
        self.clock += 1;
        if let Some(&seq) = self.by_type.get(&ty) {
            let e = self
                .entries
                .get_mut(&seq)
                .expect("by_type and entries agree");
            e.value = v;
            e.last_used = self.clock;
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.by_type.insert(ty.clone(), seq);
        self.entries.insert(
            seq,
            Entry {
                ty,
                value: v,
                seq,
                last_used: self.clock,
            },
        );
    }

    /// Removes the function for exactly `ty`, and every memo entry that led to it.
    pub fn remove(&mut self, ty: &FunctionType) -> Option<V> {
        let seq = self.by_type.remove(ty)?;
        self.memo.retain(|_, m| m.seq != seq);
        self.entries.remove(&seq).map(|e| e.value)
    }

    /// Empties the table, returning the values in insertion order (e.g. to release them).
    pub fn clear(&mut self) -> Vec<V> {
        let mut all: Vec<Entry<V>> = self.entries.drain().map(|(_, e)| e).collect();
        all.sort_by_key(|e| e.seq);
        self.by_type.clear();
        self.memo.clear();
        all.into_iter().map(|e| e.value).collect()
    }

    /// The function cached for exactly `ty`.
    pub fn get(&self, ty: &FunctionType) -> Option<&V> {
        self.by_type.get(ty).and_then(|seq| self.entries.get(seq)).map(|e| &e.value)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Cached (type, value) pairs in insertion order.
    pub fn entries(&self) -> impl Iterator<Item = (&FunctionType, &V)> {
        let mut all: Vec<&Entry<V>> = self.entries.values().collect();
        all.sort_by_key(|e| e.seq);
        all.into_iter().map(|e| (&e.ty, &e.value))
    }

    /// Cached types in insertion order.
    pub fn types(&self) -> Vec<&FunctionType> {
        self.entries().map(|(t, _)| t).collect()
    }

    /// tf.function's `reduce_retracing`: fold `call` with each cached type (insertion order)
    /// into their most specific common supertype wherever one exists.
    pub fn generalize(&self, call: &FunctionType) -> FunctionType {
        self.types().into_iter().fold(call.clone(), |acc, t| {
            acc.most_specific_common_supertype(&[t]).unwrap_or(acc)
        })
    }

    /// The entry unused for longest (by lookups and inserts): the eviction candidate.
    pub fn least_recently_used(&self) -> Option<&FunctionType> {
        self.entries
            .values()
            .min_by_key(|e| e.last_used)
            .map(|e| &e.ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    fn x(dims: &[i64]) -> FunctionType {
        x_shape(Shape::of(dims))
    }

    fn x_shape(s: Shape) -> FunctionType {
        FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor)
            .with_constraint(TypeRef::new(TensorSpec::new(DType::FLOAT, s)))])
    }

    fn xy(a: &[i64], b: &[i64]) -> FunctionType {
        let t = |d: &[i64]| TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(d)));
        FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(t(a)),
            Parameter::new("y", ParamKind::Tensor).with_constraint(t(b)),
        ])
    }

    #[test]
    fn exact_and_miss() {
        let mut d = DispatchTable::new();
        assert!(d.is_empty());
        d.insert(x(&[2]), 1);
        assert!(!d.is_empty());
        assert_eq!(d.get(&x(&[2])), Some(&1));
        assert_eq!(d.get(&x(&[3])), None);
        assert_eq!(d.lookup(&x(&[2]), None), Some((1, Hit::Exact)));
        assert_eq!(d.lookup(&x(&[3]), None), None);
        assert_eq!(
            d.lookup_facts(&[1, 1, 1, 2]),
            None,
            "nothing memoized without facts"
        );
        d.insert(x(&[2]), 5);
        assert_eq!(d.len(), 1);
        assert_eq!(d.lookup(&x(&[2]), None), Some((5, Hit::Exact)));
    }

    #[test]
    fn inexact_picks_most_specific() {
        let mut d = DispatchTable::new();
        d.insert(x_shape(Shape::Unknown), "unknown");
        d.insert(x(&[-1, -1]), "any2");
        d.insert(x(&[2, -1]), "2x");
        assert_eq!(d.lookup(&x(&[2, 3]), None), Some(("2x", Hit::Inexact)));
        assert_eq!(d.lookup(&x(&[4, 3]), None), Some(("any2", Hit::Inexact)));
        assert_eq!(d.lookup(&x(&[4]), None), Some(("unknown", Hit::Inexact)));
    }

    #[test]
    fn inexact_tie_breaks() {
        // Two mutually-subtype (equivalent but unequal) keys: the earliest wins.
        let single = TypeRef::new(TensorConstraint::new(
            DTypeSet::of(&[DType::FLOAT]),
            Some(Shape::of(&[-1])),
        ));
        let a = FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(single)
        ]);
        let mut d = DispatchTable::new();
        d.insert(a.clone(), "constraint");
        d.insert(x(&[-1]), "spec");
        assert_eq!(d.lookup(&x(&[3]), None), Some(("constraint", Hit::Inexact)));
        // Incomparable candidates [2, -1] and [-1, 3] for [2, 3]: deterministic greedy pick.
        let mut d = DispatchTable::new();
        d.insert(xy(&[2], &[-1]), "first");
        d.insert(xy(&[-1], &[3]), "second");
        assert_eq!(
            d.lookup(&xy(&[2], &[3]), None),
            Some(("first", Hit::Inexact))
        );
    }

    #[test]
    fn memoization() {
        let mut d = DispatchTable::new();
        d.insert(x(&[-1]), "any");
        let facts = [1, 1, 1, 7];
        assert_eq!(d.lookup_facts(&facts), None);
        assert_eq!(
            d.lookup(&x(&[7]), Some(&facts)),
            Some(("any", Hit::Inexact))
        );
        assert_eq!(d.lookup_facts(&facts), Some(("any", Hit::Inexact)));
        // an exact memo survives inserts; an inexact one does not
        d.insert(x(&[3]), "three");
        assert_eq!(d.lookup_facts(&facts), None);
        let exact = [1, 1, 1, 3];
        assert_eq!(
            d.lookup(&x(&[3]), Some(&exact)),
            Some(("three", Hit::Exact))
        );
        d.insert(x(&[9]), "nine");
        assert_eq!(d.lookup_facts(&exact), Some(("three", Hit::Exact)));
    }

    #[test]
    fn insert_invalidates_inexact_memo_for_more_specific_match() {
        let mut d = DispatchTable::new();
        d.insert(x(&[-1]), "any");
        assert_eq!(
            d.lookup(&x(&[7]), Some(&[1, 1, 1, 7])),
            Some(("any", Hit::Inexact))
        );
        d.insert(x(&[7]), "seven");
        assert_eq!(d.lookup_facts(&[1, 1, 1, 7]), None);
        assert_eq!(
            d.lookup(&x(&[7]), Some(&[1, 1, 1, 7])),
            Some(("seven", Hit::Exact))
        );
    }

    #[test]
    fn memo_is_bounded_by_its_capacity_plus_the_cached_functions() {
        let mut d = DispatchTable::new();
        d.insert(x(&[-1]), 0);
        d.insert(x(&[-1, 5]), 1);
        let exact = [1, 1, 2, 7, 7];
        d.insert(x(&[7, 7]), 2);
        assert_eq!(d.lookup(&x(&[7, 7]), Some(&exact)), Some((2, Hit::Exact)));
        let mut most = 0;
        for i in 0..(2 * MEMO_CAPACITY as i64) {
            d.lookup(&x(&[i]), Some(&[1, 1, 1, i]));
            most = most.max(d.memo.len());
        }
        // The bound is reached, never passed, and clearing keeps the exact entries.
        assert_eq!(most, MEMO_CAPACITY + d.len());
        assert_eq!(d.lookup_facts(&exact), Some((2, Hit::Exact)));
    }

    #[test]
    fn remove_and_clear() {
        let mut d = DispatchTable::new();
        d.insert(x(&[2]), 2);
        d.insert(x(&[-1]), 9);
        d.lookup(&x(&[3]), Some(&[1, 1, 1, 3]));
        d.lookup(&x(&[2]), Some(&[1, 1, 1, 2]));
        assert_eq!(d.remove(&x(&[-1])), Some(9));
        assert_eq!(d.remove(&x(&[-1])), None);
        assert_eq!(d.lookup_facts(&[1, 1, 1, 3]), None);
        assert_eq!(d.lookup_facts(&[1, 1, 1, 2]), Some((2, Hit::Exact)));
        d.insert(x(&[5]), 5);
        assert_eq!(d.clear(), vec![2, 5]);
        assert!(d.is_empty() && d.lookup_facts(&[1, 1, 1, 2]).is_none());
    }

    #[test]
    fn entries_in_insertion_order_and_lru() {
        let mut d = DispatchTable::new();
        for i in 1..=3 {
            d.insert(x(&[i]), i);
        }
        assert_eq!(d.types(), vec![&x(&[1]), &x(&[2]), &x(&[3])]);
        assert_eq!(d.entries().map(|(_, v)| *v).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(d.least_recently_used(), Some(&x(&[1])));
        d.lookup(&x(&[1]), Some(&[1, 1, 1, 1]));
        assert_eq!(d.least_recently_used(), Some(&x(&[2])));
        d.lookup(&x(&[2]), None);
        assert_eq!(d.least_recently_used(), Some(&x(&[3])));
        d.lookup_facts(&[1, 1, 1, 1]);
        d.lookup(&x(&[3]), None);
        assert_eq!(d.least_recently_used(), Some(&x(&[2])));
        assert!(DispatchTable::<i32>::new().least_recently_used().is_none());
    }

    /// The tf.function reduce_retracing loop: lookup, else trace `generalize(call)`.
    #[test]
    fn generalize_reduce_retracing() {
        let mut d = DispatchTable::new();
        let mut traced = Vec::new();
        for call in [x(&[2]), x(&[3]), x(&[4]), x(&[2, 2])] {
            if d.lookup(&call, None).is_none() {
                let g = d.generalize(&call);
                traced.push(g.to_string());
                d.insert(g, traced.len());
            }
        }
        assert_eq!(
            traced,
            [
                "(x: TensorSpec(FLOAT, [2]))",
                "(x: TensorSpec(FLOAT, [-1]))",
                "(x: TensorSpec(FLOAT, <unknown>))",
            ]
        );
        assert_eq!(
            d.lookup(&x(&[4]), None),
            Some((2, Hit::Inexact)),
            "[4] still hits the most specific, [-1]"
        );
        assert_eq!(d.len(), 3);
    }
}
