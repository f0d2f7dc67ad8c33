"""Where the benchmark programs' outputs live (bench/out) and how the assembly reads them."""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")


def jsonl(name):
    """The JSON objects of bench/out/NAME, one a line; lines that are not JSON (a process that
    printed nothing or something else: its log says why) and a missing file give none."""
    path = os.path.join(OUT, name)
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    return rows
