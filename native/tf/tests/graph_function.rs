//! Control flow's branch functions: part of a graph becomes a function of that graph's library,
//! returned as a serialized FunctionDef; a part TensorFlow refuses leaves the library as it was.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::graph_function::{add_graph_function, GraphPart};
use polyfn_tf::tensor::DT_FLOAT;

fn library_size(rt: &polyfn_tf::Runtime, g: &Graph) -> i32 {
    unsafe { (rt.api().TF_GraphNumFunctions)(g.raw()) }
}

fn contains(bytes: &[u8], text: &str) -> bool {
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

#[test]
fn a_part_of_a_graph_becomes_a_function_of_its_library() {
    let rt = support::runtime();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let y = g.unary("Neg", x).unwrap();
    let effect = g.unary("Identity", y).unwrap();
    let part = GraphPart { body: &[y.oper, effect.oper], inputs: &[x], outputs: &[y], control_outputs: &[effect.oper] };
    let def = unsafe { add_graph_function(rt, g.raw(), "polyfn_test_branch", &part) }.unwrap();
    assert!(contains(&def, "polyfn_test_branch") && contains(&def, "Neg") && contains(&def, "effect_0"));
    assert_eq!(library_size(rt, &g), 1);
}

#[test]
fn a_part_tensorflow_refuses_leaves_the_library_unchanged() {
    let rt = support::runtime();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let y = g.unary("Neg", x).unwrap();
    // y reads x, which is neither in the body nor an input.
    let part = GraphPart { body: &[y.oper], inputs: &[], outputs: &[y], control_outputs: &[] };
    let err = unsafe { add_graph_function(rt, g.raw(), "polyfn_test_refused", &part) }.unwrap_err();
    assert!(!err.message.is_empty(), "{err}");
    assert_eq!(library_size(rt, &g), 0);
}
