//! Nested arguments through the whole protocol (facts → dispatch → trace), and fidelity with
//! TensorFlow: the call sequences of `fidelity/nested_trace_counts.py`, replayed here, must trace
//! as many times as Python's `tf.function` did (its counts are committed next to the script, so
//! this test runs without Python).

mod common;

use common::*;
use polyfn_core::*;
use serde_json::Value;
use std::collections::HashMap;

/// Writes the facts of a scenario's nest, interning keys and Python ints in `f`.
struct Facts<'a> {
    f: &'a Fn,
    strings: HashMap<String, i64>,
    literals: HashMap<i64, i64>,
}

impl Facts<'_> {
    fn value(&mut self, v: &Value, out: &mut Vec<i64>) {
        match v {
            Value::Array(items) => {
                out.extend([TAG_LIST, items.len() as i64]);
                items.iter().for_each(|i| self.value(i, out));
            }
            Value::Object(m) if m.contains_key("t") => {
                let dims: Vec<i64> = m["t"].as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect();
                let dtype = match m.get("d").and_then(Value::as_str) {
                    Some("int32") => I,
                    _ => F,
                };
                out.extend(tensor(dtype, &dims));
            }
            Value::Object(m) if m.contains_key("v") => {
                let n = m["v"].as_i64().unwrap();
                let next = 1000 + self.literals.len() as i64;
                let id = *self.literals.entry(n).or_insert(next);
                self.f.register_literal(id, &n.to_string(), "java.lang.Integer", Some(&n.to_string()));
                out.extend(literal(id));
            }
            Value::Object(m) => {
                out.extend([TAG_MAP, m.len() as i64]);
                for (k, v) in m {
                    let next = 2000 + self.strings.len() as i64;
                    let id = *self.strings.entry(k.clone()).or_insert(next);
                    self.f.register_string(id, k);
                    out.push(id);
                    self.value(v, out);
                }
            }
            other => panic!("not a nest: {other}"),
        }
    }
}

fn nest_arg(facts: Vec<i64>) -> Vec<Arg> {
    vec![arg("xs", ParamKind::Nest, TypeRef::new(NestConstraint), facts)]
}

fn replay(calls: &[Value], reduce_retracing: bool) -> Vec<u64> {
    let f = new_fn(Options { reduce_retracing, ..Options::default() });
    let mut w = Facts { f: &f, strings: HashMap::new(), literals: HashMap::new() };
    calls
        .iter()
        .map(|c| {
            let mut facts = Vec::new();
            w.value(c, &mut facts);
            call(&f, &nest_arg(facts));
            f.stats().traces
        })
        .collect()
}

#[test]
fn nested_lists_and_dicts_trace_as_often_as_in_tensorflow() {
    let doc: Value = serde_json::from_str(include_str!("fidelity/nested_trace_counts.json")).unwrap();
    assert!(doc["tensorflow"].as_str().unwrap().starts_with("2.21"), "counts recorded with TensorFlow 2.21");
    let scenarios = doc["scenarios"].as_object().unwrap();
    assert!(scenarios.len() >= 5);
    for (name, s) in scenarios {
        let calls = s["calls"].as_array().unwrap();
        let expect = |k: &str| s[k].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect::<Vec<_>>();
        assert_eq!(replay(calls, false), expect("exact"), "{name}, exact tracing");
        assert_eq!(replay(calls, true), expect("reduce_retracing"), "{name}, reduce-retracing");
    }
}

#[test]
fn a_record_nest_generalizes_its_components_independently_and_names_the_path() {
    let f = new_fn(Options { reduce_retracing: true, ..Options::default() });
    f.register_string(300, "a.Batch");
    f.register_string(301, "features");
    f.register_string(302, "labels");
    let batch = |rows: i64, labels: i64| {
        let mut facts = vec![TAG_RECORD, 300, 2, 301];
        facts.extend(tensor(F, &[rows, 4]));
        facts.push(302);
        facts.extend(list_of(&[tensor(I, &[labels])]));
        nest_arg(facts)
    };
    assert_eq!(call(&f, &batch(2, 2)), "(xs: Batch(features: TensorSpec(FLOAT, [2, 4]), labels: List[TensorSpec(INT32, [2])]))");
    call(&f, &batch(3, 2));
    let h = f.history();
    assert_eq!(h[1].reason, "xs.features: TensorSpec(FLOAT, [3, 4]) does not match TensorSpec(FLOAT, [2, 4]) at dim 0");
    assert_eq!(call(&f, &batch(5, 2)), "(xs: Batch(features: TensorSpec(FLOAT, [-1, 4]), labels: List[TensorSpec(INT32, [2])]))");
    call(&f, &batch(5, 7));
    assert_eq!(call(&f, &batch(9, 8)), "(xs: Batch(features: TensorSpec(FLOAT, [-1, 4]), labels: List[TensorSpec(INT32, [-1])]))");
    assert_eq!(f.stats().traces, 3);
    // Another record class at the same place is another structure.
    f.register_string(303, "a.Other");
    let mut other = batch(2, 2);
    other[0].facts[1] = 303;
    assert!(call(&f, &other).starts_with("(xs: Other("));
    // A tensor where a nest is declared is refused, naming the parameter.
    let e = f.lookup::<String>(&tensor(F, &[2])).unwrap_err().to_string();
    assert!(e.contains("xs"), "{e}");
}

#[test]
fn a_ragged_composite_traces_through_the_protocol_with_counts_generalizing_independently() {
    let f = new_fn(Options { reduce_retracing: true, ..Options::default() });
    f.register_string(400, "Ragged");
    f.register_string(401, "values");
    f.register_string(402, "row_splits");
    let ragged = |nvals: i64, nrows: i64| {
        let mut facts = vec![TAG_COMPOSITE, 400, F.0 as i64, 2, nrows, -1, -1, 2, 401];
        facts.extend(tensor(F, &[nvals]));
        facts.push(402);
        facts.extend(tensor(DType::INT64, &[nrows + 1]));
        vec![arg("r", ParamKind::Nest, TypeRef::new(NestConstraint), facts)]
    };
    assert_eq!(call(&f, &ragged(5, 2)), "(r: Ragged(FLOAT, [2, -1]; values: [5], row_splits: [3]))");
    assert_eq!(call(&f, &ragged(3, 2)), "(r: Ragged(FLOAT, [2, -1]; values: [-1], row_splits: [3]))");
    assert_eq!(call(&f, &ragged(9, 2)), "(r: Ragged(FLOAT, [2, -1]; values: [-1], row_splits: [3]))");
    assert_eq!(f.stats().traces, 2);
    assert_eq!(call(&f, &ragged(9, 4)), "(r: Ragged(FLOAT, [-1, -1]; values: [-1], row_splits: [-1]))");
    assert_eq!(call(&f, &ragged(1, 7)), "(r: Ragged(FLOAT, [-1, -1]; values: [-1], row_splits: [-1]))");
    assert_eq!(f.stats().traces, 3);
    // A component that is not a tensor is malformed facts, not a panic.
    let mut bad = ragged(1, 1);
    bad[0].facts[9] = TAG_LIST;
    assert!(f.lookup::<String>(&bad[0].facts).is_err());
}
