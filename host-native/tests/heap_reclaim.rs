//! The heap reclaimer gives memory freed in bulk by several threads back to the OS, which glibc
//! alone keeps resident (decision record 0017). Its own test binary: the resident set it
//! measures is the process's.
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::time::Duration;

use rocklake::heap::{resident_bytes, Reclaimer, RECLAIM_AFTER};
use rocklake::metrics::Metrics;

const THREADS: usize = 4;
const BLOCKS: usize = 16_000;
const BLOCK: usize = 4096;
const MB: u64 = 1 << 20;

/// Each thread fills its arena with small blocks, then frees all but every 64th (and the
/// last), so the free space sits between live blocks where glibc does not return it by
/// itself. Returns the blocks kept.
fn allocate_and_mostly_free() -> Vec<Vec<Box<[u8]>>> {
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            std::thread::spawn(move || {
                let blocks: Vec<Box<[u8]>> = (0..BLOCKS)
                    .map(|i| vec![(t + i) as u8 | 1; BLOCK].into_boxed_slice())
                    .collect();
                blocks
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| i % 64 == 0 || *i == BLOCKS - 1)
                    .map(|(_, b)| b)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("allocating thread"))
        .collect()
}

#[test]
fn memory_freed_in_bulk_goes_back_to_the_os() {
    let allocated = (THREADS * BLOCKS * BLOCK) as u64;
    let mut reclaimer = Reclaimer::new(RECLAIM_AFTER, Duration::ZERO);
    assert!(reclaimer.tick().is_none(), "nothing freed yet");

    let start = resident_bytes().expect("statm");
    let kept = allocate_and_mostly_free();
    let after_free = resident_bytes().expect("statm");
    // The precondition the reclaimer exists for: glibc kept most of it resident.
    assert!(
        after_free > start + allocated / 2,
        "freed heap was not kept resident: {} MB before, {} MB after freeing {} MB",
        start / MB,
        after_free / MB,
        allocated / MB
    );

    let trimmed = reclaimer.tick().expect("a trim after freeing 250 MB");
    let after_trim = resident_bytes().expect("statm");
    assert!(
        trimmed.released > allocated / 2 && after_trim + allocated / 2 < after_free,
        "trim released {} MB; resident {} MB -> {} MB",
        trimmed.released / MB,
        after_free / MB,
        after_trim / MB
    );
    // The live blocks are intact.
    for (t, blocks) in kept.iter().enumerate() {
        for (j, b) in blocks.iter().enumerate() {
            let i = if j == blocks.len() - 1 {
                BLOCKS - 1
            } else {
                j * 64
            };
            assert!(b.iter().all(|&x| x == ((t + i) as u8 | 1)), "block {t}/{i}");
        }
    }
    // Nothing more was freed: no second trim.
    assert!(
        reclaimer.tick().is_none(),
        "trimmed again with nothing freed"
    );
    // Within the least gap between trims, even a bulk free waits.
    let mut patient = Reclaimer::new(RECLAIM_AFTER, Duration::from_secs(3600));
    assert!(patient.tick().is_none());
    drop(kept);
    let kept = allocate_and_mostly_free();
    assert!(patient.tick().is_some(), "the first trim needs no gap");
    drop(kept);
    let _kept = allocate_and_mostly_free();
    assert!(patient.tick().is_none(), "a second trim within the gap");

    let metrics = Metrics::new();
    metrics.record_heap_trim(trimmed.took, trimmed.released);
    let text = metrics.render();
    assert!(text.contains("rocklake_heap_trims_total 1"), "{text}");
    assert!(
        text.contains(&format!(
            "rocklake_heap_trimmed_bytes_total {}",
            trimmed.released
        )),
        "{text}"
    );
    assert!(text.contains("rocklake_heap_free_bytes "), "{text}");
}
