"""Strongly connected components of a directed graph (Tarjan's algorithm), shared by the import
tools (`imports.py` for Java classes, `rust_imports.py` for Rust files). python3, stdlib only."""
import sys


def sccs(edges):
    """The strongly connected components of `edges` (node -> iterable of nodes), each a sorted
    list, in Tarjan's order: a component comes after every component it reaches."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return comps
