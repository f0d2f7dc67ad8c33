#!/usr/bin/env python3
"""The import graph of each Rust crate in native/: which source file uses which (python3, stdlib only).

Per crate it prints the files, the imports between them, the import floors (the longest chain of
imports once every strongly connected component is collapsed to one node) and the cycles.

A file is a module (`foo.rs`, `foo/mod.rs`, a `#[path]` file). An import is any `crate::`,
`super::`, `self::` or child-module path in a `use` or in code, resolved to the file that defines
the item: a path through a re-export (`crate::Shape` for `crate::shape::Shape`) counts as an
import of `shape.rs` and is counted apart ("via re-exports"), so that a re-export cannot hide a
cycle. A `pub use` (a re-export) is an alias, not an import of its own. Test code is left out:
`#[cfg(test)]` inline modules and files, which nothing imports, so they can be in no cycle.

Usage: tools/rust_imports.py [-v] [--check] [crate dir ...]   (default: native/core native/tf native/jni)
  -v       every file with its floor and its imports
  --check  exit 1 if a cycle joins files of different modules (a folder module's own files may
           import one another) or code imports through the crate root's re-exports: the rules
           the build checks (native/core/tests/architecture.rs)
"""
import os
import re
import sys

from graph_components import sccs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CRATES = ["native/core", "native/tf", "native/jni"]

_TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/|r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|\'(?:\\.|[^\\\'\n])\'', re.S)


def strip_comments_and_strings(text):
    """Comments and string/char literals blanked (newlines kept), so that paths in them are not read."""
    def blank(m):
        s = m.group(0)
        if s.startswith("//") or s.startswith("/*"):
            return re.sub(r"[^\n]", " ", s)
        # a file name stays: `#[path = "x.rs"]` is read
        return s if re.fullmatch(r'"[\w./-]+\.rs"', s) else '""'
    return _TOKEN.sub(blank, text)


_MOD = re.compile(r'((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([;{])')


def _block_end(text, open_brace):
    depth = 0
    for i in range(open_brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def scan_mods(text):
    """(children, code): `mod x;` declarations as (name, path attribute or None, is_test), and the
    text with every `#[cfg(test)]` inline module removed."""
    children, out, pos = [], [], 0
    for m in _MOD.finditer(text):
        if m.start() < pos:
            continue
        attrs, name, kind = m.group(1), m.group(2), m.group(3)
        is_test = "cfg(test)" in attrs.replace(" ", "")
        if kind == ";":
            path = re.search(r'#\[path\s*=\s*"([^"]*)"\]', attrs)
            children.append((name, path.group(1) if path else None, is_test))
        elif is_test:
            end = _block_end(text, m.end() - 1)
            out.append(text[pos:m.start()])
            pos = end
    out.append(text[pos:])
    return children, "".join(out)


def expand_use_tree(tree):
    """`a::{b, c::{d as e}, f::*}` -> [(['a','b'], 'b'), (['a','c','d'], 'e'), (['a','f','*'], None)]."""
    tree = re.sub(r"\s+as\s+", " as ", re.sub(r"\s*([{},]|::)\s*", r"\1", tree.strip()))
    results = []

    def walk(prefix, s):
        # split s at top-level commas
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for p in parts:
            brace = p.find("{")
            if brace >= 0:
                head = [x for x in p[:brace].split("::") if x]
                walk(prefix + head, p[brace + 1:p.rfind("}")])
                continue
            alias = None
            if " as " in p:
                p, alias = p.split(" as ")
            segs = [x for x in p.split("::") if x]
            if segs == ["self"]:
                segs = []
            path = prefix + segs
            if path and path[-1] == "*":
                results.append((path, None))
            elif path:
                results.append((path, alias or path[-1]))

    walk([], tree)
    return results


_USE = re.compile(r'(?<![\w:])(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);')
_PATH = re.compile(r'(?<![\w:])((?:crate|super|self)(?:::\w+)+)')


class Module:
    def __init__(self, mod_path, file, is_test):
        self.mod_path = mod_path      # tuple of segments, () for the crate root
        self.file = file              # path relative to the crate's src/
        self.is_test = is_test
        self.children = {}            # name -> mod_path
        self.aliases = {}             # name -> absolute path (segments) from `use`
        self.uses = []                # absolute paths used (segments), with a flag: inside a `use`
        self.reexports = 0
        self.macros = set()           # at the root: exported macros (named from the root, no re-export)


class Crate:
    def __init__(self, crate_dir):
        self.dir = crate_dir
        self.src = os.path.join(crate_dir, "src")
        self.modules = {}             # mod_path -> Module
        self._load((), "lib.rs", False)
        self.edges = {}               # file -> set of files
        self.via_reexport = []        # (file, path text) imports that resolved through a re-export
        self._resolve()

    def _load(self, mod_path, file, is_test):
        with open(os.path.join(self.src, file), encoding="utf-8") as f:
            text = strip_comments_and_strings(f.read())
        module = Module(mod_path, file, is_test)
        self.modules[mod_path] = module
        children, code = scan_mods(text)
        base = os.path.dirname(file)
        # a file's own children live next to it (lib.rs, mod.rs) or in a folder named after it
        own_dir = base if os.path.basename(file) in ("lib.rs", "mod.rs") else os.path.join(base, file[:-3].split("/")[-1])
        for name, path_attr, child_test in children:
            if path_attr:
                child_file = os.path.normpath(os.path.join(base, path_attr))
            elif os.path.exists(os.path.join(self.src, own_dir, name + ".rs")):
                child_file = os.path.join(own_dir, name + ".rs")
            else:
                child_file = os.path.join(own_dir, name, "mod.rs")
            module.children[name] = mod_path + (name,)
            self._load(mod_path + (name,), os.path.normpath(child_file), is_test or child_test)
        module.code = code
        # an exported macro is named from the crate root: `crate::m!` imports the file defining it
        for m in re.finditer(r'#\[macro_export\]\s*macro_rules!\s*(\w+)', code):
            self.modules[()].aliases[m.group(1)] = list(mod_path) + [m.group(1)]
            self.modules[()].macros.add(m.group(1))

    def _absolute(self, module, segs):
        """A path as written in `module`, made absolute (from the crate root); None if external."""
        head = segs[0]
        if head == "crate":
            return list(segs[1:])
        if head in ("self", "super"):
            base = list(module.mod_path)
            rest = list(segs)
            while rest and rest[0] in ("self", "super"):
                if rest.pop(0) == "super":
                    base = base[:-1]
            return base + rest
        if head in module.children:
            return list(module.mod_path) + list(segs)
        return None

    def _target(self, segs, depth=0):
        """The module that defines what an absolute path names, whether a re-export was crossed,
        and whether one of the crate root's was."""
        mod_path, i = (), 0
        while i < len(segs) and mod_path + (segs[i],) in self.modules:
            mod_path += (segs[i],)
            i += 1
        if i < len(segs) and depth < 16:
            alias = self.modules[mod_path].aliases.get(segs[i])
            if alias is not None:
                target, _, root = self._target(list(alias) + list(segs[i + 1:]), depth + 1)
                return target, True, root or (mod_path == () and segs[i] not in self.modules[()].macros)
        return mod_path, False, False

    def _resolve(self):
        for module in self.modules.values():
            module.use_paths = []
            for m in _USE.finditer(module.code):
                is_pub = bool(m.group(1))
                for segs, alias in expand_use_tree(m.group(2)):
                    absolute = self._absolute(module, segs)
                    if absolute is None:
                        continue
                    if alias:
                        module.aliases[alias] = absolute
                    if is_pub:
                        module.reexports += 1
                    else:
                        module.use_paths.append((absolute[:-1] if segs[-1] == "*" else absolute, " ".join(segs)))
            code = _USE.sub("", module.code)
            for m in _PATH.finditer(code):
                absolute = self._absolute(module, m.group(1).split("::"))
                module.use_paths.append((absolute, m.group(1)))
            for name in module.children:
                for m in re.finditer(r'(?<![\w:])' + name + r'((?:::\w+)+)', code):
                    segs = [name] + m.group(1).split("::")[1:]
                    module.use_paths.append((self._absolute(module, segs), "::".join(segs)))
        for module in self.modules.values():
            if module.is_test:
                continue
            out = self.edges.setdefault(module.file, set())
            for absolute, text in module.use_paths:
                target, crossed, via_root = self._target(absolute)
                target_file = self.modules[target].file
                if self.modules[target].is_test or target_file == module.file:
                    continue
                # a path naming a module itself (`use crate::wire;`) imports that module
                out.add(target_file)
                if crossed:
                    self.via_reexport.append((module.file, text, via_root))

    def sccs(self):
        """Strongly connected components of the file graph."""
        return sccs(self.edges)

    def floors(self):
        """Each file's floor: 1 + the highest floor it imports, a cycle's files sharing one floor."""
        comps = self.sccs()
        comp_of = {f: i for i, c in enumerate(comps) for f in c}
        floor = {}
        for i, comp in enumerate(comps):   # Tarjan emits components dependencies first
            below = [floor[comp_of[w]] for f in comp for w in self.edges.get(f, ()) if comp_of[w] != i]
            floor[i] = 1 + max(below, default=0)
        return {f: floor[comp_of[f]] for f in comp_of}, [c for c in comps if len(c) > 1]


def report(crate_dir, verbose):
    crate = Crate(os.path.join(ROOT, crate_dir))
    floor, cycles = crate.floors()
    imports = sum(len(v) for v in crate.edges.values())
    print(f"{crate_dir}: {len(crate.edges)} files, {imports} imports between them, "
          f"{sum(1 for v in crate.via_reexport if v[2])} paths via the root's re-exports "
          f"({len(crate.via_reexport)} via any re-export), {max(floor.values())} floors, "
          f"{len(cycles)} cycles" + (" (" + ", ".join(str(len(c)) + " files" for c in cycles) + ")" if cycles else ""))
    bad = [c for c in cycles if not within_one_folder(crate, c)]
    for c in cycles:
        print(("  cycle ACROSS MODULES: " if c in bad else "  cycle within one folder module: ") + " ".join(c))
    if verbose:
        for f in sorted(floor, key=lambda f: (floor[f], f)):
            print(f"  {floor[f]:2d} {f} -> {' '.join(sorted(crate.edges.get(f, ())))}")
        for f, text, via_root in crate.via_reexport:
            print(f"  via {'the root' if via_root else 'a'} re-export: {f}: {text}")
    return not bad and not any(v[2] for v in crate.via_reexport)


def within_one_folder(crate, cycle):
    """Whether a cycle only joins one folder module's own files (one type over several files):
    their module paths share a non-empty prefix and go at most one level below it."""
    paths = [next(m.mod_path for m in crate.modules.values() if m.file == f) for f in cycle]
    common = os.path.commonprefix(paths)
    return bool(common) and all(len(p) <= len(common) + 1 for p in paths)


def main(argv):
    verbose = "-v" in argv
    check = "--check" in argv
    crates = [a for a in argv if not a.startswith("-")] or DEFAULT_CRATES
    ok = all([report(c, verbose) for c in crates])
    return 0 if ok or not check else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
