//! How much stack the calling thread has left. Java asks before a nested trace: native code
//! (TensorFlow's, JavaCPP's) that runs out of stack aborts the JVM, where Java code would throw.

use crate::errors::Result;
use jni::objects::JClass;
use jni::sys::jlong;
use jni::Env;

/// `Native.stackLeft`: the bytes between the caller's frame and the low end of its thread's
/// stack, or -1 when the platform does not tell.
pub fn stack_left<'l>(_env: &mut Env<'l>, _class: JClass<'l>) -> Result<jlong> {
    Ok(left().and_then(|n| jlong::try_from(n).ok()).unwrap_or(-1))
}

#[cfg(target_os = "linux")]
fn left() -> Option<usize> {
    use std::ffi::{c_int, c_ulong, c_void};

    /// glibc's `pthread_attr_t`: 56 bytes on x86_64 and 64 on aarch64; this is at least that.
    #[repr(C, align(8))]
    struct PthreadAttr([u8; 128]);

    extern "C" {
        fn pthread_self() -> c_ulong;
        fn pthread_getattr_np(thread: c_ulong, attr: *mut PthreadAttr) -> c_int;
        fn pthread_attr_getstack(attr: *const PthreadAttr, addr: *mut *mut c_void, size: *mut usize) -> c_int;
        fn pthread_attr_destroy(attr: *mut PthreadAttr) -> c_int;
    }

    let mut attr = PthreadAttr([0; 128]);
    // The buffer is a local of this frame: its address is (about) where the stack is now.
    let here = &attr as *const PthreadAttr as usize;
    let mut low: *mut c_void = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: the buffer is larger than pthread_attr_t and aligned for it; getattr initialises
    // it, getstack reads it, destroy releases it once; low and size are valid out-pointers.
    let ok = unsafe {
        if pthread_getattr_np(pthread_self(), &mut attr) != 0 {
            return None;
        }
        let ok = pthread_attr_getstack(&attr, &mut low, &mut size) == 0;
        pthread_attr_destroy(&mut attr);
        ok
    };
    if ok { here.checked_sub(low as usize) } else { None }
}

#[cfg(not(target_os = "linux"))]
fn left() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_knows_its_stack_and_a_deeper_frame_has_less() {
        fn deeper(n: usize) -> usize {
            let pad = [n as u8; 4096];
            if n == 0 {
                super::left().unwrap() + usize::from(std::hint::black_box(pad)[0])
            } else {
                deeper(n - 1) + usize::from(std::hint::black_box(pad)[1]) * 0
            }
        }
        let here = super::left().unwrap();
        let there = std::thread::Builder::new().stack_size(1 << 20).spawn(|| (super::left().unwrap(), deeper(16))).unwrap().join().unwrap();
        assert!(here > 0);
        // At least what was asked for: glibc may hand a new thread a larger cached stack of a
        // thread that ended (a 2 MiB one, when tests run side by side), so no upper bound.
        assert!(there.0 > 900 * 1024, "a 1 MiB thread starts with at least about 1 MiB: {}", there.0);
        assert!(there.1 + 16 * 4096 <= there.0, "16 frames of 4 KiB use at least 64 KiB: {} then {}", there.0, there.1);
    }
}
