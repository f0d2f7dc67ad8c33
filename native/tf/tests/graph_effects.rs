//! `may_have_effects`: the one native pass that lets a trace skip Java's walk over every
//! operation when no operation can run for its effect.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT, DT_RESOURCE};
use polyfn_tf::may_have_effects;

#[test]
fn stateless_operations_have_no_effects() {
    let rt = support::runtime();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[])).unwrap();
    let two = g.constant(&OwnedTensor::from_f32(rt, &[], &[2.0])).unwrap();
    let y = g.binary("AddV2", x, two).unwrap();
    g.unary("Tanh", y).unwrap();
    assert!(!unsafe { may_have_effects(rt, g.raw()) });
}

#[test]
fn a_stateful_operation_may_have_effects() {
    let rt = support::runtime();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[])).unwrap();
    g.unary("Tanh", x).unwrap();
    let handle = g.placeholder(DT_RESOURCE, Some(&[])).unwrap();
    // ReadVariableOp is registered as stateful: Java's walk then decides what to order and keep.
    g.read_variable(handle, DT_FLOAT).unwrap();
    assert!(unsafe { may_have_effects(rt, g.raw()) });
}

#[test]
fn an_empty_graph_has_no_effects() {
    let rt = support::runtime();
    let g = Graph::new(rt);
    assert!(!unsafe { may_have_effects(rt, g.raw()) });
}
