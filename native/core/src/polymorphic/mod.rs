//! A polymorphic function's state, independent of TensorFlow: the parameter list fixed by the
//! first trace, the dispatch table of concrete functions, the trace protocol
//! (begin → declare each parameter → finish), and what makes retracing controllable and
//! explainable: reduce-retracing, a bounded cache, trace history with reasons, statistics and
//! a frequent-retrace warning.
//!
//! Generic over the concrete function `C` so the logic is tested without a runtime.

mod cache;
mod error;
mod inferred;
mod introspection;
mod miss;
mod profile;
mod monitor;
mod restore;
mod session;
mod timing;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod inferred_tests;
#[cfg(test)]
mod signature_tests;
#[cfg(test)]
mod thread_tests;

pub use cache::PROFILE_CAPACITY;
pub use error::PolyError;
pub use monitor::{
    Stats, TraceRecord, HISTORY_CAPACITY, LITERAL_WARNING_THRESHOLD, RETRACE_WARNING_TRACES, RETRACE_WINDOW_CALLS,
};
pub use session::TraceSession;
pub use timing::{duration_text, FirstRun, Preparation};

use crate::binding::{bind, BindError};
use crate::dispatch::DispatchTable;
use crate::explain::{explain_retrace, RetraceReason};
use crate::facts::{decode_call_with_captures, decode_value};
use crate::intern::{LiteralTable, StringTable};
use crate::function_type::{check_constraints, FunctionType};
use crate::placeholder::PlaceholderContext;
use crate::trace_type::TypeRef;
use cache::{Published, WriteToken};
use monitor::Monitor;
use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

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
    /// Unique within its polymorphic function ([`Polymorphic::concrete_by_id`]).
    pub id: u32,
    pub function_type: FunctionType,
    pub output_names: Vec<String>,
    pub inner: C,
    /// How long Polyfn took to make it (trace and registration, or restore).
    pub preparation: Preparation,
    /// Its first run, in which TensorFlow prepares it: claimed by the first call (see `timing`).
    pub first_run: FirstRun,
    /// When it was last used, in the function's logical clock (for least-recently-used eviction).
    last_used: AtomicU64,
}


struct State<C> {
    declared: Option<FunctionType>,
    table: DispatchTable<Arc<Concrete<C>>>,
    strings: StringTable,
    literals: LiteralTable,
    next_id: u32,
    /// Misses, traces and evictions; hits are counted without the lock in [`Published`].
    stats: Stats,
    monitor: Monitor,
    token: WriteToken,
    /// Constraints inferred from examples or a profile, merged into every trace's declarations.
    inferred: inferred::Inferred,
    /// The last call that missed: a caller retries its lookup under its own trace lock and then
    /// begins the trace with the same facts, and neither need decode and look the call up again
    /// while the cached signatures are unchanged.
    last_miss: Option<miss::LastMiss>,
}

/// A polymorphic function, like `tf.function`: bind the arguments → type the call → look up a
/// concrete function for that type, or trace one.
pub struct Polymorphic<C> {
    name: String,
    options: Options,
    state: Mutex<State<C>>,
    /// What cached calls read without taking `state`'s lock.
    published: Published<C>,
    closed: AtomicBool,
    /// The first runs' times, summed (see [`Stats::total_first_run_nanos`]).
    first_run_nanos: AtomicU64,
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
                monitor: Monitor::default(),
                token: WriteToken::new(),
                inferred: inferred::Inferred::default(),
                last_miss: None,
            }),
            published: Published::new(),
            closed: AtomicBool::new(false),
            first_run_nanos: AtomicU64::new(0),
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

    /// Registers the Java value a literal id stands for in facts (once per id): its short text,
    /// class, and whole text for signature profiles (`None` when a profile cannot restore it).
    pub fn register_literal(&self, id: i64, repr: &str, class_name: &str, profile_value: Option<&str>) {
        self.state.lock().literals.insert(id, repr, class_name, profile_value.map(str::to_owned));
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

    /// Like [`Polymorphic::decode_value`], for the argument or capture `name` of a trace: errors
    /// name it (`x: shape of rank 300 exceeds ...`, `xs[2]: ...`). A function closed while the
    /// trace ran is reported as closed: its close emptied the tables the facts refer to, so
    /// decoding them would blame the facts.
    pub fn decode_argument<E>(&self, name: &str, facts: &[i64]) -> Result<TypeRef, PolyError<E>> {
        let decoded = self.decode_value(facts);
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        Ok(decoded.map_err(|e| e.within(name, true))?)
    }

    /// The concrete function for a call described by `facts`, or `None` when it must be traced.
    /// Counts a hit in the statistics (a miss is counted by the trace the call then begins).
    pub fn lookup<E>(&self, facts: &[i64]) -> Result<Option<Arc<Concrete<C>>>, PolyError<E>> {
        self.search(facts, true)
    }

    /// [`Polymorphic::lookup`] that runs `run` on the concrete function found and returns its
    /// result. A call seen before borrows the function from the published cache instead of
    /// taking a reference count, so threads calling one function write no shared count.
    pub fn lookup_with<E, R>(&self, facts: &[i64], run: impl FnOnce(&Concrete<C>) -> R) -> Result<Option<R>, PolyError<E>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        let mut run = Some(run);
        let mut call = |c: &Concrete<C>| (run.take().expect("run at most once"))(c);
        if let Some(r) = self.published.find_with(facts, true, |c| call(c)) {
            return Ok(Some(r));
        }
        Ok(self.search(facts, true)?.map(|c| call(&c)))
    }

    /// Like [`Polymorphic::lookup`], for introspection: not counted as a call.
    pub fn find<E>(&self, facts: &[i64]) -> Result<Option<Arc<Concrete<C>>>, PolyError<E>> {
        self.search(facts, false)
    }

    fn search<E>(&self, facts: &[i64], count: bool) -> Result<Option<Arc<Concrete<C>>>, PolyError<E>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        // A call seen before takes no lock.
        if let Some(c) = self.published.find(facts, count) {
            return Ok(Some(c));
        }
        let mut memo_full = false;
        let found = {
            let mut st = self.state.lock();
            if self.closed.load(Ordering::Acquire) {
                return Err(PolyError::Closed(self.name.clone()));
            }
            // Another caller may have memoized these facts while this one waited for the lock.
            if let Some(c) = self.published.find(facts, count) {
                return Ok(Some(c));
            }
            let st = &mut *st;
            if st.known_miss(facts).is_some() {
                return Ok(None);
            }
            let Some(declared) = st.declared.as_ref() else { return Ok(None) };
            let call = decode_call_with_captures(declared, facts, &st.strings, &st.literals)?;
            check_constraints(&call, declared).map_err(|e| st.inferred.annotate(e))?;
            let found = st.table.lookup(&call, None);
            if found.is_none() {
                st.last_miss = Some(miss::LastMiss { facts: facts.into(), generation: st.table.generation(), call });
            }
            if let Some((c, hit)) = &found {
                memo_full = self.published.memoize(&mut st.token, facts, c.clone(), *hit, st.table.len());
                if count {
                    self.published.count(c, *hit);
                    self.published.record_call(&mut st.token, facts);
                }
            }
            found
        };
        if memo_full {
            log::debug!("function '{}': dispatch memo full ({} call shapes); dropped its inexact entries", self.name, cache::MEMO_CAPACITY);
        }
        Ok(found.map(|(c, _)| c))
    }

    /// Records the call typed by `facts` in the profile: the first call, which traced before a
    /// parameter list existed to type it, once its trace has fixed one (later misses are recorded
    /// by [`Self::begin_trace`], hits by the cached lookup).
    pub fn record_first_call<E>(&self, facts: &[i64]) -> Result<(), PolyError<E>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        let mut st = self.state.lock();
        self.published.record_call(&mut st.token, facts);
        Ok(())
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
        // Again under the lock: a close between the check above and here took the parameter
        // list, and a trace begun now would run the whole body for nothing.
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        if for_call {
            st.stats.misses += 1;
            if let Some(facts) = call_facts {
                self.published.record_call(&mut st.token, facts);
            }
        }
        let known = st.declared.clone();
        if let Some(known) = known.as_ref() {
            let names: Vec<&str> = arg_names.iter().map(String::as_str).collect();
            bind(&known.parameters, &names)?;
        }
        let call = match (known.as_ref(), call_facts) {
            (Some(_), Some(facts)) if st.known_miss(facts).is_some() => st.known_miss(facts).cloned(),
            (Some(k), Some(facts)) => decode_call_with_captures(k, facts, &st.strings, &st.literals).ok(),
            _ => None,
        };
        let why = match &call {
            Some(call) => explain_retrace(call, &st.table.explain_candidates(call)),
            None if st.table.is_empty() => RetraceReason::general("first call"),
            None => RetraceReason::general("a call without a typed description (first call with a single argument)"),
        };
        let generalized = match &call {
            Some(call) if self.options.reduce_retracing => Some(st.table.generalize(call)),
            _ => None,
        };
        let reason = st.inferred.explain(&why);
        let structures = st.inferred.structures.clone();
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
            why,
            started: Instant::now(),
            structures: structures.clone(),
            for_call,
        })
    }

    /// Builds the concrete function for a finished trace (via `build`, outside the lock so calls
    /// of cached signatures go on), caches it and returns it, so the call that traced runs it
    /// even if a concurrent `clear_cache` or eviction has already dropped it from the cache.
    pub fn finish_trace<E>(
        &self,
        session: &TraceSession,
        output_names: Vec<String>,
        build: impl FnOnce(&FunctionType, u32) -> Result<C, E>,
    ) -> Result<Arc<Concrete<C>>, PolyError<E>> {
        if let Some(known) = session.known.as_ref() {
            if session.declared.len() != known.parameters.len() || session.declared_captures.len() != known.captures.len()
            {
                return Err(session.list_changed(None));
            }
        }
        let body_nanos = session.started.elapsed().as_nanos() as u64;
        let declared_names: HashSet<&str> = session.declared.iter().map(|p| p.name.as_str()).collect();
        let mut unexpected: Vec<String> =
            session.arg_names.iter().filter(|n| !declared_names.contains(n.as_str())).cloned().collect();
        if !unexpected.is_empty() {
            unexpected.sort();
            let parameters = session.declared.iter().map(|p| p.name.clone()).collect();
            return Err(BindError::Unexpected { names: unexpected, parameters }.into());
        }
        let declared = FunctionType::new(session.declared.clone()).with_captures(session.declared_captures.clone());
        let traced = session.traced_type();
        // Another trace may have fixed the list since this one began.
        let id = self.reserve_id(&declared)?;
        let concrete = Self::build_concrete(id, &traced, output_names, Some(body_nanos), build)?;
        // Log records go to the application's logger, which may call back into this function:
        // collect them under the lock and emit them after releasing it. Evicted functions are
        // also dropped after it (releasing them calls into TensorFlow).
        let mut messages: Vec<(log::Level, String)> = Vec::new();
        let evicted;
        let replaced_function;
        {
            let mut st = self.state.lock();
            if self.closed.load(Ordering::Acquire) {
                return Err(PolyError::Closed(self.name.clone()));
            }
            let nanos = session.started.elapsed().as_nanos() as u64;
            if log::log_enabled!(log::Level::Debug) {
                let text = format!("function '{}' traced {traced} in {:.1} ms: {}", self.name, nanos as f64 / 1e6, session.reason);
                messages.push((log::Level::Debug, text));
            }
            let replaced = st.table.get(&traced).map(|c| c.id);
            replaced_function = st.table.insert(traced.clone(), concrete.clone());
            self.published.added(&mut st.token, concrete.clone(), replaced);
            if st.declared.is_none() {
                st.declared = Some(declared);
            }
            st.stats.traces += 1;
            st.stats.total_trace_nanos += nanos;
            st.stats.last_trace_nanos = nanos;
            let record = TraceRecord {
                function_type: traced.to_string(),
                parameter: session.why.parameter.clone(),
                capture: session.why.capture,
                path: session.why.path.clone(),
                reason: session.reason.clone(),
                nanos,
            };
            let parameter = record.parameter.clone();
            st.monitor.record(record);
            evicted = self.evict_beyond_bound(&mut st, concrete.id, &mut messages);
            let calls = self.stats_of(&st).calls();
            let st = &mut *st;
            if session.for_call {
                if let Some(w) = st.monitor.frequent_retrace_warning(&self.name, &self.options, st.declared.as_ref(), calls, &parameter)
                {
                    messages.push((log::Level::Warn, w));
                }
            }
            for w in monitor::literal_warnings(&self.name, |p| st.table.distinct_java_values(p), &session.declared) {
                messages.push((log::Level::Warn, w));
            }
        }
        drop(evicted);
        drop(replaced_function);
        for (level, text) in messages {
            log::log!(level, "{text}");
        }
        Ok(concrete)
    }

    /// A new concrete function id, if `declared` is the parameter list this function has (or the
    /// first one): a trace or restore declaring another list fails, naming both.
    fn reserve_id<E>(&self, declared: &FunctionType) -> Result<u32, PolyError<E>> {
        let mut st = self.state.lock();
        // A closed function builds nothing more (building registers a TensorFlow function).
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        if let Some(before) = st.declared.as_ref() {
            if !before.same_signature(declared) || before.captures.len() != declared.captures.len() {
                return Err(PolyError::ParameterListChanged {
                    name: self.name.clone(),
                    before: before.to_string(),
                    now: declared.to_string(),
                });
            }
        }
        st.next_id += 1;
        Ok(st.next_id)
    }

    /// Builds concrete function `id` for `traced` (outside the lock: building calls TensorFlow),
    /// timing it; `body_nanos` is the trace's body time, `None` for a restore.
    fn build_concrete<E>(
        id: u32,
        traced: &FunctionType,
        output_names: Vec<String>,
        body_nanos: Option<u64>,
        build: impl FnOnce(&FunctionType, u32) -> Result<C, E>,
    ) -> Result<Arc<Concrete<C>>, PolyError<E>> {
        let started = Instant::now();
        let inner = build(traced, id).map_err(PolyError::Build)?;
        let preparation = Preparation {
            body_nanos: body_nanos.unwrap_or(0),
            build_nanos: started.elapsed().as_nanos() as u64,
            restored: body_nanos.is_none(),
        };
        let first_run = FirstRun::default();
        let function_type = traced.clone();
        Ok(Arc::new(Concrete { id, function_type, output_names, inner, preparation, first_run, last_used: AtomicU64::new(0) }))
    }

    /// Drops least recently used concrete functions beyond `max_concrete_functions` from the
    /// table, returning them (a dropped function's resources go when the last in-flight call
    /// using it returns).
    fn evict_beyond_bound(&self, st: &mut State<C>, added: u32, messages: &mut Vec<(log::Level, String)>) -> Vec<Arc<Concrete<C>>> {
        let mut evicted = Vec::new();
        let Some(max) = self.options.max_concrete_functions else { return evicted };
        while st.table.len() > max.max(1) {
            // The least recently used; the oldest among equals. Never the function just added,
            // which its caller is about to use: cached calls on other threads may have restamped
            // every older function since it was stamped.
            let victim = st
                .table
                .entries()
                .filter(|(_, c)| c.id != added)
                .min_by_key(|(_, c)| (c.last_used.load(Ordering::Relaxed), c.id));
            let Some(victim) = victim.map(|(t, _)| t.clone()) else { break };
            let Some(c) = st.table.remove(&victim) else { break };
            self.published.removed(&mut st.token, c.id);
            evicted.push(c);
            st.stats.evictions += 1;
            messages.push((log::Level::Debug, format!("function '{}' evicted {victim} (max {max} concrete functions)", self.name)));
        }
        evicted
    }

    /// Drops every concrete function; the parameter list stays fixed. In-flight calls keep
    /// theirs alive until they return.
    pub fn clear_cache(&self) {
        let dropped = {
            let mut st = self.state.lock();
            self.published.clear(&mut st.token);
            st.table.clear()
        };
        drop(dropped);
    }

    /// Drops every concrete function and refuses later calls.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        // Everything goes now, not when the owner is freed (a garbage collection away on the
        // JVM): nothing reads a closed function's state but its statistics.
        let dropped = {
            let mut st = self.state.lock();
            self.published.release(&mut st.token);
            let table = std::mem::replace(&mut st.table, DispatchTable::new());
            let strings = std::mem::take(&mut st.strings);
            let literals = std::mem::take(&mut st.literals);
            let monitor = std::mem::take(&mut st.monitor);
            let inferred = std::mem::take(&mut st.inferred);
            (table, strings, literals, monitor, inferred, st.last_miss.take(), st.declared.take())
        };
        drop(dropped);
    }
}
