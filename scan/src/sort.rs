//! One small in-place sort for the whole crate.
//!
//! Every element type the standard library sorts instantiates its quicksort, small-sort
//! and merge code anew, about 3 KB each in the component (seven of them were 25 KB).
//! A heapsort is a few hundred bytes per type and O(n log n) on any input, which matters
//! here: the texts sorted over are the model's. It is not stable; where ties must keep
//! their order, the caller makes the position part of what is compared.

/// Sorts `v` in place so that no element is less than the one before it.
pub(crate) fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, |a, b| a < b);
}

/// Sorts `v` in place by `less`, a strict weak order.
pub(crate) fn sort_by<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    // Moves `v[root]` down the max-heap `v[..end]` to where its children are not greater.
    let mut sift_down = |v: &mut [T], mut root: usize, end: usize| {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                break;
            }
            if child + 1 < end && less(&v[child], &v[child + 1]) {
                child += 1;
            }
            if !less(&v[root], &v[child]) {
                break;
            }
            v.swap(root, child);
            root = child;
        }
    };
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift_down(v, root, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::rust_2024::*;

    #[test]
    fn sorts_like_the_standard_library() {
        let mut state: u32 = 12345;
        for len in 0..200 {
            for modulus in [2, 7, 1000] {
                let mut v: Vec<u32> = (0..len)
                    .map(|_| {
                        state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        (state >> 8) % modulus
                    })
                    .collect();
                let mut want = v.clone();
                want.sort();
                sort(&mut v);
                assert_eq!(v, want);
            }
        }
        let mut descending: Vec<u32> = (0..1000).rev().collect();
        sort_by(&mut descending, |a, b| a < b);
        assert!(descending.windows(2).all(|w| w[0] <= w[1]));
    }
}
