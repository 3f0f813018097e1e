"""Refuse an evolved program that could reach outside its own computation, before anything builds or runs it.

An evolved policy is a pure function of the signals it is given: it reads a
snapshot, does arithmetic, returns a decision. Anything else it could do —
open a file, start a process, dial the network, run code when the package
loads, call into C or assembly, spawn goroutines — has no place in it, and on
GitHub it would run next to the bot's tokens. So the program is checked
statically (tree-sitter, nothing compiled or evaluated) against what a pure
policy needs, and any violation is a CRITICAL finding naming the line in the
researcher's file and what to change. The checker errs towards refusing:
every import must be on ``ALLOWED_IMPORTS`` (extend it there, deliberately,
with a test), so an unknown package is refused rather than guessed safe.

The whole file is checked, not only the EVOLVE block: the block calls helpers
outside it, and whatever the bot compiles comes from this file.

The sandbox (``bot.sandbox``) is the second line: it bounds what a program
that passes this check can still do by running (an endless loop, a huge
allocation).

Check ids (stable):

- ``safety.import``           an import outside the allowlist (os, os/exec, net, unsafe, reflect, syscall, ...)
- ``safety.cgo``              ``import "C"``
- ``safety.import-path``      an import path written with escapes or odd characters
- ``safety.dot-import``       ``import . "pkg"`` hides which package a name comes from
- ``safety.unimported-package``  ``os.X``/``exec.X``... used without an import (function-form inputs)
- ``safety.member``           a member of an allowed package that does I/O, sleeps, or changes shared state
- ``safety.init``             ``func init()`` runs when the package loads
- ``safety.package-initializer``  a package-level variable initialised by a call
- ``safety.directive``        ``//go:generate``, ``//go:linkname``, ``//go:embed``, ``//export``, ``//extern``, ``//line``,
                              ``/*line``...
- ``safety.lint-suppression`` ``//nolint``, ``//lint:ignore``, ``#nosec``, ``//revive:disable`` and any other ``//tool:word``
- ``safety.invisible-character``  a character a reader cannot see: a blank letter (U+3164 HANGUL FILLER...) in a name,
                              a bidirectional control, a zero-width or other format or control character, anywhere
- ``safety.bodyless-func``    a function without a body (implemented in assembly)
- ``safety.goroutine``        a ``go`` statement
- ``safety.channel``          channel types, sends, receives and ``select``
- ``safety.shadowed-package`` a name declared like a guarded package (``time``, ``rand``, ``fmt``, ``sync``) or ``print``
- ``safety.global-rand``      (IMPORTANT) a draw from math/rand's process-global source: not reproducible
- ``safety.print``            (IMPORTANT) printing to the EPP's standard output on every request
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter

from bot.golang.source import EvolvedSource, parse_evolved_source
from bot.golang.unseen import CHECK_LINT, invisible_characters, lint_suppression
from bot.model import Finding, RequestError, Severity

Node = tree_sitter.Node

CHECK_IMPORT = "safety.import"
CHECK_CGO = "safety.cgo"
CHECK_IMPORT_PATH = "safety.import-path"
CHECK_DOT_IMPORT = "safety.dot-import"
CHECK_UNIMPORTED = "safety.unimported-package"
CHECK_MEMBER = "safety.member"
CHECK_INIT = "safety.init"
CHECK_PACKAGE_INIT = "safety.package-initializer"
CHECK_DIRECTIVE = "safety.directive"
CHECK_BODYLESS = "safety.bodyless-func"
CHECK_GOROUTINE = "safety.goroutine"
CHECK_CHANNEL = "safety.channel"
CHECK_GLOBAL_RAND = "safety.global-rand"
CHECK_PRINT = "safety.print"
CHECK_SHADOWED = "safety.shadowed-package"


@dataclass(frozen=True)
class Allowed:
    """One importable package: why it is safe, and (when only part of it is) which members may be used."""

    why: str
    members: frozenset[str] | None = None  # None: every member
    denied: dict[str, str] | None = None  # member -> why it is refused (CRITICAL)


_TIME_MEMBERS = frozenset(
    {"Duration", "Nanosecond", "Microsecond", "Millisecond", "Second", "Minute", "Hour", "ParseDuration"}
)

#: The one place the allowlist lives. Every entry has a test in tests/hostile/test_safety.py.
ALLOWED_IMPORTS: dict[str, Allowed] = {
    "math": Allowed("pure arithmetic"),
    "math/bits": Allowed("pure bit arithmetic"),
    "math/rand": Allowed(
        "random draws; the translator seeds the receiver's rng field, so draws through it are reproducible",
        denied={"Seed": "reseeds the process-wide source every other plugin in the EPP draws from"},
    ),
    "sort": Allowed("in-memory sorting"),
    "slices": Allowed("in-memory slice helpers"),
    "maps": Allowed("in-memory map helpers"),
    "cmp": Allowed("comparisons"),
    "strings": Allowed("in-memory string functions"),
    "strconv": Allowed("number/string conversions"),
    "errors": Allowed("error values"),
    "fmt": Allowed(
        "formatting into strings and errors",
        denied=dict.fromkeys(
            ("Scan", "Scanf", "Scanln", "Fscan", "Fscanf", "Fscanln"), "reads the process's standard input"
        ),
    ),
    "time": Allowed(
        "durations only (the policy's clock is a signal the adapter supplies, not the wall clock)",
        members=_TIME_MEMBERS,
    ),
    "hash/fnv": Allowed("in-memory hashing (deterministic hash draws, e.g. probabilistic shedding)"),
}

#: Package names the translator imports by itself when a function-form input uses them unimported
#: (``bot.golang.analyze`` for the plugin, ``bot.golang.blis_mirror`` for the BLIS build): exactly the
#: allowed packages under their default names, so an auto-import is never one this check refuses, and
#: unimported uses are checked as if imported (the member rules still apply). The one list; import it.
IMPLICIT_IMPORTS: dict[str, str] = {path.rsplit("/", 1)[-1]: path for path in ALLOWED_IMPORTS}

#: Package names that reach outside the process; used without an import they are still refused.
_OUTSIDE_PACKAGES = {
    "os": "os",
    "exec": "os/exec",
    "signal": "os/signal",
    "user": "os/user",
    "syscall": "syscall",
    "unix": "golang.org/x/sys/unix",
    "net": "net",
    "http": "net/http",
    "rpc": "net/rpc",
    "url": "net/url",
    "tls": "crypto/tls",
    "unsafe": "unsafe",
    "reflect": "reflect",
    "runtime": "runtime",
    "debug": "runtime/debug",
    "plugin": "plugin",
    "ioutil": "io/ioutil",
    "io": "io",
    "fs": "io/fs",
    "filepath": "path/filepath",
    "bufio": "bufio",
    "embed": "embed",
    "sync": "sync",
    "atomic": "sync/atomic",
    "log": "log",
    "sql": "database/sql",
    "C": "C (cgo)",
}

_WHY_REFUSED = {
    "os": "reaches the file system, environment and processes",
    "os/exec": "starts processes",
    "syscall": "makes system calls",
    "net": "opens network connections",
    "net/http": "opens network connections",
    "unsafe": "defeats Go's memory safety (and enables //go:linkname)",
    "reflect": "reaches unexported state and calls by name",
    "plugin": "loads native code",
    "runtime": "changes the Go runtime the EPP shares",
    "runtime/debug": "changes the Go runtime's limits",
    "embed": "reads files at build time",
    "io/ioutil": "reads and writes files",
    "sync": "is only needed with goroutines, which evolved logic must not start",
}

_PREDECLARED_TYPES = frozenset(
    [
        "bool",
        "byte",
        "complex64",
        "complex128",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
    ]
)

#: Names the member, package and print rules look for, which the program must not declare itself.
#: The checker resolves ``time.X`` by name, not by scope: a parameter named ``time`` in one function
#: would otherwise make ``time.Sleep`` in another look like a method on a local, while the translator
#: still imports "time" for it. Refusing the declaration closes that; a rename costs the researcher nothing.
#: time, rand, fmt: allowed packages with refused members; sync: a refused package the translator imports
#: when it is used unqualified; print, println: builtins the print rule reports.
_GUARDED_NAMES = {
    "time": 'the package "time"',
    "rand": 'the package "math/rand"',
    "fmt": 'the package "fmt"',
    "sync": 'the package "sync"',
    "print": "the builtin print",
    "println": "the builtin println",
}

_PRINT_MEMBERS = frozenset({"Print", "Printf", "Println"})
_RAND_CONSTRUCTORS = frozenset({"New", "NewSource", "NewZipf", "Rand", "Source", "Source64", "Zipf"})
#: Every comment the Go toolchain reads as a directive (``go doc cmd/compile``, "Compiler Directives";
#: cmd/compile/internal/syntax/scanner.go): ``//go:NAME``, ``//line`` and its block form ``/*line``,
#: which may sit anywhere on a line and re-labels the position of the code after it; plus cmd/go's
#: ``// +build`` and cgo's ``//export`` and ``#cgo``. A line directive moves build, vet, test and
#: panic positions onto other files (the bot's own adapter), so a reviewer would be sent to fix
#: the wrong code.
_DIRECTIVE = re.compile(r"^(//(go:[a-z_]+|export\s|extern\s|line\s|\s*\+build|\s*#cgo)|/\*line\s)")
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./-]+")

ALLOWED_LIST = ", ".join(sorted(ALLOWED_IMPORTS))


class UnsafeProgram(RequestError):
    """The evolved program does something a pure policy must not; nothing was built or run."""

    def __init__(self, message: str, findings: list[Finding]):
        super().__init__(message)
        self.findings = findings


# --------------------------------------------------------------------------
# API
# --------------------------------------------------------------------------


def check_evolved_source(src: EvolvedSource) -> list[Finding]:
    """Every way the program could reach outside a pure computation, as findings on the researcher's lines.

    Pure: reads only ``src``. CRITICAL findings mean the program must not be built or run;
    IMPORTANT ones are carried into the translation for a person to weigh.
    """
    return sorted(_Checker(src).run(), key=lambda f: (f.source_line or 0, f.sort_key()))


def check_evolved_text(text: str, filename: str) -> list[Finding]:
    """The same, from the text as it arrived (.go in any form, or an OpenEvolve .py holding Go).

    Raises ``SourceError`` (a ``RequestError``) when the text is not a usable program at all.
    """
    return check_evolved_source(parse_evolved_source(text, filename))


def critical(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.CRITICAL]


def refusal_line(path: str, findings: list[Finding]) -> str:
    """One line for a person: the first refusal with its line and fix, and how many more there are."""
    crit = critical(findings)
    if not crit:
        return ""
    first = crit[0]
    where = f"{path}:{first.source_line}" if first.source_line else path
    more = f" (and {len(crit) - 1} more; `promote translate {path} --out DIR` lists them)" if len(crit) > 1 else ""
    return f"{where}: refused before anything is built or run: {first.message}; fix: {first.fix}{more}"


def refuse_unsafe(src: EvolvedSource) -> list[Finding]:
    """Raise ``UnsafeProgram`` (one line) when the program has a CRITICAL safety finding; else its findings."""
    findings = check_evolved_source(src)
    if critical(findings):
        raise UnsafeProgram(refusal_line(src.path, findings), findings)
    return findings


# --------------------------------------------------------------------------
# The walk
# --------------------------------------------------------------------------


class _Checker:
    def __init__(self, src: EvolvedSource):
        self.src = src
        self.findings: list[Finding] = []
        self.imports: dict[str, str] = {}  # local package name -> import path
        self.declared: set[str] = set()  # every identifier the file declares (shadows package names)
        self.declaring: list[Node] = []  # the identifier node of every declaration, in document order
        self.import_names: set[str] = set()  # every name an import spec binds, refused ones included

    def run(self) -> list[Finding]:
        self.findings.extend(invisible_characters(self.src))
        root = self.src.tree.root_node
        nodes = list(_walk(root))
        self._declarations(nodes)
        self._shadowed()
        for node in root.children:
            if node.type == "import_declaration":
                self._import_declaration(node)
        for node in nodes:
            self._node(node)
        for node in root.children:
            if node.type == "function_declaration":
                self._function(node)
            elif node.type == "var_declaration":
                self._package_var(node)
        return self.findings

    # ---- helpers
    def _text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.src.go_bytes[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def _line(self, node: Node) -> int:
        return max(1, self.src.to_original_line(node.start_point[0] + 1))

    def _add(self, node: Node, check: str, message: str, fix: str, severity: Severity = Severity.CRITICAL) -> None:
        self.findings.append(
            Finding(severity=severity, check=check, message=message, fix=fix, source_line=self._line(node))
        )

    def _declarations(self, nodes: list[Node]) -> None:
        for n in nodes:
            if n.type in ("parameter_declaration", "variadic_parameter_declaration", "var_spec", "const_spec"):
                self.declaring.extend(n.children_by_field_name("name"))
            elif n.type in ("short_var_declaration", "range_clause"):
                left = n.child_by_field_name("left")
                self.declaring.extend(c for c in (_walk(left) if left is not None else ()) if c.type == "identifier")
            elif n.type in ("function_declaration", "method_declaration", "type_spec", "type_alias"):
                name = n.child_by_field_name("name")
                if name is not None:
                    self.declaring.append(name)
        self.declared.update(self._text(c) for c in self.declaring)

    def _shadowed(self) -> None:
        """Refuse a declaration named like a guarded package or builtin, wherever it is (see ``_GUARDED_NAMES``)."""
        for node in self.declaring:
            name = self._text(node)
            if name in _GUARDED_NAMES:
                self._add(
                    node,
                    CHECK_SHADOWED,
                    f"declares `{name}`, the name of {_GUARDED_NAMES[name]}: the safety check cannot then tell "
                    f"which uses of `{name}` mean {_GUARDED_NAMES[name]}, anywhere in the file",
                    f"rename `{name}` (for example to `{name}Value`) here and where it is used",
                )

    # ---- imports
    def _import_declaration(self, node: Node) -> None:
        for spec in _walk(node):
            if spec.type == "import_spec":
                self._import_spec(spec)

    def _import_spec(self, spec: Node) -> None:
        path_node = spec.child_by_field_name("path")
        raw = self._text(path_node)
        path = raw[1:-1] if len(raw) >= 2 else raw
        name_node = spec.child_by_field_name("name")
        name = self._text(name_node) if name_node is not None else path.rsplit("/", 1)[-1]
        self.import_names.add(name)
        if path == "C":
            self._add(
                spec,
                CHECK_CGO,
                'imports "C": cgo runs C code the bot cannot check',
                'delete the import "C" and its preamble; write the logic in Go',
            )
            return
        if not _PLAIN_PATH.fullmatch(path):
            self._add(
                spec,
                CHECK_IMPORT_PATH,
                f"import path {raw} is not written plainly",
                f"write the import path without escapes, one of: {ALLOWED_LIST}",
            )
            return
        allowed = ALLOWED_IMPORTS.get(path)
        if allowed is None:
            why = _WHY_REFUSED.get(path) or "is not on the allowlist of pure packages"
            self._add(
                spec,
                CHECK_IMPORT,
                f'imports "{path}", which {why}',
                f'remove the import "{path}" and the code using it; an evolved policy may import only {ALLOWED_LIST}',
            )
            return
        if name_node is not None and name_node.type == "dot":
            self._add(
                spec,
                CHECK_DOT_IMPORT,
                f'dot-imports "{path}", which hides which package each name comes from',
                f'import "{path}" by name and qualify its uses',
            )
            return
        if name_node is not None and name_node.type == "blank_identifier":
            return
        self.imports[name] = path

    # ---- every node
    def _node(self, node: Node) -> None:
        t = node.type
        if t == "comment":
            self._comment(node)
        elif t == "go_statement":
            self._add(
                node,
                CHECK_GOROUTINE,
                "starts a goroutine: evolved logic runs once per request and must return its decision itself",
                "compute the result in the calling goroutine (delete the `go` keyword)",
            )
        elif t == "channel_type":
            self._add(
                node,
                CHECK_CHANNEL,
                f"uses a channel ({self._text(node)}): evolved logic must not communicate with other goroutines",
                "replace the channel with a local variable or slice",
            )
        elif t in ("send_statement", "select_statement") or (
            t == "unary_expression" and self._text(node.child_by_field_name("operator")) == "<-"
        ):
            what = {"send_statement": "sends on a channel", "select_statement": "waits in a select"}.get(
                t, "receives from a channel"
            )
            self._add(
                node,
                CHECK_CHANNEL,
                f"{what}: evolved logic must not communicate with other goroutines",
                "compute the value directly instead of passing it through a channel",
            )
        elif t in ("selector_expression", "qualified_type"):
            self._qualified(node)
        elif t == "call_expression":
            fn = node.child_by_field_name("function")
            # A program declaring its own print/println is refused by _shadowed; every call is reported here.
            if fn is not None and fn.type == "identifier" and self._text(fn) in ("print", "println"):
                self._add(
                    node,
                    CHECK_PRINT,
                    f"{self._text(fn)}() writes to the EPP's standard error on every request",
                    f"delete the {self._text(fn)}() call",
                    Severity.IMPORTANT,
                )

    def _comment(self, node: Node) -> None:
        text = self._text(node)
        m = _DIRECTIVE.match(text)
        if m is None:
            lint = lint_suppression(text)
            if lint is not None:
                self._add(node, CHECK_LINT, *lint)
            return
        directive = text.split()[0] if text.split() else text
        self._add(
            node,
            CHECK_DIRECTIVE,
            f"carries the compiler directive `{directive}`, which acts outside the Go code the bot reviews",
            "delete the directive: a // comment must not start with `go:`, `export `, `line ` or `+build`, and a "
            "/* comment must not start with `line ` (`line`, then a space: Go reads what follows as a file:line "
            "position); other comments, `/*lineup ...*/` among them, may stay",
        )

    def _qualified(self, node: Node) -> None:
        if node.type == "selector_expression":
            operand, member = node.child_by_field_name("operand"), node.child_by_field_name("field")
            if operand is None or operand.type != "identifier":
                return
        else:
            operand, member = node.child_by_field_name("package"), node.child_by_field_name("name")
        pkg, name = self._text(operand), self._text(member)
        path = self.imports.get(pkg)
        # A declared guarded name is refused by itself (_shadowed); its uses still get the member rules.
        shadowed = pkg in self.declared and pkg not in _GUARDED_NAMES
        if path is None and not shadowed and pkg not in self.import_names:
            path = IMPLICIT_IMPORTS.get(pkg)
        if path is None:
            if pkg in _OUTSIDE_PACKAGES and not shadowed and pkg not in self.import_names:
                real = _OUTSIDE_PACKAGES[pkg]
                why = _WHY_REFUSED.get(real, "reaches outside a pure computation")
                self._add(
                    node,
                    CHECK_UNIMPORTED,
                    f"calls {pkg}.{name} from package {real}, which {why}",
                    f"remove the use of {pkg}.{name}; an evolved policy may use only {ALLOWED_LIST}",
                )
            return
        allowed = ALLOWED_IMPORTS[path]
        if allowed.denied and name in allowed.denied:
            self._add(
                node,
                CHECK_MEMBER,
                f"calls {pkg}.{name}, which {allowed.denied[name]}",
                f"remove the use of {pkg}.{name}",
            )
        elif allowed.members is not None and name not in allowed.members:
            self._add(
                node,
                CHECK_MEMBER,
                f'uses {pkg}.{name}; from "{path}" an evolved policy may use only {", ".join(sorted(allowed.members))}',
                f"remove {pkg}.{name}" + (" (read the clock from the Clock signal)" if path == "time" else ""),
            )
        elif path == "math/rand" and name not in _RAND_CONSTRUCTORS and node.type == "selector_expression":
            self._add(
                node,
                CHECK_GLOBAL_RAND,
                f"{pkg}.{name} draws from the process-global source, which Go seeds randomly: "
                "the plugin's choices cannot be reproduced",
                "draw from a seeded *rand.Rand field (the receiver's `rng`, which the translator seeds)",
                Severity.IMPORTANT,
            )
        elif path == "fmt" and name in _PRINT_MEMBERS:
            self._add(
                node,
                CHECK_PRINT,
                f"{pkg}.{name} writes to the EPP's standard output on every request",
                f"delete the {pkg}.{name} call (or build the text with fmt.Sprintf for the decision's Reason)",
                Severity.IMPORTANT,
            )

    # ---- top-level declarations
    def _function(self, node: Node) -> None:
        name = self._text(node.child_by_field_name("name"))
        if name == "init":
            self._add(
                node,
                CHECK_INIT,
                "declares func init(), which runs when the package loads, before any request",
                "move the work into the policy function or its constructor, and delete init()",
            )
        if node.child_by_field_name("body") is None:
            self._add(
                node,
                CHECK_BODYLESS,
                f"declares func {name} without a body (implemented in assembly or linked from elsewhere)",
                f"give {name} a Go body",
            )

    def _package_var(self, node: Node) -> None:
        for spec in _walk(node):
            if spec.type != "var_spec":
                continue
            value = spec.child_by_field_name("value")
            if value is None:
                continue
            for call in _calls_outside_func_literals(value):
                fn = call.child_by_field_name("function")
                if fn is not None and fn.type == "identifier" and self._text(fn) in _PREDECLARED_TYPES:
                    continue  # a conversion such as float64(3)
                names = ", ".join(self._text(c) for c in spec.children_by_field_name("name"))
                self._add(
                    call,
                    CHECK_PACKAGE_INIT,
                    f"package-level variable {names} is initialised by calling {self._text(fn)}(), "
                    "which runs when the package loads, before any request",
                    f"give {names} a literal value, or compute it inside the function that uses it",
                )
                break


def _walk(node: Node):
    """Every node in document order, iteratively (deep nesting must not exhaust Python's stack)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _calls_outside_func_literals(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "func_literal":
            continue
        if n.type == "call_expression":
            yield n
        stack.extend(reversed(n.children))
