"""How the port scripts (control_flow_ports_more.py, stateful_ports.py) record a tensor in their
JSON: its dtype name, its shape and its values flattened (bools, ints or floats), which the Java
harnesses (ControlFlowPorts, StatefulPorts) read back. Imported by both, run from any directory:
Python puts a script's own folder first on its path."""
import tensorflow as tf


def enc(t):
    t = tf.convert_to_tensor(t)
    v = t.numpy()
    return {"dtype": t.dtype.name, "shape": list(v.shape),
            "values": [bool(a) if t.dtype == tf.bool else (int(a) if t.dtype.is_integer else float(a))
                       for a in v.reshape(-1).tolist()]}
