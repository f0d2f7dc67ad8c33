//! The mark that spares a function TensorFlow's XLA auto-clustering pass (see
//! `polyfn_tf::auto_clustering`): on in what a context of CPUs registers, traced or restored,
//! never in what leaves Polyfn, and left off a definition whose nodes ask for clusters. The
//! results stay the same.

mod support;

use polyfn_tf::c_api::TF_Output;
use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{naming, EagerContext, EagerFunction, GraphSignature, Runtime};
use std::ffi::{c_char, c_void, CString};

const MARK: &[u8] = b"_XlaAlreadyClustered";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The definition `ctx` holds under `name`, as TensorFlow registered it.
fn registered_def(rt: &'static Runtime, ctx: EagerContext, name: &str) -> Vec<u8> {
    type GetDef = unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_void, *mut c_void);
    type NewBuffer = unsafe extern "C" fn() -> *mut c_void;
    type DeleteBuffer = unsafe extern "C" fn(*mut c_void);
    #[repr(C)]
    struct Buffer {
        data: *const u8,
        length: usize,
    }
    let sym = |n: &std::ffi::CStr| {
        // SAFETY: dlsym with a NUL-terminated name; the runtime was loaded with RTLD_GLOBAL.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, n.as_ptr()) };
        assert!(!p.is_null(), "{n:?}");
        p
    };
    // SAFETY: the C functions of those names (tensorflow/c/eager/c_api_experimental.h,
    // tensorflow/c/tf_buffer.h), called on a live context, buffer and status.
    unsafe {
        let get: GetDef = std::mem::transmute(sym(c"TFE_ContextGetFunctionDef"));
        let new: NewBuffer = std::mem::transmute(sym(c"TF_NewBuffer"));
        let delete: DeleteBuffer = std::mem::transmute(sym(c"TF_DeleteBuffer"));
        let status = (rt.api().TF_NewStatus)();
        let buf = new();
        let cname = CString::new(name).unwrap();
        get(ctx.0.cast(), cname.as_ptr(), buf, status.cast());
        assert_eq!((rt.api().TF_GetCode)(status), 0, "no function {name}");
        let b = &*(buf as *const Buffer);
        let bytes = std::slice::from_raw_parts(b.data, b.length).to_vec();
        delete(buf);
        (rt.api().TF_DeleteStatus)(status);
        bytes
    }
}

/// `x + 2` over a float vector, its placeholder made as a trace makes it.
fn traced(rt: &'static Runtime, ctx: EagerContext, unclustered: bool) -> EagerFunction {
    let mut g = Graph::new(rt);
    // SAFETY: a live graph.
    let op = unsafe { polyfn_tf::placeholder::add_placeholder(rt, g.raw(), "x", DT_FLOAT, Some(&[-1]), unclustered) }.unwrap();
    let x = TF_Output { oper: op, index: 0 };
    let two = g.constant(&OwnedTensor::from_f32(rt, &[], &[2.0])).unwrap();
    // Added here, not by `Graph`, which takes only its own operations as inputs.
    let api = rt.api();
    // SAFETY: live graph and operations of it; the description is finished once.
    let y = unsafe {
        let d = (api.TF_NewOperation)(g.raw(), c"AddV2".as_ptr(), c"y".as_ptr());
        (api.TF_AddInput)(d, x);
        (api.TF_AddInput)(d, two);
        let status = (api.TF_NewStatus)();
        let oper = (api.TF_FinishOperation)(d, status);
        assert_eq!((api.TF_GetCode)(status), 0);
        (api.TF_DeleteStatus)(status);
        TF_Output { oper, index: 0 }
    };
    let names = naming::output_arg_names(1);
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    // SAFETY: a live graph, not changed while converted.
    unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), &naming::function_name("clusters"), &sig) }.unwrap()
}

/// `graph` serialized as a `GraphDef`, its function library included.
fn graph_def(rt: &'static Runtime, graph: &Graph) -> Vec<u8> {
    type ToGraphDef = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void);
    type NewBuffer = unsafe extern "C" fn() -> *mut c_void;
    #[repr(C)]
    struct Buffer {
        data: *const u8,
        length: usize,
    }
    // SAFETY: the C functions of those names (tensorflow/c/c_api.h), on a live graph and buffer.
    unsafe {
        let to: ToGraphDef = std::mem::transmute(libc::dlsym(libc::RTLD_DEFAULT, c"TF_GraphToGraphDef".as_ptr()));
        let new: NewBuffer = std::mem::transmute(libc::dlsym(libc::RTLD_DEFAULT, c"TF_NewBuffer".as_ptr()));
        let status = (rt.api().TF_NewStatus)();
        let buf = new();
        to(graph.raw().cast(), buf, status.cast());
        assert_eq!((rt.api().TF_GetCode)(status), 0);
        let b = &*(buf as *const Buffer);
        std::slice::from_raw_parts(b.data, b.length).to_vec()
    }
}

fn run(rt: &'static Runtime, f: &EagerFunction) -> Vec<f32> {
    let input = OwnedTensor::from_f32(rt, &[3], &[1.0, -2.0, 0.5]);
    let mut out = Vec::new();
    // SAFETY: a live float vector for the function's one input.
    unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
    // SAFETY: the output is ours.
    unsafe { OwnedTensor::from_raw(rt, out[0]) }.to_f32()
}

#[test]
fn functions_of_a_cpu_context_are_marked_inside_and_unmarked_outside() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    assert!(polyfn_tf::auto_clustering::pass_does_nothing(rt, ctx), "a context of CPUs, no TF_XLA_FLAGS");
    let f = traced(rt, ctx, true);
    assert!(contains(&registered_def(rt, ctx, f.name()), MARK), "the trace's placeholder marks the function");
    let plain = traced(rt, ctx, false);
    assert!(!contains(&registered_def(rt, ctx, plain.name()), MARK));
    assert_eq!(run(rt, &f), vec![3.0, 0.0, 2.5]);
    assert_eq!(run(rt, &f), run(rt, &plain));

    // What leaves Polyfn carries no mark; what it restores here is marked again.
    let def = f.to_function_def().unwrap();
    assert!(!contains(&def, MARK), "an exported definition is unmarked");
    let restored = EagerFunction::from_function_def(rt, ctx, &def, &[], &naming::function_name("clusters")).unwrap();
    assert!(contains(&registered_def(rt, ctx, restored.name()), MARK));
    assert_eq!(run(rt, &restored), vec![3.0, 0.0, 2.5]);

    // A call added to a graph of the user's copies the definitions unmarked.
    let user = Graph::new(rt);
    let api = rt.api();
    // SAFETY: live graph; the description is finished once.
    let x = unsafe {
        let d = (api.TF_NewOperation)(user.raw(), c"Placeholder".as_ptr(), c"x".as_ptr());
        (api.TF_SetAttrType)(d, c"dtype".as_ptr(), DT_FLOAT);
        let status = (api.TF_NewStatus)();
        let oper = (api.TF_FinishOperation)(d, status);
        (api.TF_DeleteStatus)(status);
        TF_Output { oper, index: 0 }
    };
    unsafe { f.add_call(user.raw(), "call", &[x], true) }.unwrap();
    let graph_def = graph_def(rt, &user);
    assert!(contains(&graph_def, f.name().as_bytes()) && !contains(&graph_def, MARK), "the user's graph holds it unmarked");

    // A node asking for a cluster (`experimental_jit_scope`'s `_XlaCompile`) keeps the pass, in
    // the function or in its library; and nothing restored or traced after it is marked.
    let mut attr = vec![0x0a, 11];
    attr.extend_from_slice(b"_XlaCompile");
    attr.extend_from_slice(&[0x12, 2, 0x28, 0x01]);
    let mut node = vec![0x0a, 1, b'n', 0x12, 4];
    node.extend_from_slice(b"NoOp");
    node.push(0x2a);
    node.push(attr.len() as u8);
    node.extend(attr);
    let mut asking = traced(rt, ctx, false).to_function_def().unwrap();
    asking.push(0x1a);
    asking.push(node.len() as u8);
    asking.extend(node);
    // in the library (under its own name, which its traced function no longer holds)
    let mut library = vec![0x0a];
    let mut n = asking.len();
    while n >= 0x80 {
        library.push((n as u8) | 0x80);
        n >>= 7;
    }
    library.push(n as u8);
    library.extend(&asking);
    let kept = EagerFunction::from_function_def(rt, ctx, &def, &library, &naming::function_name("clusters")).unwrap();
    assert!(!contains(&registered_def(rt, ctx, kept.name()), MARK), "its library asks for clusters: not marked");
    assert_eq!(run(rt, &kept), vec![3.0, 0.0, 2.5]);
    assert!(!polyfn_tf::auto_clustering::pass_does_nothing(rt, ctx), "nothing is marked after it");
    let later = EagerFunction::from_function_def(rt, ctx, &def, &[], &naming::function_name("clusters")).unwrap();
    assert!(!contains(&registered_def(rt, ctx, later.name()), MARK));
    drop((f, plain, restored, kept, later));
    // SAFETY: every function registered in it was dropped.
    unsafe { ctx.delete(rt) };
}
