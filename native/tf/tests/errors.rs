//! Errors of the runtime binding name what failed, and TensorFlow's codes arrive named.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{Code, EagerContext, EagerFunction, GraphSignature};
use std::ffi::CString;

#[test]
fn tensorflow_errors_carry_named_codes() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[2])).unwrap();
    let y = g.placeholder(DT_FLOAT, Some(&[3])).unwrap();
    let sum = g.binary("AddV2", x, y);
    // Shape inference rejects [2] + [3] while the graph is built.
    assert_eq!(sum.unwrap_err().code, Code::InvalidArgument);

    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let names = [CString::new("y").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[x], output_names: &names, control_outputs: &[] };
    let f = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), "polyfn_test_codes", &sig) }.unwrap();
    let err = unsafe { f.call(&[], &mut Vec::new()) }.unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    // Two inputs of different shapes reach TensorFlow's kernel, which fails at run time.
    let mut g2 = Graph::new(rt);
    let a = g2.placeholder(DT_FLOAT, None).unwrap();
    let b = g2.placeholder(DT_FLOAT, None).unwrap();
    let s = g2.binary("AddV2", a, b).unwrap();
    let sig = GraphSignature { inputs: &[a, b], outputs: &[s], output_names: &names, control_outputs: &[] };
    let add = unsafe { EagerFunction::from_graph(rt, ctx, g2.raw(), "polyfn_test_codes_add", &sig) }.unwrap();
    let (two, three) = (OwnedTensor::from_f32(rt, &[2], &[1.0, 2.0]), OwnedTensor::from_f32(rt, &[3], &[1.0; 3]));
    let err = unsafe { add.call(&[two.raw(), three.raw()], &mut Vec::new()) }.unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument, "{err}");
    assert!(err.message.contains("Incompatible shapes"), "{err}");
    drop((f, add));
    unsafe { ctx.delete(rt) };
}

#[test]
fn output_names_must_match_outputs() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let sig = GraphSignature { inputs: &[x], outputs: &[x, x], output_names: &[], control_outputs: &[] };
    let err = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), "polyfn_test_names", &sig) }.unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("0 output names for 2 outputs"), "{err}");
    unsafe { ctx.delete(rt) };
}

#[test]
fn a_panic_inside_a_call_gives_the_threads_status_back() {
    use polyfn_tf::status::with_call_status;
    let rt = support::runtime();
    let api = rt.api();
    std::thread::spawn(move || {
        let first = with_call_status(api, |s| s.raw() as usize); // made, then kept in the slot
        assert_eq!(with_call_status(api, |s| s.raw() as usize), first, "the slot's status is reused");
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_call_status(api, |s| {
                // The call failed, then a defect: the status comes back holding the error.
                unsafe { (api.TF_SetStatus)(s.raw(), Code::Internal.raw(), c"a failed call".as_ptr()) };
                panic!("a defect inside a call")
            });
        }));
        assert!(caught.is_err());
        // Before the fix the panic lost (leaked) the slot's status and every later call made a new one.
        assert_eq!(with_call_status(api, |s| s.raw() as usize), first, "the status came back to the slot");
        assert!(with_call_status(api, |s| s.check("after the panic")).is_ok(), "and was reset to OK");
    })
    .join()
    .unwrap();
}
