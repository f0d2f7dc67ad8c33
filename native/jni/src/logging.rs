//! Rust `log` records → Java's `System.Logger` ("dev.polyfn"), so users configure Polyfn's logs
//! the way they configure the rest of their application's.
//!
//! The Java class is resolved once at init and held as a global reference (a native thread's
//! class loader may not see it later); only levels the Java logger enables cross JNI.

use jni::objects::{JClass, JValue};
use jni::refs::Global;
use jni::vm::JavaVM;
use jni::{jni_sig, jni_str, Env};
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
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let Some(bridge) = BRIDGE.get() else { return };
        let message = record.args().to_string();
        let level = record.level() as i32;
        // Logging must never fail the operation that logs: errors are dropped.
        let _ = bridge.vm.attach_current_thread(|env: &mut Env| -> jni::errors::Result<()> {
            let text = env.new_string(&message)?;
            env.call_static_method(
                &bridge.class,
                jni_str!("log"),
                jni_sig!("(ILjava/lang/String;)V"),
                &[JValue::Int(level), JValue::Object(&text)],
            )?;
            Ok(())
        });
    }

    fn flush(&self) {}
}

/// Installs the bridge (once per process). `max_level` is the most verbose level the Java logger
/// enables: 1 error … 5 trace, 0 off.
pub fn install(env: &mut Env<'_>, max_level: i32) -> jni::errors::Result<()> {
    if BRIDGE.get().is_none() {
        let class = env.find_class(jni_str!("dev/polyfn/internal/NativeLog"))?;
        let class = env.new_global_ref(class)?;
        let _ = BRIDGE.set(Bridge { vm: env.get_java_vm()?, class });
        let _ = log::set_logger(&LOGGER);
    }
    log::set_max_level(match max_level {
        1 => log::LevelFilter::Error,
        2 => log::LevelFilter::Warn,
        3 => log::LevelFilter::Info,
        4 => log::LevelFilter::Debug,
        5 => log::LevelFilter::Trace,
        _ => log::LevelFilter::Off,
    });
    Ok(())
}
