//! `polyfn-jni`: the JNI entry points of `dev.polyfn.internal.Native`. It converts Java values to
//! core types and back and turns errors and panics into Java exceptions; the logic lives in
//! `polyfn-core` (types, dispatch) and `polyfn-tf` (the runtime).

mod convert;
mod errors;
mod exports;
mod logging;
