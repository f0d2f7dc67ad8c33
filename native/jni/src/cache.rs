//! Native methods of the trace cache: exporting a cached concrete function (its TensorFlow
//! FunctionDef and its types as JSON) so that a later process can restore it without tracing, and
//! restoring one.

use crate::convert;
use crate::errors::{NativeError, Result};
use crate::handles::{self, Traced};
use crate::runtime::runtime;
use jni::objects::{JByteArray, JClass, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::Env;
use polyfn_core::serial::{function_type_from_json, function_type_to_json, TypeRegistry};
use polyfn_core::PolyError;
use polyfn_tf::naming::unused_function_name;
use polyfn_tf::EagerFunction;
use serde_json::Value;

/// `Native.exportConcreteTypes`: `[traced type JSON, declared type JSON, output shapes JSON]` of
/// concrete function `concrete_id`; the shapes are an array of each output's dims (-1 unknown,
/// `null` an unknown rank), or `null` for a restored definition, which recorded none. Fails
/// (IllegalStateException) when the function is gone, or, unless `with_literals`, when its types
/// hold a literal: a literal's id is this JVM's interning id, meaningless in another process (a
/// trace cache refuses them; a save writes each literal's value in its place, in Java, which knows
/// the value an id stands for).
pub fn export_concrete_types<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    concrete_id: jint,
    with_literals: jboolean,
) -> Result<JObjectArray<'l, JString<'l>>> {
    let f = handles::function(env, handle)?;
    let concrete = concrete(f, concrete_id)?;
    let declared = f.declared().ok_or_else(|| gone(f, "the function has no parameter list yet".into()))?;
    let serial = |e: polyfn_core::serial::SerialError| NativeError::IllegalState(e.to_string());
    let traced = function_type_to_json(&concrete.function_type).map_err(serial)?;
    let declared = function_type_to_json(&declared).map_err(serial)?;
    for text in [&traced, &declared].into_iter().filter(|_| !with_literals) {
        let value: Value = polyfn_core::serial::parse_json(text).map_err(|e| NativeError::IllegalState(e.to_string()))?;
        if holds_literal(&value) {
            let at = literal_place(&value).map(|p| format!(" ({p})")).unwrap_or_default();
            return Err(NativeError::IllegalState(format!("its type holds a Java value{at}, which only this JVM can identify (exported with its literals, a save or a trace cache writes each value's text instead: pass the value as a tensor)")));
        }
    }
    let shapes = serde_json::to_string(&concrete.inner.output_shapes).map_err(|e| NativeError::IllegalState(e.to_string()))?;
    convert::new_strings(env, &[traced, declared, shapes])
}

/// `Native.sha256`: the SHA-256 digest of `data` (the cache's keys and entry checksums; Java's
/// own costs tens of milliseconds on its first use in a process).
pub fn sha256<'l>(env: &mut Env<'l>, _class: JClass<'l>, data: JByteArray<'l>) -> Result<JByteArray<'l>> {
    if data.is_null() {
        return Err(NativeError::IllegalArgument("data is null".into()));
    }
    let bytes = env.convert_byte_array(&data)?;
    Ok(env.byte_array_from_slice(&polyfn_core::sha256::sha256(&bytes))?)
}

/// `Native.exportFunctionDef`: the serialized TensorFlow FunctionDef of concrete function
/// `concrete_id`. For the trace cache (`for_cache`), a function that calls another Polyfn function
/// is refused (IllegalStateException): the cache key sees the caller's body only, so a changed
/// callee would be served stale; a SavedModel holds the callees' definitions as they are.
pub fn export_function_def<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    concrete_id: jint,
    for_cache: jboolean,
) -> Result<JByteArray<'l>> {
    let f = handles::function(env, handle)?;
    let function = &concrete(f, concrete_id)?.inner.function;
    if for_cache && function.calls_other_functions() {
        return Err(NativeError::IllegalState(format!(
            "function {} calls other Polyfn functions, whose bodies its cache key cannot see",
            function.name()
        )));
    }
    let bytes = function.to_function_def()?;
    Ok(env.byte_array_from_slice(&bytes)?)
}

/// `Native.exportLibrary`: the functions concrete function `concrete_id`'s operations may refer
/// to (control-flow branches, nested ones included), as a serialized `FunctionDefLibrary`.
pub fn export_library<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong, concrete_id: jint) -> Result<JByteArray<'l>> {
    let f = handles::function(env, handle)?;
    let bytes = concrete(f, concrete_id)?.inner.function.library_defs()?;
    Ok(env.byte_array_from_slice(&bytes)?)
}

/// `Native.restoreConcrete`: adds a concrete function read from a trace cache, registered under a
/// fresh TensorFlow name, without tracing, with the functions it refers to (`library`, a
/// serialized `FunctionDefLibrary` whose functions the caller named freshly), and, when not
/// null, its outputs' static shapes as a SavedModel recorded them (see [`read_output_shapes`]),
/// which a save of it writes again. Returns its id.
/// Any malformed part is an IllegalArgumentException naming it; nothing is registered then.
#[allow(clippy::too_many_arguments)]
pub fn restore_concrete<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    declared: JString<'l>,
    traced: JString<'l>,
    def: JByteArray<'l>,
    library: JByteArray<'l>,
    output_names: JObjectArray<'l, JString<'l>>,
    outputs_key: jint,
    output_shapes: JString<'l>,
) -> Result<jint> {
    let f = handles::function(env, handle)?;
    let (rt, ctx) = runtime()?;
    let registry = TypeRegistry::builtin();
    let read = |what: &str, text: &str| {
        function_type_from_json(text, &registry).map_err(|e| NativeError::IllegalArgument(format!("{what} type: {e}")))
    };
    let declared = read("declared", &convert::string(env, &declared, "declared type")?)?;
    let traced = read("traced", &convert::string(env, &traced, "traced type")?)?;
    if def.is_null() {
        return Err(NativeError::IllegalArgument("the function definition is null".into()));
    }
    let def = env.convert_byte_array(&def)?;
    let library = if library.is_null() { Vec::new() } else { env.convert_byte_array(&library)? };
    let names = convert::strings(env, &output_names, "output names")?;
    let output_shapes = if output_shapes.is_null() {
        None
    } else {
        Some(read_output_shapes(&convert::string(env, &output_shapes, "output shapes")?, names.len())?)
    };
    let tf_name = unused_function_name(rt, ctx, f.name());
    let options = f.call_options();
    let concrete = f.restore(declared, traced, names, |_ty, _id| {
        let function = EagerFunction::from_function_def_with(rt, ctx, &def, &library, &tf_name, options)?;
        Ok(Traced { function, outputs_key, output_shapes })
    })?;
    Ok(concrete.id as jint)
}

/// The outputs' static shapes a SavedModel recorded (`[[2, -1], null, []]`: one per output, dims
/// of -1 or more, `null` an unknown rank), read back to be saved again; anything else is refused.
fn read_output_shapes(text: &str, outputs: usize) -> Result<Vec<Option<Vec<i64>>>> {
    let bad = |why: String| NativeError::IllegalArgument(format!("output shapes: {why}"));
    let shapes: Vec<Option<Vec<i64>>> = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if shapes.len() != outputs {
        return Err(bad(format!("{} shapes for {outputs} outputs", shapes.len())));
    }
    for (i, dims) in shapes.iter().enumerate() {
        if let Some(dims) = dims {
            if dims.len() > 254 || dims.iter().any(|&d| d < -1) {
                return Err(bad(format!("output {i}: expected at most 254 dims, each -1 or more, got {dims:?}")));
            }
        }
    }
    Ok(shapes)
}

fn concrete(f: &handles::Function, id: jint) -> Result<std::sync::Arc<handles::ConcreteFn>> {
    u32::try_from(id)
        .ok()
        .and_then(|id| f.concrete_by_id(id))
        .ok_or_else(|| gone(f, format!("no concrete function {id} in {}", f.name())))
}

/// The error for state that is missing: the function's closed error if a `close` on another
/// thread took it (a save racing a close), else `otherwise`.
fn gone(f: &handles::Function, otherwise: String) -> NativeError {
    if f.is_closed() {
        PolyError::<polyfn_tf::TfError>::Closed(f.name().to_owned()).into()
    } else {
        NativeError::IllegalState(otherwise)
    }
}

/// Whether a serialized type holds a literal (kind `literal` or `literal_constraint`) anywhere.
fn holds_literal(v: &Value) -> bool {
    match v {
        Value::Object(map) => {
            map.get("kind").and_then(Value::as_str).is_some_and(|k| k.starts_with("literal"))
                || map.values().any(holds_literal)
        }
        Value::Array(items) => items.iter().any(holds_literal),
        _ => false,
    }
}

/// Where a function type document holds a literal, for messages: `parameter 'xs', at xs['n']`,
/// `parameter 'n'` or `capture 'c'`; None when none of its parameters' or captures' types does.
fn literal_place(doc: &Value) -> Option<String> {
    let body = doc.get("function_type")?;
    let named = |list: &str, what: &str| {
        body.get(list)?.as_array()?.iter().find_map(|p| {
            let name = p.get("name")?.as_str()?;
            let path = literal_at(p.get("type")?, name)?;
            Some(if path == name { format!("{what} '{name}'") } else { format!("{what} '{name}', at {path}") })
        })
    };
    named("parameters", "parameter").or_else(|| named("captures", "capture"))
}

/// The path of the first literal in serialized type `t`, found at `path`, written as Java's
/// nest paths are (`[0]` an element, `['k']` a map entry, `.name` a record's or composite's
/// component).
fn literal_at(t: &Value, path: &str) -> Option<String> {
    let Value::Object(m) = t else { return None };
    let kind = m.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind.starts_with("literal") {
        return Some(path.to_owned());
    }
    let named = |names: &str, types: &str| {
        let names = m.get(names)?.as_array()?;
        let types = m.get(types)?.as_array()?;
        names.iter().zip(types).find_map(|(n, t)| literal_at(t, &format!("{path}.{}", n.as_str().unwrap_or("?"))))
    };
    match kind {
        "list" => m.get("elements")?.as_array()?.iter().enumerate().find_map(|(i, e)| literal_at(e, &format!("{path}[{i}]"))),
        "map" => m.get("entries")?.as_object()?.iter().find_map(|(k, e)| literal_at(e, &format!("{path}['{k}']"))),
        "record" => named("names", "types"),
        "composite" => m.get("metadata").and_then(|t| literal_at(t, &format!("{path} (its metadata)"))).or_else(|| named("component_names", "components")),
        // Constraints (a list's element, a map's value): the literal is in every element.
        _ => m.values().find_map(|v| literal_at(v, path)),
    }
}

#[cfg(test)]
mod tests {
    use super::{concrete, gone, literal_place};
    use crate::handles::Function;
    use polyfn_core::{Options, Polymorphic};

    /// A save that looked up a concrete function just before another thread closed the function
    /// gets the closed error (as every other call of a closed function), not a message about
    /// missing state that reads as a defect.
    #[test]
    fn state_missing_after_a_close_is_reported_as_closed() {
        let f = Function::new(Polymorphic::with_options("f", Options::default()));
        let open = concrete(&f, 3).err().unwrap().to_string();
        assert!(open.contains("no concrete function 3 in f"), "{open}");
        assert!(gone(&f, "missing".into()).to_string().contains("missing"));
        f.close();
        for e in [concrete(&f, 3).err().unwrap(), gone(&f, "missing".into())] {
            assert_eq!(e.to_string(), "function 'f' is closed", "{e}");
        }
    }

    /// An export refused for a Java value says which parameter holds it, and where in its nest.
    #[test]
    fn a_literal_is_placed_by_parameter_and_path() {
        let lit = serde_json::json!({"kind": "literal", "id": 7, "repr": "3", "class": "java.lang.Integer"});
        let t = serde_json::json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": []});
        let doc = |params: serde_json::Value| serde_json::json!({"function_type": {"parameters": params, "captures": []}});
        let nest = serde_json::json!({"kind": "list", "elements": [t, {"kind": "map", "entries": {"k": t, "n": lit}}]});
        let place = literal_place(&doc(serde_json::json!([{"name": "x", "type": t}, {"name": "xs", "type": nest}])));
        assert_eq!(place.as_deref(), Some("parameter 'xs', at xs[1]['n']"));
        assert_eq!(literal_place(&doc(serde_json::json!([{"name": "n", "type": lit}]))).as_deref(), Some("parameter 'n'"));
        let record = serde_json::json!({"kind": "record", "class": "R", "names": ["x", "size"], "types": [t, lit]});
        assert_eq!(literal_place(&doc(serde_json::json!([{"name": "r", "type": record}]))).as_deref(), Some("parameter 'r', at r.size"));
        assert_eq!(literal_place(&doc(serde_json::json!([{"name": "x", "type": t}]))), None);
    }
}
