//! What the standard library (through wasi-libc) would otherwise provide. The component
//! is `no_std` so that it imports only the WASI interfaces its own code calls, not the
//! stdio, exit, terminal and environment interfaces std's runtime links.

use alloc::alloc::{Layout, alloc, realloc};

#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// A panic is a bug: it traps, and the host reports the trap as a typed error (the next
/// call runs on a fresh instance).
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

/// The canonical ABI's allocator, through which the host passes strings and lists in.
#[unsafe(no_mangle)]
unsafe extern "C" fn cabi_realloc(
    old: *mut u8,
    old_len: usize,
    align: usize,
    new_len: usize,
) -> *mut u8 {
    if new_len == 0 {
        return align as *mut u8;
    }
    // SAFETY: the canonical ABI passes a power-of-two `align` and, for a reallocation,
    // the pointer and size of an earlier allocation made here.
    let ptr = unsafe {
        if old_len == 0 {
            alloc(Layout::from_size_align_unchecked(new_len, align))
        } else {
            realloc(
                old,
                Layout::from_size_align_unchecked(old_len, align),
                new_len,
            )
        }
    };
    if ptr.is_null() {
        // Out of memory within the host's limit: trap rather than corrupt anything.
        core::arch::wasm32::unreachable()
    }
    ptr
}

/// `memcmp` for the compiler's slice and string comparisons (`memcpy`, `memset` and
/// `memmove` come from `compiler_builtins`).
#[unsafe(no_mangle)]
unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, len: usize) -> i32 {
    for i in 0..len {
        // SAFETY: the caller passes two readable regions of `len` bytes.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    0
}
