#!/usr/bin/env python3
"""Measures the Java import graph of Polyfn's main sources (python3, stdlib only).

Usage: tools/imports.py [source root]   (default: java/src/main/java)

A class depends on another when it names it: an import, or (same package, which Java needs no
import for) its simple name as an identifier outside comments and strings. Prints, per package,
the public and hidden (package-private) top-level classes; then the graph's import floors (the
longest path in the class DAG after collapsing strongly connected components), the upward imports
(edges inside a strongly connected component, i.e. that close a cycle) and the largest component.
"""
import os
import re
import sys
from collections import defaultdict

from graph_components import sccs

COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/', re.S)
STRING = re.compile(r'"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
IDENT = re.compile(r'\b[A-Za-z_][A-Za-z0-9_]*\b')


def strip(text):
    return STRING.sub('""', COMMENT.sub(' ', text))


def read_classes(root):
    classes = {}  # fqcn -> (package, simple, public, code)
    for base, _, files in os.walk(root):
        for name in files:
            if not name.endswith('.java') or name in ('package-info.java', 'module-info.java'):
                continue
            code = strip(open(os.path.join(base, name), encoding='utf-8').read())
            pkg = re.search(r'^\s*package\s+([\w.]+)\s*;', code, re.M)
            pkg = pkg.group(1) if pkg else ''
            simple = name[:-5]
            decl = re.search(r'^((?:\s*(?:public|abstract|final|sealed|non-sealed|strictfp)\s+)*)'
                             r'\s*(?:class|interface|enum|record|@interface)\s+' + simple + r'\b',
                             code, re.M)
            public = bool(decl and 'public' in decl.group(1).split())
            classes[pkg + '.' + simple] = (pkg, simple, public, code)
    return classes


def edges_of(classes):
    by_pkg = defaultdict(dict)
    for fq, (pkg, simple, _, _) in classes.items():
        by_pkg[pkg][simple] = fq
    graph = {fq: set() for fq in classes}
    for fq, (pkg, simple, _, code) in classes.items():
        idents = set(IDENT.findall(code))
        for imp in re.findall(r'^\s*import\s+(?:static\s+)?([\w.]+(?:\.\*)?)\s*;', code, re.M):
            if imp.endswith('.*'):
                p = imp[:-2]
                for s, target in by_pkg.get(p, {}).items():
                    if s in idents:
                        graph[fq].add(target)
                continue
            parts = imp.split('.')
            for i in range(len(parts), 0, -1):  # the longest prefix that is a class
                cand = '.'.join(parts[:i])
                if cand in classes:
                    graph[fq].add(cand)
                    break
        imported = set(i.rsplit('.', 1)[-1] for i in re.findall(
            r'^\s*import\s+(?:static\s+)?([\w.]+)\s*;', code, re.M))
        for s, target in by_pkg[pkg].items():
            if s in idents and s not in imported:  # an imported name hides the package's class
                graph[fq].add(target)
        graph[fq].discard(fq)
    return graph


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    root = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'java', 'src', 'main', 'java')
    classes = read_classes(root)
    graph = edges_of(classes)
    comps = sccs(graph)
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    dag = defaultdict(set)
    upward = 0
    for v, ws in graph.items():
        for w in ws:
            if comp_of[v] == comp_of[w]:
                upward += 1
            else:
                dag[comp_of[v]].add(comp_of[w])
    floor = {}

    def height(c):  # comps come out of Tarjan in reverse topological order
        if c not in floor:
            floor[c] = 1 + max((height(d) for d in dag[c]), default=0)
        return floor[c]
    floors = max((height(c) for c in range(len(comps))), default=0)
    packages = defaultdict(lambda: [0, 0])
    for pkg, _, public, _ in classes.values():
        packages[pkg][0 if public else 1] += 1
    print('%-32s %7s %7s' % ('package', 'public', 'hidden'))
    for pkg in sorted(packages):
        print('%-32s %7d %7d' % (pkg, packages[pkg][0], packages[pkg][1]))
    cross = defaultdict(set)
    for v, ws in graph.items():
        for w in ws:
            if classes[v][0] != classes[w][0]:
                cross[classes[v][0]].add(classes[w][0])
    print('\npackage imports:')
    for pkg in sorted(cross):
        print('  %s -> %s' % (pkg, ', '.join(sorted(cross[pkg]))))
    largest = max(comps, key=len)
    print('\nclasses: %d, import edges: %d' % (len(classes), sum(len(w) for w in graph.values())))
    print('import floors: %d' % floors)
    print('upward imports (edges inside cycles): %d' % upward)
    print('largest strongly connected component: %d classes' % len(largest))
    if len(largest) > 1 and '-v' in sys.argv:
        print('  ' + ' '.join(sorted(v.rsplit('.', 1)[1] for v in largest)))


if __name__ == '__main__':
    main()
