#!/usr/bin/env python3
"""Python's other PostgreSQL clients against a reference PostgreSQL and RockLake, compared
step by step: asyncpg (binary protocol throughout, its own type introspection, Parse/Describe
ended by Flush instead of Sync, binary COPY), SQLAlchemy (its PostgreSQL dialect's reflection
queries, Core and ORM statements, DDL from metadata) and pandas (read_sql, to_sql).

usage: pyclients.py --a DSN (reference) --b DSN (under test) [--report OUT.json] [--show N]

Each step's outcome (rows as the client returns them, or the error's class, SQLSTATE and
message) must be the same on both servers. Prints a summary and the first --show differences;
exit status 1 on any difference.
"""
import argparse
import asyncio
import datetime
import decimal
import io
import sys
import uuid

import difflog


def dsn_parts(dsn):
    return dict(kv.split("=", 1) for kv in dsn.split())


def outcome_of_error(e):
    return {"error": type(e).__name__, "sqlstate": getattr(e, "sqlstate", None),
            "message": str(e).split("\n")[0]}


class Steps:
    def __init__(self):
        self.outcomes = {}

    def put(self, name, value):
        self.outcomes[name] = repr(value)

    async def run(self, name, coro):
        try:
            self.put(name, await asyncio.wait_for(coro, 20))
        except asyncio.TimeoutError:
            self.put(name, {"error": "no answer within 20 s"})
        except Exception as e:  # the outcome is what is compared
            self.put(name, outcome_of_error(e))

    def run_sync(self, name, fn):
        try:
            self.put(name, fn())
        except Exception as e:
            self.put(name, outcome_of_error(e))


ROWS = [
    (1, "a", datetime.datetime(2024, 1, 2, 3, 4, 5, 678900, tzinfo=datetime.timezone.utc),
     datetime.date(2024, 2, 29), decimal.Decimal("12.34"), uuid.UUID(int=5), b"\x00\x01\xff", 1.5, True,
     [1, 2, None], ["a", "b c", None, 'q"uote'], datetime.timedelta(days=1, seconds=3), "vc",
     [datetime.date(2020, 1, 1)], [decimal.Decimal("1.5"), None], []),
    (2, "b", None, None, None, None, None, None, None, None, None, None, None, None, None, None),
    (3, "ü✓", datetime.datetime(1999, 12, 31, 23, 59, 59, tzinfo=datetime.timezone.utc),
     datetime.date(1970, 1, 1), decimal.Decimal("-0.01"), uuid.UUID(int=2**128 - 1), b"", -0.0, False,
     [-2147483648, 2147483647], [""], datetime.timedelta(microseconds=-1), "",
     [], [decimal.Decimal("99999999.99")], [True, None, False]),
]
COLUMNS = ("id, name, ts, d, n, u, b, f, ok, arr, tarr, iv, j, darr, narr, barr")


async def asyncpg_steps(dsn, s):
    import asyncpg
    p = dsn_parts(dsn)
    # asyncpg's defaults: client_encoding 'utf-8' in the startup packet, binary everywhere.
    c = await asyncpg.connect(host=p["host"], port=int(p["port"]), user=p["user"],
                              password=p["password"], database=p["dbname"])
    try:
        for sql in ["DROP SCHEMA IF EXISTS app CASCADE", "CREATE SCHEMA app",
                    "CREATE TABLE app.t (id bigint PRIMARY KEY, name text NOT NULL DEFAULT 'x', "
                    "ts timestamptz, d date, n numeric(10,2), u uuid, b bytea, f float8, ok boolean, "
                    "arr int[], tarr text[], iv interval, j varchar(20), darr date[], narr numeric[], "
                    "barr boolean[])"]:
            await s.run(f"ddl {sql[:40]}", c.execute(sql))
        await s.run("executemany", c.executemany(
            f"INSERT INTO app.t ({COLUMNS}) VALUES "
            "($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)", ROWS))
        await s.run("select all (binary results, arrays)",
                    _rows(c.fetch("SELECT * FROM app.t ORDER BY id")))
        await s.run("param by id", _rows(c.fetch("SELECT id, name FROM app.t WHERE id = $1", 1)))
        await s.run("typed param arithmetic", _rows(c.fetch("SELECT $1::int + 1 AS x", 41)))
        await s.run("text[] param", c.fetchval("SELECT count(*) FROM app.t WHERE name = ANY($1)", ["a", "b", None]))
        await s.run("int8[] param", _rows(c.fetch("SELECT id FROM app.t WHERE id = ANY($1::int8[]) ORDER BY id", [3, 1])))
        await s.run("empty array param", c.fetchval("SELECT count(*) FROM app.t WHERE id = ANY($1::int8[])", []))
        await s.run("array param round trip", _rows(c.fetch(
            "SELECT $1::int4[] AS a, $2::text[] AS b, $3::uuid[] AS c, $4::timestamptz[] AS d, $5::interval[] AS e",
            [1, None, 3], ["x", "y'z"], [uuid.UUID(int=7)],
            [datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)], [datetime.timedelta(days=2)])))
        await s.run("array param into column", c.execute(
            "UPDATE app.t SET arr = $1, tarr = $2 WHERE id = 2", [7, 8], ["p", None]))
        await s.run("after array update", _rows(c.fetch("SELECT arr, tarr FROM app.t WHERE id = 2")))
        # "char" (attgenerated, attidentity) is one byte in binary, 0 when empty.
        await s.run("internal char results", _rows(c.fetch(
            "SELECT attname, attgenerated, attidentity, 'a'::\"char\" AS c, ''::\"char\" AS e, 'ab'::char AS bp "
            "FROM pg_attribute WHERE attrelid = 'app.t'::regclass AND attnum BETWEEN 1 AND 2 ORDER BY attnum")))
        await s.run("oid param", _rows(c.fetch("SELECT typname, typlen FROM pg_type WHERE oid = $1", 23)))
        await s.run("timestamptz param", c.fetchval("SELECT $1::timestamptz < now()",
                                                     datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)))
        # An error at Parse, which asyncpg ends with Flush and not Sync: the server must
        # answer at once, and the connection must stay usable.
        await s.run("error at parse", c.fetch("SELECT * FROM app.nosuch"))
        await s.run("usable after parse error", c.fetchval("SELECT 2"))
        await s.run("error at execute", c.fetch("SELECT 1/0"))
        await s.run("error in a param", c.fetch("SELECT $1::int", "x"))
        await s.run("syntax error", c.fetch("SELEC 1"))
        await s.run("usable after errors", c.fetchval("SELECT 3"))

        async def rolled_back():
            try:
                async with c.transaction():
                    await c.execute("INSERT INTO app.t (id) VALUES (4)")
                    raise RuntimeError("roll back")
            except RuntimeError:
                pass
            return await c.fetchval("SELECT count(*) FROM app.t")
        await s.run("transaction rolled back", rolled_back())

        async def committed():
            async with c.transaction(isolation="repeatable_read"):
                await c.execute("INSERT INTO app.t (id, name) VALUES (5, 'tx')")
            return await c.fetchval("SELECT name FROM app.t WHERE id = 5")
        await s.run("transaction committed", committed())

        async def cursor():
            async with c.transaction():
                out = []
                async for r in c.cursor("SELECT id, name FROM app.t ORDER BY id", prefetch=2):
                    out.append(tuple(r))
                return out
        await s.run("cursor with prefetch", cursor())

        async def prepared():
            st = await c.prepare("SELECT id, arr FROM app.t WHERE id >= $1 ORDER BY id")
            return ([str(a.type.name) for a in st.get_attributes()], [p.name for p in st.get_parameters()],
                    [tuple(r) for r in await st.fetch(2)], [tuple(r) for r in await st.fetch(3)])
        await s.run("prepared statement", prepared())
        await s.run("copy records in (binary COPY)", c.copy_records_to_table(
            "t", schema_name="app", columns=["id", "name", "arr", "ts"],
            records=[(10, "c", [1, None], None),
                     (11, "d", None, datetime.datetime(2001, 2, 3, tzinfo=datetime.timezone.utc))]))

        async def copy_out():
            buf = io.BytesIO()
            status = await c.copy_from_query("SELECT id, name, arr FROM app.t ORDER BY id", output=buf, format="csv")
            return status, buf.getvalue()
        await s.run("copy out csv", copy_out())
        await s.run("final rows", _rows(c.fetch(f"SELECT {COLUMNS} FROM app.t ORDER BY id")))
    finally:
        await c.close()


async def _rows(coro):
    return [tuple(r.items()) for r in await coro]


def engine_for(dsn):
    import sqlalchemy as sa
    p = dsn_parts(dsn)
    return sa.create_engine(f"postgresql+psycopg://{p['user']}:{p['password']}@{p['host']}:{p['port']}/{p['dbname']}")


def sqlalchemy_steps(dsn, s):
    import sqlalchemy as sa
    from sqlalchemy import orm
    eng = engine_for(dsn)
    insp = sa.inspect(eng)
    # Reflection: every query of the PostgreSQL dialect's inspector.
    s.run_sync("schemas", lambda: [n for n in insp.get_schema_names() if n != "information_schema"])
    s.run_sync("has schema", lambda: (insp.has_schema("app"), insp.has_schema("nope")))
    s.run_sync("tables", lambda: insp.get_table_names(schema="app"))
    s.run_sync("views", lambda: insp.get_view_names(schema="app"))
    s.run_sync("materialized views", lambda: insp.get_materialized_view_names(schema="app"))
    s.run_sync("temp tables", lambda: insp.get_temp_table_names())
    s.run_sync("columns", lambda: [(c["name"], str(c["type"]), c["nullable"], c["default"], c.get("comment"))
                                   for c in insp.get_columns("t", schema="app")])
    s.run_sync("primary key", lambda: insp.get_pk_constraint("t", schema="app"))
    s.run_sync("indexes", lambda: insp.get_indexes("t", schema="app"))
    s.run_sync("foreign keys", lambda: insp.get_foreign_keys("t", schema="app"))
    s.run_sync("unique constraints", lambda: insp.get_unique_constraints("t", schema="app"))
    s.run_sync("check constraints", lambda: insp.get_check_constraints("t", schema="app"))
    s.run_sync("table comment", lambda: insp.get_table_comment("t", schema="app"))
    s.run_sync("has table", lambda: (insp.has_table("t", schema="app"), insp.has_table("zz", schema="app")))
    s.run_sync("sequences", lambda: insp.get_sequence_names(schema="app"))
    s.run_sync("enums", lambda: insp.get_enums(schema="app"))
    s.run_sync("multi columns", lambda: sorted(
        (k[1], [(c["name"], str(c["type"])) for c in v]) for k, v in insp.get_multi_columns(schema="app").items()))
    # Core: a reflected table, selects and an insert.
    def core():
        t = sa.Table("t", sa.MetaData(), autoload_with=eng, schema="app")
        with eng.connect() as conn:
            conn.execute(sa.insert(t).values(id=20, name="core", arr=[4, 5]))
            conn.commit()
            rows = conn.execute(sa.select(t.c.id, t.c.name, t.c.arr).where(t.c.id >= 5).order_by(t.c.id)).all()
            n = conn.execute(sa.select(sa.func.count()).select_from(t)).scalar()
        return [tuple(r) for r in rows], n
    s.run_sync("core", core)

    # ORM: a mapped class with a serial key and a JSON column, created from metadata.
    class Base(orm.DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = "items"
        __table_args__ = {"schema": "app"}
        id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
        label: orm.Mapped[str] = orm.mapped_column(sa.String(10))
        meta = orm.mapped_column(sa.JSON, nullable=True)

    def orm_round_trip():
        Base.metadata.create_all(eng)
        with orm.Session(eng) as session:
            session.add_all([Item(label="a", meta={"k": [1, 2]}), Item(label="b", meta=None)])
            session.commit()
            got = [(i.id, i.label, i.meta) for i in session.scalars(sa.select(Item).order_by(Item.id))]
            session.execute(sa.update(Item).where(Item.label == "b").values(label="c"))
            session.commit()
            got2 = session.scalars(sa.select(Item.label).order_by(Item.id)).all()
        cols = [(c["name"], str(c["type"]), c["nullable"], c["default"]) for c in sa.inspect(eng).get_columns("items", schema="app")]
        Base.metadata.drop_all(eng)
        return got, got2, cols
    s.run_sync("orm", orm_round_trip)
    eng.dispose()


def sqlalchemy_asyncpg_steps(dsn, s):
    """SQLAlchemy's asyncio engine over asyncpg (what FastAPI-style services use): the same
    reflection through prepared statements and binary results."""
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine
    p = dsn_parts(dsn)
    eng = create_async_engine(
        f"postgresql+asyncpg://{p['user']}:{p['password']}@{p['host']}:{p['port']}/{p['dbname']}")

    async def run():
        async with eng.connect() as conn:
            await conn.execute(sa.text(
                "CREATE TABLE app.at (id serial PRIMARY KEY, name varchar(20) NOT NULL DEFAULT 'n', "
                "meta json, tags text[], at timestamptz DEFAULT now())"))
            await conn.commit()

            def reflect(sync_conn):
                i = sa.inspect(sync_conn)
                return ([(c["name"], str(c["type"]), c["nullable"], c["default"], c.get("computed"))
                         for c in i.get_columns("at", schema="app")],
                        i.get_pk_constraint("at", schema="app"), i.get_indexes("at", schema="app"))
            shape = await conn.run_sync(reflect)
            t = await conn.run_sync(lambda c: sa.Table("at", sa.MetaData(), autoload_with=c, schema="app"))
            await conn.execute(sa.insert(t), [{"name": "a", "meta": {"x": [1]}, "tags": ["p", "q"]},
                                              {"name": "b", "meta": None, "tags": []}])
            await conn.execute(sa.insert(t).values(tags=["q"]))
            await conn.commit()
            rows = (await conn.execute(sa.select(t.c.id, t.c.name, t.c.meta, t.c.tags)
                                       .where(t.c.name.in_(["a", "n"])).order_by(t.c.id))).all()
            tagged = (await conn.execute(sa.select(sa.func.count()).select_from(t)
                                         .where(sa.literal("q") == sa.any_(t.c.tags)))).scalar()
            await conn.execute(sa.text("DROP TABLE app.at"))
            await conn.commit()
        await eng.dispose()
        return shape, [tuple(r) for r in rows], tagged
    try:
        s.put("sqlalchemy over asyncpg", asyncio.run(run()))
    except Exception as e:
        s.put("sqlalchemy over asyncpg", outcome_of_error(e))


def pandas_steps(dsn, s):
    import pandas as pd
    import psycopg
    with psycopg.connect(dsn, autocommit=True) as conn:
        def read():
            df = pd.read_sql("SELECT id, name, ts, n, arr FROM app.t ORDER BY id", conn)
            return df.dtypes.astype(str).to_dict(), df.to_dict("list")
        s.run_sync("pandas read_sql", read)
    eng = engine_for(dsn)

    def round_trip():
        df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"], "c": [0.5, 1.5, None]})
        df.to_sql("pdt", eng, schema="app", if_exists="replace", index=False)
        df.to_sql("pdt", eng, schema="app", if_exists="append", index=False)
        back = pd.read_sql("SELECT * FROM app.pdt ORDER BY a, b", eng)
        return back.dtypes.astype(str).to_dict(), back.to_dict("list")
    s.run_sync("pandas to_sql and back", round_trip)
    eng.dispose()


async def main_async(dsn, s):
    await asyncpg_steps(dsn, s)


def run_all(dsn):
    s = Steps()
    try:
        asyncio.run(main_async(dsn, s))
    except Exception as e:
        s.put("asyncpg session", outcome_of_error(e))
    sqlalchemy_steps(dsn, s)
    sqlalchemy_asyncpg_steps(dsn, s)
    pandas_steps(dsn, s)
    return s.outcomes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--report")
    ap.add_argument("--show", type=int, default=20)
    args = ap.parse_args()
    a, b = run_all(args.a), run_all(args.b)
    diffs = [{"step": k, "postgres": a.get(k), "rocklake": b.get(k)}
             for k in list(a) + [k for k in b if k not in a] if a.get(k) != b.get(k)]
    errors = sum(1 for v in a.values() if v.startswith("{'error'"))
    summary = {"steps": len(a), "differences": len(diffs), "errors_on_postgres": errors}
    return difflog.finish(summary, diffs, args.show, args.report, lambda d: d["step"])


if __name__ == "__main__":
    sys.exit(main())
