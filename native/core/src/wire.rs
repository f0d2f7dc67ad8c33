//! PLACEHOLDER (lead): replaced by the core helper's wire.rs at merge.
use crate::{PlaceholderSpec, Shape, Stats};

pub const TAG_TENSOR: i64 = 1;
pub const TAG_LIST: i64 = 2;
pub const TAG_MAP: i64 = 3;
pub const TAG_LITERAL: i64 = 4;
pub const TAG_VARIABLE: i64 = 5;
pub const KIND_TENSOR: i32 = 0;
pub const KIND_LIST: i32 = 1;
pub const KIND_MAP: i32 = 2;
pub const KIND_JAVA: i32 = 3;
pub const KIND_VARIABLE: i32 = 4;
pub const RANK_UNKNOWN: i64 = -1;
pub const DIM_UNKNOWN: i64 = -1;
pub const SHAPE_UNDECLARED: i64 = -2;
pub const STAT_EXACT_HITS: usize = 0;
pub const STAT_INEXACT_HITS: usize = 1;
pub const STAT_MISSES: usize = 2;
pub const STAT_TRACES: usize = 3;
pub const STAT_EVICTIONS: usize = 4;
pub const STAT_TOTAL_TRACE_NANOS: usize = 5;
pub const STAT_LAST_TRACE_NANOS: usize = 6;
pub const STAT_COUNT: usize = 7;
pub const DT_RESOURCE: i32 = 20;
pub const MAX_RANK: usize = 254;

impl Stats {
    pub fn to_wire(&self) -> [i64; STAT_COUNT] {
        [
            self.exact_hits as i64,
            self.inexact_hits as i64,
            self.misses as i64,
            self.traces as i64,
            self.evictions as i64,
            self.total_trace_nanos as i64,
            self.last_trace_nanos as i64,
        ]
    }
}

pub fn encode_placeholder_specs(specs: &[PlaceholderSpec]) -> Vec<i64> {
    let mut flat = vec![specs.len() as i64];
    for spec in specs {
        flat.push(spec.dtype.0 as i64);
        match &spec.shape {
            Shape::Unknown => flat.push(RANK_UNKNOWN),
            Shape::Known(dims) => {
                flat.push(dims.len() as i64);
                flat.extend(dims.iter().map(|d| d.unwrap_or(DIM_UNKNOWN)));
            }
        }
    }
    flat
}

pub fn constants() -> Vec<(&'static str, i64)> {
    vec![
        ("TAG_TENSOR", TAG_TENSOR),
        ("TAG_LIST", TAG_LIST),
        ("TAG_MAP", TAG_MAP),
        ("TAG_LITERAL", TAG_LITERAL),
        ("TAG_VARIABLE", TAG_VARIABLE),
        ("KIND_TENSOR", KIND_TENSOR as i64),
        ("KIND_LIST", KIND_LIST as i64),
        ("KIND_MAP", KIND_MAP as i64),
        ("KIND_JAVA", KIND_JAVA as i64),
        ("KIND_VARIABLE", KIND_VARIABLE as i64),
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
        ("STAT_COUNT", STAT_COUNT as i64),
        ("DT_RESOURCE", DT_RESOURCE as i64),
        ("MAX_RANK", MAX_RANK as i64),
    ]
}

impl crate::ParamKind {
    pub fn from_wire(code: i32) -> Option<Self> {
        Some(match code {
            KIND_TENSOR => Self::Tensor,
            KIND_LIST => Self::List,
            KIND_MAP => Self::Map,
            KIND_JAVA => Self::Java,
            KIND_VARIABLE => Self::Variable,
            _ => return None,
        })
    }
}
