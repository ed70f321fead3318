import java.sql.*;
import java.util.*;

/// JDBC (pgjdbc) against a server: DatabaseMetaData as GUI tools call it, a batch of prepared
/// inserts, prepared selects past the server-prepare threshold, result-set metadata, a rolled-back
/// transaction and an error. Prints one block per step ("== name" first); tests/tests/jdbc.rs runs it
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
        step("error", () -> st.executeQuery("SELECT * FROM jd.nosuch"));
        step("afterError", () -> dump("afterError", st.executeQuery("SELECT 1")));
        System.out.print(out);
    }
}
