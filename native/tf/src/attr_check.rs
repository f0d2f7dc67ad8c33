//! Checks of the attribute values of a restored `FunctionDef`'s nodes, before TensorFlow sees
//! them: TensorFlow trusts a definition's tensors and shapes and aborts the process on some lies
//! (`Check failed: size >= 0` for a negative dimension in a `Const`'s value, `Check failed:
//! dtype() == expected_dtype` for an INT32 value in a FLOAT `Const`). Checked here: every shape
//! (at most 254 dimensions, each a size or -1, an element count within 64 bits), every tensor (a
//! known dtype, a fully defined shape, contents that match it, at most 2 GiB once TensorFlow has
//! filled it, and at most 2 GiB for all of one definition's tensors: [`TensorBudget`]), each
//! attribute's kind against its op's definition, and a constant's value against its declared dtype.
//!
//! Field numbers are those of tensorflow/core/framework/attr_value.proto, tensor.proto and
//! tensor_shape.proto.

use crate::function_def_proto::{decoded, packed_varints, FieldValue};

/// TensorFlow's `TensorShape::MaxDimensions()`.
const MAX_RANK: usize = 254;
/// The most bytes a tensor in a definition may describe: a constant whose few values TensorFlow
/// repeats to fill a huge shape would otherwise allocate it at the first call.
const MAX_TENSOR_BYTES: u128 = 1 << 31;
/// The most bytes all tensors of one definition may describe together: without it, many
/// constants each under [`MAX_TENSOR_BYTES`] would add up to any size (a serialized definition
/// cannot itself exceed 2 GiB, so only values TensorFlow repeats to fill a shape get near it).
const MAX_DEFINITION_TENSOR_BYTES: u128 = 1 << 31;
/// The bytes TensorFlow keeps per element of a string tensor (a `tstring`) besides its text.
const STRING_ELEMENT_BYTES: u128 = 24;
/// An estimate of the bytes per element of a resource or variant tensor (a handle or a boxed
/// value), which a definition's tensors hardly ever hold.
const OPAQUE_ELEMENT_BYTES: u128 = 64;
/// Function-valued attributes nest attribute values; deeper nesting is refused.
const MAX_NESTING: u32 = 16;

const DT_STRING: u64 = 7;
const DT_RESOURCE: u64 = 20;
const DT_VARIANT: u64 = 21;

/// The bytes one definition's tensors will make TensorFlow allocate, counted against
/// [`MAX_DEFINITION_TENSOR_BYTES`] as its nodes are checked.
#[derive(Debug, Default)]
pub(crate) struct TensorBudget(u128);

impl TensorBudget {
    fn spend(&mut self, bytes: u128) -> Result<(), String> {
        self.0 = self.0.saturating_add(bytes);
        if self.0 > MAX_DEFINITION_TENSOR_BYTES {
            return Err(format!(
                "tensors taking {} bytes together, more than the {MAX_DEFINITION_TENSOR_BYTES} bytes Polyfn restores per function",
                self.0
            ));
        }
        Ok(())
    }
}

/// Checks the attribute value `value` (a serialized `AttrValue`) of an attribute whose op
/// definition gives it type `expected` (`"tensor"`, `"list(shape)"`...; `None` when the op does
/// not define it). Returns the `AttrValue` field that is set (0 for none).
pub(crate) fn check_value(value: &[u8], expected: Option<&str>, budget: &mut TensorBudget) -> Result<u64, String> {
    let set = check_nested(value, 0, budget)?;
    // An AttrValue is a oneof, whose member is written even when it holds its default value: a
    // well-formed value always has the field its kind needs.
    let wanted = match expected {
        Some("string") => Some(2),
        Some("int") => Some(3),
        Some("float") => Some(4),
        Some("bool") => Some(5),
        Some("tensor") => Some(8),
        Some("shape") => Some(7),
        Some("type") => Some(6),
        Some("func") => Some(10),
        Some(t) if t.starts_with("list(") => Some(1),
        _ => None,
    };
    // 9 is a placeholder (`$T`), replaced by the function's own attribute when it is instantiated.
    if let Some(w) = wanted {
        if set != w && set != 9 {
            return Err(format!("a {} attribute holding {}", expected.unwrap_or_default(), kind_name(set)));
        }
    }
    Ok(set)
}

fn kind_name(field: u64) -> &'static str {
    match field {
        0 => "no value",
        1 => "a list",
        2 => "a string",
        3 => "an int",
        4 => "a float",
        5 => "a bool",
        6 => "a type",
        7 => "a shape",
        8 => "a tensor",
        9 => "a placeholder",
        10 => "a function",
        _ => "an unknown field",
    }
}

fn check_nested(value: &[u8], depth: u32, budget: &mut TensorBudget) -> Result<u64, String> {
    if depth > MAX_NESTING {
        return Err(format!("attribute values nested deeper than {MAX_NESTING} levels"));
    }
    let mut set = 0;
    for (number, v) in decoded(value)? {
        set = number;
        match (number, v) {
            (1, FieldValue::Bytes(list)) => {
                // ListValue: shape (7), tensor (8), func (9) are checked like single values.
                for (n, item) in decoded(list)? {
                    match (n, item) {
                        (7, FieldValue::Bytes(s)) => drop(check_shape(s, false)?),
                        (8, FieldValue::Bytes(t)) => budget.spend(checked_tensor(t)?.1)?,
                        (9, FieldValue::Bytes(f)) => check_func(f, depth, budget)?,
                        (7..=9, _) => return Err("a malformed list value".into()),
                        _ => {}
                    }
                }
            }
            (7, FieldValue::Bytes(s)) => drop(check_shape(s, false)?),
            (8, FieldValue::Bytes(t)) => budget.spend(checked_tensor(t)?.1)?,
            (10, FieldValue::Bytes(f)) => check_func(f, depth, budget)?,
            (1 | 7 | 8 | 10, _) => return Err(format!("a malformed {}", kind_name(number))),
            _ => {}
        }
    }
    Ok(set)
}

/// A `NameAttrList` (function name (1), attributes (2) as map entries: key 1, value 2).
fn check_func(f: &[u8], depth: u32, budget: &mut TensorBudget) -> Result<(), String> {
    for (n, entry) in decoded(f)? {
        if let (2, FieldValue::Bytes(entry)) = (n, entry) {
            for (k, v) in decoded(entry)? {
                if let (2, FieldValue::Bytes(v)) = (k, v) {
                    check_nested(v, depth + 1, budget)?;
                }
            }
        }
    }
    Ok(())
}

/// Checks a `TensorShapeProto` (dim (2): size (1); unknown_rank (3)); `fully_defined` for a
/// tensor's own shape. Returns the number of elements of its known dimensions.
pub(crate) fn check_shape(shape: &[u8], fully_defined: bool) -> Result<u128, String> {
    let mut dims = Vec::new();
    let mut unknown_rank = false;
    for (n, v) in decoded(shape)? {
        match (n, v) {
            (2, FieldValue::Bytes(dim)) => {
                let mut size = 0i64;
                for (f, d) in decoded(dim)? {
                    if let (1, FieldValue::Varint(s)) = (f, d) {
                        size = s as i64; // int64: two's complement in a varint
                    }
                }
                dims.push(size);
            }
            (3, FieldValue::Varint(b)) => unknown_rank = b != 0,
            (2 | 3, _) => return Err("a malformed shape".into()),
            _ => {}
        }
    }
    if dims.len() > MAX_RANK {
        return Err(format!("a shape of {} dimensions, more than TensorFlow's {MAX_RANK}", dims.len()));
    }
    if unknown_rank && (fully_defined || !dims.is_empty()) {
        return Err(if fully_defined { "a tensor of unknown rank".into() } else { "a shape of unknown rank with dimensions".into() });
    }
    let mut elements: u128 = 1;
    for &d in &dims {
        if d < -1 || (fully_defined && d < 0) {
            return Err(format!("a shape with dimension {d} ({})", if fully_defined { "a tensor's sizes are >= 0" } else { "expected -1 or a size >= 0" }));
        }
        if d >= 0 {
            elements = elements.saturating_mul(d as u128);
            if elements > i64::MAX as u128 {
                return Err(format!("a shape of more than 2^63 elements ({dims:?})"));
            }
        }
    }
    Ok(elements)
}

/// The size of one element of `dtype` in `tensor_content`, for the fixed-size types.
fn element_size(dtype: u64) -> Option<u128> {
    Some(match dtype {
        4 | 6 | 10 | 11 | 12 | 24 | 25 => 1,
        5 | 14 | 15 | 16 | 17 | 19 => 2,
        1 | 3 | 13 | 22 => 4,
        2 | 8 | 9 | 23 => 8,
        18 => 16,
        _ => return None,
    })
}

/// Checks a `TensorProto`: dtype (1), tensor_shape (2), tensor_content (4), typed values
/// (5 to 18). Returns its dtype.
pub(crate) fn check_tensor(t: &[u8]) -> Result<u64, String> {
    checked_tensor(t).map(|(dtype, _)| dtype)
}

/// [`check_tensor`], also returning the bytes TensorFlow allocates for the tensor: it makes a
/// tensor of the declared shape and repeats the last value given to fill it, so a few bytes of
/// definition can stand for any size (a string element costs its text plus a `tstring`).
fn checked_tensor(t: &[u8]) -> Result<(u64, u128), String> {
    let (mut dtype, mut shape, mut content, mut values) = (0, &[][..], &[][..], 0u128);
    let (mut text, mut last_text) = (0u128, 0u128);
    for (n, v) in decoded(t)? {
        match (n, v) {
            (1, FieldValue::Varint(d)) => dtype = d,
            (2, FieldValue::Bytes(s)) => shape = s,
            (4, FieldValue::Bytes(c)) => content = c,
            (1 | 2 | 4, _) => return Err("a malformed tensor".into()),
            (8, FieldValue::Bytes(b)) => {
                // string_val: one value each
                values += 1;
                text += b.len() as u128;
                last_text = b.len() as u128;
            }
            (5..=18, v) => values += value_count(n, &v)?,
            _ => {}
        }
    }
    if !(1..=40).contains(&dtype) {
        return Err(format!("a tensor of dtype {dtype}, which is no TensorFlow dtype a tensor can have"));
    }
    let elements = check_shape(shape, true).map_err(|e| format!("a tensor with {e}"))?;
    if matches!(dtype, 8 | 18) {
        values = values.div_ceil(2); // a complex element is two values
    }
    let size = element_size(dtype);
    if !content.is_empty() {
        if let Some(s) = size {
            if content.len() as u128 != elements * s {
                return Err(format!("a tensor of {elements} elements with {} bytes of content, expected {}", content.len(), elements * s));
            }
        }
    } else if values > elements {
        return Err(format!("a tensor of {elements} elements holding {values} values"));
    }
    let bytes = match (size, dtype) {
        (Some(s), _) => elements * s,
        // Elements past the values given repeat the last one (empty strings without any).
        (None, DT_STRING) => elements * STRING_ELEMENT_BYTES + text + elements.saturating_sub(values) * last_text,
        (None, _) => elements * OPAQUE_ELEMENT_BYTES,
    };
    if bytes > MAX_TENSOR_BYTES {
        return Err(format!("a tensor of {elements} elements taking {bytes} bytes, more than the {MAX_TENSOR_BYTES} bytes Polyfn restores"));
    }
    Ok((dtype, bytes))
}

/// How many values one typed field of a `TensorProto` holds (packed or not).
fn value_count(number: u64, v: &FieldValue<'_>) -> Result<u128, String> {
    Ok(match v {
        FieldValue::Bytes(b) => match number {
            5 | 9 => b.len() as u128 / 4,
            6 | 12 => b.len() as u128 / 8,
            7 | 10 | 11 | 13 | 16 | 17 => packed_varints(b)? as u128,
            18 => b.len() as u128, // float8_val: one byte each
            _ => 1,                // string_val, resource_handle_val, variant_val: one message each
        },
        _ => 1,
    })
}

/// A `Const`'s value must have the dtype the node declares, and a dtype a constant can hold.
pub(crate) fn check_const(value: Option<&[u8]>, dtype: Option<&[u8]>) -> Result<(), String> {
    let (Some(value), Some(dtype)) = (value, dtype) else { return Ok(()) };
    let declared = decoded(dtype)?.into_iter().find_map(|(n, v)| match (n, v) {
        (6, FieldValue::Varint(t)) => Some(t),
        _ => None,
    });
    let tensor = decoded(value)?.into_iter().find_map(|(n, v)| match (n, v) {
        (8, FieldValue::Bytes(t)) => Some(t),
        _ => None,
    });
    let (Some(declared), Some(tensor)) = (declared, tensor) else { return Ok(()) };
    let actual = check_tensor(tensor)?;
    if actual != declared {
        return Err(format!("a constant declared of dtype {declared} whose value has dtype {actual}"));
    }
    if matches!(actual, DT_RESOURCE | DT_VARIANT) {
        return Err("a constant resource or variant, which no graph can hold".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn bytes_field(number: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, (number << 3) | 2);
        varint(&mut out, payload.len() as u64);
        out.extend_from_slice(payload);
        out
    }

    fn varint_field(number: u64, v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, number << 3);
        varint(&mut out, v);
        out
    }

    fn shape(dims: &[i64]) -> Vec<u8> {
        dims.iter().flat_map(|&d| bytes_field(2, &varint_field(1, d as u64))).collect()
    }

    fn tensor(dtype: u64, dims: &[i64], content: &[u8]) -> Vec<u8> {
        let mut t = varint_field(1, dtype);
        t.extend(bytes_field(2, &shape(dims)));
        if !content.is_empty() {
            t.extend(bytes_field(4, content));
        }
        t
    }

    #[test]
    fn shapes() {
        assert_eq!(check_shape(&shape(&[2, 3]), true), Ok(6));
        assert_eq!(check_shape(&shape(&[-1, 3]), false), Ok(3));
        assert!(check_shape(&shape(&[-1, 3]), true).is_err());
        assert!(check_shape(&shape(&[-5, 3]), false).unwrap_err().contains("-5"));
        assert!(check_shape(&shape(&[1 << 62, 4]), false).unwrap_err().contains("2^63"));
        assert!(check_shape(&shape(&[1; 300]), false).unwrap_err().contains("300"));
        let mut unknown_with_dims = shape(&[2]);
        unknown_with_dims.extend(varint_field(3, 1));
        assert!(check_shape(&unknown_with_dims, false).is_err());
    }

    #[test]
    fn tensors() {
        assert_eq!(check_tensor(&tensor(1, &[2], &[0; 8])), Ok(1));
        assert!(check_tensor(&tensor(1, &[2], &[0; 7])).unwrap_err().contains("7 bytes"));
        assert!(check_tensor(&tensor(1, &[-3], &[])).unwrap_err().contains("-3"));
        assert!(check_tensor(&tensor(0, &[], &[])).is_err());
        assert!(check_tensor(&tensor(1, &[1 << 40], &[])).unwrap_err().contains("bytes Polyfn restores"));
        let mut three_floats = tensor(1, &[2], &[]);
        three_floats.extend(bytes_field(5, &[0; 12]));
        assert!(check_tensor(&three_floats).unwrap_err().contains("3 values"));
    }

    /// A string tensor whose one long value TensorFlow repeats over a large shape: a 1 MiB
    /// definition would stand for a terabyte (each element counted as one byte before).
    #[test]
    fn a_string_value_repeated_to_fill_its_shape_counts_every_copy() {
        let mut fill = tensor(DT_STRING, &[1_000_000], &[]);
        fill.extend(bytes_field(8, &vec![b'a'; 1 << 20]));
        let e = check_tensor(&fill).unwrap_err();
        assert!(e.contains("bytes Polyfn restores"), "{e}");
        let mut words = tensor(DT_STRING, &[3], &[]);
        for w in [&b"ab"[..], b"cde", b"f"] {
            words.extend(bytes_field(8, w));
        }
        assert_eq!(checked_tensor(&words), Ok((DT_STRING, 3 * 24 + 6)));
        let mut repeated = tensor(DT_STRING, &[4], &[]);
        repeated.extend(bytes_field(8, b"xyz"));
        assert_eq!(checked_tensor(&repeated), Ok((DT_STRING, 4 * 24 + 3 + 3 * 3)));
        assert_eq!(checked_tensor(&tensor(DT_STRING, &[5], &[])), Ok((DT_STRING, 5 * 24)));
    }

    /// Constants each within the per-tensor limit cannot add up past the definition's.
    #[test]
    fn a_definitions_tensors_share_one_budget() {
        let attr = |t: Vec<u8>| bytes_field(8, &t); // AttrValue.tensor
        let gib = tensor(1, &[1 << 28], &[]); // 2^28 floats: 1 GiB, filled from no values
        let mut budget = TensorBudget::default();
        assert_eq!(check_value(&attr(gib.clone()), Some("tensor"), &mut budget), Ok(8));
        assert_eq!(check_value(&attr(gib.clone()), Some("tensor"), &mut budget), Ok(8));
        let e = check_value(&attr(tensor(1, &[1], &[])), Some("tensor"), &mut budget).unwrap_err();
        assert!(e.contains("per function"), "{e}");
        // Another definition has a budget of its own.
        assert_eq!(check_value(&attr(gib), Some("tensor"), &mut TensorBudget::default()), Ok(8));
    }

    #[test]
    fn constants_and_kinds() {
        let value = bytes_field(8, &tensor(3, &[], &[0; 4]));
        let float = varint_field(6, 1);
        assert!(check_const(Some(&value), Some(&float)).unwrap_err().contains("dtype 1 whose value has dtype 3"));
        assert_eq!(check_const(Some(&value), Some(&varint_field(6, 3))), Ok(()));
        assert_eq!(check_value(&value, Some("tensor"), &mut TensorBudget::default()), Ok(8));
        assert!(check_value(&varint_field(2, 0), Some("tensor"), &mut TensorBudget::default()).is_err());
        assert!(check_value(&bytes_field(2, b"x"), Some("bool"), &mut TensorBudget::default()).unwrap_err().contains("a bool attribute holding a string"));
        assert_eq!(check_value(&varint_field(5, 0), Some("bool"), &mut TensorBudget::default()), Ok(5));
        assert!(check_value(&value, Some("list(shape)"), &mut TensorBudget::default()).is_err());
        let list = bytes_field(1, &bytes_field(7, &shape(&[-7])));
        assert!(check_value(&list, Some("list(shape)"), &mut TensorBudget::default()).unwrap_err().contains("-7"));
    }
}
