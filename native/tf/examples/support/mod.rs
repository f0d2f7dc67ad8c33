//! What the benchmark examples share: the `add2` graph, medians, C API functions looked up by
//! name, the session configuration that runs every op on the calling thread, and status checks.
//! Each example uses part of it.
#![allow(dead_code)]

use polyfn_tf::c_api::{TF_Graph, TF_Output, TF_Session, TF_SessionOptions, TF_Status};
use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::Runtime;
use std::ffi::{c_void, CStr};

/// The `add2` workload, `y = x + 2` on a float `x` of shape `dims`: the graph, `x` and `y`.
pub fn add2_graph(rt: &'static Runtime, dims: &[i64]) -> (Graph, TF_Output, TF_Output) {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(dims)).unwrap();
    let two = g.constant(&OwnedTensor::from_f32(rt, &[], &[2.0])).unwrap();
    let y = g.binary("AddV2", x, two).unwrap();
    (g, x, y)
}

/// The median of `v` (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A C API function looked up by name in the loaded runtime (loaded with RTLD_GLOBAL).
pub fn sym<T>(name: &CStr) -> T {
    // SAFETY: dlsym with a NUL-terminated name; the caller names a function of type T.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    assert!(!p.is_null(), "{name:?} not found");
    // SAFETY: T is a function pointer type matching the C declaration (caller's contract).
    unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) }
}

type SetConfig = unsafe extern "C" fn(*mut TF_SessionOptions, *const c_void, usize, *mut TF_Status);

/// `ConfigProto { inter_op_parallelism_threads: -1 }`.
const INLINE_CONFIG: &[u8] = b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01";

/// Panics with TensorFlow's message if `status` is not OK.
pub fn check(rt: &Runtime, status: *mut TF_Status, what: &str) {
    // SAFETY: a live status.
    unsafe {
        if (rt.api().TF_GetCode)(status) != 0 {
            panic!("{what}: {}", CStr::from_ptr((rt.api().TF_Message)(status)).to_string_lossy());
        }
    }
}

/// A session over `graph` that runs every op on the thread calling `TF_SessionRun`.
///
/// # Safety
/// `graph` and `status` must be live; the graph must outlive the session.
pub unsafe fn inline_session(rt: &'static Runtime, graph: *mut TF_Graph, status: *mut TF_Status) -> *mut TF_Session {
    let api = rt.api();
    let set_config: SetConfig = sym(c"TF_SetConfig");
    // SAFETY: the caller's contract; the options are deleted once used.
    unsafe {
        let opts = (api.TF_NewSessionOptions)();
        set_config(opts, INLINE_CONFIG.as_ptr().cast(), INLINE_CONFIG.len(), status);
        check(rt, status, "TF_SetConfig");
        let s = (api.TF_NewSession)(graph, opts, status);
        (api.TF_DeleteSessionOptions)(opts);
        check(rt, status, "TF_NewSession");
        s
    }
}
