//! Built-in functions' OIDs (`pg_proc`), ACL defaults, and the comments of built-in schemas.

use super::*;

/// The built-in functions RockLake's catalogs name (`pg_am.amhandler`, the `pg_type` I/O
/// functions), with PostgreSQL 15's OIDs, sorted by name: what a `regproc` value can name,
/// `pg_proc` listing no functions.
pub(super) const BUILTIN_PROCS: &[(u32, &str)] = &[
    (750, "array_in"),
    (751, "array_out"),
    (2400, "array_recv"),
    (2401, "array_send"),
    (6179, "array_subscript_handler"),
    (3816, "array_typanalyze"),
    (1242, "boolin"),
    (1243, "boolout"),
    (2436, "boolrecv"),
    (2437, "boolsend"),
    (1044, "bpcharin"),
    (1045, "bpcharout"),
    (2430, "bpcharrecv"),
    (2431, "bpcharsend"),
    (2913, "bpchartypmodin"),
    (2914, "bpchartypmodout"),
    (335, "brinhandler"),
    (330, "bthandler"),
    (1244, "byteain"),
    (31, "byteaout"),
    (2412, "bytearecv"),
    (2413, "byteasend"),
    (1245, "charin"),
    (33, "charout"),
    (2434, "charrecv"),
    (2435, "charsend"),
    (52, "cidin"),
    (53, "cidout"),
    (2442, "cidrecv"),
    (2443, "cidsend"),
    (1084, "date_in"),
    (1085, "date_out"),
    (2468, "date_recv"),
    (2469, "date_send"),
    (200, "float4in"),
    (201, "float4out"),
    (2424, "float4recv"),
    (2425, "float4send"),
    (214, "float8in"),
    (215, "float8out"),
    (2426, "float8recv"),
    (2427, "float8send"),
    (333, "ginhandler"),
    (332, "gisthandler"),
    (331, "hashhandler"),
    (3, "heap_tableam_handler"),
    (910, "inet_in"),
    (911, "inet_out"),
    (2496, "inet_recv"),
    (2497, "inet_send"),
    (38, "int2in"),
    (39, "int2out"),
    (2404, "int2recv"),
    (2405, "int2send"),
    (40, "int2vectorin"),
    (41, "int2vectorout"),
    (2410, "int2vectorrecv"),
    (2411, "int2vectorsend"),
    (42, "int4in"),
    (43, "int4out"),
    (2406, "int4recv"),
    (2407, "int4send"),
    (460, "int8in"),
    (461, "int8out"),
    (2408, "int8recv"),
    (2409, "int8send"),
    (1160, "interval_in"),
    (1161, "interval_out"),
    (2478, "interval_recv"),
    (2479, "interval_send"),
    (2903, "intervaltypmodin"),
    (2904, "intervaltypmodout"),
    (321, "json_in"),
    (322, "json_out"),
    (323, "json_recv"),
    (324, "json_send"),
    (34, "namein"),
    (35, "nameout"),
    (2422, "namerecv"),
    (2423, "namesend"),
    (1701, "numeric_in"),
    (1702, "numeric_out"),
    (2460, "numeric_recv"),
    (2461, "numeric_send"),
    (2917, "numerictypmodin"),
    (2918, "numerictypmodout"),
    (1798, "oidin"),
    (1799, "oidout"),
    (2418, "oidrecv"),
    (2419, "oidsend"),
    (54, "oidvectorin"),
    (55, "oidvectorout"),
    (2420, "oidvectorrecv"),
    (2421, "oidvectorsend"),
    (6180, "raw_array_subscript_handler"),
    (2290, "record_in"),
    (2291, "record_out"),
    (2402, "record_recv"),
    (2403, "record_send"),
    (2218, "regclassin"),
    (2219, "regclassout"),
    (2452, "regclassrecv"),
    (2453, "regclasssend"),
    (4084, "regnamespacein"),
    (4085, "regnamespaceout"),
    (4087, "regnamespacerecv"),
    (4088, "regnamespacesend"),
    (44, "regprocin"),
    (45, "regprocout"),
    (2444, "regprocrecv"),
    (2445, "regprocsend"),
    (2220, "regtypein"),
    (2221, "regtypeout"),
    (2454, "regtyperecv"),
    (2455, "regtypesend"),
    (334, "spghandler"),
    (46, "textin"),
    (47, "textout"),
    (2414, "textrecv"),
    (2415, "textsend"),
    (48, "tidin"),
    (49, "tidout"),
    (2438, "tidrecv"),
    (2439, "tidsend"),
    (1143, "time_in"),
    (1144, "time_out"),
    (2470, "time_recv"),
    (2471, "time_send"),
    (1312, "timestamp_in"),
    (1313, "timestamp_out"),
    (2474, "timestamp_recv"),
    (2475, "timestamp_send"),
    (2905, "timestamptypmodin"),
    (2906, "timestamptypmodout"),
    (1150, "timestamptz_in"),
    (1151, "timestamptz_out"),
    (2476, "timestamptz_recv"),
    (2477, "timestamptz_send"),
    (2907, "timestamptztypmodin"),
    (2908, "timestamptztypmodout"),
    (2909, "timetypmodin"),
    (2910, "timetypmodout"),
    (109, "unknownin"),
    (110, "unknownout"),
    (2416, "unknownrecv"),
    (2417, "unknownsend"),
    (2952, "uuid_in"),
    (2953, "uuid_out"),
    (2961, "uuid_recv"),
    (2962, "uuid_send"),
    (1046, "varcharin"),
    (1047, "varcharout"),
    (2432, "varcharrecv"),
    (2433, "varcharsend"),
    (2915, "varchartypmodin"),
    (2916, "varchartypmodout"),
    (2298, "void_in"),
    (2299, "void_out"),
    (3120, "void_recv"),
    (3121, "void_send"),
    (50, "xidin"),
    (51, "xidout"),
    (2440, "xidrecv"),
    (2441, "xidsend"),
];

/// The name of built-in function `oid` ([`BUILTIN_PROCS`]).
pub fn builtin_proc_name(oid: u32) -> Option<&'static str> {
    BUILTIN_PROCS
        .iter()
        .find(|(o, _)| *o == oid)
        .map(|(_, n)| *n)
}

/// The OID of built-in function `name` ([`BUILTIN_PROCS`]).
pub fn builtin_proc_oid(name: &str) -> Option<u32> {
    BUILTIN_PROCS
        .binary_search_by(|(_, n)| (*n).cmp(name))
        .ok()
        .map(|i| BUILTIN_PROCS[i].0)
}

/// A role's name in `aclitem` text, quoted by aclitem's own rule (`putid`): only a name with
/// a character other than a letter, a digit or `_` (keywords and capitals stay bare, and
/// `quote_all_identifiers` does not change it).
pub(super) fn acl_role_name(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// PostgreSQL's `acldefault(kind, owner)`: the privileges an object of that kind has before
/// any GRANT or REVOKE, as `aclitem` texts (`None`: not a kind PostgreSQL knows).
pub fn acl_default(kind: char, owner: &str) -> Option<Vec<String>> {
    let owner = acl_role_name(owner);
    let own = |privs: &str| format!("{owner}={privs}/{owner}");
    let public = |privs: &str| format!("={privs}/{owner}");
    Some(match kind {
        'c' => vec![],
        'r' => vec![own("arwdDxt")],
        's' => vec![own("rwU")],
        'd' => vec![public("Tc"), own("CTc")],
        'f' => vec![public("X"), own("X")],
        'l' => vec![public("U"), own("U")],
        'L' => vec![own("rw")],
        'n' => vec![own("UC")],
        'p' => vec![own("sA")],
        't' => vec![own("C")],
        'F' | 'S' => vec![own("U")],
        'T' => vec![public("U"), own("U")],
        _ => return None,
    })
}

/// `pg_namespace`'s OID (the `classoid` of a schema's comment or initial privileges).
pub(super) const NAMESPACE_OID: u32 = 2615;
/// `pg_class`'s OID (the `classoid` of a relation's or a column's comment).
pub(super) const CLASS_OID: u32 = 1259;
/// `pg_constraint`'s OID (the `classoid` of a constraint's comment).
pub(super) const CONSTRAINT_OID: u32 = 2606;

/// A schema's comment: its definition's, or initdb's for a built-in schema the view does
/// not carry.
pub fn schema_comment<'v>(view_schemas: &'v [Schema], name: &str, o: u32) -> Option<&'v str> {
    match view_schemas.iter().find(|s| s.name == name) {
        Some(s) => s.comment.as_deref(),
        None => initdb_schema_comment(o),
    }
}

/// The comment initdb gives the built-in schema of OID `o`.
pub fn initdb_schema_comment(o: u32) -> Option<&'static str> {
    SCHEMA_COMMENTS
        .iter()
        .find(|(c, _)| *c == o)
        .map(|(_, text)| *text)
}
