//! A variable read in a traced graph gets the variable's static shape once the resource handle
//! carries shape-and-type data.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::graph_ops::static_shape;
use polyfn_tf::tensor::{DT_FLOAT, DT_RESOURCE};
use polyfn_tf::{set_handle_shape, Code};

#[test]
fn a_read_of_a_handle_with_shape_data_has_the_static_shape() {
    let rt = support::runtime();
    for dims in [Some(vec![2i64, 3]), Some(vec![]), Some(vec![-1, 4]), None] {
        let mut g = Graph::new(rt);
        let handle = g.placeholder(DT_RESOURCE, Some(&[])).unwrap();
        unsafe { set_handle_shape(rt, g.raw(), handle, DT_FLOAT, dims.as_deref()) }.unwrap();
        let value = g.read_variable(handle, DT_FLOAT).unwrap();
        assert_eq!(unsafe { static_shape(rt, g.raw(), value) }.unwrap(), dims, "{dims:?}");
        // Shapes keep propagating through ordinary ops.
        let doubled = g.binary("AddV2", value, value).unwrap();
        assert_eq!(unsafe { static_shape(rt, g.raw(), doubled) }.unwrap(), dims, "{dims:?}");
    }
}

#[test]
fn without_shape_data_the_read_has_unknown_rank() {
    let rt = support::runtime();
    let mut g = Graph::new(rt);
    let handle = g.placeholder(DT_RESOURCE, Some(&[])).unwrap();
    let value = g.read_variable(handle, DT_FLOAT).unwrap();
    assert_eq!(unsafe { static_shape(rt, g.raw(), value) }.unwrap(), None);
}

#[test]
fn a_read_of_another_dtype_than_the_handle_data_is_rejected() {
    let rt = support::runtime();
    let mut g = Graph::new(rt);
    let handle = g.placeholder(DT_RESOURCE, Some(&[])).unwrap();
    unsafe { set_handle_shape(rt, g.raw(), handle, 3, Some(&[2])) }.unwrap();
    let err = g.read_variable(handle, DT_FLOAT).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument, "{err}");
}

#[test]
fn bad_handle_data_is_rejected_before_it_reaches_tensorflow() {
    let rt = support::runtime();
    let mut g = Graph::new(rt);
    let handle = g.placeholder(DT_RESOURCE, Some(&[])).unwrap();
    let not_a_handle = g.placeholder(DT_FLOAT, None).unwrap();
    let cases: Vec<(polyfn_tf::c_api::TF_Output, i32, Option<Vec<i64>>, &str)> = vec![
        (not_a_handle, DT_FLOAT, Some(vec![2]), "only resource or variant handles"),
        (polyfn_tf::c_api::TF_Output { index: 1, ..handle }, DT_FLOAT, Some(vec![2]), "output 1 does not exist"),
        (handle, DT_FLOAT, Some(vec![-5]), "dimension -5"),
        (handle, DT_FLOAT, Some(vec![1; 255]), "rank 255 exceeds"),
        (handle, 0, Some(vec![2]), "dtype 0"),
        (handle, DT_RESOURCE, Some(vec![2]), "dtype 20"),
    ];
    for (output, dtype, dims, message) in cases {
        let err = unsafe { set_handle_shape(rt, g.raw(), output, dtype, dims.as_deref()) }.unwrap_err();
        assert_eq!(err.code, Code::InvalidArgument);
        assert!(err.message.contains(message), "{err} (expected {message})");
    }
}
