//! Locates a TensorFlow runtime for Rust-side tests: `POLYFN_TF_LIB` (a libtensorflow_cc.so.2),
//! else the TensorFlow Java native jar (`POLYFN_TF_NATIVE_JAR`, or the one in ~/.m2), extracted
//! once under target/.

use polyfn_tf::Runtime;

// Used by some test crates only.
#[allow(dead_code)]
pub mod scalar;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn runtime() -> &'static Runtime {
    let lib = std::env::var_os("POLYFN_TF_LIB").map(PathBuf::from).unwrap_or_else(extract_from_jar);
    Runtime::load(&lib).unwrap_or_else(|e| panic!("loading {}: {e}", lib.display()))
}

fn extract_from_jar() -> PathBuf {
    let jar = std::env::var_os("POLYFN_TF_NATIVE_JAR").map(PathBuf::from).unwrap_or_else(find_jar);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tf-runtime");
    let lib = dir.join("libtensorflow_cc.so.2");
    if !lib.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let status = Command::new("unzip")
            .args(["-o", "-j", "-q"])
            .arg(&jar)
            .arg("org/tensorflow/internal/c_api/linux-x86_64/libtensorflow_*")
            .arg("-d")
            .arg(&dir)
            .status()
            .expect("running unzip");
        assert!(status.success(), "extracting TensorFlow from {}", jar.display());
    }
    lib
}

fn find_jar() -> PathBuf {
    let home = std::env::var_os("HOME").expect("HOME");
    let base = Path::new(&home).join(".m2/repository/org/tensorflow/tensorflow-core-native");
    let mut jars: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap_or_else(|_| panic!("no TensorFlow Java native jar under {}: run the Maven build first", base.display()))
        .flatten()
        .flat_map(|v| std::fs::read_dir(v.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("-linux-x86_64.jar"))
        .collect();
    jars.sort();
    jars.pop().expect("TensorFlow Java native jar for linux-x86_64")
}
