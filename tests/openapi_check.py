#!/usr/bin/env python3
"""Check recorded API responses against docs/openapi.yaml.

Usage:
    python3 tests/openapi_check.py docs/openapi.yaml RESPONSES.jsonl
    python3 tests/openapi_check.py --self-test [docs/openapi.yaml]

RESPONSES.jsonl holds one JSON object per line, written by the integration tests:
    {"method": "GET", "path": "/v1/jobs/0190...?wait=1", "status": 200,
     "content_type": "application/json", "body": <parsed JSON or null>, "raw_len": 123}

For each line the query string is dropped and the path is matched against the spec's
path templates: `{name}` matches one non-empty segment, except a trailing `{path}`,
which matches the rest of the path, slashes included. Then:

  * method+path is a documented operation: the status must be listed for it (or a
    `default` / `4XX`-style response); if the listed response has content, the recorded
    content type must be one of its media types; `application/json` bodies must parse
    and validate against the schema.
  * method+path is not documented (nginx answers unknown paths, 405 for wrong methods):
    an error status (>= 400) must still carry an `Error`-shaped JSON body. A success
    status there is only a warning.

The validator implements the subset of OpenAPI 3.0 schema the spec uses: $ref (local),
type, nullable, enum, required, properties, additionalProperties, items, min/max,
exclusiveMin/Max, multipleOf, minLength/maxLength, pattern, format (date-time, uuid,
byte), minItems/maxItems/uniqueItems, minProperties/maxProperties, allOf/anyOf/oneOf/not.
The spec is linted when loaded: a keyword the validator does not implement, an unknown
type, a bad regex or a dangling $ref is an error, so nothing in the spec is silently
ignored. `nullable: true` accepts null outright (OpenAPI 3.0.0 wording). A JSON boolean is
never an integer or a number; 1.0 is not an integer.

Exit status: 0 all responses conform; 1 a failure, or no responses at all; 2 usage error
or an unusable spec. `--self-test` validates built-in good and bad samples and exits 1
if the checker accepts a bad one or rejects a good one.
"""

import base64
import copy
import datetime
import json
import os
import re
import sys
import tempfile
from urllib.parse import urlsplit

import yaml

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

# Keywords the validator enforces.
ASSERTIONS = {
    "$ref", "type", "nullable", "enum", "required", "properties", "additionalProperties",
    "items", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems",
    "minProperties", "maxProperties", "allOf", "anyOf", "oneOf", "not",
}
# Keywords that carry no constraint.
ANNOTATIONS = {
    "description", "title", "example", "default", "readOnly", "writeOnly", "deprecated",
    "externalDocs", "xml",
}
TYPES = {"object", "array", "string", "integer", "number", "boolean"}

MAX_ERRORS_PER_RESPONSE = 20


class SpecError(Exception):
    """The spec itself is unusable (dangling $ref, unsupported keyword, ...)."""


# --------------------------------------------------------------------------- helpers

def short(value, limit=60):
    """A compact rendering of a JSON value for messages."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def got(value):
    return "%s %s" % (json_type(value), short(value))


def has_type(value, t):
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "array":
        return isinstance(value, list)
    if t == "object":
        return isinstance(value, dict)
    return False


def child(path, key):
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
        return "%s.%s" % (path, key)
    return "%s[%s]" % (path, json.dumps(key))


def json_equal(a, b):
    """JSON equality: true != 1, 1 == 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return a == b


RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def format_error(fmt, value):
    """None if `value` (a string) satisfies `fmt`, else a reason."""
    if fmt == "date-time":
        m = RFC3339.match(value)
        if not m:
            return "not an RFC 3339 date-time"
        y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
        try:
            datetime.datetime(y, mo, d, h, mi, min(s, 59))
        except ValueError:
            return "not a valid calendar date-time"
        if s > 60:
            return "seconds out of range"
        return None
    if fmt == "uuid":
        return None if UUID.match(value) else "not a UUID"
    if fmt == "byte":
        if len(value) % 4 or not BASE64.match(value):
            return "not base64"
        try:
            base64.b64decode(value, validate=True)
        except ValueError:
            return "not base64"
        return None
    return None  # binary, password, int32, ...: annotations here


# --------------------------------------------------------------------------- spec

class Spec:
    def __init__(self, doc, source="spec"):
        if not isinstance(doc, dict) or "paths" not in doc:
            raise SpecError("%s: not an OpenAPI document (no `paths`)" % source)
        version = str(doc.get("openapi", ""))
        if not version.startswith("3.0"):
            raise SpecError("%s: openapi %r, this checker handles 3.0.x" % (source, version))
        self.doc = doc
        self.patterns = {}
        self.operations = []  # (METHOD, template, operation dict)
        self.templates = []   # (template, [segments])
        for template, item in doc["paths"].items():
            if not isinstance(item, dict):
                raise SpecError("paths.%s is not an object" % template)
            segs = template.split("/")[1:]
            self.templates.append((template, segs))
            for method in METHODS:
                if method in item:
                    self.operations.append((method.upper(), template, item[method]))
        self.lint()

    @classmethod
    def load(cls, filename):
        try:
            with open(filename, encoding="utf-8") as fh:
                doc = yaml.safe_load(fh)
        except (OSError, yaml.YAMLError) as exc:
            raise SpecError("%s: %s" % (filename, exc))
        return cls(doc, filename)

    # ---- references

    def resolve(self, node, where="?"):
        seen = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#/"):
                raise SpecError("%s: only local $ref supported, got %r" % (where, ref))
            if ref in seen:
                raise SpecError("%s: $ref cycle through %s" % (where, ref))
            seen.add(ref)
            target = self.doc
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, dict) or part not in target:
                    raise SpecError("%s: dangling $ref %s" % (where, ref))
                target = target[part]
            node = target
        return node

    # ---- lint: everything the validator will meet is understood

    def lint(self):
        comps = self.doc.get("components", {}) or {}
        for name, schema in (comps.get("schemas") or {}).items():
            self.lint_schema(schema, "components.schemas.%s" % name)
        for name, param in (comps.get("parameters") or {}).items():
            self.lint_param(param, "components.parameters.%s" % name)
        for name, header in (comps.get("headers") or {}).items():
            self.lint_param(header, "components.headers.%s" % name)
        for name, resp in (comps.get("responses") or {}).items():
            self.lint_response(resp, "components.responses.%s" % name)
        for method, template, op in self.operations:
            where = "%s %s" % (method, template)
            if not isinstance(op.get("responses"), dict) or not op["responses"]:
                raise SpecError("%s: no responses" % where)
            declared = set()
            for param in list(self.doc["paths"][template].get("parameters", [])) + list(op.get("parameters", [])):
                self.lint_param(param, where + " parameter")
                param = self.resolve(param, where)
                if param.get("in") == "path":
                    declared.add(param.get("name"))
            wanted = set(re.findall(r"\{([^}]+)\}", template))
            if wanted != declared:
                raise SpecError("%s: path parameters declared %s, template has %s"
                                % (where, sorted(declared), sorted(wanted)))
            body = op.get("requestBody")
            if body:
                body = self.resolve(body, where)
                for mt, media in (body.get("content") or {}).items():
                    if "schema" in media:
                        self.lint_schema(media["schema"], "%s requestBody %s" % (where, mt))
            for status, resp in op["responses"].items():
                status = str(status)
                if not re.match(r"^([1-5][0-9][0-9]|[1-5]XX|default)$", status):
                    raise SpecError("%s: bad response key %r" % (where, status))
                self.lint_response(resp, "%s response %s" % (where, status))

    def lint_param(self, param, where):
        param = self.resolve(param, where)
        if "schema" in param:
            self.lint_schema(param["schema"], where)

    def lint_response(self, resp, where):
        resp = self.resolve(resp, where)
        if "description" not in resp:
            raise SpecError("%s: response without description" % where)
        for name, header in (resp.get("headers") or {}).items():
            self.lint_param(header, "%s header %s" % (where, name))
        for mt, media in (resp.get("content") or {}).items():
            if "schema" in media:
                self.lint_schema(media["schema"], "%s %s" % (where, mt))

    def lint_schema(self, schema, where):
        if not isinstance(schema, dict):
            raise SpecError("%s: schema is not an object" % where)
        if "$ref" in schema:
            self.resolve(schema, where)  # dangling refs fail here; the target is linted itself
            return
        for key in schema:
            if key in ASSERTIONS or key in ANNOTATIONS or key.startswith("x-"):
                continue
            raise SpecError("%s: keyword %r is not implemented by the checker" % (where, key))
        if "type" in schema and schema["type"] not in TYPES:
            raise SpecError("%s: unknown type %r" % (where, schema["type"]))
        if "pattern" in schema:
            try:
                self.pattern(schema["pattern"])
            except re.error as exc:
                raise SpecError("%s: bad pattern %r: %s" % (where, schema["pattern"], exc))
        if "required" in schema and not isinstance(schema["required"], list):
            raise SpecError("%s: required must be a list" % where)
        if "enum" in schema:
            if not isinstance(schema["enum"], list) or not schema["enum"]:
                raise SpecError("%s: enum must be a non-empty list" % where)
            if None in schema["enum"] and not schema.get("nullable"):
                raise SpecError("%s: enum has null but the schema is not nullable" % where)
        for key in ("properties",):
            for name, sub in (schema.get(key) or {}).items():
                self.lint_schema(sub, "%s.%s" % (where, name))
        add = schema.get("additionalProperties")
        if isinstance(add, dict):
            self.lint_schema(add, where + ".additionalProperties")
        elif add is not None and not isinstance(add, bool):
            raise SpecError("%s: additionalProperties must be a boolean or a schema" % where)
        if "items" in schema:
            self.lint_schema(schema["items"], where + ".items")
        elif schema.get("type") == "array":
            raise SpecError("%s: array without items" % where)
        for key in ("allOf", "anyOf", "oneOf"):
            if key in schema:
                if not isinstance(schema[key], list) or not schema[key]:
                    raise SpecError("%s.%s must be a non-empty list" % (where, key))
                for i, sub in enumerate(schema[key]):
                    self.lint_schema(sub, "%s.%s[%d]" % (where, key, i))
        if "not" in schema:
            self.lint_schema(schema["not"], where + ".not")

    def pattern(self, text):
        rx = self.patterns.get(text)
        if rx is None:
            rx = self.patterns[text] = re.compile(text)
        return rx

    def schema(self, name):
        return {"$ref": "#/components/schemas/%s" % name}

    # ---- validation

    def validate(self, schema, value, path="$"):
        """Return a list of (json_path, message)."""
        errors = []
        self._validate(schema, value, path, errors)
        return errors

    def _validate(self, schema, value, path, errors):
        schema = self.resolve(schema, path)
        if value is None and schema.get("nullable") is True:
            return
        t = schema.get("type")
        if t is not None and not has_type(value, t):
            errors.append((path, "expected %s%s, got %s" % (
                t, " or null" if schema.get("nullable") else "", got(value))))
            return
        if "enum" in schema and not any(json_equal(value, e) for e in schema["enum"]):
            errors.append((path, "expected one of %s, got %s" % (
                short(schema["enum"], 200), got(value))))
        if isinstance(value, str):
            self._string(schema, value, path, errors)
        elif has_type(value, "number"):
            self._number(schema, value, path, errors)
        elif isinstance(value, list):
            self._array(schema, value, path, errors)
        elif isinstance(value, dict):
            self._object(schema, value, path, errors)
        self._combinators(schema, value, path, errors)

    def _string(self, schema, value, path, errors):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append((path, "expected length >= %d, got %s" % (schema["minLength"], got(value))))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append((path, "expected length <= %d, got length %d" % (schema["maxLength"], len(value))))
        if "pattern" in schema and not self.pattern(schema["pattern"]).search(value):
            errors.append((path, "expected a string matching /%s/, got %s" % (schema["pattern"], got(value))))
        if "format" in schema:
            reason = format_error(schema["format"], value)
            if reason:
                errors.append((path, "expected format %s, got %s (%s)" % (schema["format"], got(value), reason)))

    def _number(self, schema, value, path, errors):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None:
            if schema.get("exclusiveMinimum") is True and not value > lo:
                errors.append((path, "expected > %s, got %s" % (lo, got(value))))
            elif value < lo:
                errors.append((path, "expected >= %s, got %s" % (lo, got(value))))
        if hi is not None:
            if schema.get("exclusiveMaximum") is True and not value < hi:
                errors.append((path, "expected < %s, got %s" % (hi, got(value))))
            elif value > hi:
                errors.append((path, "expected <= %s, got %s" % (hi, got(value))))
        m = schema.get("multipleOf")
        if m and (value / m) != int(value / m):
            errors.append((path, "expected a multiple of %s, got %s" % (m, got(value))))

    def _array(self, schema, value, path, errors):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append((path, "expected >= %d items, got %d" % (schema["minItems"], len(value))))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append((path, "expected <= %d items, got %d" % (schema["maxItems"], len(value))))
        if schema.get("uniqueItems"):
            for i in range(len(value)):
                if any(json_equal(value[i], value[j]) for j in range(i)):
                    errors.append((child(path, i), "expected unique items, got a duplicate %s" % got(value[i])))
        if "items" in schema:
            for i, item in enumerate(value):
                self._validate(schema["items"], item, child(path, i), errors)

    def _object(self, schema, value, path, errors):
        props = schema.get("properties") or {}
        for name in schema.get("required", []):
            if name not in value:
                errors.append((child(path, name), "required property missing"))
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            errors.append((path, "expected >= %d properties, got %d" % (schema["minProperties"], len(value))))
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            errors.append((path, "expected <= %d properties, got %d" % (schema["maxProperties"], len(value))))
        add = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in props:
                self._validate(props[name], item, child(path, name), errors)
            elif add is False:
                errors.append((child(path, name), "unexpected property (additionalProperties: false; allowed: %s), got %s"
                               % (", ".join(sorted(props)) or "none", got(item))))
            elif isinstance(add, dict):
                self._validate(add, item, child(path, name), errors)

    def _combinators(self, schema, value, path, errors):
        for sub in schema.get("allOf", []):
            self._validate(sub, value, path, errors)
        if "anyOf" in schema:
            results = [self.validate(sub, value, path) for sub in schema["anyOf"]]
            if all(results):
                errors.append((path, "expected to match at least one anyOf branch; %s"
                               % self._branch_report(schema["anyOf"], results)))
        if "oneOf" in schema:
            results = [self.validate(sub, value, path) for sub in schema["oneOf"]]
            matched = [i for i, r in enumerate(results) if not r]
            if len(matched) != 1:
                if matched:
                    detail = "it matches %s" % ", ".join(self._branch_name(schema["oneOf"][i], i) for i in matched)
                else:
                    detail = self._branch_report(schema["oneOf"], results)
                errors.append((path, "expected to match exactly one oneOf branch, matched %d; %s"
                               % (len(matched), detail)))
        if "not" in schema and not self.validate(schema["not"], value, path):
            errors.append((path, "expected not to match %s" % self._branch_name(schema["not"], 0)))

    def _branch_name(self, sub, i):
        if "$ref" in sub:
            return sub["$ref"].rsplit("/", 1)[-1]
        if set(sub) <= {"required"} | ANNOTATIONS:
            return "{required: %s}" % ", ".join(sub["required"])
        return "branch %d" % (i + 1)

    def _branch_report(self, subs, results):
        parts = []
        for i, (sub, errs) in enumerate(zip(subs, results)):
            p, msg = errs[0]
            parts.append("%s fails at %s: %s" % (self._branch_name(sub, i), p, msg))
        return "; ".join(parts)

    # ---- operations

    def match(self, method, path):
        """Return (template, operation or None) for a concrete request path."""
        segs = path.split("/")[1:] if path.startswith("/") else None
        if segs is None:
            return None, None
        best = None
        for template, tsegs in self.templates:
            score = self._match_segments(tsegs, segs)
            if score is not None and (best is None or score > best[0]):
                best = (score, template)
        if best is None:
            return None, None
        template = best[1]
        op = self.doc["paths"][template].get(method.lower())
        return template, op

    @staticmethod
    def _match_segments(tsegs, segs):
        """None if no match, else a score: more literal segments win, greedy loses ties."""
        literals = 0
        for i, t in enumerate(tsegs):
            is_param = t.startswith("{") and t.endswith("}")
            last = i == len(tsegs) - 1
            if is_param and last and t == "{path}":
                rest = segs[i:]
                if not rest or any(s == "" for s in rest):
                    return None
                return (literals, 0)
            if i >= len(segs):
                return None
            if is_param:
                if segs[i] == "":
                    return None
            elif segs[i] != t:
                return None
            else:
                literals += 1
        if len(segs) != len(tsegs):
            return None
        return (literals, 1)

    def response_for(self, op, status):
        responses = {str(k): v for k, v in op["responses"].items()}
        for key in (str(status), "%dXX" % (status // 100), "default"):
            if key in responses:
                return key, self.resolve(responses[key])
        return None, None

    def error_schema(self):
        schemas = (self.doc.get("components") or {}).get("schemas") or {}
        if "Error" not in schemas:
            raise SpecError("components.schemas.Error is missing")
        return self.schema("Error")


# --------------------------------------------------------------------------- records

def base_media_type(ct):
    if not isinstance(ct, str):
        return None
    return ct.split(";", 1)[0].strip().lower() or None


def check_record(spec, rec):
    """Check one recorded response.

    Returns (operation key or None, failures [(json_path or "", message)], warnings [str]).
    """
    for key in ("method", "path", "status"):
        if key not in rec:
            return None, [("", "record has no %r" % key)], []
    method, status = rec["method"], rec["status"]
    if not isinstance(method, str) or not isinstance(rec["path"], str):
        return None, [("", "record method/path must be strings")], []
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        return None, [("", "record status must be an HTTP status integer, got %s" % got(status))], []
    path = urlsplit(rec["path"]).path if "://" in rec["path"] else rec["path"]
    path = path.split("?", 1)[0].split("#", 1)[0]
    body = rec.get("body")
    ctype = base_media_type(rec.get("content_type"))
    template, op = spec.match(method, path)

    if op is None:
        where = "undocumented %s %s" % (method.upper(), path if template is None else template)
        if status < 400:
            return None, [], ["%s answered %d (not an error, so not checked)" % (where, status)]
        return None, check_json(spec, spec.error_schema(), ctype, body, rec), []

    key = (method.upper(), template)
    rkey, resp = spec.response_for(op, status)
    if resp is None:
        listed = ", ".join(sorted(str(k) for k in op["responses"]))
        return key, [("", "status %d is not documented for %s %s (documented: %s)"
                      % (status, method.upper(), template, listed))], []
    content = resp.get("content") or {}
    if not content:
        return key, [], []
    if ctype not in content:
        return key, [("", "content type %s is not documented for %s %s -> %s (expected %s)"
                      % (short(rec.get("content_type")), method.upper(), template, rkey,
                         " or ".join(sorted(content))))], []
    if ctype == "application/json":
        return key, check_json(spec, content[ctype].get("schema", {}), ctype, body, rec), []
    return key, [], []


def check_json(spec, schema, ctype, body, rec):
    if ctype != "application/json":
        return [("", "expected content type application/json, got %s" % short(rec.get("content_type")))]
    if body is None:
        return [("", "expected a JSON body, got none or unparsable JSON (raw_len %s)" % rec.get("raw_len"))]
    return spec.validate(schema, body)


def describe(rec):
    path = rec.get("path") if isinstance(rec, dict) else None
    path = str(path)
    if len(path) > 120:
        path = path[:117] + "..."
    return "%s %s -> %s" % (rec.get("method"), path, rec.get("status"))


def run(spec, filename, out=sys.stdout):
    """Check a JSONL file; return the process exit status."""
    try:
        fh = open(filename, encoding="utf-8")
    except OSError as exc:
        print("openapi: %s" % exc, file=out)
        return 2
    checked = failures = 0
    exercised = set()
    warnings = []
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                failures += 1
                print("openapi: FAIL line %d: not a JSON record: %s" % (lineno, exc), file=out)
                continue
            if not isinstance(rec, dict):
                failures += 1
                print("openapi: FAIL line %d: record is not a JSON object" % lineno, file=out)
                continue
            checked += 1
            key, errs, warns = check_record(spec, rec)
            if key:
                exercised.add(key)
            for w in warns:
                warnings.append("line %d: %s" % (lineno, w))
            for i, (jpath, msg) in enumerate(errs):
                failures += 1
                if i < MAX_ERRORS_PER_RESPONSE:
                    at = "%s: " % jpath if jpath else ""
                    print("openapi: FAIL line %d: %s: %s%s" % (lineno, describe(rec), at, msg), file=out)
                elif i == MAX_ERRORS_PER_RESPONSE:
                    print("openapi: FAIL line %d: ... %d more mismatches in this response"
                          % (lineno, len(errs) - MAX_ERRORS_PER_RESPONSE), file=out)
    for w in warnings:
        print("openapi: warning: %s" % w, file=out)
    for method, template, op in spec.operations:
        if (method, template) not in exercised:
            print("openapi: warning: operation %s %s (%s) was not exercised by any recorded response"
                  % (method, template, op.get("operationId", "?")), file=out)
    print("openapi: %d responses checked, %d failures" % (checked, failures), file=out)
    if checked == 0:
        print("openapi: FAIL no responses recorded in %s" % filename, file=out)
        return 1
    return 1 if failures else 0


# --------------------------------------------------------------------------- self-test

JOB_ID = "01936b2c-7d4e-7a1b-9c3d-5e6f7a8b9c0d"
SHA = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def sample_job(**over):
    job = {
        "id": JOB_ID, "status": "queued",
        "created_at": "2026-11-29T10:00:00.123Z", "started_at": None, "finished_at": None,
        "identity": {"identity_namespace": "test", "tenant_id": "acme", "subject_type": "user",
                     "subject_id": "u-1", "actor_type": None, "actor_id": None},
        "command": "python3 main.py", "argv": None, "cwd": "",
        "limits": {"wall_seconds": 10, "cpu_seconds": 10, "memory_mb": 256, "pids": 64,
                   "output_bytes": 1048576, "disk_mb": 64},
        "network": False, "artifacts": "out", "metadata": {"ticket": "T-1"},
        "profile": None, "cancel_requested": False, "result": None, "failure": None,
    }
    job.update(over)
    return job


def sample_result(**over):
    res = {"exit_code": 0, "signal": None, "stdout": "1\n", "stderr": "",
           "stdout_truncated": False, "stderr_truncated": False,
           "stdout_bytes": 2, "stderr_bytes": 0, "stdout_inline_truncated": False,
           "stderr_inline_truncated": False, "diagnostics": [],
           "usage": {"wall_ms": 12, "cpu_ms": 9, "memory_peak_bytes": 2097152},
           "artifacts": [{"path": "out/a.txt", "size": 3, "sha256": SHA}]}
    res.update(over)
    return res


def finished_job(**over):
    job = sample_job(status="succeeded", started_at="2026-11-29T10:00:00.456Z",
                     finished_at="2026-11-29T10:00:01.000Z",
                     profile="sha256:" + SHA, result=sample_result())
    job.update(over)
    return job


def mutate(value, path, new=None, delete=False):
    """Deep copy of value with value[path...] replaced (or deleted)."""
    value = copy.deepcopy(value)
    node = value
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return value


def err(code, message="m", **extra):
    body = {"error": {"code": code, "message": message}}
    body["error"].update(extra)
    return body


def schema_cases():
    """(name, schema name, body, expect_valid, JSON path the failure must mention)."""
    J = finished_job()
    lost = finished_job(status="lost", result=sample_result(
        exit_code=125, diagnostics=["runner lost during execution"],
        usage={"wall_ms": None, "cpu_ms": None, "memory_peak_bytes": None}, artifacts=[]),
        failure={"stage": "execution", "instance_status": "unknown",
                 "runtime_id": "host-1/slot-0/0a1b2c3d", "cleanup_status": "unknown",
                 "cleanup_error": None, "error": "lease expired"})
    cleanup = finished_job(status="timed_out", result=sample_result(
        exit_code=124, diagnostics=["command timed out", "command process-group cleanup failed"]),
        failure={"stage": "cleanup", "instance_status": "exited",
                 "runtime_id": "host-1/slot-1/0a1b2c3d", "cleanup_status": "failed",
                 "cleanup_error": "workspace: not removed (EBUSY)",
                 "error": "workspace: not removed (EBUSY)"})
    b64 = finished_job(result=sample_result(stdout=None, stdout_base64="/wA=", stderr=None,
                                            stderr_base64="", exit_code=137, signal=9))
    del b64["result"]["stdout"], b64["result"]["stderr"]
    good = [
        ("queued job", "Job", sample_job(), True, None),
        ("succeeded job", "Job", J, True, None),
        ("running job with cancel_requested and actor", "Job", sample_job(
            status="running", started_at="2026-11-29T10:00:00.456Z", cancel_requested=True,
            command=None, argv=["echo", "hi"],
            identity={"identity_namespace": "test", "tenant_id": "acme", "subject_type": "user",
                      "subject_id": "u-1", "actor_type": "agent", "actor_id": "a-7"}), True, None),
        ("lost job with failure", "Job", lost, True, None),
        ("timed out job whose cleanup failed", "Job", cleanup, True, None),
        ("failure of an older row (no runtime_id, cleanup_error)", "Job",
         mutate(mutate(lost, ["failure", "runtime_id"], delete=True),
                ["failure", "cleanup_error"], delete=True), True, None),
        ("base64 output job", "Job", b64, True, None),
        ("job list", "JobList", {"jobs": [sample_job(), J], "next_cursor": "abc"}, True, None),
        ("empty last page", "JobList", {"jobs": [], "next_cursor": None}, True, None),
        ("error with field", "Error", err("invalid_request", field="limits.memory_mb"), True, None),
        ("error without field", "Error", err("not_found"), True, None),
        ("health", "Health", {"status": "ok", "database": "ok"}, True, None),
        ("job request from DESIGN.md", "JobRequest", {
            "command": "python3 main.py", "argv": None,
            "files": [{"path": "main.py", "content": "print(1)"},
                      {"path": "bin/tool", "content_base64": "AAAA", "executable": True}],
            "stdin": "", "env": {"LANG": "C.UTF-8"}, "cwd": "",
            "limits": {"wall_seconds": 10, "cpu_seconds": 10, "memory_mb": 256, "pids": 64,
                       "output_bytes": 1048576, "disk_mb": 64},
            "network": False, "artifacts": "out", "metadata": {"ticket": "T-1"}}, True, None),
    ]
    bad = [
        ("job with an unknown field", "Job", dict(J, env={"A": "b"}), "$.env"),
        ("job with status bogus", "Job", dict(J, status="bogus"), "$.status"),
        ("job without id", "Job", mutate(J, ["id"], delete=True), "$.id"),
        ("job with sequential id", "Job", dict(J, id="42"), "$.id"),
        ("job created_at without millis", "Job", dict(J, created_at="2026-11-29T10:00:00Z"), "$.created_at"),
        ("job created_at null", "Job", dict(J, created_at=None), "$.created_at"),
        ("job started_at impossible date", "Job", dict(J, started_at="2026-13-45T10:00:00.000Z"), "$.started_at"),
        ("exit_code as boolean", "Job", mutate(J, ["result", "exit_code"], False), "$.result.exit_code"),
        ("exit_code as float", "Job", mutate(J, ["result", "exit_code"], 0.0), "$.result.exit_code"),
        ("wall_ms as string", "Job", mutate(J, ["result", "usage", "wall_ms"], "12"), "$.result.usage.wall_ms"),
        ("usage missing cpu_ms", "Job", mutate(J, ["result", "usage", "cpu_ms"], delete=True), "$.result.usage.cpu_ms"),
        ("both stdout and stdout_base64", "Job", mutate(J, ["result", "stdout_base64"], "AA=="), "$.result"),
        ("neither stderr nor stderr_base64", "Job", mutate(J, ["result", "stderr"], delete=True), "$.result"),
        ("stdout_base64 not base64", "Job", mutate(mutate(J, ["result", "stdout"], delete=True),
                                                   ["result", "stdout_base64"], "%%%"), "$.result.stdout_base64"),
        ("diagnostics not strings", "Job", mutate(J, ["result", "diagnostics"], [1]), "$.result.diagnostics[0]"),
        ("artifact sha256 upper case", "Job", mutate(J, ["result", "artifacts", 0, "sha256"], SHA.upper()),
         "$.result.artifacts[0].sha256"),
        ("artifact absolute path", "Job", mutate(J, ["result", "artifacts", 0, "path"], "/etc/passwd"),
         "$.result.artifacts[0].path"),
        ("identity missing tenant_id", "Job", mutate(J, ["identity", "tenant_id"], delete=True), "$.identity.tenant_id"),
        ("identity with extra field", "Job", mutate(J, ["identity", "key_id"], "k"), "$.identity.key_id"),
        ("limits memory_mb string", "Job", mutate(J, ["limits", "memory_mb"], "256"), "$.limits.memory_mb"),
        ("limits memory_mb out of range", "Job", mutate(J, ["limits", "memory_mb"], 8), "$.limits.memory_mb"),
        ("limits missing pids", "Job", mutate(J, ["limits", "pids"], delete=True), "$.limits.pids"),
        ("metadata value not a string", "Job", mutate(J, ["metadata", "n"], 1), "$.metadata.n"),
        ("network null", "Job", dict(J, network=None), "$.network"),
        ("failure missing stage", "Job", mutate(lost, ["failure", "stage"], delete=True), "$.failure.stage"),
        ("failure runtime_id a number", "Job", mutate(lost, ["failure", "runtime_id"], 3),
         "$.failure.runtime_id"),
        ("failure with an unknown field", "Job", mutate(lost, ["failure", "slot"], 1),
         "$.failure.slot"),
        ("result as a string", "Job", dict(J, result="ok"), "$.result"),
        ("argv with a number", "Job", dict(J, argv=["echo", 1]), "$.argv[1]"),
        ("list without next_cursor", "JobList", {"jobs": []}, "$.next_cursor"),
        ("list with a bad job", "JobList", {"jobs": [dict(J, status="bogus")], "next_cursor": None},
         "$.jobs[0].status"),
        ("error without code", "Error", {"error": {"message": "m"}}, "$.error.code"),
        ("error with unknown code", "Error", err("teapot"), "$.error.code"),
        ("error with extra field", "Error", err("not_found", detail="x"), "$.error.detail"),
        ("error field not a string", "Error", err("invalid_request", field=3), "$.error.field"),
        ("error as a plain string", "Error", "Not Found", "$"),
        ("health database down", "Health", {"status": "ok", "database": "down"}, "$.database"),
        ("request with unknown field", "JobRequest", {"command": "true", "cmd": "x"}, "$.cmd"),
        ("request with stdin and stdin_base64", "JobRequest",
         {"command": "true", "stdin": "", "stdin_base64": ""}, "$"),
        ("request file with content and content_base64", "JobRequest",
         {"command": "true", "files": [{"path": "a", "content": "", "content_base64": ""}]}, "$.files[0]"),
        ("request limit out of range", "JobRequest", {"command": "true", "limits": {"wall_seconds": 0}},
         "$.limits.wall_seconds"),
    ]
    for name, schema, body, _, _ in good:
        yield name, schema, body, True, None
    for name, schema, body, where in bad:
        yield name, schema, body, False, where


def record_cases():
    """(name, record, expect_ok, substring the failure must mention)."""
    J = finished_job()
    q = sample_job()

    def rec(method, path, status, body, ctype="application/json"):
        return {"method": method, "path": path, "status": status, "content_type": ctype,
                "body": body, "raw_len": len(json.dumps(body))}
    jobs = "/v1/jobs/" + JOB_ID
    yield ("202 submit", rec("POST", "/v1/jobs", 202, q), True, None)
    yield ("200 long-poll", rec("GET", jobs + "?wait=5", 200, J), True, None)
    yield ("200 json with charset", rec("GET", jobs, 200, J, "application/json; charset=utf-8"), True, None)
    yield ("200 list", rec("GET", "/v1/jobs?limit=2&status=queued", 200, {"jobs": [q], "next_cursor": "x"}), True, None)
    yield ("200 cancel", rec("POST", jobs + "/cancel", 200, dict(q, status="cancelled")), True, None)
    yield ("200 artifacts", rec("GET", jobs + "/artifacts", 200, J["result"]["artifacts"]), True, None)
    yield ("200 artifact download with slashes", rec("GET", jobs + "/artifacts/out/sub/a.txt", 200, None,
                                                    "application/octet-stream"), True, None)
    yield ("200 health", rec("GET", "/v1/health", 200, {"status": "ok", "database": "ok"}), True, None)
    yield ("404 non-uuid id", rec("GET", "/v1/jobs/nope", 404, err("not_found")), True, None)
    yield ("404 artifact", rec("GET", jobs + "/artifacts/a/b", 404, err("not_found")), True, None)
    yield ("429 quota", rec("POST", "/v1/jobs", 429, err("quota_exceeded")), True, None)
    yield ("503 health", rec("GET", "/v1/health", 503, err("service_unavailable")), True, None)
    yield ("502 unknown path from nginx", rec("GET", "/nope", 502, err("bad_gateway")), True, None)
    yield ("405 wrong method", rec("DELETE", jobs, 405, err("method_not_allowed")), True, None)
    yield ("404 trailing slash", rec("GET", "/v1/jobs/", 404, err("not_found")), True, None)
    yield ("200 undocumented path is only a warning", rec("GET", "/", 200, None, "text/html"), True, None)

    yield ("status not documented", rec("GET", jobs, 409, err("conflict")), False, "409 is not documented")
    yield ("unknown path with HTML 404", rec("GET", "/v2/x", 404, None, "text/html"), False, "application/json")
    yield ("unknown path with non-Error JSON", rec("GET", "/v2/x", 404, {"message": "no"}), False, "$.error")
    yield ("wrong code for status", rec("GET", jobs, 404, err("invalid_request")), False, "$.error.code")
    yield ("download as JSON", rec("GET", jobs + "/artifacts/out/a.txt", 200, {"a": 1}), False,
           "application/octet-stream")
    yield ("JSON response without body", rec("GET", jobs, 200, None), False, "JSON body")
    yield ("JSON response as text/plain", rec("GET", jobs, 200, J, "text/plain"), False, "content type")
    yield ("artifacts wrapped in object", rec("GET", jobs + "/artifacts", 200, {"artifacts": []}), False,
           "expected array")
    yield ("error status from the API without a body", rec("POST", "/v1/jobs", 400, None), False, "JSON body")
    yield ("record without status", {"method": "GET", "path": "/v1/health"}, False, "status")
    yield ("status as a string", dict(rec("GET", "/v1/health", 200, {}), status="200"), False, "status")


def self_test(spec_file):
    try:
        spec = Spec.load(spec_file)
    except SpecError as exc:
        print("self-test: FAIL spec: %s" % exc)
        return 1
    cases = wrong = 0

    def bad(msg):
        nonlocal wrong
        wrong += 1
        print("self-test: WRONG %s" % msg)

    # 1. Every example in the spec's component schemas validates against its schema.
    for name, schema in spec.doc["components"]["schemas"].items():
        if "example" in schema:
            cases += 1
            errs = spec.validate(spec.schema(name), schema["example"])
            if errs:
                bad("example of %s rejected: %s: %s" % (name, errs[0][0], errs[0][1]))

    # 2. Schema-level good and bad bodies.
    for name, schema, body, expect_ok, where in schema_cases():
        cases += 1
        errs = spec.validate(spec.schema(schema), body)
        if expect_ok and errs:
            bad("%s: rejected: %s: %s" % (name, errs[0][0], errs[0][1]))
        elif not expect_ok and not errs:
            bad("%s: accepted, expected a failure at %s" % (name, where))
        elif not expect_ok and not any(p == where for p, _ in errs):
            bad("%s: failed, but not at %s: %s" % (name, where, errs))

    # 3. Record-level checks (path matching, status lists, content types).
    for name, rec, expect_ok, mention in record_cases():
        cases += 1
        _, errs, _ = check_record(spec, rec)
        text = " | ".join("%s %s" % e for e in errs)
        if expect_ok and errs:
            bad("record %s: rejected: %s" % (name, text))
        elif not expect_ok and not errs:
            bad("record %s: accepted, expected a failure mentioning %r" % (name, mention))
        elif not expect_ok and mention not in text:
            bad("record %s: failed, but without %r: %s" % (name, mention, text))

    # 4. The file-level driver: exit statuses.
    with tempfile.TemporaryDirectory() as tmp:
        def drive(lines, expect):
            nonlocal cases
            cases += 1
            fn = os.path.join(tmp, "r.jsonl")
            with open(fn, "w") as fh:
                fh.write("".join(lines))
            with open(os.devnull, "w") as null:
                rc = run(spec, fn, out=null)
            if rc != expect:
                bad("driver on %r: exit %d, expected %d" % ("".join(lines)[:80], rc, expect))
        good_line = json.dumps({"method": "GET", "path": "/v1/health", "status": 200,
                                "content_type": "application/json",
                                "body": {"status": "ok", "database": "ok"}, "raw_len": 31}) + "\n"
        drive([], 1)
        drive(["\n"], 1)
        drive([good_line], 0)
        drive([good_line, "not json\n"], 1)
        drive([good_line, good_line.replace('"ok"}', '"down"}')], 1)

    # 5. The lint refuses keywords the validator would silently ignore.
    cases += 1
    try:
        Spec({"openapi": "3.0.3", "paths": {}, "components": {"schemas": {
            "X": {"type": "object", "propertyNames": {"pattern": "^a"}}}}})
        bad("lint accepted an unsupported keyword")
    except SpecError:
        pass

    print("self-test: %d cases, %d wrong" % (cases, wrong))
    return 1 if wrong else 0


# --------------------------------------------------------------------------- main

def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    default_spec = os.path.join(here, "..", "docs", "openapi.yaml")
    if len(argv) >= 2 and argv[1] == "--self-test" and len(argv) <= 3:
        return self_test(argv[2] if len(argv) == 3 else default_spec)
    if len(argv) != 3 or argv[1].startswith("-"):
        print("usage: %s SPEC.yaml RESPONSES.jsonl\n       %s --self-test [SPEC.yaml]"
              % (argv[0], argv[0]), file=sys.stderr)
        return 2
    try:
        spec = Spec.load(argv[1])
        return run(spec, argv[2])
    except SpecError as exc:
        print("openapi: spec error: %s" % exc)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
