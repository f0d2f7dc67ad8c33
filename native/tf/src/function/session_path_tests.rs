//! Tests of the session path's choice of functions (no runtime needed).

use super::*;

fn field(number: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3 | 2) as u8, payload.len() as u8];
    out.extend_from_slice(payload);
    out
}

/// A `FunctionDef` with one node of `op`, its signature flagged stateful or not.
fn def(op: &str, flagged: bool, control_output: bool) -> Vec<u8> {
    let mut sig = field(1, b"f");
    if flagged {
        sig.extend([(IS_STATEFUL << 3) as u8 | 0x80, (IS_STATEFUL >> 4) as u8, 1]);
    }
    let mut out = field(1, &sig);
    let mut node = field(1, b"n");
    node.extend(field(2, op.as_bytes()));
    out.extend(field(3, &node));
    if control_output {
        out.extend(field(6, &[]));
    }
    out
}

#[test]
fn the_blocker_refuses_state_effects_and_stateful_ops_even_unflagged() {
    let stateful: std::collections::HashSet<String> = ["RandomUniform".to_owned()].into();
    let float = [1];
    assert_eq!(blocker(&def("AddV2", false, false), &float, &float, &stateful), None);
    assert!(blocker(&def("AddV2", true, false), &float, &float, &stateful).unwrap().contains("stateful"));
    // A definition whose signature lacks the flag is caught by the registry's.
    assert_eq!(blocker(&def("RandomUniform", false, false), &float, &float, &stateful).unwrap(), "its op n (RandomUniform) is stateful");
    assert!(blocker(&def("AddV2", false, true), &float, &float, &stateful).unwrap().contains("effects"));
    assert!(blocker(&def("AddV2", false, false), &[DT_RESOURCE], &float, &stateful).unwrap().contains("resource"));
    assert!(blocker(b"\xff", &float, &float, &stateful).unwrap().contains("could not be read"));
}
