//! The session path: a function called often enough moves to a `TF_Session` on the caller's
//! thread, with the same results; functions whose results could change stay on the eager path.

mod support;

use polyfn_tf::c_api::TF_Output;
use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{naming, CallOptions, EagerContext, EagerFunction, GraphSignature, Runtime};

fn function(rt: &'static Runtime, ctx: EagerContext, g: &Graph, inputs: &[TF_Output], outputs: &[TF_Output], options: CallOptions) -> EagerFunction {
    let names = naming::output_arg_names(outputs.len());
    let sig = GraphSignature { inputs, outputs, output_names: &names, control_outputs: &[] };
    unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &naming::function_name("session"), &sig, options) }.unwrap()
}

fn run(rt: &'static Runtime, f: &EagerFunction, inputs: &[&OwnedTensor]) -> Vec<Vec<f32>> {
    let raw: Vec<_> = inputs.iter().map(|t| t.raw()).collect();
    let mut out = Vec::new();
    unsafe { f.call(&raw, &mut out) }.unwrap();
    out.into_iter().map(|t| unsafe { OwnedTensor::from_raw(rt, t) }.to_f32()).collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn after(n: u32) -> CallOptions {
    CallOptions { session_after: n, ..CallOptions::default() }
}

fn scalar(g: &mut Graph, rt: &'static Runtime, v: f32) -> TF_Output {
    g.constant(&OwnedTensor::from_f32(rt, &[], &[v])).unwrap()
}

#[test]
fn a_function_moves_to_its_session_after_the_count_with_the_same_results() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return;
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let (a, b) = (g.placeholder(DT_FLOAT, Some(&[3])).unwrap(), g.placeholder(DT_FLOAT, Some(&[3])).unwrap());
    let sum = g.binary("AddV2", a, b).unwrap();
    let prod = g.binary("Mul", a, b).unwrap();
    let f = function(rt, ctx, &g, &[a, b], &[sum, prod], after(3));
    let x = OwnedTensor::from_f32(rt, &[3], &[1.0, 2.0, 3.0]);
    let y = OwnedTensor::from_f32(rt, &[3], &[0.5, -1.0, 4.0]);
    let want = vec![vec![1.5, 1.0, 7.0], vec![0.5, -2.0, 12.0]];
    for call in 1..=5 {
        assert_eq!(run(rt, &f, &[&x, &y]), want, "call {call}");
        // The third call builds the session; from then on calls run through it.
        assert_eq!(f.on_session_path(), call >= 3, "call {call}");
    }
    // Other shapes of the same dtype (the session's placeholders have no fixed shape).
    let z = OwnedTensor::from_f32(rt, &[3], &[2.0, 2.0, 2.0]);
    assert_eq!(run(rt, &f, &[&z, &z]), vec![vec![4.0; 3], vec![4.0; 3]]);
    drop(f);
    unsafe { ctx.delete(rt) };
}

/// `(x + 0.1) + 0.2`, which Grappler folds to `x + 0.3` (different last bits for some x): the
/// session optimizes exactly when the eager path does.
#[test]
fn the_session_follows_the_grappler_option() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return;
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let xs: Vec<f32> = (0..64).map(|i| -3.0 + 6.0 * i as f32 / 63.0).collect();
    let input = OwnedTensor::from_f32(rt, &[64], &xs);
    let unoptimized: Vec<u32> = xs.iter().map(|x| ((x + 0.1f32) + 0.2f32).to_bits()).collect();
    let folded: Vec<u32> = xs.iter().map(|x| (x + (0.1f32 + 0.2f32)).to_bits()).collect();
    assert_ne!(unoptimized, folded);
    for grappler in [true, false] {
        let mut g = Graph::new(rt);
        let x = g.placeholder(DT_FLOAT, Some(&[64])).unwrap();
        let (a, b) = (scalar(&mut g, rt, 0.1), scalar(&mut g, rt, 0.2));
        let y = g.binary("AddV2", x, a).unwrap();
        let y = g.binary("AddV2", y, b).unwrap();
        let f = function(rt, ctx, &g, &[x], &[y], CallOptions { grappler, ..after(1) });
        let eager = bits(&run(rt, &f, &[&input])[0]);
        assert!(f.on_session_path(), "grappler={grappler}");
        let session = bits(&run(rt, &f, &[&input])[0]);
        let want = if grappler { &folded } else { &unoptimized };
        assert_eq!((&eager, &session), (want, want), "grappler={grappler}");
    }
    unsafe { ctx.delete(rt) };
}

#[test]
fn stateful_functions_and_turned_off_options_stay_on_the_eager_path() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return;
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let x = OwnedTensor::from_f32(rt, &[4], &[0.0; 4]);
    // A random op keeps state in its kernel: a session would restart its sequence.
    let mut g = Graph::new(rt);
    let p = g.placeholder(DT_FLOAT, Some(&[4])).unwrap();
    let shape = g.unary_typed("Shape", p, "out_type", 3).unwrap();
    let noise = g.unary_typed("RandomUniform", shape, "dtype", DT_FLOAT).unwrap();
    let y = g.binary("AddV2", p, noise).unwrap();
    let random = function(rt, ctx, &g, &[p], &[y], after(1));
    let draws: Vec<Vec<u32>> = (0..4).map(|_| bits(&run(rt, &random, &[&x])[0])).collect();
    assert!(!random.on_session_path());
    assert!(draws.windows(2).all(|w| w[0] != w[1]), "every call draws new numbers: {draws:?}");

    let plain = |options: CallOptions| {
        let mut g = Graph::new(rt);
        let p = g.placeholder(DT_FLOAT, Some(&[4])).unwrap();
        let y = g.unary("Neg", p).unwrap();
        function(rt, ctx, &g, &[p], &[y], options)
    };
    for (options, why) in [(after(0), "session_after 0"), (CallOptions { fast_path: false, ..after(1) }, "fast path off")] {
        let f = plain(options);
        for _ in 0..3 {
            assert_eq!(run(rt, &f, &[&x]), vec![vec![-0.0; 4]]);
        }
        assert!(!f.on_session_path(), "{why}");
    }
    // Turning the fast path off later takes calls off the session too.
    let f = plain(after(1));
    run(rt, &f, &[&x]);
    assert!(f.on_session_path());
    f.set_fast_path(false).unwrap();
    assert!(!f.on_session_path());
    assert_eq!(run(rt, &f, &[&x]), vec![vec![-0.0; 4]]);
    // Functions go before their context.
    drop((f, random));
    unsafe { ctx.delete(rt) };
}

#[test]
fn threads_calling_across_the_promotion_all_get_correct_results() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return;
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let p = g.placeholder(DT_FLOAT, Some(&[2])).unwrap();
    let two = scalar(&mut g, rt, 2.0);
    let y = g.binary("Mul", p, two).unwrap();
    let f = function(rt, ctx, &g, &[p], &[y], after(50));
    std::thread::scope(|s| {
        for t in 0..4 {
            let f = &f;
            s.spawn(move || {
                for i in 0..200 {
                    let v = (t * 1000 + i) as f32;
                    let x = OwnedTensor::from_f32(rt, &[2], &[v, -v]);
                    assert_eq!(run(rt, f, &[&x]), vec![vec![2.0 * v, -2.0 * v]]);
                }
            });
        }
    });
    assert!(f.on_session_path());
    drop(f);
    unsafe { ctx.delete(rt) };
}
