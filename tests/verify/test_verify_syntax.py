"""Parsing DP programs: the IR and line-numbered errors."""

from __future__ import annotations

import pytest

pytest.importorskip("lark")
pytest.importorskip("z3")

from dpcert.errors import DPCertError
from dpcert.verify import ProgramError, parse_program, verify
from dpcert.verify.ir import Assign, Call, While

HEAD = "input q : real[n];\nadjacent q : one in [-1, 1];\nparam eps > 0;\nclaim eps;\n"


def test_parse_ir() -> None:
    p = parse_program(HEAD + "s := 0;\nfor i in 0 .. n { s := s + q[i]; }\n"
                      "return s + lap(1 / eps);\n")
    assert p.size_names == ("n",)
    assert p.adjacency["q"].mode == "one"
    assert isinstance(p.body[0], Assign) and p.body[0].line == 5
    loop = p.body[1].then[1]  # type: ignore[union-attr]
    assert isinstance(loop, While)
    ret = p.body[2]
    assert isinstance(ret.values[0].right, Call)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        ("x := 1;\ny := x +;\nreturn y;\n", 6, "syntax error"),
        ("x := 1\nreturn x;\n", 6, "syntax error"),
        ("x := foo(1);\nreturn x;\n", 5, "unknown function 'foo'"),
        ("x := lap(1, 2);\nreturn x;\n", 5, "takes 1 argument"),
    ],
)
def test_syntax_errors_have_lines(body: str, line: int, fragment: str) -> None:
    with pytest.raises(ProgramError, match=fragment) as info:
        parse_program(HEAD + body)
    assert info.value.line == line
    assert str(info.value).startswith(f"line {line}:")
    assert isinstance(info.value, DPCertError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        ("x := 1;\nreturn y;\n", 6, "undefined name 'y'"),
        ("x := q[7];\nreturn x;\n", 5, "out of range"),
        ("x := q[0] * q[1];\nreturn x + lap(1/eps);\n", 5, "product of two non-constant"),
        ("x := lap(q[0]);\nreturn x;\n", 5, "numbers, public parameters and sizes"),
        ("x := 1;\n\nreturn x + lap(T);\n", 7, "not a public parameter"),
    ],
)
def test_semantic_errors_have_lines(body: str, line: int, fragment: str) -> None:
    with pytest.raises(ProgramError, match=fragment) as info:
        verify(HEAD + body, n=2)
    assert info.value.line == line


def test_missing_declarations() -> None:
    with pytest.raises(ProgramError, match="no `claim`"):
        parse_program("input q : real[1];\nadjacent q : one any;\nreturn q[0];\n")
    with pytest.raises(ProgramError, match="has no adjacency"):
        parse_program("input q : real[1];\nclaim 1;\nreturn q[0];\n")
    with pytest.raises(ProgramError, match="line 2: adjacency range"):
        parse_program("input q : real[1];\nadjacent q : all in [1, -1];\nclaim 1;\nreturn 1;")


def test_positive_scale_parameter_required() -> None:
    with pytest.raises(ProgramError, match="declared positive"):
        verify("input q : real[1];\nadjacent q : all in [-1, 1];\nparam eps;\nclaim eps;\n"
               "return q[0] + lap(1/eps);\n")
