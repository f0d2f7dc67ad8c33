//! A trace type defined outside the crate plugs into FunctionType and DispatchTable with no
//! change to polyfn-core: the generic code only speaks the TraceType protocol.

use std::fmt;

use polyfn_core::*;

/// A ragged tensor: flat values plus row splits (two graph inputs).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct RaggedSpec {
    values: TensorSpec,
    row_splits: TensorSpec,
}

impl RaggedSpec {
    fn new(dtype: DType, nvals: i64, nrows: i64) -> Self {
        RaggedSpec {
            values: TensorSpec::new(dtype, Shape::of(&[nvals])),
            row_splits: TensorSpec::new(
                DType::INT64,
                Shape::of(&[if nrows < 0 { -1 } else { nrows + 1 }]),
            ),
        }
    }

    fn parts(t: &dyn TraceType) -> Option<&RaggedSpec> {
        t.as_any().downcast_ref::<RaggedSpec>()
    }
}

impl fmt::Display for RaggedSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RaggedSpec({}, {})", self.values, self.row_splits)
    }
}

impl TraceType for RaggedSpec {
    fn kind(&self) -> &'static str {
        "ragged"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        RaggedSpec::parts(other).is_some_and(|o| {
            self.values.is_subtype_of(&o.values) && self.row_splits.is_subtype_of(&o.row_splits)
        })
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let others: Vec<&RaggedSpec> = others
            .iter()
            .map(|o| RaggedSpec::parts(*o))
            .collect::<Option<_>>()?;
        let join = |get: fn(&RaggedSpec) -> &TensorSpec| -> Option<TensorSpec> {
            let rest: Vec<&dyn TraceType> =
                others.iter().map(|o| get(o) as &dyn TraceType).collect();
            let j = get(self).most_specific_common_supertype(&rest)?;
            j.downcast_ref::<TensorSpec>().cloned()
        };
        Some(TypeRef::new(RaggedSpec {
            values: join(|r| &r.values)?,
            row_splits: join(|r| &r.row_splits)?,
        }))
    }

    fn placeholders(
        &self,
        path: &str,
        ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    ) {
        self.values
            .placeholders(&format!("{path}.values"), ctx, out);
        self.row_splits
            .placeholders(&format!("{path}.row_splits"), ctx, out);
    }


    polyfn_core::trace_type_common!();
}

/// A variable handle: aliased values share one placeholder (PlaceholderContext).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct VariableSpec {
    id: u64,
}

impl fmt::Display for VariableSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Variable#{}", self.id)
    }
}

impl TraceType for VariableSpec {
    fn kind(&self) -> &'static str {
        "variable"
    }
    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        self.dyn_eq(other)
    }
    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        others
            .iter()
            .all(|o| self.dyn_eq(*o))
            .then(|| TypeRef::new(self.clone()))
    }
    fn placeholders(
        &self,
        path: &str,
        ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    ) {
        if ctx.alias_index(self.id).is_none() {
            ctx.record_alias(self.id, out.len());
            out.push(PlaceholderSpec {
                path: path.into(),
                dtype: DType::RESOURCE,
                shape: Shape::scalar(),
                alias: Some(self.id),
            });
        }
    }
    polyfn_core::trace_type_common!();
}

/// Graph inputs of a function type as a trace creates them: parameters, then captures, sharing
/// one placeholder context so aliased values get one placeholder.
fn placeholders(f: &FunctionType) -> Vec<PlaceholderSpec> {
    let mut ctx = PlaceholderContext::new();
    let mut out = Vec::new();
    for p in &f.parameters {
        if let Some(t) = &p.type_constraint {
            t.placeholders(&p.name, &mut ctx, &mut out);
        }
    }
    for (name, t) in &f.captures {
        t.placeholders(name, &mut ctx, &mut out);
    }
    out
}

fn call(rt: RaggedSpec, n: u64) -> FunctionType {
    FunctionType::new(vec![
        Parameter::new("rt", ParamKind::Tensor).with_constraint(TypeRef::new(rt)),
        Parameter::new("n", ParamKind::Java).with_constraint(TypeRef::new(Literal::new(
            n,
            n.to_string(),
            "java.lang.Integer",
        ))),
    ])
}

#[test]
fn ragged_plugs_into_function_type_and_dispatch() {
    let a = call(RaggedSpec::new(DType::FLOAT, 5, 2), 1);
    let b = call(RaggedSpec::new(DType::FLOAT, 7, 3), 1);
    assert_eq!(
        a.to_string(),
        "(rt: RaggedSpec(TensorSpec(FLOAT, [5]), TensorSpec(INT64, [3])), n: Literal(1))"
    );
    let paths: Vec<String> = placeholders(&a).into_iter().map(|p| p.path).collect();
    assert_eq!(paths, ["rt.values", "rt.row_splits"]);

    let mut table = DispatchTable::new();
    assert_eq!(explain_retrace(&a, &table.types()), "first call");
    table.insert(table.generalize(&a), "f_a");
    assert_eq!(table.lookup(&a, None), Some(("f_a", Hit::Exact)));
    assert_eq!(table.lookup(&b, None), None);
    assert_eq!(
        explain_retrace(&b, &table.types()),
        "rt: RaggedSpec(TensorSpec(FLOAT, [7]), TensorSpec(INT64, [4])) does not match \
         RaggedSpec(TensorSpec(FLOAT, [5]), TensorSpec(INT64, [3]))"
    );

    // reduce_retracing generalizes through the new type's own join
    let g = table.generalize(&b);
    assert_eq!(g, call(RaggedSpec::new(DType::FLOAT, -1, -1), 1));
    table.insert(g, "f_any");
    let c = call(RaggedSpec::new(DType::FLOAT, 9, 4), 1);
    assert_eq!(table.lookup(&c, Some(&[42])), Some(("f_any", Hit::Inexact)));
    assert_eq!(table.lookup_facts(&[42]), Some(("f_any", Hit::Inexact)));
    // the exact entry stays the most specific match for its own type
    assert_eq!(table.lookup(&a, None), Some(("f_a", Hit::Exact)));
    // a different dtype never generalizes
    let d = call(RaggedSpec::new(DType::INT32, 5, 2), 1);
    assert_eq!(table.lookup(&d, None), None);
    assert_eq!(table.generalize(&d), d);
    // and the new type coexists with built-ins without being confused for them
    let tensor = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[5])));
    let ragged = TypeRef::new(RaggedSpec::new(DType::FLOAT, 5, 2));
    assert!(!ragged.is_subtype_of(&*tensor) && !tensor.is_subtype_of(&*ragged));
    assert_ne!(ragged, tensor);
}

#[test]
fn aliased_values_share_one_placeholder() {
    let v = TypeRef::new(VariableSpec { id: 7 });
    let f = FunctionType::new(vec![
        Parameter::new("a", ParamKind::Java).with_constraint(v.clone()),
        Parameter::new("xs", ParamKind::List)
            .with_constraint(TypeRef::new(ListType::new(vec![v.clone(), v.clone()]))),
    ])
    .with_captures(vec![("w".into(), v)]);
    let ph = placeholders(&f);
    assert_eq!(ph.len(), 1);
    assert_eq!(ph[0].path, "a");
    assert_eq!(ph[0].alias, Some(7));
}
