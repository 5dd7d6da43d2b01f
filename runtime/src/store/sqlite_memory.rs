//! SQLite's memory: taken from the program's global allocator, without statistics.
//!
//! SQLite allocates for every value it hands out: sqlx copies each column of each row it reads
//! out of SQLite, one allocation per column, so a page of 100 leads is a thousand allocations on
//! a reader's thread. By default SQLite takes them from the C library's `malloc` and counts them
//! in process-wide statistics under one mutex: readers on four threads queued on that mutex, and
//! `malloc`'s own arenas took a tenth of the readers' time. Here SQLite allocates through Rust's
//! global allocator (whichever the program chose; the `specwright` binary's is mimalloc, built
//! for many threads allocating small blocks) and keeps no statistics (nothing in the platform
//! reads them). SQLite takes either setting only before it first initialises.

use std::alloc::Layout;
use std::ffi::{c_int, c_void};

use libsqlite3_sys as ffi;

/// Bytes before each block SQLite is given, holding the size it asked for (SQLite asks a block's
/// size back, and the allocator needs it to free); 16 keeps the block aligned as `malloc`'s are.
const HEADER: usize = 16;

/// Alignment of every block.
const ALIGN: usize = 16;

/// The layout of a block of `size` bytes for SQLite, with its header.
fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, ALIGN).ok()
}

unsafe extern "C" fn malloc(size: c_int) -> *mut c_void {
    let Some(layout) = usize::try_from(size).ok().and_then(layout) else { return std::ptr::null_mut() };
    // SAFETY: `layout` has a non-zero size (at least the header).
    let base = unsafe { std::alloc::alloc(layout) };
    if base.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the block is at least HEADER bytes and aligned for a usize.
    unsafe {
        base.cast::<usize>().write(layout.size() - HEADER);
        base.add(HEADER).cast()
    }
}

/// The start of the block behind `p` (given out by [`malloc`] or [`realloc`]) and its size.
///
/// # Safety
/// `p` is a pointer this allocator handed to SQLite and not yet freed.
unsafe fn block(p: *mut c_void) -> (*mut u8, usize) {
    // SAFETY: as the caller promises, `p` is HEADER bytes into a block whose first word is its size.
    unsafe {
        let base = p.cast::<u8>().sub(HEADER);
        (base, base.cast::<usize>().read())
    }
}

unsafe extern "C" fn free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: SQLite frees only what it was given, once.
    unsafe {
        let (base, size) = block(p);
        std::alloc::dealloc(base, Layout::from_size_align_unchecked(size + HEADER, ALIGN));
    }
}

unsafe extern "C" fn realloc(p: *mut c_void, size: c_int) -> *mut c_void {
    // SQLite calls xRealloc with a block it holds and a positive size; be safe with others too.
    if p.is_null() {
        // SAFETY: a fresh allocation.
        return unsafe { malloc(size) };
    }
    let Some(new) = usize::try_from(size).ok().and_then(layout) else { return std::ptr::null_mut() };
    // SAFETY: `p` is a live block of this allocator with the layout its header records; on
    // failure the old block is left as it was, as SQLite expects of xRealloc.
    unsafe {
        let (base, old) = block(p);
        let moved = std::alloc::realloc(base, Layout::from_size_align_unchecked(old + HEADER, ALIGN), new.size());
        if moved.is_null() {
            return std::ptr::null_mut();
        }
        moved.cast::<usize>().write(new.size() - HEADER);
        moved.add(HEADER).cast()
    }
}

unsafe extern "C" fn size(p: *mut c_void) -> c_int {
    if p.is_null() {
        return 0;
    }
    // SAFETY: SQLite asks the size of blocks it holds.
    c_int::try_from(unsafe { block(p) }.1).unwrap_or(c_int::MAX)
}

unsafe extern "C" fn roundup(size: c_int) -> c_int {
    size.checked_add(7).map_or(size, |n| n & !7)
}

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn shutdown(_: *mut c_void) {}

/// Sets SQLite's allocator and turns its memory statistics off; false when SQLite had already
/// initialised (it then keeps its defaults). Call once, before SQLite's first use.
pub(super) fn configure() -> bool {
    let methods = ffi::sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
    };
    // SAFETY: configuration calls with the argument each option takes; SQLite copies the methods
    // (functions that live as long as the process), and answers SQLITE_MISUSE, changing nothing,
    // once it has initialised.
    unsafe {
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int) == ffi::SQLITE_OK
            && ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &methods as *const ffi::sqlite3_mem_methods)
                == ffi::SQLITE_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_size_alignment_and_contents_through_growth() {
        // SAFETY: blocks of this allocator, used within their sizes and freed once.
        unsafe {
            let p = malloc(13);
            assert!(!p.is_null() && (p as usize).is_multiple_of(8));
            assert_eq!(size(p), 13);
            std::ptr::copy_nonoverlapping(b"hello, sqlite".as_ptr(), p.cast::<u8>(), 13);
            let q = realloc(p, 4096);
            assert_eq!(size(q), 4096);
            assert_eq!(std::slice::from_raw_parts(q.cast::<u8>(), 13), b"hello, sqlite");
            let r = realloc(q, 5);
            assert_eq!((size(r), std::slice::from_raw_parts(r.cast::<u8>(), 5)), (5, &b"hello"[..]));
            free(r);
            free(std::ptr::null_mut());
            assert!(malloc(-1).is_null());
            assert_eq!(size(std::ptr::null_mut()), 0);
            assert_eq!((roundup(1), roundup(8), roundup(9), roundup(c_int::MAX)), (8, 8, 16, c_int::MAX));
        }
    }

    #[test]
    fn sqlite_allocates_through_it() {
        super::super::plans::register();
        // SAFETY: a block SQLite allocates, read within its header and freed by SQLite.
        unsafe {
            let p = ffi::sqlite3_malloc(13);
            assert!(!p.is_null());
            assert_eq!(block(p).1, 13, "SQLite's block carries this allocator's header");
            ffi::sqlite3_free(p);
        }
    }
}
