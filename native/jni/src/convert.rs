//! Java ⇄ Rust value conversions used by the entry points.

use crate::errors::{NativeError, Result};
use jni::objects::{JIntArray, JLongArray, JObjectArray, JString};
use jni::Env;

/// A Java `String[]` as Rust strings; `null` elements are an error naming `what`.
pub fn strings(env: &mut Env<'_>, array: &JObjectArray<'_, JString<'_>>, what: &str) -> Result<Vec<String>> {
    let len = array.len(env)?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let s = array.get_element(env, i)?;
        if s.is_null() {
            return Err(NativeError::IllegalArgument(format!("{what}[{i}] is null")));
        }
        out.push(s.try_to_string(env)?);
        // Free each element's local reference at once: arrays may be longer than the JVM's
        // guaranteed local reference capacity (16 without EnsureLocalCapacity).
        env.delete_local_ref(s);
    }
    Ok(out)
}

/// A Java `String`.
pub fn string(env: &Env<'_>, s: &JString<'_>, what: &str) -> Result<String> {
    if s.is_null() {
        return Err(NativeError::IllegalArgument(format!("{what} is null")));
    }
    Ok(s.try_to_string(env)?)
}

/// The first `n` elements of a Java `long[]`, into `buf`.
pub fn longs_into(env: &Env<'_>, array: &JLongArray<'_>, n: i32, buf: &mut Vec<i64>) -> Result<()> {
    let n = usize::try_from(n).map_err(|_| NativeError::IllegalArgument(format!("negative length {n}")))?;
    buf.clear();
    buf.resize(n, 0);
    if n > 0 {
        array.get_region(env, 0, buf)?;
    }
    Ok(())
}

/// A whole Java `long[]`.
pub fn longs(env: &Env<'_>, array: &JLongArray<'_>) -> Result<Vec<i64>> {
    let mut buf = Vec::new();
    let len = array.len(env)? as i32;
    longs_into(env, array, len, &mut buf)?;
    Ok(buf)
}

/// A whole Java `int[]`.
pub fn ints(env: &Env<'_>, array: &JIntArray<'_>) -> Result<Vec<i32>> {
    let len = array.len(env)?;
    let mut buf = vec![0; len];
    if len > 0 {
        array.get_region(env, 0, &mut buf)?;
    }
    Ok(buf)
}

/// A new Java `long[]` holding `values`.
pub fn new_longs<'l>(env: &mut Env<'l>, values: &[i64]) -> Result<JLongArray<'l>> {
    let array = JLongArray::new(env, values.len())?;
    array.set_region(env, 0, values)?;
    Ok(array)
}

/// A new Java `String[]` holding `values`.
pub fn new_strings<'l>(env: &mut Env<'l>, values: &[String]) -> Result<JObjectArray<'l, JString<'l>>> {
    let array = JObjectArray::<JString>::new(env, values.len(), JString::null())?;
    for (i, v) in values.iter().enumerate() {
        let s = env.new_string(v)?;
        array.set_element(env, i, &s)?;
        env.delete_local_ref(s);
    }
    Ok(array)
}

/// The first `n` elements of a Java `long[]`, as a new vector.
pub fn longs_prefix(env: &Env<'_>, array: &JLongArray<'_>, n: i32) -> Result<Vec<i64>> {
    let mut buf = Vec::new();
    longs_into(env, array, n, &mut buf)?;
    Ok(buf)
}
