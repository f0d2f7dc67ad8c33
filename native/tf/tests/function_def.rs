//! A registered function exported as a FunctionDef and restored, in the same and in another
//! eager context, runs as the original did; damaged definitions are errors, not crashes.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::naming::unused_function_name;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{Code, EagerContext, EagerFunction, GraphSignature};
use std::ffi::CString;

/// y = x * x + 2, over float vectors of any length.
fn square_plus_two(rt: &'static polyfn_tf::Runtime, ctx: EagerContext, name: &str) -> EagerFunction {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[-1])).unwrap();
    let sq = g.binary("Mul", x, x).unwrap();
    let two = g.constant(&OwnedTensor::from_f32(rt, &[], &[2.0])).unwrap();
    let y = g.binary("AddV2", sq, two).unwrap();
    let names = [CString::new("output_0").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), name, &sig) }.unwrap()
}

/// The tests count live functions process-wide: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(f: &EagerFunction, rt: &'static polyfn_tf::Runtime, values: &[f32]) -> Vec<f32> {
    let input = OwnedTensor::from_f32(rt, &[values.len() as i64], values);
    let mut out = Vec::new();
    unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
    unsafe { OwnedTensor::from_raw(rt, out[0]) }.to_f32()
}

#[test]
fn a_function_def_round_trips_under_a_new_name() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let original = square_plus_two(rt, ctx, "polyfn_def_original");
    let def = original.to_function_def().unwrap();
    assert!(def.windows(19).any(|w| w == b"polyfn_def_original"), "the def carries its name");

    // the same context: a fresh name, both registered side by side
    let name = unused_function_name(rt, ctx, "restored");
    let restored = EagerFunction::from_function_def(rt, ctx, &def, &[], &name).unwrap();
    assert_eq!(restored.name(), name);
    assert_eq!((restored.num_inputs(), restored.output_dtypes()), (1, &[DT_FLOAT][..]));
    assert_eq!(run(&restored, rt, &[1.0, -3.0]), run(&original, rt, &[1.0, -3.0]));
    assert_eq!(run(&restored, rt, &[1.0, -3.0, 0.5]), vec![3.0, 11.0, 2.25]);
    // registering twice under one name is refused before TensorFlow sees it
    let again = EagerFunction::from_function_def(rt, ctx, &def, &[], &name).unwrap_err();
    assert_eq!(again.code, Code::AlreadyExists);
    // the restored function exports too
    assert!(restored.to_function_def().unwrap().len() > 20);

    // another context (as another process would be): the original's name is free there
    let other = EagerContext::new_owned(rt).unwrap();
    let there = EagerFunction::from_function_def(rt, other, &def, &[], "polyfn_def_original").unwrap();
    assert_eq!(run(&there, rt, &[4.0]), vec![18.0]);
    let live = EagerFunction::live_count();
    drop(there);
    assert_eq!(EagerFunction::live_count(), live - 1);
    assert!(!EagerFunction::is_registered(rt, other, "polyfn_def_original"));
    drop((restored, original));
    unsafe {
        other.delete(rt);
        ctx.delete(rt);
    }
}

#[test]
fn damaged_function_defs_are_errors() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let def = square_plus_two(rt, ctx, "polyfn_def_damaged").to_function_def().unwrap();
    let live = EagerFunction::live_count();
    for cut in [0, 1, 5, def.len() / 2, def.len() - 1] {
        let e = EagerFunction::from_function_def(rt, ctx, &def[..cut], &[], &format!("polyfn_cut_{cut}"));
        assert!(e.is_err(), "a def cut at {cut} of {} bytes was accepted", def.len());
    }
    let e = EagerFunction::from_function_def(rt, ctx, b"not a protocol buffer at all", &[], "polyfn_junk").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.starts_with("not a usable FunctionDef: "), "{e}");
    // A Const node without its value: Grappler (on by default) would abort the process on it.
    let at = def.windows(5).position(|w| w == b"value").expect("the Const's value attribute");
    let mut no_value = def.clone();
    no_value[at + 4] = b'f';
    let e = EagerFunction::from_function_def(rt, ctx, &no_value, &[], "polyfn_no_value").unwrap_err();
    assert!(e.message.contains("lacks its required attribute \"value\""), "{e}");
    // flipped bytes anywhere, each byte: an error or a working function, never a crash
    for i in 0..def.len() {
        let mut d = def.clone();
        d[i] ^= 0x5a;
        if let Ok(f) = EagerFunction::from_function_def(rt, ctx, &d, &[], &format!("polyfn_flip_{i}")) {
            let input = OwnedTensor::from_f32(rt, &[2], &[1.0, 2.0]);
            let _ = unsafe { f.call(&[input.raw()], &mut Vec::new()) };
        }
    }
    assert_eq!(EagerFunction::live_count(), live, "nothing half-registered stays");
    unsafe { ctx.delete(rt) };
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bytes_field(number: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, (number << 3) | 2);
    varint(&mut out, payload.len() as u64);
    out.extend_from_slice(payload);
    out
}

fn varint_field(number: u64, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, number << 3);
    varint(&mut out, v);
    out
}

/// A map entry (key 1, value 2) of an attribute map.
fn attr_entry(key: &str, value: &[u8]) -> Vec<u8> {
    let mut e = bytes_field(1, key.as_bytes());
    e.extend(bytes_field(2, value));
    e
}

/// The definition's own attributes and its arguments' are checked as node attributes are: a
/// shape TensorFlow would trust, or a string tensor whose one long value fills a huge shape
/// (1 MiB standing for a terabyte), is refused before TensorFlow sees it.
#[test]
fn function_and_argument_attributes_are_checked() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let def = square_plus_two(rt, ctx, "polyfn_def_attrs").to_function_def().unwrap();
    let bad_shape = bytes_field(1, &bytes_field(7, &bytes_field(2, &varint_field(1, -5i64 as u64)))); // list(shape) [-5]
    let mut string_fill = varint_field(1, 7); // DT_STRING
    string_fill.extend(bytes_field(2, &bytes_field(2, &varint_field(1, 1_000_000)))); // shape [1000000]
    string_fill.extend(bytes_field(8, &vec![b'a'; 1 << 20]));
    let fill = bytes_field(8, &string_fill); // AttrValue.tensor
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("function attr shape", bytes_field(5, &attr_entry("_input_shapes", &bad_shape)), "dimension -5"),
        ("function attr tensor", bytes_field(5, &attr_entry("_big", &fill)), "bytes Polyfn restores"),
        ("argument attr shape", {
            let mut arg = varint_field(1, 0);
            arg.extend(bytes_field(2, &bytes_field(1, &attr_entry("_output_shapes", &bad_shape))));
            bytes_field(7, &arg)
        }, "dimension -5"),
    ];
    for (what, extra, why) in cases {
        let mut d = def.clone();
        d.extend(extra);
        let e = EagerFunction::from_function_def(rt, ctx, &d, &[], "polyfn_def_attr_case").unwrap_err();
        assert!(e.message.contains(why), "{what}: {e}");
    }
    // and a good one still restores
    let f = EagerFunction::from_function_def(rt, ctx, &def, &[], "polyfn_def_attr_good").unwrap();
    assert_eq!(run(&f, rt, &[3.0]), vec![11.0]);
    drop(f);
    unsafe { ctx.delete(rt) };
}

#[test]
fn a_function_that_calls_another_restores_with_its_library() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let inner = square_plus_two(rt, ctx, "polyfn_def_inner");
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[-1])).unwrap();
    let call = unsafe { inner.add_call(g.raw(), "call_inner", &[x], false) }.unwrap();
    let y = polyfn_tf::c_api::TF_Output { oper: call, index: 0 };
    let names = [CString::new("output_0").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    let outer = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), "polyfn_def_outer", &sig) }.unwrap();
    assert_eq!(run(&outer, rt, &[3.0]), vec![11.0]);
    let def = outer.to_function_def().unwrap();
    let library = outer.library_defs().unwrap();
    assert!(library.windows(16).any(|w| w == b"polyfn_def_inner"), "the library holds the callee");

    // another context: the callee's name is free there, so the library registers as it is
    let other = EagerContext::new_owned(rt).unwrap();
    let live = EagerFunction::live_count();
    // without its library the function registers, but a call is an error, not a crash
    let alone = EagerFunction::from_function_def(rt, other, &def, &[], "polyfn_def_alone").unwrap();
    let input = OwnedTensor::from_f32(rt, &[1], &[3.0]);
    assert!(unsafe { alone.call(&[input.raw()], &mut Vec::new()) }.is_err());
    drop(alone);
    // a damaged library is refused and leaves nothing registered
    let e = EagerFunction::from_function_def(rt, other, &def, &library[..library.len() - 2], "polyfn_def_cut").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(!EagerFunction::is_registered(rt, other, "polyfn_def_inner"));
    // a library function whose argument lost its dtype (the file fuzzer's case: the type field
    // renumbered into an unknown one) is refused, not registered to fail every call
    let callee = library.windows(16).position(|w| w == b"polyfn_def_inner").unwrap();
    let type_field = callee + library[callee..].windows(2).position(|w| w == [0x18, 0x01]).unwrap();
    let mut untyped = library.clone();
    untyped[type_field] = 0x38;
    let e = EagerFunction::from_function_def(rt, other, &def, &untyped, "polyfn_def_untyped").unwrap_err();
    assert!(e.message.contains("function polyfn_def_inner: an argument without a concrete dtype"), "{e}");
    assert!(!EagerFunction::is_registered(rt, other, "polyfn_def_inner"));
    let restored = EagerFunction::from_function_def(rt, other, &def, &library, "polyfn_def_outer").unwrap();
    assert_eq!(run(&restored, rt, &[3.0, 1.0]), vec![11.0, 3.0]);
    assert!(EagerFunction::is_registered(rt, other, "polyfn_def_inner"));
    // a library function already registered is refused before TensorFlow sees it
    let e = EagerFunction::from_function_def(rt, other, &def, &library, "polyfn_def_twice").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    drop(restored);
    assert!(!EagerFunction::is_registered(rt, other, "polyfn_def_inner"), "the library goes with its owner");
    assert_eq!(EagerFunction::live_count(), live);
    drop((outer, inner, g));
    unsafe {
        other.delete(rt);
        ctx.delete(rt);
    }
}

/// A node whose op is registered but has no kernel here (`EagerPyFunc`: a `tf.py_function`,
/// whose kernel is Python's) is refused at restore, naming the node and why, instead of
/// registering a function that fails every call; the op's attributes are all valid.
#[test]
fn an_op_without_a_kernel_is_refused() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let def = square_plus_two(rt, ctx, "polyfn_def_kernels").to_function_def().unwrap();
    let mut node = bytes_field(1, b"py");
    node.extend(bytes_field(2, b"EagerPyFunc"));
    node.extend(bytes_field(5, &attr_entry("token", &bytes_field(2, b"pyfunc_0"))));
    node.extend(bytes_field(5, &attr_entry("Tin", &bytes_field(1, &[]))));
    node.extend(bytes_field(5, &attr_entry("Tout", &bytes_field(1, &[]))));
    let mut d = def.clone();
    d.extend(bytes_field(3, &node));
    let live = EagerFunction::live_count();
    let e = EagerFunction::from_function_def(rt, ctx, &d, &[], "polyfn_def_py").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("node \"py\": op EagerPyFunc has no kernel") && e.message.contains("tf.py_function"), "{e}");
    assert_eq!(EagerFunction::live_count(), live);
    // the same definition without it restores and runs, twice (the second from the kernel cache)
    for name in ["polyfn_def_kernels_a", "polyfn_def_kernels_b"] {
        let f = EagerFunction::from_function_def(rt, ctx, &def, &[], name).unwrap();
        assert_eq!(run(&f, rt, &[3.0]), vec![11.0]);
    }
    unsafe { ctx.delete(rt) };
}

/// A node making a TensorList of `element_dtype`, `name`d, without inputs: refused or not before
/// its inputs are looked at.
fn list_maker(name: &str, op: &str, element_dtype: u64) -> Vec<u8> {
    let mut node = bytes_field(1, name.as_bytes());
    node.extend(bytes_field(2, op.as_bytes()));
    node.extend(bytes_field(5, &attr_entry("element_dtype", &varint_field(6, element_dtype))));
    node.extend(bytes_field(5, &attr_entry("shape_type", &varint_field(6, 3))));
    node
}

/// Under XLA, a definition restored from outside with a TensorList of TensorLists is refused
/// naming the node, in the function or its library: XLA's compiler aborts the process on some
/// (a list of unknown element shape pushed into one). A list of floats is not refused for it.
#[test]
fn a_list_of_lists_is_refused_under_xla() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let def = square_plus_two(rt, ctx, "polyfn_def_xla_lists").to_function_def().unwrap();
    let xla = polyfn_tf::CallOptions { jit_compile: true, ..polyfn_tf::CallOptions::default() };
    let with = |node: Vec<u8>| {
        let mut d = def.clone();
        d.extend(bytes_field(3, &node));
        d
    };
    let live = EagerFunction::live_count();
    let refused = |d: &[u8], library: &[u8], name: &str| {
        EagerFunction::from_function_def_with(rt, ctx, d, library, name, xla).unwrap_err()
    };
    let e = refused(&with(list_maker("lists", "EmptyTensorList", 21)), &[], "polyfn_xla_lists_a");
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("node \"lists\" (EmptyTensorList) has a TensorList of TensorLists"), "{e}");
    let e = refused(&with(list_maker("reserved", "TensorListReserve", 21)), &[], "polyfn_xla_lists_b");
    assert!(e.message.contains("node \"reserved\" (TensorListReserve) has a TensorList of TensorLists"), "{e}");
    // in a library function: named with its function
    let mut inner = square_plus_two(rt, ctx, "polyfn_xla_lists_inner").to_function_def().unwrap();
    inner.extend(bytes_field(3, &list_maker("deep", "EmptyTensorList", 21)));
    let e = refused(&def, &bytes_field(1, &inner), "polyfn_xla_lists_c");
    assert!(e.message.contains("function polyfn_xla_lists_inner: node \"deep\""), "{e}");
    // a list of floats is not refused for its elements (it fails later, for its missing inputs)
    let e = refused(&with(list_maker("floats", "EmptyTensorList", 1)), &[], "polyfn_xla_lists_d");
    assert!(!e.message.contains("TensorList of TensorLists"), "{e}");
    assert_eq!(EagerFunction::live_count(), live);
    // the definition without them restores under XLA and runs
    let f = EagerFunction::from_function_def_with(rt, ctx, &def, &[], "polyfn_xla_lists_e", xla).unwrap();
    assert_eq!(run(&f, rt, &[3.0]), vec![11.0]);
    drop(f); // before its context
    unsafe { ctx.delete(rt) };
}

/// Under XLA, a trace calling a function that holds a TensorList of TensorLists (another Polyfn
/// function, a loaded one) is refused naming it: Java checks the trace's own operations only.
#[test]
fn a_call_of_a_function_with_a_list_of_lists_is_refused_under_xla() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let api = rt.api();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[-1])).unwrap();
    // SAFETY: a new int32 scalar, filled before use and owned by the OwnedTensor.
    let int_minus_one = unsafe {
        let raw = (api.TF_AllocateTensor)(3, std::ptr::null(), 0, 4);
        *((api.TF_TensorData)(raw) as *mut i32) = -1;
        OwnedTensor::from_raw(rt, raw)
    };
    let minus_one = g.constant(&int_minus_one).unwrap();
    // SAFETY: live graph and operations of it; the description is finished once.
    unsafe {
        let d = (api.TF_NewOperation)(g.raw(), c"EmptyTensorList".as_ptr(), c"lists".as_ptr());
        (api.TF_AddInput)(d, minus_one);
        (api.TF_AddInput)(d, minus_one);
        (api.TF_SetAttrType)(d, c"element_dtype".as_ptr(), 21);
        (api.TF_SetAttrType)(d, c"shape_type".as_ptr(), 3);
        let status = (api.TF_NewStatus)();
        (api.TF_FinishOperation)(d, status);
        assert_eq!((api.TF_GetCode)(status), 0);
        (api.TF_DeleteStatus)(status);
    }
    let names = [CString::new("output_0").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[x], output_names: &names, control_outputs: &[] };
    let inner = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), "polyfn_def_inner_lists", &sig) }.unwrap();
    let call_it = |options: polyfn_tf::CallOptions, name: &str| {
        let mut outer = Graph::new(rt);
        let y = outer.placeholder(DT_FLOAT, Some(&[-1])).unwrap();
        let call = unsafe { inner.add_call(outer.raw(), "call_inner", &[y], false) }.unwrap();
        let out = polyfn_tf::c_api::TF_Output { oper: call, index: 0 };
        let sig = GraphSignature { inputs: &[y], outputs: &[out], output_names: &names, control_outputs: &[] };
        unsafe { EagerFunction::from_graph_with(rt, ctx, outer.raw(), name, &sig, options) }
    };
    let live = EagerFunction::live_count();
    let xla = polyfn_tf::CallOptions { jit_compile: true, ..polyfn_tf::CallOptions::default() };
    let e = call_it(xla, "polyfn_def_outer_xla").unwrap_err();
    assert!(e.message.contains("function polyfn_def_inner_lists: node \"lists\" (EmptyTensorList) has a TensorList of TensorLists"), "{e}");
    assert_eq!(EagerFunction::live_count(), live);
    // without XLA the same call is a function like any other
    let plain = call_it(polyfn_tf::CallOptions::default(), "polyfn_def_outer_plain").unwrap();
    assert_eq!(run(&plain, rt, &[1.5]), vec![1.5]);
    drop((plain, inner));
    unsafe { ctx.delete(rt) };
}
