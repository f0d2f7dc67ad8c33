//! Finding the TensorFlow runtime to bind to.
//!
//! In the JVM, TensorFlow Java has already loaded `libtensorflow_cc.so.2`; binding to that very
//! copy (by SONAME, `RTLD_NOLOAD`) keeps one runtime, one op registry and one eager context in the
//! process. Loading a second copy would be a bug, so [`Runtime::attach_loaded`] never loads.
//! Rust tests and benchmarks, which have no JVM, load the library by path with [`Runtime::load`].

use crate::c_api::Api;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The SONAME TensorFlow Java's native jar ships the C API under.
pub const SONAME: &str = "libtensorflow_cc.so.2";

/// Why the TensorFlow runtime could not be bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    /// [`Runtime::attach_loaded`] found no TensorFlow runtime in the process.
    #[error(
        "TensorFlow's {SONAME} is not loaded in this process ({reason}); \
         TensorFlow Java must be initialized before Polyfn"
    )]
    NotLoaded { reason: String },
    /// [`Runtime::load`] could not load the library at `path`.
    #[error("cannot load the TensorFlow runtime {}: {reason}", path.display())]
    Load { path: PathBuf, reason: String },
    /// The library lacks a C API function Polyfn calls (a TensorFlow build too old or too new).
    #[error("the TensorFlow runtime lacks the C API function {symbol} that Polyfn needs")]
    MissingSymbol { symbol: &'static str },
}

/// A bound TensorFlow runtime: the library handle (never closed) and its C API table.
#[derive(Debug)]
pub struct Runtime {
    api: Api,
    version: String,
    /// The `dlopen` handle (as an address: it is only passed back to `dlsym`).
    handle: usize,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

impl Runtime {
    /// The runtime bound earlier by [`Runtime::attach_loaded`] or [`Runtime::load`].
    pub fn get() -> Option<&'static Runtime> {
        RUNTIME.get()
    }

    /// Binds to the `libtensorflow_cc.so.2` already loaded in this process, without loading it.
    pub fn attach_loaded() -> Result<&'static Runtime, RuntimeError> {
        if let Some(rt) = RUNTIME.get() {
            return Ok(rt);
        }
        let handle = open(SONAME, libc::RTLD_NOW | libc::RTLD_NOLOAD)
            .or_else(|first| {
                // A loader that renamed the file still shows it in the memory map.
                let path = mapped_library_path().ok_or(first)?;
                open(&path, libc::RTLD_NOW | libc::RTLD_NOLOAD)
            })
            .map_err(|reason| RuntimeError::NotLoaded { reason })?;
        Self::install(handle)
    }

    /// Loads the runtime from `path` (tests, benchmarks and tools without a JVM).
    pub fn load(path: &Path) -> Result<&'static Runtime, RuntimeError> {
        if let Some(rt) = RUNTIME.get() {
            return Ok(rt);
        }
        let handle = open(&path.to_string_lossy(), libc::RTLD_NOW | libc::RTLD_GLOBAL)
            .map_err(|reason| RuntimeError::Load { path: path.to_owned(), reason })?;
        Self::install(handle)
    }

    fn install(handle: *mut libc::c_void) -> Result<&'static Runtime, RuntimeError> {
        // SAFETY: handle is a live dlopen handle of the TensorFlow C API library.
        let api = unsafe { Api::resolve(handle) }.map_err(|symbol| RuntimeError::MissingSymbol { symbol })?;
        // SAFETY: TF_Version returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr((api.TF_Version)()) }.to_string_lossy().into_owned();
        Ok(RUNTIME.get_or_init(|| Runtime { api, version, handle: handle as usize }))
    }

    /// The C API table.
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The address of an optional symbol of the runtime (one Polyfn can do without), or `None`.
    pub(crate) fn optional_symbol(&self, name: &CStr) -> Option<*mut libc::c_void> {
        // SAFETY: the handle stays open for the life of the process; name is NUL-terminated.
        let sym = unsafe { libc::dlsym(self.handle as *mut libc::c_void, name.as_ptr()) };
        (!sym.is_null()).then_some(sym)
    }

    /// TensorFlow's version string, e.g. `2.18.0`.
    pub fn version(&self) -> &str {
        &self.version
    }
}

/// `dlopen`s `name`, or returns `dlerror`'s message.
fn open(name: &str, flags: libc::c_int) -> Result<*mut libc::c_void, String> {
    let c = CString::new(name).map_err(|_| format!("library path {name:?} contains a NUL byte"))?;
    // SAFETY: c is NUL-terminated; dlopen has no other preconditions.
    let handle = unsafe { libc::dlopen(c.as_ptr(), flags) };
    if handle.is_null() {
        // SAFETY: dlerror has no preconditions.
        let err = unsafe { libc::dlerror() };
        let msg = if err.is_null() {
            "unknown dlopen error".to_owned()
        } else {
            // SAFETY: a non-null dlerror result is a NUL-terminated thread-local string, copied
            // before any other dl* call on this thread can replace it.
            unsafe { CStr::from_ptr(err) }.to_string_lossy().into_owned()
        };
        return Err(msg);
    }
    Ok(handle)
}

fn mapped_library_path() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with(SONAME))
        .map(str::to_owned)
}
