//! Native methods of functions loaded from a SavedModel: explaining a call that no saved
//! signature accepts, since such a function has no body to trace.

use crate::convert;
use crate::errors::Result;
use crate::handles;
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jint, jlong};
use jni::Env;

/// `Native.useSavedOrder`: calls served from the first concrete function, in restore order, that
/// accepts them, as Python's loader serves a restored function's.
pub fn use_saved_order<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<()> {
    handles::function(env, handle)?.use_saved_order();
    Ok(())
}

/// `Native.explainMiss`: why no concrete function accepts the call typed by `facts` (the saved
/// signatures and the closest mismatch), or null when one does.
pub fn explain_miss<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    facts: JLongArray<'l>,
    fact_count: jint,
) -> Result<JString<'l>> {
    let f = handles::function(env, handle)?;
    let facts = convert::longs_prefix(env, &facts, fact_count)?;
    match f.explain_miss(&facts) {
        Some(text) => Ok(env.new_string(text)?),
        None => Ok(JString::null()),
    }
}
