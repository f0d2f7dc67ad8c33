//! Native methods that describe a function to Java: its types, concrete functions, statistics
//! and trace history, as the typed Java objects users see (built here once, not parsed there).

use crate::convert;
use crate::errors::Result;
use crate::handles;
use jni::objects::{JClass, JLongArray, JObject, JObjectArray, JValue};
use jni::strings::JNIString;
use jni::sys::jlong;
use jni::{jni_sig, jni_str, Env};
use polyfn_core::FunctionType;

const PARAMETER: &str = "dev/polyfn/FunctionType$Parameter";

/// `Native.parameters`: the polymorphic FunctionType (declared constraints), or null before the
/// first trace.
pub fn parameters<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<JObject<'l>> {
    match handles::function(env, handle)?.declared() {
        Some(declared) => function_type(env, &declared),
        None => Ok(JObject::null()),
    }
}

/// `Native.concreteFunctions`: every cached concrete function, as `ConcreteFunctionInfo[]`.
pub fn concrete_functions<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<JObjectArray<'l>> {
    let concretes = handles::function(env, handle)?.concrete_functions();
    let array = env.new_object_array(concretes.len() as i32, jni_str!("dev/polyfn/ConcreteFunctionInfo"), JObject::null())?;
    for (i, c) in concretes.iter().enumerate() {
        let ty = function_type(env, &c.function_type)?;
        let name = env.new_string(c.inner.function.name())?;
        let outputs = convert::new_strings(env, &c.output_names)?;
        let info = env.new_object(
            jni_str!("dev/polyfn/ConcreteFunctionInfo"),
            jni_sig!("(ILjava/lang/String;Ldev/polyfn/FunctionType;[Ljava/lang/String;IJJ)V"),
            &[
                JValue::Int(c.id as i32),
                JValue::Object(&name),
                JValue::Object(&ty),
                JValue::Object(&outputs),
                JValue::Int(c.inner.function.num_inputs() as i32),
                JValue::Long(c.preparation.total_nanos() as i64),
                // -1: not run yet
                JValue::Long(c.first_run.nanos().map_or(-1, |n| n as i64)),
            ],
        )?;
        array.set_element(env, i, &info)?;
        for local in [info, ty, name.into(), outputs.into()] {
            env.delete_local_ref(local);
        }
    }
    Ok(array)
}

/// `Native.statistics`: the counters, indexed by `Wire.STAT_*`.
pub fn statistics<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<JLongArray<'l>> {
    let stats = handles::function(env, handle)?.stats();
    convert::new_longs(env, &stats.to_wire())
}

/// `Native.traceHistory`: recent traces, oldest first, as `TraceEvent[]`.
pub fn trace_history<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<JObjectArray<'l>> {
    let history = handles::function(env, handle)?.history();
    let array = env.new_object_array(history.len() as i32, jni_str!("dev/polyfn/TraceEvent"), JObject::null())?;
    for (i, r) in history.iter().enumerate() {
        let ty = env.new_string(&r.function_type)?;
        let parameter = env.new_string(&r.parameter)?;
        let path = env.new_string(&r.path)?;
        let reason = env.new_string(&r.reason)?;
        let event = env.new_object(
            jni_str!("dev/polyfn/TraceEvent"),
            jni_sig!("(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;ZLjava/lang/String;J)V"),
            &[
                JValue::Object(&ty),
                JValue::Object(&parameter),
                JValue::Object(&path),
                JValue::Bool(r.capture),
                JValue::Object(&reason),
                JValue::Long(r.nanos as i64),
            ],
        )?;
        array.set_element(env, i, &event)?;
        for local in [event, ty.into(), parameter.into(), path.into(), reason.into()] {
            env.delete_local_ref(local);
        }
    }
    Ok(array)
}

/// A `dev.polyfn.FunctionType`: its parameters, then its captures (kind `capture`).
fn function_type<'l>(env: &mut Env<'l>, ty: &FunctionType) -> Result<JObject<'l>> {
    let params: Vec<(&str, String, bool, String)> = ty
        .parameters
        .iter()
        .map(|p| {
            let t = p.type_constraint.as_ref().map(|t| t.to_string()).unwrap_or_else(|| p.kind.to_string());
            (p.name.as_str(), p.kind.to_string(), p.optional, t)
        })
        .collect();
    let captures: Vec<(&str, String, bool, String)> =
        ty.captures.iter().map(|(name, t)| (name.as_str(), "capture".to_owned(), false, t.to_string())).collect();
    let params = parameter_array(env, &params)?;
    let captures = parameter_array(env, &captures)?;
    let sig = jni_sig!("([Ldev/polyfn/FunctionType$Parameter;[Ldev/polyfn/FunctionType$Parameter;)V");
    let object = env.new_object(jni_str!("dev/polyfn/FunctionType"), sig, &[JValue::Object(&params), JValue::Object(&captures)])?;
    env.delete_local_ref(params);
    env.delete_local_ref(captures);
    Ok(object)
}

fn parameter_array<'l>(env: &mut Env<'l>, params: &[(&str, String, bool, String)]) -> Result<JObjectArray<'l>> {
    let array = env.new_object_array(params.len() as i32, JNIString::from(PARAMETER), JObject::null())?;
    for (i, (name, kind, optional, ty)) in params.iter().enumerate() {
        let name = env.new_string(name)?;
        let kind = env.new_string(kind)?;
        let ty = env.new_string(ty)?;
        let p = env.new_object(
            JNIString::from(PARAMETER),
            jni_sig!("(Ljava/lang/String;Ljava/lang/String;ZLjava/lang/String;)V"),
            &[JValue::Object(&name), JValue::Object(&kind), JValue::Bool(*optional), JValue::Object(&ty)],
        )?;
        array.set_element(env, i, &p)?;
        for local in [p, name.into(), kind.into(), ty.into()] {
            env.delete_local_ref(local);
        }
    }
    Ok(array)
}
