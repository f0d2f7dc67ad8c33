//! The floating-point mode TensorFlow's kernels assume, on the caller's thread.
//!
//! TensorFlow's own threads run every kernel with denormals flushed to zero and rounding to
//! nearest (tsl's thread pool sets both when it starts a thread), so Python's results treat a
//! subnormal float as zero. Polyfn's caller-thread paths (the session path, the single-threaded
//! executor, small kernels Eigen runs inline) run kernels on the JVM's thread, whose mode keeps
//! subnormals: 1 / 1e-38 was 1e38 there and inf on the thread pool, so a function's answer changed
//! when it moved to the session path. A call sets TensorFlow's mode for its duration and restores
//! the thread's own after (Java code requires IEEE subnormals).

/// Sets flush-to-zero, denormals-are-zero and round-to-nearest until dropped, then restores the
/// thread's previous mode.
pub(crate) struct TensorFlowFloatMode {
    #[cfg(target_arch = "x86_64")]
    saved: u32,
    #[cfg(target_arch = "aarch64")]
    saved: u64,
}

#[cfg(target_arch = "x86_64")]
impl TensorFlowFloatMode {
    /// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6); rounding is bits 13-14.
    const FLUSH: u32 = (1 << 15) | (1 << 6);
    const ROUNDING: u32 = 0b11 << 13;

    pub(crate) fn set() -> Self {
        let mut saved: u32 = 0;
        // SAFETY: stmxcsr/ldmxcsr read and write this thread's SSE control register only; the
        // value written differs from the one read in the flush and rounding bits alone.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut saved, options(nostack));
            let mode = (saved | Self::FLUSH) & !Self::ROUNDING;
            std::arch::asm!("ldmxcsr [{}]", in(reg) &mode, options(nostack, readonly));
        }
        TensorFlowFloatMode { saved }
    }
}

#[cfg(target_arch = "x86_64")]
impl Drop for TensorFlowFloatMode {
    fn drop(&mut self) {
        // SAFETY: restores the value read by `set`; the guard lives on the stack of one call, so on its thread.
        unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &self.saved, options(nostack, readonly)) };
    }
}

#[cfg(target_arch = "aarch64")]
impl TensorFlowFloatMode {
    /// FPCR's flush-to-zero (bit 24); rounding is bits 22-23 (0: to nearest).
    const FLUSH: u64 = 1 << 24;
    const ROUNDING: u64 = 0b11 << 22;

    pub(crate) fn set() -> Self {
        let saved: u64;
        // SAFETY: reads and writes this thread's floating-point control register only.
        unsafe {
            std::arch::asm!("mrs {}, fpcr", out(reg) saved, options(nomem, nostack));
            let mode = (saved | Self::FLUSH) & !Self::ROUNDING;
            std::arch::asm!("msr fpcr, {}", in(reg) mode, options(nomem, nostack));
        }
        TensorFlowFloatMode { saved }
    }
}

#[cfg(target_arch = "aarch64")]
impl Drop for TensorFlowFloatMode {
    fn drop(&mut self) {
        // SAFETY: restores the value read by `set` on this same thread.
        unsafe { std::arch::asm!("msr fpcr, {}", in(reg) self.saved, options(nomem, nostack)) };
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
impl TensorFlowFloatMode {
    pub(crate) fn set() -> Self {
        TensorFlowFloatMode {}
    }
}

#[cfg(test)]
mod tests {
    use super::TensorFlowFloatMode;

    #[test]
    fn flushes_subnormals_while_held_and_restores_after() {
        let tiny = std::hint::black_box(1e-38f32); // subnormal
        assert!(1.0 / tiny < f32::INFINITY);
        {
            let _mode = TensorFlowFloatMode::set();
            assert_eq!(1.0 / std::hint::black_box(tiny), f32::INFINITY);
        }
        assert!(1.0 / std::hint::black_box(tiny) < f32::INFINITY);
    }

    #[test]
    fn a_panic_inside_restores_the_mode_too() {
        let tiny = std::hint::black_box(1e-38f32);
        let unwound = std::panic::catch_unwind(|| {
            let _mode = TensorFlowFloatMode::set();
            assert_eq!(1.0 / std::hint::black_box(tiny), f32::INFINITY);
            panic!("a call that panics while the mode is set");
        });
        assert!(unwound.is_err());
        assert!(1.0 / std::hint::black_box(tiny) < f32::INFINITY, "the thread's mode after the unwinding");
    }
}
