//! The object-store commit journal (decision 0010): on S3, GCS and Azure a commit group is
//! durable once its record is stored as one object, `rocklake-journal/<epoch>/<slot>` under
//! the catalog's root, written create-if-absent. Unlike SlateDB's WAL (one upload at a time),
//! several groups can be uploading at once; the store acknowledges them in slot order, each
//! only once every earlier slot is durable too. SlateDB receives the groups in slot order
//! without waiting for its own WAL, together with the `journal_applied` marker (epoch, slot)
//! of the last group it holds; slots SlateDB has made durable are deleted.
//!
//! **Which records count.** Those of a writer's namespace (its RockLake epoch) from the slot
//! after the marker up to the first slot that is absent or holds no record: a group after a
//! gap was never acknowledged (acknowledgements go in slot order) and is ignored.
//!
//! **Fencing.** A new writer, after SlateDB's own fence and its epoch claim, walks every older
//! epoch that may still have a writer (those above `journal_fenced_through`): it reads the
//! records after the marker and, at the first empty slot, writes a *fence* object with the same
//! create-if-absent PUT. An old writer's upload to that slot then fails, so its records end
//! exactly where the new writer's replay ended; an old writer that finds a fence in its slot
//! knows it was superseded. Fences are never deleted (a late upload could otherwise take the
//! slot); records before them are, once replayed and flushed.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use rocklake_core::api::CommitBatch;

use super::journal::{self, Record};

/// Folder of the journal under the catalog's root.
const DIR: &str = "rocklake-journal";
/// Reserved SlateDB key: the (epoch, slot) of the last journal group SlateDB holds, written in
/// the same SlateDB batch as that group. Big-endian u64 pair.
pub(crate) const APPLIED_KEY: &[u8] = b"\x00journal_applied";
/// Reserved SlateDB key: every epoch up to this one has been fenced and replayed. Big-endian
/// u64.
pub(crate) const FENCED_KEY: &[u8] = b"\x00journal_fenced_through";

const MAGIC: &[u8; 8] = b"RLJOBJ01";
const RECORD: u8 = 0;
const FENCE: u8 = 1;
/// Objects fetched at once when a takeover or a reader reads a run of records.
const FETCH_CONCURRENCY: usize = 16;

/// A position in the journal: the writer's epoch and the slot in its namespace.
pub(crate) type Position = (u64, u64);

/// What SlateDB holds of the journal: every group through `applied`, and every epoch through
/// `fenced_through` whole (fenced and replayed).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Marks {
    pub applied: Option<Position>,
    pub fenced_through: u64,
}

impl Marks {
    /// From the values of [`APPLIED_KEY`] and [`FENCED_KEY`] (absent: nothing yet).
    pub fn decode(applied: Option<&[u8]>, fenced: Option<&[u8]>) -> Result<Marks, String> {
        let applied =
            match applied {
                None => None,
                Some(v) => Some(decode_position(v).ok_or_else(|| {
                    format!("journal_applied holds {} bytes, expected 16", v.len())
                })?),
            };
        let fenced_through = match fenced {
            None => 0,
            Some(v) => u64::from_be_bytes(<[u8; 8]>::try_from(v).map_err(|_| {
                format!("journal_fenced_through holds {} bytes, expected 8", v.len())
            })?),
        };
        Ok(Marks {
            applied,
            fenced_through,
        })
    }
}

pub(crate) fn slot_path(root: &Path, epoch: u64, slot: u64) -> Path {
    root.clone()
        .join(DIR)
        .join(format!("{epoch:020}"))
        .join(format!("{slot:020}"))
}

fn encode(epoch: u64, slot: u64, kind: u8, body: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(25 + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&epoch.to_le_bytes());
    out.extend_from_slice(&slot.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(body);
    Bytes::from(out)
}

/// The object holding a commit group at `(epoch, slot)`.
pub(crate) fn record_object(
    epoch: u64,
    slot: u64,
    batches: &[CommitBatch],
) -> std::io::Result<Bytes> {
    Ok(encode(epoch, slot, RECORD, &journal::frame(batches)?))
}

fn fence_object(epoch: u64, slot: u64, by: u64) -> Bytes {
    encode(epoch, slot, FENCE, &by.to_le_bytes())
}

/// What a slot holds.
#[derive(Debug)]
enum Slot {
    Record(Record),
    /// A fence, or bytes that are not a whole record of this slot (a torn upload, which was
    /// never acknowledged): the namespace ends here.
    End,
}

fn decode(bytes: &[u8], epoch: u64, slot: u64) -> Slot {
    let Some((head, body)) = bytes.split_at_checked(25) else {
        return Slot::End;
    };
    if &head[..8] != MAGIC
        || head[8..16] != epoch.to_le_bytes()
        || head[16..24] != slot.to_le_bytes()
        || head[24] != RECORD
    {
        return Slot::End;
    }
    journal::unframe(body).map_or(Slot::End, Slot::Record)
}

/// Why an append did not make its group durable.
#[derive(Debug)]
pub(crate) enum AppendError {
    /// The slot holds a newer writer's fence: nothing of the group is stored.
    Fenced,
    /// The store failed; the object may or may not be there.
    Failed(String),
}

/// What a create-if-absent PUT found.
enum Created {
    Stored,
    /// The slot was taken; what it holds (`None`: deleted again since).
    Taken(Option<Bytes>),
}

/// Stores `object` at `path` only if nothing is there; otherwise reads what is.
async fn create(
    store: &dyn ObjectStore,
    path: &Path,
    object: Bytes,
) -> Result<Created, object_store::Error> {
    let opts = PutOptions {
        mode: PutMode::Create,
        ..PutOptions::default()
    };
    match store
        .put_opts(path, PutPayload::from_bytes(object), opts)
        .await
    {
        Ok(_) => Ok(Created::Stored),
        Err(
            object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. },
        ) => get(store, path).await.map(Created::Taken),
        Err(e) => Err(e),
    }
}

/// Stores a group's `object` in its slot. A taken slot holds either our own object (an upload
/// retried after its acknowledgement was lost) or a newer writer's fence.
pub(crate) async fn append(
    store: &dyn ObjectStore,
    path: &Path,
    object: Bytes,
) -> Result<(), AppendError> {
    match create(store, path, object.clone()).await {
        Ok(Created::Stored) => Ok(()),
        Ok(Created::Taken(found)) if found.as_ref() == Some(&object) => Ok(()),
        Ok(Created::Taken(_)) => Err(AppendError::Fenced),
        Err(e) => Err(AppendError::Failed(format!("storing {path}: {e}"))),
    }
}

async fn get(store: &dyn ObjectStore, path: &Path) -> Result<Option<Bytes>, object_store::Error> {
    match store.get(path).await {
        Ok(r) => r.bytes().await.map(Some),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Every slot present in the journal, by epoch.
async fn list(
    store: &dyn ObjectStore,
    root: &Path,
) -> Result<BTreeMap<u64, BTreeSet<u64>>, object_store::Error> {
    let prefix = root.clone().join(DIR);
    let mut out: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    let mut objects = store.list(Some(&prefix));
    while let Some(meta) = objects.next().await {
        let meta = meta?;
        let mut parts = meta.location.prefix_match(&prefix).into_iter().flatten();
        let epoch = parts.next().and_then(|p| p.as_ref().parse::<u64>().ok());
        let slot = parts.next().and_then(|p| p.as_ref().parse::<u64>().ok());
        if let (Some(epoch), Some(slot)) = (epoch, slot) {
            out.entry(epoch).or_default().insert(slot);
        }
    }
    Ok(out)
}

/// How a run of records ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunEnd {
    /// At this slot, which holds a fence or no whole record: nothing after it counts.
    Occupied(u64),
    /// At this slot, absent from the listing: it may still be filled (a group uploading).
    Open(u64),
    /// A listed slot was gone when read: deleted meanwhile by a cut.
    Vanished,
}

/// The records of `epoch` from `start` on, as far as `present` (a listing) runs without a gap.
async fn read_run(
    store: &dyn ObjectStore,
    root: &Path,
    epoch: u64,
    start: u64,
    present: Option<&BTreeSet<u64>>,
) -> Result<(Vec<(u64, Record)>, RunEnd), object_store::Error> {
    let run: Vec<u64> = (start..)
        .take_while(|s| present.is_some_and(|p| p.contains(s)))
        .collect();
    let open = start + run.len() as u64;
    let fetched: Vec<(u64, Option<Bytes>)> = futures::stream::iter(run)
        .map(|slot| async move {
            let path = slot_path(root, epoch, slot);
            get(store, &path).await.map(|b| (slot, b))
        })
        .buffered(FETCH_CONCURRENCY)
        .try_collect()
        .await?;
    let mut records = Vec::new();
    for (slot, bytes) in fetched {
        match bytes.map(|b| decode(&b, epoch, slot)) {
            Some(Slot::Record(r)) => records.push((slot, r)),
            Some(Slot::End) => return Ok((records, RunEnd::Occupied(slot))),
            None => return Ok((records, RunEnd::Vanished)),
        }
    }
    Ok((records, RunEnd::Open(open)))
}

/// What a new writer must replay, and the objects it may delete once that is durable.
#[derive(Debug, Default)]
pub(crate) struct Takeover {
    /// Groups to write into SlateDB, in order, each with its position (for the marker).
    pub records: Vec<(Position, Record)>,
    /// Journal objects made obsolete by the replay (never the fences).
    pub obsolete: Vec<Path>,
}

fn vanished(epoch: u64) -> object_store::Error {
    object_store::Error::Generic {
        store: "rocklake-journal",
        source: format!(
            "a record of epoch {epoch} after SlateDB's marker was deleted during the takeover; \
             open again"
        )
        .into(),
    }
}

/// Fences every epoch in `fenced_through + 1 .. ours` and collects the records of each that
/// SlateDB may lack (those after `applied`).
pub(crate) async fn take_over(
    store: &dyn ObjectStore,
    root: &Path,
    ours: u64,
    Marks {
        applied,
        fenced_through,
    }: Marks,
) -> Result<Takeover, object_store::Error> {
    let listed = list(store, root).await?;
    let mut out = Takeover::default();
    for epoch in fenced_through.saturating_add(1)..ours {
        let present = listed.get(&epoch);
        let (replay, start) = match applied {
            Some((e, s)) if e == epoch => (true, s + 1),
            // A later writer holds SlateDB's marker: it replayed this epoch already.
            Some((e, _)) if e > epoch => (false, 0),
            _ => (true, 0),
        };
        let (mut records, run_end) = read_run(store, root, epoch, start, present).await?;
        let end = match run_end {
            RunEnd::Occupied(slot) => slot,
            RunEnd::Vanished => return Err(vanished(epoch)),
            RunEnd::Open(mut slot) => loop {
                let path = slot_path(root, epoch, slot);
                match create(store, &path, fence_object(epoch, slot, ours)).await? {
                    Created::Stored => break slot,
                    // The old writer's upload landed first: it counts; fence the next slot.
                    Created::Taken(Some(b)) => match decode(&b, epoch, slot) {
                        Slot::Record(r) => {
                            records.push((slot, r));
                            slot += 1;
                        }
                        Slot::End => break slot,
                    },
                    Created::Taken(None) => return Err(vanished(epoch)),
                }
            },
        };
        if let Some(present) = present {
            out.obsolete.extend(
                present
                    .iter()
                    .filter(|&&s| s != end)
                    .map(|&s| slot_path(root, epoch, s)),
            );
        }
        if replay {
            out.records
                .extend(records.into_iter().map(|(s, r)| ((epoch, s), r)));
        }
    }
    Ok(out)
}

/// The records a reader must put on top of SlateDB's copy (which holds everything through
/// `applied`, and every epoch through `fenced_through` whole). `None` when the journal moved
/// under the read (a record after the marker was cut, so SlateDB's copy is older than the
/// journal): read again.
pub(crate) async fn pending(
    store: &dyn ObjectStore,
    root: &Path,
    Marks {
        applied,
        fenced_through,
    }: Marks,
) -> Result<Option<Vec<Record>>, object_store::Error> {
    let listed = list(store, root).await?;
    let mut out = Vec::new();
    for (&epoch, present) in listed.range(fenced_through.saturating_add(1)..) {
        let start = match applied {
            Some((e, s)) if e == epoch => s + 1,
            Some((e, _)) if e > epoch => continue,
            _ => 0,
        };
        let (records, end) = read_run(store, root, epoch, start, Some(present)).await?;
        // Nothing at the marker but records after it: cut after SlateDB's copy was read (or
        // a group still uploading; then the next read finds it).
        let cut = records.is_empty()
            && matches!(end, RunEnd::Open(_))
            && present.range(start..).next().is_some();
        if end == RunEnd::Vanished || cut {
            return Ok(None);
        }
        out.extend(records.into_iter().map(|(_, r)| r));
    }
    Ok(Some(out))
}

/// Deletes `paths` (at most a thousand per request where the store supports bulk deletes).
pub(crate) async fn delete(
    store: &dyn ObjectStore,
    paths: Vec<Path>,
) -> Result<(), object_store::Error> {
    if paths.is_empty() {
        return Ok(());
    }
    let stream = futures::stream::iter(paths.into_iter().map(Ok)).boxed();
    let mut deleted = store.delete_stream(stream);
    while let Some(r) = deleted.next().await {
        match r {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub(crate) fn encode_position((epoch, slot): Position) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&epoch.to_be_bytes());
    out[8..].copy_from_slice(&slot.to_be_bytes());
    out
}

fn decode_position(raw: &[u8]) -> Option<Position> {
    let raw: &[u8; 16] = raw.try_into().ok()?;
    let (e, s) = raw.split_at(8);
    Some((
        u64::from_be_bytes(e.try_into().ok()?),
        u64::from_be_bytes(s.try_into().ok()?),
    ))
}
