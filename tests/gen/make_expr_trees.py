#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates a C++ doctest translation unit of random weft expression trees (differential tests).

Each tree is emitted twice: as a weft expression (the code under test) and as a double-precision
interpreter of the same tree with a running forward error bound (tests/support/tree_check.hpp
explains the error model). The generator follows weft's and PyTorch's dtype rules to know every
node's result dtype and compute type: results promote like torch.promote_types, numbers only lift
the category (wrapped-number rule), float-valued ops turn integers into float32, 16-bit floats
compute in float, and only cast<U> (and the final store) rounds to a narrower type.

It also tracks an interval for every node and keeps each op inside a tame domain by construction:
log / sqrt / rsqrt / reciprocal / pow bases / divisors get operands kept >= 0.25 away from zero
(|x| + 0.5 and similar), exp / expm1 / pow stay far from overflow, and magnitudes are squashed
(tanh, clamp, sin, sigmoid) before they grow past ~1e4. So no tree produces inf, NaN, an integer
overflow or a catastrophic loss of all significance, and the error bound stays meaningful.

It generates only what weft (like PyTorch) accepts: refused() mirrors weft::detail::refusal
(include/weft/expr/nodes.hpp), every op goes through it, and the tree builders cast or choose
another op where an operand's dtype would be refused (gelu / silu of a non-floating input, a - b
with a bool, -x / abs / relu of a bool, lerp unless start and end share one floating dtype).

Deterministic given its arguments. All units of a build draw from one stream (--base), --seed N
picks unit N, so the trees of all units are distinct. Usage:
  make_expr_trees.py --seed 0 --out expr_trees_0.cpp [--count 4] [--fused-every 10] [--base 20261130]
"""

import argparse
import math
import random
import re
import sys

# ---------------------------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------------------------

CPP = {
    'bool': 'bool', 'int32': 'std::int32_t', 'int64': 'std::int64_t', 'half': 'weft::half',
    'bfloat16': 'weft::bfloat16', 'float': 'float', 'double': 'double',
}
RANK = {'bool': 0, 'int32': 1, 'int64': 2, 'half': 3, 'bfloat16': 3, 'float': 4, 'double': 5}
FLOATING = {'half', 'bfloat16', 'float', 'double'}
INTEGRAL = {'int32', 'int64'}
STORE = {'half': 'To::half', 'bfloat16': 'To::bfloat16', 'float': 'To::float32', 'double': 'To::float64'}


def promote(a, b):
    """torch.promote_types over the dtypes used here."""
    if a == b:
        return a
    if {a, b} == {'half', 'bfloat16'}:
        return 'float'
    return a if RANK[a] >= RANK[b] else b


def to_floating(t):
    return t if t in FLOATING else 'float'


def math_type(t):
    """The type weft computes a dtype in: float for 16-bit floats, else itself."""
    return 'float' if t in ('half', 'bfloat16') else t


def unit_roundoff(ctype):
    return {'float': 'kUf', 'double': 'kUd'}.get(ctype, '0.0')


# ---------------------------------------------------------------------------------------------
# nodes
# ---------------------------------------------------------------------------------------------

class Node:
    """kind: 'leaf', 'num' (a C++ number), 'map', 'cast'. dtype: the value dtype (for numbers: the
    number's own type 'bool' / 'int64' / 'double'). ctype: the compute type of a map."""

    def __init__(self, kind, dtype, lo, hi, cpp, ref, children=(), op=None, ctype=None):
        self.kind, self.dtype, self.lo, self.hi = kind, dtype, lo, hi
        self.cpp, self.ref, self.children, self.op, self.ctype = cpp, ref, list(children), op, ctype

    @property
    def is_num(self):
        return self.kind == 'num'

    def mag(self):
        return max(abs(self.lo), abs(self.hi))


def mixed_promote(nodes):
    """weft::detail::mixed_promote: tensors promote among themselves, numbers only lift the category."""
    tensors = [n.dtype for n in nodes if not n.is_num]
    scalars = [n.dtype for n in nodes if n.is_num]
    assert tensors, 'an op needs a tensor operand'
    t = tensors[0]
    for x in tensors[1:]:
        t = promote(t, x)
    if not scalars:
        return t
    s = scalars[0]
    for x in scalars[1:]:
        s = promote({'int64': 'int64', 'double': 'double', 'bool': 'bool'}[x], s)
    # promote_with_scalar_t<T, S>
    if s == 'bool' or s == t:
        return t
    if s == 'double':
        return to_floating(t)
    return 'int64' if t == 'bool' else t


FLOATING_OPS = {'gelu', 'silu'}  # need a floating input (PyTorch has no integer kernels for them)


def refused(op, children):
    """Whether weft refuses op on these operands at compile time: weft::detail::refusal
    (include/weft/expr/nodes.hpp), the dtypes PyTorch refuses. Numbers are bool / int64 / double."""
    def is_bool(n):
        return n.dtype == 'bool'
    if op in ('neg', 'abs', 'relu'):
        return all(is_bool(c) for c in children)
    if op == '-':
        return any(is_bool(c) for c in children)
    if op in FLOATING_OPS:
        return not all(c.dtype in FLOATING for c in children)
    if op == 'pow':
        base, exp = children
        return is_bool(base) and is_bool(exp) and not exp.is_num
    if op == 'clamp':
        return mixed_promote(children) == 'bool'
    if op == 'where':
        return not is_bool(children[0])
    if op == 'lerp':
        a, b, w = children
        return (a.is_num or b.is_num or a.dtype != b.dtype or a.dtype not in FLOATING or
                not (w.is_num or w.dtype == a.dtype))
    return False


# Interval helpers -----------------------------------------------------------------------------

def hull(*vals):
    return min(vals), max(vals)


def fmt(x):
    """A C++ double literal for x (exactly representable values only)."""
    r = repr(float(x))
    return r if ('.' in r or 'e' in r) else r + '.0'


class Generator:
    def __init__(self, rng, inputs, integer=False):
        self.rng = rng
        self.inputs = inputs  # list of dtypes
        self.integer = integer  # only integer-preserving ops (the tree stays int32 / int64 / bool)
        self.ids = 0
        self.lines = []  # reference code lines
        self.used = set()

    # -- emission ------------------------------------------------------------------------------
    def new_ref(self, expr):
        name = 'n%d' % self.ids
        self.ids += 1
        self.lines.append('[[maybe_unused]] const RV %s = %s;' % (name, expr))
        return name

    def leaf(self, i=None):
        if i is None:
            i = self.rng.randrange(len(self.inputs))
        self.used.add(i)
        t = self.inputs[i]
        lo, hi = {'bool': (0, 1), 'int32': (-5, 5)}.get(t, (-2.0, 2.0))
        # placeholders: unused inputs are dropped and the rest renumbered when the tree is emitted
        return Node('leaf', t, lo, hi, '@X%d@' % i, self.new_ref('leaf(x[@I%d@])' % i))

    def num(self, value, dtype=None):
        if dtype is None:
            dtype = 'int64' if isinstance(value, int) and not isinstance(value, bool) else 'double'
        cpp = str(value) if dtype == 'int64' else fmt(value)
        if dtype == 'bool':
            cpp = 'true' if value else 'false'
        return Node('num', dtype, float(value), float(value), cpp, self.new_ref('num(%s)' % fmt(float(value))))

    def map(self, op, children, kind, lo, hi, cpp, ref_fmt):
        """kind: arithmetic / floating / comparison / where / square, as weft::functors::Kind (expr/nodes.hpp
        map_types)."""
        assert not refused(op, children), 'weft refuses %s on %s' % (op, ', '.join(
            ('number ' if c.is_num else '') + c.dtype for c in children))
        if kind == 'square':  # promotes x with the number 2 (torch.square = pow(x, 2)): bool squares in int64
            promoted = mixed_promote(children + [Node('num', 'int64', 2.0, 2.0, '2', None)])
        else:
            promoted = mixed_promote(children[1:] if kind == 'where' else children)
        if kind == 'floating':
            value = to_floating(promoted)
        elif kind == 'comparison':
            value = 'bool'
        else:
            value = promoted
        ctype = math_type(to_floating(promoted) if kind == 'floating' else promoted)
        u = unit_roundoff(ctype)
        if value == 'bfloat16' and op in ('exp', 'sigmoid', 'tanh', 'silu'):
            u = 'kUbf16Forms'  # their packet forms to bfloat16's precision (backend/cpu/simd/bf16_math.hpp)
        ref = ref_fmt.format(*[c.ref for c in children], u=u)
        if kind in ('arithmetic', 'where') and value == 'bool':
            ref = 'as_bool(%s)' % ref
        return Node('map', value, lo, hi, cpp, self.new_ref(ref), children, op, ctype)

    # -- domain shaping ------------------------------------------------------------------------
    def positive(self, n, floor=0.25):
        """n itself when its interval is >= floor, else a positive wrapper (>= 0.5)."""
        if n.lo >= floor:
            return n
        if n.dtype == 'bool':
            return self.binary('+', n, self.num(0.5))
        choice = self.rng.randrange(3)
        if choice == 0 or n.mag() > 50:
            a = self.unary('abs', n)
            return self.binary('+', a, self.num(0.5))
        if choice == 1:
            s = self.unary('square', n)
            return self.binary('+', s, self.num(0.5))
        return self.unary('exp', self.squash(n))

    def nonzero(self, n):
        if n.lo >= 0.25 or n.hi <= -0.25:
            return n
        return self.positive(n)

    def squash(self, n, limit=2.0):
        """n when |n| <= limit, else a bounded function of it."""
        if n.mag() <= limit:
            return n
        choice = self.rng.randrange(4)
        if n.dtype in INTEGRAL or n.dtype == 'bool' or choice == 0:
            return self.clamp(n, self.num(-2), self.num(2))
        if choice == 1:
            return self.unary('tanh', n)
        if choice == 2:
            return self.unary('sin', n)
        return self.unary('sigmoid', n)

    def tame(self, n):
        """Keeps magnitudes below ~1e3 (integers below 1e4)."""
        return self.squash(n, 1e4 if n.dtype in INTEGRAL else 1e3) if n.mag() > (1e4 if n.dtype in INTEGRAL else 1e3) else n

    # -- ops -----------------------------------------------------------------------------------
    UNARY_FLOAT = ['exp', 'log', 'log1p', 'expm1', 'sqrt', 'rsqrt', 'sin', 'cos', 'tanh', 'sigmoid', 'gelu', 'silu',
                   'erf', 'reciprocal']
    UNARY_ARITH = ['neg', 'abs', 'relu', 'square', 'sign']

    def unary(self, op, x):
        if op in self.UNARY_FLOAT:
            if op in FLOATING_OPS and x.dtype not in FLOATING:  # gelu / silu: cast<U> a non-floating input
                x = self.cast(x, self.rng.choice(['float', 'float', 'half', 'double', 'bfloat16']))
            if op in ('exp', 'expm1'):
                x = self.squash(x, 4.0)
            elif op in ('log', 'sqrt', 'rsqrt'):
                x = self.positive(x)
            elif op == 'log1p':
                x = x if x.lo >= -0.5 else self.positive(x)
            elif op == 'reciprocal':
                x = self.nonzero(x)
            lo, hi = x.lo, x.hi
            f = {
                'exp': lambda: (math.exp(lo), math.exp(hi)),
                'expm1': lambda: (math.expm1(lo), math.expm1(hi)),
                'log': lambda: (math.log(lo), math.log(hi)),
                'log1p': lambda: (math.log1p(lo), math.log1p(hi)),
                'sqrt': lambda: (math.sqrt(lo), math.sqrt(hi)),
                'rsqrt': lambda: (1 / math.sqrt(hi), 1 / math.sqrt(lo)),
                'sin': lambda: (-1.0, 1.0),
                'cos': lambda: (-1.0, 1.0),
                'tanh': lambda: (math.tanh(lo), math.tanh(hi)),
                'sigmoid': lambda: (1 / (1 + math.exp(-lo)), 1 / (1 + math.exp(-hi))),
                'gelu': lambda: (-0.2, max(hi, 0.0)),
                'silu': lambda: (-0.3, max(hi, 0.0)),
                'erf': lambda: (math.erf(lo), math.erf(hi)),
                'reciprocal': lambda: hull(1 / lo, 1 / hi),
            }[op]
            a, b = f()
            return self.map(op, [x], 'floating', a, b, 'weft::%s(%s)' % (op, x.cpp), op + '({0}, {u})')
        # arithmetic, dtype preserving (square of bool: int64; -x, abs, relu refuse bool; sign not drawn on bool)
        assert x.dtype != 'bool' or op == 'square'
        if op == 'neg':
            return self.map(op, [x], 'arithmetic', -x.hi, -x.lo, '(-%s)' % x.cpp, 'neg({0})')
        if op == 'abs':
            lo = 0.0 if x.lo <= 0 <= x.hi else min(abs(x.lo), abs(x.hi))
            return self.map(op, [x], 'arithmetic', lo, x.mag(), 'weft::abs(%s)' % x.cpp, 'abs({0})')
        if op == 'relu':
            return self.map(op, [x], 'arithmetic', max(x.lo, 0.0), max(x.hi, 0.0), 'weft::relu(%s)' % x.cpp, 'relu({0})')
        if op == 'square':
            x = self.squash(x, 30.0)
            lo = 0.0 if x.lo <= 0 <= x.hi else min(x.lo * x.lo, x.hi * x.hi)
            return self.map(op, [x], 'square', lo, x.mag() ** 2, 'weft::square(%s)' % x.cpp, 'square({0}, {u})')
        if op == 'sign':
            return self.map(op, [x], 'arithmetic', -1.0, 1.0, 'weft::sign(%s)' % x.cpp, 'sign({0})')
        raise ValueError(op)

    def binary(self, op, a, b):
        """+ - * / maximum minimum pow and the comparisons; a or b may be a number."""
        if op in ('+', '-'):
            lo = a.lo + b.lo if op == '+' else a.lo - b.hi
            hi = a.hi + b.hi if op == '+' else a.hi - b.lo
            return self.map(op, [a, b], 'arithmetic', lo, hi, '(%s %s %s)' % (a.cpp, op, b.cpp),
                            ('add' if op == '+' else 'sub') + '({0}, {1}, {u})')
        if op == '*':
            lo, hi = hull(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)
            return self.map(op, [a, b], 'arithmetic', lo, hi, '(%s * %s)' % (a.cpp, b.cpp), 'mul({0}, {1}, {u})')
        if op == '/':
            b = self.nonzero(b)
            inv = hull(1 / b.lo, 1 / b.hi)
            lo, hi = hull(a.lo * inv[0], a.lo * inv[1], a.hi * inv[0], a.hi * inv[1])
            return self.map(op, [a, b], 'floating', lo, hi, '(%s / %s)' % (a.cpp, b.cpp), 'div({0}, {1}, {u})')
        if op in ('maximum', 'minimum'):
            f = max if op == 'maximum' else min
            return self.map(op, [a, b], 'arithmetic', f(a.lo, b.lo), f(a.hi, b.hi),
                            'weft::%s(%s, %s)' % (op, a.cpp, b.cpp), op + '({0}, {1})')
        if op in ('<', '<=', '>', '>=', '==', '!='):
            name = {'<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge', '==': 'eq', '!=': 'ne'}[op]
            return self.map(op, [a, b], 'comparison', 0.0, 1.0, '(%s %s %s)' % (a.cpp, op, b.cpp), name + '({0}, {1})')
        raise ValueError(op)

    def pow(self, a, b):
        integer = mixed_promote([a, b]) in INTEGRAL
        if integer:  # integer powers: small bases, exponent 2 or 3, exact
            a = self.clamp(a, self.num(-20), self.num(20)) if a.mag() > 20 else a
            b = self.num(self.rng.choice([2, 3]))
            e = int(b.lo)
            lo, hi = hull(a.lo ** e, a.hi ** e, 0.0 if a.lo <= 0 <= a.hi else a.lo ** e)
        else:
            a = self.positive(a)
            if a.hi > 8:
                a = self.clamp(a, self.num(0.25), self.num(8.0))
            if not b.is_num and (b.lo < -3 or b.hi > 3):
                b = self.clamp(b, self.num(-2.0), self.num(2.0))
            corners = [a.lo ** b.lo, a.lo ** b.hi, a.hi ** b.lo, a.hi ** b.hi]
            lo, hi = hull(*corners)
        return self.map('pow', [a, b], 'arithmetic', lo, hi, 'weft::pow(%s, %s)' % (a.cpp, b.cpp), 'pow({0}, {1}, {u})')

    def clamp(self, x, lo, hi):
        if mixed_promote([x, lo, hi]) == 'bool':  # a bool result is refused
            x = self.cast(x, 'int32')
        if lo.is_num and hi.is_num and lo.lo > hi.lo:
            lo, hi = hi, lo
        # min(max(x, lo), hi) is nondecreasing in every argument
        a = min(max(x.lo, lo.lo), hi.lo)
        b = min(max(x.hi, lo.hi), hi.hi)
        return self.map('clamp', [x, lo, hi], 'arithmetic', a, b,
                        'weft::clamp(%s, %s, %s)' % (x.cpp, lo.cpp, hi.cpp), 'clamp({0}, {1}, {2})')

    def where(self, c, a, b):
        lo, hi = hull(a.lo, a.hi, b.lo, b.hi)
        return self.map('where', [c, a, b], 'where', lo, hi, 'weft::where(%s, %s, %s)' % (c.cpp, a.cpp, b.cpp),
                        'where({0}, {1}, {2})')

    def lerp(self, a, b, w):
        """start and end: tensors of one floating dtype U (cast<U> where they differ; mostly U is
        what the two promote to, sometimes another); the weight: a number or a tensor of dtype U."""
        assert not a.is_num and not b.is_num
        to = to_floating(promote(a.dtype, b.dtype))
        if self.rng.random() < 0.25:
            to = self.rng.choice(['half', 'bfloat16', 'float', 'double'])
        a = a if a.dtype == to else self.cast(a, to)
        b = b if b.dtype == to else self.cast(b, to)
        if not w.is_num and (w.lo < -0.5 or w.hi > 1.5):
            w = self.unary('sigmoid', w)
        if not w.is_num and w.dtype != to:
            w = self.cast(w, to)
        vals = [x + y * (z - x) for x in (a.lo, a.hi) for z in (b.lo, b.hi) for y in (w.lo, w.hi)]
        return self.map('lerp', [a, b, w], 'floating', min(vals), max(vals),
                        'weft::lerp(%s, %s, %s)' % (a.cpp, b.cpp, w.cpp), 'lerp({0}, {1}, {2}, {u})')

    def cast(self, x, to):
        if to in INTEGRAL:
            x = x if x.mag() < 1e4 else self.squash(x, 100.0)
            lo, hi = float(math.trunc(x.lo)), float(math.trunc(x.hi))
            ref = 'cast_int({0})'
        elif to == 'bool':
            lo, hi = 0.0, 1.0
            ref = 'cast_bool({0})'
        else:
            lo, hi = x.lo, x.hi
            src = math_type(x.dtype) if x.dtype != 'bool' else 'bool'
            # weft converts the operand's math value to U's math type, then rounds to U: a double
            # (or int64) value reaches a 16-bit type through float, as c10::Half does.
            if to in ('half', 'bfloat16') and src in ('double', 'int64'):
                ref = 'cast_float(cast_float({0}, To::float32), %s)' % STORE[to]
            else:
                ref = 'cast_float({0}, %s)' % STORE[to]
        node = Node('cast', to, lo, hi, 'weft::cast<%s>(%s)' % (CPP[to], x.cpp),
                    self.new_ref(ref.format(x.ref)), [x], 'cast')
        return node

    # -- random trees --------------------------------------------------------------------------
    def number_for(self, t):
        """A random C++ number exactly representable in every float type."""
        if self.integer or self.rng.random() < 0.5:
            return self.num(self.rng.choice([1, 2, 3, -1, -2]))
        return self.num(self.rng.choice([0.5, 1.5, 2.5, -0.5, -1.25, 0.75, 3.0, 0.25]))

    def operand(self, depth, allow_num=True):
        """A random operand: a number (sometimes) or a tensor-valued subtree of this depth."""
        if allow_num and self.rng.random() < 0.25:
            return self.number_for(None)
        return self.tree(depth)

    def tree(self, depth):
        if depth <= 0:
            return self.leaf()
        r = self.rng
        main = lambda: self.tree(depth - 1)
        other = lambda allow_num=True: self.operand(r.randrange(depth), allow_num)
        pick = r.random()
        if self.integer:  # + - * maximum minimum pow, unary arithmetic, where, clamp
            pick = r.choice([0.35, 0.35, 0.5, 0.5, 0.5, 0.75, 0.8])
        if pick < 0.30:
            x = self.tame(main())
            op = r.choice(self.UNARY_FLOAT)
            return self.unary(op, x)
        if pick < 0.42:
            x = self.tame(main())
            op = r.choice(self.UNARY_ARITH)
            if x.dtype == 'bool' and op != 'square':  # -x, abs, relu refuse bool (square of bool: int64)
                x = self.cast(x, 'int32' if self.integer else r.choice(['float', 'int32', 'half']))
            return self.unary(op, x)
        if pick < 0.72:
            a, b = self.tame(main()), self.tame(other())
            if r.random() < 0.5:
                a, b = b, a
            if a.is_num and b.is_num:
                b = self.tree(0)
            op = r.choice(['+', '-', '*', '/', 'maximum', 'minimum', 'pow', '+', '*'])
            if self.integer:
                op = r.choice(['+', '-', '*', 'maximum', 'minimum', 'pow'])
            both_bool = all(n.dtype == 'bool' for n in (a, b))
            if op == 'pow':
                if a.is_num:
                    a, b = b, a
                if a.dtype == 'bool':
                    a = self.cast(a, 'float')
                return self.pow(a, b)
            if op == '-' and (a.dtype == 'bool' or b.dtype == 'bool'):  # refused with a bool operand
                if both_bool or any(n.is_num and n.dtype == 'bool' for n in (a, b)):
                    op = r.choice(['+', '!='])  # a != b: the difference of two bools as PyTorch spells it
                else:  # cast<U> the bool side
                    to = 'int32' if self.integer else r.choice(['float', 'int32', 'half'])
                    a = self.cast(a, to) if a.dtype == 'bool' else a
                    b = self.cast(b, to) if b.dtype == 'bool' else b
            if op == '*' and a.mag() * b.mag() > 1e4:
                a, b = self.squash(a, 30.0), self.squash(b, 30.0)
            return self.binary(op, a, b)
        if pick < 0.80:  # where(comparison or bool, a, b)
            cond = self.condition(depth)
            a, b = self.tame(main()), self.tame(other())
            if r.random() < 0.5:
                a, b = b, a
            if a.is_num and b.is_num:
                b = self.tree(0)
            return self.where(cond, a, b)
        if pick < 0.86:  # clamp
            x = self.tame(main())
            if x.dtype == 'bool':
                x = self.cast(x, 'int32')
            if r.random() < 0.7:
                lo = r.choice([-2, -1, 0, -1.5, -0.5, 0.25])
                hi = lo + r.choice([1, 2, 3, 1.5, 0.75])
                if isinstance(lo, int) and isinstance(hi, int) and x.dtype in INTEGRAL:
                    return self.clamp(x, self.num(lo), self.num(hi))
                return self.clamp(x, self.num(float(lo)), self.num(float(hi)))
            return self.clamp(x, self.tame(other(False)), self.tame(other(False)))
        if pick < 0.92:  # lerp: start and end are tensors (of one floating dtype, see lerp)
            a, b = self.tame(main()), self.tame(other(False))
            if r.random() < 0.5:
                a, b = b, a
            w = self.num(r.choice([0.25, 0.5, 0.75, -0.25, 1.25])) if r.random() < 0.5 else self.tame(other(False))
            return self.lerp(a, b, w)
        # cast
        x = self.tame(main())
        to = r.choice(['half', 'float', 'double', 'int32', 'bool', 'bfloat16', 'half', 'int64'])
        return self.cast(x, to)

    def condition(self, depth):
        """A bool operand for where(): a comparison, or a bool input."""
        bools = [i for i, t in enumerate(self.inputs) if t == 'bool']
        if bools and self.rng.random() < 0.3:
            return self.leaf(self.rng.choice(bools))
        a = self.tame(self.tree(self.rng.randrange(max(depth, 1))))
        if self.rng.random() < 0.5:  # a threshold inside a's range, so both branches are taken
            q = 1.0 if a.dtype in INTEGRAL or a.dtype == 'bool' or self.integer else 0.25
            lo, hi = math.ceil(a.lo / q), math.floor(a.hi / q)
            v = self.rng.randint(lo, hi) * q if lo <= hi else 0.0
            b = self.num(int(v) if q == 1.0 else v)
        else:
            b = self.tree(self.rng.randrange(max(depth, 1)))
        op = self.rng.choice(['<', '<=', '>', '>=', '==', '!='])
        return self.binary(op, a, self.tame(b))


def count_ops(n, acc):
    if n.kind in ('map', 'cast'):
        acc.add(n.op)
    for c in n.children:
        count_ops(c, acc)
    return acc


def size(n):
    return (1 if n.kind in ('map', 'cast') else 0) + sum(size(c) for c in n.children)


MAX_OPS = 10  # nodes per tree (domain wrappers included): bounds the kernel's compile time


def generate(rng, seen):
    """The next distinct tree of the stream: (dtypes, root, reference lines, depth)."""
    while True:
        k = rng.randint(2, 4)
        style = rng.random()
        integer = style < 0.12  # an integer tree: int32 / bool inputs, integer-preserving ops
        if integer:
            dtypes = [rng.choice(['int32', 'int32', 'bool']) for _ in range(k)]
            dtypes[0] = 'int32'
        else:
            dtypes = [rng.choices(['float', 'double', 'half', 'int32', 'bool'], [35, 15, 20, 20, 10])[0] for _ in range(k)]
        if all(t == 'bool' for t in dtypes):
            dtypes[0] = 'float'
        depth = rng.randint(1, 5)
        g = Generator(rng, dtypes, integer)
        if 0.12 <= style < 0.22:  # a bool result: the tree is a comparison
            root = g.condition(depth)
            if root.kind == 'leaf':
                continue
        elif 0.22 <= style < 0.30:  # a cast at the root: any result dtype
            root = g.cast(g.tame(g.tree(depth - 1)), rng.choice(['int32', 'int64', 'bool', 'half', 'bfloat16', 'float']))
        else:
            root = g.tree(depth)
        if root.kind == 'leaf' or root.is_num or size(root) > MAX_OPS or len(g.used) < 2:
            continue  # a tree reads 2-4 tensors
        if {int(i) for i in re.findall(r'@X(\d+)@', root.cpp)} != g.used:
            continue  # an input drawn into a subtree that was then dropped (pow's integer exponent): the
            # harness sizes the output by every input, so each must reach the expression
        # Drop the inputs the tree does not read; renumber the rest.
        used = sorted(g.used)
        rename = {old: new for new, old in enumerate(used)}
        def fix(text):
            for old_i, new_i in rename.items():
                text = text.replace('@X%d@' % old_i, 'x%d' % new_i).replace('@I%d@' % old_i, '%d' % new_i)
            return text
        key = (tuple(dtypes[i] for i in used), fix(root.cpp))  # distinct as compiled: dtypes and expression
        if key in seen:
            continue
        seen.add(key)
        root.cpp = key[1]
        return list(key[0]), root, [fix(l) for l in g.lines], depth


def emit(base, index, count, out, fused_every):
    """Trees index*count .. (index+1)*count - 1 of the stream seeded by `base`: every translation
    unit of one build draws from the same stream, so all trees of the build are distinct."""
    rng = random.Random(base)
    seen = set()
    for _ in range(index * count):
        generate(rng, seen)
    ops_used = set()
    parts = []
    parts.append('// SPDX-License-Identifier: MIT\n')
    parts.append('/// @file GENERATED by tests/gen/make_expr_trees.py --seed %d --count %d --base %d: do not edit.\n'
                 % (index, count, base))
    parts.append('/// cpu: random expression trees, weft against a double-precision interpreter with error bounds.\n')
    parts.append('#include "tree_check.hpp"\n\n')
    parts.append('using namespace weft_test;\nusing namespace weft_test::rt;\n\n')
    parts.append('TEST_SUITE("cpu") {\n\n')
    for i in range(count):
        dtypes, root, lines, depth = generate(rng, seen)
        count_ops(root, ops_used)
        number = index * count + i
        name = 'tree %d' % number
        out_t = root.dtype
        store = 'store(%s, %s)' % ('%s', STORE[out_t]) if out_t in STORE else 'store_exact(%s)'
        short = root.cpp if len(root.cpp) < 90 else root.cpp[:87] + '...'
        parts.append('// %s: depth %d, %d ops, inputs %s -> %s\n' % (name, depth, size(root), ', '.join(dtypes), out_t))
        parts.append('// %s\n' % root.cpp)
        parts.append('TEST_CASE("expression %s: %s") {\n' % (name, short.replace('\\', '\\\\').replace('"', '\\"')))
        # Drawn from a generator of its own: the tree stream must not depend on how it is cut into units.
        large = random.Random(base * 1000003 + number).random() < 0.15
        parts.append('  TreeRun run("%s", %d, %s);\n' % (name, number, 'true' if large else 'false'))
        for k, t in enumerate(dtypes):
            parts.append('  const TensorView<%s> x%d = run.input<%s>();\n' % (CPP[t], k, CPP[t]))
        parts.append('  const auto e = %s;\n' % root.cpp)
        parts.append('  TreeRef ref = [](const double* x) -> Expect {\n')
        for line in lines:
            parts.append('    %s\n' % line)
        parts.append('    return %s;\n' % (store % root.ref))
        parts.append('  };\n')
        fused = fused_every > 0 and number % fused_every == 0  # also in a fused kernel of two statements
        parts.append('  run.check<%s%s>(e, ref);\n' % (CPP[out_t], ', true' if fused else ''))
        parts.append('}\n\n')
    parts.append('}  // TEST_SUITE\n')
    parts.append('// ops used in this file: %s\n' % ' '.join(sorted(ops_used)))
    text = ''.join(parts)
    if out == '-':
        sys.stdout.write(text)
    else:
        with open(out, 'w') as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seed', type=int, required=True,
                    help='which translation unit: trees seed*count .. (seed+1)*count-1 of the stream')
    ap.add_argument('--out', required=True, help="output .cpp path ('-' for stdout)")
    ap.add_argument('--count', type=int, default=4,
                    help='trees in this translation unit (~1.5 s of -O2 each, ~3.5 s when fused)')
    ap.add_argument('--fused-every', type=int, default=10,
                    help='every Nth tree is also checked in a fused kernel of two statements (0: none)')
    ap.add_argument('--base', type=int, default=20261130, help='seed of the tree stream shared by all units')
    ap.add_argument('--stats', action='store_true', help='print op coverage of this unit to stderr')
    args = ap.parse_args()
    emit(args.base, args.seed, args.count, args.out, args.fused_every)


if __name__ == '__main__':
    main()
