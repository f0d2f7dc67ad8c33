//! Call options chosen at registration: the call path, Grappler, XLA.

mod support;

use polyfn_tf::c_api::TF_Output;
use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT, DT_RESOURCE};
use polyfn_tf::{naming, CallOptions, Code, EagerContext, EagerFunction, GraphSignature, Runtime};

fn function(rt: &'static Runtime, ctx: EagerContext, g: &Graph, inputs: &[TF_Output], outputs: &[TF_Output], options: CallOptions) -> Result<EagerFunction, polyfn_tf::TfError> {
    let names = naming::output_arg_names(outputs.len());
    let sig = GraphSignature { inputs, outputs, output_names: &names, control_outputs: &[] };
    unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &naming::function_name("opts"), &sig, options) }
}

fn run(rt: &'static Runtime, f: &EagerFunction, input: &OwnedTensor) -> Vec<f32> {
    let mut out = Vec::new();
    unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
    unsafe { OwnedTensor::from_raw(rt, out[0]) }.to_f32()
}

fn scalar(g: &mut Graph, rt: &'static Runtime, v: f32) -> TF_Output {
    g.constant(&OwnedTensor::from_f32(rt, &[], &[v])).unwrap()
}

/// `(x + 0.1) + 0.2`: Grappler's constant push-down folds it to `x + 0.3`, which differs in the
/// last bit for some x.
fn add_twice(rt: &'static Runtime) -> (Graph, TF_Output, TF_Output) {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[64])).unwrap();
    let (a, b) = (scalar(&mut g, rt, 0.1), scalar(&mut g, rt, 0.2));
    let y = g.binary("AddV2", x, a).unwrap();
    let y = g.binary("AddV2", y, b).unwrap();
    (g, x, y)
}

#[test]
fn grappler_runs_by_default_and_can_be_turned_off_on_both_paths() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let xs: Vec<f32> = (0..64).map(|i| -3.0 + 6.0 * i as f32 / 63.0).collect();
    let input = OwnedTensor::from_f32(rt, &[64], &xs);
    let unoptimized: Vec<u32> = xs.iter().map(|x| ((x + 0.1f32) + 0.2f32).to_bits()).collect();
    let folded: Vec<u32> = xs.iter().map(|x| (x + (0.1f32 + 0.2f32)).to_bits()).collect();
    assert_ne!(unoptimized, folded, "the inputs must tell the two apart");
    for fast_path in [false, true] {
        for grappler in [true, false] {
            let (g, x, y) = add_twice(rt);
            let f = function(rt, ctx, &g, &[x], &[y], CallOptions { fast_path, grappler, jit_compile: false, ..CallOptions::default() }).unwrap();
            assert_eq!(f.fast_path(), fast_path && polyfn_tf::fast_path_supported(rt));
            let got: Vec<u32> = run(rt, &f, &input).iter().map(|v| v.to_bits()).collect();
            let want = if grappler { &folded } else { &unoptimized };
            assert_eq!(&got, want, "fast_path={fast_path} grappler={grappler}");
        }
    }
    unsafe { ctx.delete(rt) };
}

#[test]
fn default_options_take_the_caller_thread_path_where_safe() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let (g, x, y) = add_twice(rt);
    let f = function(rt, ctx, &g, &[x], &[y], CallOptions::default()).unwrap();
    assert!(f.fast_path());
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let shape = g.unary_typed("Shape", x, "out_type", 3).unwrap();
    let kept = function(rt, ctx, &g, &[x], &[shape], CallOptions::default()).unwrap();
    assert!(!kept.fast_path());
    let input = OwnedTensor::from_f32(rt, &[2, 3], &[1.0; 6]);
    let mut out = Vec::new();
    unsafe { kept.call(&[input.raw()], &mut out) }.unwrap();
    let shape = unsafe { OwnedTensor::from_raw(rt, out[0]) };
    assert_eq!(shape.describe(), (3, vec![2]));
    drop((f, kept, shape));
    unsafe { ctx.delete(rt) };
}

#[test]
fn xla_compiles_and_refuses_ops_it_cannot_compile_at_registration() {
    let rt = support::runtime();
    assert!(polyfn_tf::call_options::xla_available(rt), "TensorFlow Java's runtime carries XLA_CPU_JIT");
    let ctx = EagerContext::new_owned(rt).unwrap();
    let xla = CallOptions { jit_compile: true, ..CallOptions::default() };
    // A chain of element-wise ops XLA fuses.
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[1000])).unwrap();
    let mut y = x;
    for op in ["Tanh", "Sigmoid", "Exp", "Log1p", "Sin"] {
        y = g.unary(op, y).unwrap();
    }
    let xs: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.01).cos()).collect();
    let input = OwnedTensor::from_f32(rt, &[1000], &xs);
    let compiled = function(rt, ctx, &g, &[x], &[y], xla).unwrap();
    assert!(!compiled.fast_path());
    assert!(compiled.call_options().jit_compile);
    let plain = function(rt, ctx, &g, &[x], &[y], CallOptions::default()).unwrap();
    let (a, b) = (run(rt, &compiled, &input), run(rt, &plain, &input));
    for (i, (p, q)) in a.iter().zip(&b).enumerate() {
        assert!((p - q).abs() <= 1e-5 * q.abs().max(1.0), "element {i}: {p} vs {q}");
    }

    // AsString has no XLA kernel: refused when the function is made, naming the op.
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[3])).unwrap();
    let s = g.unary("AsString", x).unwrap();
    let err = function(rt, ctx, &g, &[x], &[s], xla).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains("No registered 'AsString' OpKernel for XLA_CPU_JIT devices"), "{err}");
    assert!(err.message.contains("Detected unsupported operations when trying to compile graph"), "{err}");
    drop((compiled, plain));
    unsafe { ctx.delete(rt) };
}

#[test]
fn functions_with_effects_keep_the_default_path_when_grappler_runs() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let y = g.unary("Neg", x).unwrap();
    let effect = g.unary("Identity", x).unwrap();
    let names = naming::output_arg_names(1);
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[effect.oper] };
    let make = |options| unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &naming::function_name("effects"), &sig, options) }.unwrap();
    let optimized = make(CallOptions::default());
    assert!(!optimized.fast_path());
    assert!(optimized.fast_path_blocker().unwrap().contains("control outputs"), "{:?}", optimized.fast_path_blocker());
    let plain = make(CallOptions { grappler: false, ..CallOptions::default() });
    assert_eq!(plain.fast_path(), polyfn_tf::fast_path_supported(rt));
    // A read made a control output (as Python makes every read whose value is used one) is no
    // effect Grappler could prune: it keeps the function on the caller-thread path.
    let mut g = Graph::new(rt);
    let v = g.placeholder(DT_RESOURCE, None).unwrap();
    let read = g.read_variable(v, DT_FLOAT).unwrap();
    let y = g.unary("Neg", read).unwrap();
    let sig = GraphSignature { inputs: &[v], outputs: &[y], output_names: &names, control_outputs: &[read.oper] };
    let reads = unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &naming::function_name("reads"), &sig, CallOptions::default()) }
        .unwrap();
    assert_eq!(reads.fast_path_blocker(), None);
    assert_eq!(reads.fast_path(), polyfn_tf::fast_path_supported(rt));
    // The same for the function restored from its definition (a trace cache entry, a SavedModel).
    let reads_def = reads.to_function_def().unwrap();
    let reads_restored = EagerFunction::from_function_def(rt, ctx, &reads_def, &[], &naming::function_name("reads")).unwrap();
    assert_eq!(reads_restored.fast_path_blocker(), None);
    assert_eq!(reads_restored.fast_path(), polyfn_tf::fast_path_supported(rt));
    // The same decision for the function restored from its definition.
    let def = optimized.to_function_def().unwrap();
    let restored = EagerFunction::from_function_def(rt, ctx, &def, &[], &naming::function_name("effects")).unwrap();
    assert!(!restored.fast_path());
    drop((optimized, plain, restored, reads, reads_restored)); // every function before its context
    unsafe { ctx.delete(rt) };
}

#[test]
fn a_definition_exported_with_xla_follows_the_options_it_is_restored_with() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let (g, x, y) = add_twice(rt);
    let xla = CallOptions { jit_compile: true, ..CallOptions::default() };
    let compiled = function(rt, ctx, &g, &[x], &[y], xla).unwrap();
    let def = compiled.to_function_def().unwrap();
    // The attribute map entry: key "_XlaMustCompile", then its AttrValue (field 2) { b (5): .. }.
    let value = |d: &[u8]| {
        let at = d.windows(15).position(|w| w == b"_XlaMustCompile").expect("the XLA attribute") + 15;
        d[at..at + 4].to_vec()
    };
    assert_eq!(value(&def), b"\x12\x02\x28\x01", "exported as true");
    let plain = EagerFunction::from_function_def(rt, ctx, &def, &[], &naming::function_name("restored")).unwrap();
    assert!(plain.fast_path(), "restored without XLA: the caller-thread path again");
    let plain_def = plain.to_function_def().unwrap();
    assert_eq!(value(&plain_def), b"\x12\x02\x28\x00", "restored as false");
    let again = EagerFunction::from_function_def_with(rt, ctx, &def, &[], &naming::function_name("restored"), xla).unwrap();
    assert!(!again.fast_path());
    let input = OwnedTensor::from_f32(rt, &[64], &[1.0; 64]);
    for (a, b) in run(rt, &plain, &input).iter().zip(run(rt, &again, &input)) {
        assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
    }
    drop((compiled, plain, again));
    unsafe { ctx.delete(rt) };
}

/// Operations excluded from a function (control flow's absorbed originals) are not in it: XLA
/// compiles the rest, and the definition does not hold them. Not excluded, the same graph is refused.
#[test]
fn excluded_operations_stay_out_of_the_function_and_of_xla() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[3])).unwrap();
    let y = g.unary("Neg", x).unwrap();
    let dead = g.unary("AsString", x).unwrap();
    let names = naming::output_arg_names(1);
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    let xla = CallOptions { jit_compile: true, ..CallOptions::default() };
    let make = |excluded: &[_]| unsafe {
        EagerFunction::from_graph_excluding(rt, ctx, g.raw(), &naming::function_name("excluding"), &sig, xla, excluded)
    };
    let err = make(&[]).unwrap_err();
    assert!(err.message.contains("No registered 'AsString' OpKernel for XLA_CPU_JIT devices"), "{err}");
    let f = make(&[dead.oper]).unwrap();
    let def = f.to_function_def().unwrap();
    assert!(!def.windows(8).any(|w| w == b"AsString"), "the excluded operation is not in the definition");
    assert!(def.windows(3).any(|w| w == b"Neg"));
    let input = OwnedTensor::from_f32(rt, &[3], &[1.0, -2.0, 3.5]);
    assert_eq!(run(rt, &f, &input), vec![-1.0, 2.0, -3.5]);
    drop(f);
    unsafe { ctx.delete(rt) };
}

/// A context with no device but CPUs is known as one (so Grappler skips the memory optimizer's
/// GPU-only swapping heuristics, see `call_options::CPU_CONFIG_PROTO`), and asking again
/// answers the same from the cache; functions still run with Grappler's results.
#[test]
fn a_context_of_cpus_only_is_known_as_one() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    assert!(ctx.only_cpus(rt));
    assert!(ctx.only_cpus(rt));
    let (g, x, y) = add_twice(rt);
    let f = function(rt, ctx, &g, &[x], &[y], CallOptions::default()).unwrap();
    let input = OwnedTensor::from_f32(rt, &[64], &vec![1.0; 64]);
    assert_eq!(run(rt, &f, &input)[0].to_bits(), (1.0f32 + (0.1f32 + 0.2f32)).to_bits());
    drop(f);
    unsafe { ctx.delete(rt) };
}
