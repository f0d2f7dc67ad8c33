//! A polymorphic function's state, independent of TensorFlow: the parameter list fixed by the
//! first trace, the dispatch table of concrete functions, and the trace protocol
//! (begin → declare each parameter → finish).
//!
//! Generic over the concrete function `C` so the logic is tested without a runtime.

use parking_lot::Mutex;
use polyfn_core::{
    bind, check_constraints, decode_call, BindError, DispatchTable, FunctionType, LiteralTable,
    ParamKind, Parameter, PlaceholderContext, PlaceholderSpec, StringTable, TypeRef,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

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
    #[error("function '{name}' declared parameters {now} but its first trace declared {before}; the parameter list is fixed by the first trace")]
    ParameterListChanged { name: String, before: String, now: String },
    #[error("function '{0}' is closed")]
    Closed(String),
    #[error(transparent)]
    Build(E),
}

struct State<C> {
    declared: Option<FunctionType>,
    table: DispatchTable<Arc<Concrete<C>>>,
    strings: StringTable,
    literals: LiteralTable,
    next_id: u32,
}

/// A polymorphic function (seed 000): bind → type the call → look up or trace.
pub struct Polymorphic<C> {
    name: String,
    state: Mutex<State<C>>,
    traces: AtomicU32,
    closed: AtomicBool,
}

impl<C> Polymorphic<C> {
    pub fn new(name: impl Into<String>) -> Self {
        Polymorphic {
            name: name.into(),
            state: Mutex::new(State {
                declared: None,
                table: DispatchTable::new(),
                strings: StringTable::default(),
                literals: LiteralTable::default(),
                next_id: 0,
            }),
            traces: AtomicU32::new(0),
            closed: AtomicBool::new(false),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The concrete function for a call described by `facts`, or `None` when it must be traced.
    pub fn lookup<E>(&self, facts: &[i64]) -> Result<Option<Arc<Concrete<C>>>, PolyError<E>> {
        let mut st = self.state.lock();
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        if let Some((c, _)) = st.table.lookup_facts(facts) {
            return Ok(Some(c));
        }
        let Some(declared) = st.declared.as_ref() else { return Ok(None) };
        let call = decode_call(&declared.parameters, facts, &st.strings, &st.literals)?;
        check_constraints(&call, declared)?;
        Ok(st.table.lookup(&call, Some(facts)).map(|(c, _)| c))
    }

    /// Starts a trace of a call with arguments named `arg_names`, checking them against the
    /// parameter list when a first trace has fixed it.
    pub fn begin_trace<E>(&self, arg_names: Vec<String>) -> Result<TraceSession, PolyError<E>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        if let Some(declared) = self.state.lock().declared.as_ref() {
            let names: Vec<&str> = arg_names.iter().map(String::as_str).collect();
            bind(&declared.parameters, &names)?;
        }
        Ok(TraceSession { arg_names, declared: Vec::new(), traced: Vec::new(), placeholders: PlaceholderContext::new() })
    }

    /// Builds the concrete function for a finished trace (via `build`, outside the lock so calls
    /// of cached signatures go on), caches it and returns its id.
    pub fn finish_trace<E>(
        &self,
        session: &TraceSession,
        output_names: Vec<String>,
        build: impl FnOnce(&FunctionType, u32) -> Result<C, E>,
    ) -> Result<u32, PolyError<E>> {
        let declared_names: HashSet<&str> = session.declared.iter().map(|p| p.name.as_str()).collect();
        let mut unexpected: Vec<String> =
            session.arg_names.iter().filter(|n| !declared_names.contains(n.as_str())).cloned().collect();
        if !unexpected.is_empty() {
            unexpected.sort();
            let parameters = session.declared.iter().map(|p| p.name.clone()).collect();
            return Err(BindError::Unexpected { names: unexpected, parameters }.into());
        }
        let declared = FunctionType::new(session.declared.clone());
        let traced = FunctionType::new(session.traced.clone());
        let id = {
            let mut st = self.state.lock();
            if let Some(before) = st.declared.as_ref() {
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
        st.table.insert(traced, concrete);
        if st.declared.is_none() {
            st.declared = Some(declared);
        }
        self.traces.fetch_add(1, Ordering::AcqRel);
        Ok(id)
    }

    /// Drops every concrete function (in-flight calls keep theirs alive until they return).
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let dropped = self.state.lock().table.clear();
        drop(dropped);
    }

    pub fn trace_count(&self) -> u32 {
        self.traces.load(Ordering::Acquire)
    }

    /// The declared parameters, `None` before the first trace.
    pub fn parameters(&self) -> Option<Vec<Parameter>> {
        self.state.lock().declared.as_ref().map(|d| d.parameters.clone())
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
    arg_names: Vec<String>,
    declared: Vec<Parameter>,
    traced: Vec<Parameter>,
    placeholders: PlaceholderContext,
}

impl TraceSession {
    /// Declares parameter `name` of `kind` under `constraint`; `value` is the type of the call's
    /// argument (`None` if absent). Returns the placeholders to build for it.
    pub fn declare(
        &mut self,
        name: &str,
        kind: ParamKind,
        constraint: TypeRef,
        value: Option<TypeRef>,
    ) -> Result<Vec<PlaceholderSpec>, BindError> {
        if self.declared.iter().any(|p| p.name == name) {
            return Err(BindError::TypeMismatch {
                param: name.to_owned(),
                expected: "one declaration per parameter".to_owned(),
                got: "a second declaration".to_owned(),
            });
        }
        let Some(value) = value else {
            return Err(BindError::Missing { param: name.to_owned(), expected: Some(constraint.to_string()) });
        };
        if !value.is_subtype_of(&*constraint) {
            return Err(BindError::TypeMismatch {
                param: name.to_owned(),
                expected: constraint.to_string(),
                got: value.to_string(),
            });
        }
        let traced = value.specialize_for_trace(&*constraint);
        let mut specs = Vec::new();
        traced.placeholders(name, &mut self.placeholders, &mut specs);
        self.declared.push(Parameter { name: name.to_owned(), kind, optional: false, type_constraint: Some(constraint) });
        self.traced.push(Parameter { name: name.to_owned(), kind, optional: false, type_constraint: Some(traced) });
        Ok(specs)
    }
}
