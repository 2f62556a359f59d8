"""Reading certificate files that may be hostile: a typed error for anything that is not a
certificate of the expected shape, never a traceback.

`load_certificates` parses a certificate file (one release's certificate, a spec's
combined ``certificate.json`` mapping query names to certificates, or a compiled certificate)
and `validate_certificate` checks its shape before anything is re-derived: the file is
UTF-8 JSON without ``NaN``/``Infinity``, at most `MAX_BYTES`, nested at most
`MAX_DEPTH` deep, integers within ±2⁶³, strings at most `MAX_STRING` characters,
every field of its kind present with its type and no field of another kind.  Each problem is a
`CertificateError` naming the field and what it holds.

Examples
--------
>>> load_certificates('{"format": 1')  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.frame.certshape.CertificateError: the certificate file is not JSON: ...
>>> validate_certificate({"format": "dpcert-compiled-certificate/1"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.frame.certshape.CertificateError: certificate: missing fields ['budget', ...
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NoReturn

from dpcert.errors import InvalidParameter

__all__ = ["COMPILED_FIELDS", "MAX_BYTES", "MAX_DEPTH", "MAX_STRING", "RELEASE_FIELDS",
           "CertificateError", "load_certificates", "validate_certificate"]

#: Largest certificate file read (bytes).
MAX_BYTES = 64 * 2**20
#: Deepest nesting of lists and objects accepted.
MAX_DEPTH = 32
#: Longest string accepted (characters).
MAX_STRING = 2**20
_INT_LIMIT = 2**63

_STR, _INT, _NUM, _DICT, _LIST = "string", "integer", "number", "object", "list"
_AMOUNT = (_DICT,)

#: Fields of a compiled certificate (``dpcert.frame.certify.compiled_certificate``).
COMPILED_FIELDS: dict[str, tuple[str, ...]] = {
    "format": (_STR,), "plan": (_DICT,), "schema": (_DICT,), "budget": (_DICT,),
    "d_in": (_STR,), "charged": _AMOUNT, "charged_exact": (_STR, _LIST), "steps": (_LIST,),
    "versions": (_DICT,),
}
#: Fields of a release's certificate (``dpcert.frame.certificate.release_certificate``).
RELEASE_FIELDS: dict[str, tuple[str, ...]] = {
    **COMPILED_FIELDS, "backend": (_STR,), "privacy_unit": (_STR,), "neighbouring": (_STR,),
    "contribution_bounds": (_DICT,), "checks": (_STR,), "measure": (_STR,),
    "budget_split": (_STR,), "measurements": (_LIST,), "composition": (_STR,),
    "release_total": _AMOUNT, "session": (_DICT,), "binding": (_DICT,), "filters": (_LIST,),
    "confidence_level": (_NUM,), "sampler": (_STR,), "proofs": (_STR,), "created": (_STR,),
    "ledger": (_DICT, "null"), "charge": (_DICT,), "chosen_bounds": (_DICT,),
}
_NESTED: dict[str, dict[str, tuple[str, ...]]] = {
    "plan": {"aggregates": (_LIST,), "group_keys": (_LIST,), "keys": (_STR, _LIST),
             "privacy_unit": (_STR,), "max_groups": (_INT, "null"),
             "max_rows_per_group": (_INT, "null"), "filters": (_LIST,), "auto_share": (_STR,)},
    "budget": {"measure": (_STR,), "value": (_STR, _INT, _NUM, _LIST)},
    "session": {"budget": (_STR,), "budget_exact": (_DICT,), "spent_total": _AMOUNT},
    "binding": {"dataset": (_STR, "null"), "ledger_budget": (_DICT, "null"),
                "label": (_STR,), "batch": (_DICT, "null"), "relation": (_STR, "null")},
    "charge": {"body_sha256": (_STR,), "ledger": (_DICT, "null")},
    "ledger": {"path": (_STR,), "dataset": (_STR,), "remaining": _AMOUNT,
               "chain_head": (_STR,), "charges": (_INT,), "budget_notes": (_LIST,)},
    "contribution_bounds": {"max_groups": (_INT, "null"), "max_rows_per_group": (_INT, "null"),
                            "method": (_STR,)},
}
_CHARGE_LEDGER = {"charge_id": (_INT,), "position": (_INT,), "index": (_INT,)}
_BATCH = {"index": (_INT,), "size": (_INT,)}
_FILTER_KINDS = ("sql", "polars_json", "spark_column")


class CertificateError(InvalidParameter):
    """A certificate file that is not a well-formed certificate (invalid input, exit code 2)."""


def _type(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return _INT
    if isinstance(v, float):
        return _NUM
    if isinstance(v, str):
        return _STR
    return _LIST if isinstance(v, list) else _DICT if isinstance(v, dict) else type(v).__name__


def _reject_constant(name: str) -> NoReturn:
    raise CertificateError(f"the certificate file holds {name}, which JSON does not allow")


def _bounded(doc: object) -> None:
    """Depth, integer and string limits, walked without recursion."""
    stack: list[tuple[object, str, int]] = [(doc, "certificate", 0)]
    while stack:
        v, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise CertificateError(f"{where}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(v, bool) or v is None or isinstance(v, float):
            continue
        if isinstance(v, int) and not -_INT_LIMIT < v < _INT_LIMIT:
            raise CertificateError(f"{where}: the integer {str(v)[:20]}... is out of range "
                                   "(at most 2**63 in magnitude)")
        if isinstance(v, str) and len(v) > MAX_STRING:
            raise CertificateError(f"{where}: a string of {len(v)} characters (at most "
                                   f"{MAX_STRING})")
        if isinstance(v, dict):
            stack.extend((x, f"{where}.{str(k)[:40]}", depth + 1) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v))


def load_certificates(text: str | bytes) -> dict[str, dict[str, Any]]:
    """The certificates in a file's ``text``: ``{"": cert}`` for one certificate, or
    ``{query name: cert}`` for a spec's combined ``certificate.json``; shapes validated."""
    if len(text) > MAX_BYTES:
        raise CertificateError(f"the certificate file has {len(text)} bytes (at most "
                               f"{MAX_BYTES})")
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except CertificateError:
        raise
    except RecursionError:
        raise CertificateError("the certificate file is nested too deeply to read") from None
    except (ValueError, TypeError) as e:  # JSONDecodeError, bad UTF-8, too many digits
        raise CertificateError(f"the certificate file is not JSON: {e}") from None
    _bounded(doc)
    if not isinstance(doc, dict):
        raise CertificateError(f"the certificate file holds a JSON {_type(doc)}, not an object")
    if "format" not in doc and set(doc) == {"compiled"}:
        doc = doc["compiled"]
    if isinstance(doc, dict) and "format" not in doc and doc and all(
            isinstance(v, dict) for v in doc.values()):
        certs = {str(k): v for k, v in doc.items()}  # a spec's combined certificate.json
    else:
        certs = {"": doc}
    for name, cert in certs.items():
        validate_certificate(cert, f"certificate {name!r}" if name else "certificate")
    return certs


#: Fields only releases with bounds chosen privately have (``dpcert.frame.autobounds``).
OPTIONAL_FIELDS = frozenset({"chosen_bounds", "auto_share"})


def _fields(d: Mapping[str, object], spec: Mapping[str, tuple[str, ...]], where: str,
            exact: bool = True) -> None:
    missing = sorted(k for k in spec if k not in d and k not in OPTIONAL_FIELDS)
    extra = sorted(str(k) for k in d if k not in spec)
    if missing:
        raise CertificateError(f"{where}: missing fields {missing}")
    if extra and exact:
        raise CertificateError(f"{where}: unknown fields {extra[:10]} (not part of the "
                               "certificate format: refused rather than ignored)")
    for k, kinds in spec.items():
        if k in d and _type(d[k]) not in kinds:
            raise CertificateError(f"{where}.{k}={str(d[k])[:60]!r} is a {_type(d[k])}, not "
                                   f"{' or '.join(kinds)}")


def validate_certificate(cert: object, where: str = "certificate") -> None:
    """Check the shape of one certificate (compiled, or a release's); raise
    `CertificateError` naming the first problem."""
    if not isinstance(cert, dict):
        raise CertificateError(f"{where} is a JSON {_type(cert)}, not an object")
    release = any(k in cert for k in RELEASE_FIELDS if k not in COMPILED_FIELDS)
    if release and "measurements" in cert and "charge" not in cert and "binding" not in cert:
        raise CertificateError(f"{where}: no charge binding (a release certificate written "
                               "before dpcert bound certificates to their charges): it cannot "
                               "be confirmed; its compiled part alone is fields "
                               f"{sorted(COMPILED_FIELDS)}")
    _fields(cert, RELEASE_FIELDS if release else COMPILED_FIELDS, where)
    for key, spec in _NESTED.items():
        if key in cert and isinstance(cert[key], dict):
            _fields(cert[key], spec, f"{where}.{key}", exact=key not in ("plan", "session"))
    for col, t in cert["schema"].items():
        if not isinstance(t, str):
            raise CertificateError(f"{where}.schema.{str(col)[:40]} is a {_type(t)}, not a "
                                   "type name")
    for i, s in enumerate(cert["steps"]):
        if not isinstance(s, dict):
            raise CertificateError(f"{where}.steps[{i}] is a {_type(s)}, not an object")
    for i, a in enumerate(cert["plan"]["aggregates"]):
        if not isinstance(a, dict):
            raise CertificateError(f"{where}.plan.aggregates[{i}] is a {_type(a)}, not an "
                                   "object")
    if not release:
        return
    for i, m in enumerate(cert["measurements"]):
        if not isinstance(m, dict):
            raise CertificateError(f"{where}.measurements[{i}] is a {_type(m)}, not an object")
    for i, f in enumerate(cert["filters"]):
        if not isinstance(f, dict) or len(f) != 1 or next(iter(f)) not in _FILTER_KINDS \
                or not isinstance(next(iter(f.values())), str):
            raise CertificateError(f"{where}.filters[{i}] must be one of "
                                   f"{{kind: text}}, kind in {list(_FILTER_KINDS)}")
    if cert["charge"]["ledger"] is not None:
        _fields(cert["charge"]["ledger"], _CHARGE_LEDGER, f"{where}.charge.ledger")
    if cert["binding"]["batch"] is not None:
        _fields(cert["binding"]["batch"], _BATCH, f"{where}.binding.batch")
