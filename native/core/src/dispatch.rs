//! [`DispatchTable`]: concrete functions keyed by their traced [`FunctionType`], looked up
//! by a call's monomorphic type (exactly, or via the most specific cached supertype).
//!
//! A miss costs the same whatever the number of cached signatures: exact keys are hashed, and
//! only signatures that can be supertypes of the call are compared with it ([`index`]).

mod index;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::function_type::FunctionType;
use crate::parameter::ParamKind;
use crate::trace_type::TypeRef;
use index::Class;

/// How many of the most recent signatures (overall, of the call's structure, and of open
/// structure) a retrace is explained against: the closest signature among all of them would
/// cost a scan of the whole cache on every miss.
pub const EXPLAIN_CANDIDATES: usize = 32;

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
    class: Class,
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
    /// By insertion sequence number, so iteration is in insertion order.
    entries: BTreeMap<u64, Entry<V>>,
    by_type: HashMap<FunctionType, u64>,
    /// Signatures that are neither minimal nor open, by structure key (sequence numbers).
    buckets: HashMap<u64, BTreeSet<u64>>,
    /// Signatures of open structure: candidates for every miss.
    open: BTreeSet<u64>,
    /// For each Java-value parameter, how many cached signatures have each value: counted as
    /// signatures come and go, so the warning about many values needs no scan.
    java_values: HashMap<String, HashMap<TypeRef, usize>>,
    memo: HashMap<Box<[i64]>, Memo>,
    next_seq: u64,
    /// Bumped by every change of the cached signatures (see [`Self::generation`]).
    generation: u64,
    clock: u64,
    /// The first cached supertype in insertion order serves a call, not the most specific (see
    /// [`Self::use_saved_order`]).
    saved_order: bool,
}

impl<V: Clone> Default for DispatchTable<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Clone> DispatchTable<V> {
    pub fn new() -> Self {
        DispatchTable {
            entries: BTreeMap::new(),
            by_type: HashMap::new(),
            buckets: HashMap::new(),
            open: BTreeSet::new(),
            java_values: HashMap::new(),
            memo: HashMap::new(),
            next_seq: 0,
            generation: 0,
            clock: 0,
            saved_order: false,
        }
    }

    /// From now on a call is served by the first signature, in insertion order, that accepts it
    /// (its own type or a supertype), as Python's `tf.saved_model.load` serves a restored
    /// function's calls from its concrete functions in saved order
    /// (`function_deserialization.py`); for a function restored from Python's SavedModel,
    /// whose signatures are inserted in that order.
    pub fn use_saved_order(&mut self) {
        self.saved_order = true;
        self.memo.clear();
        self.generation += 1;
    }

    fn touch(&mut self, seq: u64) -> Option<&Entry<V>> {
        self.clock += 1;
        let clock = self.clock;
        let e = self.entries.get_mut(&seq)?;
        e.last_used = clock;
        Some(e)
    }

    /// Changes whenever a signature is inserted, replaced or removed: a lookup that missed at
    /// one generation misses again until it changes.
    pub fn generation(&self) -> u64 {
        self.generation
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
        let exact = self.by_type.get(call).copied();
        let (seq, hit) = match exact {
            _ if self.saved_order => {
                // The earliest inserted of the call's own signature and its supertypes.
                let first = self.supertype_candidates(call).first().map(|e| e.seq);
                let seq = exact.into_iter().chain(first).min()?;
                (seq, if Some(seq) == exact { Hit::Exact } else { Hit::Inexact })
            }
            Some(seq) => (seq, Hit::Exact),
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

    /// The cached signatures that can be strict supertypes of `call`, in insertion order.
    fn supertype_candidates(&self, call: &FunctionType) -> Vec<&Entry<V>> {
        let class = index::classify(call);
        let seqs: Vec<u64> = match (class.concrete, class.key) {
            // A minimal signature serves only an equal call (an exact hit); a signature of
            // another fixed structure cannot serve this one.
            (true, Some(key)) => {
                let bucket = self.buckets.get(&key).into_iter().flatten();
                let mut seqs: Vec<u64> = bucket.chain(&self.open).copied().collect();
                seqs.sort_unstable();
                seqs
            }
            // A concrete call of open structure (unknown rank, an untyped parameter) can only be
            // served by an open signature.
            (true, None) => self.open.iter().copied().collect(),
            // A call with constraints in it: compare with everything.
            (false, _) => return self.entries.values().filter(|e| call.is_subtype_of(&e.ty)).collect(),
        };
        seqs.iter().filter_map(|s| self.entries.get(s)).filter(|e| call.is_subtype_of(&e.ty)).collect()
    }

    fn most_specific_supertype(&self, call: &FunctionType) -> Option<u64> {
        pick_most_specific(self.supertype_candidates(call))
    }

    /// [`Self::most_specific_supertype`] by comparing `call` with every entry: what the index
    /// must agree with.
    #[cfg(test)]
    fn most_specific_supertype_by_full_scan(&self, call: &FunctionType) -> Option<u64> {
        pick_most_specific(self.entries.values().filter(|e| call.is_subtype_of(&e.ty)).collect())
    }

    /// The cached signatures to explain a miss of `call` against (see [`EXPLAIN_CANDIDATES`]),
    /// in insertion order: the most recent ones, the most recent of the call's structure and
    /// the most recent of open structure.
    pub fn explain_candidates(&self, call: &FunctionType) -> Vec<&FunctionType> {
        let mut seqs: Vec<u64> = self.entries.keys().rev().take(EXPLAIN_CANDIDATES).copied().collect();
        if let Some(bucket) = index::classify(call).key.and_then(|k| self.buckets.get(&k)) {
            seqs.extend(bucket.iter().rev().take(EXPLAIN_CANDIDATES));
        }
        seqs.extend(self.open.iter().rev().take(EXPLAIN_CANDIDATES));
        seqs.sort_unstable();
        seqs.dedup();
        seqs.iter().filter_map(|s| self.entries.get(s)).map(|e| &e.ty).collect()
    }

    /// Adds (or replaces) the function for `ty` and returns the one it replaced, so the caller
    /// can release it after its lock (releasing a concrete function calls into TensorFlow).
    /// Inexact memo entries are dropped: the new entry may be a more specific match for them.
    pub fn insert(&mut self, ty: FunctionType, v: V) -> Option<V> {
        self.memo.retain(|_, m| m.hit == Hit::Exact);
        self.clock += 1;
        self.generation += 1;
        if let Some(&seq) = self.by_type.get(&ty) {
            let e = self
                .entries
                .get_mut(&seq)
                .expect("by_type and entries agree");
            e.last_used = self.clock;
            return Some(std::mem::replace(&mut e.value, v));
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let class = index::classify(&ty);
        match class.key {
            _ if class.minimal => {}
            Some(key) => {
                self.buckets.entry(key).or_default().insert(seq);
            }
            None => {
                self.open.insert(seq);
            }
        }
        for (p, t) in java_values(&ty) {
            *self.java_values.entry(p.to_owned()).or_default().entry(t.clone()).or_default() += 1;
        }
        self.by_type.insert(ty.clone(), seq);
        self.entries.insert(seq, Entry { ty, value: v, seq, last_used: self.clock, class });
        None
    }

    /// Removes the function for exactly `ty`, and every memo entry that led to it.
    pub fn remove(&mut self, ty: &FunctionType) -> Option<V> {
        let seq = self.by_type.remove(ty)?;
        self.generation += 1;
        self.memo.retain(|_, m| m.seq != seq);
        let e = self.entries.remove(&seq)?;
        for (p, t) in java_values(&e.ty) {
            if let Some(values) = self.java_values.get_mut(p) {
                if let Some(n) = values.get_mut(t) {
                    *n -= 1;
                    if *n == 0 {
                        values.remove(t);
                    }
                }
            }
        }
        match e.class.key {
            _ if e.class.minimal => {}
            Some(key) => {
                if let Some(b) = self.buckets.get_mut(&key) {
                    b.remove(&seq);
                    if b.is_empty() {
                        self.buckets.remove(&key);
                    }
                }
            }
            None => {
                self.open.remove(&seq);
            }
        }
        Some(e.value)
    }

    /// Empties the table, returning the values in insertion order (e.g. to release them).
    pub fn clear(&mut self) -> Vec<V> {
        let all = std::mem::take(&mut self.entries);
        self.generation += 1;
        self.by_type.clear();
        self.buckets.clear();
        self.open.clear();
        self.java_values.clear();
        self.memo.clear();
        all.into_values().map(|e| e.value).collect()
    }

    /// The function cached for exactly `ty`.
    pub fn get(&self, ty: &FunctionType) -> Option<&V> {
        self.by_type.get(ty).and_then(|seq| self.entries.get(seq)).map(|e| &e.value)
    }

    /// How many distinct values of Java parameter `parameter` the cached signatures have.
    pub fn distinct_java_values(&self, parameter: &str) -> usize {
        self.java_values.get(parameter).map_or(0, HashMap::len)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Cached (type, value) pairs in insertion order.
    pub fn entries(&self) -> impl Iterator<Item = (&FunctionType, &V)> {
        self.entries.values().map(|e| (&e.ty, &e.value))
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

/// The typed Java-value parameters of `ty` with their values.
fn java_values(ty: &FunctionType) -> impl Iterator<Item = (&str, &TypeRef)> {
    ty.parameters
        .iter()
        .filter(|p| p.kind == ParamKind::Java)
        .filter_map(|p| p.type_constraint.as_ref().map(|t| (p.name.as_str(), t)))
}

/// Among `candidates` (supertypes of a call, in insertion order), the one that is a subtype of
/// all the others (earliest on ties); if they are incomparable, a TF-style greedy scan in
/// insertion order keeps replacing the pick with any more specific candidate.
fn pick_most_specific<V>(candidates: Vec<&Entry<V>>) -> Option<u64> {
    let below_all = candidates.iter().find(|c| candidates.iter().all(|o| c.ty.is_subtype_of(&o.ty)));
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
