/*
 * mcpkit.json._speedups: the C implementation of mcpkit's strict bounded JSON codec.
 *
 * The contract is docs/design/json-codec.md; the pure-Python reference (_pyreader.py, _pywriter.py)
 * implements the same contract and the tests compare the two on every input they generate.
 *
 * Invariants this file owns:
 *   - Every limit is checked before the memory it guards is allocated: nesting before the
 *     container is read, node counts before the value is built, both UTF-16 unit counts of a
 *     string before the str object exists, the output size before a piece is appended.
 *   - Recursion depth is bounded by max_depth (at most 512, Limits enforces it), so the C
 *     stack is never at the mercy of the input.
 *   - A failure never carries input text: it is a reason code turned into
 *     ParseError(reason) / OutputError(reason) by the configured factories.
 *   - No Python-level code runs while a container is being read or written (types are
 *     created with their base tp_new/tp_alloc, numbers are formatted with the base type's
 *     slots), so application subclasses cannot observe or mutate a half-built value.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Reason codes; the names are exported as PARSE_REASONS / OUTPUT_REASONS, in this order. */
enum {
    P_BODY_SIZE, P_BOM, P_UTF8, P_SYNTAX, P_DEPTH, P_NODES, P_STRING_UNITS, P_TOKEN_UNITS,
    P_SURROGATE, P_DUPLICATE_MEMBER, P_NUMBER, P_COUNT
};
static const char *const parse_reason_names[P_COUNT] = {
    "BODY_SIZE", "BOM", "UTF8", "SYNTAX", "DEPTH", "NODES", "STRING_UNITS", "TOKEN_UNITS",
    "SURROGATE", "DUPLICATE_MEMBER", "NUMBER",
};
enum {
    O_SIZE, O_DEPTH, O_STRING_UNITS, O_TOKEN_UNITS, O_SURROGATE, O_NUMBER, O_TYPE,
    O_MEMBER_NAME, O_COUNT
};
static const char *const output_reason_names[O_COUNT] = {
    "SIZE", "DEPTH", "STRING_UNITS", "TOKEN_UNITS", "SURROGATE", "NUMBER", "TYPE",
    "MEMBER_NAME",
};

/* Integer spellings up to this many digits become int; longer ones an exact Decimal.  640 is
 * the smallest int_max_str_digits CPython accepts, so int() never refuses them. */
#define EAGER_INT_DIGITS 640
/* Exponents are limited to 9 significant digits, which keeps every number representable by
 * Decimal without consulting the context. */
#define MAX_EXPONENT_DIGITS 9
#define MAX_ADJUSTED_EXPONENT 999999999LL

/* Configured once by mcpkit.json._codec (configure()). */
static PyTypeObject *object_type;  /* JsonObject, a dict subclass */
static PyTypeObject *array_type;   /* JsonArray, a tuple subclass */
static PyTypeObject *decimal_type; /* decimal.Decimal */
static PyObject *parse_error;      /* ParseError class */
static PyObject *output_error;     /* OutputError class */
static PyObject *parse_reasons;    /* tuple of ParseFailure members, in parse_reason_names order */
static PyObject *output_reasons;   /* tuple of OutputFailure members */
static PyObject *empty_tuple;
static PyTypeObject *limits_type;  /* mcpkit.limits.Limits */
static PyObject *default_limits;   /* mcpkit.limits.DEFAULT_LIMITS */

/* Limits are read once per distinct Limits object and cached by identity. */
typedef struct {
    PyObject *owner;
    Py_ssize_t max_request_bytes, max_response_bytes, max_depth, max_nodes, max_string_units,
        max_token_units;
} LimitValues;
static LimitValues cached_limits;

static int
read_limit(PyObject *limits, const char *name, Py_ssize_t *out)
{
    PyObject *v = PyObject_GetAttrString(limits, name);
    if (v == NULL) {
        return -1;
    }
    *out = PyLong_AsSsize_t(v);
    Py_DECREF(v);
    if (*out == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (*out < 0) {
        PyErr_SetString(PyExc_ValueError, "limits must not be negative");
        return -1;
    }
    return 0;
}

static const LimitValues *
load_limits(PyObject *limits)
{
    LimitValues v;
    if (limits == cached_limits.owner) {
        return &cached_limits;
    }
    if (read_limit(limits, "max_request_bytes", &v.max_request_bytes) < 0 ||
        read_limit(limits, "max_response_bytes", &v.max_response_bytes) < 0 ||
        read_limit(limits, "max_json_depth", &v.max_depth) < 0 ||
        read_limit(limits, "max_json_nodes", &v.max_nodes) < 0 ||
        read_limit(limits, "max_string_units", &v.max_string_units) < 0 ||
        read_limit(limits, "max_token_units", &v.max_token_units) < 0) {
        return NULL;
    }
    if (v.max_depth > 512) {
        PyErr_SetString(PyExc_ValueError, "max_json_depth above 512");
        return NULL;
    }
    Py_INCREF(limits);
    Py_XSETREF(cached_limits.owner, limits);
    v.owner = limits;
    cached_limits = v;
    return &cached_limits;
}

static void
raise_reason(PyObject *error_class, PyObject *reasons, int reason)
{
    PyObject *exc = PyObject_CallOneArg(error_class, PyTuple_GET_ITEM(reasons, reason));
    if (exc != NULL) {
        PyErr_SetObject(error_class, exc);
        Py_DECREF(exc);
    }
}

/* ------------------------------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
    Py_ssize_t max_depth, max_nodes, max_string_units, max_token_units;
    Py_ssize_t nodes;
    Py_ssize_t depth;
    int reason; /* -1 while no parse failure has been recorded */
    /* array items waiting for their closing bracket */
    PyObject **stack;
    Py_ssize_t stack_len, stack_cap;
    /* unescaped string bytes */
    unsigned char *scratch;
    Py_ssize_t scratch_cap;
} Reader;

#define FAIL(r, code) ((r)->reason = (code), (PyObject *)NULL)

/* Byte classes inside a string: 0 = plain ASCII, copied as is. */
enum { SC_PLAIN = 0, SC_QUOTE, SC_BACKSLASH, SC_CONTROL, SC_CONT, SC_LEAD, SC_LEAD4 };
static unsigned char string_class[256];

static void
init_tables(void)
{
    int c;
    for (c = 0; c < 256; c++) {
        if (c < 0x20) {
            string_class[c] = SC_CONTROL;
        }
        else if (c == '"') {
            string_class[c] = SC_QUOTE;
        }
        else if (c == '\\') {
            string_class[c] = SC_BACKSLASH;
        }
        else if (c < 0x80) {
            string_class[c] = SC_PLAIN;
        }
        else if (c < 0xC0) {
            string_class[c] = SC_CONT;
        }
        else if (c < 0xF0) {
            string_class[c] = SC_LEAD;
        }
        else {
            string_class[c] = SC_LEAD4;
        }
    }
}

static int
hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

static int
hex4(const unsigned char *s)
{
    int a = hex_value(s[0]), b = hex_value(s[1]), c = hex_value(s[2]), d = hex_value(s[3]);
    if ((a | b | c | d) < 0) {
        return -1;
    }
    return (a << 12) | (b << 8) | (c << 4) | d;
}

/* Strict UTF-8 (RFC 3629): no overlongs, no surrogates, nothing above U+10FFFF. */
static int
utf8_valid(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) {
                return 0;
            }
            i += 2;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            unsigned char lo = 0x80, hi = 0xBF;
            if (c == 0xE0) {
                lo = 0xA0;
            }
            else if (c == 0xED) {
                hi = 0x9F;
            }
            if (i + 2 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xC0) != 0x80) {
                return 0;
            }
            i += 3;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            unsigned char lo = 0x80, hi = 0xBF;
            if (c == 0xF0) {
                lo = 0x90;
            }
            else if (c == 0xF4) {
                hi = 0x8F;
            }
            if (i + 3 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xC0) != 0x80 ||
                (s[i + 3] & 0xC0) != 0x80) {
                return 0;
            }
            i += 4;
        }
        else {
            return 0;
        }
    }
    return 1;
}

static PyObject *
ascii_str(const unsigned char *s, Py_ssize_t n)
{
    PyObject *str = PyUnicode_New(n, 127);
    if (str != NULL) {
        memcpy(PyUnicode_DATA(str), s, (size_t)n);
    }
    return str;
}

static int
ensure_scratch(Reader *r, Py_ssize_t n)
{
    if (n <= r->scratch_cap) {
        return 0;
    }
    unsigned char *grown = PyMem_Realloc(r->scratch, (size_t)n);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    r->scratch = grown;
    r->scratch_cap = n;
    return 0;
}

static unsigned char *
put_utf8(unsigned char *o, Py_UCS4 cp)
{
    if (cp < 0x80) {
        *o++ = (unsigned char)cp;
    }
    else if (cp < 0x800) {
        *o++ = (unsigned char)(0xC0 | (cp >> 6));
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    else if (cp < 0x10000) {
        *o++ = (unsigned char)(0xE0 | (cp >> 12));
        *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    else {
        *o++ = (unsigned char)(0xF0 | (cp >> 18));
        *o++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* Member names repeat across objects and requests ("jsonrpc", "params", "name", ...).  Short
 * plain ASCII names are shared through a small direct-mapped cache: a hit saves the
 * allocation and the hashing of the str.  Bounded: KEY_CACHE_SIZE entries of at most
 * KEY_CACHE_MAX_LEN characters. */
#define KEY_CACHE_SIZE 512
#define KEY_CACHE_MAX_LEN 32
static PyObject *key_cache[KEY_CACHE_SIZE];

static PyObject *
cached_name(const unsigned char *s, Py_ssize_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++) {
        h = (h ^ s[i]) * 16777619u;
    }
    PyObject **slot = &key_cache[(h ^ (uint32_t)n) % KEY_CACHE_SIZE];
    PyObject *hit = *slot;
    if (hit != NULL && PyUnicode_GET_LENGTH(hit) == n &&
        memcmp(PyUnicode_DATA(hit), s, (size_t)n) == 0) {
        return Py_NewRef(hit);
    }
    PyObject *name = ascii_str(s, n);
    if (name == NULL || PyObject_Hash(name) == -1) {
        Py_XDECREF(name);
        return NULL;
    }
    Py_XSETREF(*slot, Py_NewRef(name));
    return name;
}

/* r->p is at the opening quote.  Steps a-c of docs/design/json-codec.md §Decode 5. */
static PyObject *
read_string(Reader *r, int is_name)
{
    const unsigned char *s = r->p + 1, *q = s, *end = r->end;
    Py_ssize_t n_cont = 0, n_lead4 = 0, n_simple = 0, n_u = 0;
    int nonascii = 0;

    /* a. scan to the closing quote */
    for (;;) {
        while (q < end && string_class[*q] == SC_PLAIN) {
            q++;
        }
        if (q >= end) {
            return FAIL(r, P_SYNTAX);
        }
        switch (string_class[*q]) {
        case SC_QUOTE:
            goto scanned;
        case SC_BACKSLASH:
            if (q + 1 >= end) {
                return FAIL(r, P_SYNTAX);
            }
            switch (q[1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                n_simple++;
                q += 2;
                break;
            case 'u':
                if (end - q < 6 || hex4(q + 2) < 0) {
                    return FAIL(r, P_SYNTAX);
                }
                n_u++;
                q += 6;
                break;
            default:
                return FAIL(r, P_SYNTAX);
            }
            break;
        case SC_CONTROL:
            return FAIL(r, P_SYNTAX);
        case SC_CONT:
            nonascii = 1;
            n_cont++;
            q++;
            break;
        case SC_LEAD4:
            nonascii = 1;
            n_lead4++;
            q++;
            break;
        default: /* SC_LEAD */
            nonascii = 1;
            q++;
            break;
        }
    }
scanned:;
    Py_ssize_t raw_len = q - s;

    /* b. UTF-16 units of the spelling and of the decoded value, before any allocation */
    Py_ssize_t token_units = raw_len - n_cont + n_lead4;
    if (token_units > r->max_token_units) {
        return FAIL(r, P_TOKEN_UNITS);
    }
    if (token_units - n_simple - 5 * n_u > r->max_string_units) {
        return FAIL(r, P_STRING_UNITS);
    }

    /* c. decode */
    r->p = q + 1;
    if (n_simple == 0 && n_u == 0) {
        if (!nonascii) {
            if (is_name && raw_len <= KEY_CACHE_MAX_LEN) {
                return cached_name(s, raw_len);
            }
            return ascii_str(s, raw_len);
        }
        /* CPython's strict decoder refuses exactly what utf8_valid refuses */
        PyObject *text = PyUnicode_DecodeUTF8((const char *)s, raw_len, "strict");
        if (text == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyErr_Clear();
            return FAIL(r, P_UTF8);
        }
        return text;
    }
    if (nonascii && !utf8_valid(s, raw_len)) {
        return FAIL(r, P_UTF8);
    }
    if (ensure_scratch(r, raw_len) < 0) {
        return NULL;
    }
    unsigned char *o = r->scratch;
    int out_nonascii = nonascii;
    const unsigned char *c = s;
    while (c < q) {
        if (*c != '\\') {
            *o++ = *c++;
            continue;
        }
        unsigned char e = c[1];
        if (e != 'u') {
            switch (e) {
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            default: *o++ = e; break; /* " \ / */
            }
            c += 2;
            continue;
        }
        Py_UCS4 cp = (Py_UCS4)hex4(c + 2);
        c += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            int low = (q - c >= 6 && c[0] == '\\' && c[1] == 'u') ? hex4(c + 2) : -1;
            if (low < 0xDC00 || low > 0xDFFF) {
                return FAIL(r, P_SURROGATE);
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + ((Py_UCS4)low - 0xDC00);
            c += 6;
        }
        else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return FAIL(r, P_SURROGATE);
        }
        if (cp >= 0x80) {
            out_nonascii = 1;
        }
        o = put_utf8(o, cp);
    }
    if (!out_nonascii) {
        return ascii_str(r->scratch, o - r->scratch);
    }
    return PyUnicode_DecodeUTF8((const char *)r->scratch, o - r->scratch, "strict");
}

static int
is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static PyObject *
read_number(Reader *r)
{
    const unsigned char *start = r->p, *p = r->p, *end = r->end;
    int negative = 0, integral = 1;
    if (*p == '-') {
        negative = 1;
        p++;
    }
    const unsigned char *digits = p;
    if (p >= end || !is_digit(*p)) {
        return FAIL(r, P_SYNTAX);
    }
    if (*p == '0') {
        p++;
    }
    else {
        while (p < end && is_digit(*p)) {
            p++;
        }
    }
    Py_ssize_t n_digits = p - digits, n_frac = 0, n_lead_zeros = *digits == '0' ? 1 : 0;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p)) {
            return FAIL(r, P_SYNTAX);
        }
        const unsigned char *fraction = p;
        while (p < end && is_digit(*p)) {
            p++;
        }
        n_frac = p - fraction;
        if (n_lead_zeros) {
            const unsigned char *z = fraction;
            while (z < p && *z == '0') {
                z++;
            }
            n_lead_zeros += z - fraction;
        }
        integral = 0;
    }
    long long exponent = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int exp_negative = 0;
        if (p < end && (*p == '+' || *p == '-')) {
            exp_negative = *p == '-';
            p++;
        }
        if (p >= end || !is_digit(*p)) {
            return FAIL(r, P_SYNTAX);
        }
        while (p < end && *p == '0') {
            p++;
        }
        const unsigned char *significant = p;
        while (p < end && is_digit(*p)) {
            p++;
        }
        if (p - significant > MAX_EXPONENT_DIGITS) {
            return FAIL(r, P_NUMBER);
        }
        for (const unsigned char *d = significant; d < p; d++) {
            exponent = exponent * 10 + (*d - '0');
        }
        if (exp_negative) {
            exponent = -exponent;
        }
        integral = 0;
    }
    r->p = p;
    if (!integral) {
        /* The exponent str(Decimal) would write (Decimal.adjusted()) must fit 9 digits too,
         * so that every decoded number can be written and read again. */
        Py_ssize_t n_significant = n_digits + n_frac - n_lead_zeros;
        long long adjusted = exponent - n_frac + (n_significant > 0 ? n_significant - 1 : 0);
        if (adjusted > MAX_ADJUSTED_EXPONENT || adjusted < -MAX_ADJUSTED_EXPONENT) {
            return FAIL(r, P_NUMBER);
        }
    }
    else if (negative && n_digits == 1 && *digits == '0') {
        integral = 0; /* "-0" stays Decimal("-0"): an int would lose the sign */
    }
    if (integral && n_digits <= 18) {
        long long v = 0;
        for (const unsigned char *d = digits; d < p; d++) {
            v = v * 10 + (*d - '0');
        }
        return PyLong_FromLongLong(negative ? -v : v);
    }
    if (integral && n_digits <= EAGER_INT_DIGITS) {
        char buf[EAGER_INT_DIGITS + 2];
        Py_ssize_t n = p - start;
        memcpy(buf, start, (size_t)n);
        buf[n] = '\0';
        return PyLong_FromString(buf, NULL, 10);
    }
    PyObject *text = ascii_str(start, p - start);
    if (text == NULL) {
        return NULL;
    }
    PyObject *number = PyObject_CallOneArg((PyObject *)decimal_type, text);
    Py_DECREF(text);
    return number;
}

static void
skip_ws(Reader *r)
{
    const unsigned char *p = r->p, *end = r->end;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
        p++;
    }
    r->p = p;
}

static int
match_literal(Reader *r, const char *word, Py_ssize_t n)
{
    if (r->end - r->p < n || memcmp(r->p, word, (size_t)n) != 0) {
        return 0;
    }
    r->p += n;
    return 1;
}

static PyObject *read_value(Reader *r);

static int
push_item(Reader *r, PyObject *item)
{
    if (r->stack_len == r->stack_cap) {
        Py_ssize_t cap = r->stack_cap ? r->stack_cap * 2 : 64;
        PyObject **grown = PyMem_Realloc(r->stack, (size_t)cap * sizeof(PyObject *));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        r->stack = grown;
        r->stack_cap = cap;
    }
    r->stack[r->stack_len++] = item;
    return 0;
}

static PyObject *
read_array(Reader *r)
{
    Py_ssize_t base = r->stack_len;
    r->p++; /* [ */
    skip_ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
    }
    else {
        for (;;) {
            PyObject *item = read_value(r);
            if (item == NULL) {
                return NULL; /* items on the stack are released by decode() */
            }
            if (push_item(r, item) < 0) {
                Py_DECREF(item);
                return NULL;
            }
            skip_ws(r);
            if (r->p < r->end && *r->p == ',') {
                r->p++;
                skip_ws(r);
                continue;
            }
            if (r->p < r->end && *r->p == ']') {
                r->p++;
                break;
            }
            return FAIL(r, P_SYNTAX);
        }
    }
    Py_ssize_t n = r->stack_len - base;
    PyObject *array = array_type->tp_alloc(array_type, n);
    if (array == NULL) {
        return NULL;
    }
    if (n > 0) {
        memcpy(&PyTuple_GET_ITEM(array, 0), r->stack + base, (size_t)n * sizeof(PyObject *));
    }
    r->stack_len = base;
    return array;
}

static PyObject *
read_object(Reader *r)
{
    PyObject *object = object_type->tp_new(object_type, empty_tuple, NULL);
    if (object == NULL) {
        return NULL;
    }
    r->p++; /* { */
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return object;
    }
    for (;;) {
        if (r->p >= r->end || *r->p != '"') {
            goto syntax;
        }
        PyObject *name = read_string(r, 1);
        if (name == NULL) {
            goto fail;
        }
        int seen = PyDict_Contains(object, name);
        if (seen != 0) {
            Py_DECREF(name);
            if (seen > 0) {
                r->reason = P_DUPLICATE_MEMBER;
            }
            goto fail;
        }
        skip_ws(r);
        if (r->p >= r->end || *r->p != ':') {
            Py_DECREF(name);
            goto syntax;
        }
        r->p++;
        skip_ws(r);
        PyObject *member = read_value(r);
        if (member == NULL) {
            Py_DECREF(name);
            goto fail;
        }
        int rc = PyDict_SetItem(object, name, member);
        Py_DECREF(name);
        Py_DECREF(member);
        if (rc < 0) {
            goto fail;
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return object;
        }
        goto syntax;
    }
syntax:
    r->reason = P_SYNTAX;
fail:
    Py_DECREF(object);
    return NULL;
}

/* The caller has skipped whitespace. */
static PyObject *
read_value(Reader *r)
{
    if (r->p >= r->end) {
        return FAIL(r, P_SYNTAX);
    }
    unsigned char c = *r->p;
    int starts_value = c == '{' || c == '[' || c == '"' || c == 't' || c == 'f' || c == 'n' ||
                       c == '-' || is_digit(c);
    if (!starts_value) {
        return FAIL(r, P_SYNTAX);
    }
    if (++r->nodes > r->max_nodes) {
        return FAIL(r, P_NODES);
    }
    switch (c) {
    case '{':
    case '[': {
        if (r->depth >= r->max_depth) {
            return FAIL(r, P_DEPTH);
        }
        r->depth++;
        PyObject *v = c == '[' ? read_array(r) : read_object(r);
        r->depth--;
        return v;
    }
    case '"':
        return read_string(r, 0);
    case 't':
        return match_literal(r, "true", 4) ? Py_NewRef(Py_True) : FAIL(r, P_SYNTAX);
    case 'f':
        return match_literal(r, "false", 5) ? Py_NewRef(Py_False) : FAIL(r, P_SYNTAX);
    case 'n':
        return match_literal(r, "null", 4) ? Py_NewRef(Py_None) : FAIL(r, P_SYNTAX);
    default:
        return read_number(r);
    }
}

/* Both entry points take one positional argument and an optional keyword-only `limits`. */
static const LimitValues *
parse_call(const char *fname, Py_ssize_t nargs, PyObject *const *args, PyObject *kwnames)
{
    if (object_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "mcpkit.json._speedups is not configured");
        return NULL;
    }
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly one positional argument", fname);
        return NULL;
    }
    PyObject *limits = default_limits;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        if (PyTuple_GET_SIZE(kwnames) != 1 ||
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "limits") != 0) {
            PyErr_Format(PyExc_TypeError, "%s() accepts only the keyword argument 'limits'",
                         fname);
            return NULL;
        }
        limits = args[1];
    }
    if (!PyObject_TypeCheck(limits, limits_type)) {
        PyErr_Format(PyExc_TypeError, "%s(): limits must be a mcpkit.Limits", fname);
        return NULL;
    }
    return load_limits(limits);
}

/* decode(data, *, limits=DEFAULT_LIMITS) -> value */
static PyObject *
speedups_decode(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    const LimitValues *limits = parse_call("decode", nargs, args, kwnames);
    if (limits == NULL) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        /* a non-contiguous memoryview: read a contiguous copy, as the reference does */
        if (!PyErr_ExceptionMatches(PyExc_BufferError) || !PyMemoryView_Check(args[0])) {
            return NULL;
        }
        PyErr_Clear();
        if (PyMemoryView_GET_BUFFER(args[0])->len > limits->max_request_bytes) {
            raise_reason(parse_error, parse_reasons, P_BODY_SIZE);
            return NULL;
        }
        PyObject *copy = PyBytes_FromObject(args[0]);
        if (copy == NULL) {
            return NULL;
        }
        int rc = PyObject_GetBuffer(copy, &view, PyBUF_SIMPLE);
        Py_DECREF(copy); /* the view keeps its own reference */
        if (rc < 0) {
            return NULL;
        }
    }
    PyObject *result = NULL;
    Reader r = {0};
    r.p = view.buf;
    r.end = r.p + view.len;
    r.max_depth = limits->max_depth;
    r.max_nodes = limits->max_nodes;
    r.max_string_units = limits->max_string_units;
    r.max_token_units = limits->max_token_units;
    r.reason = -1;

    if (view.len > limits->max_request_bytes) {
        r.reason = P_BODY_SIZE;
    }
    else if (view.len >= 3 && r.p[0] == 0xEF && r.p[1] == 0xBB && r.p[2] == 0xBF) {
        r.reason = P_BOM;
    }
    else {
        skip_ws(&r);
        result = read_value(&r);
        if (result != NULL) {
            skip_ws(&r);
            if (r.p != r.end) {
                Py_CLEAR(result);
                r.reason = P_SYNTAX;
            }
        }
    }
    for (Py_ssize_t i = 0; i < r.stack_len; i++) {
        Py_DECREF(r.stack[i]);
    }
    PyMem_Free(r.stack);
    PyMem_Free(r.scratch);
    PyBuffer_Release(&view);
    if (result == NULL && r.reason >= 0) {
        if (PyErr_Occurred()) {
            PyErr_Clear();
        }
        raise_reason(parse_error, parse_reasons, r.reason);
    }
    return result;
}

/* ------------------------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
    Py_ssize_t max_bytes, max_depth, max_string_units, max_token_units;
    Py_ssize_t depth;
    int reason;
} Writer;

#define WFAIL(w, code) ((w)->reason = (code), -1)

/* Make room for n more bytes, or fail with SIZE if the output would pass the limit.  The
 * buffer never grows beyond the limit, so memory is bounded by it. */
static int
reserve(Writer *w, Py_ssize_t n)
{
    if (n > w->max_bytes - w->len) {
        return WFAIL(w, O_SIZE);
    }
    Py_ssize_t need = w->len + n;
    if (need <= w->cap) {
        return 0;
    }
    Py_ssize_t cap = w->cap * 2;
    if (cap < need) {
        cap = need;
    }
    if (cap > w->max_bytes) {
        cap = w->max_bytes;
    }
    char *grown = PyMem_Realloc(w->buf, (size_t)cap);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    w->buf = grown;
    w->cap = cap;
    return 0;
}

static int
append(Writer *w, const char *s, Py_ssize_t n)
{
    if (reserve(w, n) < 0) {
        return -1;
    }
    memcpy(w->buf + w->len, s, (size_t)n);
    w->len += n;
    return 0;
}

static int
append_byte(Writer *w, char c)
{
    if (w->len < w->cap && w->len < w->max_bytes) {
        w->buf[w->len++] = c;
        return 0;
    }
    return append(w, &c, 1);
}

static const char hex_digits[] = "0123456789abcdef";

/* Short escapes of the seed's table; 0 means "\u00XX". */
static char short_escape(Py_UCS4 c)
{
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '\n': return 'n';
    case '\t': return 't';
    case '\r': return 'r';
    case '\b': return 'b';
    case '\f': return 'f';
    default: return 0;
    }
}

static int
write_string(Writer *w, PyObject *str)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(str);
    int kind = PyUnicode_KIND(str);
    const void *data = PyUnicode_DATA(str);
    Py_ssize_t token_units = 0, astral = 0, out_bytes = 0;
    int surrogate = 0;

    /* analyse the whole string first: the failure order is SURROGATE, TOKEN_UNITS,
     * STRING_UNITS, then SIZE for the complete quoted spelling */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x80) {
            Py_ssize_t units = c >= 0x20 && c != '"' && c != '\\' ? 1
                               : short_escape(c)                ? 2
                                                                : 6;
            token_units += units;
            out_bytes += units;
        }
        else if (c < 0x800) {
            token_units += 1;
            out_bytes += 2;
        }
        else if (c < 0x10000) {
            if (c >= 0xD800 && c <= 0xDFFF) {
                surrogate = 1;
            }
            token_units += 1;
            out_bytes += 3;
        }
        else {
            token_units += 2;
            astral++;
            out_bytes += 4;
        }
    }
    if (surrogate) {
        return WFAIL(w, O_SURROGATE);
    }
    if (token_units > w->max_token_units) {
        return WFAIL(w, O_TOKEN_UNITS);
    }
    if (n + astral > w->max_string_units) {
        return WFAIL(w, O_STRING_UNITS);
    }
    if (reserve(w, out_bytes + 2) < 0) {
        return -1;
    }
    char *o = w->buf + w->len;
    *o++ = '"';
    if (out_bytes == n && PyUnicode_IS_ASCII(str)) {
        memcpy(o, data, (size_t)n);
        o += n;
    }
    else {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c >= 0x20 && c != '"' && c != '\\') {
                o = (char *)put_utf8((unsigned char *)o, c);
                continue;
            }
            char e = short_escape(c);
            *o++ = '\\';
            if (e) {
                *o++ = e;
            }
            else {
                *o++ = 'u';
                *o++ = '0';
                *o++ = '0';
                *o++ = hex_digits[c >> 4];
                *o++ = hex_digits[c & 0xF];
            }
        }
    }
    *o++ = '"';
    w->len = o - w->buf;
    return 0;
}

/* Append str(number) if it spells a finite JSON number. */
static int
write_number_text(Writer *w, PyObject *text)
{
    if (text == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            return WFAIL(w, O_NUMBER);
        }
        return -1;
    }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    int rc;
    if (s == NULL) {
        rc = -1;
    }
    else {
        /* finite numbers start with a digit; the exponent must be readable (9 digits) */
        Py_ssize_t i = s[0] == '-' ? 1 : 0, mark = n;
        for (Py_ssize_t k = 0; k < n; k++) {
            if (s[k] == 'E' || s[k] == 'e') {
                mark = k;
            }
        }
        int ok = i < n && is_digit((unsigned char)s[i]) &&
                 (mark == n || n - mark - 2 <= MAX_EXPONENT_DIGITS);
        rc = ok ? append(w, s, n) : WFAIL(w, O_NUMBER);
    }
    Py_DECREF(text);
    return rc;
}

static int write_value(Writer *w, PyObject *v);

static int
enter(Writer *w, char open)
{
    if (w->depth >= w->max_depth) {
        return WFAIL(w, O_DEPTH);
    }
    w->depth++;
    return append_byte(w, open);
}

static int
write_array(Writer *w, PyObject *seq)
{
    if (enter(w, '[') < 0) {
        return -1;
    }
    /* PyList items are re-read each turn: nothing here runs Python code, but the list could
     * only shrink under us if it did, and then we must not read past its end */
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        if (i > 0 && append_byte(w, ',') < 0) {
            return -1;
        }
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_INCREF(item);
        int rc = write_value(w, item);
        Py_DECREF(item);
        if (rc < 0) {
            return -1;
        }
    }
    w->depth--;
    return append_byte(w, ']');
}

static int
write_object(Writer *w, PyObject *dict)
{
    if (enter(w, '{') < 0) {
        return -1;
    }
    Py_ssize_t pos = 0, i = 0;
    PyObject *name, *member;
    while (PyDict_Next(dict, &pos, &name, &member)) {
        if (i++ > 0 && append_byte(w, ',') < 0) {
            return -1;
        }
        if (!PyUnicode_Check(name)) {
            return WFAIL(w, O_MEMBER_NAME);
        }
        Py_INCREF(name);
        Py_INCREF(member);
        int rc = write_string(w, name);
        if (rc == 0) {
            rc = append_byte(w, ':');
        }
        if (rc == 0) {
            rc = write_value(w, member);
        }
        Py_DECREF(name);
        Py_DECREF(member);
        if (rc < 0) {
            return -1;
        }
    }
    w->depth--;
    return append_byte(w, '}');
}

static int
write_value(Writer *w, PyObject *v)
{
    if (v == Py_None) {
        return append(w, "null", 4);
    }
    if (v == Py_True) {
        return append(w, "true", 4);
    }
    if (v == Py_False) {
        return append(w, "false", 5);
    }
    if (PyUnicode_Check(v)) {
        return write_string(w, v);
    }
    if (PyLong_Check(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (!overflow) {
            char buf[24];
            int n = snprintf(buf, sizeof buf, "%lld", x);
            return append(w, buf, n);
        }
        return write_number_text(w, PyLong_Type.tp_repr(v));
    }
    if (PyDict_Check(v)) {
        return write_object(w, v);
    }
    if (PyList_Check(v) || PyTuple_Check(v)) {
        return write_array(w, v);
    }
    if (PyFloat_Check(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        if (!Py_IS_FINITE(x)) {
            return WFAIL(w, O_NUMBER);
        }
        return write_number_text(w, PyFloat_Type.tp_repr(v));
    }
    if (PyObject_TypeCheck(v, decimal_type)) {
        return write_number_text(w, decimal_type->tp_str(v));
    }
    return WFAIL(w, O_TYPE);
}

/* encode(value, *, limits=DEFAULT_LIMITS) -> bytes */
static PyObject *
speedups_encode(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    const LimitValues *limits = parse_call("encode", nargs, args, kwnames);
    if (limits == NULL) {
        return NULL;
    }
    Writer w = {0};
    w.max_bytes = limits->max_response_bytes;
    w.max_depth = limits->max_depth;
    w.max_string_units = limits->max_string_units;
    w.max_token_units = limits->max_token_units;
    w.reason = -1;
    w.cap = w.max_bytes < 256 ? w.max_bytes : 256;
    w.buf = PyMem_Malloc(w.cap > 0 ? (size_t)w.cap : 1);
    if (w.buf == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *result = NULL;
    if (write_value(&w, args[0]) == 0) {
        result = PyBytes_FromStringAndSize(w.buf, w.len);
    }
    else if (w.reason >= 0) {
        if (PyErr_Occurred()) {
            PyErr_Clear();
        }
        raise_reason(output_error, output_reasons, w.reason);
    }
    PyMem_Free(w.buf);
    return result;
}

/* ------------------------------------------------------------------------------------------
 * Module
 * ---------------------------------------------------------------------------------------- */

static PyObject *
speedups_configure(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *obj, *arr, *dec, *perr, *oerr, *preasons, *oreasons, *ltype, *ldefault;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO!O!O!O:configure", &PyType_Type, &obj, &PyType_Type,
                          &arr, &PyType_Type, &dec, &perr, &oerr, &PyTuple_Type, &preasons,
                          &PyTuple_Type, &oreasons, &PyType_Type, &ltype, &ldefault)) {
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)obj, &PyDict_Type) ||
        !PyType_IsSubtype((PyTypeObject *)arr, &PyTuple_Type) ||
        PyTuple_GET_SIZE(preasons) != P_COUNT || PyTuple_GET_SIZE(oreasons) != O_COUNT) {
        PyErr_SetString(PyExc_TypeError, "configure(): unexpected types");
        return NULL;
    }
    Py_XSETREF(object_type, (PyTypeObject *)Py_NewRef(obj));
    Py_XSETREF(array_type, (PyTypeObject *)Py_NewRef(arr));
    Py_XSETREF(decimal_type, (PyTypeObject *)Py_NewRef(dec));
    Py_XSETREF(parse_error, Py_NewRef(perr));
    Py_XSETREF(output_error, Py_NewRef(oerr));
    Py_XSETREF(parse_reasons, Py_NewRef(preasons));
    Py_XSETREF(output_reasons, Py_NewRef(oreasons));
    Py_XSETREF(limits_type, (PyTypeObject *)Py_NewRef(ltype));
    Py_XSETREF(default_limits, Py_NewRef(ldefault));
    Py_RETURN_NONE;
}

static PyMethodDef speedups_methods[] = {
    {"decode", (PyCFunction)(void (*)(void))speedups_decode, METH_FASTCALL | METH_KEYWORDS,
     "decode(data, *, limits=DEFAULT_LIMITS) -> JSON value"},
    {"encode", (PyCFunction)(void (*)(void))speedups_encode, METH_FASTCALL | METH_KEYWORDS,
     "encode(value, *, limits=DEFAULT_LIMITS) -> bytes"},
    {"configure", speedups_configure, METH_VARARGS,
     "configure(object_type, array_type, decimal_type, parse_error, output_error, "
     "parse_reasons, output_reasons, limits_type, default_limits)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT, "mcpkit.json._speedups",
    "C implementation of mcpkit's strict bounded JSON codec.", -1, speedups_methods,
    NULL, NULL, NULL, NULL,
};

static PyObject *
names_tuple(const char *const *names, int n)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(names[i]);
        if (s == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

PyMODINIT_FUNC
PyInit__speedups(void)
{
    init_tables();
    empty_tuple = PyTuple_New(0);
    if (empty_tuple == NULL) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&speedups_module);
    if (m == NULL) {
        return NULL;
    }
    PyObject *p = names_tuple(parse_reason_names, P_COUNT);
    PyObject *o = names_tuple(output_reason_names, O_COUNT);
    if (p == NULL || o == NULL || PyModule_AddObject(m, "PARSE_REASONS", p) < 0) {
        Py_XDECREF(p);
        Py_XDECREF(o);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddObject(m, "OUTPUT_REASONS", o) < 0) {
        Py_DECREF(o);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
