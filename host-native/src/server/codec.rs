//! Frame-level encoding and decoding of PostgreSQL v3 protocol messages.
//!
//! We decode frontend messages ourselves instead of through pgwire's `Framed` codec because the
//! exact PostgreSQL reactions depend on details that codec hides: the per-type length limits
//! checked *before* the body is buffered (so an oversized statement can be skipped and answered
//! with 54000 without holding it in memory), `invalid message format` / `invalid string in
//! message` as recoverable 08P01 ERRORs, and empty strings as distinct from absent ones.

use bytes::{BufMut, Bytes, BytesMut};
use rocklake_core::api::{FieldDesc, PgError, TxnStatus};

/// PostgreSQL's `PQ_SMALL_MESSAGE_LIMIT`: the largest body accepted for messages that never carry
/// user data (Sync, Describe, Execute, ...).
pub const SMALL_MESSAGE_LIMIT: usize = 10_000;
/// PostgreSQL's `PQ_LARGE_MESSAGE_LIMIT` (1 GiB - 1): beyond this the length word itself is
/// considered corrupt and the connection is closed.
pub const LARGE_MESSAGE_LIMIT: usize = 0x3fff_ffff - 1;
/// PostgreSQL's `MAX_STARTUP_PACKET_LENGTH`.
pub const MAX_STARTUP_PACKET: usize = 10_000;
/// PostgreSQL's `PG_MAX_AUTH_TOKEN_LENGTH`: the largest password / SASL message accepted.
pub const MAX_AUTH_TOKEN: usize = 65_535;

/// Message types whose bodies may be large (user data); everything else is capped at
/// [`SMALL_MESSAGE_LIMIT`], as in PostgreSQL's `SocketBackend`.
pub fn is_large_type(ty: u8) -> bool {
    matches!(ty, b'Q' | b'P' | b'B' | b'F' | b'd')
}

/// Whether PostgreSQL knows this frontend message type at all (after start-up). Unknown types are
/// a FATAL protocol violation.
pub fn is_known_type(ty: u8) -> bool {
    matches!(
        ty,
        b'Q' | b'F' | b'X' | b'B' | b'P' | b'C' | b'D' | b'E' | b'H' | b'S' | b'd' | b'c' | b'f'
    )
}

/// A decoded frontend message (post-startup).
#[derive(Debug)]
pub enum Frontend {
    Query(String),
    Parse {
        name: String,
        sql: String,
        param_types: Vec<u32>,
    },
    Bind {
        portal: String,
        statement: String,
        /// Format code per parameter (none: all text; one: for every parameter).
        param_formats: Vec<i16>,
        params: Vec<Option<Bytes>>,
        result_formats: Vec<i16>,
    },
    Describe {
        kind: u8,
        name: String,
    },
    Execute {
        portal: String,
        max_rows: i32,
    },
    Close {
        kind: u8,
        name: String,
    },
    Sync,
    Flush,
    Terminate,
    CopyData(Bytes),
    CopyDone,
    CopyFail(String),
    FunctionCall,
}

fn protocol_violation(message: impl Into<String>) -> PgError {
    PgError::new("08P01", message)
}

/// Cursor over one message body with PostgreSQL's `pq_getmsg*` semantics and errors.
pub struct BodyReader {
    buf: Bytes,
}

impl BodyReader {
    pub fn new(buf: Bytes) -> Self {
        BodyReader { buf }
    }

    fn take(&mut self, n: usize) -> Result<Bytes, PgError> {
        if self.buf.len() < n {
            return Err(protocol_violation("insufficient data left in message"));
        }
        Ok(self.buf.split_to(n))
    }

    pub fn u8(&mut self) -> Result<u8, PgError> {
        Ok(self.take(1)?[0])
    }

    pub fn i16(&mut self) -> Result<i16, PgError> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub fn i32(&mut self) -> Result<i32, PgError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn bytes(&mut self, n: usize) -> Result<Bytes, PgError> {
        self.take(n)
    }

    /// A NUL-terminated string, validated as UTF-8 (the only client_encoding we accept), like
    /// `pq_getmsgstring` + encoding verification.
    pub fn cstring(&mut self) -> Result<String, PgError> {
        let Some(nul) = self.buf.iter().position(|&b| b == 0) else {
            return Err(protocol_violation("invalid string in message"));
        };
        let raw = self.buf.split_to(nul + 1);
        utf8(&raw[..nul])
    }

    pub fn rest(&mut self) -> Bytes {
        std::mem::take(&mut self.buf)
    }

    /// `pq_getmsgend`: trailing bytes mean the message was malformed.
    pub fn end(&self) -> Result<(), PgError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(protocol_violation("invalid message format"))
        }
    }
}

/// Decode text the way PostgreSQL does with client_encoding UTF8 (22021 on bad bytes).
pub fn utf8(raw: &[u8]) -> Result<String, PgError> {
    match std::str::from_utf8(raw) {
        Ok(s) => Ok(s.to_owned()),
        Err(_) => Err(rocklake_core::params::invalid_utf8(raw)),
    }
}

fn count(r: &mut BodyReader) -> Result<usize, PgError> {
    let n = r.i16()?;
    usize::try_from(n).map_err(|_| protocol_violation("invalid message format"))
}

/// Decode the body of a frontend message whose type byte is known ([`is_known_type`]).
pub fn decode(ty: u8, body: Bytes) -> Result<Frontend, PgError> {
    let mut r = BodyReader::new(body);
    let msg = match ty {
        b'Q' => Frontend::Query(r.cstring()?),
        b'P' => {
            let name = r.cstring()?;
            let sql = r.cstring()?;
            let n = count(&mut r)?;
            let mut param_types = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                // OIDs are unsigned on the wire even though they travel as int32.
                param_types.push(r.i32()? as u32);
            }
            Frontend::Parse {
                name,
                sql,
                param_types,
            }
        }
        b'B' => {
            let portal = r.cstring()?;
            let statement = r.cstring()?;
            let nformats = count(&mut r)?;
            let mut param_formats = Vec::with_capacity(nformats.min(1024));
            for _ in 0..nformats {
                param_formats.push(r.i16()?);
            }
            let nparams = count(&mut r)?;
            let mut params = Vec::with_capacity(nparams.min(1024));
            for _ in 0..nparams {
                let len = r.i32()?;
                if len == -1 {
                    params.push(None);
                } else {
                    let len = usize::try_from(len)
                        .map_err(|_| protocol_violation("invalid message format"))?;
                    params.push(Some(r.bytes(len)?));
                }
            }
            let nresult = count(&mut r)?;
            let mut result_formats = Vec::with_capacity(nresult.min(1024));
            for _ in 0..nresult {
                result_formats.push(r.i16()?);
            }
            Frontend::Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats,
            }
        }
        b'D' => {
            let kind = r.u8()?;
            let name = r.cstring()?;
            if kind != b'S' && kind != b'P' {
                return Err(protocol_violation(format!(
                    "invalid DESCRIBE message subtype {kind}"
                )));
            }
            Frontend::Describe { kind, name }
        }
        b'E' => {
            let portal = r.cstring()?;
            let max_rows = r.i32()?;
            Frontend::Execute { portal, max_rows }
        }
        b'C' => {
            let kind = r.u8()?;
            let name = r.cstring()?;
            if kind != b'S' && kind != b'P' {
                return Err(protocol_violation(format!(
                    "invalid CLOSE message subtype {kind}"
                )));
            }
            Frontend::Close { kind, name }
        }
        b'S' => Frontend::Sync,
        b'H' => Frontend::Flush,
        b'X' => Frontend::Terminate,
        b'd' => return Ok(Frontend::CopyData(r.rest())),
        b'c' => Frontend::CopyDone,
        b'f' => Frontend::CopyFail(r.cstring()?),
        b'F' => return Ok(Frontend::FunctionCall),
        other => {
            return Err(protocol_violation(format!(
                "invalid frontend message type {other}"
            )));
        }
    };
    r.end()?;
    Ok(msg)
}

/// Outgoing message buffer. Every helper appends one complete backend message.
#[derive(Default)]
pub struct Out {
    pub buf: BytesMut,
    /// Changed settings, sent as ParameterStatus just before the next ReadyForQuery (where
    /// PostgreSQL reports them).
    changed_settings: Vec<(String, String)>,
}

impl Out {
    fn msg(&mut self, ty: u8, body: impl FnOnce(&mut BytesMut)) {
        self.buf.put_u8(ty);
        let at = self.buf.len();
        self.buf.put_i32(0);
        body(&mut self.buf);
        let len = self.buf.len() - at;
        // Bodies are bounded by the service's limits far below 2 GiB; saturate rather than wrap
        // so a bug can never produce a negative length.
        let len = i32::try_from(len).unwrap_or(i32::MAX);
        self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn ssl_no(&mut self) {
        self.buf.put_u8(b'N');
    }

    pub fn auth(&mut self, code: i32, data: &[u8]) {
        self.msg(b'R', |b| {
            b.put_i32(code);
            b.put_slice(data);
        });
    }

    pub fn auth_sasl(&mut self, mechanisms: &[&str]) {
        self.msg(b'R', |b| {
            b.put_i32(10);
            for m in mechanisms {
                put_cstr(b, m);
            }
            b.put_u8(0);
        });
    }

    pub fn parameter_status(&mut self, name: &str, value: &str) {
        self.msg(b'S', |b| {
            put_cstr(b, name);
            put_cstr(b, value);
        });
    }

    pub fn backend_key_data(&mut self, pid: i32, secret: u32) {
        self.msg(b'K', |b| {
            b.put_i32(pid);
            b.put_u32(secret);
        });
    }

    pub fn negotiate_protocol_version(&mut self, newest_minor: i32, unrecognized: &[String]) {
        self.msg(b'v', |b| {
            b.put_i32(newest_minor);
            b.put_i32(i32::try_from(unrecognized.len()).unwrap_or(i32::MAX));
            for o in unrecognized {
                put_cstr(b, o);
            }
        });
    }

    pub fn ready(&mut self, status: TxnStatus) {
        for (name, value) in std::mem::take(&mut self.changed_settings) {
            self.parameter_status(&name, &value);
        }
        self.msg(b'Z', |b| b.put_u8(status.as_byte()));
    }

    /// Queues a ParameterStatus for the next ReadyForQuery (a later value of the same
    /// setting replaces an earlier one).
    pub fn setting_changed(&mut self, name: &str, value: &str) {
        self.changed_settings.retain(|(n, _)| n != name);
        self.changed_settings
            .push((name.to_string(), value.to_string()));
    }

    /// RowDescription; `format` is 0 (text) for every column — RockLake never sends binary
    /// result columns outside COPY, as PostgreSQL does for simple queries.
    pub fn row_description(&mut self, fields: &[FieldDesc]) {
        self.row_description_formats(fields, &[]);
    }

    /// RowDescription with Bind's result format codes (none: all text; one: for every column;
    /// else one per column).
    pub fn row_description_formats(&mut self, fields: &[FieldDesc], formats: &[i16]) {
        self.msg(b'T', |b| {
            b.put_i16(i16::try_from(fields.len()).unwrap_or(i16::MAX));
            for (i, f) in fields.iter().enumerate() {
                put_cstr(b, &f.name);
                b.put_u32(f.table_oid);
                b.put_i16(f.column_id);
                b.put_u32(f.type_oid);
                b.put_i16(f.type_len);
                b.put_i32(f.type_mod);
                b.put_i16(result_format(formats, i));
            }
        });
    }

    /// A DataRow whose body (column count, then each value's length and bytes) the core
    /// packed ([`rocklake_core::api::TextRows`]).
    pub fn data_row(&mut self, body: &[u8]) {
        self.msg(b'D', |b| b.put_slice(body));
    }

    pub fn command_complete(&mut self, tag: &str) {
        self.msg(b'C', |b| put_cstr(b, tag));
    }

    pub fn empty_query(&mut self) {
        self.msg(b'I', |_| {});
    }

    pub fn parse_complete(&mut self) {
        self.msg(b'1', |_| {});
    }

    pub fn bind_complete(&mut self) {
        self.msg(b'2', |_| {});
    }

    pub fn close_complete(&mut self) {
        self.msg(b'3', |_| {});
    }

    pub fn no_data(&mut self) {
        self.msg(b'n', |_| {});
    }

    pub fn portal_suspended(&mut self) {
        self.msg(b's', |_| {});
    }

    pub fn parameter_description(&mut self, types: &[u32]) {
        self.msg(b't', |b| {
            b.put_i16(i16::try_from(types.len()).unwrap_or(i16::MAX));
            for t in types {
                b.put_u32(*t);
            }
        });
    }

    fn copy_response(&mut self, ty: u8, binary: bool, columns: u16) {
        self.msg(ty, |b| {
            let f = i16::from(binary);
            b.put_i8(f as i8);
            b.put_i16(i16::try_from(columns).unwrap_or(i16::MAX));
            for _ in 0..columns {
                b.put_i16(f);
            }
        });
    }

    pub fn copy_out_response(&mut self, binary: bool, columns: u16) {
        self.copy_response(b'H', binary, columns);
    }

    pub fn copy_in_response(&mut self, binary: bool, columns: u16) {
        self.copy_response(b'G', binary, columns);
    }

    pub fn copy_data(&mut self, data: &[u8]) {
        self.msg(b'd', |b| b.put_slice(data));
    }

    pub fn copy_done(&mut self) {
        self.msg(b'c', |_| {});
    }

    /// ErrorResponse with PostgreSQL's field order: S, V, C, M, D, H, P, W, s, t, c, n.
    pub fn error(&mut self, e: &PgError) {
        self.report(b'E', e);
    }

    /// NoticeResponse: the fields of an ErrorResponse.
    pub fn notice(&mut self, e: &PgError) {
        self.report(b'N', e);
    }

    fn report(&mut self, kind: u8, e: &PgError) {
        self.msg(kind, |b| {
            let field = |b: &mut BytesMut, code: u8, v: &str| {
                b.put_u8(code);
                put_cstr(b, v);
            };
            field(b, b'S', &e.severity);
            field(b, b'V', &e.severity);
            field(b, b'C', &e.code);
            field(b, b'M', &e.message);
            if let Some(d) = &e.detail {
                field(b, b'D', d);
            }
            if let Some(h) = &e.hint {
                field(b, b'H', h);
            }
            if let Some(p) = e.position {
                field(b, b'P', &p.to_string());
            }
            if let Some(w) = &e.context {
                field(b, b'W', w);
            }
            if let Some(s) = &e.schema {
                field(b, b's', s);
            }
            if let Some(t) = &e.table {
                field(b, b't', t);
            }
            if let Some(c) = &e.column {
                field(b, b'c', c);
            }
            if let Some(n) = &e.constraint {
                field(b, b'n', n);
            }
            b.put_u8(0);
        });
    }
}

fn put_cstr(b: &mut BytesMut, s: &str) {
    // A NUL inside a value would end the field early and desynchronise the client; PostgreSQL
    // never produces one, so drop anything after it rather than corrupt the stream.
    let s = s.split('\0').next().unwrap_or("");
    b.put_slice(s.as_bytes());
    b.put_u8(0);
}

/// The format code of result column `i` under Bind's format list.
pub fn result_format(formats: &[i16], i: usize) -> i16 {
    match formats {
        [] => 0,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(0),
    }
}
