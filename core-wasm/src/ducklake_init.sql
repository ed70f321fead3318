-- DuckLake 1.0 catalog initialisation, as DuckDB 1.5.5 (ducklake extension 1.5.5, catalog
-- format "1.0") performs it at the first ATTACH of an empty PostgreSQL metadata catalog.
--
-- Source: /work/shared/traces/statements-pg155.jsonl.gz, step `attach_fresh` (conn 0, seq 15-73).
-- The 28 CREATE TABLE statements below are copied verbatim from that trace, in the order DuckDB
-- sent them. DuckDB then loads the initial rows with four `COPY ... FROM STDIN (FORMAT BINARY)`
-- statements (seq 70-73); the INSERTs at the end carry exactly the values of those COPY streams,
-- decoded from the capture (/work/shared/traces/pg155.pcapng.gz):
--   ducklake_snapshot          (0, <now>, 0, 1, 0)
--   ducklake_snapshot_changes  (0, 'created_schema:"main"', NULL, NULL, NULL)
--   ducklake_metadata          (key, value): version=1.0, created_by=<DuckDB build>,
--                              data_path=<DATA_PATH with trailing slash>, encrypted=false
--   ducklake_schema            (0, <uuid v4>, 0, NULL, 'main', 'main/', true)
-- DuckDB runs all of it inside one BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ ... COMMIT.
--
-- Placeholders (replaced by rocklake_core::writer::init_script with SQL-escaped text):
--   {CREATED_BY} {DATA_PATH} {MAIN_SCHEMA_UUID}
-- One statement per line; lines starting with "--" are comments and are not sent.
CREATE TABLE "public"."ducklake_metadata"("key" VARCHAR NOT NULL, "value" VARCHAR NOT NULL, "scope" VARCHAR, "scope_id" BIGINT);
CREATE TABLE "public"."ducklake_snapshot"("snapshot_id" BIGINT PRIMARY KEY, "snapshot_time" TIMESTAMP WITH TIME ZONE, "schema_version" BIGINT, "next_catalog_id" BIGINT, "next_file_id" BIGINT);
CREATE TABLE "public"."ducklake_snapshot_changes"("snapshot_id" BIGINT PRIMARY KEY, "changes_made" VARCHAR, "author" VARCHAR, "commit_message" VARCHAR, "commit_extra_info" VARCHAR);
CREATE TABLE "public"."ducklake_schema"("schema_id" BIGINT PRIMARY KEY, "schema_uuid" UUID, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "schema_name" VARCHAR, "path" VARCHAR, "path_is_relative" BOOLEAN);
CREATE TABLE "public"."ducklake_table"("table_id" BIGINT, "table_uuid" UUID, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "schema_id" BIGINT, "table_name" VARCHAR, "path" VARCHAR, "path_is_relative" BOOLEAN);
CREATE TABLE "public"."ducklake_view"("view_id" BIGINT, "view_uuid" UUID, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "schema_id" BIGINT, "view_name" VARCHAR, "dialect" VARCHAR, "sql" VARCHAR, "column_aliases" VARCHAR);
CREATE TABLE "public"."ducklake_tag"("object_id" BIGINT, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "key" VARCHAR, "value" VARCHAR);
CREATE TABLE "public"."ducklake_column_tag"("table_id" BIGINT, "column_id" BIGINT, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "key" VARCHAR, "value" VARCHAR);
CREATE TABLE "public"."ducklake_data_file"("data_file_id" BIGINT PRIMARY KEY, "table_id" BIGINT, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "file_order" BIGINT, "path" VARCHAR, "path_is_relative" BOOLEAN, "file_format" VARCHAR, "record_count" BIGINT, "file_size_bytes" BIGINT, "footer_size" BIGINT, "row_id_start" BIGINT, "partition_id" BIGINT, "encryption_key" VARCHAR, "mapping_id" BIGINT, "partial_max" BIGINT);
CREATE TABLE "public"."ducklake_file_column_stats"("data_file_id" BIGINT, "table_id" BIGINT, "column_id" BIGINT, "column_size_bytes" BIGINT, "value_count" BIGINT, "null_count" BIGINT, "min_value" VARCHAR, "max_value" VARCHAR, "contains_nan" BOOLEAN, "extra_stats" VARCHAR);
CREATE TABLE "public"."ducklake_file_variant_stats"("data_file_id" BIGINT, "table_id" BIGINT, "column_id" BIGINT, "variant_path" VARCHAR, "shredded_type" VARCHAR, "column_size_bytes" BIGINT, "value_count" BIGINT, "null_count" BIGINT, "min_value" VARCHAR, "max_value" VARCHAR, "contains_nan" BOOLEAN, "extra_stats" VARCHAR);
CREATE TABLE "public"."ducklake_delete_file"("delete_file_id" BIGINT PRIMARY KEY, "table_id" BIGINT, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "data_file_id" BIGINT, "path" VARCHAR, "path_is_relative" BOOLEAN, "format" VARCHAR, "delete_count" BIGINT, "file_size_bytes" BIGINT, "footer_size" BIGINT, "encryption_key" VARCHAR, "partial_max" BIGINT);
CREATE TABLE "public"."ducklake_column"("column_id" BIGINT, "begin_snapshot" BIGINT, "end_snapshot" BIGINT, "table_id" BIGINT, "column_order" BIGINT, "column_name" VARCHAR, "column_type" VARCHAR, "initial_default" VARCHAR, "default_value" VARCHAR, "nulls_allowed" BOOLEAN, "parent_column" BIGINT, "default_value_type" VARCHAR, "default_value_dialect" VARCHAR);
CREATE TABLE "public"."ducklake_table_stats"("table_id" BIGINT, "record_count" BIGINT, "next_row_id" BIGINT, "file_size_bytes" BIGINT);
CREATE TABLE "public"."ducklake_table_column_stats"("table_id" BIGINT, "column_id" BIGINT, "contains_null" BOOLEAN, "contains_nan" BOOLEAN, "min_value" VARCHAR, "max_value" VARCHAR, "extra_stats" VARCHAR);
CREATE TABLE "public"."ducklake_partition_info"("partition_id" BIGINT, "table_id" BIGINT, "begin_snapshot" BIGINT, "end_snapshot" BIGINT);
CREATE TABLE "public"."ducklake_partition_column"("partition_id" BIGINT, "table_id" BIGINT, "partition_key_index" BIGINT, "column_id" BIGINT, "transform" VARCHAR);
CREATE TABLE "public"."ducklake_file_partition_value"("data_file_id" BIGINT, "table_id" BIGINT, "partition_key_index" BIGINT, "partition_value" VARCHAR);
CREATE TABLE "public"."ducklake_files_scheduled_for_deletion"("data_file_id" BIGINT, "path" VARCHAR, "path_is_relative" BOOLEAN, "schedule_start" TIMESTAMP WITH TIME ZONE);
CREATE TABLE "public"."ducklake_inlined_data_tables"("table_id" BIGINT, "table_name" VARCHAR, "schema_version" BIGINT);
CREATE TABLE "public"."ducklake_column_mapping"("mapping_id" BIGINT, "table_id" BIGINT, "type" VARCHAR);
CREATE TABLE "public"."ducklake_name_mapping"("mapping_id" BIGINT, "column_id" BIGINT, "source_name" VARCHAR, "target_field_id" BIGINT, "parent_column" BIGINT, "is_partition" BOOLEAN);
CREATE TABLE "public"."ducklake_schema_versions"("begin_snapshot" BIGINT, "schema_version" BIGINT, "table_id" BIGINT);
CREATE TABLE "public"."ducklake_macro"("schema_id" BIGINT, "macro_id" BIGINT, "macro_name" VARCHAR, "begin_snapshot" BIGINT, "end_snapshot" BIGINT);
CREATE TABLE "public"."ducklake_macro_impl"("macro_id" BIGINT, "impl_id" BIGINT, "dialect" VARCHAR, "sql" VARCHAR, "type" VARCHAR);
CREATE TABLE "public"."ducklake_macro_parameters"("macro_id" BIGINT, "impl_id" BIGINT, "column_id" BIGINT, "parameter_name" VARCHAR, "parameter_type" VARCHAR, "default_value" VARCHAR, "default_value_type" VARCHAR);
CREATE TABLE "public"."ducklake_sort_info"("sort_id" BIGINT, "table_id" BIGINT, "begin_snapshot" BIGINT, "end_snapshot" BIGINT);
CREATE TABLE "public"."ducklake_sort_expression"("sort_id" BIGINT, "table_id" BIGINT, "sort_key_index" BIGINT, "expression" VARCHAR, "dialect" VARCHAR, "sort_direction" VARCHAR, "null_order" VARCHAR);
INSERT INTO "public"."ducklake_snapshot" VALUES (0, NOW(), 0, 1, 0);
INSERT INTO "public"."ducklake_snapshot_changes" VALUES (0, 'created_schema:"main"', NULL, NULL, NULL);
INSERT INTO "public"."ducklake_metadata" ("key", "value") VALUES ('version', '1.0'), ('created_by', '{CREATED_BY}'), ('data_path', '{DATA_PATH}'), ('encrypted', 'false');
INSERT INTO "public"."ducklake_schema" VALUES (0, '{MAIN_SCHEMA_UUID}', 0, NULL, 'main', 'main/', true);
