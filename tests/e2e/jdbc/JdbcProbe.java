import java.sql.*;
import java.util.*;

/// JDBC (pgjdbc) against a server: DatabaseMetaData as GUI tools call it, a batch of prepared
/// inserts, prepared selects past the server-prepare threshold, result-set metadata, a rolled-back
/// transaction and an error, then DBeaver's catalog queries. Prints one block per step ("== name"
/// first); tests/tests/jdbc.rs runs it
/// against PostgreSQL and RockLake and compares the blocks.
public class JdbcProbe {
    static StringBuilder out = new StringBuilder();
    static void dump(String name, ResultSet rs) throws SQLException {
        dump(name, rs, 40);
    }
    static void dump(String name, ResultSet rs, int limit) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        out.append("== ").append(name).append("\n");
        int n = md.getColumnCount();
        List<String> cols = new ArrayList<>();
        for (int i = 1; i <= n; i++) cols.add(md.getColumnLabel(i) + ":" + md.getColumnTypeName(i));
        out.append(cols).append("\n");
        int rows = 0;
        while (rs.next() && rows < limit) {
            List<String> vals = new ArrayList<>();
            for (int i = 1; i <= n; i++) vals.add(String.valueOf(rs.getString(i)));
            out.append(vals).append("\n");
            rows++;
        }
    }
    /// One of DBeaver's catalog queries (its text as DBeaver builds it, `?` bound as DBeaver binds
    /// them: OIDs with setLong, names with setString): every column's label, then the `cols` asked
    /// for (label:type and their values; none given: every column), rows sorted when the query
    /// has no ORDER BY (`sorted`). A `cols` of just "#labels" prints the labels only, for catalogs
    /// whose rows differ by design (PostgreSQL's built-in languages, conversions, …).
    static void dbeaver(Connection c, String name, String sql, Object[] params, boolean sorted, String... cols) throws SQLException {
        dbeaver(c, name, sql, params, sorted, null, null, cols);
    }
    static void dbeaver(Connection c, String name, String sql, Object[] params, boolean sorted, String filterCol, Set<String> keep, String... cols) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        for (int i = 0; i < params.length; i++) {
            Object p = params[i];
            if (p instanceof Long) ps.setLong(i + 1, (Long) p);
            else if (p instanceof Integer) ps.setInt(i + 1, (Integer) p);
            else ps.setString(i + 1, (String) p);
        }
        ResultSet rs = ps.executeQuery();
        ResultSetMetaData md = rs.getMetaData();
        out.append("== dbeaver.").append(name).append("\n");
        List<String> labels = new ArrayList<>();
        for (int i = 1; i <= md.getColumnCount(); i++) labels.add(md.getColumnLabel(i));
        out.append(labels).append("\n");
        if (cols.length == 1 && cols[0].equals("#labels")) return;
        List<Integer> idx = new ArrayList<>();
        if (cols.length == 0) { for (int i = 1; i <= md.getColumnCount(); i++) idx.add(i); }
        else for (String col : cols) idx.add(labels.indexOf(col) + 1);
        List<String> typed = new ArrayList<>();
        for (int i : idx) typed.add(i == 0 ? "?missing" : md.getColumnLabel(i) + ":" + md.getColumnTypeName(i));
        out.append(typed).append("\n");
        List<String> rows = new ArrayList<>();
        while (rs.next()) {
            if (filterCol != null && !keep.contains(rs.getString(filterCol))) continue;
            List<String> vals = new ArrayList<>();
            for (int i : idx) vals.add(i == 0 ? "?" : String.valueOf(rs.getString(i)));
            rows.add(vals.toString());
        }
        if (sorted) Collections.sort(rows);
        for (String r : rows) out.append(r).append("\n");
    }
    static long oneLong(Connection c, String sql) throws SQLException {
        ResultSet rs = c.createStatement().executeQuery(sql);
        rs.next();
        return rs.getLong(1);
    }
    static final Object[] NONE = new Object[0];
    /// What DBeaver 24/25 sends when it connects, reads the data types, lists a schema's tables,
    /// opens a table (columns, constraints, indexes, triggers, rules, policies, DDL) and the
    /// database-level folders (roles and their grants, extensions, tablespaces, system info).
    static void dbeaverSession(Connection c, String user) throws Exception {
        long ns = oneLong(c, "SELECT oid FROM pg_namespace WHERE nspname = 'jd'");
        long tbl = oneLong(c, "SELECT 'jd.t'::regclass::oid");
        long idx = oneLong(c, "SELECT 'jd.t_pkey'::regclass::oid");
        long con = oneLong(c, "SELECT oid FROM pg_constraint WHERE conname = 't_pkey'");
        step("dbeaver.defaults", () -> dbeaver(c, "defaults", "SELECT current_schema(),session_user", NONE, false));
        step("dbeaver.schemas", () -> dbeaver(c, "schemas", "SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n\nLEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND d.classoid='pg_namespace'::regclass\n ORDER BY nspname", NONE, false, "nspname", "nspowner", "description"));
        step("dbeaver.typeByOid", () -> dbeaver(c, "typeByOid", "SELECT n.nspname = ANY(current_schemas(true)), n.nspname, t.typname FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON t.typnamespace = n.oid WHERE t.oid = ?", new Object[]{22L}, false));
        step("dbeaver.typeIsArray", () -> dbeaver(c, "typeIsArray", "SELECT typinput='pg_catalog.array_in'::regproc as is_array, typtype, typname, pg_type.oid FROM pg_catalog.pg_type LEFT JOIN (select ns.oid as nspoid, ns.nspname, r.r from pg_namespace as ns join ( select s.r, (current_schemas(false))[s.r] as nspname from generate_series(1, array_upper(current_schemas(false), 1)) as s(r) ) as r using ( nspname ) ) as sp ON sp.nspoid = typnamespace WHERE pg_type.oid = ? ORDER BY sp.r, pg_type.oid DESC", new Object[]{1007L}, false));
        step("dbeaver.searchPath", () -> dbeaver(c, "searchPath", "SHOW search_path", NONE, false));
        step("dbeaver.database", () -> dbeaver(c, "database", "SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datname=?", new Object[]{"lake"}, false, "datname", "encoding", "datistemplate", "datallowconn", "datconnlimit"));
        step("dbeaver.setting", () -> dbeaver(c, "setting", "select * from pg_catalog.pg_settings where name=?", new Object[]{"standard_conforming_strings"}, false, "name", "setting", "unit", "category", "short_desc", "context", "vartype", "boot_val", "reset_val"));
        step("dbeaver.keywords", () -> out.append("== dbeaver.keywords ").append(c.getMetaData().getSQLKeywords()).append("\n"));
        step("dbeaver.enumProbe", () -> dbeaver(c, "enumProbe", "SELECT * FROM pg_catalog.pg_enum WHERE 1<>1 LIMIT 1", NONE, false));
        step("dbeaver.reltypeProbe", () -> dbeaver(c, "reltypeProbe", "SELECT reltype FROM pg_catalog.pg_class WHERE 1<>1 LIMIT 1", NONE, false));
        Set<String> types = new HashSet<>(Arrays.asList("bool", "int2", "int4", "int8", "text", "varchar", "numeric", "timestamptz", "date", "uuid", "bytea", "_int4", "_text", "record", "oid", "name", "cid"));
        step("dbeaver.dataTypes", () -> dbeaver(c, "dataTypes", "SELECT t.oid,t.*,c.relkind,format_type(nullif(t.typbasetype, 0), t.typtypmod) as base_type_name, d.description\nFROM pg_catalog.pg_type t\nLEFT OUTER JOIN pg_catalog.pg_type et ON et.oid=t.typelem \nLEFT OUTER JOIN pg_catalog.pg_class c ON c.oid=t.typrelid\nLEFT OUTER JOIN pg_catalog.pg_description d ON t.oid=d.objoid\nWHERE t.typname IS NOT NULL\nAND (c.relkind IS NULL OR c.relkind = 'c') AND (et.typcategory IS NULL OR et.typcategory <> 'C')", NONE, true, "typname", types, "oid", "typname", "typlen", "typtype", "typcategory", "typelem", "typarray", "relkind", "base_type_name"));
        step("dbeaver.enums", () -> dbeaver(c, "enums", "SELECT * FROM pg_catalog.pg_enum", NONE, false));
        step("dbeaver.tables", () -> dbeaver(c, "tables", "SELECT c.oid,c.*,d.description,pg_catalog.pg_get_expr(c.relpartbound, c.oid) as partition_expr,  pg_catalog.pg_get_partkeydef(c.oid) as partition_key \nFROM pg_catalog.pg_class c\nLEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass\nWHERE c.relnamespace=? AND c.relkind not in ('i','I','c')", new Object[]{ns}, true, "relname", "relkind", "relnatts", "relpersistence", "relhasindex", "description", "partition_expr", "partition_key"));
        step("dbeaver.tableSizes", () -> dbeaver(c, "tableSizes", "select c.oid,pg_catalog.pg_total_relation_size(c.oid) as total_rel_size,pg_catalog.pg_relation_size(c.oid) as rel_size\nFROM pg_class c\nWHERE c.relnamespace=?", new Object[]{ns}, false, "#labels"));
        step("dbeaver.columns", () -> dbeaver(c, "columns", "SELECT c.relname,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description,dep.objid\nFROM pg_catalog.pg_attribute a\nINNER JOIN pg_catalog.pg_class c ON (a.attrelid=c.oid)\nLEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid=ad.adrelid AND a.attnum = ad.adnum)\nLEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)\nLEFT OUTER JOIN pg_depend dep on dep.refobjid = a.attrelid AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and dep.classid = dep.refclassid\nWHERE NOT a.attisdropped AND c.relkind not in ('i','I','c') AND c.oid=?\nORDER BY a.attnum", new Object[]{tbl}, false, "relname", "attname", "atttypid", "attlen", "attnum", "atttypmod", "attbyval", "attnotnull", "atthasdef", "attidentity", "attgenerated", "attcollation", "def_value", "description", "objid"));
        step("dbeaver.collations", () -> dbeaver(c, "collations", "SELECT c.oid,c.* FROM pg_catalog.pg_collation c \nORDER BY c.oid", NONE, false, "collname", new HashSet<>(Arrays.asList("default", "C", "POSIX")), "oid", "collname", "collprovider", "collencoding"));
        step("dbeaver.constraints", () -> dbeaver(c, "constraints", "SELECT c.oid,c.*,t.relname as tabrelname,rt.relnamespace as refnamespace,d.description, case when c.contype='c' then \"substring\"(pg_get_constraintdef(c.oid), 7) else null end consrc_copy\nFROM pg_catalog.pg_constraint c\nINNER JOIN pg_catalog.pg_class t ON t.oid=c.conrelid\nLEFT OUTER JOIN pg_catalog.pg_class rt ON rt.oid=c.confrelid\nLEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_constraint'::regclass\nWHERE c.conrelid=?\nORDER BY c.oid", new Object[]{tbl}, false, "conname", "contype", "condeferrable", "convalidated", "conkey", "tabrelname", "refnamespace", "description", "consrc_copy"));
        step("dbeaver.indexes", () -> dbeaver(c, "indexes", "SELECT i.*,i.indkey as keys,c.relname,c.relnamespace,c.relam,c.reltablespace,tc.relname as tabrelname,dsc.description,pg_catalog.pg_get_expr(i.indpred, i.indrelid) as pred_expr,pg_catalog.pg_get_expr(i.indexprs, i.indrelid, true) as expr,pg_catalog.pg_relation_size(i.indexrelid) as index_rel_size,pg_catalog.pg_stat_get_numscans(i.indexrelid) as index_num_scans\nFROM pg_catalog.pg_index i\nINNER JOIN pg_catalog.pg_class c ON c.oid=i.indexrelid\nINNER JOIN pg_catalog.pg_class tc ON tc.oid=i.indrelid\nLEFT OUTER JOIN pg_catalog.pg_description dsc ON i.indexrelid=dsc.objoid\nWHERE  i.indrelid=? ORDER BY tabrelname, c.relname", new Object[]{tbl}, false, "indnatts", "indisunique", "indisprimary", "indkey", "indclass", "indoption", "keys", "relname", "relam", "tabrelname", "description", "pred_expr", "expr", "index_num_scans"));
        step("dbeaver.accessMethods", () -> dbeaver(c, "accessMethods", "SELECT am.oid,am.* FROM pg_catalog.pg_am am \nORDER BY am.oid", NONE, false, "oid", "amname", "amhandler", "amtype"));
        // The default btree classes of the key types here (PostgreSQL has every access method's).
        Set<String> classes = new HashSet<>(Arrays.asList("1978", "1979", "1981", "3122", "3123", "3124", "3125", "3126", "3127", "3128", "10000", "10003", "10004", "10006", "10007", "10012", "10015", "10022", "10028", "10032", "10038", "10050", "10065"));
        step("dbeaver.opclasses", () -> dbeaver(c, "opclasses", "SELECT oc.oid,oc.* FROM pg_catalog.pg_opclass oc \nORDER BY oc.oid", NONE, false, "oid", classes, "oid", "opcmethod", "opcname", "opcnamespace", "opcfamily", "opcintype", "opcdefault", "opckeytype"));
        step("dbeaver.indexColumn", () -> dbeaver(c, "indexColumn", "select pg_catalog.pg_get_indexdef(?, ?, true)", new Object[]{idx, 1}, false));
        step("dbeaver.children", () -> dbeaver(c, "children", "SELECT i.*,c.relnamespace FROM pg_catalog.pg_inherits i,pg_catalog.pg_class c WHERE i.inhparent=? AND c.oid=i.inhrelid", new Object[]{tbl}, false));
        step("dbeaver.triggers", () -> dbeaver(c, "triggers", "SELECT x.oid,x.*,p.pronamespace as func_schema_id,d.description\nFROM pg_catalog.pg_trigger x\nLEFT OUTER JOIN pg_catalog.pg_proc p ON p.oid=x.tgfoid \nLEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=x.oid AND d.objsubid=0 \nWHERE x.tgrelid = ? AND NOT x.tgisinternal", new Object[]{tbl}, false, "#labels"));
        step("dbeaver.rules", () -> dbeaver(c, "rules", "SELECT r.oid,r.*, pg_get_ruledef(r.oid) AS definition\nFROM pg_rewrite r\nWHERE r.ev_class=" + tbl + " AND r.rulename <> '_RETURN'::name", NONE, false, "#labels"));
        step("dbeaver.policies", () -> dbeaver(c, "policies", "select * from pg_catalog.pg_policies where schemaname=? and tablename=?", new Object[]{"jd", "t"}, false));
        step("dbeaver.references", () -> dbeaver(c, "references", "SELECT DISTINCT connamespace FROM pg_catalog.pg_constraint WHERE confrelid=?", new Object[]{tbl}, false));
        step("dbeaver.functions", () -> dbeaver(c, "functions", "SELECT p.oid as poid,p.*,pg_catalog.pg_get_expr(p.proargdefaults, 0) as arg_defaults,d.description\nFROM pg_catalog.pg_proc p\nLEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=p.oid and d.classoid='pg_proc'::regclass  AND d.objsubid = 0\nWHERE p.pronamespace=?\nORDER BY p.proname", new Object[]{ns}, false, "#labels"));
        step("dbeaver.aggregates", () -> dbeaver(c, "aggregates", "SELECT p.oid AS proc_oid,p.proname AS proc_name,a.*\nFROM pg_catalog.pg_aggregate a,pg_catalog.pg_proc p\nWHERE p.oid=a.aggfnoid AND p.pronamespace=?\nORDER BY p.proname", new Object[]{ns}, false));
        step("dbeaver.sequence", () -> dbeaver(c, "sequence", "SELECT * from pg_catalog.pg_sequences WHERE schemaname=? AND sequencename=?", new Object[]{"jd", "s"}, false));
        step("dbeaver.attributes", () -> dbeaver(c, "attributes", "SELECT c.relname,row_number() OVER (ORDER BY a.attnum) as attnum,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description\nFROM pg_catalog.pg_attribute a\nINNER JOIN pg_catalog.pg_class c ON (a.attrelid=c.oid)\nLEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid=ad.adrelid AND a.attnum = ad.adnum)\nLEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)\nWHERE a.attnum > 0 AND NOT a.attisdropped AND c.oid=?\nORDER BY a.attnum", new Object[]{tbl}, false, "relname", "attnum", "attname", "def_value", "description"));
        step("dbeaver.roles", () -> dbeaver(c, "roles", "SELECT a.oid,a.*,pd.description FROM pg_catalog.pg_roles a \nleft join pg_catalog.pg_shdescription pd on a.oid = pd.objoid\nORDER BY a.rolname", NONE, false, "rolname", new HashSet<>(Arrays.asList(user, "pg_monitor", "pg_read_all_data")), "oid", "rolname", "rolsuper", "rolinherit", "rolcreaterole", "rolcanlogin", "rolconnlimit", "description"));
        step("dbeaver.roleGrants", () -> dbeaver(c, "roleGrants", "SELECT * FROM (\n\tSELECT DISTINCT relnamespace,\n\trelacl,\n\trelname,\n\trelkind,\n(aclexplode(relacl)).grantee as granteeI\nFROM\n\tpg_class\nWHERE\n\trelacl IS NOT NULL\n\tAND relnamespace IN (\nSELECT oid\nFROM pg_namespace\nWHERE nspname NOT LIKE 'pg_%' AND nspname != 'information_schema')\nUNION ALL\nSELECT DISTINCT\n\tn.oid AS relnamespace,\n\tnspacl AS relacl,\n\tn.nspname AS relname,\n\tcast('C' as \"char\") AS relkind,\n(aclexplode(nspacl)).grantee as granteeI\nFROM\n\tpg_catalog.pg_namespace n\nWHERE\n\tn.nspacl IS NOT NULL \n\t) AS tr\nWHERE tr.granteeI=? AND tr.relkind IN('S', 'm', 'C')", new Object[]{10L}, true, "relname", "relkind", "granteei"));
        step("dbeaver.defaultGrants", () -> dbeaver(c, "defaultGrants", "SELECT DISTINCT g.* FROM (\nSELECT *,\n(aclexplode(defaclacl)).grantee as grantee\nFROM pg_default_acl a WHERE a.defaclnamespace <> 0) as g\nwhere g.grantee = ?", new Object[]{10L}, false, "#labels"));
        step("dbeaver.eventTriggers", () -> dbeaver(c, "eventTriggers", "SELECT pet.*, d.description FROM pg_catalog.pg_event_trigger pet\nLEFT OUTER JOIN pg_catalog.pg_description d ON pet.\"oid\" = d.objoid", NONE, false));
        step("dbeaver.extensions", () -> dbeaver(c, "extensions", "SELECT \n e.oid,\n cfg.tbls,\n  n.nspname as schema_name,\n e.* \nFROM \n pg_catalog.pg_extension e \n join pg_namespace n on n.oid =e.extnamespace\n left join  (\n         select\n            ARRAY_AGG(ns.nspname || '.' ||  cls.relname) tbls, oid_ext\n          from\n            (\n            select\n                unnest(e1.extconfig) oid , e1.oid oid_ext\n            from\n                pg_catalog.pg_extension e1 ) c \n                join    pg_class cls on cls.oid = c.oid \n                join pg_namespace ns on ns.oid = cls.relnamespace\n            group by oid_ext        \n         ) cfg on cfg.oid_ext = e.oid\nORDER BY e.oid", NONE, false, "#labels"));
        step("dbeaver.tablespaces", () -> dbeaver(c, "tablespaces", "SELECT t.oid,t.*,pg_tablespace_location(t.oid) loc\nFROM pg_catalog.pg_tablespace t \nORDER BY t.oid", NONE, false, "oid", "spcname", "loc"));
        step("dbeaver.wrappers", () -> dbeaver(c, "wrappers", "SELECT l.oid,l.*,p.pronamespace as handler_schema_id \nFROM pg_catalog.pg_foreign_data_wrapper l\nLEFT OUTER JOIN pg_catalog.pg_proc p ON p.oid=l.fdwhandler \nORDER BY l.fdwname", NONE, false, "#labels"));
        step("dbeaver.servers", () -> dbeaver(c, "servers", "SELECT l.oid,l.* FROM pg_catalog.pg_foreign_server l\nORDER BY l.srvname", NONE, false, "#labels"));
        step("dbeaver.encodings", () -> dbeaver(c, "encodings", "SELECT c.contoencoding as encid,pg_catalog.pg_encoding_to_char(c.contoencoding) as encname\nFROM pg_catalog.pg_conversion c\nGROUP BY c.contoencoding\nORDER BY 2\n", NONE, false, "#labels"));
        step("dbeaver.languages", () -> dbeaver(c, "languages", "SELECT l.oid,l.* FROM pg_catalog.pg_language l \nORDER BY l.oid", NONE, false, "#labels"));
        Set<String> families = new HashSet<>(Arrays.asList("397", "424", "426", "428", "429", "434", "1970", "1974", "1976", "1982", "1988", "1989", "1991", "1994", "1996", "2789", "2968"));
        step("dbeaver.opfamilies", () -> dbeaver(c, "opfamilies", "SELECT of.oid,of.* FROM pg_catalog.pg_opfamily of \nORDER BY of.oid", NONE, false, "oid", families, "oid", "opfmethod", "opfname", "opfnamespace"));
        step("dbeaver.databaseComment", () -> dbeaver(c, "databaseComment", "select description from pg_shdescription join pg_database on objoid = pg_database.oid where datname = ?", new Object[]{"lake"}, false));
        step("dbeaver.superTables", () -> dbeaver(c, "superTables", "SELECT i.*,c.relnamespace FROM pg_catalog.pg_inherits i,pg_catalog.pg_class c WHERE i.inhrelid=? AND c.oid=i.inhparent ORDER BY i.inhseqno", new Object[]{tbl}, false));
        step("dbeaver.constraintDdl", () -> dbeaver(c, "constraintDdl", "SELECT pg_catalog.pg_get_constraintdef(?)", new Object[]{con}, false));
        step("dbeaver.indexDdl", () -> dbeaver(c, "indexDdl", "SELECT pg_catalog.pg_get_indexdef(?)", new Object[]{idx}, false));
        step("dbeaver.relationSize", () -> dbeaver(c, "relationSize", "select pg_catalog.pg_total_relation_size(?) as total_rel_size,pg_catalog.pg_relation_size(?) as rel_size", new Object[]{tbl, tbl}, false, "#labels"));
    }
    interface Step { void run() throws Exception; }
    static void step(String name, Step s) {
        try { s.run(); } catch (SQLException e) {
            out.append("== ").append(name).append(" ERROR ").append(e.getSQLState()).append(" ").append(e.getMessage().split("\n")[0]).append("\n");
        } catch (Exception e) {
            out.append("== ").append(name).append(" EXC ").append(e).append("\n");
        }
    }
    public static void main(String[] a) throws Exception {
        Connection c = DriverManager.getConnection(a[0], a[1], a[2]);
        Statement st = c.createStatement();
        step("setup", () -> {
            st.execute("DROP SCHEMA IF EXISTS jd CASCADE");
            st.execute("CREATE SCHEMA jd");
            st.execute("CREATE TABLE jd.t (id bigint PRIMARY KEY, name varchar(20) NOT NULL DEFAULT 'x', amount numeric(10,2), at timestamptz, flag boolean, tags text[], doc json)");
            st.execute("COMMENT ON TABLE jd.t IS 'a table'");
            st.execute("COMMENT ON COLUMN jd.t.name IS 'a name'");
            st.execute("CREATE SEQUENCE jd.s");
        });
        DatabaseMetaData md = c.getMetaData();
        step("product", () -> out.append("== product ").append(md.getDatabaseProductName()).append(" ").append(md.getDatabaseMajorVersion()).append("\n"));
        step("schemas", () -> dump("schemas", md.getSchemas()));
        step("catalogs", () -> dump("catalogs", md.getCatalogs()));
        step("tableTypes", () -> dump("tableTypes", md.getTableTypes()));
        step("tables", () -> dump("tables", md.getTables(null, "jd", "%", null)));
        step("columns", () -> dump("columns", md.getColumns(null, "jd", "t", "%")));
        step("primaryKeys", () -> dump("primaryKeys", md.getPrimaryKeys(null, "jd", "t")));
        step("indexInfo", () -> dump("indexInfo", md.getIndexInfo(null, "jd", "t", false, false)));
        step("importedKeys", () -> dump("importedKeys", md.getImportedKeys(null, "jd", "t")));
        step("exportedKeys", () -> dump("exportedKeys", md.getExportedKeys(null, "jd", "t")));
        step("typeInfo", () -> dump("typeInfo", md.getTypeInfo(), Integer.MAX_VALUE));
        step("functions", () -> dump("functions", md.getFunctions(null, "jd", "%")));
        step("procedures", () -> dump("procedures", md.getProcedures(null, "jd", "%")));
        step("udts", () -> dump("udts", md.getUDTs(null, "jd", "%", null)));
        step("tablePrivileges", () -> dump("tablePrivileges", md.getTablePrivileges(null, "jd", "t")));
        step("columnPrivileges", () -> dump("columnPrivileges", md.getColumnPrivileges(null, "jd", "t", "%")));
        step("bestRowIdentifier", () -> dump("bestRowIdentifier", md.getBestRowIdentifier(null, "jd", "t", DatabaseMetaData.bestRowSession, true)));
        step("versionColumns", () -> dump("versionColumns", md.getVersionColumns(null, "jd", "t")));
        step("insert", () -> {
            PreparedStatement ps = c.prepareStatement("INSERT INTO jd.t (id, name, amount, at, flag, tags, doc) VALUES (?, ?, ?, ?, ?, ?, ?::json)");
            for (int i = 1; i <= 3; i++) {
                ps.setLong(1, i); ps.setString(2, "n" + i); ps.setBigDecimal(3, new java.math.BigDecimal("1.5").multiply(java.math.BigDecimal.valueOf(i)));
                ps.setTimestamp(4, new Timestamp(1700000000000L + i * 1000)); ps.setBoolean(5, i % 2 == 0);
                ps.setArray(6, c.createArrayOf("text", new String[]{"a", "b" + i}));
                ps.setString(7, "{\"k\": " + i + "}");
                ps.addBatch();
            }
            int[] r = ps.executeBatch();
            out.append("== batch ").append(Arrays.toString(r)).append("\n");
        });
        step("select", () -> dump("select", st.executeQuery("SELECT * FROM jd.t ORDER BY id")));
        step("preparedSelect", () -> {
            PreparedStatement ps = c.prepareStatement("SELECT id, name, tags FROM jd.t WHERE id > ? AND name <> ? ORDER BY id");
            for (int k = 0; k < 7; k++) { ps.setLong(1, 1); ps.setString(2, "zz"); ResultSet rs = ps.executeQuery(); if (k == 6) dump("preparedSelect", rs); }
        });
        step("resultSetMetaData", () -> {
            ResultSet rs = st.executeQuery("SELECT id, name, amount, at FROM jd.t");
            ResultSetMetaData m = rs.getMetaData();
            for (int i = 1; i <= m.getColumnCount(); i++) out.append("   column ").append(m.getColumnName(i)).append(" ").append(m.getTableName(i)).append(" ").append(m.getSchemaName(i)).append(" ").append(m.getPrecision(i)).append(" ").append(m.getScale(i)).append(" ").append(m.isNullable(i)).append(" ").append(m.isAutoIncrement(i)).append("\n");
        });
        step("tx", () -> { c.setAutoCommit(false); st.execute("UPDATE jd.t SET name = 'u' WHERE id = 1"); c.rollback(); c.setAutoCommit(true); dump("afterRollback", st.executeQuery("SELECT name FROM jd.t WHERE id = 1")); });
        dbeaverSession(c, a[1]);
        step("error", () -> st.executeQuery("SELECT * FROM jd.nosuch"));
        step("afterError", () -> dump("afterError", st.executeQuery("SELECT 1")));
        System.out.print(out);
    }
}
