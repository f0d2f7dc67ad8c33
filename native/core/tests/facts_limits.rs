//! Exact limits of what the core accepts from the Java side and keeps in memory: the facts
//! nesting depth (lists and maps alike), the bound on the dispatch memo, and the recency order
//! that picks which concrete function a bounded cache evicts.

use polyfn_core::*;

const KEY: i64 = 10;

fn tables() -> (StringTable, LiteralTable) {
    let mut s = StringTable::new();
    s.insert(KEY, "k");
    let mut l = LiteralTable::new();
    l.insert(7, "3", "java.lang.Integer", Some("3".to_owned()));
    (s, l)
}

/// A scalar FLOAT tensor.
fn leaf() -> Vec<i64> {
    vec![TAG_TENSOR, DType::FLOAT.0 as i64, 0]
}

/// `levels` one-element containers around a scalar tensor; `map_at(i)` picks a map for level i.
fn nest(levels: usize, map_at: impl Fn(usize) -> bool) -> Vec<i64> {
    let mut facts = Vec::new();
    for i in 0..levels {
        if map_at(i) {
            facts.extend([TAG_MAP, 1, KEY]);
        } else {
            facts.extend([TAG_LIST, 1]);
        }
    }
    facts.extend(leaf());
    facts
}

fn decode_all(facts: &[i64]) -> Result<TypeRef, BindError> {
    let (s, l) = tables();
    let mut pos = 0;
    let t = decode_value(facts, &mut pos, &s, &l)?;
    assert_eq!(pos, facts.len(), "a decoded value consumes exactly its facts");
    Ok(t)
}

fn assert_too_deep(r: Result<TypeRef, BindError>) {
    match r {
        Err(BindError::BadFacts(m)) => assert!(m.contains("nesting deeper than 64"), "{m}"),
        other => panic!("expected a nesting error, got {other:?}"),
    }
}

/// A value may sit inside at most 64 containers: the 64th level decodes, the 65th is refused,
/// whether the containers are lists, maps or both.
#[test]
fn nesting_limit_is_exactly_64_containers_for_lists_and_maps() {
    let kinds: [(&str, fn(usize) -> bool); 4] = [
        ("lists", |_| false),
        ("maps", |_| true),
        ("alternating", |i| i % 2 == 0),
        ("lists then one map", |i| i == 63),
    ];
    for (name, map_at) in kinds {
        let ok = decode_all(&nest(64, map_at)).unwrap_or_else(|e| panic!("{name}: 64 levels: {e}"));
        // the innermost value survives the trip
        let mut t = ok;
        for i in 0..64 {
            t = if map_at(i) {
                t.downcast_ref::<MapType>().unwrap_or_else(|| panic!("{name}: map at {i}")).entries["k"].clone()
            } else {
                t.downcast_ref::<ListType>().unwrap_or_else(|| panic!("{name}: list at {i}")).elements[0].clone()
            };
        }
        assert_eq!(t, TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::scalar())), "{name}");
        assert_too_deep(decode_all(&nest(65, map_at)));
    }
    // the 65th map level alone is enough
    assert_too_deep(decode_all(&nest(65, |i| i == 64)));
    // far deeper input fails the same way, quickly and without blowing the stack
    assert_too_deep(decode_all(&nest(100_000, |i| i % 3 == 0)));
}

#[test]
fn nesting_limit_applies_inside_calls() {
    let (s, l) = tables();
    let params = [Parameter::new("x", ParamKind::Tensor), Parameter::new("xs", ParamKind::List)];
    let call = |levels: usize| [leaf(), nest(levels, |i| i % 2 == 1)].concat();
    let ok = decode_call(&params, &call(64), &s, &l).unwrap();
    assert_eq!(ok.parameters.len(), 2);
    assert!(matches!(decode_call(&params, &call(65), &s, &l), Err(BindError::BadFacts(m)) if m.contains("nesting")));
}

fn x(dims: &[i64]) -> FunctionType {
    FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor)
        .with_constraint(TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(dims))))])
}

fn facts(dims: &[i64]) -> Vec<i64> {
    let mut f = vec![TAG_TENSOR, DType::FLOAT.0 as i64, dims.len() as i64];
    f.extend_from_slice(dims);
    f
}

/// The memo of facts buffers holds at most 4096 entries beyond one per cached function: with
/// every cached function memoized exactly, that is 4096 call shapes served by a more general
/// signature; the next one clears the inexact memos and keeps the exact ones. How many
/// functions are cached must not change the inexact allowance.
#[test]
fn dispatch_memo_keeps_4096_inexact_shapes_and_every_exact_one() {
    for exact in [1i64, 3] {
        let mut d = DispatchTable::new();
        d.insert(x(&[-1]), -1);
        assert_eq!(d.lookup(&x(&[-1]), Some(&facts(&[-1]))), Some((-1, Hit::Exact)));
        for e in 0..exact {
            d.insert(x(&[e]), e);
            assert_eq!(d.lookup(&x(&[e]), Some(&facts(&[e]))), Some((e, Hit::Exact)));
        }
        let first = facts(&[1000]);
        for i in 0..4096 {
            let dims = [1000 + i];
            assert_eq!(d.lookup(&x(&dims), Some(&facts(&dims))), Some((-1, Hit::Inexact)));
            // nothing is dropped before the bound
            assert_eq!(d.lookup_facts(&first), Some((-1, Hit::Inexact)), "exact={exact} i={i}");
        }
        let last = facts(&[1000 + 4095]);
        assert_eq!(d.lookup_facts(&last), Some((-1, Hit::Inexact)));
        // the 4097th inexact shape clears the inexact memos, then is memoized itself
        let next = [1000 + 4096];
        assert_eq!(d.lookup(&x(&next), Some(&facts(&next))), Some((-1, Hit::Inexact)));
        assert_eq!(d.lookup_facts(&first), None, "exact={exact}");
        assert_eq!(d.lookup_facts(&last), None, "exact={exact}");
        assert_eq!(d.lookup_facts(&facts(&next)), Some((-1, Hit::Inexact)));
        assert_eq!(d.lookup_facts(&facts(&[-1])), Some((-1, Hit::Exact)));
        for e in 0..exact {
            assert_eq!(d.lookup_facts(&facts(&[e])), Some((e, Hit::Exact)), "exact memo {e} kept");
        }
        // the cleared shapes still dispatch (slowly) to the same function
        assert_eq!(d.lookup(&x(&[1000]), Some(&first)), Some((-1, Hit::Inexact)));
    }
}

/// A more specific signature inserted later takes over calls the memo sent to a general one.
#[test]
fn memo_never_serves_a_stale_inexact_choice() {
    let mut d = DispatchTable::new();
    d.insert(x(&[-1]), "any");
    assert_eq!(d.lookup(&x(&[5]), Some(&facts(&[5]))), Some(("any", Hit::Inexact)));
    d.insert(x(&[5]), "five");
    assert_eq!(d.lookup_facts(&facts(&[5])), None);
    assert_eq!(d.lookup(&x(&[5]), Some(&facts(&[5]))), Some(("five", Hit::Exact)));
    assert_eq!(d.remove(&x(&[5])), Some("five"));
    assert_eq!(d.lookup_facts(&facts(&[5])), None, "a removed function is not served from the memo");
    assert_eq!(d.lookup(&x(&[5]), None), Some(("any", Hit::Inexact)));
}

/// A function traced after another was last used is more recent than it. Ties would leave the
/// eviction choice to hash order, so the check is repeated over fresh tables.
#[test]
fn least_recently_used_counts_inserts_and_lookups_in_order() {
    for _ in 0..32 {
        let mut d = DispatchTable::new();
        assert!(d.is_empty() && d.least_recently_used().is_none());
        d.insert(x(&[1]), 1);
        assert!(!d.is_empty());
        assert_eq!(d.lookup(&x(&[1]), Some(&facts(&[1]))), Some((1, Hit::Exact)));
        d.insert(x(&[2]), 2);
        assert_eq!(d.least_recently_used(), Some(&x(&[1])), "inserted after the lookup, [2] is newer");
        assert_eq!(d.lookup_facts(&facts(&[1])), Some((1, Hit::Exact)));
        assert_eq!(d.least_recently_used(), Some(&x(&[2])));
        // re-inserting an existing signature replaces its function and makes it the newest
        d.insert(x(&[2]), 20);
        assert_eq!(d.least_recently_used(), Some(&x(&[1])));
        assert_eq!(d.len(), 2);
        assert_eq!(d.lookup(&x(&[2]), None), Some((20, Hit::Exact)));
        // a function found through a more general one is that one's use
        d.insert(x(&[-1]), -1);
        assert_eq!(d.lookup(&x(&[7]), None), Some((-1, Hit::Inexact)));
        d.lookup(&x(&[2]), None);
        assert_eq!(d.least_recently_used(), Some(&x(&[1])));
        d.lookup(&x(&[1]), None);
        assert_eq!(d.least_recently_used(), Some(&x(&[-1])));
    }
}

/// A length, rank or count that cannot fit in the rest of the buffer is refused where it is
/// read, naming what it was and where, before any element is decoded.
#[test]
fn lengths_that_cannot_fit_are_refused_where_they_are_read() {
    let err = |facts: &[i64]| match decode_all(facts) {
        Err(BindError::BadFacts(m)) => m,
        other => panic!("{facts:?}: {other:?}"),
    };
    assert_eq!(err(&[TAG_LIST, 5, TAG_LITERAL, 7]), "bad list length 5 at position 1");
    assert_eq!(err(&[TAG_LIST, 1, TAG_LIST, 3, TAG_LITERAL, 7]), "bad list length 3 at position 3");
    assert_eq!(err(&[TAG_LIST, -1]), "bad list length -1 at position 1");
    assert_eq!(err(&[TAG_MAP, 2, KEY, TAG_LITERAL, 7]), "bad map length 2 at position 1");
    assert_eq!(err(&[TAG_TENSOR, 1, 3, 1, 2]), "bad rank 3 at position 2");
    assert_eq!(err(&[TAG_LIST, 1, TAG_TENSOR, 1, 4, 1, 2]), "bad rank 4 at position 4");
    assert_eq!(err(&[TAG_VARIABLE, 1, 2, 1]), "bad rank 2 at position 2");
    assert_eq!(err(&[TAG_LIST, i64::MAX]), format!("bad list length {} at position 1", i64::MAX));
    // what fits exactly is decoded
    assert!(decode_all(&[TAG_TENSOR, 1, 2, 1, 2]).is_ok());
    assert!(decode_all(&[TAG_MAP, 1, KEY, TAG_LITERAL, 7]).is_ok());
    assert!(decode_all(&[TAG_LIST, 2, TAG_LITERAL, 7, TAG_LITERAL, 7]).is_ok());
}
