//! Errors of the JNI layer and the policy that turns them, and panics, into Java exceptions.
//! Nothing here aborts the JVM: every native method resolves its outcome through [`ThrowJava`].

use jni::errors::ErrorPolicy;
use jni::strings::JNIString;
use jni::Env;
use polyfn_core::{BindError, PolyError};
use polyfn_tf::{Code, TfError};

/// Everything a native method can fail with, by the Java exception it becomes.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// Bad arguments: `IllegalArgumentException`, naming the parameter.
    #[error("{0}")]
    IllegalArgument(String),
    /// Misuse (closed function, changed parameter list...): `IllegalStateException`.
    #[error("{0}")]
    IllegalState(String),
    /// A TensorFlow runtime error: TensorFlow Java's exception for its code.
    #[error("{0}")]
    TensorFlow(TfError),
    /// A JNI failure (usually a pending Java exception).
    #[error("JNI: {0}")]
    Jni(#[from] jni::errors::Error),
}

pub type Result<T> = std::result::Result<T, NativeError>;

impl From<BindError> for NativeError {
    fn from(e: BindError) -> Self {
        NativeError::IllegalArgument(e.to_string())
    }
}

impl From<PolyError<TfError>> for NativeError {
    fn from(e: PolyError<TfError>) -> Self {
        match e {
            PolyError::Bind(b) => b.into(),
            PolyError::Build(t) => NativeError::TensorFlow(t),
            other => NativeError::IllegalState(other.to_string()),
        }
    }
}

impl From<TfError> for NativeError {
    fn from(e: TfError) -> Self {
        NativeError::TensorFlow(e)
    }
}

impl NativeError {
    fn java_class(&self) -> &'static str {
        match self {
            NativeError::IllegalArgument(_) => "java/lang/IllegalArgumentException",
            NativeError::IllegalState(_) => "java/lang/IllegalStateException",
            NativeError::Jni(_) => "java/lang/IllegalStateException",
            NativeError::TensorFlow(e) => tensorflow_exception(e.code),
        }
    }
}

/// TensorFlow Java's exception class for a TensorFlow status code, as its own runtime raises them.
fn tensorflow_exception(code: Code) -> &'static str {
    match code {
        Code::InvalidArgument => "org/tensorflow/exceptions/TFInvalidArgumentException",
        Code::PermissionDenied => "org/tensorflow/exceptions/TFPermissionDeniedException",
        Code::ResourceExhausted => "org/tensorflow/exceptions/TFResourceExhaustedException",
        Code::FailedPrecondition => "org/tensorflow/exceptions/TFFailedPreconditionException",
        Code::OutOfRange => "org/tensorflow/exceptions/TFOutOfRangeException",
        Code::Unimplemented => "org/tensorflow/exceptions/TFUnimplementedException",
        Code::Unauthenticated => "org/tensorflow/exceptions/TFUnauthenticatedException",
        _ => "org/tensorflow/exceptions/TensorFlowException",
    }
}

/// Throws the Java exception matching the error, or an `IllegalStateException` carrying a panic's
/// message, and returns the default value to the JVM.
#[derive(Debug)]
pub struct ThrowJava;

impl<T: Default> ErrorPolicy<T, NativeError> for ThrowJava {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'l: 'n, 'n>(env: &mut Env<'l>, _cap: &mut (), err: NativeError) -> jni::errors::Result<T> {
        if env.exception_check() {
            // A Java exception is already pending (e.g. thrown by a JNI call); let it propagate.
            return Ok(T::default());
        }
        let _ = env.throw_new(JNIString::from(err.java_class()), JNIString::from(err.to_string()));
        Ok(T::default())
    }

    fn on_panic<'l: 'n, 'n>(
        env: &mut Env<'l>,
        _cap: &mut (),
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        if !env.exception_check() {
            let _ = env.throw_new(
                JNIString::from("java/lang/IllegalStateException"),
                JNIString::from(format!("internal error in Polyfn's native code (please report): {message}")),
            );
        }
        Ok(T::default())
    }
}
