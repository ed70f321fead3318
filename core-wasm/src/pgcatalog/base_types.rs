//! The types RockLake has, as `pg_type` lists them (OIDs, array types, I/O functions).

use super::*;

pub(super) struct BaseType {
    pub(super) oid: u32,
    pub(super) name: &'static str,
    pub(super) len: i16,
    pub(super) byval: bool,
    /// `'b'` base or `'p'` pseudo.
    pub(super) kind: char,
    pub(super) category: char,
    pub(super) preferred: bool,
    pub(super) elem: u32,
    pub(super) array: u32,
    pub(super) align: char,
    pub(super) storage: char,
    pub(super) collation: u32,
    pub(super) input: &'static str,
    pub(super) modin: &'static str,
}

#[allow(clippy::too_many_arguments)]
pub(super) const fn bt(
    oid: u32,
    name: &'static str,
    len: i16,
    byval: bool,
    category: char,
    preferred: bool,
    array: u32,
    align: char,
    storage: char,
    collation: u32,
    input: &'static str,
    modin: &'static str,
) -> BaseType {
    BaseType {
        oid,
        name,
        len,
        byval,
        kind: 'b',
        category,
        preferred,
        elem: 0,
        array,
        align,
        storage,
        collation,
        input,
        modin,
    }
}

/// The base types behind every [`PgType`], with PostgreSQL 15's pg_type data.
pub(super) const BASE_TYPES: &[BaseType] = &[
    bt(
        16, "bool", 1, true, 'B', true, 1000, 'c', 'p', 0, "boolin", "-",
    ),
    bt(
        17, "bytea", -1, false, 'U', false, 1001, 'i', 'x', 0, "byteain", "-",
    ),
    bt(
        18, "char", 1, true, 'Z', false, 1002, 'c', 'p', 0, "charin", "-",
    ),
    BaseType {
        elem: 18,
        ..bt(
            19,
            "name",
            64,
            false,
            'S',
            false,
            1003,
            'c',
            'p',
            C_COLLATION_OID,
            "namein",
            "-",
        )
    },
    bt(
        20, "int8", 8, true, 'N', false, 1016, 'd', 'p', 0, "int8in", "-",
    ),
    bt(
        21, "int2", 2, true, 'N', false, 1005, 's', 'p', 0, "int2in", "-",
    ),
    bt(
        23, "int4", 4, true, 'N', false, 1007, 'i', 'p', 0, "int4in", "-",
    ),
    bt(
        25,
        "text",
        -1,
        false,
        'S',
        true,
        1009,
        'i',
        'x',
        DEFAULT_COLLATION_OID,
        "textin",
        "-",
    ),
    bt(
        26, "oid", 4, true, 'N', true, 1028, 'i', 'p', 0, "oidin", "-",
    ),
    bt(
        27, "tid", 6, false, 'U', false, 1010, 's', 'p', 0, "tidin", "-",
    ),
    bt(
        28, "xid", 4, true, 'U', false, 1011, 'i', 'p', 0, "xidin", "-",
    ),
    // The type of the system columns `cmin` and `cmax` (`pg_attribute`); no value has it.
    bt(
        29, "cid", 4, true, 'U', false, 1012, 'i', 'p', 0, "cidin", "-",
    ),
    bt(
        869, "inet", -1, false, 'I', true, 1041, 'i', 'm', 0, "inet_in", "-",
    ),
    bt(
        700, "float4", 4, true, 'N', false, 1021, 'i', 'p', 0, "float4in", "-",
    ),
    bt(
        701, "float8", 8, true, 'N', true, 1022, 'd', 'p', 0, "float8in", "-",
    ),
    BaseType {
        kind: 'p',
        ..bt(
            705,
            "unknown",
            -2,
            false,
            'X',
            false,
            0,
            'c',
            'p',
            0,
            "unknownin",
            "-",
        )
    },
    BaseType {
        kind: 'p',
        ..bt(
            2278, "void", 4, true, 'P', false, 0, 'i', 'p', 0, "void_in", "-",
        )
    },
    // An anonymous row (`_pg_expandarray`'s result); its array `_record` is a pseudo-type too.
    BaseType {
        kind: 'p',
        ..bt(
            2249,
            "record",
            -1,
            false,
            'P',
            false,
            2287,
            'd',
            'x',
            0,
            "record_in",
            "-",
        )
    },
    bt(
        1042,
        "bpchar",
        -1,
        false,
        'S',
        false,
        1014,
        'i',
        'x',
        DEFAULT_COLLATION_OID,
        "bpcharin",
        "bpchartypmodin",
    ),
    bt(
        1043,
        "varchar",
        -1,
        false,
        'S',
        false,
        1015,
        'i',
        'x',
        DEFAULT_COLLATION_OID,
        "varcharin",
        "varchartypmodin",
    ),
    bt(
        1082, "date", 4, true, 'D', false, 1182, 'i', 'p', 0, "date_in", "-",
    ),
    bt(
        1083,
        "time",
        8,
        true,
        'D',
        false,
        1183,
        'd',
        'p',
        0,
        "time_in",
        "timetypmodin",
    ),
    bt(
        1114,
        "timestamp",
        8,
        true,
        'D',
        false,
        1115,
        'd',
        'p',
        0,
        "timestamp_in",
        "timestamptypmodin",
    ),
    bt(
        1184,
        "timestamptz",
        8,
        true,
        'D',
        true,
        1185,
        'd',
        'p',
        0,
        "timestamptz_in",
        "timestamptztypmodin",
    ),
    bt(
        1186,
        "interval",
        16,
        false,
        'T',
        true,
        1187,
        'd',
        'p',
        0,
        "interval_in",
        "intervaltypmodin",
    ),
    bt(
        1700,
        "numeric",
        -1,
        false,
        'N',
        false,
        1231,
        'i',
        'm',
        0,
        "numeric_in",
        "numerictypmodin",
    ),
    bt(
        2205,
        "regclass",
        4,
        true,
        'N',
        false,
        2210,
        'i',
        'p',
        0,
        "regclassin",
        "-",
    ),
    bt(
        2206,
        "regtype",
        4,
        true,
        'N',
        false,
        2211,
        'i',
        'p',
        0,
        "regtypein",
        "-",
    ),
    bt(
        4089,
        "regnamespace",
        4,
        true,
        'N',
        false,
        4090,
        'i',
        'p',
        0,
        "regnamespacein",
        "-",
    ),
    bt(
        2950, "uuid", 16, false, 'U', false, 2951, 'c', 'p', 0, "uuid_in", "-",
    ),
    // Their array types (`_regproc`, `_int2vector`) are not listed: RockLake has none.
    bt(
        24,
        "regproc",
        4,
        true,
        'N',
        false,
        0,
        'i',
        'p',
        0,
        "regprocin",
        "-",
    ),
    bt(
        114, "json", -1, false, 'U', false, 0, 'i', 'x', 0, "json_in", "-",
    ),
    vector(22, "int2vector", 21, "int2vectorin"),
    vector(30, "oidvector", 26, "oidvectorin"),
];

/// `int2vector` / `oidvector`: arrays of `elem` written with spaces (no array type of their
/// own here).
pub(super) const fn vector(
    oid: u32,
    name: &'static str,
    elem: u32,
    input: &'static str,
) -> BaseType {
    BaseType {
        elem,
        ..bt(oid, name, -1, false, 'A', false, 0, 'i', 'p', 0, input, "-")
    }
}

/// The name `format_type` gives a type `pg_type` lists that no [`PgType`] is (`cid`, arrays
/// such as `_cid` and `_record`: `cid[]`, `record[]`).
pub fn other_type_name(oid: u32) -> Option<String> {
    match base_type(oid) {
        Some(bt) => Some(bt.name.to_string()),
        None => BASE_TYPES
            .iter()
            .find(|bt| bt.array == oid)
            .map(|bt| format!("{}[]", bt.name)),
    }
}

/// The OID of a type [`other_type_name`] names.
pub fn other_type_oid(name: &str) -> Option<u32> {
    match name.strip_suffix("[]") {
        Some(elem) => BASE_TYPES
            .iter()
            .find(|bt| bt.name == elem && bt.array != 0)
            .map(|bt| bt.array),
        None => BASE_TYPES
            .iter()
            .find(|bt| bt.name == name)
            .map(|bt| bt.oid),
    }
}

pub(super) fn base_type(oid: u32) -> Option<&'static BaseType> {
    BASE_TYPES.iter().find(|b| b.oid == oid)
}

/// Storage facts of a type: (byval, align, storage, collation); arrays are varlena.
pub(super) fn type_facts(ty: PgType) -> (bool, char, char, u32) {
    match base_type(ty.oid()) {
        Some(bt) => (bt.byval, bt.align, bt.storage, bt.collation),
        None => {
            // an array type: find its element
            let elem = BASE_TYPES.iter().find(|bt| bt.array == ty.oid());
            let align = match elem {
                Some(e) if e.align == 'd' => 'd',
                _ => 'i',
            };
            (false, align, 'x', elem.map(|e| e.collation).unwrap_or(0))
        }
    }
}

/// A `regproc` value naming built-in function `name` (`-`: none, OID 0).
pub(super) fn proc(name: &str) -> Value {
    oid(builtin_proc_oid(name).unwrap_or(0))
}

pub(super) fn io_name(input: &str, which: &str) -> String {
    match input.strip_suffix("_in") {
        Some(stem) => format!("{stem}_{which}"),
        None => format!("{}{which}", input.strip_suffix("in").unwrap_or(input)),
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn type_row(
    need: Need<'_>,
    oid_: u32,
    name: &str,
    namespace: u32,
    len: i16,
    byval: bool,
    kind: char,
    category: char,
    preferred: bool,
    relid: u32,
    subscript: &str,
    elem: u32,
    array: u32,
    input: &str,
    modin: &str,
    analyze: &str,
    align: char,
    storage: char,
    collation: u32,
) -> Vec<Value> {
    let modout = || {
        if modin == "-" {
            proc("-")
        } else {
            proc(&modin.replace("typmodin", "typmodout"))
        }
    };
    row![
        oid(oid_),
        need.text(1, || t(name)),
        oid(namespace),
        oid(SUPERUSER_OID),
        int(len as i64),
        b(byval),
        need.text(6, || ch(kind)),
        need.text(7, || ch(category)),
        b(preferred),
        b(true),
        need.text(10, || ch(',')),
        oid(relid),
        need.text(12, || proc(subscript)),
        oid(elem),
        oid(array),
        need.text(15, || proc(input)),
        need.text(16, || proc(&io_name(input, "out"))),
        need.text(17, || proc(&io_name(input, "recv"))),
        need.text(18, || proc(&io_name(input, "send"))),
        need.text(19, || proc(modin)),
        need.text(20, modout),
        need.text(21, || proc(analyze)),
        need.text(22, || ch(align)),
        need.text(23, || ch(storage)),
        b(false),
        oid(0),
        int(-1),
        int(0),
        oid(collation),
        NULL,
        NULL,
        NULL,
    ]
}

pub(super) fn type_rows(view: &CatalogView<'_>, want: Want<'_>, need: Need<'_>) -> Vec<Vec<Value>> {
    let mut rows: Vec<(u32, Vec<Value>)> = Vec::new();
    for bt in BASE_TYPES {
        let array_wanted = || bt.array != 0 && want(bt.array, "_", bt.name);
        if !(want(bt.oid, "", bt.name) || array_wanted()) {
            continue;
        }
        // `name` is subscripted as raw bytes; the vectors are arrays (from 0).
        let subscript = match (bt.elem, bt.category) {
            (0, _) => "-",
            (_, 'A') => "array_subscript_handler",
            _ => "raw_array_subscript_handler",
        };
        rows.push((
            bt.oid,
            type_row(
                need,
                bt.oid,
                bt.name,
                PG_CATALOG_OID,
                bt.len,
                bt.byval,
                bt.kind,
                bt.category,
                bt.preferred,
                0,
                subscript,
                bt.elem,
                bt.array,
                bt.input,
                bt.modin,
                "-",
                bt.align,
                bt.storage,
                bt.collation,
            ),
        ));
        if bt.array != 0 {
            let align = if bt.align == 'd' { 'd' } else { 'i' };
            let (kind, category) = if bt.kind == 'p' {
                ('p', 'P')
            } else {
                ('b', 'A')
            };
            rows.push((
                bt.array,
                type_row(
                    need,
                    bt.array,
                    &format!("_{}", bt.name),
                    PG_CATALOG_OID,
                    -1,
                    false,
                    kind,
                    category,
                    false,
                    0,
                    "array_subscript_handler",
                    bt.oid,
                    0,
                    "array_in",
                    bt.modin,
                    "array_typanalyze",
                    align,
                    'x',
                    bt.collation,
                ),
            ));
        }
    }
    rows.sort_by_key(|(o, _)| *o);
    let mut out: Vec<Vec<Value>> = rows.into_iter().map(|(_, r)| r).collect();
    let composite = |oid_: u32, name: &str, ns: u32, relid: u32| {
        type_row(
            need,
            oid_,
            name,
            ns,
            -1,
            false,
            'c',
            'C',
            false,
            relid,
            "-",
            0,
            0,
            "record_in",
            "-",
            "-",
            'd',
            'x',
            0,
        )
    };
    for r in RELATIONS
        .iter()
        .filter(|r| listed(r) && want(r.rowtype, "", r.name))
    {
        out.push(composite(
            r.rowtype,
            r.name,
            schema_oid_of(view, r.schema),
            r.oid,
        ));
    }
    // A sequence has no row type (`reltype` 0).
    for tb in view
        .tables
        .iter()
        .filter(|tb| tb.sequence.is_none() && want(tb.rowtype_oid(), "", &tb.name))
    {
        out.push(composite(
            tb.rowtype_oid(),
            &tb.name,
            schema_oid_of(view, &tb.schema),
            tb.oid,
        ));
    }
    out
}

// ------------------------------------------------------------------ namespaces
