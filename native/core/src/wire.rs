//! The wire contract with Java: every number that crosses the JNI boundary, in one place.
//!
//! The Java side keeps the same table in `Wire.java`; [`constants`] lists this side's table by
//! name so a test can compare the two and fail when they drift apart.
//!
//! ## Facts: one call's arguments, as Java writes them
//!
//! Java walks the arguments in parameter order (then the captures) and writes one value each
//! into a flat `i64` buffer:
//!
//! | tag | layout |
//! |---|---|
//! | [`TAG_TENSOR`] | `[1, dtype, rank, d0, ..., d(rank-1)]` (`rank =` [`RANK_UNKNOWN`]: unknown rank; `d =` [`DIM_UNKNOWN`]: unknown dim) |
//! | [`TAG_LIST`] | `[2, len, <element facts>...]` |
//! | [`TAG_MAP`] | `[3, len, (key_id, <value facts>)...]` (keys from a [`crate::StringTable`], any order) |
//! | [`TAG_LITERAL`] | `[4, literal_id]` (from a [`crate::LiteralTable`]) |
//! | [`TAG_VARIABLE`] | `[5, dtype, rank, d0, ..., d(rank-1), alias]` (which distinct variable of the call it is; `rank =` [`RANK_UNKNOWN`] and `d =` [`DIM_UNKNOWN`] as for a tensor: a restored Python variable's declared shape) |
//! | [`TAG_COMPOSITE`] | `[7, name_id, dtype, rank, d0, ..., d(rank-1), metadata_literal_id or -1, len, (name_id, <component tensor facts>)...]` (rank [`RANK_UNKNOWN`]: no dims; each component a [`TAG_TENSOR`] value, the spec the kind wants in the signature, fed as one tensor) |
//! | [`TAG_RECORD`] | `[6, class_id, len, (name_id, <component facts>)...]` (a record's class and component names from the [`crate::StringTable`], components in declaration order) |
//!
//! ## Placeholder specs: the graph inputs Java creates before tracing
//!
//! [`encode_placeholder_specs`](crate::placeholder::encode_placeholder_specs) writes `[count, (dtype, rank, d0, ..., d(rank-1))...]`:
//!
//! | field | meaning |
//! |---|---|
//! | `count` | number of placeholders that follow |
//! | `dtype` | TensorFlow `TF_DataType` code |
//! | `rank` | number of dims that follow, or [`RANK_UNKNOWN`] (then no dims follow) |
//! | `d_i` | a dim, or [`DIM_UNKNOWN`] |
//!
//! A declared parameter's specs are followed by the traced static shapes of its composites, in
//! flatten order ([`encode_composite_shapes`](crate::placeholder::encode_composite_shapes)):
//! `[count, (rank, d0, ..., d(rank-1))...]`, what Java builds each composite's view with.
//!
//! ## Statistics
//!
//! [`Stats::to_wire`](crate::polymorphic::Stats::to_wire) gives an array indexed by the `STAT_*`
//! constants, [`STAT_COUNT`] long.


/// Facts tag of a tensor argument.
pub const TAG_TENSOR: i64 = 1;
/// Facts tag of a list argument.
pub const TAG_LIST: i64 = 2;
/// Facts tag of a map argument (string keys).
pub const TAG_MAP: i64 = 3;
/// Facts tag of any other Java value (dispatched on by `equals`/`hashCode`).
pub const TAG_LITERAL: i64 = 4;
/// Facts tag of a resource variable.
pub const TAG_VARIABLE: i64 = 5;
/// Facts tag of a record (a Java record's components, by name, in declaration order).
pub const TAG_RECORD: i64 = 6;
/// Facts tag of a composite tensor (sparse, ragged, a user's kind).
pub const TAG_COMPOSITE: i64 = 7;

/// Parameter kind code of a tensor parameter.
pub const KIND_TENSOR: i32 = 0;
/// Parameter kind code of a list parameter.
pub const KIND_LIST: i32 = 1;
/// Parameter kind code of a map parameter.
pub const KIND_MAP: i32 = 2;
/// Parameter kind code of a Java-value parameter.
pub const KIND_JAVA: i32 = 3;
/// Parameter kind code of a variable parameter.
pub const KIND_VARIABLE: i32 = 4;
/// Parameter kind code of a nested parameter (any nest of lists, maps and records).
pub const KIND_NEST: i32 = 5;

/// A rank that is not known (facts, placeholder specs, declared constraints).
pub const RANK_UNKNOWN: i64 = -1;
/// A dimension that is not known.
pub const DIM_UNKNOWN: i64 = -1;
/// The rank Java passes for a declared constraint that says nothing about the shape.
pub const SHAPE_UNDECLARED: i64 = -2;

/// Index of [`Stats::exact_hits`](crate::polymorphic::Stats::exact_hits) in
/// [`Stats::to_wire`](crate::polymorphic::Stats::to_wire).
pub const STAT_EXACT_HITS: usize = 0;
/// Index of [`Stats::inexact_hits`](crate::polymorphic::Stats::inexact_hits).
pub const STAT_INEXACT_HITS: usize = 1;
/// Index of [`Stats::misses`](crate::polymorphic::Stats::misses).
pub const STAT_MISSES: usize = 2;
/// Index of [`Stats::traces`](crate::polymorphic::Stats::traces).
pub const STAT_TRACES: usize = 3;
/// Index of [`Stats::evictions`](crate::polymorphic::Stats::evictions).
pub const STAT_EVICTIONS: usize = 4;
/// Index of [`Stats::total_trace_nanos`](crate::polymorphic::Stats::total_trace_nanos).
pub const STAT_TOTAL_TRACE_NANOS: usize = 5;
/// Index of [`Stats::last_trace_nanos`](crate::polymorphic::Stats::last_trace_nanos).
pub const STAT_LAST_TRACE_NANOS: usize = 6;
/// Index of [`Stats::total_first_run_nanos`](crate::polymorphic::Stats::total_first_run_nanos).
pub const STAT_TOTAL_FIRST_RUN_NANOS: usize = 7;
/// Length of the statistics array.
pub const STAT_COUNT: usize = 8;

/// TensorFlow's `DT_RESOURCE` dtype code (a variable's handle).
pub const DT_RESOURCE: i32 = 20;
/// TensorFlow's limit on the rank of a `TensorShape`; a larger rank aborts its C++ code.
pub const MAX_RANK: usize = 254;
/// How deep the facts of one argument may nest (lists, maps, records, nests within each other):
/// facts come from another language, so a corrupt buffer must not blow the stack.
pub const NEST_MAX_DEPTH: usize = 64;
/// How deep a JSON document Polyfn reads may nest: a type is written two levels per level of
/// nesting (`{"kind": "list", "elements": [...]}`), under a few levels of document, so a type as
/// deep as [`NEST_MAX_DEPTH`] allows must fit; deeper text is refused before it is parsed.
pub const JSON_MAX_DEPTH: usize = 2 * NEST_MAX_DEPTH + 16;
/// A call's result starts with one long: the outputs key in its low 32 bits and, above this
/// shift, how many output addresses follow it (so Java never reads past what the call wrote).
/// After the addresses, each output in turn is described by its dtype code, its rank and its
/// dims: `[head, address × n, (dtype, rank, dim × rank) × n]`. Java makes its tensor objects from
/// that, with no call back into TensorFlow per output.
pub const RESULT_COUNT_SHIFT: u32 = 32;

/// Every constant of the wire contract by name, for the test that compares it with Java's.
pub fn constants() -> Vec<(&'static str, i64)> {
    vec![
        ("TAG_TENSOR", TAG_TENSOR),
        ("TAG_LIST", TAG_LIST),
        ("TAG_MAP", TAG_MAP),
        ("TAG_LITERAL", TAG_LITERAL),
        ("TAG_VARIABLE", TAG_VARIABLE),
        ("TAG_RECORD", TAG_RECORD),
        ("TAG_COMPOSITE", TAG_COMPOSITE),
        ("KIND_TENSOR", KIND_TENSOR as i64),
        ("KIND_LIST", KIND_LIST as i64),
        ("KIND_MAP", KIND_MAP as i64),
        ("KIND_JAVA", KIND_JAVA as i64),
        ("KIND_VARIABLE", KIND_VARIABLE as i64),
        ("KIND_NEST", KIND_NEST as i64),
        ("RANK_UNKNOWN", RANK_UNKNOWN),
        ("DIM_UNKNOWN", DIM_UNKNOWN),
        ("SHAPE_UNDECLARED", SHAPE_UNDECLARED),
        ("STAT_EXACT_HITS", STAT_EXACT_HITS as i64),
        ("STAT_INEXACT_HITS", STAT_INEXACT_HITS as i64),
        ("STAT_MISSES", STAT_MISSES as i64),
        ("STAT_TRACES", STAT_TRACES as i64),
        ("STAT_EVICTIONS", STAT_EVICTIONS as i64),
        ("STAT_TOTAL_TRACE_NANOS", STAT_TOTAL_TRACE_NANOS as i64),
        ("STAT_LAST_TRACE_NANOS", STAT_LAST_TRACE_NANOS as i64),
        ("STAT_TOTAL_FIRST_RUN_NANOS", STAT_TOTAL_FIRST_RUN_NANOS as i64),
        ("STAT_COUNT", STAT_COUNT as i64),
        ("DT_RESOURCE", DT_RESOURCE as i64),
        ("MAX_RANK", MAX_RANK as i64),
        ("RESULT_COUNT_SHIFT", RESULT_COUNT_SHIFT as i64),
        ("NEST_MAX_DEPTH", NEST_MAX_DEPTH as i64),
        ("JSON_MAX_DEPTH", JSON_MAX_DEPTH as i64),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn constants_are_listed_once_each_with_their_values() {
        let all = constants();
        let names: HashSet<&str> = all.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.len(), all.len(), "no name twice");
        let get = |n: &str| all.iter().find(|(m, _)| *m == n).map(|(_, v)| *v);
        assert_eq!(get("TAG_VARIABLE"), Some(5));
        assert_eq!(get("KIND_JAVA"), Some(3));
        assert_eq!(get("SHAPE_UNDECLARED"), Some(-2));
        assert_eq!(get("STAT_COUNT"), Some(8));
        assert_eq!(get("DT_RESOURCE"), Some(20));
        assert_eq!(get("MAX_RANK"), Some(254));
        assert_eq!(get("RESULT_COUNT_SHIFT"), Some(32));
        assert_eq!(get("NEST_MAX_DEPTH"), Some(64));
        assert_eq!(get("JSON_MAX_DEPTH"), Some(144));
        assert_eq!(all.len(), 30);
    }

    #[test]
    fn unknown_ranks_and_dims_are_negative() {
        assert_eq!((RANK_UNKNOWN, DIM_UNKNOWN, SHAPE_UNDECLARED), (-1, -1, -2));
    }
}
