//! The session time zone as PostgreSQL 15 has it: `SET TimeZone` / `SET TIME ZONE` with zone
//! names, hours, intervals and POSIX strings (and their errors), the ParameterStatus a client
//! sees, a zone given at start-up (`options=-c TimeZone=…`, as JDBC clients send their JVM's
//! zone); timestamptz text in and out in the session's zone (offsets of minutes and seconds,
//! zone names and abbreviations in the input, daylight-saving gaps and folds), conversions
//! to and from timestamp and date, comparisons across the types, `timestamptz ± interval`
//! across daylight-saving changes, `extract` / `date_part` / `date_trunc` in local time,
//! `AT TIME ZONE` / `timezone()`, `current_date` / `localtimestamp`, COPY text and CSV both
//! ways, values bound by the extended protocol; and the date/time functions that read the
//! zone or a timestamp's fields (`to_char`, `generate_series` over timestamps, `age`,
//! `justify_*`, `make_*`, `date_bin`, `isfinite`). Every outcome is compared with
//! PostgreSQL's: values as the text the server sent.

use rocklake_tests::same_outcomes_as_postgres;

const RUNNER: &str = r#"
import sys, json, datetime, psycopg
from psycopg.types.string import TextLoader
out = []
def connect(**kw):
    c = psycopg.connect(sys.argv[1], autocommit=True, **kw)
    # The values as the server wrote them, not as Python reads them.
    for t in ["timestamptz", "timestamp", "date", "time", "interval", "numeric", "float8"]:
        c.adapters.register_loader(t, TextLoader)
    return c
def run(c, sql, params=None):
    try:
        cur = c.execute(sql, params)
        rows = cur.fetchall() if cur.description else None
        res = [sql, [d.name for d in cur.description] if cur.description else None,
               [d.type_code for d in cur.description] if cur.description else None, rows, cur.statusmessage]
    except psycopg.Error as e:
        res = [sql, "err", e.sqlstate, e.diag.message_primary, e.diag.message_detail, e.diag.message_hint]
    res.append(c.info.parameter_status("TimeZone"))
    out.append(res)

c = connect()
for s in [
    "SHOW TimeZone",
    "SET TimeZone = 'america/new_york'", "SHOW TimeZone",
    "SET TIME ZONE 'Asia/Kolkata'", "SHOW TIME ZONE",
    "SET TIME ZONE -8", "SHOW TimeZone",
    "SET TIME ZONE 5.5", "SHOW TimeZone",
    "SET TimeZone = '+3'", "SHOW TimeZone",
    "SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE", "SHOW TimeZone",
    "SET TIME ZONE INTERVAL '-07:00:01'", "SHOW TimeZone",
    "SET TimeZone = 'UTC+3'", "SHOW TimeZone",
    "SET TimeZone = '<+03>-3'", "SHOW TimeZone",
    "SET TimeZone = 'EST5EDT'", "SHOW TimeZone",
    "SET TimeZone = 'utc'", "SHOW TimeZone",
    "SET TimeZone = 'Mars/Olympus'",
    "SET TimeZone = ' UTC'",
    "SET TimeZone = 'Z'",
    "SET TIME ZONE 170",
    "SET TIME ZONE INTERVAL '1 day'",
    "SET TIME ZONE INTERVAL '1 month'",
    "SET TIME ZONE LOCAL", "SHOW TimeZone",
    "SELECT current_setting('time zone')",
    "SELECT current_setting('time zone', true)",
    "SET \"time zone\" = 'UTC'",
    "SET TimeZone = 'Europe/Berlin'",
    "SELECT current_setting('TimeZone'), setting FROM pg_settings WHERE name = 'TimeZone'",
    "RESET TimeZone", "SHOW TimeZone",
    "BEGIN", "SET LOCAL TimeZone = 'Asia/Tokyo'", "SELECT '2020-01-01 00:00+00'::timestamptz", "COMMIT",
    "SELECT '2020-01-01 00:00+00'::timestamptz",
    "BEGIN", "SET TimeZone = 'Asia/Tokyo'", "ROLLBACK", "SHOW TimeZone",
    "SELECT set_config('TimeZone', 'Australia/Adelaide', false)",
    "SELECT '2020-01-01 00:00+00'::timestamptz",
    "SET TimeZone = 'America/New_York'",
    # Input and output.
    "SELECT '2020-07-01 12:00'::timestamptz, '2020-01-01 12:00'::timestamptz, '2020-07-01'::timestamptz",
    "SELECT '2018-03-11 02:30'::timestamptz, '2018-11-04 01:30'::timestamptz, '2018-11-04 00:59:59'::timestamptz",
    "SELECT '2020-01-01 12:00 Europe/Berlin'::timestamptz, '2020-01-01 12:00 PST'::timestamptz, '2020-01-01 12:00 CEST'::timestamptz",
    "SELECT '2020-01-01 12:00+02'::timestamptz, '2020-01-01T12:00:00Z'::timestamptz, '2020-01-01 12:00:00 +05:30'::timestamptz, '2020-01-01 12:00 UTC'::timestamptz",
    "SELECT '2050-07-01 12:00'::timestamptz, '3000-01-01'::timestamptz, '1880-01-01'::timestamptz",
    "SELECT 'infinity'::timestamptz, '-infinity'::timestamptz, 'infinity'::timestamptz::timestamp",
    "SELECT '2020-01-01 12:00+05'::timestamp",
    "SELECT '2020-01-01 12:00 Nowhere/Else'::timestamptz",
    # Conversions and comparisons.
    "SELECT '2020-07-01 12:00'::timestamp::timestamptz, '2020-07-01 12:00+00'::timestamptz::timestamp, '2020-07-01'::date::timestamptz",
    "SELECT '2020-07-01 02:00+00'::timestamptz::date, '2020-07-01 02:00+00'::timestamptz::time, '2020-07-01 12:00+00'::timestamptz::text, CAST('2020-07-01 12:00+00'::timestamptz AS varchar)",
    "SELECT '2020-07-01 12:00+00'::timestamptz = '2020-07-01 08:00'::timestamp, '2020-07-01'::date < '2020-07-01 03:00+00'::timestamptz, '2020-07-01'::date = '2020-07-01 04:00+00'::timestamptz",
    # Arithmetic across daylight-saving changes.
    "SELECT '2020-03-07 12:00'::timestamptz + interval '1 day', '2020-03-07 12:00'::timestamptz + interval '24 hours', '2020-02-08 12:00'::timestamptz + interval '1 month'",
    "SELECT interval '1 day' + '2020-03-07 12:00'::timestamptz, '2020-03-09 12:00'::timestamptz - interval '1 day 1 hour', '2020-03-09 12:00'::timestamptz - '2020-03-07 12:00'::timestamptz",
    "SELECT '2020-10-31 12:00'::timestamptz + interval '1 mon 1 day', '2020-11-01 01:30-04'::timestamptz + interval '1 hour'",
    # Fields and truncation in local time.
    "SELECT extract(hour FROM '2020-07-01 12:00+00'::timestamptz), extract(timezone FROM '2020-07-01 12:00+00'::timestamptz), extract(timezone_hour FROM '2020-07-01 12:00+00'::timestamptz), extract(timezone_minute FROM '2020-07-01 12:00+00'::timestamptz)",
    "SELECT extract(epoch FROM '2020-07-01 12:00+00'::timestamptz), date_part('day', '2020-07-01 02:00+00'::timestamptz), date_part('second', '2020-07-01 02:00:01.5+00'::timestamptz), extract(dow FROM '2020-07-05 02:00+00'::timestamptz)",
    "SELECT date_trunc('day', '2020-07-01 02:00+00'::timestamptz), date_trunc('hour', '2020-11-01 05:30+00'::timestamptz), date_trunc('hour', '2020-11-01 06:30+00'::timestamptz), date_trunc('month', '2020-07-01 02:00+00'::timestamptz)",
    "SELECT date_trunc('day', '2020-11-01 12:00'::timestamptz), date_trunc('week', '2020-03-10 12:00'::timestamptz), date_trunc('day', '2020-07-01'::date)",
    # AT TIME ZONE.
    "SELECT '2020-07-01 12:00+00'::timestamptz AT TIME ZONE 'America/New_York', '2020-07-01 12:00'::timestamp AT TIME ZONE 'PST', '2020-07-01 12:00+00'::timestamptz AT TIME ZONE '+05'",
    "SELECT '2020-07-01 12:00+00'::timestamptz AT TIME ZONE 'UTC+3', timezone('Asia/Tokyo', '2020-07-01 12:00+00'::timestamptz), '2020-07-01 12:00+00'::timestamptz AT TIME ZONE INTERVAL '+02:00'",
    "SELECT '2020-07-01 12:00' AT TIME ZONE 'UTC', '2020-07-01'::date AT TIME ZONE 'UTC', NULL::timestamptz AT TIME ZONE 'UTC', now() AT TIME ZONE NULL",
    "SELECT pg_typeof(now() AT TIME ZONE 'UTC'), pg_typeof(localtimestamp AT TIME ZONE 'UTC')",
    "SELECT '2020-07-01 12:00+00'::timestamptz AT TIME ZONE 'Nowhere'",
    "SELECT timezone(interval '1 day', now())",
    "SELECT '2020-01-01 12:00'::timestamp AT TIME ZONE 1",
    "SET TimeZone = 'Pacific/Kiritimati'",
    "SELECT current_date = (now() AT TIME ZONE 'Pacific/Kiritimati')::date, localtimestamp - (now() AT TIME ZONE 'Pacific/Kiritimati') < interval '1 second'",
    "SET TimeZone = 'Asia/Kathmandu'",
    "SELECT '2020-07-01 12:00+00'::timestamptz, '1900-01-01'::timestamptz",
    # Tables, COPY and bound values.
    "SET TimeZone = 'Europe/Berlin'",
    "CREATE TABLE tz1 (id INTEGER PRIMARY KEY, t TIMESTAMPTZ, l TIMESTAMP, d DATE)",
    "INSERT INTO tz1 VALUES (1, '2020-07-01 12:00+00', '2020-07-01 12:00', '2020-07-01'), (2, '2020-12-31 23:30+00', '2020-12-31 23:30', '2020-12-31'), (3, '2021-06-01 08:00', '2021-06-01 08:00', '2021-06-01')",
    "SELECT id, t, l, d, t::date, l::timestamptz, d::timestamptz, t = l, t < d FROM tz1 ORDER BY id",
    "SELECT id, extract(day FROM t), date_trunc('year', t), t AT TIME ZONE 'UTC', l AT TIME ZONE 'UTC', t + interval '1 month' FROM tz1 ORDER BY id",
    "SELECT id FROM tz1 WHERE t > '2021-01-01' AND t < '2021-06-01 08:00:01' ORDER BY 1",
    "SELECT min(t), max(t), count(DISTINCT t::date) FROM tz1",
    "UPDATE tz1 SET t = '2022-03-27 02:30' WHERE id = 3 RETURNING t",
    "SET TimeZone = 'Asia/Tokyo'",
    "SELECT id, t, l FROM tz1 ORDER BY id",
    # Stored into another timestamp type (assignment), and types met in one column.
    "CREATE TABLE a3 (id INTEGER PRIMARY KEY, t TIMESTAMPTZ, l TIMESTAMP, d DATE DEFAULT '2020-01-01 20:00+00'::timestamptz, tm TIME)",
    "INSERT INTO a3 VALUES (1, '2020-07-01 01:00'::timestamp, '2020-07-01 01:00+00'::timestamptz, '2020-06-30 20:00+00'::timestamptz, '2020-06-30 20:00+00'::timestamptz)",
    "INSERT INTO a3 (id, t, l, d) SELECT 2, l, t, t FROM a3 WHERE id = 1",
    "INSERT INTO a3 (id) VALUES (3)",
    "UPDATE a3 SET l = t, t = l WHERE id = 2",
    "INSERT INTO a3 VALUES (1) ON CONFLICT (id) DO UPDATE SET tm = '2020-06-01 03:00+00'::timestamptz",
    "SELECT * FROM a3 ORDER BY id",
    "SELECT t FROM a3 WHERE id = 1 UNION ALL SELECT l FROM a3 WHERE id = 1",
    "SELECT coalesce(l, t), CASE WHEN id = 1 THEN t ELSE l END, ARRAY[t, l], t IN (l, d) FROM a3 ORDER BY id",
    "SELECT t BETWEEN '2020-07-01'::date AND '2020-07-02'::timestamp, d + time '10:00', t - d FROM a3 ORDER BY id",
    "VALUES ('2020-01-01 00:00'::timestamp), ('2020-01-01 00:00+00'::timestamptz)",
    "SELECT greatest('2020-01-01 00:00'::timestamp, '2020-01-01 07:00+00'::timestamptz), least('2020-01-01'::date, '2020-01-01 07:00+00'::timestamptz), nullif('2020-01-01 09:00'::timestamp, '2020-01-01 00:00+00'::timestamptz)",
    "DROP TABLE a3",
    # Comparisons across the types in every form.
    "SET TimeZone = 'America/New_York'",
    "SELECT '2020-07-01 12:00'::timestamp = any(array['2020-07-01 16:00+00'::timestamptz]), '2020-07-01 12:00'::timestamp = any(array['2020-07-01 12:00+00'::timestamptz]), '2020-07-01 04:00+00'::timestamptz = any('{2020-07-01}'::date[])",
    "SELECT '2020-07-01 12:00' = any('{2020-07-01 12:00}'::timestamptz[]), '2020-07-01 12:00+00' = all(array['2020-07-01 08:00'::timestamptz]), '2020-07-01 12:00+00' <> any(array['2020-07-01 08:00'::timestamptz])",
    "SELECT '2020-07-01 12:00'::timestamp in (select '2020-07-01 16:00+00'::timestamptz), '2020-07-01 16:00+00'::timestamptz in (select '2020-07-01 12:00'::timestamp), '2020-07-01 12:00'::timestamp = any(select '2020-07-01 16:00+00'::timestamptz)",
    "SELECT '2020-07-01 00:00'::timestamp in (select '2020-07-01'::date), '2020-07-01'::date in (select '2020-07-01 00:00'::timestamp)",
    "SELECT '2020-07-01 12:00'::timestamp is not distinct from '2020-07-01 16:00+00'::timestamptz, '2020-07-01'::date is not distinct from '2020-07-01 04:00+00'::timestamptz",
    "SELECT case '2020-07-01 12:00'::timestamp when '2020-07-01 16:00+00'::timestamptz then 'y' else 'n' end, case '2020-07-01 16:00+00'::timestamptz when '2020-07-01 12:00'::timestamp then 'y' else 'n' end, case '2020-07-01 12:00'::timestamp when '2020-07-01 12:00' then 'y' else 'n' end",
    # Range ends and infinities.
    "SELECT '300000-01-01'::date::timestamptz",
    "SELECT '5874897-12-31'::date::timestamp",
    "SELECT extract(epoch from '294276-12-31 23:00+00'::timestamptz)",
    "SELECT 'infinity'::timestamptz::date, '-infinity'::timestamptz::date, 'infinity'::timestamptz::time, 'infinity'::date, '-infinity'::date::timestamp",
    "SELECT date_part('epoch', '2020-07-01'::date), date_part('hour', '2020-07-01'::date)",
    "SELECT '0001-01-01 00:00+00'::timestamptz, '0001-01-01 00:00+00'::timestamptz::timestamp",
    "SET TimeZone = 'Etc/Unknown'",
    # Special input words.
    "SET TimeZone = 'Pacific/Kiritimati'",
    "SELECT 'epoch'::timestamptz, 'epoch'::timestamp, 'epoch'::date, 'allballs'::time, 'EPOCH'::timestamptz",
    "SELECT 'now'::timestamptz = now(), 'today'::timestamptz = date_trunc('day', now()), 'tomorrow'::date - 'yesterday'::date, 'today'::date = current_date, 'now'::timestamp = localtimestamp, 'today'::timestamp = current_date, ' today '::date = current_date",
    "BEGIN", "SELECT 'now'::timestamptz = now(), 'now'::time = localtimestamp::time", "COMMIT",
    "SELECT '2020-07-01 23:00'::date, date '2020-07-01 12:00+02', '2020-07-01 23:00+05'::date",
    # Fractions of seconds (rounded to even past microseconds), precisions, offset limits.
    "SET TimeZone = 'UTC'",
    "SELECT '2020-07-01 12:00:00.1234567'::timestamptz, '2020-07-01 12:00:00.9999995'::timestamptz, '2020-07-01 12:00:00.9999985'::timestamp, '12:00:00.0000005'::time, '12:00:00.0000015'::time",
    "SELECT '2020-07-01 12:00:00.56789'::timestamptz(2), '2020-07-01 12:00:00.56789'::timestamp(0), '12:00:00.56789'::time(1), '1960-01-01 00:00:00.5'::timestamp(0), '23:59:59.9'::time(0)",
    "CREATE TABLE pr (a TIMESTAMPTZ(0), b TIMESTAMP(3), c TIME(2), d TIMESTAMP(7))",
    "INSERT INTO pr VALUES ('2020-07-01 12:00:00.6', '2020-07-01 12:00:00.12345', '12:00:00.555', '2020-07-01 12:00:00.1234567')",
    "SELECT * FROM pr",
    "SELECT format_type(atttypid, atttypmod), atttypmod FROM pg_attribute WHERE attrelid = 'pr'::regclass AND attnum > 0 ORDER BY attnum",
    "SELECT column_name, data_type, datetime_precision FROM information_schema.columns WHERE table_name = 'pr' ORDER BY ordinal_position",
    "DROP TABLE pr",
    "SELECT '2020-07-01 12:00+16'::timestamptz",
    "SELECT '2020-07-01 12:00+15:59:59'::timestamptz",
    "SELECT '2020-07-01 12:00+15:59:60'::timestamptz",
    "SELECT * FROM pg_timezone_names WHERE name IN ('UTC', 'Asia/Kathmandu', 'Asia/Tokyo', 'Etc/GMT+5') ORDER BY 1",
    "SELECT * FROM pg_timezone_abbrevs WHERE abbrev IN ('PST', 'PDT', 'NZDT', 'EST', 'CEST') ORDER BY 1",
    # to_char in the session's zone.
    "SET TimeZone = 'America/New_York'",
    "SELECT to_char('2020-07-04 15:05:09.123456+00'::timestamptz, 'YYYY-MM-DD HH24:MI:SS.MS US TZ tz OF TZH:TZM AM am a.m. HH HH12 Day DAY day Dy DY dy Month MONTH month Mon MON mon')",
    "SELECT to_char('2020-07-04 15:05:09.123456+00'::timestamptz, 'FMMonth FMDay FMDD FMHH12 DDD IDDD D ID W WW IW Q J CC Y,YYY YYY YY Y IYYY RM rm FMRM \"quoted YYYY\" \\\"x DDth DDTH FMDDth SSSS SSSSS FF1 FF3 FF6 AD ad B.C. TMMonth')",
    "SELECT to_char('2020-01-01'::date, 'YYYY TZ'), to_char('2020-01-01 00:00'::timestamp, 'TZ|OF|'), to_char(interval '1 year 2 mons 3 days 04:05:06.5', 'YYYY MM DD HH24 MI SS MS'), to_char(interval '50 hours', 'HH24 HH')",
    "SELECT to_char(interval '1 day', 'Month')",
    "SELECT to_char('2020-07-01'::date, 'WW W'), to_char('2021-01-03'::date, 'IYYY-IW-ID WW D DDD'), to_char('2024-12-30'::date, 'YYYY-MM-DD Dy IW')",
    "SELECT to_char(NULL::timestamp, 'YYYY'), to_char(now(), NULL), to_char('2020-01-01'::timestamp, ''), to_char('infinity'::timestamp, 'YYYY')",
    "SELECT to_char('2020-01-01', 'YYYY')",
    "SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE",
    "SELECT to_char('2020-01-01 00:00+00'::timestamptz, 'TZ OF TZH TZM HH24:MI')",
    # generate_series over timestamps (a timestamptz series steps in the session's zone).
    "SET TimeZone = 'America/New_York'",
    "SELECT pg_typeof(g), g FROM generate_series('2020-03-07', '2020-03-10', interval '1 day') g",
    "SELECT g FROM generate_series('2020-03-07'::date, '2020-03-09'::date, interval '12 hours') g",
    "SELECT * FROM generate_series('2020-01-01'::timestamp, '2020-01-03', '1 day') g",
    "SELECT generate_series('2020-01-01'::timestamp, '2020-01-03', interval '0 day')",
    "SELECT generate_series('2020-01-01'::timestamp, '2020-01-03', interval '-1 day')",
    "SELECT generate_series('2020-01-03'::timestamp, '2020-01-01', interval '-1 day')",
    "SELECT g FROM generate_series('2020-01-31'::timestamp, '2020-05-31', interval '1 month') g",
    "SELECT generate_series('2020-11-01 00:00'::timestamptz, '2020-11-01 03:00', '1 hour')",
    "SELECT d::date, count(*) FROM generate_series('2020-01-01'::timestamp, '2020-01-01 03:00', '90 minutes') d GROUP BY 1",
    # Calendar functions (a timestamptz's fields in the session's zone).
    "SET TimeZone = 'America/New_York'",
    "SELECT age('2001-04-10'::timestamp, '1957-06-13'::timestamp), age('1957-06-13'::timestamp, '2001-04-10'::timestamp), age('2020-03-01 01:00'::timestamp, '2020-01-31 03:00'::timestamp)",
    "SELECT age('2020-03-08 12:00'::timestamptz, '2020-03-07 12:00'::timestamptz), age('2020-07-01'::date, '2019-12-31'::date), age('2020-01-31', '2019-02-28'), age('2020-02-29'::timestamp, '2021-03-01')",
    "SELECT age(current_date::timestamp) = interval '0', age(now()) <= interval '0', pg_typeof(age('2020-01-01'::date))",
    "SELECT justify_hours(interval '27 hours'), justify_hours(interval '-27 hours 1 day'), justify_days(interval '35 days'), justify_days(interval '1 mon -35 days'), justify_interval(interval '1 mon -1 day'), justify_interval(interval '-27 hours'), justify_interval('1 mon 1 day -25 hours')",
    "SELECT isfinite('infinity'::timestamp), isfinite(now()), isfinite('2020-01-01'::date), isfinite('-infinity'::date), isfinite(interval '1 day')",
    "SELECT make_date(2020, 2, 29), make_date(-44, 3, 15), make_time(12, 30, 1.5), make_timestamp(2020, 7, 1, 12, 30, 15.25), make_timestamptz(2020, 7, 1, 12, 30, 15.25), make_timestamptz(2020, 7, 1, 12, 30, 0, 'Asia/Tokyo')",
    "SELECT make_interval(1, 2, 3, 4, 5, 6, 7.5), make_interval(), make_interval(0, 0, 0, 0, 0, 0, 0.000001), make_interval(days => 10), make_interval(1, hours => 2), make_interval(secs => 1.5, weeks => 1)",
    "SELECT make_date(2021, 2, 29)",
    "SELECT make_date(0, 1, 1)",
    "SELECT make_time(25, 0, 0)",
    "SELECT make_time(24, 0, 0), make_time(23, 59, 59.9999999)",
    "SELECT date_bin('15 minutes', '2020-02-11 15:44:17'::timestamp, '2001-01-01'), date_bin('15 minutes', '2020-02-11 15:44:17'::timestamptz, '2001-01-01'), date_bin('1 day', '2020-03-08 12:00'::timestamptz, '2020-01-01'), date_bin('15 minutes', '2000-12-31 23:50'::timestamp, '2001-01-01')",
    "SELECT date_bin('1 month', now(), now())",
    "SELECT date_bin('0 minutes', now(), now())",
    "SELECT date_trunc('day', '2020-07-01 02:00+00'::timestamptz, 'Asia/Tokyo'), date_trunc('hour', '2020-07-01 02:30+00'::timestamptz, 'Asia/Kathmandu'), date_trunc('month', '2020-07-01'::date, 'UTC'), date_trunc('day', '2020-07-01 02:00'::timestamp, 'UTC')",
    "SELECT localtime = localtimestamp::time, pg_typeof(localtime)",
    "SELECT date_part('microseconds', current_timestamp(0))::bigint % 1000000 = 0, date_part('microseconds', localtimestamp(2))::bigint % 10000 = 0, pg_typeof(localtimestamp(2)), pg_typeof(current_timestamp(1))",
    # to_date and to_timestamp read to_char's templates.
    "SET TimeZone = 'UTC'",
    "select to_date('5','MM'), to_timestamp('10:30','HH24:MI'), to_date('2020-07-04', 'YYYY-MM-DD'), to_date('04/07/2020', 'DD/MM/YYYY'), to_date('20200704', 'YYYYMMDD'), to_date('July 4, 2020', 'Month DD, YYYY'), to_date('4 jul 20', 'DD mon YY')",
    "select to_timestamp('2020-07-04 03:05:09.5 PM', 'YYYY-MM-DD HH:MI:SS.MS AM'), to_timestamp('2020-07-04 15:05:09.123456', 'YYYY-MM-DD HH24:MI:SS.US'), to_timestamp('2020-07-04 15:05 +05:30', 'YYYY-MM-DD HH24:MI TZH:TZM')",
    "select to_date('2020-13-01', 'YYYY-MM-DD')",
    "select to_date('abc', 'YYYY')",
    "select to_date('20', 'YYYY'), to_date('99', 'YY'), to_date('70', 'YY'), to_date('069', 'YYY')",
    "select to_timestamp('13:00 PM', 'HH:MI PM')",
    "select to_date('2020-02-30', 'YYYY-MM-DD')",
    "select to_date('  2020   07 04', 'YYYY MM DD'), to_date('2020x07x04', 'YYYY-MM-DD'), to_date('2020-07-04 extra', 'YYYY-MM-DD')",
    "select to_date('2020x07x04', 'YYYY-MM-DD')",
    "select to_date('202007', 'YYYYMMDD')",
    "select to_date('44 BC', 'YYYY BC'), to_date('2020-200', 'YYYY-DDD'), to_date('2459035', 'J')",
    "select to_timestamp('1 7 2020', 'DD MM YYYY'), to_timestamp('2020 Saturday Jul 04', 'YYYY Day Mon DD')",
    "set timezone = 'America/New_York'",
    "select to_timestamp('2020-07-04 12:00', 'YYYY-MM-DD HH24:MI'), to_timestamp('2020-03-08 02:30', 'YYYY-MM-DD HH24:MI'), to_timestamp('2020-07-04 12:00 -03', 'YYYY-MM-DD HH24:MI TZH')",
    "select to_date('2020-7-4', 'YYYY-MM-DD'), to_date('2020-07', 'YYYY-MM-DD'), to_date('Jul 04 2020', 'Mon DD YYYY'), to_date('XII 2020', 'RM YYYY'), to_date('1st Jan 2021', 'DDth Mon YYYY')",
    "select to_date('Juli 4 2020', 'Month DD YYYY')",
    "select to_date('2020', 'YYYY TZ')",
    "select to_date('2020-07-04', 'YYYY-MM-DD TZ')",
    "select to_date(null, 'YYYY'), to_date('2020', null)",
    "select to_timestamp('12', 'MM'), to_timestamp('2020-07-04T10:11:12', 'YYYY-MM-DD\"T\"HH24:MI:SS')",
    "select to_date('2020 07 04', 'YYYYMMDD')",
    "select to_timestamp('2020-07-04 12:00-03', 'YYYY-MM-DD HH24:MITZH'), to_timestamp('2020-07-04 12:00 +0530', 'YYYY-MM-DD HH24:MI TZHTZM'), to_timestamp('2020-07-04 12:00 -05:30', 'YYYY-MM-DD HH24:MI TZH:TZM')",
    # Review findings: make_timestamptz's numeric zones (ISO sign), to_char's escapes, padding
    # and interval fields, make_* ranges, timestamp with date.
    "set timezone = 'UTC'",
    "select make_timestamptz(2024,1,1,0,0,0,'+05'), make_timestamptz(2024,1,1,0,0,0,'-08'), make_timestamptz(2024,1,1,0,0,0,'+05:30'), make_timestamptz(2024,1,1,0,0,0,'+15'), make_timestamptz(2024,1,1,0,0,0,'+0530'), make_timestamptz(2024,1,1,0,0,0,'UTC+3'), make_timestamptz(2024,1,1,0,0,0,'+15:59:59')",
    "select make_timestamptz(2024,1,1,0,0,0,'+16')",
    "select make_timestamptz(2024,1,1,0,0,0,'5')",
    "select make_timestamptz(2024,1,1,0,0,0,'-08:61')",
    "select to_char(interval '1 day', 'BC')",
    "select to_char(make_date(-44,3,15),'YYYY BC IYYY IYY IY I')",
    "select to_char(timestamp '2024-02-29 13:05', E'YYYY\\\\MM'), to_char(timestamp '2024-02-29 13:05', 'YYYY\\\\MM'), to_char(timestamp '2024-02-29 13:05', E'a\\\\b\\\\YYYY\\\\\\\\c'), to_char(timestamp '2024-02-29 13:05', E'x\\\\yz'), to_char(timestamp '2024-02-29 13:05', E'YYYY\\\\'), to_char(timestamp '2024-02-29 13:05', '\"\\'), to_char(timestamp '2024-01-01', 'YYYY\\\"x\"')",
    "select to_char(interval '-1 year -2 months -3 days','DD'), to_char(interval '-1 day','DDth'), to_char(interval '-1 year', 'YYYY'), to_char(timestamp '2024-02-29','Y,YYYth')",
    "select make_date(-4714,11,24)",
    "select make_date(-4714,11,23)",
    "select make_timestamp(294277,1,1,0,0,0)",
    "select make_time(1,2,3.0000005)",
    "select * from generate_series(timestamp '2024-01-01', date '2024-01-03', interval '1 day')",
    "select date_bin(interval '15 minutes', date '2024-02-29', timestamp '2001-01-01'), date_bin(interval '15 minutes', timestamp 'infinity', timestamp '2001-01-01')",
    "select date_bin(interval '15 minutes', timestamp '2020-01-01', timestamp 'infinity')",
    "select localtime(2) is not null, pg_typeof(localtime(2))",
    "select age('2024-01-01')",
    "select isfinite('2024-01-01')",
    "select make_date(2024::bigint,1,1)",
    # A constant default is read once, in the zone of the session that declares it.
    "SET TimeZone = 'Asia/Kathmandu'",
    "CREATE TABLE df (id INTEGER, f TIMESTAMPTZ DEFAULT '2020-07-01 12:00', g TIMESTAMPTZ DEFAULT '2020-07-01 12:00'::timestamptz, h TIMESTAMP DEFAULT '2020-07-01 12:00', d DATE DEFAULT '2020-07-01', tm TIME DEFAULT '12:30', i TIMESTAMPTZ DEFAULT 'infinity')",
    "INSERT INTO df (id) VALUES (1)",
    "SET TimeZone = 'America/New_York'",
    "INSERT INTO df (id) VALUES (2)",
    "ALTER TABLE df ADD COLUMN n TIMESTAMPTZ DEFAULT '2020-07-01 12:00'",
    "INSERT INTO df (id) VALUES (3)",
    "SELECT * FROM df ORDER BY id",
    "SET TimeZone = 'UTC'",
    "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'df' ORDER BY ordinal_position",
    "DROP TABLE df",
    "SELECT nullif(1::int2, 2::int8), pg_typeof(nullif(1::int2, 2::int8)), nullif(2::int4, 2::int8), nullif(1.5::float4, 2::float8), pg_typeof(nullif(1::int, 2.5)), pg_typeof(nullif('2020-01-01'::date, '2020-01-02 00:00'::timestamp))",
]:
    run(c, s)
with c.cursor().copy("COPY (SELECT * FROM tz1 ORDER BY id) TO STDOUT") as cp:
    out.append(["copy to text", bytes(b"".join(bytes(x) for x in cp)).decode()])
with c.cursor().copy("COPY tz1 TO STDOUT (FORMAT csv, HEADER)") as cp:
    out.append(["copy to csv", sorted(bytes(b"".join(bytes(x) for x in cp)).decode().splitlines())])
with c.cursor().copy("COPY tz1 FROM STDIN") as cp:
    cp.write("4\t2023-01-01 09:00\t2023-01-01 09:00\t2023-01-01\n5\t2023-07-01 09:00-02\t2023-07-01 09:00\t2023-07-01\n")
with c.cursor().copy("COPY tz1 FROM STDIN (FORMAT csv)") as cp:
    cp.write("6,2024-01-01 00:00 America/Chicago,2024-01-01 00:00,2024-01-01\n")
run(c, "SELECT id, t, extract(epoch FROM t) FROM tz1 WHERE id >= 4 ORDER BY id")
# Bound values (psycopg binds a datetime with its offset; a naive one as timestamp).
aware = datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone(datetime.timedelta(hours=-3)))
run(c, "INSERT INTO tz1 (id, t, l) VALUES (%s, %s, %s)", (7, aware, datetime.datetime(2024, 5, 6, 7, 8, 9)))
run(c, "SELECT t, l, t = %s FROM tz1 WHERE id = %s", (aware, 7))
run(c, "SELECT %s::timestamptz, %s::timestamp, %s::date", ("2024-02-29 23:00", "2024-02-29 23:00", "2024-02-29"))
run(c, "DROP TABLE tz1")
c.close()

# A zone given at start-up, as JDBC clients give their JVM's zone.
c = connect(options="-c TimeZone=America/Sao_Paulo")
for s in ["SHOW TimeZone", "SELECT '2020-07-01 12:00+00'::timestamptz", "RESET TimeZone", "SHOW TimeZone"]:
    run(c, s)
c.close()
try:
    psycopg.connect(sys.argv[1], options="-c TimeZone=Nowhere/Land").close()
    out.append(["bad start-up zone", "connected"])
except psycopg.Error as e:
    # libpq hands over the FATAL as text.
    out.append(["bad start-up zone", [l.split("FATAL:")[-1].strip() for l in str(e).splitlines() if "TimeZone" in l]])
print("RESULT", json.dumps(out, default=str))
"#;

#[test]
fn time_zones_match_postgres() {
    let got = same_outcomes_as_postgres(RUNNER);
    // The comparison compared zone-dependent text: non-UTC offsets were in it.
    let text = serde_json::to_string(&got).expect("json");
    for needle in [
        r#"["2018-03-11 03:30:00-04","2018-11-04 01:30:00-05""#,
        "2020-07-01 17:45:00+05:45",
        r#"["SHOW TimeZone",["TimeZone"],[25],[["<+05:30>-05:30"]],"SHOW","<+05:30>-05:30"]"#,
        "2020-07-01 09:00:00-03",
        r#"time zone \"Nowhere\" not recognized"#,
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
}
