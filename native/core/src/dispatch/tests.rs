//! Tests of the dispatch table: lookups, memo, order, and the index against a full scan.
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

mod index_agrees_with_a_full_scan {
    use super::*;
    use proptest::prelude::*;

    /// A tensor leaf: a spec of known or unknown shape, or a constraint (sometimes a family).
    fn tensor() -> impl Strategy<Value = TypeRef> {
        let dims = prop::collection::vec(prop_oneof![Just(-1i64), 1i64..3], 0..3);
        let shape = prop_oneof![4 => dims.prop_map(|d| Shape::of(&d)), 1 => Just(Shape::Unknown)];
        let dtype = prop_oneof![Just(DType::FLOAT), Just(DType::INT32)];
        prop_oneof![
            6 => (dtype.clone(), shape.clone()).prop_map(|(d, s)| TypeRef::new(TensorSpec::new(d, s))),
            1 => (prop::bool::ANY, prop::option::of(shape)).prop_map(|(family, s)| {
                let dtypes = if family { DTypeSet::of(&[DType::FLOAT, DType::INT32]) } else { DTypeSet::of(&[DType::FLOAT]) };
                TypeRef::new(TensorConstraint::new(dtypes, s))
            }),
        ]
    }

    /// A Java value: one of three literals, or the class constraint.
    fn literal() -> impl Strategy<Value = TypeRef> {
        prop_oneof![
            4 => (1u64..4).prop_map(|v| TypeRef::new(Literal::new(v, v.to_string(), "java.lang.Integer"))),
            1 => Just(TypeRef::new(LiteralConstraint::new("java.lang.Integer"))),
        ]
    }

    /// Signatures `(x: tensor, xs: list of tensors, n: literal)`, any of them sometimes untyped.
    fn signature() -> impl Strategy<Value = FunctionType> {
        let list = prop::collection::vec(tensor(), 1..3).prop_map(|e| TypeRef::new(ListType::new(e)));
        (prop::option::weighted(0.9, tensor()), prop::option::weighted(0.9, list), prop::option::weighted(0.9, literal()))
            .prop_map(|(x, xs, n)| {
                let p = |name: &str, kind, t: Option<TypeRef>| {
                    let p = Parameter::new(name, kind);
                    match t {
                        Some(t) => p.with_constraint(t),
                        None => p,
                    }
                };
                FunctionType::new(vec![p("x", ParamKind::Tensor, x), p("xs", ParamKind::List, xs), p("n", ParamKind::Java, n)])
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Whatever is cached (and removed again), the indexed lookup picks exactly the signature
        /// the full scan picks, for calls of every kind (concrete or not).
        #[test]
        fn the_indexed_pick_is_the_full_scans(
            cached in prop::collection::vec(signature(), 0..24),
            removed in prop::collection::vec(0usize..24, 0..4),
            calls in prop::collection::vec(signature(), 1..16),
        ) {
            let mut d = DispatchTable::new();
            for (i, t) in cached.iter().enumerate() {
                d.insert(t.clone(), i);
            }
            for r in removed {
                if let Some(t) = cached.get(r) {
                    d.remove(t);
                }
            }
            for call in calls.iter().chain(&cached) {
                let indexed = d.by_type.get(call).copied().or_else(|| d.most_specific_supertype(call));
                let scanned = d.by_type.get(call).copied().or_else(|| d.most_specific_supertype_by_full_scan(call));
                prop_assert_eq!(indexed, scanned, "call {}", call);
            }
        }
    }
}

#[test]
fn a_miss_compares_the_call_with_no_minimal_or_differently_structured_signature() {
    let mut d = DispatchTable::new();
    for i in 0..10_000 {
        d.insert(x(&[i]), i);
    }
    d.insert(x(&[-1, 4]), -1);
    d.insert(x_shape(Shape::Unknown), -2);
    // Only the open signature is a candidate for a new vector shape; the rank-2 one is in another
    // bucket and the 10,000 fully defined ones can only be exact hits.
    assert_eq!(d.supertype_candidates(&x(&[20_000])).len(), 1);
    assert_eq!(d.lookup(&x(&[20_000]), None), Some((-2, Hit::Inexact)));
    assert_eq!(d.lookup(&x(&[3, 4]), None), Some((-1, Hit::Inexact)));
    assert_eq!(d.lookup(&x(&[7]), None), Some((7, Hit::Exact)));
    // Explanations look at a bounded set: the most recent, and those of the call's structure.
    let why = d.explain_candidates(&x(&[3, 4]));
    assert!(why.len() <= 3 * EXPLAIN_CANDIDATES && why.contains(&&x(&[-1, 4])), "{}", why.len());
    assert_eq!(why.last(), Some(&&x_shape(Shape::Unknown)), "in insertion order");
}

#[test]
fn the_generation_changes_with_every_change_of_the_signatures() {
    let mut d = DispatchTable::new();
    let g0 = d.generation();
    d.insert(x(&[1]), 1);
    let g1 = d.generation();
    d.lookup(&x(&[1]), Some(&[1, 1, 1, 1]));
    assert_eq!(d.generation(), g1, "a lookup changes nothing");
    d.insert(x(&[1]), 2);
    let g2 = d.generation();
    d.remove(&x(&[1]));
    let g3 = d.generation();
    d.clear();
    assert!(g0 < g1 && g1 < g2 && g2 < g3 && g3 < d.generation());
}

#[test]
fn distinct_java_values_are_counted_as_signatures_come_and_go() {
    let n = |v: u64, d: &[i64]| {
        let mut t = x(d);
        t.parameters.push(Parameter::new("n", ParamKind::Java).with_constraint(TypeRef::new(Literal::new(v, v.to_string(), "java.lang.Integer"))));
        t
    };
    let mut d = DispatchTable::new();
    d.insert(n(1, &[2]), 0);
    d.insert(n(1, &[3]), 0);
    d.insert(n(2, &[2]), 0);
    d.insert(n(2, &[2]), 1); // a replacement is not a new signature
    assert_eq!((d.distinct_java_values("n"), d.distinct_java_values("x")), (2, 0));
    d.remove(&n(1, &[2]));
    assert_eq!(d.distinct_java_values("n"), 2, "value 1 is still in a signature");
    d.remove(&n(1, &[3]));
    assert_eq!(d.distinct_java_values("n"), 1);
    d.clear();
    assert_eq!(d.distinct_java_values("n"), 0);
}

#[test]
fn replacing_a_signatures_function_counts_as_its_most_recent_use() {
    let mut d = DispatchTable::new();
    d.insert(x(&[1]), 1);
    d.insert(x(&[2]), 2);
    assert_eq!(d.insert(x(&[1]), 10), Some(1));
    assert_eq!(d.least_recently_used(), Some(&x(&[2])));
    assert_eq!(d.entries().map(|(_, v)| *v).collect::<Vec<_>>(), [10, 2]);
}

#[test]
fn the_index_holds_no_minimal_signature_and_forgets_removed_ones() {
    let indexed = |d: &DispatchTable<i32>| (d.buckets.values().map(|b| b.len()).sum::<usize>(), d.open.len());
    let mut d = DispatchTable::new();
    d.insert(x(&[1]), 1);
    d.insert(x(&[2, 3]), 2);
    assert_eq!(indexed(&d), (0, 0), "fully defined signatures are found by hashing only");
    d.insert(x(&[-1]), 3);
    d.insert(x(&[-1, 3]), 4);
    d.insert(x_shape(Shape::Unknown), 5);
    assert_eq!(indexed(&d), (2, 1));
    assert_eq!(d.remove(&x(&[-1])), Some(3));
    assert_eq!(d.remove(&x_shape(Shape::Unknown)), Some(5));
    assert_eq!(indexed(&d), (1, 0));
    assert_eq!(d.remove(&x(&[-1, 3])), Some(4));
    assert!(d.buckets.is_empty(), "an emptied bucket is dropped");
    assert_eq!(d.remove(&x(&[1])), Some(1));
    assert_eq!(d.lookup(&x(&[2, 3]), None), Some((2, Hit::Exact)));
}

/// In saved order, the first signature that accepts a call serves it, even where a later one is
/// more specific or the call's own type, as Python's loader serves a restored function.
#[test]
fn saved_order_serves_a_call_from_the_first_signature_that_accepts_it() {
    let mut d = DispatchTable::new();
    d.use_saved_order();
    d.insert(x(&[-1]), "any");
    d.insert(x(&[3]), "three");
    d.insert(x(&[2]), "two");
    assert_eq!(d.lookup(&x(&[3]), Some(&[1, 1, 1, 3])), Some(("any", Hit::Inexact)), "the earlier supertype");
    assert_eq!(d.lookup_facts(&[1, 1, 1, 3]), Some(("any", Hit::Inexact)), "memoized as served");
    let mut specific_first = DispatchTable::new();
    specific_first.use_saved_order();
    specific_first.insert(x(&[3]), "three");
    specific_first.insert(x(&[-1]), "any");
    assert_eq!(specific_first.lookup(&x(&[3]), None), Some(("three", Hit::Exact)));
    assert_eq!(specific_first.lookup(&x(&[4]), None), Some(("any", Hit::Inexact)));
    assert_eq!(specific_first.lookup(&x(&[2, 2]), None), None, "no signature accepts it");
    // Switching to saved order forgets what was memoized under the other rule.
    let mut switched = DispatchTable::new();
    switched.insert(x(&[-1]), "any");
    switched.insert(x(&[3]), "three");
    assert_eq!(switched.lookup(&x(&[3]), Some(&[1, 1, 1, 3])), Some(("three", Hit::Exact)));
    let before = switched.generation();
    switched.use_saved_order();
    assert_ne!(switched.generation(), before, "a remembered miss is looked up again");
    assert_eq!(switched.lookup_facts(&[1, 1, 1, 3]), None, "the memo is cleared");
    assert_eq!(switched.lookup(&x(&[3]), None), Some(("any", Hit::Inexact)));
    let mut most_specific = DispatchTable::new();
    most_specific.insert(x(&[-1]), "any");
    most_specific.insert(x(&[3]), "three");
    assert_eq!(most_specific.lookup(&x(&[3]), None), Some(("three", Hit::Exact)), "otherwise the most specific");
}
