//! Bound plans kept by shape (plancache.rs): a text answered from a kept plan must give
//! exactly what binding it gives, whatever its literals, and anything the plan could depend
//! on (a literal the binder converts, a long string, a stored or temporary table taking a
//! catalog name, a literal outside a comparison) must make the text be bound again.

mod common;

use rocklake_core::api::{Output, Reply, SessionId};
use rocklake_core::memkv::MemKv;
use rocklake_core::plancache::{self, PlanStats};
use rocklake_core::Engine;

use common::run_ok;

/// DuckDB's column introspection for one table at ATTACH, as it sends it (trimmed of its
/// comment columns), with the table's name and the "char" kinds as literals.
fn columns_of(table: &str, kinds: &str) -> String {
    format!(
        "SELECT pg_namespace.oid AS namespace_id, relname, relpages, attname, \
         pg_type.typname type_name, atttypmod type_modifier, pg_attribute.attndims ndim, \
         attnum, pg_attribute.attnotnull AS notnull, NULL constraint_id, \
         NULL constraint_type, NULL constraint_key, type_ns.nspname AS type_schema, \
         col_desc.description AS column_comment \
         FROM pg_class JOIN pg_namespace ON relnamespace = pg_namespace.oid \
         JOIN pg_attribute ON pg_class.oid=pg_attribute.attrelid \
         JOIN pg_type ON atttypid=pg_type.oid \
         JOIN pg_namespace type_ns ON pg_type.typnamespace = type_ns.oid \
         LEFT JOIN pg_description col_desc ON col_desc.objoid=pg_class.oid AND col_desc.objsubid=pg_attribute.attnum \
         WHERE attnum > 0 AND relkind IN ({kinds}) AND pg_namespace.nspname IN ('public') AND relname='{table}' \
         UNION ALL \
         SELECT pg_namespace.oid AS namespace_id, relname, NULL relpages, NULL attname, NULL type_name, \
         NULL type_modifier, NULL ndim, NULL attnum, NULL AS notnull, \
         pg_constraint.oid AS constraint_id, contype AS constraint_type, \
         conkey AS constraint_key, NULL AS type_schema, NULL AS column_comment \
         FROM pg_class JOIN pg_namespace ON relnamespace = pg_namespace.oid \
         JOIN pg_constraint ON (pg_class.oid=pg_constraint.conrelid) \
         WHERE relkind IN ({kinds}) AND contype IN ('p', 'u') AND pg_namespace.nspname IN ('public') AND relname='{table}' \
         ORDER BY namespace_id, relname, attnum, constraint_id"
    )
}

const KINDS: &str = "'r', 'v', 'm', 'f', 'p'";

/// Everything a client sees of a reply: outputs (fields with names, types and typmods; rows;
/// tags) and the error.
fn seen(r: &Reply) -> String {
    let outputs: Vec<String> = r
        .outputs
        .iter()
        .map(|o| match o {
            Output::Rows { fields, rows, tag } => {
                format!("{fields:?} {:?} {tag}", rows.to_strings())
            }
            other => format!("{other:?}"),
        })
        .collect();
    format!("{outputs:?} {:?}", r.error)
}

struct Lake {
    kv: MemKv,
    e: Engine,
    s: SessionId,
}

impl Lake {
    /// A transaction that created tables `a`, `b`, `c` (with a primary key) and is still
    /// open: nothing is answered from kept results, as in DuckDB's ATTACH.
    fn new() -> Lake {
        plancache::set_enabled(true);
        let (kv, e, s) = common::fresh();
        let mut lake = Lake { kv, e, s };
        lake.ok("BEGIN");
        for t in ["a", "b", "c"] {
            lake.ok(&format!(
                "CREATE TABLE {t} (id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, {t}_only DOUBLE PRECISION)"
            ));
        }
        lake
    }

    fn ok(&mut self, sql: &str) -> Reply {
        run_ok(&mut self.e, &mut self.kv, self.s, sql)
    }

    fn run(&mut self, sql: &str) -> Reply {
        common::run(&mut self.e, &mut self.kv, self.s, sql)
    }

    /// Runs `sql` with kept plans, then bound afresh, and checks the client sees the same.
    /// Returns how the first run was answered, and what it gave.
    fn same_as_bound(&mut self, sql: &str) -> (PlanStats, String) {
        let before = plancache::stats();
        let cached = self.isolated(sql);
        let after = plancache::stats();
        plancache::set_enabled(false);
        let bound = self.isolated(sql);
        plancache::set_enabled(true);
        assert_eq!(cached, bound, "{sql}");
        let delta = PlanStats {
            hits: after.hits - before.hits,
            templates: after.templates - before.templates,
            unusable: after.unusable - before.unusable,
            misfits: after.misfits - before.misfits,
        };
        (delta, cached)
    }

    /// What the client sees of `sql`, run inside a savepoint (an error does not end the
    /// transaction).
    fn isolated(&mut self, sql: &str) -> String {
        self.ok("SAVEPOINT probe");
        let r = self.run(sql);
        if r.error.is_some() {
            self.ok("ROLLBACK TO SAVEPOINT probe");
        }
        seen(&r)
    }

    /// Two texts of `shape` (the parse cache checks the shape at the second, the plan cache
    /// builds its template there).
    fn warm(&mut self, shape: impl Fn(&str) -> String) {
        self.ok(&shape("a"));
        self.ok(&shape("b"));
    }
}

fn hit() -> PlanStats {
    PlanStats {
        hits: 1,
        ..PlanStats::default()
    }
}

fn misfit() -> PlanStats {
    PlanStats {
        misfits: 1,
        ..PlanStats::default()
    }
}

#[test]
fn duckdb_column_query_is_bound_once_per_shape() {
    let mut lake = Lake::new();
    let before = plancache::stats();
    lake.warm(|t| columns_of(t, KINDS));
    let built = plancache::stats();
    assert_eq!(built.templates - before.templates, 1, "{built:?}");
    assert_eq!(built.unusable, before.unusable);
    // The template's own texts, another table, and a name with no table.
    for table in ["a", "b", "c", "missing", "it''s", ""] {
        let (how, seen) = lake.same_as_bound(&columns_of(table, KINDS));
        assert_eq!(how, hit(), "{table}");
        if table == "c" {
            // The rows are c's: its columns, then its primary key.
            assert!(
                seen.contains("c_only") && !seen.contains("a_only"),
                "{seen}"
            );
        }
    }
    // After more DDL in the transaction, the plan still reads the catalog as it is now.
    lake.ok("CREATE TABLE d (x INTEGER, d_only TEXT)");
    let (how, seen) = lake.same_as_bound(&columns_of("d", KINDS));
    assert_eq!(how, hit());
    assert!(seen.contains("d_only"), "{seen}");
}

#[test]
fn literals_the_binder_converts_or_a_long_string_are_bound_again() {
    let mut lake = Lake::new();
    lake.warm(|t| columns_of(t, KINDS));
    // The "char" kinds are compared as the binder leaves them, as strings: other kinds
    // take the plan too, and give what binding gives.
    let (how, seen) = lake.same_as_bound(&columns_of("a", "'v', 'v', 'v', 'v', 'v'"));
    assert_eq!(how, hit());
    assert!(!seen.contains("a_only"), "a is not a view: {seen}");
    let (how, seen) = lake.same_as_bound(&columns_of("a", "'r', 'v', 'm', 'f', 'xy'"));
    assert_eq!(how, hit());
    assert!(seen.contains("a_only"), "{seen}");
    // Numbers are fixed by the template.
    let shape = |n: &str, t: &str| {
        format!("SELECT relname FROM pg_class WHERE relnatts > {n} AND relname = '{t}'")
    };
    lake.warm(|t| shape("0", t));
    assert_eq!(lake.same_as_bound(&shape("0", "a")).0, hit());
    let (how, seen) = lake.same_as_bound(&shape("5", "a"));
    assert_eq!(how, misfit());
    assert!(!seen.contains("\"a\""), "a has 3 columns: {seen}");
    // Fewer kinds are another shape, never seen twice: bound.
    let (how, _) = lake.same_as_bound(&columns_of("a", "'v'"));
    assert_eq!(how, PlanStats::default());
    // A string longer than a name: `name` truncates it to 63 bytes, so the plan cannot
    // take it as it is.
    let long = format!("a{}", "x".repeat(70));
    lake.ok(&format!("CREATE TABLE {long} (long_only INTEGER)"));
    let (how, seen) = lake.same_as_bound(&columns_of(&long, KINDS));
    assert_eq!(how, misfit());
    assert!(seen.contains("long_only"), "{seen}");
    // 63 bytes is a string the plan takes.
    let (how, _) = lake.same_as_bound(&columns_of(&"y".repeat(63), KINDS));
    assert_eq!(how, hit());
}

#[test]
fn shapes_whose_plans_could_depend_on_a_literal_are_not_kept() {
    let mut lake = Lake::new();
    let shapes: [fn(&str) -> String; 6] = [
        // A literal as a function's argument, a LIKE pattern, a cast, a select item, LIMIT.
        |t| format!("SELECT relname FROM pg_class WHERE relname = upper('{t}')"),
        |t| format!("SELECT relname FROM pg_class WHERE relname LIKE '{t}%'"),
        |t| format!("SELECT relname FROM pg_class WHERE oid = '{t}'::regclass"),
        |t| format!("SELECT '{t}' AS x, relname FROM pg_class WHERE relname = '{t}'"),
        |t| format!("SELECT relname FROM pg_class WHERE relname = '{t}' LIMIT 1"),
        // A stored table in the query.
        |t| format!("SELECT name FROM a JOIN pg_class ON relname = 'a' WHERE name = '{t}'"),
    ];
    for shape in shapes {
        lake.warm(shape);
        let (how, _) = lake.same_as_bound(&shape("c"));
        assert_eq!(how, PlanStats::default(), "{}", shape("c"));
    }
    // A string compared with a char(n) value loses its trailing spaces while binding: a
    // plan kept from a text without them would be wrong for one with them.
    let padded = |t: &str| {
        format!("SELECT n FROM (SELECT typname::bpchar AS n FROM pg_type) s WHERE n = '{t}'")
    };
    let before = plancache::stats();
    lake.warm(padded);
    assert_eq!(plancache::stats().unusable, before.unusable + 1);
    let (how, seen) = lake.same_as_bound(&padded("bool   "));
    assert_eq!(how, PlanStats::default());
    assert!(seen.contains("bool") && seen.contains("SELECT 1"), "{seen}");
    // A string compared with an integer column: the sentinel is no integer, so the shape is
    // unusable, and a text that is no integer either fails as when bound.
    let before = plancache::stats();
    let int_shape = |t: &str| format!("SELECT relname FROM pg_class WHERE relnatts = '{t}'");
    lake.ok(&int_shape("1"));
    lake.ok(&int_shape("2"));
    assert_eq!(plancache::stats().unusable, before.unusable + 1);
    let (how, seen) = lake.same_as_bound(&int_shape("x"));
    assert_eq!(how, PlanStats::default());
    assert!(seen.contains("22P02"), "{seen}");
}

#[test]
fn a_table_that_takes_a_catalog_name_is_read_instead() {
    let mut lake = Lake::new();
    let shape = |t: &str| format!("SELECT typname FROM pg_type WHERE typname = '{t}'");
    lake.warm(shape);
    let (how, seen) = lake.same_as_bound(&shape("int4"));
    assert_eq!(how, hit());
    assert!(seen.contains("int4"), "{seen}");
    // A stored table named pg_type, found first once search_path puts public first.
    lake.ok("CREATE TABLE pg_type (typname TEXT)");
    lake.ok("INSERT INTO pg_type VALUES ('mine')");
    lake.ok("SET search_path = public, pg_catalog");
    let (how, seen) = lake.same_as_bound(&shape("mine"));
    assert_eq!(how, misfit());
    assert!(seen.contains("mine"), "{seen}");
    // One in another schema, and the schema put first in search_path after the plan was
    // kept. (RockLake refuses a temporary table with a catalog relation's name.)
    lake.ok("SET search_path = pg_catalog, public");
    let shape = |t: &str| format!("SELECT relname FROM pg_class WHERE relname = '{t}'");
    lake.warm(shape);
    assert_eq!(lake.same_as_bound(&shape("c")).0, hit());
    lake.ok("CREATE SCHEMA s");
    lake.ok("CREATE TABLE s.pg_class (relname TEXT)");
    lake.ok("INSERT INTO s.pg_class VALUES ('in_s')");
    assert_eq!(
        lake.same_as_bound(&shape("c")).0,
        hit(),
        "s is not in search_path: the name is still the catalog's"
    );
    lake.ok("SET search_path = s, pg_catalog");
    let (how, seen) = lake.same_as_bound(&shape("in_s"));
    assert_eq!(how, misfit());
    assert!(seen.contains("in_s"), "{seen}");
    assert_eq!(lake.e.st.copies.hits(), 0, "every answer was executed");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any string in the table name's and the schema's places (spaces at either end, quotes,
    /// LIKE wildcards, backslashes, capitals, non-ASCII, past 63 bytes) gives what binding
    /// gives, from the kept plan or not.
    #[test]
    fn any_strings_give_what_binding_gives(
        table in "[a-cA ÄÖ'%_\\\\x]{0,70}",
        schema in proptest::sample::select(vec!["public", "pg_catalog", "", " public", "PUBLIC"]),
    ) {
        let mut lake = Lake::new();
        lake.warm(|t| columns_of(t, KINDS));
        let quoted = table.replace('\'', "''");
        let sql = columns_of(&quoted, KINDS).replace("IN ('public')", &format!("IN ('{schema}')"));
        let (how, _) = lake.same_as_bound(&sql);
        let fits = table.len() <= 63;
        proptest::prop_assert_eq!(how, if fits { hit() } else { misfit() });
    }
}
