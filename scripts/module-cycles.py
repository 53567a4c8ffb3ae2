#!/usr/bin/env python3
"""Report import cycles between the modules of hcq's crates (core, driver, sim).

Cargo forbids cycles between crates; nothing forbids them between the modules of one crate.
This script reads each crate's `src/` (from its roots, `lib.rs` and `main.rs`, following
`mod x;` declarations), collects every path that names another module of the same crate
(`use crate::...`, `use super::...`, `use self::...`, `use child::...`, and `crate::`/`super::`
paths in code), resolves each through `pub use` re-exports to the module that defines the item,
and then, for every module that has children, builds the graph between those children (an edge
c1 -> c2 when anything inside c1 names anything inside c2) and reports its strongly connected
components. The crate root's children are the top-level modules; `pm4/`'s children are
`pm4::regs`, `pm4::seq`, ...

The rule it checks: dependencies between sibling modules point one way. A module and its own
children are one room, not a circle: a parent declares and re-exports its children, and the
children may use the parent's items (`use super::X`), so edges between a module and its
descendants are not counted. What is counted is a sibling reaching another sibling, directly or
through its children.

Comments and string literals are stripped before parsing; doc links do not make dependencies.
Paths into other crates (`hcq_core::...`, `core::...`) are ignored. std-only, Python 3.8+.

Test modules (`#[cfg(test)] mod ...`, inline or in their own file) are not part of the
layering and are skipped.

Usage: scripts/module-cycles.py [-v] [--strict] [crate_dir ...]   (default: core driver sim)
  -v        print every sibling edge with one place that makes it
  --strict  fail on the known cycles too (KNOWN_CYCLES below)
Exits 1 when a cycle outside KNOWN_CYCLES is found (or an entry there is stale), 0 otherwise.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

DEFAULT_CRATES = ["core", "driver", "sim"]

# Cycles that may exist without failing the run, as (crate, parent module, members). When this
# check was written (issue 15) the simulator had three (its top-level modules, `engine/`'s
# children, `isa::{exec, launch}`); all are broken now (layered: see sim/src/lib.rs and
# ARCHITECTURE.md), so the list is empty: no crate has a known cycle. An entry here is reported
# but does not fail the run, so that CI can hold the line while a cycle is being broken: a new
# cycle, or a known one that grows a member, fails; and an entry that no longer matches a cycle
# fails too ("remove it"), so the list only shrinks. `--strict` ignores this list.
KNOWN_CYCLES: list = []


# ------------------------------------------------------------------------------------------
# Source text
# ------------------------------------------------------------------------------------------


def strip_comments_and_strings(src: str) -> str:
    """Blanks comments, string and char literals (keeping newlines, so line numbers hold)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', src[i:i + 260]) and not _ident_char(src, i - 1):
            hashes = re.match(r'r(#*)"', src[i:]).group(1)
            end = src.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F}') or a lifetime ('a): only blank literals.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_char(s: str, i: int) -> bool:
    return 0 <= i < len(s) and (s[i].isalnum() or s[i] == "_")


def matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def split_top(s: str, sep: str = ",") -> list[str]:
    parts, depth, cur = [], 0, []
    for c in s:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def expand_use_tree(tree: str, prefix: tuple = ()) -> list[tuple[tuple, str | None]]:
    """`a::{b, c::{d as e, *}}` -> [((a,b), None), ((a,c,d), 'e'), ((a,c,'*'), None)]."""
    tree = re.sub(r"\s+", "", tree)
    if not tree:
        return []
    if "{" in tree and tree.endswith("}"):
        brace = tree.index("{")
        head = tree[:brace].rstrip(":")
        pre = prefix + tuple(s for s in head.split("::") if s)
        out = []
        for part in split_top(tree[brace + 1:-1]):
            out.extend(expand_use_tree(part, pre))
        return out
    return [(prefix + tuple(s for s in tree.split("::") if s), None)]


# ------------------------------------------------------------------------------------------
# Module tree
# ------------------------------------------------------------------------------------------


@dataclass
class Module:
    path: tuple  # () is the crate root
    file: str | None = None  # the file holding its body
    children: dict = field(default_factory=dict)  # name -> path
    defined: set = field(default_factory=set)  # item names defined here
    reexports: dict = field(default_factory=dict)  # `use`d name -> absolute target path
    globs: list = field(default_factory=list)  # absolute module paths `use`d with `::*`
    refs: list = field(default_factory=list)  # (raw path tuple, context module path, file, line)
    uses: list = field(default_factory=list)  # (path tuple, alias, line, is_pub)


ITEM_RE = re.compile(
    r"\b(?:const|static|fn|struct|enum|trait|type|union)\s+([A-Za-z_][A-Za-z0-9_]*)"
)
MACRO_RE = re.compile(r"\bmacro_rules!\s*([A-Za-z_][A-Za-z0-9_]*)")
ATTRS_RE = re.compile(r"(?:#\[[^\]]*\]\s*)+\s*(?:pub(?:\([^)]*\))?\s+)?\Z")
MOD_RE = re.compile(r"(?:\bpub(?:\([^)]*\))?\s+)?\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*([;{])")
USE_RE = re.compile(r"(?:\b(pub)(?:\([^)]*\))?\s+)?\buse\s+([^;]*);")
PATH_RE = re.compile(r"(?<![A-Za-z0-9_:$])((?:crate|super|self)(?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")


class Crate:
    def __init__(self, name: str, root_file: str):
        self.name = name
        self.modules: dict[tuple, Module] = {}
        self.files: set[str] = set()
        self.test_files: set[str] = set()  # files of `#[cfg(test)]` modules, not checked
        self._load_file(root_file, (), is_dir_owner=True)

    # -- loading --------------------------------------------------------------------------

    def _load_file(self, fname: str, mpath: tuple, is_dir_owner: bool) -> None:
        self.files.add(os.path.normpath(fname))
        with open(fname, encoding="utf-8") as f:
            text = strip_comments_and_strings(f.read())
        base = os.path.dirname(fname)
        if not is_dir_owner:
            base = os.path.join(base, os.path.splitext(os.path.basename(fname))[0])
        mod = self.modules.setdefault(mpath, Module(mpath, fname))
        mod.file = fname
        self._parse_body(text, 0, len(text), mod, base, fname, text)

    def _line(self, full: str, pos: int) -> int:
        return full.count("\n", 0, pos) + 1

    def _parse_body(self, text, start, end, mod, base, fname, full) -> None:
        inline = []  # (start, end) of inline child modules, skipped by this body's scans
        for m in MOD_RE.finditer(text, start, end):
            if any(a <= m.start() < b for a, b in inline):
                continue
            name, kind = m.group(1), m.group(2)
            child = mod.path + (name,)
            attrs = ATTRS_RE.search(text, max(start, m.start() - 400), m.start())
            attrs = attrs.group(0) if attrs else ""
            if re.search(r"#\[cfg\(test\)\]", attrs):
                # Test modules are not part of the layering: skip them (and their files).
                if kind == "{":
                    inline.append((m.end() - 1, matching_brace(text, m.end() - 1) + 1))
                else:
                    for cand in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
                        self.test_files.add(os.path.normpath(cand))
                continue
            mod.children[name] = child
            if kind == ";":
                if "#[path" in attrs:  # `#[path]` modules: not followed (the strings are blanked).
                    continue
                for cand in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
                    if os.path.exists(cand):
                        self._load_file(cand, child, cand.endswith("mod.rs"))
                        break
            else:
                open_at = m.end() - 1
                close = matching_brace(text, open_at)
                inline.append((open_at, close + 1))
                cmod = self.modules.setdefault(child, Module(child, fname))
                self._parse_body(text, open_at + 1, close, cmod, os.path.join(base, name), fname, full)
        body = list(text[start:end])
        for a, b in inline:
            for k in range(a - start, b - start):
                if body[k] != "\n":
                    body[k] = " "
        body = "".join(body)
        off = start
        mod.defined.update(ITEM_RE.findall(body))
        mod.defined.update(MACRO_RE.findall(body))
        for m in USE_RE.finditer(body):
            line = self._line(full, off + m.start())
            raw = m.group(2)
            for path, alias in _expand_with_alias(raw):
                mod.uses.append((path, alias, line, m.group(1) is not None))
        for m in PATH_RE.finditer(body):
            # `use` statements are handled above; these are paths in code and attributes.
            segs = tuple(s.strip() for s in m.group(1).split("::"))
            mod.refs.append((segs, mod.path, fname, self._line(full, off + m.start())))

    # -- resolution -----------------------------------------------------------------------

    def absolute(self, segs: tuple, ctx: tuple) -> tuple | None:
        """An absolute module-tree path for `segs` as written in module `ctx`, or None when it
        leaves the crate."""
        if not segs:
            return None
        cur = ctx
        i = 0
        if segs[0] == "crate":
            cur, i = (), 1
        elif segs[0] in ("self", "super"):
            while i < len(segs) and segs[i] in ("self", "super"):
                if segs[i] == "super":
                    if not cur:
                        return None
                    cur = cur[:-1]
                i += 1
        else:
            m = self.modules.get(ctx)
            if m is None or segs[0] not in m.children:
                # A name brought in by a `use` of this module, or another crate.
                return None
        return cur + tuple(segs[i:])

    def resolve(self, path: tuple, depth: int = 0) -> tuple:
        """The deepest module of this crate that `path` (absolute) lands in, following `pub use`
        re-exports to the defining module where they can be read."""
        cur = ()
        for k, seg in enumerate(path):
            if seg == "*":
                return cur
            m = self.modules.get(cur)
            if m is None:
                return cur
            if seg in m.children:
                cur = m.children[seg]
                continue
            if depth < 16:
                if seg in m.reexports:
                    return self.resolve(m.reexports[seg] + tuple(path[k + 1:]), depth + 1)
                if seg not in m.defined:
                    for g in m.globs:
                        tgt = self.resolve(g + (seg,), depth + 1)
                        if tgt != g or seg in self.modules.get(g, Module(g)).defined:
                            return tgt
            return cur
        return cur

    def build_reexports(self) -> None:
        for m in self.modules.values():
            for path, alias, _line, _pub in m.uses:
                absp = self.absolute(path, m.path)
                if absp is None:
                    continue
                if path[-1] == "*":
                    m.globs.append(absp[:-1])
                else:
                    m.reexports[alias or path[-1]] = absp

    def references(self):
        """(from module, to module, file, line) for every path naming a module of this crate."""
        for m in self.modules.values():
            items = [(p, m.path, m.file, line) for p, _a, line, _pub in m.uses]
            items += [(p, ctx, f, line) for p, ctx, f, line in m.refs]
            for segs, ctx, fname, line in items:
                absp = self.absolute(segs, ctx)
                if absp is None:
                    continue
                yield ctx, self.resolve(absp), fname or "?", line


def _expand_with_alias(raw: str):
    raw = re.sub(r"\s+", " ", raw).strip()
    for path, _ in expand_use_tree(raw.replace(" as ", "@AS@")):
        last = path[-1] if path else ""
        alias = None
        if "@AS@" in last:
            last, alias = last.split("@AS@")
            path = path[:-1] + (last,)
        if len(path) > 1 and path[-1] == "self":  # `use a::{self, ..}` names `a`
            path, alias = path[:-1], alias or path[-2]
        if path:
            yield path, alias


# ------------------------------------------------------------------------------------------
# Graph
# ------------------------------------------------------------------------------------------


def sccs(nodes, edges):
    """Tarjan's strongly connected components."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check_crate(crate: Crate, verbose: bool, known: list) -> int:
    crate.build_reexports()
    # Per parent module: edges between its children, with one example reference each.
    per_parent: dict[tuple, dict] = {}
    for src, dst, fname, line in crate.references():
        # The longest common prefix is the parent; the edge is between its two children.
        k = 0
        while k < len(src) and k < len(dst) and src[k] == dst[k]:
            k += 1
        if k == len(src) or k == len(dst):
            continue  # a module and its own ancestor/descendant: one room
        parent, a, b = src[:k], src[k], dst[k]
        per_parent.setdefault(parent, {}).setdefault((a, b), (fname, line))
    cycles = 0
    n_edges = 0
    n_known = 0
    entry_used: set = set()
    for parent in sorted(per_parent):
        edges: dict = {}
        for a, b in per_parent[parent]:
            edges.setdefault(a, set()).add(b)
            n_edges += 1
        nodes = set(edges) | {b for s in edges.values() for b in s}
        where = "::".join(parent) or "crate root"
        if verbose:
            for (a, b), (f, line) in sorted(per_parent[parent].items()):
                print(f"  {crate.name} [{where}] {a} -> {b}   ({os.path.relpath(f)}:{line})")
        for comp in sccs(nodes, edges):
            if len(comp) < 2:
                continue
            entry = next((k for k in known if k[0] == crate.name and k[1] == where
                          and set(comp) <= k[2]), None)
            if entry is not None:
                entry_used.add(id(entry))
                n_known += 1
                head = "known import cycle (not failing; break it and shrink KNOWN_CYCLES)"
            else:
                cycles += 1
                head = "import cycle"
            print(f"{crate.name}: {head} among the children of {where}: {' <-> '.join(comp)}")
            for (a, b), (f, line) in sorted(per_parent[parent].items()):
                if a in comp and b in comp:
                    print(f"    {a} -> {b}   e.g. {os.path.relpath(f)}:{line}")
    for k in known:
        if k[0] == crate.name and id(k) not in entry_used:
            cycles += 1
            print(f"{crate.name}: KNOWN_CYCLES lists {sorted(k[2])} under {k[1]}, which no longer "
                  "form a cycle: remove the entry")
    status = "no cycles" if not cycles else f"{cycles} new cycle(s) or stale entries"
    if n_known:
        status += f", {n_known} known"
    print(f"{crate.name}: {len(crate.modules)} modules, {n_edges} sibling edges, {status}")
    return cycles


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    known = [] if "--strict" in argv else KNOWN_CYCLES
    dirs = [a for a in argv if not a.startswith("-")] or DEFAULT_CRATES
    repo = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    os.chdir(repo)  # file names print relative to the repository
    total = 0
    for d in dirs:
        src = os.path.join(d, "src")
        roots = [r for r in ("lib.rs", "main.rs") if os.path.exists(os.path.join(src, r))]
        if not roots:
            print(f"{d}: no src/lib.rs or src/main.rs", file=sys.stderr)
            return 2
        seen: set[str] = set()
        for r in roots:
            crate = Crate(f"{d} ({'lib' if r == 'lib.rs' else 'bin'})", os.path.join(src, r))
            seen |= crate.files | crate.test_files
            total += check_crate(crate, verbose, known)
        for dirpath, _dirs, files in os.walk(src):
            for f in files:
                p = os.path.normpath(os.path.join(dirpath, f))
                if f.endswith(".rs") and p not in seen:
                    print(f"{d}: note: {p} is not reached by `mod` (not checked)")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
