//! What Polyfn reads or changes in a serialized `FunctionDef` protocol buffer, without a
//! protobuf library: its signature's argument dtypes and flags, and its name (a restored function
//! must be registered under a name unused in this process). Only the fields on that path are decoded;
//! everything else is copied byte for byte.
//!
//! Path: `FunctionDef.signature` (1) is an `OpDef`, whose `name` is field 1 and whose
//! `input_arg`/`output_arg` (2, 3) are `ArgDef`s with the dtype in `type` (3).

/// One field of a message: its number, wire type and where its bytes are.
struct Field {
    number: u64,
    wire_type: u8,
    /// The whole field, tag included.
    whole: std::ops::Range<usize>,
    /// The payload of a length-delimited field (empty otherwise).
    payload: std::ops::Range<usize>,
}

fn varint(b: &[u8], i: &mut usize) -> Result<u64, String> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*i).ok_or("truncated varint")?;
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint longer than 10 bytes".into())
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The fields of a message, in order; an error for malformed or truncated bytes.
fn fields(b: &[u8]) -> Result<Vec<Field>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let tag = varint(b, &mut i)?;
        let (number, wire_type) = (tag >> 3, (tag & 7) as u8);
        let mut payload = i..i;
        match wire_type {
            0 => {
                varint(b, &mut i)?;
            }
            1 => i += 8,
            5 => i += 4,
            2 => {
                let len = usize::try_from(varint(b, &mut i)?).map_err(|_| "length overflows")?;
                let end = i.checked_add(len).ok_or("length overflows")?;
                payload = i..end;
                i = end;
            }
            w => return Err(format!("unsupported wire type {w} in field {number}")),
        }
        if i > b.len() {
            return Err(format!("field {number} runs past the end of the message"));
        }
        out.push(Field { number, wire_type, whole: start..i, payload });
    }
    Ok(out)
}

/// One decoded field of a message, for checks that walk arbitrary messages.
pub(crate) enum FieldValue<'a> {
    Varint(u64),
    /// A fixed32 or fixed64 field (its value is never needed).
    Fixed,
    /// A length-delimited field's payload.
    Bytes(&'a [u8]),
}

/// The fields of `msg` in order, as field number and value; an error for malformed bytes.
pub(crate) fn decoded(msg: &[u8]) -> Result<Vec<(u64, FieldValue<'_>)>, String> {
    let mut out = Vec::new();
    for f in fields(msg)? {
        let value = match f.wire_type {
            0 => {
                let mut i = f.whole.start;
                varint(msg, &mut i)?; // the tag
                FieldValue::Varint(varint(msg, &mut i)?)
            }
            2 => FieldValue::Bytes(&msg[f.payload]),
            _ => FieldValue::Fixed,
        };
        out.push((f.number, value));
    }
    Ok(out)
}

/// How many varints `packed` (a packed repeated field's payload) holds.
pub(crate) fn packed_varints(packed: &[u8]) -> Result<usize, String> {
    let (mut i, mut n) = (0, 0);
    while i < packed.len() {
        varint(packed, &mut i)?;
        n += 1;
    }
    Ok(n)
}

fn signature(def: &[u8]) -> Result<(Vec<Field>, Field), String> {
    let mut top = fields(def)?;
    let at = top
        .iter()
        .position(|f| f.number == 1 && f.wire_type == 2)
        .ok_or("no signature (field 1)")?;
    let sig = top.remove(at);
    if top.iter().any(|f| f.number == 1) {
        // TensorFlow would merge the copies; what Polyfn read and renamed would not be what runs.
        return Err("a second signature (field 1)".into());
    }
    Ok((top, sig))
}

/// The payload of `msg`'s length-delimited field `number`, refusing a second copy: for a
/// single-valued field TensorFlow's parser keeps the last copy, so reading the first of several
/// would check something other than what TensorFlow runs.
pub(crate) fn single(msg: &[u8], number: u64) -> Result<Option<&[u8]>, String> {
    let mut found = None;
    for f in fields(msg)? {
        if f.number == number {
            if found.is_some() {
                return Err(format!("field {number} appears twice"));
            }
            if f.wire_type != 2 {
                return Err(format!("field {number} is not length-delimited"));
            }
            found = Some(&msg[f.payload]);
        }
    }
    Ok(found)
}

/// The value of `msg`'s varint field `number` (the last copy, as TensorFlow's parser keeps it).
pub(crate) fn varint_field(msg: &[u8], number: u64) -> Result<Option<u64>, String> {
    let mut found = None;
    for f in fields(msg)? {
        if f.number == number {
            if f.wire_type != 0 {
                return Err(format!("field {number} is not a varint"));
            }
            let mut i = f.whole.start;
            varint(msg, &mut i)?;
            found = Some(varint(msg, &mut i)?);
        }
    }
    Ok(found)
}

/// The dtypes of the function's inputs and outputs, from its signature. A function whose
/// arguments are typed by attributes (not concrete) is refused: Polyfn only writes concrete ones.
pub(crate) fn arg_dtypes(def: &[u8]) -> Result<(Vec<i32>, Vec<i32>), String> {
    let (_, sig) = signature(def)?;
    let sig_bytes = &def[sig.payload.clone()];
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    for f in fields(sig_bytes)? {
        let list = match (f.number, f.wire_type) {
            (2, 2) => &mut inputs,
            (3, 2) => &mut outputs,
            _ => continue,
        };
        let arg = &sig_bytes[f.payload.clone()];
        let arg_fields = fields(arg)?;
        if arg_fields.iter().filter(|a| a.number == 3).count() > 1 {
            return Err("an argument with two dtypes".into());
        }
        let dtype = arg_fields
            .into_iter()
            .find(|a| a.number == 3 && a.wire_type == 0)
            .map(|a| {
                let mut i = a.whole.start;
                varint(arg, &mut i)?; // the tag
                varint(arg, &mut i)
            })
            .transpose()?
            .filter(|&t| t > 0 && t < 1000)
            .ok_or("an argument without a concrete dtype")?;
        list.push(dtype as i32);
    }
    Ok((inputs, outputs))
}

/// `def` with its signature's name replaced by `name`.
pub(crate) fn rename(def: &[u8], name: &str) -> Result<Vec<u8>, String> {
    let (top, sig) = signature(def)?;
    let sig_bytes = &def[sig.payload.clone()];
    let mut new_sig = Vec::with_capacity(sig_bytes.len() + name.len());
    put_varint(&mut new_sig, (1 << 3) | 2);
    put_varint(&mut new_sig, name.len() as u64);
    new_sig.extend_from_slice(name.as_bytes());
    for f in fields(sig_bytes)? {
        if !(f.number == 1 && f.wire_type == 2) {
            new_sig.extend_from_slice(&sig_bytes[f.whole]);
        }
    }
    let mut out = Vec::with_capacity(def.len() + name.len());
    put_varint(&mut out, (1 << 3) | 2);
    put_varint(&mut out, new_sig.len() as u64);
    out.extend_from_slice(&new_sig);
    for f in top {
        out.extend_from_slice(&def[f.whole]);
    }
    Ok(out)
}

/// The payloads of the length-delimited fields found by following `path` (field numbers,
/// outermost first) through nested messages: every match at every level, in order.
pub(crate) fn nested<'a>(msg: &'a [u8], path: &[u64]) -> Result<Vec<&'a [u8]>, String> {
    let Some((&first, rest)) = path.split_first() else { return Ok(vec![msg]) };
    let mut out = Vec::new();
    for f in fields(msg)? {
        if f.number == first && f.wire_type == 2 {
            out.extend(nested(&msg[f.payload], rest)?);
        }
    }
    Ok(out)
}

/// The op types and names of a `FunctionDef`'s nodes (`node_def` is field 3, a `NodeDef`'s name
/// field 1 and op field 2).
pub(crate) fn node_ops(def: &[u8]) -> Result<Vec<(String, String)>, String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut out = Vec::new();
    for node in nested(def, &[3])? {
        let op = single(node, 2)?.map(text).unwrap_or_default();
        let name = single(node, 1)?.map(text).unwrap_or_default();
        out.push((op, name));
    }
    Ok(out)
}

/// Whether the function has control outputs (`FunctionDef.control_ret`, field 6).
pub(crate) fn has_control_outputs(def: &[u8]) -> Result<bool, String> {
    Ok(!nested(def, &[6])?.is_empty())
}

/// The names of the nodes that are control outputs (`FunctionDef.control_ret`, field 6: a map
/// whose entries' value, field 2, names a node).
pub(crate) fn control_output_nodes(def: &[u8]) -> Result<Vec<String>, String> {
    nested(def, &[6])?
        .into_iter()
        .map(|entry| Ok(single(entry, 2)?.map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default()))
        .collect()
}

/// The signature's name, if it has one.
pub(crate) fn name(def: &[u8]) -> Result<String, String> {
    let (_, sig) = signature(def)?;
    let sig_bytes = &def[sig.payload.clone()];
    let name = single(sig_bytes, 1)?.ok_or("a signature without a name")?;
    String::from_utf8(name.to_vec()).map_err(|_| "a name that is not UTF-8".into())
}

/// The `FunctionDef`s of a serialized `FunctionDefLibrary` (its `function` field, 1), in order;
/// other fields (gradients) are ignored.
pub(crate) fn library_entries(lib: &[u8]) -> Result<Vec<&[u8]>, String> {
    Ok(fields(lib)?
        .into_iter()
        .filter(|f| f.number == 1 && f.wire_type == 2)
        .map(|f| &lib[f.payload])
        .collect())
}

/// `FunctionDef.arg_attr` (7): map entries whose key (1) is an argument's index and whose value
/// (2) is an `ArgAttrs`, whose `attr` (1) maps a name (1) to an `AttrValue` (2).
const ARG_ATTR: u64 = 7;

/// Appends a length-delimited field to `out`.
pub(crate) fn put_bytes(out: &mut Vec<u8>, number: u64, payload: &[u8]) {
    put_varint(out, (number << 3) | 2);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// An `arg_attr` entry's index (a missing key is 0, protobuf's default; a `uint32`, so TensorFlow's
/// parser keeps the low 32 bits of a larger value) and `ArgAttrs` bytes.
fn arg_attr_entry(entry: &[u8]) -> Result<(u64, &[u8]), String> {
    Ok((varint_field(entry, 1)?.unwrap_or(0) & u64::from(u32::MAX), single(entry, 2)?.unwrap_or_default()))
}

/// Each input argument's recorded shape (`arg_attr`'s `_output_shapes`, which TensorFlow and
/// Polyfn write from the trace) as `TensorShapeProto` bytes, for `count` arguments; None where
/// none is recorded or the list does not hold exactly one. As TensorFlow's parser does, the last
/// entry of a key wins.
pub(crate) fn arg_output_shapes(def: &[u8], count: usize) -> Result<Vec<Option<&[u8]>>, String> {
    let mut shapes = vec![None; count];
    for entry in nested(def, &[ARG_ATTR])? {
        let (index, attrs) = arg_attr_entry(entry)?;
        let Some(slot) = usize::try_from(index).ok().and_then(|i| shapes.get_mut(i)) else { continue };
        for attr in nested(attrs, &[1])? {
            if single(attr, 1)? != Some(b"_output_shapes".as_slice()) {
                continue;
            }
            // AttrValue.list (1) is a ListValue, whose shape (7) is a repeated TensorShapeProto.
            let listed = nested(single(attr, 2)?.unwrap_or_default(), &[1, 7])?;
            *slot = match listed.as_slice() {
                [shape] => Some(*shape),
                _ => None,
            };
        }
    }
    Ok(shapes)
}

/// `def` with attribute `key` set to `value` (a serialized `AttrValue`) on argument `index`,
/// whose other attributes are kept: TensorFlow's parser keeps the last entry of a map key, so the
/// entry appended carries the argument's earlier attributes too.
pub(crate) fn with_arg_attr(def: &[u8], index: u64, key: &str, value: &[u8]) -> Result<Vec<u8>, String> {
    let mut attrs: &[u8] = &[];
    for entry in nested(def, &[ARG_ATTR])? {
        let (i, a) = arg_attr_entry(entry)?;
        if i == index {
            attrs = a;
        }
    }
    let mut attr = Vec::new();
    put_bytes(&mut attr, 1, key.as_bytes());
    put_bytes(&mut attr, 2, value);
    let mut arg_attrs = attrs.to_vec();
    put_bytes(&mut arg_attrs, 1, &attr);
    let mut entry = Vec::new();
    put_varint(&mut entry, 1 << 3);
    put_varint(&mut entry, index);
    put_bytes(&mut entry, 2, &arg_attrs);
    let mut out = Vec::with_capacity(def.len() + entry.len() + 4);
    out.extend_from_slice(def);
    put_bytes(&mut out, ARG_ATTR, &entry);
    Ok(out)
}

/// `def` without attribute `key` on any argument; `None` when no argument has it (nothing to copy).
pub(crate) fn without_arg_attr(def: &[u8], key: &str) -> Result<Option<Vec<u8>>, String> {
    let is_key = |attr: &[u8]| single(attr, 1).map(|k| k == Some(key.as_bytes()));
    let mut found = false;
    for entry in nested(def, &[ARG_ATTR])? {
        for attr in nested(arg_attr_entry(entry)?.1, &[1])? {
            found |= is_key(attr)?;
        }
    }
    if !found {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(def.len());
    for f in fields(def)? {
        if f.number != ARG_ATTR || f.wire_type != 2 {
            out.extend_from_slice(&def[f.whole]);
            continue;
        }
        let (index, attrs) = arg_attr_entry(&def[f.payload])?;
        let mut kept = Vec::with_capacity(attrs.len());
        for a in fields(attrs)? {
            if !(a.number == 1 && a.wire_type == 2 && is_key(&attrs[a.payload.clone()])?) {
                kept.extend_from_slice(&attrs[a.whole]);
            }
        }
        let mut entry = Vec::new();
        put_varint(&mut entry, 1 << 3);
        put_varint(&mut entry, index);
        put_bytes(&mut entry, 2, &kept);
        put_bytes(&mut out, ARG_ATTR, &entry);
    }
    Ok(Some(out))
}

/// A serialized `FunctionDefLibrary` holding `defs` (each a serialized `FunctionDef`).
pub(crate) fn library_of(defs: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for d in defs {
        put_varint(&mut out, (1 << 3) | 2);
        put_varint(&mut out, d.len() as u64);
        out.extend_from_slice(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len_field(number: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, (number << 3) | 2);
        put_varint(&mut out, payload.len() as u64);
        out.extend_from_slice(payload);
        out
    }

    fn arg(name: &str, dtype: u64) -> Vec<u8> {
        let mut a = len_field(1, name.as_bytes());
        put_varint(&mut a, 3 << 3);
        put_varint(&mut a, dtype);
        a
    }

    /// A FunctionDef with a name, one float input, one int32 output, and a node field after it.
    fn def(name: &str) -> Vec<u8> {
        let mut sig = len_field(1, name.as_bytes());
        sig.extend(len_field(2, &arg("x", 1)));
        sig.extend(len_field(3, &arg("y", 3)));
        let mut d = len_field(1, &sig);
        d.extend(len_field(3, b"node bytes kept as they are"));
        d
    }

    #[test]
    fn reads_dtypes_and_renames() {
        let d = def("polyfn_f_1");
        assert_eq!(arg_dtypes(&d), Ok((vec![1], vec![3])));
        assert_eq!(name(&d).unwrap(), "polyfn_f_1");
        let long = "n".repeat(300); // a name whose length needs a two-byte varint
        let r = rename(&d, &long).unwrap();
        assert_eq!(name(&r).unwrap(), long);
        assert_eq!(arg_dtypes(&r), Ok((vec![1], vec![3])));
        assert!(r.windows(27).any(|w| w == b"node bytes kept as they are"));
        assert_eq!(rename(&r, "polyfn_f_1").unwrap(), d);
        let mut node = len_field(1, b"add");
        node.extend(len_field(2, b"AddV2"));
        let mut with_node = len_field(1, &len_field(1, b"f"));
        with_node.extend(len_field(3, &node));
        with_node.extend(len_field(3, &len_field(2, b"Relu")));
        let ops = vec![("AddV2".to_owned(), "add".to_owned()), ("Relu".to_owned(), String::new())];
        assert_eq!(node_ops(&with_node).unwrap(), ops);
        assert!(node_ops(&d).is_err(), "node bytes that are not a NodeDef");
    }

    #[test]
    fn a_library_round_trips() {
        let (a, b) = (def("a"), def("b"));
        let lib = library_of(&[a.clone(), b.clone()]);
        assert_eq!(library_entries(&lib).unwrap(), vec![&a[..], &b[..]]);
        assert!(library_entries(b"").unwrap().is_empty());
        assert!(library_entries(&lib[..lib.len() - 1]).is_err());
    }

    #[test]
    fn damaged_bytes_are_errors() {
        let d = def("f");
        for cut in 0..d.len() {
            let _ = arg_dtypes(&d[..cut]); // never panics
            let _ = rename(&d[..cut], "g");
        }
        assert!(arg_dtypes(&d[..d.len() - 3]).is_err());
        assert!(arg_dtypes(&[0x0b]).is_err()); // a group: wire type 3
        assert!(arg_dtypes(&[0xff; 12]).is_err());
        assert!(arg_dtypes(b"").is_err());
        let mut sig = len_field(1, b"f");
        sig.extend(len_field(2, &len_field(1, b"x"))); // an input with no dtype
        assert_eq!(arg_dtypes(&len_field(1, &sig)), Err("an argument without a concrete dtype".into()));
    }

    /// An argument attribute is added beside the argument's others (a later map entry replaces an
    /// earlier one of the same index when TensorFlow parses it) and removed again, leaving the
    /// others; a definition without it is not copied.
    #[test]
    fn argument_attributes_are_added_and_removed() {
        let attr = |k: &str, v: &[u8]| {
            let mut a = len_field(1, k.as_bytes());
            a.extend(len_field(2, v));
            len_field(1, &a)
        };
        let entry = |i: u64, attrs: &[u8]| {
            let mut e = Vec::new();
            put_varint(&mut e, 1 << 3);
            put_varint(&mut e, i);
            e.extend(len_field(2, attrs));
            len_field(ARG_ATTR, &e)
        };
        let mut d = def("f");
        d.extend(entry(0, &attr("_user_specified_name", b"\x12\x01x")));
        d.extend(entry(1, &attr("_other", b"\x28\x01")));
        let marked = with_arg_attr(&d, 0, "_mark", b"\x28\x01").unwrap();
        let last_of = |def: &[u8], index: u64| {
            let entries = nested(def, &[ARG_ATTR]).unwrap();
            let mine: Vec<_> = entries.iter().map(|e| arg_attr_entry(e).unwrap()).filter(|(i, _)| *i == index).collect();
            let names: Vec<Vec<u8>> =
                nested(mine.last().unwrap().1, &[1]).unwrap().iter().map(|a| single(a, 1).unwrap().unwrap().to_vec()).collect();
            names
        };
        assert_eq!(last_of(&marked, 0), vec![b"_user_specified_name".to_vec(), b"_mark".to_vec()]);
        assert_eq!(last_of(&marked, 1), vec![b"_other".to_vec()]);
        assert_eq!(arg_dtypes(&marked), arg_dtypes(&d));
        let stripped = without_arg_attr(&marked, "_mark").unwrap().unwrap();
        assert_eq!(last_of(&stripped, 0), vec![b"_user_specified_name".to_vec()]);
        assert_eq!(last_of(&stripped, 1), vec![b"_other".to_vec()]);
        assert_eq!(without_arg_attr(&d, "_mark").unwrap(), None);
        // an argument with no attributes yet gets an entry of its own; a missing index is 0
        let bare = with_arg_attr(&def("g"), 0, "_mark", b"\x28\x01").unwrap();
        assert_eq!(last_of(&bare, 0), vec![b"_mark".to_vec()]);
        assert_eq!(without_arg_attr(&bare, "_mark").unwrap().unwrap(), {
            let mut e = def("g");
            e.extend(entry(0, b""));
            e
        });
        for cut in 0..marked.len() {
            let _ = without_arg_attr(&marked[..cut], "_mark"); // never panics
            let _ = with_arg_attr(&marked[..cut], 0, "_mark", b"");
        }
    }

    /// TensorFlow keeps the last copy of a single-valued field; reading the first of two would
    /// check (or rename) something other than what TensorFlow runs, so two copies are refused.
    #[test]
    fn a_second_copy_of_a_single_valued_field_is_refused() {
        let mut node = len_field(1, b"c");
        node.extend(len_field(2, b"NoOp"));
        node.extend(len_field(2, b"Const"));
        let mut twice = len_field(1, &len_field(1, b"f"));
        twice.extend(len_field(3, &node));
        assert_eq!(node_ops(&twice).unwrap_err(), "field 2 appears twice");

        let mut two_signatures = def("f");
        two_signatures.extend(len_field(1, &len_field(1, b"other")));
        assert_eq!(rename(&two_signatures, "g").unwrap_err(), "a second signature (field 1)");
        assert_eq!(name(&two_signatures).unwrap_err(), "a second signature (field 1)");

        let mut two_names = len_field(1, b"f");
        two_names.extend(len_field(1, b"g"));
        assert_eq!(name(&len_field(1, &two_names)).unwrap_err(), "field 1 appears twice");
    }
}
