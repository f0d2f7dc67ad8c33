//! Takes out of a gradient of TensorFlow's C++ registry (`TF_AddGradients`) the reductions that
//! static shapes show reduce nothing. For a binary element-wise op (Add, Sub, Mul, RealDiv,
//! Maximum, ...) the registry builds each input's gradient as
//! `Reshape(Sum(g, BroadcastGradientArgs(Shape(a), Shape(b))[k]), Shape(input))`, whatever the
//! shapes, and TensorFlow constant-folds every Shape, BroadcastGradientArgs, Sum and Reshape before
//! a function's first run (7 s for a chain of 1,000 multiplications). Where the input's static
//! shape is fully known and is the op's output's (the other input broadcasts into it, and `g` has
//! it), Sum reduces only dimensions of size 1 and Reshape gives back `g`'s shape: the gradient is
//! `g` itself, as Python's math_grad.py gives it (`SmartBroadcastGradientArgs`). The Reshape's
//! consumers are made to read `g`.
//!
//! The call's operations that no gradient depends on (the gradients of inputs that are not xs, such
//! as a constant factor's, and what the rewiring left unused) are named, for the traced function
//! to leave out: TensorFlow Java cannot remove an operation from a graph, and TensorFlow's
//! preparation of the first run took 0.5 s for the 8,000 such operations of that chain (0.1 s
//! without them, as Python's `GradientTape`, which builds none). Natively: through TensorFlow
//! Java, the walk and rewiring took 0.3 s of tracing for those 1,000 multiplications.

use crate::c_api::{TF_Graph, TF_Input, TF_Operation, TF_Output};
use crate::graph_ops::{is_stateful, static_shape};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::collections::{HashMap, HashSet};
use std::ffi::CStr;

/// What [`unbroadcast`] made of one `TF_AddGradients` call's gradients.
pub struct Unbroadcast {
    /// The gradients, each replaced by what it reshaped where it was such a Reshape.
    pub dx: Vec<TF_Output>,
    /// The call's operations that none of `dx` depends on (by data or control), all stateless
    /// with outputs: what the traced function can leave out.
    pub unused: Vec<*mut TF_Operation>,
}

/// Rewires the gradient operations named under `prefix` (one `TF_AddGradients` call's, which
/// nothing outside them reads yet) that `dx` depends on, and names those that none of `dx`
/// depends on then.
///
/// # Safety
/// `graph` must be a live graph not used by another thread during the call, and each of `dx` an
/// existing output of it.
pub unsafe fn unbroadcast(rt: &Runtime, graph: *mut TF_Graph, prefix: &str, dx: &[TF_Output]) -> Result<Unbroadcast, TfError> {
    let api = rt.api();
    let under = format!("{prefix}/");
    let mut reshapes = Vec::new();
    let mut seen = HashSet::new();
    let mut todo: Vec<*mut TF_Operation> = dx.iter().map(|o| o.oper).collect();
    while let Some(op) = todo.pop() {
        // SAFETY: operations of the live graph (caller's contract); their names live as long as it.
        if !seen.insert(op) || !unsafe { CStr::from_ptr((api.TF_OperationName)(op)) }.to_bytes().starts_with(under.as_bytes()) {
            continue;
        }
        // SAFETY: as above.
        if unsafe { op_type(rt, op) } == b"Reshape" {
            reshapes.push(op);
        }
        // SAFETY: as above.
        for i in 0..unsafe { (api.TF_OperationNumInputs)(op) } {
            // SAFETY: i is below the operation's input count.
            todo.push(unsafe { (api.TF_OperationInput)(TF_Input { oper: op, index: i }) }.oper);
        }
    }
    let mut replaced: HashMap<(*mut TF_Operation, i32), TF_Output> = HashMap::new();
    for reshape in reshapes {
        // SAFETY: an operation of the live graph.
        let Some(g) = unsafe { unreduced(rt, graph, reshape) }? else { continue };
        let out = TF_Output { oper: reshape, index: 0 };
        // SAFETY: an output of the live graph.
        for consumer in unsafe { consumers(rt, out) } {
            let status = Status::new(api);
            // SAFETY: g and consumer belong to the live graph; g has the shape the consumer read.
            unsafe { (api.TF_UpdateEdge)(graph, g, consumer, status.raw()) };
            status.check("rewiring a gradient")?;
        }
        replaced.insert((out.oper, out.index), g);
    }
    let dx: Vec<TF_Output> = dx
        .iter()
        .map(|&d| {
            // A Reshape's g may itself have been a Reshape taken out.
            let mut d = d;
            while let Some(&g) = replaced.get(&(d.oper, d.index)) {
                d = g;
            }
            d
        })
        .collect();
    // SAFETY: as above.
    let unused = unsafe { unused(rt, graph, &under, &dx) };
    Ok(Unbroadcast { dx, unused })
}

/// The stateless operations with outputs named under `under` that none of `dx` depends on, by
/// data or control, through operations named under `under`, nor any of the call's operations the
/// function keeps whoever reads them: a stateful one or one without outputs (an `Assert` a custom
/// gradient builds and nothing reads), whose inputs must stay in the function too.
///
/// # Safety
/// `graph` must be a live graph, `dx` outputs of it.
unsafe fn unused(rt: &Runtime, graph: *mut TF_Graph, under: &str, dx: &[TF_Output]) -> Vec<*mut TF_Operation> {
    let api = rt.api();
    // SAFETY (whole body): operations of the live graph, inputs read within their counts; names
    // and types live as long as the graph.
    unsafe {
        let named_under = |op: *mut TF_Operation| CStr::from_ptr((api.TF_OperationName)(op)).to_bytes().starts_with(under.as_bytes());
        let kept_anyway =
            |op: *mut TF_Operation| (api.TF_OperationNumOutputs)(op) == 0 || is_stateful(rt, CStr::from_ptr((api.TF_OperationOpType)(op)));
        // One scan of the graph finds the call's operations, and the roots among them.
        let mut mine = Vec::new();
        let mut todo: Vec<*mut TF_Operation> = dx.iter().map(|o| o.oper).collect();
        let mut pos = 0usize;
        loop {
            let op = (api.TF_GraphNextOperation)(graph, &mut pos);
            if op.is_null() {
                break;
            }
            if named_under(op) {
                if kept_anyway(op) {
                    todo.push(op);
                } else {
                    mine.push(op);
                }
            }
        }
        let mut live = HashSet::new();
        while let Some(op) = todo.pop() {
            if !named_under(op) || !live.insert(op) {
                continue;
            }
            for i in 0..(api.TF_OperationNumInputs)(op) {
                todo.push((api.TF_OperationInput)(TF_Input { oper: op, index: i }).oper);
            }
            let n = (api.TF_OperationNumControlInputs)(op);
            let mut controls = vec![std::ptr::null_mut(); n.max(0) as usize];
            let got = (api.TF_OperationGetControlInputs)(op, controls.as_mut_ptr(), n);
            todo.extend(controls.into_iter().take(got.clamp(0, n.max(0)) as usize));
        }
        mine.retain(|op| !live.contains(op));
        mine
    }
}

/// The `g` of `reshape` when it is `Reshape(Sum(g, BroadcastGradientArgs(Shape(a),
/// Shape(b))[k]), Shape(input k))` of a known-shape input the op did not broadcast; else None.
///
/// # Safety
/// `reshape` must be an operation of the live `graph`.
unsafe fn unreduced(rt: &Runtime, graph: *mut TF_Graph, reshape: *mut TF_Operation) -> Result<Option<TF_Output>, TfError> {
    // SAFETY (whole body): operations of the live graph, inputs read within their counts.
    unsafe {
        let (Some(sum), Some(shape_of)) = (input(rt, reshape, 0), input(rt, reshape, 1)) else { return Ok(None) };
        if op_type(rt, sum.oper) != b"Sum" || op_type(rt, shape_of.oper) != b"Shape" {
            return Ok(None);
        }
        let (Some(g), Some(axes)) = (input(rt, sum.oper, 0), input(rt, sum.oper, 1)) else { return Ok(None) };
        if op_type(rt, axes.oper) != b"BroadcastGradientArgs" || !(0..2).contains(&axes.index) {
            return Ok(None);
        }
        let (Some(mine), Some(other)) = (input(rt, axes.oper, axes.index), input(rt, axes.oper, 1 - axes.index)) else {
            return Ok(None);
        };
        if (mine.oper, mine.index) != (shape_of.oper, shape_of.index) || op_type(rt, other.oper) != b"Shape" {
            return Ok(None);
        }
        let (Some(x), Some(y)) = (input(rt, shape_of.oper, 0), input(rt, other.oper, 0)) else { return Ok(None) };
        let x = static_shape(rt, graph, x)?;
        let y = static_shape(rt, graph, y)?;
        let gs = static_shape(rt, graph, g)?;
        Ok(match (x, y, gs) {
            (Some(x), Some(y), Some(gs)) if x == gs && broadcasts_into(&y, &x) => Some(g),
            _ => None,
        })
    }
}

/// Whether `to` is fully known, and so is `other`, and broadcasting them gives `to`.
fn broadcasts_into(other: &[i64], to: &[i64]) -> bool {
    if to.iter().any(|&d| d < 0) || other.len() > to.len() {
        return false;
    }
    let offset = to.len() - other.len();
    other.iter().enumerate().all(|(i, &d)| d == 1 || (d >= 0 && d == to[offset + i]))
}

/// The name of `op`, for the caller to find it again (TensorFlow Java looks operations up by name).
///
/// # Safety
/// `op` must be an operation of a live graph.
pub unsafe fn operation_name(rt: &Runtime, op: *mut TF_Operation) -> String {
    // SAFETY: caller's contract; the name lives as long as the graph and is copied here.
    unsafe { CStr::from_ptr((rt.api().TF_OperationName)(op)) }.to_string_lossy().into_owned()
}

/// The type of `op`.
///
/// # Safety
/// `op` must be an operation of a live graph.
unsafe fn op_type(rt: &Runtime, op: *mut TF_Operation) -> &[u8] {
    // SAFETY: caller's contract; the type string lives as long as the graph.
    unsafe { CStr::from_ptr((rt.api().TF_OperationOpType)(op)) }.to_bytes()
}

/// What input `i` of `op` reads; None past its inputs.
///
/// # Safety
/// `op` must be an operation of a live graph.
unsafe fn input(rt: &Runtime, op: *mut TF_Operation, i: i32) -> Option<TF_Output> {
    let api = rt.api();
    // SAFETY: caller's contract; i is checked against the input count first.
    unsafe { (i >= 0 && i < (api.TF_OperationNumInputs)(op)).then(|| (api.TF_OperationInput)(TF_Input { oper: op, index: i })) }
}

/// The inputs that read `out`.
///
/// # Safety
/// `out` must be an output of a live graph.
unsafe fn consumers(rt: &Runtime, out: TF_Output) -> Vec<TF_Input> {
    let api = rt.api();
    // SAFETY: caller's contract.
    let n = unsafe { (api.TF_OperationOutputNumConsumers)(out) };
    let mut found = vec![TF_Input { oper: std::ptr::null_mut(), index: 0 }; n.max(0) as usize];
    // SAFETY: found holds n entries.
    let got = unsafe { (api.TF_OperationOutputConsumers)(out, found.as_mut_ptr(), n) };
    found.truncate(got.clamp(0, n.max(0)) as usize);
    found
}

#[cfg(test)]
mod tests {
    use super::broadcasts_into;

    #[test]
    fn an_operand_broadcasts_into_a_known_shape_it_fits() {
        assert!(broadcasts_into(&[], &[4]));
        assert!(broadcasts_into(&[4], &[4]));
        assert!(broadcasts_into(&[1, 3], &[2, 3]));
        assert!(broadcasts_into(&[1, 1], &[1, 1]));
        assert!(broadcasts_into(&[], &[]));
    }

    #[test]
    fn nothing_broadcasts_into_what_it_would_grow_or_an_unknown_shape() {
        assert!(!broadcasts_into(&[2, 1], &[1, 3]));
        assert!(!broadcasts_into(&[4], &[]));
        assert!(!broadcasts_into(&[2, 4], &[4]));
        assert!(!broadcasts_into(&[3], &[4]));
        assert!(!broadcasts_into(&[-1], &[4]));
        assert!(!broadcasts_into(&[4], &[-1]));
    }
}
