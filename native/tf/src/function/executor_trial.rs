//! The caller-thread path of functions the session path cannot take: TensorFlow's single-threaded
//! executor, tried after the promotion count and kept only where it is faster.
//!
//! A function that reads variables (a model loaded with `Function.load` takes each as an input)
//! cannot run in a session of its own: its state lives in the eager context. Its eager calls hand
//! the graph to TensorFlow's executor, which runs each expensive kernel on the inter-op pool and
//! wakes the caller at the end. Naming `SINGLE_THREADED_EXECUTOR` in the call's `executor_type`
//! attribute (as `tf.function(experimental_attributes=...)` users can) runs the kernels one after
//! the other on the calling thread instead, intra-op parallelism kept. Which wins depends on the
//! function and the machine's load: on a busy 2-core machine MobileNetV2 at batch 1 ran faster
//! on it, on a quiet one the pool's inter-op parallelism won (`bench/comparisons.md`).
//!
//! That executor gives up inter-op parallelism, and refuses low-level control flow,
//! reference-typed edges, partitioned graphs and collectives; its instantiation is a second one
//! (Grappler, kernels), which TensorFlow's kernel cache keeps as long as the function, even when
//! the trial goes back to the pool. So a function tries it only when neither it nor a function it
//! calls has control flow (which lowers to what it refuses) or an op that runs functions of its
//! own, its context has no device but CPUs, and each stateful op keeps its state in a resource
//! input (variables, lookup tables): a random op's kernel would restart its sequence in the new
//! instantiation.
//!
//! The trial follows the session path's: the last [`TRIAL_CALLS`] calls before the promotion count
//! are timed on the pool; at the count (where the session path was tried and refused, or, for a
//! function it could never take, by this trial's own count) the trial starts; after
//! [`WARMUP_CALLS`] untimed calls (the new instantiation), the next [`TRIAL_CALLS`] are timed on
//! the single-threaded executor, which is kept only if its fastest call beats the pool's fastest.
//! A call the executor refuses ends the trial and runs again on the pool if the function only
//! reads its state (a refusal comes at instantiation, before any kernel ran, but a rerun must
//! never repeat a write); any other failure during the trial ends it too.

use super::session_tier::{CallCount, TRIAL_CALLS};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// The `executor_type` attribute's value that selects the single-threaded executor.
pub(crate) const SINGLE_THREADED: &[u8] = b"SINGLE_THREADED_EXECUTOR";

/// Calls on the single-threaded executor before timing starts: the first instantiates it.
pub(crate) const WARMUP_CALLS: u32 = 2;

/// Stateful ops that keep their state in a resource input, so that instantiating the function
/// anew changes nothing they do; the first ones only read it.
const STATE_IN_INPUTS: &[&str] = &[
    "ReadVariableOp",
    "ResourceGather",
    "ResourceGatherNd",
    "VarIsInitializedOp",
    "VariableShape",
    "LookupTableFindV2",
    "LookupTableSizeV2",
    "LookupTableExportV2",
    "Assert",
    "AssignVariableOp",
    "AssignAddVariableOp",
    "AssignSubVariableOp",
    "LookupTableInsertV2",
    "LookupTableRemoveV2",
    "PrintV2",
];

/// How many of [`STATE_IN_INPUTS`] only read their state (or check a condition).
const READS: usize = 9;

/// Ops that instantiate functions of their own while they run (the executor would be passed on
/// to them, and one refused then fails the call after other kernels ran).
const RUN_FUNCTIONS: &[&str] = &["For", "RemoteCall", "MapDefun", "SymbolicGradient"];

/// Why a function with these ops (type, node; its library functions' included) must not try the
/// single-threaded executor; `None` if it may. `known` says which op types TensorFlow's registry
/// has (another type names a function: a call by name), `stateful` which it calls stateful. Calls
/// through `PartitionedCall`/`StatefulPartitionedCall` are inlined before the executor runs (their
/// callees are among `ops`); control flow, ops that run functions, calls by name, collectives and
/// kernels with state of their own are refused.
pub(crate) fn blocker(ops: &[(String, String)], known: impl Fn(&str) -> bool, stateful: impl Fn(&str) -> bool) -> Option<String> {
    ops.iter()
        .find(|(ty, _)| {
            let ty = ty.as_str();
            crate::graph_ops::CONTROL_FLOW.contains(&ty)
                || RUN_FUNCTIONS.contains(&ty)
                || ty.starts_with("Collective")
                || !known(ty)
                || (stateful(ty) && !crate::graph_ops::CALLS.contains(&ty) && !STATE_IN_INPUTS.contains(&ty))
        })
        .map(|(ty, node)| format!("its op {node} ({ty}) has control flow or state of its own"))
}

/// Whether every stateful op among `ops` only reads (a call that failed can then run again).
pub(crate) fn only_reads(ops: &[(String, String)], stateful: impl Fn(&str) -> bool) -> bool {
    ops.iter().all(|(ty, _)| !stateful(ty) || crate::graph_ops::CALLS.contains(&ty.as_str()) || STATE_IN_INPUTS[..READS].contains(&ty.as_str()))
}

const IDLE: u8 = 0;
const TRYING: u8 = 1;
const KEPT: u8 = 2;
const DONE: u8 = 3;

/// Where a function stands with the single-threaded executor: not tried yet, on trial, kept, or
/// done with it (slower, refused, or not allowed).
#[derive(Debug)]
pub(crate) struct ExecutorTrial {
    /// The function's pool calls counted until the trial (only for functions the session tier
    /// does not count), and the fastest of the last [`TRIAL_CALLS`] of them.
    count: CallCount,
    pool_best: AtomicU64,
    state: AtomicU8,
    /// Whether a call the executor refused may run again on the pool (the function only reads).
    rerun_safe: AtomicBool,
    /// Calls started on the executor during the trial (the first [`WARMUP_CALLS`] are not timed).
    started: AtomicU32,
    /// Timed calls finished, and the fastest of them, in nanoseconds.
    timed: AtomicU32,
    best: AtomicU64,
}

impl Default for ExecutorTrial {
    fn default() -> Self {
        ExecutorTrial::new(false, 0)
    }
}

/// The outcome of a trial: kept or not, and the fastest call on each executor.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ExecutorVerdict {
    pub(crate) kept: bool,
    pub(crate) pool_nanos: u64,
    pub(crate) single_nanos: u64,
}

impl ExecutorTrial {
    /// A trial that counts the function's pool calls itself (`counting`, for functions the
    /// session tier does not count) and starts after `after` of them (never when 0); otherwise
    /// one started by [`ExecutorTrial::start`].
    pub(crate) fn new(counting: bool, after: u32) -> Self {
        ExecutorTrial {
            count: CallCount::new(counting, after),
            pool_best: AtomicU64::new(u64::MAX),
            state: AtomicU8::new(IDLE),
            rerun_safe: AtomicBool::new(false),
            started: AtomicU32::new(0),
            timed: AtomicU32::new(0),
            best: AtomicU64::new(u64::MAX),
        }
    }

    /// Whether a pool call should be timed: one of the last [`TRIAL_CALLS`] before the count.
    pub(crate) fn times_pool(&self) -> bool {
        self.count.near()
    }

    /// Records how long a timed pool call took.
    pub(crate) fn pool_took(&self, nanos: u64) {
        self.pool_best.fetch_min(nanos, Ordering::Relaxed);
    }

    /// Counts a pool call; true for exactly one caller, the one whose call reached the count.
    pub(crate) fn count_call(&self) -> bool {
        self.count.count()
    }

    /// Starts the trial; only once, and never after [`ExecutorTrial::end`]. `rerun_safe`: the
    /// function only reads its state, so a refused call may run again on the pool.
    pub(crate) fn start(&self, rerun_safe: bool) -> bool {
        self.rerun_safe.store(rerun_safe, Ordering::Relaxed);
        self.state.compare_exchange(IDLE, TRYING, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    /// Whether the trial is on (not yet decided).
    pub(crate) fn on_trial(&self) -> bool {
        self.state.load(Ordering::Relaxed) == TRYING
    }

    /// Whether a call the executor refused may run again on the pool.
    pub(crate) fn rerun_safe(&self) -> bool {
        self.rerun_safe.load(Ordering::Relaxed)
    }

    /// Never tries (or stops using) the single-threaded executor.
    pub(crate) fn end(&self) {
        self.state.store(DONE, Ordering::Release);
    }

    /// Whether calls run on the single-threaded executor (on trial or kept).
    pub(crate) fn in_use(&self) -> bool {
        matches!(self.state.load(Ordering::Relaxed), TRYING | KEPT)
    }

    /// Whether this call on the single-threaded executor should be timed.
    pub(crate) fn times(&self) -> bool {
        self.state.load(Ordering::Relaxed) == TRYING && self.started.fetch_add(1, Ordering::Relaxed) >= WARMUP_CALLS
    }

    /// Records a timed call; the call that completes the trial decides against the pool's fastest
    /// timed call, this trial's own or `pool_best` (the session tier's; `u64::MAX` if none: if
    /// no pool call was timed at all, the pool is kept).
    pub(crate) fn took(&self, nanos: u64, pool_best: u64) -> Option<ExecutorVerdict> {
        let pool_best = pool_best.min(self.pool_best.load(Ordering::Relaxed));
        self.best.fetch_min(nanos, Ordering::Relaxed);
        if self.timed.fetch_add(1, Ordering::AcqRel) + 1 != TRIAL_CALLS {
            return None;
        }
        let single = self.best.load(Ordering::Relaxed);
        let kept = pool_best != u64::MAX && single < pool_best;
        // Only a trial still on decides (an executor refused meanwhile stays refused).
        let _ = self.state.compare_exchange(TRYING, if kept { KEPT } else { DONE }, Ordering::AcqRel, Ordering::Relaxed);
        Some(ExecutorVerdict { kept: kept && self.in_use(), pool_nanos: pool_best, single_nanos: single })
    }
}

/// Whether a failed call's error is the single-threaded executor refusing the function at
/// instantiation (before any kernel ran): TensorFlow's messages for what it does not support.
pub(crate) fn refused(message: &str) -> bool {
    message.contains("Single-threaded executor")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(types: &[&str]) -> Vec<(String, String)> {
        types.iter().enumerate().map(|(i, t)| (t.to_string(), format!("n{i}"))).collect()
    }

    #[test]
    fn only_functions_whose_state_lives_in_their_inputs_may_try_it() {
        // As TensorFlow's registry has them: a call op is stateful too.
        let stateful = |ty: &str| {
            matches!(ty, "ReadVariableOp" | "AssignVariableOp" | "RandomUniform" | "HashTableV2" | "StatefulPartitionedCall" | "For")
        };
        let known = |ty: &str| !ty.starts_with("__inference");
        assert_eq!(blocker(&ops(&["Placeholder", "ReadVariableOp", "Conv2D", "AssignVariableOp"]), known, stateful), None);
        assert_eq!(blocker(&ops(&["StatefulPartitionedCall", "ReadVariableOp"]), known, stateful), None, "calls are inlined");
        for bad in ["RandomUniform", "HashTableV2", "While", "StatelessIf", "CollectiveReduceV2", "For", "__inference_f_12"] {
            let why = blocker(&ops(&["Placeholder", bad]), known, stateful).expect(bad);
            assert!(why.contains(bad), "{why}");
        }
        assert!(only_reads(&ops(&["ReadVariableOp", "StatefulPartitionedCall", "Conv2D"]), stateful));
        assert!(!only_reads(&ops(&["ReadVariableOp", "AssignVariableOp"]), stateful));
    }

    #[test]
    fn the_trial_keeps_the_faster_executor() {
        let faster = ExecutorTrial::default();
        assert!(!faster.in_use());
        assert!(faster.start(true));
        assert!(!faster.start(true), "once");
        assert!(faster.on_trial() && faster.rerun_safe());
        assert!(faster.in_use());
        for _ in 0..WARMUP_CALLS {
            assert!(!faster.times());
        }
        for i in 0..TRIAL_CALLS {
            assert!(faster.times());
            let v = faster.took(900 + u64::from(i), 1_000);
            assert_eq!(v.is_some(), i + 1 == TRIAL_CALLS);
            if let Some(v) = v {
                assert_eq!(v, ExecutorVerdict { kept: true, pool_nanos: 1_000, single_nanos: 900 });
            }
        }
        assert!(faster.in_use() && !faster.times());

        let slower = ExecutorTrial::default();
        slower.start(false);
        let verdicts: Vec<_> = (0..TRIAL_CALLS).filter_map(|_| slower.took(1_100, 1_000)).collect();
        assert_eq!(verdicts, vec![ExecutorVerdict { kept: false, pool_nanos: 1_000, single_nanos: 1_100 }]);
        assert!(!slower.in_use());

        // No pool call timed: the pool is kept.
        let unknown = ExecutorTrial::default();
        unknown.start(false);
        assert!((0..TRIAL_CALLS).filter_map(|_| unknown.took(10, u64::MAX)).all(|v| !v.kept));
        assert!(!unknown.in_use());
    }

    #[test]
    fn a_counting_trial_starts_at_its_count_and_compares_with_its_own_pool_calls() {
        let t = ExecutorTrial::new(true, 20);
        let mut reached = 0;
        for call in 1..=30u32 {
            // The last TRIAL_CALLS calls before the count are timed.
            assert_eq!(t.times_pool(), call > 20 - TRIAL_CALLS && call <= 20, "call {call}");
            if t.times_pool() {
                t.pool_took(1_000 + u64::from(call));
            }
            if t.count_call() {
                reached = call;
                assert!(t.start(true));
            }
        }
        assert_eq!(reached, 20);
        // The pool's fastest was call 5's (the first timed), 1005 ns.
        let v: Vec<_> = (0..TRIAL_CALLS).filter_map(|_| t.took(900, u64::MAX)).collect();
        assert_eq!(v, vec![ExecutorVerdict { kept: true, pool_nanos: 1_005, single_nanos: 900 }]);
        assert!(!ExecutorTrial::new(true, 0).count_call(), "a count of 0 never starts");
        assert!(!ExecutorTrial::new(false, 5).times_pool());
    }

    #[test]
    fn an_ended_trial_never_starts_and_a_refusal_stays() {
        let t = ExecutorTrial::default();
        t.end();
        assert!(!t.start(true) && !t.in_use());
        let r = ExecutorTrial::default();
        r.start(true);
        r.end();
        let v: Vec<_> = (0..TRIAL_CALLS).filter_map(|_| r.took(1, 1_000)).collect();
        assert!(!v[0].kept && !r.in_use(), "refused during the trial: stays off");
        assert!(refused("Single-threaded executor does not support low level control flow"));
        assert!(!refused("Incompatible shapes"));
    }
}
