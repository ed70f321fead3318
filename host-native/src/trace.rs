//! Deterministic record and replay of the core boundary.
//!
//! Every call the host makes into the core (the exports of `wit/rocklake.wit`: open, sessions,
//! queries, COPY, commit outcomes, refresh) is a pure function of its arguments and of the
//! answers the host gives to the core's storage reads (the `kv` imports). [`Recorder`] wraps a
//! [`Core`] and writes each call — arguments, every import with its answer, and the result — to
//! a compact binary trace. [`replay`] runs a core alone against a trace: the recorded answers
//! stand in for SlateDB, the recorded `now` for the clock, and every result must be
//! byte-identical to the recorded one. The first difference is reported with its context.
//!
//! Format: `RLTRACE8`, then events. Strings and byte strings are `u32` length (LE) + bytes,
//! integers little-endian, options and results a one-byte tag. The canonical encoding of a
//! result is what is compared.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;

use rocklake_core::api::{
    CommitBatch, CommitFailure, Describe, FieldDesc, KvError, KvPage, KvRead, OpenedSession,
    Output, PgError, Reply, SessionId, SessionOptions,
};

use crate::service::Core;

/// Format 7: errors carry their column (format 6: a session's backend pid and client, and the
/// `signal` output; format 5: the extended protocol's `execute` and `sync` calls; format 4:
/// entropy draws among the imports, and errors with their position).
const MAGIC: &[u8; 8] = b"RLTRACE8";

// ---------------------------------------------------------------- encoding

#[derive(Default)]
struct Enc(Vec<u8>);

impl Enc {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_u32(&mut self, v: Option<u32>) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                self.u32(v);
            }
        }
    }
    fn opt_str(&mut self, s: &Option<String>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }
    fn pg_error(&mut self, e: &PgError) {
        self.str(&e.severity);
        self.str(&e.code);
        self.str(&e.message);
        for f in [
            &e.detail,
            &e.hint,
            &e.schema,
            &e.table,
            &e.column,
            &e.constraint,
            &e.context,
        ] {
            self.opt_str(f);
        }
        match e.position {
            None => self.u8(0),
            Some(p) => {
                self.u8(1);
                self.u32(p);
            }
        }
    }
    fn fields(&mut self, fields: &[FieldDesc]) {
        self.u32(fields.len() as u32);
        for f in fields {
            self.str(&f.name);
            self.u32(f.table_oid);
            self.u32(f.column_id as u16 as u32);
            self.u32(f.type_oid);
            self.u32(f.type_len as u16 as u32);
            self.u32(f.type_mod as u32);
        }
    }
    fn batch(&mut self, b: &CommitBatch) {
        self.u64(b.seq.0);
        self.u32(b.puts.len() as u32);
        for (k, v) in &b.puts {
            self.bytes(k);
            self.bytes(v);
        }
        self.u32(b.deletes.len() as u32);
        for k in &b.deletes {
            self.bytes(k);
        }
    }
    fn reply(&mut self, r: &Reply) {
        self.u32(r.outputs.len() as u32);
        for o in &r.outputs {
            match o {
                Output::Rows { fields, rows, tag } => {
                    self.u8(0);
                    self.fields(fields);
                    self.u32(rows.len() as u32);
                    for row in rows.iter() {
                        self.u32(row.len() as u32);
                        for c in row {
                            match c {
                                None => self.u8(0),
                                Some(b) => {
                                    self.u8(1);
                                    self.bytes(b);
                                }
                            }
                        }
                    }
                    self.str(tag);
                }
                Output::Command { tag } => {
                    self.u8(1);
                    self.str(tag);
                }
                Output::CopyOut {
                    binary,
                    columns,
                    chunks,
                    tag,
                } => {
                    self.u8(2);
                    self.u8(*binary as u8);
                    self.u32(u32::from(*columns));
                    self.u32(chunks.len() as u32);
                    for c in chunks.iter() {
                        self.bytes(c);
                    }
                    self.str(tag);
                }
                Output::CopyIn { binary, columns } => {
                    self.u8(3);
                    self.u8(*binary as u8);
                    self.u32(u32::from(*columns));
                }
                Output::Empty => self.u8(4),
                Output::Notice(e) => {
                    self.u8(5);
                    self.pg_error(e);
                }
                Output::Signal { pid, terminate } => {
                    self.u8(6);
                    self.u32(*pid as u32);
                    self.u8(*terminate as u8);
                }
            }
        }
        match &r.error {
            None => self.u8(0),
            Some(e) => {
                self.u8(1);
                self.pg_error(e);
            }
        }
        self.u8(r.status.as_byte());
        match &r.commit {
            None => self.u8(0),
            Some(b) => {
                self.u8(1);
                self.batch(b);
            }
        }
        self.pairs(&r.settings);
        match r.wait {
            None => self.u8(0),
            Some(w) => {
                self.u8(1);
                match w.until {
                    None => self.u8(0),
                    Some(t) => {
                        self.u8(1);
                        self.i64(t);
                    }
                }
            }
        }
        self.u8(r.locks_released as u8);
    }
    fn pairs(&mut self, pairs: &[(String, String)]) {
        self.u32(pairs.len() as u32);
        for (k, v) in pairs {
            self.str(k);
            self.str(v);
        }
    }
    fn opened_result(&mut self, r: &Result<OpenedSession, PgError>) {
        match r {
            Ok(o) => {
                self.u8(0);
                self.u64(o.id.0);
                self.pairs(&o.settings);
            }
            Err(e) => {
                self.u8(1);
                self.pg_error(e);
            }
        }
    }
    fn unit_result(&mut self, r: &Result<(), PgError>) {
        match r {
            Ok(()) => self.u8(0),
            Err(e) => {
                self.u8(1);
                self.pg_error(e);
            }
        }
    }
    fn describe_result(&mut self, r: &Result<Describe, PgError>) {
        match r {
            Ok(d) => {
                self.u8(0);
                self.u32(d.param_types.len() as u32);
                for t in &d.param_types {
                    self.u32(*t);
                }
                match &d.fields {
                    None => self.u8(0),
                    Some(f) => {
                        self.u8(1);
                        self.fields(f);
                    }
                }
            }
            Err(e) => {
                self.u8(1);
                self.pg_error(e);
            }
        }
    }
    fn kv_error(&mut self, e: &KvError) {
        self.str(&e.message);
        self.u8(e.transient as u8);
    }
}

/// Why a trace could not be read.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file is not a RockLake trace, or is cut short (a trace whose last event is
    /// incomplete — the server was killed while writing it — replays up to that event).
    #[error("malformed trace at byte {offset}: {what}")]
    Malformed { offset: usize, what: String },
    /// Check the path.
    #[error("cannot read trace {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    fn bad(&self, what: &str) -> TraceError {
        TraceError::Malformed {
            offset: self.pos,
            what: what.to_string(),
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], TraceError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| self.bad("truncated"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, TraceError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, TraceError> {
        let b: [u8; 4] = self.take(4)?.try_into().map_err(|_| self.bad("u32"))?;
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> Result<u64, TraceError> {
        let b: [u8; 8] = self.take(8)?.try_into().map_err(|_| self.bad("u64"))?;
        Ok(u64::from_le_bytes(b))
    }
    fn i64(&mut self) -> Result<i64, TraceError> {
        Ok(self.u64()? as i64)
    }
    fn bytes(&mut self) -> Result<Vec<u8>, TraceError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn str(&mut self) -> Result<String, TraceError> {
        String::from_utf8(self.bytes()?).map_err(|_| self.bad("invalid UTF-8"))
    }
    fn opt_str(&mut self) -> Result<Option<String>, TraceError> {
        Ok(if self.bool()? {
            Some(self.str()?)
        } else {
            None
        })
    }
    fn opt_u32(&mut self) -> Result<Option<u32>, TraceError> {
        Ok(if self.bool()? {
            Some(self.u32()?)
        } else {
            None
        })
    }
    fn pairs(&mut self) -> Result<Vec<(String, String)>, TraceError> {
        let n = self.u32()?;
        let mut out = Vec::new();
        for _ in 0..n {
            out.push((self.str()?, self.str()?));
        }
        Ok(out)
    }
    fn bool(&mut self) -> Result<bool, TraceError> {
        Ok(self.u8()? != 0)
    }
}

// ---------------------------------------------------------------- events

/// One storage read of the core and the host's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Import {
    /// A range scan, forwards or (`rev`) backwards.
    Scan {
        start: Vec<u8>,
        end: Vec<u8>,
        limit: u64,
        rev: bool,
        answer: Result<KvPage, KvError>,
    },
    Get {
        key: Vec<u8>,
        answer: Result<Option<Vec<u8>>, KvError>,
    },
    /// A long statement asked whether to stop.
    Interrupted { answer: Option<String> },
    /// The core drew 64 bits of entropy (`random()`, `gen_random_uuid()`).
    Entropy { answer: Option<u64> },
}

fn encode_imports(e: &mut Enc, imports: &[Import]) {
    e.u32(imports.len() as u32);
    for i in imports {
        match i {
            Import::Scan {
                start,
                end,
                limit,
                rev,
                answer,
            } => {
                e.u8(if *rev { 3 } else { 0 });
                e.bytes(start);
                e.bytes(end);
                e.u64(*limit);
                match answer {
                    Ok(pairs) => {
                        e.u8(0);
                        e.u32(pairs.len() as u32);
                        for (k, v) in pairs {
                            e.bytes(k);
                            e.bytes(v);
                        }
                    }
                    Err(err) => {
                        e.u8(1);
                        e.kv_error(err);
                    }
                }
            }
            Import::Get { key, answer } => {
                e.u8(1);
                e.bytes(key);
                match answer {
                    Ok(None) => e.u8(0),
                    Ok(Some(v)) => {
                        e.u8(1);
                        e.bytes(v);
                    }
                    Err(err) => {
                        e.u8(2);
                        e.kv_error(err);
                    }
                }
            }
            Import::Interrupted { answer } => {
                e.u8(2);
                e.opt_str(answer);
            }
            Import::Entropy { answer } => {
                e.u8(4);
                match answer {
                    None => e.u8(0),
                    Some(v) => {
                        e.u8(1);
                        e.u64(*v);
                    }
                }
            }
        }
    }
}

fn decode_kv_error(d: &mut Dec<'_>) -> Result<KvError, TraceError> {
    Ok(KvError {
        message: d.str()?,
        transient: d.bool()?,
    })
}

fn decode_imports(d: &mut Dec<'_>) -> Result<VecDeque<Import>, TraceError> {
    let n = d.u32()?;
    let mut out = VecDeque::new();
    for _ in 0..n {
        out.push_back(match d.u8()? {
            tag @ (0 | 3) => {
                let start = d.bytes()?;
                let end = d.bytes()?;
                let limit = d.u64()?;
                let answer = match d.u8()? {
                    0 => {
                        let m = d.u32()?;
                        let mut page = KvPage::new();
                        for _ in 0..m {
                            let (k, v) = (d.bytes()?, d.bytes()?);
                            page.push(&k, &v).map_err(|e| d.bad(&e.message))?;
                        }
                        Ok(page)
                    }
                    _ => Err(decode_kv_error(d)?),
                };
                Import::Scan {
                    start,
                    end,
                    limit,
                    rev: tag == 3,
                    answer,
                }
            }
            1 => {
                let key = d.bytes()?;
                let answer = match d.u8()? {
                    0 => Ok(None),
                    1 => Ok(Some(d.bytes()?)),
                    _ => Err(decode_kv_error(d)?),
                };
                Import::Get { key, answer }
            }
            2 => Import::Interrupted {
                answer: match d.u8()? {
                    0 => None,
                    _ => Some(d.str()?),
                },
            },
            4 => Import::Entropy {
                answer: match d.u8()? {
                    0 => None,
                    _ => Some(d.u64()?),
                },
            },
            _ => return Err(d.bad("unknown import tag")),
        });
    }
    Ok(out)
}

/// The export calls, with their arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Open,
    OpenSession {
        options: SessionOptions,
    },
    Query {
        sid: u64,
        sql: String,
        now: i64,
    },
    Execute {
        sid: u64,
        sql: String,
        now: i64,
    },
    Sync {
        sid: u64,
        now: i64,
        abort: bool,
    },
    Describe {
        sid: u64,
        sql: String,
    },
    CopyInData {
        sid: u64,
        data: Vec<u8>,
    },
    CopyInDone {
        sid: u64,
        now: i64,
    },
    CopyInFail {
        sid: u64,
        message: String,
    },
    CommitFinished {
        sid: u64,
        outcome: Result<(), CommitFailure>,
    },
    CloseSession {
        sid: u64,
    },
    SetReadOnly {
        on: bool,
    },
    Refresh,
    SetStatementMemoryLimit {
        bytes: u64,
    },
    Wake {
        sid: u64,
        now: i64,
    },
}

fn encode_call(e: &mut Enc, c: &Call) {
    match c {
        Call::Open => e.u8(0),
        Call::OpenSession { options } => {
            e.u8(2);
            e.str(&options.user);
            e.str(&options.database);
            e.u8(options.read_only as u8);
            e.pairs(&options.settings);
            e.u32(options.backend_pid as u32);
            e.opt_str(&options.client_addr);
            e.opt_u32(options.client_port.map(|p| p as u32));
            e.i64(options.backend_start);
        }
        Call::Query { sid, sql, now } => {
            e.u8(3);
            e.u64(*sid);
            e.str(sql);
            e.i64(*now);
        }
        Call::Describe { sid, sql } => {
            e.u8(4);
            e.u64(*sid);
            e.str(sql);
        }
        Call::CopyInData { sid, data } => {
            e.u8(5);
            e.u64(*sid);
            e.bytes(data);
        }
        Call::CopyInDone { sid, now } => {
            e.u8(6);
            e.u64(*sid);
            e.i64(*now);
        }
        Call::CopyInFail { sid, message } => {
            e.u8(7);
            e.u64(*sid);
            e.str(message);
        }
        Call::CommitFinished { sid, outcome } => {
            e.u8(8);
            e.u64(*sid);
            match outcome {
                Ok(()) => e.u8(0),
                Err(f) => {
                    e.u8(1);
                    e.u8(f.fenced as u8);
                    e.u8(f.transient as u8);
                    e.str(&f.message);
                }
            }
        }
        Call::CloseSession { sid } => {
            e.u8(9);
            e.u64(*sid);
        }
        Call::SetReadOnly { on } => {
            e.u8(10);
            e.u8(*on as u8);
        }
        Call::Refresh => e.u8(11),
        Call::SetStatementMemoryLimit { bytes } => {
            e.u8(12);
            e.u64(*bytes);
        }
        Call::Execute { sid, sql, now } => {
            e.u8(13);
            e.u64(*sid);
            e.str(sql);
            e.i64(*now);
        }
        Call::Sync { sid, now, abort } => {
            e.u8(14);
            e.u64(*sid);
            e.i64(*now);
            e.u8(*abort as u8);
        }
        Call::Wake { sid, now } => {
            e.u8(15);
            e.u64(*sid);
            e.i64(*now);
        }
    }
}

fn decode_call(d: &mut Dec<'_>) -> Result<Call, TraceError> {
    Ok(match d.u8()? {
        0 => Call::Open,
        2 => Call::OpenSession {
            options: SessionOptions {
                user: d.str()?,
                database: d.str()?,
                read_only: d.bool()?,
                settings: d.pairs()?,
                backend_pid: d.u32()? as i32,
                client_addr: d.opt_str()?,
                client_port: d.opt_u32()?.map(|p| p as i32),
                backend_start: d.i64()?,
            },
        },
        3 => Call::Query {
            sid: d.u64()?,
            sql: d.str()?,
            now: d.i64()?,
        },
        4 => Call::Describe {
            sid: d.u64()?,
            sql: d.str()?,
        },
        5 => Call::CopyInData {
            sid: d.u64()?,
            data: d.bytes()?,
        },
        6 => Call::CopyInDone {
            sid: d.u64()?,
            now: d.i64()?,
        },
        7 => Call::CopyInFail {
            sid: d.u64()?,
            message: d.str()?,
        },
        8 => {
            let sid = d.u64()?;
            let outcome = match d.u8()? {
                0 => Ok(()),
                _ => Err(CommitFailure {
                    fenced: d.bool()?,
                    transient: d.bool()?,
                    message: d.str()?,
                }),
            };
            Call::CommitFinished { sid, outcome }
        }
        9 => Call::CloseSession { sid: d.u64()? },
        10 => Call::SetReadOnly { on: d.bool()? },
        11 => Call::Refresh,
        12 => Call::SetStatementMemoryLimit { bytes: d.u64()? },
        13 => Call::Execute {
            sid: d.u64()?,
            sql: d.str()?,
            now: d.i64()?,
        },
        14 => Call::Sync {
            sid: d.u64()?,
            now: d.i64()?,
            abort: d.bool()?,
        },
        15 => Call::Wake {
            sid: d.u64()?,
            now: d.i64()?,
        },
        _ => return Err(d.bad("unknown call tag")),
    })
}

/// One recorded export call.
#[derive(Debug, Clone)]
struct Event {
    call: Call,
    imports: VecDeque<Import>,
    /// Canonical encoding of the result.
    result: Vec<u8>,
}

// ---------------------------------------------------------------- recording

/// Answers the core's reads from `inner` and remembers each question with its answer.
pub struct RecordingKv<'a> {
    inner: &'a dyn KvRead,
    log: RefCell<Vec<Import>>,
}

impl<'a> RecordingKv<'a> {
    pub fn new(inner: &'a dyn KvRead) -> Self {
        RecordingKv {
            inner,
            log: RefCell::new(Vec::new()),
        }
    }
    fn take(&self) -> Vec<Import> {
        std::mem::take(&mut *self.log.borrow_mut())
    }
    fn log_scan(
        &self,
        start: &[u8],
        end: &[u8],
        limit: usize,
        rev: bool,
        answer: &Result<KvPage, KvError>,
    ) {
        self.log.borrow_mut().push(Import::Scan {
            start: start.to_vec(),
            end: end.to_vec(),
            limit: limit as u64,
            rev,
            answer: answer.clone(),
        });
    }
}

impl KvRead for RecordingKv<'_> {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        let answer = self.inner.scan(start, end, limit);
        self.log_scan(start, end, limit, false, &answer);
        answer
    }
    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        let answer = self.inner.scan_rev(start, end, limit);
        self.log_scan(start, end, limit, true, &answer);
        answer
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let answer = self.inner.get(key);
        self.log.borrow_mut().push(Import::Get {
            key: key.to_vec(),
            answer: answer.clone(),
        });
        answer
    }
    fn interrupted(&self) -> Option<String> {
        let answer = self.inner.interrupted();
        self.log.borrow_mut().push(Import::Interrupted {
            answer: answer.clone(),
        });
        answer
    }
    fn entropy(&self) -> Option<u64> {
        let answer = self.inner.entropy();
        self.log.borrow_mut().push(Import::Entropy { answer });
        answer
    }
}

/// Where a recording goes. Writing is best effort: a failed write is logged once and
/// recording stops; serving never fails because of the trace.
pub struct TraceWriter {
    out: Option<std::io::BufWriter<std::fs::File>>,
    path: String,
}

impl TraceWriter {
    /// Creates `dir/rocklake-<unix seconds>-<pid>.rltrace`.
    pub fn create(dir: &Path, unix_secs: u64) -> std::io::Result<TraceWriter> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!(
            "rocklake-{unix_secs}-{}.rltrace",
            std::process::id()
        ));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        out.write_all(MAGIC)?;
        out.flush()?;
        Ok(TraceWriter {
            out: Some(out),
            path: path.display().to_string(),
        })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    fn write(&mut self, call: &Call, imports: &[Import], result: Vec<u8>) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let mut e = Enc::default();
        encode_call(&mut e, call);
        encode_imports(&mut e, imports);
        e.bytes(&result);
        let mut framed = Enc::default();
        framed.bytes(&e.0);
        // Flushed per event so a killed server leaves a trace that replays up to its end.
        if let Err(err) = out.write_all(&framed.0).and_then(|()| out.flush()) {
            tracing::error!(path = %self.path, "trace write failed, recording stops: {err}");
            self.out = None;
        }
    }

    /// Records the engine's open (its reads of the store, and the commit it found).
    pub fn record_open(&mut self, kv: &RecordingKv<'_>, latest: u64) {
        let mut r = Enc::default();
        r.u64(latest);
        self.write(&Call::Open, &kv.take(), r.0);
    }
}

/// A [`Core`] that records every call into a trace.
pub struct Recorder {
    inner: Box<dyn Core>,
    out: TraceWriter,
}

impl Recorder {
    pub fn new(inner: Box<dyn Core>, out: TraceWriter) -> Recorder {
        Recorder { inner, out }
    }
}

fn reply_bytes(r: &Reply) -> Vec<u8> {
    let mut e = Enc::default();
    e.reply(r);
    e.0
}

impl Core for Recorder {
    fn latest(&self) -> u64 {
        // Not recorded: `&self` cannot write, and the answer is implied by the other calls.
        self.inner.latest()
    }
    fn open_session_with(&mut self, options: &SessionOptions) -> Result<OpenedSession, PgError> {
        let r = self.inner.open_session_with(options);
        let mut e = Enc::default();
        e.opened_result(&r);
        self.out.write(
            &Call::OpenSession {
                options: options.clone(),
            },
            &[],
            e.0,
        );
        r
    }
    fn query(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        let rkv = RecordingKv::new(kv);
        let r = self.inner.query(&rkv, sid, sql, now);
        self.out.write(
            &Call::Query {
                sid: sid.0,
                sql: sql.into(),
                now,
            },
            &rkv.take(),
            reply_bytes(&r),
        );
        r
    }
    fn execute(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        let rkv = RecordingKv::new(kv);
        let r = self.inner.execute(&rkv, sid, sql, now);
        self.out.write(
            &Call::Execute {
                sid: sid.0,
                sql: sql.into(),
                now,
            },
            &rkv.take(),
            reply_bytes(&r),
        );
        r
    }
    fn sync(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64, abort: bool) -> Reply {
        let rkv = RecordingKv::new(kv);
        let r = self.inner.sync(&rkv, sid, now, abort);
        self.out.write(
            &Call::Sync {
                sid: sid.0,
                now,
                abort,
            },
            &rkv.take(),
            reply_bytes(&r),
        );
        r
    }
    fn describe(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        sql: &str,
    ) -> Result<Describe, PgError> {
        let rkv = RecordingKv::new(kv);
        let r = self.inner.describe(&rkv, sid, sql);
        let mut e = Enc::default();
        e.describe_result(&r);
        self.out.write(
            &Call::Describe {
                sid: sid.0,
                sql: sql.into(),
            },
            &rkv.take(),
            e.0,
        );
        r
    }
    fn copy_in_data(&mut self, sid: SessionId, data: &[u8]) -> Result<(), PgError> {
        let r = self.inner.copy_in_data(sid, data);
        let mut e = Enc::default();
        e.unit_result(&r);
        self.out.write(
            &Call::CopyInData {
                sid: sid.0,
                data: data.to_vec(),
            },
            &[],
            e.0,
        );
        r
    }
    fn copy_in_done(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        let rkv = RecordingKv::new(kv);
        let r = self.inner.copy_in_done(&rkv, sid, now);
        self.out.write(
            &Call::CopyInDone { sid: sid.0, now },
            &rkv.take(),
            reply_bytes(&r),
        );
        r
    }
    fn copy_in_fail(&mut self, sid: SessionId, message: &str) -> Reply {
        let r = self.inner.copy_in_fail(sid, message);
        self.out.write(
            &Call::CopyInFail {
                sid: sid.0,
                message: message.into(),
            },
            &[],
            reply_bytes(&r),
        );
        r
    }
    fn commit_finished(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        outcome: Result<(), CommitFailure>,
    ) -> Reply {
        let rkv = RecordingKv::new(kv);
        let r = self.inner.commit_finished(&rkv, sid, outcome.clone());
        self.out.write(
            &Call::CommitFinished {
                sid: sid.0,
                outcome,
            },
            &rkv.take(),
            reply_bytes(&r),
        );
        r
    }
    fn wake(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        let rkv = RecordingKv::new(kv);
        let r = self.inner.wake(&rkv, sid, now);
        self.out.write(
            &Call::Wake { sid: sid.0, now },
            &rkv.take(),
            reply_bytes(&r),
        );
        r
    }
    fn close_session(&mut self, sid: SessionId) {
        self.inner.close_session(sid);
        self.out
            .write(&Call::CloseSession { sid: sid.0 }, &[], vec![]);
    }
    fn set_read_only(&mut self, on: bool) {
        self.inner.set_read_only(on);
        self.out.write(&Call::SetReadOnly { on }, &[], vec![]);
    }
    fn set_statement_memory_limit(&mut self, bytes: u64) {
        self.inner.set_statement_memory_limit(bytes);
        self.out
            .write(&Call::SetStatementMemoryLimit { bytes }, &[], vec![]);
    }
    fn refresh(&mut self, kv: &dyn KvRead) -> Result<(), PgError> {
        let rkv = RecordingKv::new(kv);
        let r = self.inner.refresh(&rkv);
        let mut e = Enc::default();
        e.unit_result(&r);
        self.out.write(&Call::Refresh, &rkv.take(), e.0);
        r
    }
}

// ---------------------------------------------------------------- replay

/// Answers the core's reads from the recorded answers, in order. A question that differs from
/// the recorded one is a divergence: it is remembered and the read fails.
struct ReplayKv {
    answers: RefCell<VecDeque<Import>>,
    divergence: RefCell<Option<String>>,
}

impl ReplayKv {
    fn new(answers: VecDeque<Import>) -> ReplayKv {
        ReplayKv {
            answers: RefCell::new(answers),
            divergence: RefCell::new(None),
        }
    }
    fn diverge(&self, what: String) -> KvError {
        let mut d = self.divergence.borrow_mut();
        if d.is_none() {
            *d = Some(what);
        }
        KvError {
            message: "replay divergence".into(),
            transient: false,
        }
    }
}

fn show_key(k: &[u8]) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

impl ReplayKv {
    fn replay_scan(
        &self,
        start: &[u8],
        end: &[u8],
        limit: usize,
        rev: bool,
    ) -> Result<KvPage, KvError> {
        let next = self.answers.borrow_mut().pop_front();
        match next {
            Some(Import::Scan {
                start: s,
                end: e,
                limit: l,
                rev: r,
                answer,
            }) if s == start && e == end && l == limit as u64 && r == rev => answer,
            other => Err(self.diverge(format!(
                "the core scanned [{}, {}) limit {limit}{}; the recording has {}",
                show_key(start),
                show_key(end),
                if rev { " backwards" } else { "" },
                describe_import(other.as_ref())
            ))),
        }
    }
}

impl KvRead for ReplayKv {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.replay_scan(start, end, limit, false)
    }
    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.replay_scan(start, end, limit, true)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let next = self.answers.borrow_mut().pop_front();
        match next {
            Some(Import::Get { key: k, answer }) if k == key => answer,
            other => Err(self.diverge(format!(
                "the core read key {}; the recording has {}",
                show_key(key),
                describe_import(other.as_ref())
            ))),
        }
    }
    fn interrupted(&self) -> Option<String> {
        let next = self.answers.borrow_mut().pop_front();
        match next {
            Some(Import::Interrupted { answer }) => answer,
            other => {
                self.diverge(format!(
                    "the core asked whether to stop; the recording has {}",
                    describe_import(other.as_ref())
                ));
                // Stopping ends the statement at once, so the divergence is reported.
                Some("replay divergence".into())
            }
        }
    }
    fn entropy(&self) -> Option<u64> {
        let next = self.answers.borrow_mut().pop_front();
        match next {
            Some(Import::Entropy { answer }) => answer,
            other => {
                self.diverge(format!(
                    "the core drew entropy; the recording has {}",
                    describe_import(other.as_ref())
                ));
                None
            }
        }
    }
}

fn describe_import(i: Option<&Import>) -> String {
    match i {
        None => "no further read".into(),
        Some(Import::Scan {
            start,
            end,
            limit,
            rev,
            ..
        }) => format!(
            "a {}scan of [{}, {}) limit {limit}",
            if *rev { "backward " } else { "" },
            show_key(start),
            show_key(end)
        ),
        Some(Import::Get { key, .. }) => format!("a read of key {}", show_key(key)),
        Some(Import::Interrupted { .. }) => "an interruption check".into(),
        Some(Import::Entropy { .. }) => "an entropy draw".into(),
    }
}

/// Reads every complete event of a trace.
fn read_events(path: &Path) -> Result<(Vec<Event>, bool), TraceError> {
    let buf = std::fs::read(path).map_err(|source| TraceError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut d = Dec { buf: &buf, pos: 0 };
    let magic = d.take(MAGIC.len())?;
    if magic != MAGIC {
        if magic.starts_with(b"RLTRACE") {
            return Err(d.bad(&format!(
                "a trace of format {} (this build reads format {}): record it again",
                String::from_utf8_lossy(&magic[7..]),
                String::from_utf8_lossy(&MAGIC[7..])
            )));
        }
        return Err(d.bad("not a RockLake trace (bad magic)"));
    }
    let mut events = Vec::new();
    let mut truncated = false;
    while d.pos < buf.len() {
        let Ok(frame) = d.bytes() else {
            truncated = true;
            break;
        };
        let mut f = Dec {
            buf: &frame,
            pos: 0,
        };
        let call = decode_call(&mut f)?;
        let imports = decode_imports(&mut f)?;
        let result = f.bytes()?;
        events.push(Event {
            call,
            imports,
            result,
        });
    }
    Ok((events, truncated))
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayReport {
    pub events: usize,
    pub queries: usize,
    /// The trace ended in an incomplete event (recording process killed mid-write).
    pub truncated: bool,
    pub divergence: Option<Divergence>,
}

/// The first call whose result (or storage reads) differ from the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// 0-based index of the event.
    pub event: usize,
    pub call: String,
    pub detail: String,
}

/// Builds the core to replay from the recorded open's storage reads.
pub type CoreFactory<'a> = dyn FnOnce(&dyn KvRead) -> anyhow::Result<Box<dyn Core>> + 'a;

fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

/// Replays the trace at `path` on the core `make` builds. Needs no store, network or clock.
pub fn replay(path: &Path, make: Box<CoreFactory<'_>>) -> anyhow::Result<ReplayReport> {
    replay_with_progress(path, make, &mut |_, _| {})
}

/// [`replay`], calling `progress(events replayed, events in the trace)` once the trace is read
/// and after every event.
pub fn replay_with_progress(
    path: &Path,
    make: Box<CoreFactory<'_>>,
    progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<ReplayReport> {
    let (events, truncated) = read_events(path)?;
    let total = events.len();
    progress(0, total);
    let mut report = ReplayReport {
        events: events.len(),
        queries: 0,
        truncated,
        divergence: None,
    };
    let mut it = events.into_iter().enumerate();
    let Some((_, open)) = it.next() else {
        return Ok(report);
    };
    if open.call != Call::Open {
        anyhow::bail!("trace does not start with the core's open");
    }
    let kv = ReplayKv::new(open.imports);
    let mut core = make(&kv)?;
    let mut latest = Enc::default();
    latest.u64(core.latest());
    if let Some(d) = check(0, &Call::Open, &kv, &open.result, &latest.0, &"") {
        report.divergence = Some(d);
        return Ok(report);
    }
    progress(1, total);
    for (i, ev) in it {
        let kv = ReplayKv::new(ev.imports);
        let (actual, shown): (Vec<u8>, String) = match &ev.call {
            Call::Open => anyhow::bail!("a second open in the trace (event {i})"),
            Call::OpenSession { options } => {
                let r = core.open_session_with(options);
                let mut e = Enc::default();
                e.opened_result(&r);
                let shown = match &r {
                    Ok(o) => format!("session {}", o.id.0),
                    Err(err) => format!("open-session error {}: {}", err.code, err.message),
                };
                (e.0, shown)
            }
            Call::Query { sid, sql, now } => {
                report.queries += 1;
                let r = core.query(&kv, SessionId(*sid), sql, *now);
                (reply_bytes(&r), show_reply(&r))
            }
            Call::Execute { sid, sql, now } => {
                report.queries += 1;
                let r = core.execute(&kv, SessionId(*sid), sql, *now);
                (reply_bytes(&r), show_reply(&r))
            }
            Call::Sync { sid, now, abort } => {
                let r = core.sync(&kv, SessionId(*sid), *now, *abort);
                (reply_bytes(&r), show_reply(&r))
            }
            Call::Describe { sid, sql } => {
                let r = core.describe(&kv, SessionId(*sid), sql);
                let mut e = Enc::default();
                e.describe_result(&r);
                (e.0, format!("{r:?}"))
            }
            Call::CopyInData { sid, data } => {
                let r = core.copy_in_data(SessionId(*sid), data);
                let mut e = Enc::default();
                e.unit_result(&r);
                (e.0, format!("{r:?}"))
            }
            Call::CopyInDone { sid, now } => {
                let r = core.copy_in_done(&kv, SessionId(*sid), *now);
                (reply_bytes(&r), show_reply(&r))
            }
            Call::CopyInFail { sid, message } => {
                let r = core.copy_in_fail(SessionId(*sid), message);
                (reply_bytes(&r), show_reply(&r))
            }
            Call::CommitFinished { sid, outcome } => {
                let r = core.commit_finished(&kv, SessionId(*sid), outcome.clone());
                (reply_bytes(&r), show_reply(&r))
            }
            Call::Wake { sid, now } => {
                let r = core.wake(&kv, SessionId(*sid), *now);
                (reply_bytes(&r), show_reply(&r))
            }
            Call::CloseSession { sid } => {
                core.close_session(SessionId(*sid));
                (vec![], String::new())
            }
            Call::SetReadOnly { on } => {
                core.set_read_only(*on);
                (vec![], String::new())
            }
            Call::SetStatementMemoryLimit { bytes } => {
                core.set_statement_memory_limit(*bytes);
                (vec![], String::new())
            }
            Call::Refresh => {
                let r = core.refresh(&kv);
                let mut e = Enc::default();
                e.unit_result(&r);
                (e.0, format!("{r:?}"))
            }
        };
        if let Some(d) = check(i, &ev.call, &kv, &ev.result, &actual, &shown) {
            report.divergence = Some(d);
            return Ok(report);
        }
        progress(i + 1, total);
    }
    Ok(report)
}

/// A reply for humans: cells as text, not byte lists.
fn show_reply(r: &Reply) -> String {
    let mut parts = Vec::new();
    for o in &r.outputs {
        parts.push(match o {
            Output::Rows { rows, tag, .. } => {
                let rows: Vec<String> = rows
                    .iter()
                    .map(|row| {
                        let cells: Vec<String> = row
                            .map(|c| match c {
                                None => "NULL".to_string(),
                                Some(b) => String::from_utf8_lossy(b).into_owned(),
                            })
                            .collect();
                        format!("({})", cells.join(", "))
                    })
                    .collect();
                format!("{tag} {}", rows.join(" "))
            }
            Output::Command { tag } => tag.clone(),
            other => format!("{other:?}"),
        });
    }
    if let Some(e) = &r.error {
        parts.push(format!("ERROR {} {}", e.code, e.message));
    }
    if let Some(b) = &r.commit {
        parts.push(format!("commit batch {} ({} puts)", b.seq.0, b.puts.len()));
    }
    parts.join("; ")
}

fn check(
    i: usize,
    call: &Call,
    kv: &ReplayKv,
    expected: &[u8],
    actual: &[u8],
    shown: &dyn std::fmt::Display,
) -> Option<Divergence> {
    let call_text = match call {
        Call::Query { sid, sql, .. } | Call::Execute { sid, sql, .. } => {
            let s: String = sql.chars().take(300).collect();
            format!("query (session {sid}): {s}")
        }
        other => {
            let s = format!("{other:?}");
            s.chars().take(300).collect()
        }
    };
    if let Some(d) = kv.divergence.borrow().clone() {
        return Some(Divergence {
            event: i,
            call: call_text,
            detail: format!("storage reads differ: {d}"),
        });
    }
    if let Some(next) = kv.answers.borrow().front() {
        return Some(Divergence {
            event: i,
            call: call_text,
            detail: format!(
                "the core made fewer storage reads than recorded; next recorded: {}",
                describe_import(Some(next))
            ),
        });
    }
    if expected != actual {
        let at = first_difference(expected, actual);
        return Some(Divergence {
            event: i,
            call: call_text,
            detail: format!(
                "result differs from byte {at} (recorded {} bytes, replayed {} bytes); replayed result: {}",
                expected.len(),
                actual.len(),
                shown.to_string().chars().take(2000).collect::<String>()
            ),
        });
    }
    None
}

/// The core `rocklake replay` runs: the native build or the component.
pub fn core_factory(kind: crate::service::CoreKind) -> Box<CoreFactory<'static>> {
    Box::new(move |kv: &dyn KvRead| -> anyhow::Result<Box<dyn Core>> {
        Ok(match kind {
            crate::service::CoreKind::Native => Box::new(
                rocklake_core::Engine::open(kv)
                    .map_err(|e| anyhow::anyhow!("cannot open the core: {e}"))?,
            ),
            crate::service::CoreKind::Wasm(path) => {
                Box::new(crate::component::WasmComponent::load(&path)?.instantiate(kv)?)
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_imports_round_trip() {
        let calls = vec![
            Call::Open,
            Call::OpenSession {
                options: SessionOptions {
                    user: "u".into(),
                    database: "lake".into(),
                    read_only: true,
                    settings: vec![("statement_timeout".into(), "5s".into())],
                    backend_pid: -7,
                    client_addr: Some("::1".into()),
                    client_port: Some(54_321),
                    backend_start: -3,
                },
            },
            Call::Query {
                sid: 3,
                sql: "SELECT 1".into(),
                now: -5,
            },
            Call::Execute {
                sid: 3,
                sql: "INSERT INTO t VALUES (1)".into(),
                now: 7,
            },
            Call::Sync {
                sid: 3,
                now: 8,
                abort: true,
            },
            Call::CommitFinished {
                sid: 3,
                outcome: Err(CommitFailure {
                    fenced: true,
                    transient: false,
                    message: "x".into(),
                }),
            },
            Call::CopyInData {
                sid: 1,
                data: vec![0, 1, 2],
            },
            Call::SetReadOnly { on: true },
            Call::SetStatementMemoryLimit { bytes: 1 << 30 },
            Call::Wake { sid: 2, now: 9 },
        ];
        let imports = vec![
            Import::Scan {
                start: vec![1],
                end: vec![2],
                limit: 10,
                rev: false,
                answer: KvPage::try_from_iter([
                    (&[1u8, 5][..], &[9u8][..]),
                    (&[1u8, 6][..], &[][..]),
                ]),
            },
            Import::Scan {
                start: vec![1],
                end: vec![3],
                limit: 1,
                rev: true,
                answer: KvPage::try_from_iter([(&[2u8, 5][..], &[8u8][..])]),
            },
            Import::Get {
                key: vec![7],
                answer: Err(KvError {
                    message: "down".into(),
                    transient: true,
                }),
            },
            Import::Entropy {
                answer: Some(u64::MAX - 7),
            },
            Import::Entropy { answer: None },
        ];
        for c in calls {
            let mut e = Enc::default();
            encode_call(&mut e, &c);
            encode_imports(&mut e, &imports);
            let mut d = Dec { buf: &e.0, pos: 0 };
            assert_eq!(decode_call(&mut d).expect("call"), c);
            assert_eq!(
                decode_imports(&mut d).expect("imports"),
                imports.iter().cloned().collect::<VecDeque<_>>()
            );
            assert_eq!(d.pos, e.0.len());
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bytes in [&b""[..], b"RLTRACE1\x05\x00\x00\x00\x0c", b"nope"] {
            let dir = tempfile::tempdir().expect("tmp");
            let p = dir.path().join("t");
            std::fs::write(&p, bytes).expect("write");
            let _ = read_events(&p);
        }
    }
}
