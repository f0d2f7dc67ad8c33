//! Binding the runtime: the errors before it is bound. One test in its own binary (process), so
//! no other test has bound the runtime first.

mod support;

use polyfn_tf::{Runtime, RuntimeError};
use std::path::Path;

#[test]
fn binding_errors_say_what_is_missing_then_binding_succeeds() {
    assert!(Runtime::get().is_none());
    let err = Runtime::attach_loaded().unwrap_err();
    assert!(matches!(err, RuntimeError::NotLoaded { .. }), "{err:?}");
    assert!(err.to_string().contains("TensorFlow Java must be initialized before Polyfn"), "{err}");

    let missing = Path::new("/nonexistent/libtensorflow_cc.so.2");
    let err = Runtime::load(missing).unwrap_err();
    assert!(matches!(&err, RuntimeError::Load { path, .. } if path == missing), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/libtensorflow_cc.so.2"), "{err}");

    let rt = support::runtime();
    // Loaded now: attaching finds the same runtime without loading anything.
    assert!(std::ptr::eq(Runtime::attach_loaded().unwrap(), rt));
    assert!(rt.version().starts_with("2."), "{}", rt.version());
}
