"""Prints, for each Python file named on the command line, what
internal/pysource must find in it, from CPython's own ast and symtable:
one JSON object per file, {"path", "error"} when it does not parse, else
{"path", "scopes": [...]} with every def, class, lambda and comprehension
in source order."""
import ast
import json
import symtable
import sys


def comp_name(node):
    return {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>", ast.DictComp: "<dictcomp>",
            ast.GeneratorExp: "<genexpr>"}[type(node)]


def tables(top):
    """symtable scopes by (name, first line), in no particular order."""
    out = {}
    stack = [top]
    while stack:
        t = stack.pop()
        out.setdefault((t.get_name(), t.get_lineno()), []).append(t)
        stack.extend(t.get_children())
    return out


def frame_names(t):
    names = set()
    for s in t.get_symbols():
        if s.is_free() or s.is_parameter() or s.is_local() and not s.is_declared_global() and (
                s.is_assigned() or s.is_imported() or s.is_namespace()):
            names.add(s.get_name())
    return sorted(names)


def main():
    for path in sys.argv[1:]:
        try:
            src = open(path, encoding="utf-8").read()
            tree = ast.parse(src)
            st = symtable.symtable(src, path, "exec")
        except (SyntaxError, ValueError, UnicodeDecodeError) as e:
            print(json.dumps({"path": path, "error": str(e)}))
            continue
        tabs = tables(st)
        scopes = []

        def outer_parts(node):
            """The sub-nodes of a def, class, lambda or comprehension that
            run in the enclosing scope."""
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                parts = a.defaults + [d for d in a.kw_defaults if d is not None]
                if not isinstance(node, ast.Lambda):
                    parts += node.decorator_list + [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs +
                                                    [a.vararg, a.kwarg] if x is not None and x.annotation is not None]
                    if node.returns is not None:
                        parts.append(node.returns)
                return parts
            if isinstance(node, ast.ClassDef):
                return node.decorator_list + node.bases + [k.value for k in node.keywords]
            return [node.generators[0].iter]

        def inner_parts(node):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return node.body
            if isinstance(node, ast.Lambda):
                return [node.body]
            out = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for i, g in enumerate(node.generators):
                out += [g.target] + ([g.iter] if i else []) + g.ifs
            return out

        def params_of(a):
            params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
            if a.vararg:
                params.insert(len(a.posonlyargs) + len(a.args), a.vararg.arg)
            if a.kwarg:
                params.append(a.kwarg.arg)
            return params

        def visit(node, qual, parent_kind):
            kind = None
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                name = node.name
                first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                body = node.body[0].lineno
                params = [] if kind == "class" else params_of(node.args)
            elif isinstance(node, ast.Lambda):
                kind, name, first, body, params = "lambda", "<lambda>", node.lineno, node.lineno, params_of(node.args)
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                kind, name, first, body, params = "comprehension", comp_name(node), node.lineno, node.lineno, [".0"]
            if kind is None:
                for child in ast.iter_child_nodes(node):
                    visit(child, qual, parent_kind)
                return
            for part in outer_parts(node):
                visit(part, qual, parent_kind)
            q = name if not qual else qual + ("." if parent_kind == "class" else ".<locals>.") + name
            tname = {"<lambda>": "lambda", "<listcomp>": "listcomp", "<setcomp>": "setcomp",
                     "<dictcomp>": "dictcomp", "<genexpr>": "genexpr"}.get(name, name)
            names = None
            cands = tabs.get((tname, node.lineno)) or tabs.get((tname, first)) or []
            if len(cands) == 1 and kind != "class":
                names = frame_names(cands[0])
            scopes.append({"kind": kind, "name": name, "qualname": q, "line": node.lineno, "first": first,
                           "body": body, "end": node.end_lineno, "params": params, "names": names})
            for part in inner_parts(node):
                visit(part, q, kind)

        visit(tree, "", "module")
        scopes.sort(key=lambda s: (s["line"], s["first"]))
        print(json.dumps({"path": path, "scopes": scopes}))


main()
