//! The in-memory ordered copy of every (non-reserved) key that answers all reads.
//!
//! The keys live in one packed, sorted run and in `recent`: what commits wrote since the run
//! was built, deletions included. A BTreeMap of owned vectors cost about four times the
//! entries' bytes (6 M stats rows and their index entries took 4.9 GB). The run stores each
//! key as the bytes it does not share with the key before it (catalog keys are a table prefix
//! and a big-endian number, so neighbours share most of theirs), three varint lengths, and
//! one offset per [`RESTART`] entries; a long value several entries hold (an index entry
//! holds its row's envelope) is stored once per run. When `recent` reaches a quarter of the
//! run (and [`RECENT_MIN`] entries), it is frozen (`merging`) and a thread merges it with the
//! run into a new run, while reads see recent over frozen over run and commits go on into a
//! new `recent`; only the swap takes the write lock (decision record 0015).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;

use rocklake_core::api::{CommitBatch, KvError, KvPage, KvRead};

/// Entries `recent` holds at least before it is merged into the run.
const RECENT_MIN: usize = 65_536;

/// Values at least this long are stored once per run: a later entry holding the same bytes
/// points at the first one's. A covering index entry holds its row's own envelope (decision
/// record 0008), so without this every indexed row's value was in memory twice.
const SHARED_MIN: usize = 32;

/// Every `RESTART`-th entry of a run stores its whole key and is found by binary search;
/// the entries between are found by decoding forward from it. 16 keeps a point read to a
/// binary search and at most 15 short decodes, and the offsets to half a byte per entry.
const RESTART: usize = 16;

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The varint at `*at`, moving `*at` past it. Runs are only ever decoded from what
/// [`RunBuilder`] wrote, so the bytes are well formed.
fn get_varint(data: &[u8], at: &mut usize) -> u64 {
    let mut n = 0u64;
    let mut shift = 0;
    loop {
        let b = data[*at];
        *at += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return n;
        }
        shift += 7;
    }
}

/// One entry as stored: `shared` bytes of the previous key, then `suffix`.
struct Stored<'a> {
    shared: usize,
    suffix: &'a [u8],
    value: &'a [u8],
    /// The value is an earlier entry's copy.
    #[cfg(test)]
    pointer: bool,
    /// Where the next entry starts.
    next: usize,
}

/// Sorted entries packed in one buffer. Entry: varint `shared` (bytes of the previous key it
/// starts with; 0 at a restart), varint suffix length, varint `value length << 1 | pointer`,
/// the key's suffix, then the value, or (pointer) the varint offset in `data` where an
/// earlier entry's copy of the same value starts.
#[derive(Default)]
struct Run {
    data: Vec<u8>,
    /// Where entry `i * RESTART` starts.
    restarts: Vec<u64>,
    len: usize,
}

impl Run {
    fn len(&self) -> usize {
        self.len
    }

    fn bytes(&self) -> usize {
        self.data.capacity() + self.restarts.capacity() * 8
    }

    fn stored(&self, at: usize) -> Stored<'_> {
        let mut p = at;
        let shared = get_varint(&self.data, &mut p) as usize;
        let suffix_len = get_varint(&self.data, &mut p) as usize;
        let tag = get_varint(&self.data, &mut p);
        let suffix = &self.data[p..p + suffix_len];
        p += suffix_len;
        let value_len = (tag >> 1) as usize;
        let (value, next) = if tag & 1 == 1 {
            let from = get_varint(&self.data, &mut p) as usize;
            (&self.data[from..from + value_len], p)
        } else {
            (&self.data[p..p + value_len], p + value_len)
        };
        Stored {
            shared,
            suffix,
            value,
            #[cfg(test)]
            pointer: tag & 1 == 1,
            next,
        }
    }

    /// The whole key of restart entry `b * RESTART`.
    fn restart_key(&self, b: usize) -> &[u8] {
        self.stored(self.restarts[b] as usize).suffix
    }

    /// Decodes block `b` (entries `b * RESTART ..`) into `block`.
    fn load<'a>(&'a self, b: usize, block: &mut Block<'a>) {
        block.keys.clear();
        block.ends.clear();
        block.values.clear();
        let mut at = self.restarts[b] as usize;
        let count = RESTART.min(self.len - b * RESTART);
        let mut prev = 0;
        for _ in 0..count {
            let e = self.stored(at);
            let start = block.keys.len();
            block.keys.extend_from_within(prev..prev + e.shared);
            block.keys.extend_from_slice(e.suffix);
            block.ends.push(block.keys.len());
            block.values.push(e.value);
            prev = start;
            at = e.next;
        }
        block.number = b;
    }

    /// The first entry whose key is at least `key`.
    fn lower_bound(&self, key: &[u8]) -> usize {
        self.seek(key).0
    }

    fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.seek(key).1
    }

    /// The index of the first entry whose key is at least `key`, and its value if its key
    /// is `key`.
    fn seek(&self, key: &[u8]) -> (usize, Option<&[u8]>) {
        // The last block whose first key is at most `key` holds the answer, or it is the
        // first entry of the block after it.
        let (mut lo, mut hi) = (0, self.restarts.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.restart_key(mid) <= key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let Some(b) = lo.checked_sub(1) else {
            return (0, None);
        };
        let mut at = self.restarts[b] as usize;
        let mut current = Vec::with_capacity(key.len() + 16);
        let count = RESTART.min(self.len - b * RESTART);
        for i in 0..count {
            let e = self.stored(at);
            current.truncate(e.shared);
            current.extend_from_slice(e.suffix);
            match current.as_slice().cmp(key) {
                std::cmp::Ordering::Less => at = e.next,
                std::cmp::Ordering::Equal => return (b * RESTART + i, Some(e.value)),
                std::cmp::Ordering::Greater => return (b * RESTART + i, None),
            }
        }
        (b * RESTART + count, None)
    }

    /// How many values of at least [`SHARED_MIN`] bytes are stored in full, and how many
    /// entries point at an earlier copy (tests).
    #[cfg(test)]
    fn value_forms(&self) -> (usize, usize) {
        let (mut full, mut pointers) = (0, 0);
        let mut at = 0;
        for _ in 0..self.len {
            let e = self.stored(at);
            if e.pointer {
                pointers += 1;
            } else if e.value.len() >= SHARED_MIN {
                full += 1;
            }
            at = e.next;
        }
        (full, pointers)
    }

    /// A cursor over the entries within the bounds, ascending or (`rev`) descending.
    fn cursor<'a>(&'a self, start: Bound<&[u8]>, end: Bound<&[u8]>, rev: bool) -> RunCursor<'a> {
        let from = match start {
            Bound::Included(s) => self.lower_bound(s),
            _ => 0,
        };
        let to = match end {
            Bound::Excluded(e) => self.lower_bound(e),
            _ => self.len,
        }
        .max(from);
        let mut c = RunCursor {
            run: self,
            from,
            to,
            rev,
            at: if rev { to.wrapping_sub(1) } else { from },
            block: Block::default(),
        };
        c.block.number = usize::MAX;
        c.settle();
        c
    }
}

/// One run block decoded: its keys back to back, and its values.
#[derive(Default)]
struct Block<'a> {
    number: usize,
    keys: Vec<u8>,
    ends: Vec<usize>,
    values: Vec<&'a [u8]>,
}

impl Block<'_> {
    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.keys[start..self.ends[i]]
    }
}

/// An ordered walk over one layer: the current entry (`None` value: deleted in that layer)
/// until it ends. Keys are lent by the cursor (a run's are rebuilt in a buffer), values by
/// the layer.
trait Cursor<'a> {
    fn current(&self) -> Option<(&[u8], Option<&'a [u8]>)>;
    fn advance(&mut self);
}

struct RunCursor<'a> {
    run: &'a Run,
    from: usize,
    to: usize,
    rev: bool,
    /// The current entry's index (`usize::MAX` before `from` when walking down).
    at: usize,
    block: Block<'a>,
}

impl RunCursor<'_> {
    fn valid(&self) -> bool {
        self.at >= self.from && self.at < self.to
    }

    /// Decodes the current entry's block if another is loaded.
    fn settle(&mut self) {
        if self.valid() && self.block.number != self.at / RESTART {
            self.run.load(self.at / RESTART, &mut self.block);
        }
    }
}

impl<'a> Cursor<'a> for RunCursor<'a> {
    fn current(&self) -> Option<(&[u8], Option<&'a [u8]>)> {
        self.valid().then(|| {
            let i = self.at % RESTART;
            (self.block.key(i), Some(self.block.values[i]))
        })
    }

    fn advance(&mut self) {
        if !self.valid() {
            return;
        }
        self.at = if self.rev {
            self.at.wrapping_sub(1)
        } else {
            self.at + 1
        };
        self.settle();
    }
}

/// A key and its value in one layer (`None`: deleted there).
type Entry<'a> = (&'a [u8], Option<&'a [u8]>);

/// A map layer's entries within the bounds, in one direction.
struct MapCursor<'a> {
    head: Option<Entry<'a>>,
    rest: Box<dyn Iterator<Item = Entry<'a>> + 'a>,
}

impl<'a> MapCursor<'a> {
    fn new(map: &'a Recent, start: Bound<&'a [u8]>, end: Bound<&'a [u8]>, rev: bool) -> Self {
        let range = map
            .map
            .range::<[u8], _>((start, end))
            .map(|(k, v)| (k.as_slice(), v.as_deref()));
        let mut rest: Box<dyn Iterator<Item = Entry<'a>> + 'a> = if rev {
            Box::new(range.rev())
        } else {
            Box::new(range)
        };
        MapCursor {
            head: rest.next(),
            rest,
        }
    }
}

impl<'a> Cursor<'a> for MapCursor<'a> {
    fn current(&self) -> Option<(&[u8], Option<&'a [u8]>)> {
        self.head
    }

    fn advance(&mut self) {
        self.head = self.rest.next();
    }
}

/// The entries of `upper` over those of `lower`, both walking one way (`rev`: descending):
/// for a key both hold, `upper`'s entry wins.
struct Overlay<U, L> {
    upper: U,
    lower: L,
    rev: bool,
    /// Which layer holds the current entry (kept: nested overlays would otherwise compare
    /// the same keys again at every level for every entry).
    side: Side,
}

/// Which layer holds an overlay's current entry.
#[derive(Clone, Copy)]
enum Side {
    Upper,
    Lower,
    /// Both hold the key; the upper entry is the one shown.
    Both,
    Neither,
}

impl<'a, U: Cursor<'a>, L: Cursor<'a>> Overlay<U, L> {
    fn new(upper: U, lower: L, rev: bool) -> Self {
        let mut o = Overlay {
            upper,
            lower,
            rev,
            side: Side::Neither,
        };
        o.side = o.side();
        o
    }

    fn side(&self) -> Side {
        match (self.upper.current(), self.lower.current()) {
            (None, None) => Side::Neither,
            (None, Some(_)) => Side::Lower,
            (Some(_), None) => Side::Upper,
            (Some((u, _)), Some((l, _))) => match l.cmp(u) {
                std::cmp::Ordering::Equal => Side::Both,
                std::cmp::Ordering::Less if !self.rev => Side::Lower,
                std::cmp::Ordering::Greater if self.rev => Side::Lower,
                _ => Side::Upper,
            },
        }
    }
}

impl<'a, U: Cursor<'a>, L: Cursor<'a>> Cursor<'a> for Overlay<U, L> {
    fn current(&self) -> Option<(&[u8], Option<&'a [u8]>)> {
        match self.side {
            Side::Lower => self.lower.current(),
            Side::Upper | Side::Both => self.upper.current(),
            Side::Neither => None,
        }
    }

    fn advance(&mut self) {
        match self.side {
            Side::Lower => self.lower.advance(),
            Side::Upper => self.upper.advance(),
            Side::Both => {
                self.upper.advance();
                self.lower.advance();
            }
            Side::Neither => return,
        }
        self.side = self.side();
    }
}

/// Hashes a value's 32-bit fingerprint (already a keyed hash) for the builder's map.
#[derive(Default)]
struct Fingerprint(u64);

impl std::hash::Hasher for Fingerprint {
    fn finish(&self) -> u64 {
        // Spread the bits over the whole word: the map takes its control bits from the top.
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n);
    }
}

/// Builds a [`Run`] from entries in ascending key order, storing each long value once.
struct RunBuilder {
    run: Run,
    /// The key pushed last.
    last: Vec<u8>,
    /// A 32-bit fingerprint of each long value stored in full -> where its bytes start. A
    /// fingerprint two different values share only costs the second its sharing.
    by_value: std::collections::HashMap<u32, u64, std::hash::BuildHasherDefault<Fingerprint>>,
    /// Seeded at random per builder, so values crafted to collide cannot be chosen in advance
    /// (and a collision only costs the second value its sharing). foldhash, not SipHash: the
    /// keyed SipHash was half of a run's build (`bench_run_build_fingerprints`).
    hasher: foldhash::quality::RandomState,
}

impl RunBuilder {
    fn with_capacity(bytes: usize, entries: usize) -> Self {
        RunBuilder {
            run: Run {
                data: Vec::with_capacity(bytes),
                restarts: Vec::with_capacity(entries.div_ceil(RESTART)),
                len: 0,
            },
            last: Vec::new(),
            by_value: Default::default(),
            hasher: Default::default(),
        }
    }

    fn last_key(&self) -> Option<&[u8]> {
        (self.run.len > 0).then_some(self.last.as_slice())
    }

    /// Appends an entry whose key sorts after every key in the run; false (nothing
    /// appended) for a key or value over 4 GiB.
    fn push(&mut self, key: &[u8], value: &[u8]) -> bool {
        if u32::try_from(key.len()).is_err() || u32::try_from(value.len()).is_err() {
            return false;
        }
        let shared = if self.run.len.is_multiple_of(RESTART) {
            self.run.restarts.push(self.run.data.len() as u64);
            0
        } else {
            self.last
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        };
        // A value stored in full earlier (the same bytes, wherever they are) is pointed at.
        let mut fingerprint = None;
        let mut pointer = None;
        if value.len() >= SHARED_MIN {
            use std::hash::BuildHasher;
            let f = self.hasher.hash_one(value) as u32;
            match self.by_value.get(&f) {
                Some(&at) => {
                    let at = at as usize;
                    if self.run.data.get(at..at + value.len()) == Some(value) {
                        pointer = Some(at as u64);
                    }
                }
                None => fingerprint = Some(f),
            }
        }
        let data = &mut self.run.data;
        put_varint(data, shared as u64);
        put_varint(data, (key.len() - shared) as u64);
        put_varint(
            data,
            (value.len() as u64) << 1 | u64::from(pointer.is_some()),
        );
        data.extend_from_slice(&key[shared..]);
        match pointer {
            Some(at) => put_varint(data, at),
            None => {
                if let Some(f) = fingerprint {
                    self.by_value.insert(f, data.len() as u64);
                }
                data.extend_from_slice(value);
            }
        }
        self.last.truncate(shared);
        self.last.extend_from_slice(&key[shared..]);
        self.run.len += 1;
        true
    }

    fn finish(self) -> Run {
        let mut run = self.run;
        run.data.shrink_to_fit();
        run.restarts.shrink_to_fit();
        run
    }
}

/// Entries written since the run was built (`None` is a deletion), with the bytes they hold
/// counted as they come and go, so the memory gauge never walks them.
#[derive(Default, Clone)]
struct Recent {
    map: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    bytes: usize,
}

impl Recent {
    /// A B-tree node's share per entry, about.
    const PER_ENTRY: usize = 48;

    fn entry_bytes(k: &[u8], v: &Option<Vec<u8>>) -> usize {
        k.len() + v.as_ref().map_or(0, Vec::len) + Self::PER_ENTRY
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn get(&self, key: &[u8]) -> Option<&Option<Vec<u8>>> {
        self.map.get(key)
    }

    fn insert(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        let added = Self::entry_bytes(&key, &value);
        let key_len = key.len();
        if let Some(old) = self.map.insert(key, value) {
            self.bytes -= key_len + old.as_ref().map_or(0, Vec::len) + Self::PER_ENTRY;
        }
        self.bytes += added;
    }

    fn remove(&mut self, key: &[u8]) {
        if let Some(old) = self.map.remove(key) {
            self.bytes -= Self::entry_bytes(key, &old);
        }
    }

    fn insert_if_absent(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        if !self.map.contains_key(&key) {
            self.insert(key, value);
        }
    }
}

/// Every key: `recent` over `merging` over the run.
pub(crate) struct Keys {
    run: Arc<Run>,
    /// Writes frozen while a thread merges them into the run.
    merging: Option<Arc<Recent>>,
    recent: Recent,
    /// Entries `recent` holds at least before a merge ([`RECENT_MIN`]; tests merge sooner).
    recent_min: usize,
    /// Counts replacements, so a merge started before one does not swap in a stale run.
    generation: u64,
}

impl Default for Loader {
    fn default() -> Self {
        Loader {
            run: RunBuilder::with_capacity(0, 0),
            late: Vec::new(),
        }
    }
}

impl Default for Keys {
    fn default() -> Self {
        Loader::default().finish()
    }
}

/// Builds [`Keys`] from a scan in ascending key order.
pub(crate) struct Loader {
    run: RunBuilder,
    /// Entries out of order or too large for the run (none from a SlateDB scan).
    late: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Loader {
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) {
        let in_order = self.run.last_key().is_none_or(|last| last < key);
        if !(in_order && self.run.push(key, value)) {
            self.late.push((key.to_vec(), value.to_vec()));
        }
    }

    pub(crate) fn finish(self) -> Keys {
        let mut keys = Keys {
            run: Arc::new(self.run.finish()),
            merging: None,
            recent: Recent::default(),
            recent_min: RECENT_MIN,
            generation: 0,
        };
        for (k, v) in self.late {
            keys.put(k, v);
        }
        keys
    }
}

impl Keys {
    /// Bytes held: the run's buffers, and the maps' keys and values with a node's share of a
    /// B-tree (about 48 bytes an entry) each, as counted when they were written.
    fn memory_bytes(&self) -> u64 {
        let run = self.run.bytes();
        let frozen = self.merging.as_deref().map_or(0, |m| m.bytes);
        (run + frozen + self.recent.bytes) as u64
    }

    /// Keys present. Counted when asked (diagnostics, tests), unless the run alone holds them:
    /// keeping a count would cost every written key a lookup in the commit path.
    pub(crate) fn len(&self) -> usize {
        if self.recent.is_empty() && self.merging.is_none() {
            self.run.len()
        } else {
            let mut n = 0;
            self.for_each(Bound::Unbounded, Bound::Unbounded, false, |_, _| {
                n += 1;
                true
            });
            n
        }
    }

    /// The key's value below `recent`: in `merging`, else in the run.
    fn below_recent(&self, key: &[u8]) -> Option<&[u8]> {
        match self.merging.as_ref().and_then(|m| m.get(key)) {
            Some(v) => v.as_deref(),
            None => self.run.get(key),
        }
    }

    fn lookup(&self, key: &[u8]) -> Option<&[u8]> {
        match self.recent.get(key) {
            Some(v) => v.as_deref(),
            None => self.below_recent(key),
        }
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.recent.insert(key, Some(value));
    }

    fn delete(&mut self, key: &[u8]) {
        // A key the layers below do not show needs no deletion marker.
        if self.below_recent(key).is_some() {
            self.recent.insert(key.to_vec(), None);
        } else {
            self.recent.remove(key);
        }
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.lookup(key).map(<[u8]>::to_vec)
    }

    /// Freezes `recent` for a merge when it has grown enough and no merge is running:
    /// returns what the merge needs.
    fn start_merge(&mut self) -> Option<MergeJob> {
        if self.merging.is_some() || self.recent.len() < self.recent_min.max(self.run.len() / 4) {
            return None;
        }
        let frozen = Arc::new(std::mem::take(&mut self.recent));
        self.merging = Some(frozen.clone());
        Some(MergeJob {
            run: self.run.clone(),
            frozen,
            generation: self.generation,
        })
    }

    /// Swaps in the run a merge built, unless the keys were replaced since it started. The
    /// entries too large for a run go back under the writes made since.
    fn finish_merge(&mut self, job_generation: u64, run: Run, left: Recent) {
        if self.generation != job_generation {
            return;
        }
        self.run = Arc::new(run);
        self.merging = None;
        for (k, v) in left.map {
            self.recent.insert_if_absent(k, v);
        }
    }

    /// Calls `f` with each present entry within the bounds, ascending or (`rev`)
    /// descending, until it returns false.
    fn for_each(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        rev: bool,
        f: impl FnMut(&[u8], &[u8]) -> bool,
    ) {
        let run = self.run.cursor(start, end, rev);
        // Empty layers are left out: each overlay compares keys for every entry.
        match (&self.merging, self.recent.is_empty()) {
            (None, true) => drive(run, f),
            (None, false) => drive(
                Overlay::new(MapCursor::new(&self.recent, start, end, rev), run, rev),
                f,
            ),
            (Some(m), _) => drive(
                Overlay::new(
                    MapCursor::new(&self.recent, start, end, rev),
                    Overlay::new(MapCursor::new(m, start, end, rev), run, rev),
                    rev,
                ),
                f,
            ),
        }
    }
}

/// Calls `f` with each present entry of `c` until it returns false.
fn drive<'a>(mut c: impl Cursor<'a>, mut f: impl FnMut(&[u8], &[u8]) -> bool) {
    while let Some((k, v)) = c.current() {
        if let Some(v) = v {
            if !f(k, v) {
                return;
            }
        }
        c.advance();
    }
}

/// A frozen `recent` to merge into the run it was written over.
struct MergeJob {
    run: Arc<Run>,
    frozen: Arc<Recent>,
    generation: u64,
}

impl MergeJob {
    /// The merged run, and the entries too large for a run (over 4 GiB; none in practice).
    fn merge(&self) -> (Run, Recent) {
        let frozen_bytes: usize = self
            .frozen
            .map
            .iter()
            .map(|(k, v)| 8 + k.len() + v.as_ref().map_or(0, Vec::len))
            .sum();
        let mut out = RunBuilder::with_capacity(
            self.run.data.len() + frozen_bytes,
            self.run.len() + self.frozen.len(),
        );
        let mut left = Recent::default();
        let all = Overlay::new(
            MapCursor::new(&self.frozen, Bound::Unbounded, Bound::Unbounded, false),
            self.run.cursor(Bound::Unbounded, Bound::Unbounded, false),
            false,
        );
        drive(all, |k, v| {
            if !out.push(k, v) {
                left.insert(k.to_vec(), Some(v.to_vec()));
            }
            true
        });
        (out.finish(), left)
    }
}

/// Shared between the store (the only writer) and its readers.
#[derive(Default)]
pub(crate) struct Mirror {
    keys: RwLock<Keys>,
    /// The running merge, if any.
    merger: Mutex<Option<JoinHandle<()>>>,
}

impl Mirror {
    pub(crate) fn from_keys(keys: Keys) -> Self {
        Mirror {
            keys: RwLock::new(keys),
            merger: Mutex::new(None),
        }
    }

    /// Applies a durable batch under one write lock, so every read call sees all of it or
    /// none of it. Order matches the SlateDB batch: puts in order, then deletes (a key both
    /// put and deleted ends up deleted, in both places). May start a merge in the background.
    pub(crate) fn apply(self: &Arc<Self>, batch: &CommitBatch) {
        // Nothing below can panic halfway (only inserts/removes), so a poisoned lock still
        // holds consistent keys; recover them instead of failing every later read.
        let job = {
            let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
            for (k, v) in &batch.puts {
                keys.put(k.clone(), v.clone());
            }
            for k in &batch.deletes {
                keys.delete(k);
            }
            keys.start_merge()
        };
        let Some(job) = job else {
            return;
        };
        let mirror = Arc::clone(self);
        let run = move || {
            let (merged, left) = job.merge();
            mirror
                .keys
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .finish_merge(job.generation, merged, left);
        };
        let mut merger = self.merger.lock().unwrap_or_else(PoisonError::into_inner);
        match std::thread::Builder::new()
            .name("rocklake-mirror-merge".into())
            .spawn(run)
        {
            Ok(handle) => *merger = Some(handle),
            Err(e) => {
                // Reads stay right with the frozen layer in place; the next batch over the
                // threshold cannot start another merge until this one is undone.
                tracing::warn!(error = %e, "could not start a mirror merge");
                let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
                if let Some(frozen) = keys.merging.take() {
                    let newer = std::mem::take(&mut keys.recent);
                    keys.recent = Arc::unwrap_or_clone(frozen);
                    for (k, v) in newer.map {
                        keys.recent.insert(k, v);
                    }
                }
            }
        }
    }

    /// Waits for a running merge (tests).
    #[cfg(test)]
    fn settle(&self) {
        let handle = self
            .merger
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }

    /// Swaps in a whole new copy (a read replica's reload), under one write lock. A merge
    /// still running finds the generation changed and drops its result.
    pub(crate) fn replace(&self, mut fresh: Keys) {
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        fresh.generation = keys.generation + 1;
        *keys = fresh;
    }

    pub(crate) fn len(&self) -> usize {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .memory_bytes()
    }
}

/// Read access to the store's mirror; cheap to clone and share across threads.
///
/// Each call reads under one lock acquisition, so it observes a state between two commits,
/// never half of one. Successive calls may observe different commits (the core's MVCC keys
/// make that harmless: commits only add versions).
#[derive(Clone)]
pub struct StoreReader {
    pub(crate) mirror: Arc<Mirror>,
}

impl std::fmt::Debug for StoreReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreReader").finish_non_exhaustive()
    }
}

impl StoreReader {
    /// Number of keys currently visible (diagnostics, tests).
    pub fn len(&self) -> usize {
        self.mirror.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the mirror holds (the `rocklake_mirror_bytes` gauge), kept as writes come.
    pub fn memory_bytes(&self) -> u64 {
        self.mirror.memory_bytes()
    }
}

impl StoreReader {
    /// `start <= key < end`, ascending or (`rev`) descending, at most `limit`.
    fn range(&self, start: &[u8], end: &[u8], limit: usize, rev: bool) -> Result<KvPage, KvError> {
        if limit == 0 || start >= end {
            return Ok(KvPage::new());
        }
        let keys = self
            .mirror
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let mut page = KvPage::new();
        let mut result = Ok(());
        keys.for_each(Bound::Included(start), Bound::Excluded(end), rev, |k, v| {
            result = page.push(k, v);
            result.is_ok() && page.len() < limit
        });
        result.map(|()| page)
    }
}

impl KvRead for StoreReader {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.range(start, end, limit, false)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let keys = self
            .mirror
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(keys.get(key))
    }

    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.range(start, end, limit, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rocklake_core::api::CommitSeq;

    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0u8..4, 0..4)
    }

    /// Short values, and a few long ones many entries share (stored once per run).
    fn value() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..6),
            (0u8..3, SHARED_MIN - 1..SHARED_MIN + 2).prop_map(|(b, n)| vec![b; n]),
        ]
    }

    /// A commit batch's puts and deletes.
    type Batch = (Vec<(Vec<u8>, Vec<u8>)>, Vec<Vec<u8>>);

    fn batches() -> impl Strategy<Value = Vec<Batch>> {
        prop::collection::vec(
            (
                prop::collection::vec((key(), value()), 0..8),
                prop::collection::vec(key(), 0..4),
            ),
            0..12,
        )
    }

    fn reader(keys: Keys) -> StoreReader {
        StoreReader {
            mirror: Arc::new(Mirror::from_keys(keys)),
        }
    }

    fn model_range(
        model: &BTreeMap<Vec<u8>, Vec<u8>>,
        start: &[u8],
        end: &[u8],
        limit: usize,
        rev: bool,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        if start >= end {
            return vec![];
        }
        let range = model.range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)));
        let all: Vec<_> = if rev {
            range.rev().map(|(k, v)| (k.clone(), v.clone())).collect()
        } else {
            range.map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        all.into_iter().take(limit).collect()
    }

    fn page(p: KvPage) -> Vec<(Vec<u8>, Vec<u8>)> {
        p.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
    }

    proptest! {
        /// The run plus `recent`, merged often, answers every read as one ordered map would.
        #[test]
        fn reads_match_an_ordered_map(
            initial in prop::collection::btree_map(key(), value(), 0..10),
            batches in batches(),
            ranges in prop::collection::vec((key(), key(), 0usize..6, any::<bool>()), 1..6),
            recent_min in 1usize..6,
        ) {
            let mut loader = Loader::default();
            for (k, v) in &initial {
                loader.push(k, v);
            }
            let mut keys = loader.finish();
            keys.recent_min = recent_min;
            let r = reader(keys);
            let mut model = initial;
            for (seq, (puts, deletes)) in batches.into_iter().enumerate() {
                let batch = CommitBatch { seq: CommitSeq(seq as u64), puts: puts.clone(), deletes: deletes.clone() };
                r.mirror.apply(&batch);
                for (k, v) in puts {
                    model.insert(k, v);
                }
                for k in deletes {
                    model.remove(&k);
                }
                prop_assert_eq!(r.len(), model.len());
                for k in model.keys() {
                    prop_assert_eq!(r.get(k).expect("mirror read"), model.get(k).cloned());
                }
                prop_assert_eq!(r.get(&[9]).expect("mirror read"), None);
                for (start, end, limit, rev) in &ranges {
                    let got = if *rev { r.scan_rev(start, end, *limit) } else { r.scan(start, end, *limit) };
                    prop_assert_eq!(page(got.expect("mirror read")), model_range(&model, start, end, *limit, *rev));
                }
                let all = page(r.scan(&[], &[9], usize::MAX).expect("mirror read"));
                prop_assert_eq!(all, model_range(&model, &[], &[9], usize::MAX, false));
                // The byte counts kept as writes came are what a walk finds.
                let keys = r.mirror.keys.read().expect("lock");
                let walked = |m: &Recent| -> usize {
                    m.map.iter().map(|(k, v)| Recent::entry_bytes(k, v)).sum()
                };
                prop_assert_eq!(keys.recent.bytes, walked(&keys.recent));
                if let Some(frozen) = &keys.merging {
                    prop_assert_eq!(frozen.bytes, walked(frozen));
                }
            }
        }
    }

    /// Every entry a cursor shows, as owned pairs.
    fn walk<'a>(mut c: impl Cursor<'a>) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        while let Some((k, v)) = c.current() {
            out.push((k.to_vec(), v.map(<[u8]>::to_vec).unwrap_or_default()));
            c.advance();
        }
        out
    }

    proptest! {
        /// A run alone, over many blocks (keys sharing prefixes of every length, restarts
        /// every 16 entries): point reads and walks both ways between any bounds.
        #[test]
        fn a_run_reads_like_an_ordered_map(
            model in prop::collection::btree_map(prop::collection::vec(0u8..3, 0..7), value(), 0..300),
            probes in prop::collection::vec(prop::collection::vec(0u8..3, 0..7), 1..12),
        ) {
            let mut b = RunBuilder::with_capacity(0, 0);
            for (k, v) in &model {
                prop_assert!(b.push(k, v));
            }
            let run = b.finish();
            prop_assert_eq!(run.len(), model.len());
            for k in model.keys().chain(&probes) {
                prop_assert_eq!(run.get(k), model.get(k).map(Vec::as_slice));
            }
            let bound = |k: &Vec<u8>, included: bool, i: usize| match (i % 3, included) {
                (0, _) => Bound::Unbounded,
                (_, true) => Bound::Included(k.clone()),
                _ => Bound::Excluded(k.clone()),
            };
            for (i, (a, z)) in probes.iter().zip(probes.iter().rev()).enumerate() {
                let (start, end) = (bound(a, true, i), bound(z, false, i / 3));
                let ordered = start_before_end(&start, &end);
                let want: Vec<(Vec<u8>, Vec<u8>)> = if ordered {
                    model.range((start.clone(), end.clone())).map(|(k, v)| (k.clone(), v.clone())).collect()
                } else {
                    vec![]
                };
                let fwd = walk(run.cursor(as_ref(&start), as_ref(&end), false));
                prop_assert_eq!(&fwd, &want);
                let mut back = walk(run.cursor(as_ref(&start), as_ref(&end), true));
                back.reverse();
                prop_assert_eq!(back, want);
            }
        }
    }

    fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        match b {
            Bound::Included(k) => Bound::Included(k.as_slice()),
            Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
            Bound::Unbounded => Bound::Unbounded,
        }
    }

    /// Whether a range from `start` to `end` is one `BTreeMap::range` accepts.
    fn start_before_end(start: &Bound<Vec<u8>>, end: &Bound<Vec<u8>>) -> bool {
        match (start, end) {
            (Bound::Included(a), Bound::Excluded(z)) => a <= z,
            _ => true,
        }
    }

    #[test]
    fn keys_out_of_order_while_loading_still_land() {
        let mut loader = Loader::default();
        for k in [b"b".as_slice(), b"a", b"c", b"b"] {
            loader.push(k, k);
        }
        let r = reader(loader.finish());
        assert_eq!(r.len(), 3);
        assert_eq!(
            page(r.scan(b"", b"z", 10).expect("mirror read")),
            vec![
                (b"a".to_vec(), b"a".to_vec()),
                (b"b".to_vec(), b"b".to_vec()),
                (b"c".to_vec(), b"c".to_vec()),
            ]
        );
    }

    #[test]
    fn a_long_value_many_entries_hold_is_stored_once_per_run() {
        // Rows and their covering index entries: the same 60-byte envelope under two keys.
        let envelope = |i: u8| {
            let mut v = vec![i; 60];
            v[0] = 0xEE;
            v
        };
        let mut loader = Loader::default();
        for i in 0u8..50 {
            loader.push(&[0x10, i], &envelope(i));
        }
        for i in 0u8..50 {
            loader.push(&[0x11, i], &envelope(i));
        }
        let keys = loader.finish();
        // 100 entries: 50 values in full, 50 pointing at them.
        assert_eq!(keys.run.value_forms(), (50, 50));
        let r = reader(Keys {
            recent_min: 3,
            ..keys
        });
        for i in 0u8..50 {
            assert_eq!(r.get(&[0x11, i]).expect("read"), Some(envelope(i)));
        }
        // A merge rebuilds the run: still stored once, and new entries share too.
        // (Enough writes for a merge: a quarter of the run; the 25 fillers hold 1-byte values.)
        let mut puts = vec![
            (vec![0x10, 200], envelope(200)),
            (vec![0x11, 200], envelope(200)),
            (vec![0x12], envelope(7)),
            (vec![0x10, 3], envelope(33)),
        ];
        puts.extend((0u8..25).map(|j| (vec![0x13, j], vec![j])));
        r.mirror.apply(&CommitBatch {
            seq: CommitSeq(1),
            puts,
            deletes: vec![vec![0x10, 7]],
        });
        r.mirror.settle();
        let keys = r.mirror.keys.read().expect("lock");
        assert!(keys.merging.is_none() && keys.recent.is_empty());
        // In full: 49 envelopes under 0x10 (envelope 33 twice: [0x10, 3] now holds it)
        // and, under 0x11, those of 3 and 7 (their rows no longer hold them); 51 pointers.
        assert_eq!(keys.run.value_forms(), (51, 51));
        assert_eq!(keys.run.len(), 127);
        drop(keys);
        assert_eq!(r.get(&[0x12]).expect("read"), Some(envelope(7)));
        assert_eq!(r.get(&[0x11, 7]).expect("read"), Some(envelope(7)));
        assert_eq!(r.get(&[0x10, 7]).expect("read"), None);
        assert_eq!(r.get(&[0x10, 3]).expect("read"), Some(envelope(33)));
        assert_eq!(r.get(&[0x11, 3]).expect("read"), Some(envelope(3)));
        assert_eq!(r.get(&[0x11, 200]).expect("read"), Some(envelope(200)));
    }

    #[test]
    fn a_merge_leaves_nothing_recent_and_the_same_keys() {
        let r = reader(Keys {
            recent_min: 3,
            ..Keys::default()
        });
        let puts: Vec<(Vec<u8>, Vec<u8>)> = (0u8..5).map(|i| (vec![i], vec![i; 3])).collect();
        r.mirror.apply(&CommitBatch {
            seq: CommitSeq(1),
            puts,
            deletes: vec![vec![2]],
        });
        r.mirror.settle();
        let keys = r.mirror.keys.read().expect("lock");
        assert!(keys.recent.is_empty(), "merged into the run");
        assert!(keys.merging.is_none(), "the merge finished");
        assert_eq!(keys.run.len(), 4);
        assert_eq!(keys.len(), 4);
    }

    #[test]
    fn writes_during_a_merge_stay_over_the_merged_run() {
        let r = reader(Keys {
            recent_min: 2,
            ..Keys::default()
        });
        let mirror = &r.mirror;
        let batch = |seq, puts: &[(u8, u8)], deletes: &[u8]| CommitBatch {
            seq: CommitSeq(seq),
            puts: puts.iter().map(|(k, v)| (vec![*k], vec![*v])).collect(),
            deletes: deletes.iter().map(|k| vec![*k]).collect(),
        };
        mirror.apply(&batch(1, &[(1, 1), (2, 2), (3, 3)], &[]));
        // Whether or not that merge has finished, these land over it.
        mirror.apply(&batch(2, &[(2, 20)], &[3]));
        mirror.apply(&batch(3, &[(4, 4)], &[]));
        let want = vec![(vec![1], vec![1]), (vec![2], vec![20]), (vec![4], vec![4])];
        assert_eq!(page(r.scan(&[], &[9], 10).expect("scan")), want);
        mirror.settle();
        assert_eq!(page(r.scan(&[], &[9], 10).expect("scan")), want);
        assert_eq!(r.len(), 3);
        mirror.settle();
        assert_eq!(page(r.scan(&[], &[9], 10).expect("scan")), want);
        assert_eq!(r.get(&[3]).expect("get"), None);
    }

    #[test]
    fn a_merge_started_before_a_replace_is_dropped() {
        let keys = Keys {
            recent_min: 1,
            ..Keys::default()
        };
        let r = reader(keys);
        // The merge is run by hand, so that the replace lands between its start and its swap.
        let job = {
            let mut keys = r.mirror.keys.write().expect("lock");
            keys.put(vec![1], vec![1]);
            keys.start_merge().expect("a merge starts")
        };
        let mut fresh = Loader::default();
        fresh.push(&[7], &[7]);
        r.mirror.replace(fresh.finish());
        let (run, left) = job.merge();
        r.mirror
            .keys
            .write()
            .expect("lock")
            .finish_merge(job.generation, run, left);
        assert_eq!(
            page(r.scan(&[], &[9], 10).expect("scan")),
            vec![(vec![7], vec![7])]
        );
    }

    /// Entries shaped like the file-column stats rows and their covering index entries:
    /// 22- and 41-byte keys (a table prefix, then a big-endian number), 60-byte values, each
    /// value under a row key and an index key.
    fn stats_shaped(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
            .map(|i| {
                let row = (i / 2) as u64;
                let mut key = if i % 2 == 0 {
                    vec![1u8; 14]
                } else {
                    vec![2u8; 33]
                };
                key.extend_from_slice(&row.to_be_bytes());
                let mut value = vec![0x5au8; 52];
                value.extend_from_slice(&row.to_le_bytes());
                (key, value)
            })
            .collect();
        entries.sort();
        entries
    }

    /// The fastest of five runs of `f` (seconds), and what it returned.
    fn best_of_5(f: &mut dyn FnMut() -> usize) -> (f64, usize) {
        let mut best = f64::MAX;
        let mut out = 0;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            out = std::hint::black_box(f());
            best = best.min(t.elapsed().as_secs_f64());
        }
        (best, out)
    }

    /// `cargo xtask bench store` runs this (ignored in the test suite): a run's bytes per
    /// entry and its reads — a whole scan each way, short scans (DuckDB's pages: 32 entries
    /// from a sought key) and point reads — on 1,000,000 stats-shaped entries.
    #[test]
    #[ignore = "benchmark: cargo xtask bench store"]
    fn bench_run_reads() {
        let n: usize = 1_000_000;
        let entries = stats_shaped(n);
        let mut loader = Loader::default();
        for (k, v) in &entries {
            loader.push(k, v);
        }
        let keys = loader.finish();
        let raw: usize = entries.iter().map(|(k, v)| k.len() + v.len()).sum();
        let bytes = keys.memory_bytes() as usize;
        let r = reader(keys);
        let (fwd, seen) = best_of_5(&mut || r.scan(&[], &[9], usize::MAX).expect("scan").len());
        assert_eq!(seen, n);
        let (rev, seen) = best_of_5(&mut || r.scan_rev(&[], &[9], usize::MAX).expect("scan").len());
        assert_eq!(seen, n);
        // Every 97th key, so the probes spread over the run without a random source.
        let probes: Vec<&[u8]> = entries
            .iter()
            .step_by(97)
            .map(|(k, _)| k.as_slice())
            .collect();
        let (short, seen) = best_of_5(&mut || {
            probes
                .iter()
                .map(|k| r.scan(k, &[9], 32).expect("scan").len())
                .sum()
        });
        assert!(seen > probes.len() * 31);
        let (gets, found) = best_of_5(&mut || {
            probes
                .iter()
                .filter(|k| r.get(k).expect("get").is_some())
                .count()
        });
        assert_eq!(found, probes.len());
        println!(
            "mirror run, {n} stats-shaped entries ({:.1} bytes of key and value each): {:.1} \
             bytes per entry held; full scan {:.1} ns per entry forwards, {:.1} backwards; \
             32-entry scan from a sought key {:.0} ns; point read {:.0} ns",
            raw as f64 / n as f64,
            bytes as f64 / n as f64,
            fwd * 1e9 / n as f64,
            rev * 1e9 / n as f64,
            short * 1e9 / probes.len() as f64,
            gets * 1e9 / probes.len() as f64,
        );
    }

    /// `cargo xtask bench store` runs this (ignored in the test suite): what storing each long
    /// value once costs a run's build. 1,000,000 entries shaped like the file-column stats rows
    /// and their covering index entries ([`stats_shaped`]), built with the real builder,
    /// against the fingerprint work alone (the keyed hash and the map probe of every long
    /// value) and a plain copy of the same bytes.
    #[test]
    #[ignore = "benchmark: cargo xtask bench store"]
    fn bench_run_build_fingerprints() {
        use std::hash::BuildHasher;
        let n: usize = 1_000_000;
        let entries = stats_shaped(n);
        let bytes: usize = entries.iter().map(|(k, v)| 8 + k.len() + v.len()).sum();
        let best = |f: &mut dyn FnMut() -> usize| {
            let (secs, out) = best_of_5(f);
            (secs * 1e9 / n as f64, out)
        };
        let (build_ns, run_bytes) = best(&mut || {
            let mut b = RunBuilder::with_capacity(bytes, n);
            for (k, v) in &entries {
                assert!(b.push(k, v));
            }
            b.finish().data.len()
        });
        let (fingerprint_ns, distinct) = best(&mut || {
            let mut b = RunBuilder::with_capacity(0, 0);
            for (i, (_, v)) in entries.iter().enumerate() {
                let fingerprint = b.hasher.hash_one(v) as u32;
                b.by_value.entry(fingerprint).or_insert(i as u64);
            }
            b.by_value.len()
        });
        let (copy_ns, copied) = best(&mut || {
            let mut data = Vec::with_capacity(bytes);
            let mut starts = Vec::with_capacity(n);
            for (k, v) in &entries {
                starts.push(data.len() as u64);
                data.extend_from_slice(&(k.len() as u32).to_le_bytes());
                data.extend_from_slice(&(v.len() as u32).to_le_bytes());
                data.extend_from_slice(k);
                data.extend_from_slice(v);
            }
            std::hint::black_box(&starts);
            data.len()
        });
        println!(
            "mirror run build, {n} entries (22/41-byte keys, 60-byte values, each value twice): \
             {build_ns:.1} ns per entry with values stored once ({:.1} MB), of which keyed hash + \
             map probe {fingerprint_ns:.1} ns ({:.0} %, {distinct} fingerprints); a plain copy \
             of every value {copy_ns:.1} ns per entry ({:.1} MB)",
            run_bytes as f64 / 1e6,
            100.0 * fingerprint_ns / build_ns,
            copied as f64 / 1e6,
        );
        // 500,000 distinct values in 32 bits: a few dozen share a fingerprint.
        assert!(
            distinct <= n / 2 && distinct > n / 2 - 1_000,
            "{distinct} fingerprints"
        );
        assert!(run_bytes < copied, "sharing stores less than copying");
    }
}
