//! Helpers shared by the protocol tests: facts buffers as the Java side writes them, and
//! functions driven through lookup → begin_trace → declare → finish_trace.
#![allow(dead_code)]

use polyfn_core::*;

pub type Fn = Polymorphic<String>;
pub type R<T> = Result<T, PolyError<String>>;

pub const F: DType = DType::FLOAT;
pub const I: DType = DType::INT32;
pub const KEY_A: i64 = 100;
pub const KEY_B: i64 = 101;

pub fn tensor(d: DType, dims: &[i64]) -> Vec<i64> {
    let mut f = vec![TAG_TENSOR, d.0 as i64, dims.len() as i64];
    f.extend_from_slice(dims);
    f
}

pub fn list_of(elems: &[Vec<i64>]) -> Vec<i64> {
    let mut f = vec![TAG_LIST, elems.len() as i64];
    for e in elems {
        f.extend_from_slice(e);
    }
    f
}

pub fn map_of(entries: &[(i64, Vec<i64>)]) -> Vec<i64> {
    let mut f = vec![TAG_MAP, entries.len() as i64];
    for (k, v) in entries {
        f.push(*k);
        f.extend_from_slice(v);
    }
    f
}

pub fn literal(id: i64) -> Vec<i64> {
    vec![TAG_LITERAL, id]
}

pub fn tc(dtypes: &[DType], shape: Option<&[i64]>) -> TypeRef {
    TypeRef::new(TensorConstraint::new(DTypeSet::of(dtypes), shape.map(Shape::of)))
}

pub fn spec(d: DType, dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(d, Shape::of(dims)))
}

/// One parameter as the body declares it, with the facts of the call's argument.
pub struct Arg {
    pub name: &'static str,
    pub kind: ParamKind,
    pub optional: bool,
    pub constraint: TypeRef,
    pub facts: Vec<i64>,
}

pub fn arg(name: &'static str, kind: ParamKind, constraint: TypeRef, facts: Vec<i64>) -> Arg {
    Arg { name, kind, optional: false, constraint, facts }
}

pub fn new_fn(options: Options) -> Fn {
    let f = Fn::with_options("multi", options);
    f.register_string(KEY_A, "a");
    f.register_string(KEY_B, "b");
    for id in 1..=20 {
        f.register_literal(id, &id.to_string(), "java.lang.Integer", Some(&id.to_string()));
    }
    f.register_literal(99, "s", "java.lang.String", Some("\"s\""));
    f
}

pub fn call_facts(args: &[Arg]) -> Vec<i64> {
    args.iter().flat_map(|a| a.facts.iter().copied()).collect()
}

/// Traces a call of `args` (the body declares them in order), building a concrete function
/// that is its traced type written out.
pub fn trace(f: &Fn, args: &[Arg]) -> R<u32> {
    let facts = call_facts(args);
    let names = args.iter().map(|a| a.name.to_string()).collect();
    let known = f.declared().is_some();
    let mut s = f.begin_trace::<String>(names, known.then_some(&facts[..]), true)?;
    for a in args {
        let value = f.decode_value(&a.facts)?;
        s.declare::<String>(a.name, a.kind, a.optional, a.constraint.clone(), Some(value))?;
    }
    f.finish_trace(&s, vec!["out".into()], |ty, _| Ok(ty.to_string())).map(|c| c.id)
}

/// A call through the whole protocol; returns the traced type of the function that served it.
pub fn call(f: &Fn, args: &[Arg]) -> String {
    let facts = call_facts(args);
    if let Some(c) = f.lookup::<String>(&facts).unwrap() {
        return c.inner.clone();
    }
    trace(f, args).unwrap();
    f.find::<String>(&facts).unwrap().expect("a call finds the function it traced").inner.clone()
}

/// x: FLOAT tensor, xs: list of FLOAT tensors, m: map of anything, n: an Integer.
pub fn four(x: &[i64], xs: &[&[i64]], m: &[(i64, &[i64])], n: i64) -> Vec<Arg> {
    vec![
        arg("x", ParamKind::Tensor, tc(&[F], None), tensor(F, x)),
        arg(
            "xs",
            ParamKind::List,
            TypeRef::new(ListConstraint::new(Some(tc(&[F], None)), None)),
            list_of(&xs.iter().map(|d| tensor(F, d)).collect::<Vec<_>>()),
        ),
        arg(
            "m",
            ParamKind::Map,
            TypeRef::new(MapConstraint::new(None)),
            map_of(&m.iter().map(|(k, d)| (*k, tensor(F, d))).collect::<Vec<_>>()),
        ),
        arg("n", ParamKind::Java, TypeRef::new(LiteralConstraint::new("java.lang.Integer")), literal(n)),
    ]
}

pub fn var(alias: i64) -> Vec<i64> {
    vec![TAG_VARIABLE, F.0 as i64, 1, 2, alias]
}

pub fn var_constraint() -> TypeRef {
    TypeRef::new(VariableConstraint::new(DTypeSet::of(&[F])))
}

/// Deterministic bit source for structural edits (xorshift).
pub struct Bits(pub u64);

impl Bits {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.next() % one_in == 0
    }
}
