//! A polymorphic function's state, independent of TensorFlow: the parameter list fixed by the
//! first trace, the dispatch table of concrete functions, the trace protocol
//! (begin → declare each parameter → finish), and what makes retracing controllable and
//! explainable: reduce-retracing, a bounded cache, trace history with reasons, statistics and
//! a frequent-retrace warning.
//!
//! Generic over the concrete function `C` so the logic is tested without a runtime.

use crate::{
    bind, check_constraints, decode_call_with_captures, decode_value, describe_mismatch, explain_retrace, BindError,
    DispatchTable, FunctionType, Hit, LiteralTable, ParamKind, Parameter, PlaceholderContext,
    PlaceholderSpec, StringTable, TypeRef,
};
use parking_lot::Mutex;
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Distinct values of one Java parameter from which tracing warns (then again at each doubling).
pub const LITERAL_WARNING_THRESHOLD: usize = 8;
/// The frequent-retrace warning looks at this many most recent calls...
pub const RETRACE_WINDOW_CALLS: u64 = 10;
/// ...and warns when at least this many of them traced (tf.function's numbers).
pub const RETRACE_WARNING_TRACES: usize = 5;
/// Trace records kept per function.
pub const HISTORY_CAPACITY: usize = 64;

/// How a polymorphic function caches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// tf.function's `reduce_retracing`: on a miss, trace the most specific common supertype of
    /// the call and the cached signatures, so shapes that vary share one generic trace.
    pub reduce_retracing: bool,
    /// Evict the least recently used concrete function beyond this many (`None`: unbounded).
    pub max_concrete_functions: Option<usize>,
}

/// One traced concrete function with its monomorphic type.
#[derive(Debug)]
pub struct Concrete<C> {
    pub id: u32,
    pub function_type: FunctionType,
    pub output_names: Vec<String>,
    pub inner: C,
}

/// Why a polymorphic-function operation failed.
#[derive(Debug, thiserror::Error)]
pub enum PolyError<E> {
    #[error(transparent)]
    Bind(#[from] BindError),
    #[error("function '{name}' declared parameters {now} but its first trace declared {before}; the parameter list is fixed by the first trace (declare the same parameters, in the same order, on every trace)")]
    ParameterListChanged { name: String, before: String, now: String },
    #[error("function '{0}' is closed")]
    Closed(String),
    #[error(transparent)]
    Build(E),
}

/// Counters of one function's calls and traces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls whose signature was cached exactly.
    pub exact_hits: u64,
    /// Calls served by a more general cached signature.
    pub inexact_hits: u64,
    /// Calls that found no concrete function (and traced).
    pub misses: u64,
    /// Successful traces.
    pub traces: u64,
    /// Concrete functions evicted by the cache bound.
    pub evictions: u64,
    /// Time spent tracing (body, graph conversion, registration), in nanoseconds.
    pub total_trace_nanos: u64,
    pub last_trace_nanos: u64,
}

impl Stats {
    fn calls(&self) -> u64 {
        self.exact_hits + self.inexact_hits + self.misses
    }
}

/// Why and what one trace produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// The traced monomorphic type.
    pub function_type: String,
    /// Why the call did not match a cached signature, e.g.
    /// `x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0`.
    pub reason: String,
    /// The parameter whose type differed (empty for the first trace).
    pub parameter: String,
    pub nanos: u64,
}

struct State<C> {
    declared: Option<FunctionType>,
    table: DispatchTable<Arc<Concrete<C>>>,
    strings: StringTable,
    literals: LiteralTable,
    next_id: u32,
    stats: Stats,
    history: VecDeque<TraceRecord>,
    /// Call counts at which recent traces happened, for the frequent-retrace warning.
    trace_calls: VecDeque<u64>,
    warned_burst: bool,
}

/// A polymorphic function, like `tf.function`: bind the arguments → type the call → look up a
/// concrete function for that type, or trace one.
pub struct Polymorphic<C> {
    name: String,
    options: Options,
    state: Mutex<State<C>>,
    closed: AtomicBool,
}

impl<C> Polymorphic<C> {
    pub fn new(name: impl Into<String>) -> Self {
        Self::with_options(name, Options::default())
    }

    pub fn with_options(name: impl Into<String>, options: Options) -> Self {
        Polymorphic {
            name: name.into(),
            options,
            state: Mutex::new(State {
                declared: None,
                table: DispatchTable::new(),
                strings: StringTable::default(),
                literals: LiteralTable::default(),
                next_id: 0,
                stats: Stats::default(),
                history: VecDeque::new(),
                trace_calls: VecDeque::new(),
                warned_burst: false,
            }),
            closed: AtomicBool::new(false),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Registers the string a map key id stands for in facts (once per id).
    pub fn register_string(&self, id: i64, s: &str) {
        self.state.lock().strings.insert(id, s);
    }

    /// Registers the Java value a literal id stands for in facts (once per id).
    pub fn register_literal(&self, id: i64, repr: &str, class_name: &str) {
        self.state.lock().literals.insert(id, repr, class_name);
    }

    /// The type of one value described by `facts` (map keys and literals resolved).
    pub fn decode_value(&self, facts: &[i64]) -> Result<TypeRef, BindError> {
        let st = self.state.lock();
        let mut pos = 0;
        let t = decode_value(facts, &mut pos, &st.strings, &st.literals)?;
        if pos != facts.len() {
            return Err(BindError::BadFacts(format!("{} trailing facts after one value", facts.len() - pos)));
        }
        Ok(t)
    }

    /// Like [`Polymorphic::decode_value`], for the argument or capture `name`: errors name it
    /// (`x: shape of rank 300 exceeds ...`, `xs[2]: ...`).
    pub fn decode_argument(&self, name: &str, facts: &[i64]) -> Result<TypeRef, BindError> {
        self.decode_value(facts).map_err(|e| e.within(name, true))
    }

    /// The concrete function for a call described by `facts`, or `None` when it must be traced.
    /// Counts a hit in the statistics (a miss is counted by the trace the call then begins).
    pub fn lookup<E>(&self, facts: &[i64]) -> Result<Option<Arc<Concrete<C>>>, PolyError<E>> {
        self.search(facts, true)
    }

    /// Like [`Polymorphic::lookup`], for introspection: not counted as a call.
    pub fn find<E>(&self, facts: &[i64]) -> Result<Option<Arc<Concrete<C>>>, PolyError<E>> {
        self.search(facts, false)
    }

    fn search<E>(&self, facts: &[i64], count: bool) -> Result<Option<Arc<Concrete<C>>>, PolyError<E>> {
        let mut st = self.state.lock();
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        let found = match st.table.lookup_facts(facts) {
            Some(hit) => Some(hit),
            None => {
                let st = &mut *st;
                let Some(declared) = st.declared.as_ref() else { return Ok(None) };
                let call = decode_call_with_captures(declared, facts, &st.strings, &st.literals)?;
                check_constraints(&call, declared)?;
                st.table.lookup(&call, Some(facts))
            }
        };
        if count {
            match found {
                Some((_, Hit::Exact)) => st.stats.exact_hits += 1,
                Some((_, Hit::Inexact)) => st.stats.inexact_hits += 1,
                None => {}
            }
        }
        Ok(found.map(|(c, _)| c))
    }

    /// Starts a trace of a call with arguments named `arg_names`, checking them against the
    /// parameter list when a first trace has fixed it. `call_facts` (when the parameter list is
    /// known) types the call, to explain the retrace and, with reduce-retracing, to generalize it.
    /// `for_call` counts the call as a miss (a trace ahead of calls, for introspection, is not).
    pub fn begin_trace<E>(
        &self,
        arg_names: Vec<String>,
        call_facts: Option<&[i64]>,
        for_call: bool,
    ) -> Result<TraceSession, PolyError<E>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        let mut st = self.state.lock();
        if for_call {
            st.stats.misses += 1;
        }
        let known = st.declared.clone();
        if let Some(known) = known.as_ref() {
            let names: Vec<&str> = arg_names.iter().map(String::as_str).collect();
            bind(&known.parameters, &names)?;
        }
        let call = match (known.as_ref(), call_facts) {
            (Some(k), Some(facts)) => decode_call_with_captures(k, facts, &st.strings, &st.literals).ok(),
            _ => None,
        };
        let cached = st.table.types();
        let reason = match &call {
            Some(call) => explain_retrace(call, &cached),
            None if cached.is_empty() => "first call".to_owned(),
            None => "a call without a typed description (first call with a single argument)".to_owned(),
        };
        let generalized = match &call {
            Some(call) if self.options.reduce_retracing => Some(st.table.generalize(call)),
            _ => None,
        };
        drop(st);
        Ok(TraceSession {
            function: self.name.clone(),
            known,
            arg_names,
            declared: Vec::new(),
            traced: Vec::new(),
            declared_captures: Vec::new(),
            traced_captures: Vec::new(),
            placeholders: PlaceholderContext::new(),
            generalized,
            reason,
            started: Instant::now(),
        })
    }

    /// Builds the concrete function for a finished trace (via `build`, outside the lock so calls
    /// of cached signatures go on), caches it and returns its id.
    pub fn finish_trace<E>(
        &self,
        session: &TraceSession,
        output_names: Vec<String>,
        build: impl FnOnce(&FunctionType, u32) -> Result<C, E>,
    ) -> Result<u32, PolyError<E>> {
        if let Some(known) = session.known.as_ref() {
            if session.declared.len() != known.parameters.len() || session.declared_captures.len() != known.captures.len()
            {
                return Err(session.list_changed(None));
            }
        }
        let declared_names: HashSet<&str> = session.declared.iter().map(|p| p.name.as_str()).collect();
        let mut unexpected: Vec<String> =
            session.arg_names.iter().filter(|n| !declared_names.contains(n.as_str())).cloned().collect();
        if !unexpected.is_empty() {
            unexpected.sort();
            let parameters = session.declared.iter().map(|p| p.name.clone()).collect();
            return Err(BindError::Unexpected { names: unexpected, parameters }.into());
        }
        let declared = FunctionType::new(session.declared.clone()).with_captures(session.declared_captures.clone());
        let traced = FunctionType::new(session.traced.clone()).with_captures(session.traced_captures.clone());
        let id = {
            let mut st = self.state.lock();
            if let Some(before) = st.declared.as_ref() {
                // Another trace may have fixed the list since this one began.
                if !before.same_signature(&declared) {
                    return Err(PolyError::ParameterListChanged {
                        name: self.name.clone(),
                        before: before.to_string(),
                        now: declared.to_string(),
                    });
                }
            }
            st.next_id += 1;
            st.next_id
        };
        let inner = build(&traced, id).map_err(PolyError::Build)?;
        let concrete = Arc::new(Concrete { id, function_type: traced.clone(), output_names, inner });
        let mut st = self.state.lock();
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        let nanos = session.started.elapsed().as_nanos() as u64;
        log::debug!("function '{}' traced {traced} in {:.1} ms: {}", self.name, nanos as f64 / 1e6, session.reason);
        st.table.insert(traced.clone(), concrete);
        if st.declared.is_none() {
            st.declared = Some(declared);
        }
        st.stats.traces += 1;
        st.stats.total_trace_nanos += nanos;
        st.stats.last_trace_nanos = nanos;
        let record = TraceRecord {
            function_type: traced.to_string(),
            parameter: session.reason.split_once(": ").map(|(p, _)| p.to_owned()).unwrap_or_default(),
            reason: session.reason.clone(),
            nanos,
        };
        if st.history.len() == HISTORY_CAPACITY {
            st.history.pop_front();
        }
        st.history.push_back(record);
        self.evict_beyond_bound(&mut st);
        self.warn_about_frequent_retracing(&mut st);
        self.warn_about_literals(&st, &session.declared);
        Ok(id)
    }

    /// Drops least recently used concrete functions beyond `max_concrete_functions`. A dropped
    /// function's resources go when the last in-flight call using it returns.
    fn evict_beyond_bound(&self, st: &mut State<C>) {
        let Some(max) = self.options.max_concrete_functions else { return };
        while st.table.len() > max.max(1) {
            let Some(victim) = st.table.least_recently_used().cloned() else { break };
            st.table.remove(&victim);
            st.stats.evictions += 1;
            log::debug!("function '{}' evicted {victim} (max {max} concrete functions)", self.name);
        }
    }

    /// tf.function's warning: when `RETRACE_WARNING_TRACES` of the last `RETRACE_WINDOW_CALLS`
    /// calls traced, say so once for the burst, naming the parameters that keep changing and the
    /// options that would help.
    fn warn_about_frequent_retracing(&self, st: &mut State<C>) {
        let calls = st.stats.calls();
        st.trace_calls.push_back(calls);
        while st.trace_calls.front().is_some_and(|&c| c + RETRACE_WINDOW_CALLS <= calls) {
            st.trace_calls.pop_front();
        }
        if st.trace_calls.len() < RETRACE_WARNING_TRACES {
            st.warned_burst = false;
            return;
        }
        if st.warned_burst {
            return;
        }
        st.warned_burst = true;
        let recent = st.history.iter().rev().take(st.trace_calls.len());
        let mut changing: Vec<&str> = Vec::new();
        for r in recent {
            if !r.parameter.is_empty() && !changing.contains(&r.parameter.as_str()) {
                changing.push(&r.parameter);
            }
        }
        changing.reverse();
        let java = st.declared.as_ref().is_some_and(|d| {
            changing.iter().any(|c| d.parameter(c).is_some_and(|p| p.kind == ParamKind::Java))
        });
        let advice = if java {
            "pass values that change from call to call as tensors, not Java values"
        } else if self.options.reduce_retracing {
            "declare a shape constraint with -1 dims (Inputs.input(name, type, Shape.of(-1, ...)))"
        } else {
            "use FunctionOptions.withReduceRetracing(true) or declare a shape constraint with -1 dims \
             (Inputs.input(name, type, Shape.of(-1, ...)))"
        };
        log::warn!(
            "function '{}': {} of the last {} calls traced a new concrete function; tracing is expensive. \
             Parameters that keep changing: {}. To trace less, {advice}.",
            self.name,
            st.trace_calls.len(),
            RETRACE_WINDOW_CALLS.min(calls),
            if changing.is_empty() { "none identified".to_owned() } else { changing.join(", ") },
        );
    }

    /// Warns when a Java-value parameter has been traced for many distinct values: each value is
    /// a trace (and a concrete function), so a parameter that takes many values should be a tensor.
    fn warn_about_literals(&self, st: &State<C>, declared: &[Parameter]) {
        for p in declared.iter().filter(|p| p.kind == ParamKind::Java) {
            let distinct: HashSet<&TypeRef> = st
                .table
                .types()
                .into_iter()
                .filter_map(|t| t.parameter(&p.name).and_then(|q| q.type_constraint.as_ref()))
                .collect();
            let n = distinct.len();
            if n >= LITERAL_WARNING_THRESHOLD && n.is_power_of_two() {
                log::warn!(
                    "function '{}' has traced {n} distinct values of Java parameter '{}': every new value traces \
                     a new concrete function; pass the value as a tensor if it changes from call to call",
                    self.name,
                    p.name
                );
            }
        }
    }

    /// Drops every concrete function; the parameter list stays fixed. In-flight calls keep
    /// theirs alive until they return.
    pub fn clear_cache(&self) {
        let dropped = self.state.lock().table.clear();
        drop(dropped);
    }

    /// Drops every concrete function and refuses later calls.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.clear_cache();
    }

    pub fn trace_count(&self) -> u32 {
        self.state.lock().stats.traces as u32
    }

    pub fn stats(&self) -> Stats {
        self.state.lock().stats
    }

    /// The most recent traces, oldest first (at most [`HISTORY_CAPACITY`]).
    pub fn history(&self) -> Vec<TraceRecord> {
        self.state.lock().history.iter().cloned().collect()
    }

    /// The declared type (parameters and captures with their constraints), `None` before the
    /// first trace.
    pub fn declared(&self) -> Option<FunctionType> {
        self.state.lock().declared.clone()
    }

    /// Cached concrete functions in the order they were traced.
    pub fn concrete_functions(&self) -> Vec<Arc<Concrete<C>>> {
        let st = self.state.lock();
        let mut all: Vec<_> = st.table.entries().map(|(_, c)| c.clone()).collect();
        all.sort_by_key(|c| c.id);
        all
    }
}

/// The parameters a body declares while it is traced.
pub struct TraceSession {
    function: String,
    /// The parameter list fixed by the first trace, if any: every trace must declare it again.
    known: Option<FunctionType>,
    arg_names: Vec<String>,
    declared: Vec<Parameter>,
    traced: Vec<Parameter>,
    /// Captures: values the body reads from outside (variables, tensors), fed as hidden inputs
    /// at every call; their constraints...
    declared_captures: Vec<(String, TypeRef)>,
    /// ...and the types they were traced with.
    traced_captures: Vec<(String, TypeRef)>,
    /// Shared by parameters and captures: one placeholder per aliased value (a variable passed
    /// as an argument and also captured is one graph input).
    placeholders: PlaceholderContext,
    /// With reduce-retracing: the call generalized against the cached signatures.
    generalized: Option<FunctionType>,
    reason: String,
    started: Instant,
}

impl TraceSession {
    /// Why this trace happens.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Declares parameter `name` of `kind` under `constraint`; `value` is the type of the call's
    /// argument (`None` if absent). Returns the placeholders to build for it.
    pub fn declare<E>(
        &mut self,
        name: &str,
        kind: ParamKind,
        optional: bool,
        constraint: TypeRef,
        value: Option<TypeRef>,
    ) -> Result<Vec<PlaceholderSpec>, PolyError<E>> {
        if let Some(known) = self.known.as_ref() {
            let expected = known.parameters.get(self.declared.len());
            if expected.is_none_or(|p| p.name != name || p.kind != kind || p.optional != optional) {
                return Err(self.list_changed(Some(Parameter::new(name, kind).with_constraint(constraint))));
            }
        }
        if self.declared.iter().any(|p| p.name == name) {
            return Err(self.list_changed(Some(Parameter::new(name, kind).with_constraint(constraint))));
        }
        let Some(value) = value else {
            return Err(BindError::Missing { param: name.to_owned(), expected: Some(constraint.to_string()) }.into());
        };
        if !value.is_subtype_of(&*constraint) {
            return Err(BindError::TypeMismatch {
                param: name.to_owned(),
                expected: constraint.to_string(),
                got: describe_mismatch(&value, &constraint),
            }
            .into());
        }
        // With reduce-retracing, trace the generalized type when it still fits the constraint.
        let general = self
            .generalized
            .as_ref()
            .and_then(|g| g.parameter(name))
            .and_then(|p| p.type_constraint.clone())
            .filter(|g| value.is_subtype_of(&**g) && g.is_subtype_of(&*constraint));
        let traced = general.as_ref().unwrap_or(&value).specialize_for_trace(&*constraint);
        let mut specs = Vec::new();
        traced.placeholders(name, &mut self.placeholders, &mut specs);
        self.declared.push(Parameter { name: name.to_owned(), kind, optional, type_constraint: Some(constraint) });
        self.traced.push(Parameter { name: name.to_owned(), kind, optional, type_constraint: Some(traced) });
        Ok(specs)
    }

    /// Declares capture `name` (a value the body reads from outside, fed as a hidden input at
    /// every call) under `constraint`, with the type of its current `value`. Returns its
    /// placeholders: none when the value is aliased to one already placed (the same variable).
    pub fn declare_capture<E>(
        &mut self,
        name: &str,
        constraint: TypeRef,
        value: TypeRef,
    ) -> Result<Vec<PlaceholderSpec>, PolyError<E>> {
        if let Some(known) = self.known.as_ref() {
            if known.captures.get(self.declared_captures.len()).is_none_or(|(n, _)| n != name) {
                return Err(PolyError::ParameterListChanged {
                    name: self.function.clone(),
                    before: known.to_string(),
                    now: format!("a capture '{name}' at position {}", self.declared_captures.len()),
                });
            }
        }
        if !value.is_subtype_of(&*constraint) {
            return Err(BindError::TypeMismatch {
                param: format!("capture {name}"),
                expected: constraint.to_string(),
                got: describe_mismatch(&value, &constraint),
            }
            .into());
        }
        let mut specs = Vec::new();
        value.placeholders(name, &mut self.placeholders, &mut specs);
        self.declared_captures.push((name.to_owned(), constraint));
        self.traced_captures.push((name.to_owned(), value));
        Ok(specs)
    }

    /// The error for a trace whose declarations (so far, plus `next`) differ from the fixed list.
    fn list_changed<E>(&self, next: Option<Parameter>) -> PolyError<E> {
        let mut now = self.declared.clone();
        now.extend(next);
        let before = match &self.known {
            Some(k) => k.to_string(),
            None => FunctionType::new(self.declared.clone()).to_string(),
        };
        PolyError::ParameterListChanged { name: self.function.clone(), before, now: FunctionType::new(now).to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, DTypeSet, Shape, TensorConstraint, TensorSpec, TAG_TENSOR};

    type Fn = Polymorphic<String>;

    fn tensor_facts(dtype: DType, dims: &[i64]) -> Vec<i64> {
        let mut f = vec![TAG_TENSOR, dtype.0 as i64, dims.len() as i64];
        f.extend_from_slice(dims);
        f
    }

    fn spec(dtype: DType, dims: &[i64]) -> TypeRef {
        TypeRef::new(TensorSpec::new(dtype, Shape::of(dims)))
    }

    fn constraint(dtypes: &[DType], shape: Option<Shape>) -> TypeRef {
        TypeRef::new(TensorConstraint::new(DTypeSet::of(dtypes), shape))
    }

    /// Traces `f` for a call `x = value` under `c`, building a concrete function named after its type.
    fn trace(f: &Fn, value: TypeRef, c: TypeRef) -> Result<u32, PolyError<String>> {
        let mut s = f.begin_trace::<String>(vec!["x".into()], None, true)?;
        s.declare::<String>("x", ParamKind::Tensor, false, c, Some(value))?;
        f.finish_trace(&s, vec!["y".into()], |ty, _| Ok(ty.to_string()))
    }

    #[test]
    fn a_bad_shape_in_an_argument_is_an_error_naming_it() {
        let f = Fn::new("f");
        let mut facts = vec![crate::TAG_LIST, 2, TAG_TENSOR, 1, 0, TAG_TENSOR, 1, 300];
        facts.extend([1; 300]);
        let e = f.decode_argument("xs", &facts).unwrap_err();
        assert_eq!(e.to_string(), "xs[1]: shape of rank 300 exceeds TensorFlow's limit of 254 dimensions");
        let e = f.decode_argument("w", &[TAG_TENSOR, 1, 2, -7, 1]).unwrap_err();
        assert!(e.to_string().starts_with("w: shape [-7, 1] has dimension -7"), "{e}");
    }

    #[test]
    fn nothing_is_found_before_the_first_trace() {
        let f = Fn::new("f");
        assert!(f.lookup::<String>(&tensor_facts(DType::FLOAT, &[2])).unwrap().is_none());
        assert!(f.declared().is_none());
        assert_eq!(f.trace_count(), 0);
    }

    #[test]
    fn a_trace_is_found_by_the_same_facts_and_not_by_others() {
        let f = Fn::new("f");
        let id = trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
        let hit = f.lookup::<String>(&tensor_facts(DType::FLOAT, &[2])).unwrap().unwrap();
        assert_eq!(hit.id, id);
        assert_eq!(hit.inner, "(x: TensorSpec(FLOAT, [2]))");
        assert!(f.lookup::<String>(&tensor_facts(DType::FLOAT, &[3])).unwrap().is_none());
        assert_eq!(f.trace_count(), 1);
    }

    #[test]
    fn a_shape_constraint_traces_generically_and_serves_every_fitting_call() {
        let f = Fn::new("f");
        trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], Some(Shape::of(&[-1])))).unwrap();
        for n in [1, 5, 100] {
            let c = f.lookup::<String>(&tensor_facts(DType::FLOAT, &[n])).unwrap().unwrap();
            assert_eq!(c.inner, "(x: TensorSpec(FLOAT, [-1]))");
        }
        let err = f.lookup::<String>(&tensor_facts(DType::INT32, &[2])).unwrap_err();
        assert!(matches!(err, PolyError::Bind(BindError::TypeMismatch { ref param, .. }) if param == "x"), "{err}");
    }

    #[test]
    fn declaring_a_missing_or_mistyped_argument_fails_naming_it() {
        let f = Fn::new("f");
        let mut s = f.begin_trace::<String>(vec![], None, true).unwrap();
        let e = s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), None).unwrap_err();
        assert!(e.to_string().contains("'x'"), "{e}");
        let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
        let e = s
            .declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::INT32, &[])))
            .unwrap_err();
        assert!(e.to_string().contains("'x'") && e.to_string().contains("INT32"), "{e}");
    }

    #[test]
    fn unexpected_arguments_fail_the_first_trace_and_binding_later() {
        let f = Fn::new("f");
        let mut s = f.begin_trace::<String>(vec!["x".into(), "z".into()], None, true).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[]))).unwrap();
        let e = f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap_err();
        assert!(e.to_string().contains("'z'"), "{e}");
        assert_eq!(f.trace_count(), 0);
        trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
        let e = f.begin_trace::<String>(vec!["x".into(), "z".into()], None, true).err().unwrap();
        assert!(e.to_string().contains("'z'"), "{e}");
        let e = f.begin_trace::<String>(vec![], None, true).err().unwrap();
        assert!(e.to_string().contains("'x'"), "{e}");
    }

    #[test]
    fn a_changed_parameter_list_is_rejected_with_both_lists() {
        let f = Fn::new("f");
        trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
        // A second trace whose body declares another name.
        let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
        let e = s
            .declare::<String>("w", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), None)
            .unwrap_err();
        assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("(w: ") && text.contains("(x: "), "{text}");
        // A second trace whose body declares fewer parameters.
        let s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
        let e = f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap_err();
        assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
        // Same names and kinds under another constraint is the same list.
        let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::INT32, DType::FLOAT], None), Some(spec(DType::FLOAT, &[2])))
            .unwrap();
        f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap();
        assert_eq!(f.trace_count(), 2);
    }

    #[test]
    fn a_failed_build_caches_nothing_and_close_drops_everything() {
        let f = Fn::new("f");
        let mut s = f.begin_trace::<&str>(vec!["x".into()], None, true).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[]))).unwrap();
        let e = f.finish_trace(&s, vec![], |_, _| Err::<String, _>("no")).unwrap_err();
        assert!(matches!(e, PolyError::Build("no")));
        assert_eq!(f.trace_count(), 0);
        assert!(f.concrete_functions().is_empty());
        trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
        assert_eq!(f.concrete_functions().len(), 1);
        f.close();
        assert!(f.concrete_functions().is_empty());
        assert!(matches!(f.lookup::<String>(&tensor_facts(DType::FLOAT, &[])), Err(PolyError::Closed(_))));
        assert!(matches!(f.begin_trace::<String>(vec![], None, true), Err(PolyError::Closed(_))));
    }

    /// Collects log records so tests can assert on warnings (one logger per test binary).
    mod capture {
        use parking_lot::Mutex;
        static RECORDS: Mutex<Vec<String>> = Mutex::new(Vec::new());
        struct Capture;
        impl log::Log for Capture {
            fn enabled(&self, _: &log::Metadata) -> bool {
                true
            }
            fn log(&self, r: &log::Record) {
                RECORDS.lock().push(format!("{} {}", r.level(), r.args()));
            }
            fn flush(&self) {}
        }
        static LOGGER: Capture = Capture;
        pub fn install() {
            let _ = log::set_logger(&LOGGER);
            log::set_max_level(log::LevelFilter::Trace);
        }
        /// Records mentioning `needle`.
        pub fn matching(needle: &str) -> Vec<String> {
            RECORDS.lock().iter().filter(|r| r.contains(needle)).cloned().collect()
        }
    }

    /// A call `x = FLOAT dims` through the whole protocol: lookup, else trace then lookup.
    /// Returns the type of the concrete function that served it.
    fn call(f: &Fn, dims: &[i64]) -> String {
        let facts = tensor_facts(DType::FLOAT, dims);
        if let Some(c) = f.lookup::<String>(&facts).unwrap() {
            return c.inner.clone();
        }
        let known = f.declared().is_some();
        let mut s = f.begin_trace::<String>(vec!["x".into()], known.then_some(&facts[..]), true).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, dims)))
            .unwrap();
        f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
        f.find::<String>(&facts).unwrap().unwrap().inner.clone()
    }

    fn traced(f: &Fn) -> Vec<String> {
        f.concrete_functions().iter().map(|c| c.inner.clone()).collect()
    }

    #[test]
    fn reduce_retracing_traces_2_then_unknown_dim_then_unknown_rank() {
        let f = Fn::with_options("reduce", Options { reduce_retracing: true, ..Options::default() });
        assert_eq!(call(&f, &[2]), "(x: TensorSpec(FLOAT, [2]))");
        assert_eq!(call(&f, &[3]), "(x: TensorSpec(FLOAT, [-1]))");
        assert_eq!(call(&f, &[4]), "(x: TensorSpec(FLOAT, [-1]))");
        assert_eq!(call(&f, &[2, 2]), "(x: TensorSpec(FLOAT, <unknown>))");
        assert_eq!(f.trace_count(), 3);
        assert_eq!(
            traced(&f),
            ["(x: TensorSpec(FLOAT, [2]))", "(x: TensorSpec(FLOAT, [-1]))", "(x: TensorSpec(FLOAT, <unknown>))"]
        );
        // [2] still hits its exact trace; the rest generalize.
        assert_eq!(call(&f, &[2]), "(x: TensorSpec(FLOAT, [2]))");
        assert_eq!(call(&f, &[9, 9, 9]), "(x: TensorSpec(FLOAT, <unknown>))");
        let st = f.stats();
        assert_eq!((st.traces, st.misses), (3, 3));
        assert_eq!(st.exact_hits, 1, "{st:?}"); // [2] again
        assert_eq!(st.inexact_hits, 2, "{st:?}"); // [4] and [9, 9, 9]
    }

    #[test]
    fn without_reduce_retracing_every_shape_traces() {
        let f = Fn::new("plain");
        for d in [[2], [3], [4]] {
            call(&f, &d);
        }
        assert_eq!(f.trace_count(), 3);
    }

    #[test]
    fn the_cache_bound_evicts_the_least_recently_used() {
        let f = Fn::with_options("bounded", Options { max_concrete_functions: Some(2), ..Options::default() });
        call(&f, &[1]);
        call(&f, &[2]);
        call(&f, &[1]); // [2] is now the least recently used
        call(&f, &[3]);
        assert_eq!(traced(&f), ["(x: TensorSpec(FLOAT, [1]))", "(x: TensorSpec(FLOAT, [3]))"]);
        assert_eq!(f.stats().evictions, 1);
        call(&f, &[2]); // evicted: traces again, evicting [1]
        assert_eq!(f.trace_count(), 4);
        assert_eq!(traced(&f), ["(x: TensorSpec(FLOAT, [3]))", "(x: TensorSpec(FLOAT, [2]))"]);
    }

    #[test]
    fn clear_cache_drops_functions_and_keeps_the_parameter_list() {
        let f = Fn::new("clear");
        call(&f, &[1]);
        f.clear_cache();
        assert!(f.concrete_functions().is_empty());
        assert!(f.declared().is_some());
        call(&f, &[1]);
        assert_eq!(f.trace_count(), 2);
    }

    #[test]
    fn every_trace_records_why() {
        let f = Fn::new("why");
        call(&f, &[2]);
        call(&f, &[3]);
        call(&f, &[3, 1]);
        let h = f.history();
        assert_eq!(h[0].reason, "first call");
        assert_eq!(h[1].reason, "x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0");
        assert_eq!(h[1].parameter, "x");
        assert!(h[2].reason.starts_with("x: ") && h[2].reason.contains("rank 2 vs 1"), "{}", h[2].reason);
        assert_eq!(h[2].function_type, "(x: TensorSpec(FLOAT, [3, 1]))");
    }

    #[test]
    fn frequent_retracing_warns_once_per_burst() {
        capture::install();
        let f = Fn::new("bursty");
        let warnings = || capture::matching("function 'bursty': ").len();
        for n in 1..=4 {
            call(&f, &[n]);
        }
        assert_eq!(warnings(), 0);
        call(&f, &[5]); // 5 of the last 5 calls traced
        assert_eq!(warnings(), 1);
        let text = &capture::matching("function 'bursty': ")[0];
        assert!(text.starts_with("WARN") && text.contains("Parameters that keep changing: x"), "{text}");
        assert!(text.contains("withReduceRetracing(true)"), "{text}");
        for n in 6..=8 {
            call(&f, &[n]); // the same burst: no new warning
        }
        assert_eq!(warnings(), 1);
        for _ in 0..20 {
            call(&f, &[1]); // calm
        }
        for n in 20..=24 {
            call(&f, &[n]); // a new burst
        }
        assert_eq!(warnings(), 2);
    }

    fn variable_facts(alias: i64) -> Vec<i64> {
        vec![crate::TAG_VARIABLE, DType::FLOAT.0 as i64, 0, alias]
    }

    fn var_constraint() -> TypeRef {
        TypeRef::new(crate::VariableConstraint::new(DTypeSet::any()))
    }

    #[test]
    fn a_capture_is_part_of_the_signature_and_an_aliased_capture_shares_a_placeholder() {
        let f = Fn::new("captures");
        let mut s = f.begin_trace::<String>(vec!["v".into()], None, true).unwrap();
        let v0 = f.decode_value(&variable_facts(0)).unwrap();
        let specs = s.declare::<String>("v", ParamKind::Variable, false, var_constraint(), Some(v0.clone())).unwrap();
        assert_eq!(specs.len(), 1);
        // The body also captures the variable passed as v: no second placeholder.
        let specs = s.declare_capture::<String>("w", var_constraint(), v0).unwrap();
        assert!(specs.is_empty());
        f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
        let same: Vec<i64> = [variable_facts(0), variable_facts(0)].concat();
        let other: Vec<i64> = [variable_facts(0), variable_facts(1)].concat();
        assert_eq!(
            f.lookup::<String>(&same).unwrap().unwrap().inner,
            "(v: VariableSpec(FLOAT, [], alias 0); captures: w: VariableSpec(FLOAT, [], alias 0))"
        );
        assert!(f.lookup::<String>(&other).unwrap().is_none(), "another aliasing pattern is another signature");
        // A later trace must capture the same names in the same order.
        let mut s = f.begin_trace::<String>(vec!["v".into()], Some(&other), true).unwrap();
        assert!(s.reason().starts_with("capture w: "), "{}", s.reason());
        let v = f.decode_value(&variable_facts(0)).unwrap();
        s.declare::<String>("v", ParamKind::Variable, false, var_constraint(), Some(v)).unwrap();
        let e = s.declare_capture::<String>("z", var_constraint(), f.decode_value(&variable_facts(1)).unwrap());
        assert!(matches!(e, Err(PolyError::ParameterListChanged { .. })));
    }
}
