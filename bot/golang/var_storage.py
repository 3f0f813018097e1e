"""Whether a copy of a package-level variable, or of a part of it, shares its storage, from the evolved file alone.

``package_vars`` refuses a package variable the evolved code writes; it is written through a copy as well as by
name when the copy shares the storage: a map, a slice, a pointer, a channel, an interface (whose value may be a
pointer), or a struct or array holding one (``x := st.m`` with ``var st = struct{ m map[string]int }{...}``). A
copy of a number, a string, a function, or a struct or array of those is a value of its own. This module finds
the Go type of the variable (declared, or that of its initial value: a composite literal, ``make``, ``new``, ``&``,
a call to a function the file declares, arithmetic) and of each part the code reaches (``st.m``, ``ms["a"]``,
``*p``, a ranged element), through the types the file declares. A type it cannot tell (one from another package,
a value of a call it cannot see) is ``None``, taken to share: when in doubt, the write is assumed, since one
missed ships a data race and one assumed is a CRITICAL finding naming its line and the fix.
"""

from __future__ import annotations

from bot.golang.analysis_types import Node
from bot.golang.gotree import named, text_of
from bot.golang.source import EvolvedSource

#: A type whose copy is a value of its own (a number, a string, a bool, a function).
SCALAR = "scalar"
#: A type that shares its storage and has no parts this module can tell (a slice of an array, a channel).
SHARED = "shared"


class Pointer:
    """A pointer to a value of type ``to`` (``&stats``, ``&table[0]``), for a type the file spells nowhere."""

    def __init__(self, to: GoType) -> None:
        self.to = to


#: What a type is: a type node of the file, a pointer to one, one of the two markers above, or ``None`` when it
#: cannot be told.
GoType = Node | Pointer | str | None

_BASIC = {
    *("bool", "string", "byte", "rune", "int", "int8", "int16", "int32", "int64", "uintptr"),
    *("uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "complex64", "complex128"),
}
#: Packages whose values the evolved code reads are numbers (``math.Inf(1)``, ``time.Second``).
_SCALAR_PACKAGES = ("math.", "time.", "strconv.")
_LITERALS = (
    *("int_literal", "float_literal", "imaginary_literal", "rune_literal", "interpreted_string_literal"),
    *("raw_string_literal", "true", "false", "binary_expression", "func_literal", "iota"),
)
_SHARING = ("pointer_type", "map_type", "slice_type", "channel_type", "interface_type")


class StorageTypes:
    """The types of one evolved file's package variables and of their parts (see the module doc)."""

    def __init__(self, src: EvolvedSource, specs: dict[str, Node]) -> None:
        self.src = src
        self.specs = specs
        self.type_specs: dict[str, Node] = {}
        self.funcs: dict[str, list[Node]] = {}
        for node in src.tree.root_node.children:
            if node.type == "type_declaration":
                for spec in (s for s in named(node) if s.type in ("type_spec", "type_alias")):
                    self.type_specs[text_of(src, spec.child_by_field_name("name"))] = spec
            elif node.type in ("function_declaration", "method_declaration"):
                self.funcs.setdefault(text_of(src, node.child_by_field_name("name")), []).append(node)

    def of_var(self, name: str, seen: frozenset[str] = frozenset()) -> GoType:
        """The type of the package variable ``name``: declared, else that of its initial value."""
        spec = self.specs.get(name)
        if spec is None or name in seen:
            return None
        declared = spec.child_by_field_name("type")
        if declared is not None:
            return declared
        value = spec.child_by_field_name("value")
        names = [text_of(self.src, c) for c in spec.children if c.type == "identifier"]
        values = named(value) if value is not None and value.type == "expression_list" else [value]
        if len(values) != len(names) or name not in names:
            return None
        return self.of_value(values[names.index(name)], seen | {name})

    def of_value(self, v: Node | None, seen: frozenset[str] = frozenset()) -> GoType:
        """The type of an initial value, as far as the file tells it."""
        if v is None:
            return None
        shown = text_of(self.src, v)
        if v.type in _LITERALS or shown.startswith(_SCALAR_PACKAGES):
            return SCALAR
        if v.type == "parenthesized_expression":
            return self.of_value(named(v)[0] if named(v) else None, seen)
        if v.type == "unary_expression":
            operand = v.child_by_field_name("operand")
            is_address = text_of(self.src, v.child_by_field_name("operator")) == "&"
            return Pointer(self.of_value(operand, seen)) if is_address else SCALAR
        if v.type == "composite_literal":
            return v.child_by_field_name("type")
        if v.type == "identifier":
            return self.of_var(shown, seen) if shown in self.specs else None
        if v.type == "type_conversion_expression":
            return v.child_by_field_name("type")
        if v.type != "call_expression":
            return None
        fn = v.child_by_field_name("function")
        args = named(v.child_by_field_name("arguments"))
        called = text_of(self.src, fn)
        if called == "make" and args:
            return args[0]
        if called == "new":
            return Pointer(args[0] if args else None)
        if called in _BASIC or called in ("len", "cap", "min", "max"):
            return SCALAR
        if called in self.type_specs:
            return self.type_specs[called].child_by_field_name("type")  # a conversion
        decls = [f for f in self.funcs.get(called, []) if f.type == "function_declaration"]
        result = decls[0].child_by_field_name("result") if len(decls) == 1 else None
        return result if result is not None and result.type != "parameter_list" else None

    def underlying(self, t: GoType, seen: frozenset[str] = frozenset()) -> GoType:
        """``t`` with the names the file declares (``type set map[string]bool``) replaced by what they name."""
        while isinstance(t, Node):
            if t.type == "parenthesized_type" and named(t):
                t = named(t)[0]
                continue
            name = text_of(self.src, t)
            if t.type != "type_identifier":
                return t
            if name in _BASIC:
                return SCALAR
            if name in seen or name not in self.type_specs:
                return None
            seen = seen | {name}
            t = self.type_specs[name].child_by_field_name("type")
        return t

    def pointee(self, t: GoType) -> GoType:
        """What ``t`` points to, if it is a pointer; else ``t`` itself."""
        if isinstance(t, Pointer):
            return t.to
        under = self.underlying(t)
        return named(under)[0] if isinstance(under, Node) and under.type == "pointer_type" and named(under) else t

    def type_name(self, t: GoType) -> str | None:
        """The name of the declared type ``t`` is, or points to (``rateLimiter`` for ``*rateLimiter``)."""
        t = t.to if isinstance(t, Pointer) else t
        if isinstance(t, Node) and t.type == "pointer_type" and named(t):
            t = named(t)[0]
        return text_of(self.src, t) if isinstance(t, Node) and t.type == "type_identifier" else None

    def shares(self, t: GoType, depth: int = 0) -> bool:
        """A copy of a value of type ``t`` shares storage with it (see the module doc)."""
        t = self.underlying(t)
        if t == SCALAR:
            return False
        if not isinstance(t, Node) or depth > 8 or t.type in _SHARING:
            return True
        if t.type in ("function_type",):
            return False
        if t.type in ("array_type", "implicit_length_array_type"):
            return self.shares(t.child_by_field_name("element"), depth + 1)
        if t.type == "struct_type":
            fields = [fd for fl in named(t) for fd in named(fl) if fd.type == "field_declaration"]
            return any(self.shares(fd.child_by_field_name("type"), depth + 1) for fd in fields)
        return True

    def element(self, t: GoType) -> GoType:
        """The type of an element of ``t`` (indexed, or ranged over as the second variable)."""
        t = self.underlying(self.pointee(t))  # an index through a pointer to an array, too
        if not isinstance(t, Node):
            return None
        if t.type == "map_type":
            return t.child_by_field_name("value")
        if t.type in ("slice_type", "array_type", "implicit_length_array_type", "channel_type"):
            return t.child_by_field_name("element") or (named(t)[-1] if named(t) else None)
        return SCALAR if text_of(self.src, t) == "string" else None

    def step(self, t: GoType, part: Node) -> GoType:
        """The type of ``part`` (an index, a slice, a field selector, a dereference) of a value of type ``t``."""
        if part.type == "parenthesized_expression":
            return t
        if part.type in ("index_expression", "variadic_argument"):
            return self.element(t)
        if part.type == "slice_expression":
            under = self.underlying(t)
            return SHARED if isinstance(under, Node) and under.type == "array_type" else t
        if part.type == "unary_expression":  # ``*p``
            to = self.pointee(t)
            return None if to is t else to
        if part.type == "selector_expression":
            under = self.underlying(self.pointee(t))
            if not isinstance(under, Node) or under.type != "struct_type":
                return None
            field = text_of(self.src, part.child_by_field_name("field"))
            for fd in (fd for fl in named(under) for fd in named(fl) if fd.type == "field_declaration"):
                if field in [text_of(self.src, c) for c in fd.children if c.type == "field_identifier"]:
                    return fd.child_by_field_name("type")
            return None  # a method value, or a promoted field: cannot tell
        return None
