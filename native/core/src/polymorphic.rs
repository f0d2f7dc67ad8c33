//! A polymorphic function's state, independent of TensorFlow: the parameter list fixed by the
//! first trace, the dispatch table of concrete functions, and the trace protocol
//! (begin → declare each parameter → finish).
//!
//! Generic over the concrete function `C` so the logic is tested without a runtime.

use parking_lot::Mutex;
use crate::{
    bind, check_constraints, decode_call, decode_value, describe_mismatch, BindError, DispatchTable, FunctionType, LiteralTable,
    ParamKind, Parameter, PlaceholderContext, PlaceholderSpec, StringTable, TypeRef,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// Distinct values of one Java parameter from which tracing warns (then again at each doubling).
pub const LITERAL_WARNING_THRESHOLD: usize = 8;

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
        let known = self.state.lock().declared.clone();
        if let Some(known) = known.as_ref() {
            let names: Vec<&str> = arg_names.iter().map(String::as_str).collect();
            bind(&known.parameters, &names)?;
        }
        Ok(TraceSession {
            function: self.name.clone(),
            known,
            arg_names,
            declared: Vec::new(),
            traced: Vec::new(),
            placeholders: PlaceholderContext::new(),
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
            if session.declared.len() != known.parameters.len() {
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
        let declared = FunctionType::new(session.declared.clone());
        let traced = FunctionType::new(session.traced.clone());
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
        st.table.insert(traced, concrete);
        if st.declared.is_none() {
            st.declared = Some(declared);
        }
        self.traces.fetch_add(1, Ordering::AcqRel);
        self.warn_about_literals(&st, &session.declared);
        Ok(id)
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
    function: String,
    /// The parameter list fixed by the first trace, if any: every trace must declare it again.
    known: Option<FunctionType>,
    arg_names: Vec<String>,
    declared: Vec<Parameter>,
    traced: Vec<Parameter>,
    placeholders: PlaceholderContext,
}

impl TraceSession {
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
        let traced = value.specialize_for_trace(&*constraint);
        let mut specs = Vec::new();
        traced.placeholders(name, &mut self.placeholders, &mut specs);
        self.declared.push(Parameter { name: name.to_owned(), kind, optional, type_constraint: Some(constraint) });
        self.traced.push(Parameter { name: name.to_owned(), kind, optional, type_constraint: Some(traced) });
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
        let mut s = f.begin_trace::<String>(vec!["x".into()])?;
        s.declare::<String>("x", ParamKind::Tensor, false, c, Some(value))?;
        f.finish_trace(&s, vec!["y".into()], |ty, _| Ok(ty.to_string()))
    }

    #[test]
    fn nothing_is_found_before_the_first_trace() {
        let f = Fn::new("f");
        assert!(f.lookup::<String>(&tensor_facts(DType::FLOAT, &[2])).unwrap().is_none());
        assert!(f.parameters().is_none());
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
        let mut s = f.begin_trace::<String>(vec![]).unwrap();
        let e = s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), None).unwrap_err();
        assert!(e.to_string().contains("'x'"), "{e}");
        let mut s = f.begin_trace::<String>(vec!["x".into()]).unwrap();
        let e = s
            .declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::INT32, &[])))
            .unwrap_err();
        assert!(e.to_string().contains("'x'") && e.to_string().contains("INT32"), "{e}");
    }

    #[test]
    fn unexpected_arguments_fail_the_first_trace_and_binding_later() {
        let f = Fn::new("f");
        let mut s = f.begin_trace::<String>(vec!["x".into(), "z".into()]).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[]))).unwrap();
        let e = f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap_err();
        assert!(e.to_string().contains("'z'"), "{e}");
        assert_eq!(f.trace_count(), 0);
        trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
        let e = f.begin_trace::<String>(vec!["x".into(), "z".into()]).err().unwrap();
        assert!(e.to_string().contains("'z'"), "{e}");
        let e = f.begin_trace::<String>(vec![]).err().unwrap();
        assert!(e.to_string().contains("'x'"), "{e}");
    }

    #[test]
    fn a_changed_parameter_list_is_rejected_with_both_lists() {
        let f = Fn::new("f");
        trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
        // A second trace whose body declares another name.
        let mut s = f.begin_trace::<String>(vec!["x".into()]).unwrap();
        let e = s
            .declare::<String>("w", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), None)
            .unwrap_err();
        assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("(w: ") && text.contains("(x: "), "{text}");
        // A second trace whose body declares fewer parameters.
        let s = f.begin_trace::<String>(vec!["x".into()]).unwrap();
        let e = f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap_err();
        assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
        // Same names and kinds under another constraint is the same list.
        let mut s = f.begin_trace::<String>(vec!["x".into()]).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::INT32, DType::FLOAT], None), Some(spec(DType::FLOAT, &[2])))
            .unwrap();
        f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap();
        assert_eq!(f.trace_count(), 2);
    }

    #[test]
    fn a_failed_build_caches_nothing_and_close_drops_everything() {
        let f = Fn::new("f");
        let mut s = f.begin_trace::<&str>(vec!["x".into()]).unwrap();
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
        assert!(matches!(f.begin_trace::<String>(vec![]), Err(PolyError::Closed(_))));
    }
}
