//! Rust `log` records → Java's `System.Logger` ("dev.polyfn"), so users configure Polyfn's logs
//! the way they configure the rest of their application's.
//!
//! The Java class is resolved once at init and held as a global reference (a native thread's
//! class loader may not see it later).
//!
//! The level is asked of the Java logger for each record, not read once at load, so that a level
//! changed at run time (`Logger.getLogger("dev.polyfn").setLevel(...)`, a reloaded logging
//! configuration, another `System.Logger` backend's own rules) takes effect at once. Rust's own
//! filter is therefore left fully open: every `log!` call reaches [`JavaLogger::log`], which costs
//! one call into Java (`isLoggable`, a field read in java.util.logging) and formats the message
//! only if the record is wanted. Log statements belong on rare paths (traces, evictions,
//! warnings), never on the per-call path.
//!
//! A trace is such a path, but a first call pays for every call into Java (one took more time
//! than the rest of Polyfn's bookkeeping of the trace): Java reads the most verbose level its
//! logger wants when the trace begins, and while the trace's native steps run ([`with_level`])
//! records more verbose than that are dropped, and not even formatted, without asking again.

use jni::objects::{JClass, JValue};
use jni::refs::Global;
use jni::vm::JavaVM;
use jni::{jni_sig, jni_str, Env};
use std::cell::Cell;
use std::sync::OnceLock;

struct Bridge {
    vm: JavaVM,
    class: Global<JClass<'static>>,
}

static BRIDGE: OnceLock<Bridge> = OnceLock::new();

static LOGGER: JavaLogger = JavaLogger;

struct JavaLogger;

impl log::Log for JavaLogger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        // Only Polyfn's own records: the jni crate logs its JNI calls at trace level, and
        // forwarding those (made while forwarding a record) would recurse without end. Whether
        // the level is wanted is asked per record in `log`, where the Java logger answers,
        // unless Java said moments ago that it wants none this verbose (see `with_level`).
        BRIDGE.get().is_some()
            && metadata.target().starts_with("polyfn")
            && WANTED.with(|w| w.get().is_none_or(|most| metadata.level() <= most))
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let Some(bridge) = BRIDGE.get() else { return };
        let level = record.level() as i32;
        // Logging must never fail the operation that logs: errors are dropped.
        let _ = bridge.vm.attach_current_thread(|env: &mut Env| -> jni::errors::Result<()> {
            if env.exception_check() {
                // A Java exception is on its way to the caller; calling Java now is not allowed,
                // and clearing it would lose it. The record is dropped.
                return Ok(());
            }
            let wanted = env
                .call_static_method(
                    &bridge.class,
                    jni_str!("isLoggable"),
                    jni_sig!("(I)Z"),
                    &[JValue::Int(level)],
                )
                .and_then(|v| v.z());
            match wanted {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => {
                    // The logger threw (no exception was pending before the call): drop it.
                    env.exception_clear();
                    return Err(e);
                }
            }
            let text = env.new_string(record.args().to_string())?;
            let logged = env.call_static_method(
                &bridge.class,
                jni_str!("log"),
                jni_sig!("(ILjava/lang/String;)V"),
                &[JValue::Int(level), JValue::Object(&text)],
            );
            if logged.is_err() {
                env.exception_clear();
            }
            Ok(())
        });
    }

    fn flush(&self) {}
}

thread_local! {
    /// The most verbose level Java's logger wanted when this thread's current trace began
    /// (`None`: not known, ask per record).
    static WANTED: Cell<Option<log::Level>> = const { Cell::new(None) };
}

/// Runs `work` with records more verbose than `level` (Rust's levels: 1 error … 5 trace)
/// dropped on this thread without a call into Java; the records `level` admits are still asked
/// for one by one, and so is every record when `level` is 0 or less (nothing wanted, or not
/// known). `level` is what Java's logger wanted a moment ago (`NativeLog.wantedLevel`): a
/// trace's native steps read it once, not once per record.
pub fn with_level<T>(level: i32, work: impl FnOnce() -> T) -> T {
    let wanted = match level {
        1 => Some(log::Level::Error),
        2 => Some(log::Level::Warn),
        3 => Some(log::Level::Info),
        4 => Some(log::Level::Debug),
        5.. => Some(log::Level::Trace),
        _ => None,
    };
    struct Restore(Option<log::Level>);
    impl Drop for Restore {
        fn drop(&mut self) {
            WANTED.with(|w| w.set(self.0));
        }
    }
    let _restore = Restore(WANTED.with(|w| w.replace(wanted)));
    work()
}

/// Logs `message` at INFO when `nanos` is longer than the slow-work threshold (Java's
/// `dev.polyfn.slowWorkMillis`, read anew for each piece of work so that it may change while the
/// program runs) and the logger wants INFO records. Rare paths only: a trace, a first run.
/// `threshold` is the threshold in nanoseconds Java read when the trace began (negative: never
/// slow), which spares a call into Java when the work was quick (a first call's usual case);
/// `None` asks Java.
pub fn slow_work(nanos: u64, threshold: Option<i64>, message: impl FnOnce() -> String) {
    if let Some(threshold) = threshold {
        if threshold >= 0 && nanos > threshold as u64 {
            log::info!("{}", message()); // the Java logger is asked whether it wants INFO
        }
        return;
    }
    let Some(bridge) = BRIDGE.get() else { return };
    let slow = bridge.vm.attach_current_thread(|env: &mut Env| -> jni::errors::Result<bool> {
        if env.exception_check() {
            return Ok(false); // as in `log`: no Java call while an exception is on its way
        }
        let asked = env
            .call_static_method(&bridge.class, jni_str!("isSlow"), jni_sig!("(J)Z"), &[JValue::Long(nanos as i64)])
            .and_then(|v| v.z());
        if asked.is_err() {
            env.exception_clear();
        }
        asked
    });
    if slow.unwrap_or(false) {
        log::info!("{}", message());
    }
}

/// Installs the bridge (once per process). The Java logger is not asked anything here: the level
/// is asked per record, and making the logger starts java.util.logging, which a process that
/// logs nothing need not pay for.
pub fn install(env: &mut Env<'_>) -> jni::errors::Result<()> {
    if BRIDGE.get().is_none() {
        let class = env.find_class(jni_str!("dev/polyfn/internal/NativeLog"))?;
        let class = env.new_global_ref(class)?;
        let _ = BRIDGE.set(Bridge { vm: env.get_java_vm()?, class });
        let _ = log::set_logger(&LOGGER);
    }
    // Every record reaches the bridge; the Java logger filters (see the module comment).
    log::set_max_level(log::LevelFilter::Trace);
    Ok(())
}
