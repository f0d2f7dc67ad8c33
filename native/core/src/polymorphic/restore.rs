//! Concrete functions restored from elsewhere (a trace cache written by an earlier process),
//! added to the dispatch table without tracing.

use super::{Concrete, Polymorphic};
use super::error::PolyError;
use crate::explain::explain_retrace;
use crate::facts::decode_call_with_captures;
use crate::function_type::FunctionType;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl<C> Polymorphic<C> {
    /// Adds a concrete function traced elsewhere: `traced` is its monomorphic type and `declared`
    /// the declared type of the function that traced it (both as [`crate::serial`] restores
    /// them). Like a first trace, the first restore fixes the parameter list; a later one (or
    /// trace) must declare the same list. `build` makes the concrete function (outside the lock,
    /// as a trace does). It counts as no trace: `trace_count` stays, statistics and history do
    /// not change, and a call it serves is a hit.
    pub fn restore<E>(
        &self,
        declared: FunctionType,
        traced: FunctionType,
        output_names: Vec<String>,
        build: impl FnOnce(&FunctionType, u32) -> Result<C, E>,
    ) -> Result<Arc<Concrete<C>>, PolyError<E>> {
        let refuse = |why: String| PolyError::Restore { name: self.name.clone(), traced: traced.to_string(), why };
        // A traced type outside its declaration would serve calls the declaration refuses.
        if !traced.is_subtype_of(&declared) {
            return Err(refuse(format!("it is not a subtype of its declared type {declared}")));
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(PolyError::Closed(self.name.clone()));
        }
        let id = self.reserve_id(&declared)?;
        let concrete = Self::build_concrete(id, &traced, output_names, None, build)?;
        let mut messages = Vec::new();
        let evicted;
        let replaced_function;
        {
            let mut st = self.state.lock();
            if self.closed.load(Ordering::Acquire) {
                return Err(PolyError::Closed(self.name.clone()));
            }
            let replaced = st.table.get(&traced).map(|c| c.id);
            replaced_function = st.table.insert(traced.clone(), concrete.clone());
            self.published.added(&mut st.token, concrete.clone(), replaced);
            if st.declared.is_none() {
                st.declared = Some(declared);
            }
            messages.push((log::Level::Debug, format!("function '{}' restored {traced} without tracing", self.name)));
            evicted = self.evict_beyond_bound(&mut st, concrete.id, &mut messages);
        }
        // As after a trace: released functions and log records (user code) after the lock.
        drop(evicted);
        drop(replaced_function);
        for (level, text) in messages {
            log::log!(level, "{text}");
        }
        Ok(concrete)
    }
}

impl<C> Polymorphic<C> {
    /// From now on serves a call from the first cached concrete function, in the order they were
    /// restored, that accepts it, as Python's loader does (see
    /// [`crate::dispatch::DispatchTable::use_saved_order`]): for a function restored from
    /// Python's SavedModel, set before its concrete functions are restored and it is first called.
    pub fn use_saved_order(&self) {
        self.state.lock().table.use_saved_order();
    }

    /// Why no cached concrete function accepts the call typed by `facts`, for a function that
    /// cannot trace (loaded without a body): the cached signatures, one per line, then the first
    /// mismatch of the closest one, as a retrace explanation says it. `None` when a cached
    /// function does accept the call, or the facts do not decode against the declaration.
    pub fn explain_miss(&self, facts: &[i64]) -> Option<String> {
        let st = self.state.lock();
        let declared = st.declared.as_ref()?;
        let call = decode_call_with_captures(declared, facts, &st.strings, &st.literals).ok()?;
        let cached = st.table.types();
        if cached.iter().any(|t| call.is_subtype_of(t)) {
            return None;
        }
        let why = explain_retrace(&call, &cached);
        let list: Vec<String> = cached.iter().map(|t| format!("  {t}")).collect();
        Some(format!("the call {call} matches no saved signature of '{}':\n{}\nclosest mismatch: {why}", self.name, list.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{constraint, spec, tensor_facts, trace, Fn};
    use super::*;
    use crate::serial::{self, TypeRegistry};
    use crate::{DType, ParamKind, Parameter, Shape, TypeRef};

    fn x(t: TypeRef) -> FunctionType {
        FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor).with_constraint(t)])
    }

    /// Through the JSON form, as a trace cache stores them.
    fn via_json(f: &FunctionType) -> FunctionType {
        serial::function_type_from_json(&serial::function_type_to_json(f).unwrap(), &TypeRegistry::builtin()).unwrap()
    }

    #[test]
    fn restored_functions_serve_calls_without_tracing() {
        // a first process traces two signatures under a declared family
        let floats = constraint(&[DType::FLOAT, DType::DOUBLE], None);
        let first = Fn::new("f");
        trace(&first, spec(DType::FLOAT, &[2]), floats.clone()).unwrap();
        trace(&first, spec(DType::DOUBLE, &[-1]), floats.clone()).unwrap();
        let declared = first.declared().unwrap();

        // a second one restores them from their serialized types
        let second = Fn::new("f");
        for c in first.concrete_functions() {
            let (d, t) = (via_json(&declared), via_json(&c.function_type));
            second.restore::<String>(d, t, c.output_names.clone(), |ty, _| Ok(format!("restored {ty}"))).unwrap();
        }
        assert_eq!(second.trace_count(), 0);
        assert_eq!(second.declared(), Some(declared));
        let hit = second.lookup::<String>(&tensor_facts(DType::DOUBLE, &[7])).unwrap().unwrap();
        assert_eq!(hit.inner, "restored (x: TensorSpec(DOUBLE, [-1]))");
        assert_eq!(hit.output_names, ["y"]);
        assert!(second.lookup::<String>(&tensor_facts(DType::FLOAT, &[3])).unwrap().is_none());
        assert_eq!(second.stats().traces, 0);
        assert_eq!(second.stats().inexact_hits, 1);
        assert!(second.history().is_empty());
        // a later trace adds to what was restored, under the same parameter list
        trace(&second, spec(DType::FLOAT, &[3]), floats).unwrap();
        assert_eq!((second.trace_count(), second.concrete_functions().len()), (1, 3));
    }

    #[test]
    fn a_function_in_saved_order_serves_a_call_from_the_first_restored_that_accepts_it() {
        let floats = constraint(&[DType::FLOAT], None);
        let first = Fn::new("f");
        trace(&first, spec(DType::FLOAT, &[-1]), floats.clone()).unwrap();
        trace(&first, spec(DType::FLOAT, &[3]), floats).unwrap();
        let declared = first.declared().unwrap();
        for saved_order in [false, true] {
            let loaded = Fn::new("f");
            if saved_order {
                loaded.use_saved_order();
            }
            for c in first.concrete_functions() {
                let (d, t) = (via_json(&declared), via_json(&c.function_type));
                loaded.restore::<String>(d, t, c.output_names.clone(), |ty, _| Ok(format!("{ty}"))).unwrap();
            }
            let hit = loaded.lookup::<String>(&tensor_facts(DType::FLOAT, &[3])).unwrap().unwrap();
            let want = if saved_order { "(x: TensorSpec(FLOAT, [-1]))" } else { "(x: TensorSpec(FLOAT, [3]))" };
            assert_eq!(hit.inner, want, "saved order {saved_order}");
        }
    }

    #[test]
    fn restoring_what_does_not_fit_is_refused() {
        let f = Fn::new("f");
        let declared = x(constraint(&[DType::FLOAT], None));
        let e = f
            .restore::<String>(declared.clone(), x(spec(DType::INT32, &[2])), vec![], |_, _| Ok(String::new()))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "function 'f' cannot restore the concrete function (x: TensorSpec(INT32, [2])): it is not a subtype of \
             its declared type (x: TensorSpec(FLOAT, *))"
        );
        f.restore::<String>(declared, x(spec(DType::FLOAT, &[2])), vec![], |_, _| Ok(String::new())).unwrap();
        let other = FunctionType::new(vec![Parameter::new("z", ParamKind::Tensor)]);
        let z = FunctionType::new(vec![Parameter::new("z", ParamKind::Tensor)
            .with_constraint(TypeRef::new(crate::TensorSpec::new(DType::FLOAT, Shape::of(&[1]))))]);
        let e = f.restore::<String>(other, z, vec![], |_, _| Ok(String::new())).unwrap_err();
        assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
        // a build failure caches nothing
        let e = f.restore::<String>(x(constraint(&[DType::FLOAT], None)), x(spec(DType::FLOAT, &[9])), vec![], |_, _| {
            Err("no such symbol".to_string())
        });
        assert!(matches!(e, Err(PolyError::Build(m)) if m == "no such symbol"));
        assert_eq!(f.concrete_functions().len(), 1);
        f.close();
        let e = f.restore::<String>(x(constraint(&[DType::FLOAT], None)), x(spec(DType::FLOAT, &[4])), vec![], |_, _| {
            Ok(String::new())
        });
        assert!(matches!(e, Err(PolyError::Closed(_))));
    }
}
