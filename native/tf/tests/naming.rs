//! Function names TensorFlow accepts whatever the display name, unique in the eager context, and
//! graph lookups that fail cleanly. (One test per concern that uses the name counter, in one
//! binary: the skip test predicts the next counter value.)

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{graph_operation, graph_output, naming, Code, EagerContext, EagerFunction, GraphSignature, Runtime};

fn add_one(rt: &'static Runtime, ctx: EagerContext, name: &str) -> EagerFunction {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let one = g.constant(&OwnedTensor::from_f32(rt, &[], &[1.0])).unwrap();
    let y = g.binary("AddV2", x, one).unwrap();
    let names = naming::output_arg_names(1);
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), name, &sig) }.unwrap()
}

#[test]
fn names_from_any_display_name_register_run_and_skip_taken_names() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut functions = Vec::new();
    for display in ["ü-名前", "ü-名前", "_private", "-dash", "", "a/b.c d"] {
        let name = naming::unused_function_name(rt, ctx, display);
        let f = add_one(rt, ctx, &name);
        assert!(EagerFunction::is_registered(rt, ctx, &name), "{name}");
        let x = OwnedTensor::from_f32(rt, &[2], &[1.0, 2.0]);
        let mut out = Vec::new();
        unsafe { f.call(&[x.raw()], &mut out) }.unwrap();
        assert_eq!(unsafe { OwnedTensor::from_raw(rt, out[0]) }.to_f32(), [2.0, 3.0], "{name}");
        functions.push(f);
    }
    assert_ne!(functions[0].name(), functions[1].name());

    // A name taken by someone else (another copy of the library, with its own counter) is skipped.
    let probe = naming::function_name("taken");
    let (stem, n) = probe.rsplit_once('_').unwrap();
    let n: u64 = n.parse().unwrap();
    let taken = format!("{stem}_{}", n + 1);
    functions.push(add_one(rt, ctx, &taken));
    let next = naming::unused_function_name(rt, ctx, "taken");
    assert_eq!(next, format!("{stem}_{}", n + 2));
    drop(functions);
    unsafe { ctx.delete(rt) };
}

#[test]
fn graph_lookups_reject_missing_operations_and_outputs() {
    let rt = support::runtime();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    // The test graph builder names operations `<type>_<n>`, from 1 in each graph.
    let op_name = "Placeholder_1";

    let found = unsafe { graph_output(rt, g.raw(), op_name, 0) }.unwrap();
    assert_eq!((found.oper, found.index), (x.oper, 0));
    assert_eq!(unsafe { graph_operation(rt, g.raw(), op_name) }.unwrap(), x.oper);

    let err = unsafe { graph_output(rt, g.raw(), "no_such_op", 0) }.unwrap_err();
    assert_eq!(err.code, Code::NotFound);
    assert!(err.message.contains("no_such_op"), "{err}");
    for bad in [1, -1, i32::MAX] {
        let err = unsafe { graph_output(rt, g.raw(), op_name, bad) }.unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument);
        assert!(err.message.contains(&format!("has 1 output(s); output {bad} does not exist")), "{err}");
    }
    let err = unsafe { graph_operation(rt, g.raw(), "a\0b") }.unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
}
