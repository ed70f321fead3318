//! The local commit journal (decision 0009): on a local-directory catalog a commit is durable
//! once its batches are appended to `<catalog>/rocklake-journal` and `fdatasync`ed, instead
//! of once SlateDB has written a new WAL file for it (a file creation, two fsyncs and a link:
//! about ten times the cost of an append on the disks we measured). SlateDB receives the same
//! batches without waiting for its WAL; the journal is cut back whenever SlateDB has made
//! everything in it durable.
//!
//! Layout: a 32-byte header — magic, the owning writer's RockLake epoch, a generation that
//! grows with every truncation, a CRC of those — then records `len u32 | crc32 u32 | payload`
//! (little endian), each payload one group of commit batches. A record that is cut short or
//! fails its CRC ends the journal: it was never acknowledged (acknowledgement follows the
//! `fdatasync` of the whole record).
//!
//! Fencing: every append holds `flock(LOCK_EX)` and first reads the header's epoch; a writer
//! that finds a newer epoch than its own was superseded and refuses the commit. A new writer
//! claims the journal (after SlateDB's own fence) under the same lock: it replays what is in
//! it, then writes its epoch into the header. So every record an old writer appended is either
//! replayed by the new one, or was refused.
//!
//! Replay is idempotent: SlateDB holds a prefix of the journal's batches (anything between
//! the last truncation and the latest WAL flush), and applying the whole sequence again on top
//! gives the same keys and values as applying it once.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rocklake_core::api::{CommitBatch, CommitSeq};

use super::instrumented::{CrashAt, CrashPoint};

/// File name of the journal inside a local catalog directory.
pub const JOURNAL_FILE: &str = "rocklake-journal";

const MAGIC: &[u8; 8] = b"RLJRNL01";
const HEADER_LEN: u64 = 32;
/// Refuse records above this size when reading (a corrupt length must not allocate GiBs).
const MAX_RECORD: u32 = 256 * 1024 * 1024;

/// The owner and generation recorded in a journal's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub epoch: u64,
    pub generation: u64,
}

/// One group of commit batches, in commit order.
pub(crate) type Record = Vec<CommitBatch>;

/// What an append found wrong.
#[derive(Debug)]
pub(crate) enum AppendError {
    /// The header names a newer writer: nothing was appended.
    Superseded { theirs: u64 },
    /// The disk failed; part of the record may be on disk (never acknowledged, but a later
    /// replay may find it whole).
    Io(io::Error),
}

impl From<io::Error> for AppendError {
    fn from(e: io::Error) -> Self {
        AppendError::Io(e)
    }
}

/// The journal as its writer holds it.
pub(crate) struct Journal {
    file: File,
    path: PathBuf,
    header: Header,
    /// End of the last record (the file's length as far as this writer knows).
    end: u64,
    crash: Option<CrashAt>,
    appends: u64,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .field("header", &self.header)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

/// A journal locked for a takeover: the records to replay, and the lock held until
/// [`Takeover::claim`] (or drop, which leaves the file as it was).
pub(crate) struct Takeover {
    file: File,
    path: PathBuf,
    previous: Option<Header>,
    pub records: Vec<Record>,
}

impl Takeover {
    /// Opens (creating it if needed) and locks the journal in `dir`, and reads every whole
    /// record. Blocks while another writer appends.
    pub fn begin(dir: &Path) -> io::Result<Takeover> {
        let path = dir.join(JOURNAL_FILE);
        let existed = path.exists();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        if !existed {
            // The new directory entry must survive a crash before anything relies on it.
            File::open(dir)?.sync_all()?;
        }
        file.lock()?;
        let bytes = read_all(&file)?;
        let (previous, records, _) = parse(&bytes);
        Ok(Takeover {
            file,
            path,
            previous,
            records,
        })
    }

    /// Makes `epoch` the journal's owner and drops the replayed records (call only once they
    /// are durable elsewhere), then releases the lock.
    pub fn claim(self, epoch: u64, crash: Option<CrashAt>) -> io::Result<Journal> {
        let generation = self.previous.map_or(0, |h| h.generation) + 1;
        let header = Header { epoch, generation };
        // Header first, then the cut: a crash between the two leaves records that replay
        // again, harmlessly.
        self.file.write_all_at(&encode_header(header), 0)?;
        self.file.set_len(HEADER_LEN)?;
        self.file.sync_data()?;
        self.file.unlock()?;
        Ok(Journal {
            file: self.file,
            path: self.path,
            header,
            end: HEADER_LEN,
            crash: crash.filter(|c| c.point.is_journal()),
            appends: 0,
        })
    }

    /// The epoch of the writer that owned the journal before, if it ever had one.
    pub fn previous_epoch(&self) -> Option<u64> {
        self.previous.map(|h| h.epoch)
    }
}

impl Journal {
    /// Bytes of records not yet cut back.
    pub fn pending_bytes(&self) -> u64 {
        self.end - HEADER_LEN
    }

    /// Appends one record made by [`frame`] and makes it durable; returns the bytes of
    /// records now pending ([`Journal::pending_bytes`]). Refused when a newer writer owns the
    /// journal.
    pub fn append(&mut self, framed: &[u8]) -> Result<u64, AppendError> {
        self.file.lock()?;
        let r = self.append_locked(framed);
        let unlocked = self.file.unlock();
        r?;
        unlocked?;
        Ok(self.pending_bytes())
    }

    fn append_locked(&mut self, buf: &[u8]) -> Result<(), AppendError> {
        self.check_owner()?;
        self.appends += 1;
        let crash = self
            .crash
            .filter(|c| c.nth == self.appends)
            .map(|c| c.point);
        if crash == Some(CrashPoint::JournalTorn) {
            let _ = self.file.write_all_at(&buf[..buf.len() / 2], self.end);
            let _ = self.file.sync_data();
            super::instrumented::die_at(
                CrashPoint::JournalTorn,
                &self.path.display(),
                self.appends,
            );
        }
        self.file.write_all_at(buf, self.end)?;
        if crash == Some(CrashPoint::JournalBeforeSync) {
            super::instrumented::die_at(
                CrashPoint::JournalBeforeSync,
                &self.path.display(),
                self.appends,
            );
        }
        self.file.sync_data()?;
        if crash == Some(CrashPoint::JournalAfterSync) {
            super::instrumented::die_at(
                CrashPoint::JournalAfterSync,
                &self.path.display(),
                self.appends,
            );
        }
        self.end += buf.len() as u64;
        Ok(())
    }

    /// Drops every record (call only once SlateDB has made them durable). Refused when a
    /// newer writer owns the journal (its header stays).
    pub fn truncate(&mut self) -> Result<(), AppendError> {
        self.file.lock()?;
        let r = (|| -> Result<(), AppendError> {
            self.check_owner()?;
            let header = Header {
                epoch: self.header.epoch,
                generation: self.header.generation + 1,
            };
            self.file.write_all_at(&encode_header(header), 0)?;
            self.file.set_len(HEADER_LEN)?;
            self.file.sync_data()?;
            self.header = header;
            self.end = HEADER_LEN;
            Ok(())
        })();
        let unlocked = self.file.unlock();
        r?;
        unlocked?;
        Ok(())
    }

    fn check_owner(&self) -> Result<(), AppendError> {
        let mut raw = [0u8; HEADER_LEN as usize];
        self.file.read_exact_at(&mut raw, 0)?;
        match decode_header(&raw) {
            Some(h) if h.epoch == self.header.epoch => Ok(()),
            Some(h) => Err(AppendError::Superseded { theirs: h.epoch }),
            None => Err(AppendError::Io(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} has a damaged header", self.path.display()),
            ))),
        }
    }
}

/// The journal of `dir` as a reader sees it: its header and every whole record, read under a
/// shared lock (so never half an append). `None` when there is no journal.
pub(crate) fn read(dir: &Path) -> io::Result<Option<(Header, Vec<Record>)>> {
    let path = dir.join(JOURNAL_FILE);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    file.lock_shared()?;
    let bytes = read_all(&file);
    file.unlock()?;
    let (header, records, _) = parse(&bytes?);
    Ok(header.map(|h| (h, records)))
}

fn read_all(file: &File) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
    file.read_exact_at(&mut bytes, 0)?;
    Ok(bytes)
}

fn encode_header(h: Header) -> [u8; HEADER_LEN as usize] {
    let mut out = [0u8; HEADER_LEN as usize];
    out[0..8].copy_from_slice(MAGIC);
    out[8..16].copy_from_slice(&h.epoch.to_le_bytes());
    out[16..24].copy_from_slice(&h.generation.to_le_bytes());
    let crc = crc32fast::hash(&out[0..24]);
    out[24..28].copy_from_slice(&crc.to_le_bytes());
    out
}

fn decode_header(raw: &[u8]) -> Option<Header> {
    let raw = raw.get(..HEADER_LEN as usize)?;
    if &raw[0..8] != MAGIC || crc32fast::hash(&raw[0..24]).to_le_bytes() != raw[24..28] {
        return None;
    }
    Some(Header {
        epoch: u64::from_le_bytes(raw[8..16].try_into().ok()?),
        generation: u64::from_le_bytes(raw[16..24].try_into().ok()?),
    })
}

/// Header, whole records, and the offset where they end. A missing or damaged header means
/// no records: a header is written before any record and never torn afterwards.
fn parse(bytes: &[u8]) -> (Option<Header>, Vec<Record>, usize) {
    let Some(header) = decode_header(bytes) else {
        return (None, Vec::new(), 0);
    };
    let mut records = Vec::new();
    let mut at = HEADER_LEN as usize;
    while let Some(frame) = bytes.get(at..at + 8) {
        let len = u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]);
        let crc = u32::from_le_bytes([frame[4], frame[5], frame[6], frame[7]]);
        if len > MAX_RECORD {
            break;
        }
        let Some(payload) = bytes.get(at + 8..at + 8 + len as usize) else {
            break;
        };
        if crc32fast::hash(payload) != crc {
            break;
        }
        let Some(record) = decode_record(payload) else {
            break;
        };
        records.push(record);
        at += 8 + len as usize;
    }
    (Some(header), records, at)
}

/// One journal record (frame and payload) holding `batches`.
pub(crate) fn frame(batches: &[CommitBatch]) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(8 + record_size(batches));
    buf.extend_from_slice(&[0; 8]);
    encode_record(batches, &mut buf);
    let payload_len = u32::try_from(buf.len() - 8)
        .ok()
        .filter(|&n| n <= MAX_RECORD)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "commit group too large for one journal record",
            )
        })?;
    let crc = crc32fast::hash(&buf[8..]);
    buf[0..4].copy_from_slice(&payload_len.to_le_bytes());
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
    Ok(buf)
}

/// The record of one whole frame made by [`frame`]; `None` when `bytes` is anything else
/// (cut short, a bad CRC, trailing bytes).
pub(crate) fn unframe(bytes: &[u8]) -> Option<Record> {
    let (head, payload) = bytes.split_first_chunk::<8>()?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if payload.len() != len as usize || crc32fast::hash(payload) != crc {
        return None;
    }
    decode_record(payload)
}

fn record_size(r: &[CommitBatch]) -> usize {
    r.iter()
        .map(|b| {
            16 + b
                .puts
                .iter()
                .map(|(k, v)| 8 + k.len() + v.len())
                .sum::<usize>()
                + b.deletes.iter().map(|k| 4 + k.len()).sum::<usize>()
        })
        .sum::<usize>()
        + 4
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    // Lengths fit: a record is bounded far below 4 GiB by the 64 MiB transaction limit.
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn encode_record(r: &[CommitBatch], out: &mut Vec<u8>) {
    out.extend_from_slice(&(r.len() as u32).to_le_bytes());
    for b in r {
        out.extend_from_slice(&b.seq.0.to_le_bytes());
        out.extend_from_slice(&(b.puts.len() as u32).to_le_bytes());
        for (k, v) in &b.puts {
            put_bytes(out, k);
            put_bytes(out, v);
        }
        out.extend_from_slice(&(b.deletes.len() as u32).to_le_bytes());
        for k in &b.deletes {
            put_bytes(out, k);
        }
    }
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_le_bytes(*head))
    }
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let len = self.u32()? as usize;
        let b = self.0.get(..len)?.to_vec();
        self.0 = &self.0[len..];
        Some(b)
    }
}

fn decode_record(payload: &[u8]) -> Option<Record> {
    let mut c = Cursor(payload);
    let n = c.u32()?;
    let mut batches = Vec::new();
    for _ in 0..n {
        let seq = CommitSeq(c.u64()?);
        let puts = (0..c.u32()?)
            .map(|_| Some((c.bytes()?, c.bytes()?)))
            .collect::<Option<Vec<_>>>()?;
        let deletes = (0..c.u32()?)
            .map(|_| c.bytes())
            .collect::<Option<Vec<_>>>()?;
        batches.push(CommitBatch { seq, puts, deletes });
    }
    c.0.is_empty().then_some(batches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record(n: u8) -> Record {
        vec![CommitBatch {
            seq: CommitSeq(u64::from(n)),
            puts: vec![(vec![1, n], vec![n; 5]), (vec![2, n], vec![])],
            deletes: vec![vec![3, n]],
        }]
    }

    fn append(j: &mut Journal, r: &Record) -> Result<u64, AppendError> {
        j.append(&frame(r).expect("frame"))
    }

    #[test]
    fn append_claim_and_read_back() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = Takeover::begin(dir.path()).expect("begin");
        assert!(t.records.is_empty());
        assert_eq!(t.previous_epoch(), None);
        let mut j = t.claim(7, None).expect("claim");
        append(&mut j, &record(1)).expect("append");
        append(&mut j, &record(2)).expect("append");
        let (h, recs) = read(dir.path()).expect("read").expect("journal");
        assert_eq!(
            h,
            Header {
                epoch: 7,
                generation: 1
            }
        );
        assert_eq!(recs, vec![record(1), record(2)]);
        j.truncate().expect("truncate");
        let (h, recs) = read(dir.path()).expect("read").expect("journal");
        assert_eq!(h.generation, 2);
        assert!(recs.is_empty());
        append(&mut j, &record(3)).expect("append after truncate");
        assert_eq!(
            read(dir.path()).expect("read").expect("j").1,
            vec![record(3)]
        );
    }

    #[test]
    fn a_newer_writer_fences_the_old_one_and_replays_its_records() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut old = Takeover::begin(dir.path())
            .expect("begin")
            .claim(1, None)
            .expect("claim");
        append(&mut old, &record(1)).expect("append");
        let t = Takeover::begin(dir.path()).expect("begin");
        assert_eq!(t.previous_epoch(), Some(1));
        assert_eq!(t.records, vec![record(1)]);
        let mut new = t.claim(2, None).expect("claim");
        match append(&mut old, &record(2)) {
            Err(AppendError::Superseded { theirs: 2 }) => {}
            other => panic!("expected Superseded, got {other:?}"),
        }
        assert!(matches!(
            old.truncate(),
            Err(AppendError::Superseded { theirs: 2 })
        ));
        append(&mut new, &record(3)).expect("append");
        assert_eq!(
            read(dir.path()).expect("read").expect("j").1,
            vec![record(3)]
        );
    }

    #[test]
    fn a_torn_or_corrupt_tail_ends_the_journal() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut j = Takeover::begin(dir.path())
            .expect("begin")
            .claim(1, None)
            .expect("claim");
        append(&mut j, &record(1)).expect("append");
        append(&mut j, &record(2)).expect("append");
        let path = dir.path().join(JOURNAL_FILE);
        let full = std::fs::read(&path).expect("read");
        let first_end = HEADER_LEN as usize + 8 + {
            let mut b = Vec::new();
            encode_record(&record(1), &mut b);
            b.len()
        };
        // Every cut inside the second record leaves exactly the first.
        for cut in first_end..full.len() {
            let (_, recs, end) = parse(&full[..cut]);
            assert_eq!(recs, vec![record(1)], "cut at {cut}");
            assert_eq!(end, first_end);
        }
        // A flipped bit in the second record's payload is caught by its CRC.
        let mut bad = full.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x40;
        assert_eq!(parse(&bad).1, vec![record(1)]);
        // A damaged header means no records at all (the header is never torn).
        let mut bad = full;
        bad[9] ^= 1;
        assert_eq!(parse(&bad), (None, Vec::new(), 0));
    }

    fn arb_batch() -> impl Strategy<Value = CommitBatch> {
        let key = proptest::collection::vec(any::<u8>(), 0..20);
        (
            any::<u64>(),
            proptest::collection::vec((key.clone(), key.clone()), 0..6),
            proptest::collection::vec(key, 0..3),
        )
            .prop_map(|(seq, puts, deletes)| CommitBatch {
                seq: CommitSeq(seq),
                puts,
                deletes,
            })
    }

    proptest! {
        #[test]
        fn records_round_trip(r in proptest::collection::vec(arb_batch(), 0..5)) {
            let mut out = Vec::new();
            encode_record(&r, &mut out);
            prop_assert_eq!(out.len(), record_size(&r));
            prop_assert_eq!(decode_record(&out), Some(r));
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_record(&bytes);
            let mut framed = encode_header(Header { epoch: 1, generation: 1 }).to_vec();
            framed.extend_from_slice(&bytes);
            let _ = parse(&framed);
        }
    }
}
