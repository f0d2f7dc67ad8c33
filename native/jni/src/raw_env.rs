//! The JNI functions the call path uses, called directly on the raw `JNIEnv`.
//!
//! jni-rs's `Env` checks for a pending exception before and after every JNI function and keeps
//! thread-attachment bookkeeping per native call: about a tenth of an `add2` call. The call path
//! needs four array functions whose only failure modes are checked here first (null arrays,
//! counts outside the array) or reported by a null result (allocation), so it calls them
//! directly. Everything else, errors and panics included, still goes through jni-rs.

use crate::errors::{NativeError, Result};
use jni::objects::JLongArray;
use jni::refs::Reference;
use jni::sys::{jlongArray, jsize, JNIEnv};

const _: () = assert!(std::mem::size_of::<JLongArray<'static>>() == std::mem::size_of::<jlongArray>());

/// A raw `JNIEnv` of the current native call, with no Java exception pending.
pub struct RawEnv(*mut JNIEnv);

impl RawEnv {
    /// # Safety
    /// `env` is the current thread's `JNIEnv` for the native call in progress, and no Java
    /// exception is pending (true on entry to a native method).
    pub unsafe fn new(env: *mut JNIEnv) -> Self {
        RawEnv(env)
    }

    /// The first `n` elements of `array` into `buf` (cleared first).
    pub fn longs_into(&self, array: &JLongArray<'_>, n: i32, what: &str, buf: &mut Vec<i64>) -> Result<()> {
        let raw = array.as_raw() as jlongArray;
        if raw.is_null() {
            return Err(NativeError::IllegalArgument(format!("{what} is null")));
        }
        // SAFETY: a live local reference to a long[] (the method's parameter type) and this
        // thread's env with no exception pending; GetArrayLength cannot throw.
        let len = unsafe { ((**self.0).v1_1.GetArrayLength)(self.0, raw) };
        if n < 0 || n > len {
            return Err(NativeError::IllegalArgument(format!("{what}: {n} elements asked of {len}")));
        }
        buf.clear();
        buf.resize(n as usize, 0);
        if n > 0 {
            // SAFETY: 0..n lies inside the array (checked above), so GetLongArrayRegion cannot
            // throw; `buf` holds n elements.
            unsafe { ((**self.0).v1_1.GetLongArrayRegion)(self.0, raw, 0, n as jsize, buf.as_mut_ptr()) };
        }
        Ok(())
    }

    /// `values` in `into` if it is long enough (then `into` is returned), else in a new `long[]`;
    /// an error (with Java's `OutOfMemoryError` pending) if the JVM cannot allocate it.
    pub fn write_longs<'l>(&self, into: JLongArray<'l>, values: &[i64]) -> Result<JLongArray<'l>> {
        let len = jsize::try_from(values.len())
            .map_err(|_| NativeError::IllegalState(format!("{} values do not fit a Java array", values.len())))?;
        let mut array = into.as_raw() as jlongArray;
        // SAFETY: a live local reference to a long[] (or null, not passed on); this thread's env,
        // no exception pending; GetArrayLength cannot throw.
        if array.is_null() || unsafe { ((**self.0).v1_1.GetArrayLength)(self.0, array) } < len {
            // SAFETY: this thread's env, no exception pending.
            array = unsafe { ((**self.0).v1_1.NewLongArray)(self.0, len) };
            if array.is_null() {
                return Err(NativeError::Jni(jni::errors::Error::JavaException));
            }
        }
        // SAFETY: the array holds at least `len` elements; writing 0..len cannot throw.
        unsafe { ((**self.0).v1_1.SetLongArrayRegion)(self.0, array, 0, len, values.as_ptr()) };
        // SAFETY: JLongArray is a `repr(transparent)` wrapper of a jobject (JObject, itself
        // `repr(transparent)`, plus zero-sized markers); the reference is `into`'s or a new local
        // one of this native call's frame, which the caller returns to Java before the frame ends.
        Ok(unsafe { std::mem::transmute::<jlongArray, JLongArray<'l>>(array) })
    }
}
