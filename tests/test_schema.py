"""The ATen schema parser: every Core ATen schema round-trips; each piece of the grammar
(overloads, kw-only args, defaults, optionals, lists, alias annotations, returns) parses
to what PyTorch means by it; parse errors and ``FunctionSchema.bind``."""
import math
import pathlib

import pytest

import fnx
from fnx.dispatch.schema import AliasInfo, parse_schema

CORE = pathlib.Path("/work/shared/reference/core_aten_ops.txt")
_LOCAL = pathlib.Path(__file__).resolve().parents[1] / "shared/reference/core_aten_ops.txt"


def _core_schemas():
    path = CORE if CORE.exists() else _LOCAL
    if not path.exists():
        return []
    return [line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


CORE_SCHEMAS = _core_schemas()


def test_the_reference_list_has_189_schemas():
    assert len(CORE_SCHEMAS) == 189


@pytest.mark.parametrize("text", CORE_SCHEMAS, ids=lambda s: s.split("(")[0])
def test_core_schema_round_trips(text):
    s = parse_schema(text)
    assert s.namespace == "aten"
    qual = text.split("(")[0]
    assert s.qualified_name == qual
    again = parse_schema(str(s))
    assert again == s
    assert str(again) == str(s)
    # the printed form is the original apart from how defaults are spelled
    assert str(s).split("(")[0] == qual.split("::")[1]
    assert [a.name for a in s.arguments] == [a.name for a in again.arguments]


def _arg(s, name):
    return next(a for a in s.arguments if a.name == name)


def test_name_namespace_and_overload():
    s = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert (s.namespace, s.name, s.overload_name) == ("aten", "add", "Tensor")
    assert s.qualified_name == "aten::add.Tensor"
    d = parse_schema("aten::abs(Tensor self) -> Tensor")
    assert d.overload_name == "" and d.qualified_name == "aten::abs"
    n = parse_schema("foo.bar(Tensor x) -> Tensor", "myns")
    assert n.qualified_name == "myns::foo.bar"
    assert parse_schema("abs(Tensor self) -> Tensor").namespace == "aten"


def test_kwarg_only_arguments():
    s = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert [a.kwarg_only for a in s.arguments] == [False, False, True]
    assert str(s) == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    s2 = parse_schema("aten::randn(SymInt[] size, *, ScalarType? dtype=None, "
                      "Layout? layout=None) -> Tensor")
    assert [a.kwarg_only for a in s2.arguments] == [False, True, True]


def test_defaults_of_every_kind():
    s = parse_schema('f(int a=-1, float b=1e-05, float c=2., bool d=True, bool e=False, '
                     'int? f=None, int[] g=[], int[2] h=[1, 2], str i="mean", '
                     'Scalar j=1, Scalar? k=None, float l=-inf, SymInt m=0, '
                     'int[3] n=1, float[] o=[0.5, 1.5]) -> Tensor')
    d = {a.name: a.default for a in s.arguments}
    assert d["a"] == -1 and type(d["a"]) is int
    assert d["b"] == 1e-05 and type(d["b"]) is float
    assert d["c"] == 2.0 and type(d["c"]) is float
    assert d["d"] is True and d["e"] is False
    assert d["f"] is None
    assert d["g"] == ()
    assert d["h"] == (1, 2)
    assert d["i"] == "mean"
    assert d["j"] == 1
    assert d["k"] is None
    assert d["l"] == -math.inf
    assert d["m"] == 0
    assert d["n"] == (1, 1, 1)       # int[3] n=1 means (1, 1, 1)
    assert d["o"] == (0.5, 1.5)
    assert all(a.has_default for a in s.arguments)
    assert parse_schema(str(s)) == s


def test_sized_int_list_scalar_default_broadcasts():
    s = parse_schema("aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                     "int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
                     "int? divisor_override=None) -> Tensor")
    assert _arg(s, "padding").default == (0, 0)
    assert _arg(s, "stride").default == ()
    assert not _arg(s, "kernel_size").has_default
    t = _arg(s, "kernel_size").type
    assert (t.base, t.is_list, t.size, t.optional) == ("int", True, 2, False)
    s3 = parse_schema("aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, "
                      "int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
                      "bool ceil_mode=False) -> (Tensor, Tensor)")
    assert _arg(s3, "dilation").default == (1, 1, 1)


def test_scalar_type_default_is_a_dtype():
    s = parse_schema("aten::randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, "
                     "Device? device=None, bool? pin_memory=None) -> Tensor")
    assert _arg(s, "dtype").default is fnx.int64
    assert "ScalarType? dtype=4" in str(s)
    assert parse_schema(str(s)) == s


def test_optional_types():
    s = parse_schema("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor")
    t = _arg(s, "min").type
    assert (t.base, t.optional, t.is_list) == ("Scalar", True, False)
    assert str(t) == "Scalar?"
    s2 = parse_schema("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                      "ScalarType? dtype=None) -> Tensor")
    t2 = _arg(s2, "dim").type
    assert (t2.base, t2.is_list, t2.size, t2.optional) == ("int", True, 1, True)
    assert not _arg(s2, "dim").has_default       # optional, yet required
    assert str(t2) == "int[1]?"


def test_list_types():
    s = parse_schema("aten::cat(Tensor[] tensors, int dim=0) -> Tensor")
    t = _arg(s, "tensors").type
    assert (t.base, t.is_list, t.size, t.is_tensor) == ("Tensor", True, None, True)
    assert str(t) == "Tensor[]"
    s2 = parse_schema("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor")
    t2 = _arg(s2, "indices").type
    assert (t2.is_list, t2.elem_optional, t2.optional) == (True, True, False)
    assert str(t2) == "Tensor?[]"
    s3 = parse_schema("aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, "
                      "float[]? scale_factors) -> Tensor")
    t3 = _arg(s3, "scale_factors").type
    assert (t3.base, t3.is_list, t3.optional, t3.elem_optional) == ("float", True, True, False)


def test_alias_annotations():
    s = parse_schema("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) "
                     "-> Tensor(a!)")
    a = _arg(s, "self")
    assert a.type.alias == AliasInfo(("a",), True)
    assert a.is_write and s.is_mutable
    assert s.returns[0].type.alias == AliasInfo(("a",), True)
    assert str(a.type) == "Tensor(a!)"
    v = parse_schema("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    assert _arg(v, "self").type.alias == AliasInfo(("a",), False)
    assert not v.is_mutable and not _arg(v, "self").is_write
    sp = parse_schema("aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, "
                      "int dim=0) -> Tensor(a)[]")
    self_t = _arg(sp, "self").type
    assert self_t.alias == AliasInfo(("a",), False, ("*",))
    assert str(self_t) == "Tensor(a -> *)"
    ret = sp.returns[0].type
    assert (ret.is_list, ret.alias) == (True, AliasInfo(("a",), False))
    assert str(ret) == "Tensor(a)[]"
    bn = parse_schema("aten::_native_batch_norm_legit(Tensor input, Tensor? weight, "
                      "Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, "
                      "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
    assert [a.name for a in bn.arguments if a.is_write] == ["running_mean", "running_var"]
    assert _arg(bn, "running_var").type.alias.sets == ("b",)


def test_returns():
    s = parse_schema("aten::max.dim(Tensor self, int dim, bool keepdim=False) "
                     "-> (Tensor values, Tensor indices)")
    assert [(str(r.type), r.name) for r in s.returns] == [("Tensor", "values"),
                                                          ("Tensor", "indices")]
    assert str(s).endswith("-> (Tensor values, Tensor indices)")
    u = parse_schema("aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, "
                     "int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
                     "bool ceil_mode=False) -> (Tensor, Tensor)")
    assert [r.name for r in u.returns] == [None, None]
    assert str(u).endswith("-> (Tensor, Tensor)")
    e = parse_schema("f(Tensor(a!) x) -> ()")
    assert e.returns == ()
    assert str(e) == "f(Tensor(a!) x) -> ()"
    one = parse_schema("f(Tensor x) -> Tensor[]")
    assert one.returns[0].type.is_list
    sc = parse_schema("aten::_local_scalar_dense(Tensor self) -> Scalar")
    assert sc.returns[0].type.base == "Scalar"


def test_tensor_arguments_property():
    s = parse_schema("aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor")
    assert [a.name for a in s.tensor_arguments] == ["condition", "self", "other"]


@pytest.mark.parametrize("text, expect", [
    ("f(Tensor x", "unexpected end of schema"),
    ("f(Tensor x) Tensor", "expected '->'"),
    ("f(Tensor x) -> Tensor junk extra", "unexpected 'extra'"),
    ("f(Tensor 1) -> Tensor", "expected a name but found '1'"),
    ("f(Tensor x -> Tensor", "expected ')'"),
    ("f(int x=@) -> Tensor", "bad default '@'"),
    ("f(Tensor(a x) -> Tensor", "expected ')'"),
    ("f((Tensor, Tensor) x) -> Tensor", "tuple types are not supported"),
    ("", "unexpected end of schema"),
])
def test_parse_errors_raise_runtime_error_with_the_text(text, expect):
    with pytest.raises(RuntimeError, match="schema parse error") as ei:
        parse_schema(text)
    assert expect in str(ei.value)
    if text and expect != "bad default '@'":
        assert text in str(ei.value)


# --------------------------------------------------------------------------- bind

BIND = parse_schema("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                    "ScalarType? dtype=None) -> Tensor")


def test_bind_normalizes_order_and_fills_defaults():
    x = fnx.tensor([1.0])
    pos, kw = BIND.bind((x, [0]), {})
    assert pos == [x, [0], False] and kw == {"dtype": None}
    pos, kw = BIND.bind((x,), {"keepdim": True, "dim": (0,), "dtype": fnx.float64})
    assert pos == [x, (0,), True] and kw == {"dtype": fnx.float64}
    pos, kw = BIND.bind((), {"self": x, "dim": None})
    assert pos == [x, None, False]
    s = parse_schema("aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                     "int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
                     "int? divisor_override=None) -> Tensor")
    pos, kw = s.bind((x, 3), {})           # a single int for int[2] is accepted
    assert pos == [x, 3, (), (0, 0), False, True, None] and kw == {}


@pytest.mark.parametrize("args, kwargs, match", [
    ((1, [0]), {}, r"aten::sum\.dim_IntList\(\): argument 'self' \(position 1\) must be Tensor, "
               r"not int"),
    (("X", [0], False, fnx.float32), {}, r"takes 3 positional arguments but 4 were given"),
    (("X",), {"bogus": 1}, r"got an unexpected keyword argument 'bogus'"),
    (("X", [0]), {"dim": [0]}, r"got multiple values for argument 'dim'"),
    (("X",), {}, r"missing required argument 'dim'"),
    (("X", [0]), {"keepdim": 1}, r"argument 'keepdim' \(position 3\) must be bool, not int"),
    (("X", [0.5]), {}, r"argument 'dim' \(position 2\) must be tuple of ints, not list"),
    (("X", [0]), {"dtype": "float"}, r"argument 'dtype' \(position 4\) must be dtype, not str"),
])
def test_bind_type_errors(args, kwargs, match):
    x = fnx.tensor([1.0])
    args = tuple(x if a == "X" else a for a in args)
    with pytest.raises(TypeError, match=match):
        BIND.bind(args, kwargs)


def test_bind_scalar_and_number_types():
    s = parse_schema("f(Tensor self, Scalar s, float f, int i, str m, Device d) -> Tensor")
    x = fnx.tensor([1.0])
    s.bind((x, 2.5, 3, 4, "m", "cpu"), {})         # an int is a valid float
    s.bind((x, True, 1.0, 4, "m", fnx.device("cpu")), {})
    with pytest.raises(TypeError, match=r"argument 'i' \(position 4\) must be int, not float"):
        s.bind((x, 1, 1.0, 4.0, "m", "cpu"), {})
    with pytest.raises(TypeError, match=r"argument 'i' \(position 4\) must be int, not bool"):
        s.bind((x, 1, 1.0, True, "m", "cpu"), {})
    with pytest.raises(TypeError, match=r"argument 's' \(position 2\) must be Number, not str"):
        s.bind((x, "1", 1.0, 4, "m", "cpu"), {})
    with pytest.raises(TypeError, match=r"argument 'f' \(position 3\) must be float, not bool"):
        s.bind((x, 1, False, 4, "m", "cpu"), {})


def test_bind_optional_tensor_lists():
    s = parse_schema("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor")
    x = fnx.tensor([1.0])
    i = fnx.tensor([0])
    assert s.bind((x, [None, i]), {}) == ([x, [None, i]], {})
    with pytest.raises(TypeError, match="argument 'indices'"):
        s.bind((x, [1.5]), {})
    c = parse_schema("aten::cat(Tensor[] tensors, int dim=0) -> Tensor")
    with pytest.raises(TypeError, match="argument 'tensors'"):
        c.bind(([x, None],), {})
