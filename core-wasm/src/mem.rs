//! Memory a statement may use. The core materialises rows (joins, `generate_series`, sorts,
//! result sets), so one statement can ask for more memory than there is: in the component
//! that traps the whole core (every session lost), natively it grows the process until the
//! operating system kills it. Instead a statement fails with 53200 once the heap has grown by
//! more than its budget since the statement started, the way PostgreSQL reports "out of
//! memory", and its rows are freed with it.
//!
//! The heap is measured by [`CountingAlloc`], a global allocator wrapper that keeps a net
//! byte count per thread (a statement runs on one thread; the component has only one). The
//! component installs it itself; a native host installs it in its binary (`rocklake` does).
//! Where it is not installed the count stays 0 and no statement is ever stopped.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

use crate::error::SqlError;

thread_local! {
    /// Bytes allocated minus bytes freed on this thread. Frees of memory another thread
    /// allocated make it drift, which is harmless: only differences within one statement
    /// are read.
    static NET: Cell<i64> = const { Cell::new(0) };
}

fn add(delta: i64) {
    // `try_with`: never fails for a const-initialised Cell (no destructor), but an allocator
    // must not panic.
    let _ = NET.try_with(|n| n.set(n.get().wrapping_add(delta)));
}

/// Bytes allocated minus bytes freed on this thread since it started.
pub fn net_allocated() -> i64 {
    NET.try_with(Cell::get).unwrap_or(0)
}

// i64, not isize: the component's isize is 32 bits and cannot hold its 3 GiB ceiling.

/// Wraps an allocator and counts what passes through it (see the module doc).
pub struct CountingAlloc<A>(pub A);

// SAFETY: every method forwards to the wrapped allocator with the caller's arguments and only
// adds bookkeeping in a const-initialised thread-local Cell, which neither allocates nor
// panics; the wrapped allocator's guarantees carry over unchanged.
#[allow(unsafe_code)]
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is (see the impl's comment).
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { self.0.dealloc(ptr, layout) };
        add(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add((new_size as i64).wrapping_sub(layout.size() as i64));
        }
        p
    }
}

/// What a statement may add to the heap unless the host says otherwise (4 GiB): what the
/// component can give a statement at most anyway (its heap stops at 3 GiB), so a statement
/// that runs on one build runs on the other; far below a 300-million-row cross join.
pub const DEFAULT_STATEMENT_MEMORY_LIMIT: u64 = 4 << 30;

/// The component's heap lives in a 4 GiB linear memory that cannot grow further: whatever the
/// configured budget, a statement stops before the heap reaches 3 GiB, leaving room for the
/// last vector to double and for fragmentation.
#[cfg(target_arch = "wasm32")]
const HEAP_CEILING: Option<i64> = Some(3 << 30);
#[cfg(not(target_arch = "wasm32"))]
const HEAP_CEILING: Option<i64> = None;

/// The memory one statement may add to the heap, fixed when it starts.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// `net_allocated()` above which the statement fails.
    ceiling: i64,
    /// The configured limit in bytes (0: none), for the message.
    limit: u64,
}

impl Budget {
    /// A budget of `limit` bytes (0: no limit but the component's ceiling) from now.
    pub fn start(limit: u64) -> Budget {
        let now = net_allocated();
        let own = match i64::try_from(limit) {
            Ok(0) | Err(_) => i64::MAX,
            Ok(l) => now.saturating_add(l),
        };
        let ceiling = match HEAP_CEILING {
            // The ceiling is on the whole heap; the count starts with the core's first
            // allocation, so it is the heap's size (one thread).
            Some(c) => own.min(c),
            None => own,
        };
        Budget { ceiling, limit }
    }

    /// Fails with 53200 when the heap has grown past the budget.
    pub fn check(&self) -> Result<(), SqlError> {
        if net_allocated() > self.ceiling {
            return Err(SqlError::OutOfMemory { limit: self.limit });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_fails_once_the_heap_grew_past_it() {
        // The unit tests install CountingAlloc (lib.rs), so allocations here are counted.
        let budget = Budget::start(1 << 20);
        assert!(budget.check().is_ok());
        let big = vec![0u8; 2 << 20];
        assert_eq!(
            budget.check(),
            Err(SqlError::OutOfMemory { limit: 1 << 20 })
        );
        drop(big);
        assert!(budget.check().is_ok(), "freeing gives the budget back");
        assert!(Budget::start(0).check().is_ok());
    }
}
