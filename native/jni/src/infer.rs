//! Native methods of signature inference: coalescing a parameter's example types into an
//! inferred constraint, and what inference said.

use crate::convert;
use crate::errors::{NativeError, Result};
use crate::handles;
use jni::objects::{JClass, JIntArray, JLongArray, JObject, JObjectArray, JString, JValue};
use jni::sys::{jboolean, jint, jlong};
use jni::{jni_sig, jni_str, Env};
use polyfn_core::infer::Provenance;
use polyfn_tf::TfError;

/// `Native.inferParameter`: the facts of each example argument of parameter `name`, one after
/// another (`lengths[i]` facts each), coalesced into its inferred constraint. `profile_calls` is
/// 0 for examples, else the number of recorded calls the examples stand for. Returns what
/// inference said about the parameter (empty when nothing).
pub fn infer_parameter<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    name: JString<'l>,
    facts: JLongArray<'l>,
    lengths: JIntArray<'l>,
    profile_calls: jlong,
) -> Result<JObjectArray<'l, JString<'l>>> {
    let f = handles::function(env, handle)?;
    let name = convert::string(env, &name, "name")?;
    let facts = convert::longs(env, &facts)?;
    let mut examples = Vec::new();
    let mut at = 0usize;
    for n in convert::ints(env, &lengths)? {
        let end = usize::try_from(n).ok().and_then(|n| at.checked_add(n)).filter(|&e| e <= facts.len());
        let end = end.ok_or_else(|| NativeError::IllegalArgument(format!("example facts of '{name}' are malformed")))?;
        examples.push(f.decode_argument::<TfError>(&name, &facts[at..end])?);
        at = end;
    }
    let source = if profile_calls > 0 { Provenance::Profile(profile_calls as u64) } else { Provenance::Examples(examples.len()) };
    let note = f.infer_parameter(&name, &examples, source);
    convert::new_strings(env, &note.into_iter().collect::<Vec<_>>())
}

/// `Native.exampleServed`: whether an example call (its facts) needs no trace of its own at
/// definition (see `Polymorphic::example_served`).
pub fn example_served<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong, facts: JLongArray<'l>, fact_count: jint) -> Result<jboolean> {
    let f = handles::function(env, handle)?;
    let facts = convert::longs_prefix(env, &facts, fact_count)?;
    Ok(f.example_served(&facts)? as jboolean)
}

/// `Native.inferenceNotes`: what inference said, one line per parameter.
pub fn inference_notes<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<JObjectArray<'l, JString<'l>>> {
    let notes = handles::function(env, handle)?.inference_notes();
    convert::new_strings(env, &notes)
}

/// `Native.suggestedSignature`: the signature the recorded calls suggest, as a
/// `SignatureSuggestion`, or null before the first trace.
pub fn suggested_signature<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<JObject<'l>> {
    let Some(s) = handles::function(env, handle)?.suggested_signature() else { return Ok(JObject::null()) };
    let java = convert::new_strings(env, &s.java)?;
    let kotlin = convert::new_strings(env, &s.kotlin)?;
    let notes = convert::new_strings(env, &s.notes)?;
    let clamp = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    Ok(env.new_object(
        jni_str!("dev/polyfn/SignatureSuggestion"),
        jni_sig!("(JII[Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/String;)V"),
        &[
            JValue::Long(s.calls as i64),
            JValue::Int(clamp(s.traces_before)),
            JValue::Int(clamp(s.traces_after)),
            JValue::Object(&java),
            JValue::Object(&kotlin),
            JValue::Object(&notes),
        ],
    )?)
}

/// `Native.signatureProfile`: the recorded calls as the profile file's JSON.
pub fn signature_profile<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<JString<'l>> {
    let json = handles::function(env, handle)?.profile_json();
    Ok(env.new_string(json)?)
}
