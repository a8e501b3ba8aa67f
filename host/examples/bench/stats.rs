//! Timing: every call timed on its own, reported as the median and the spread between
//! the 10th and 90th percentiles.

use std::time::{Duration, Instant};

/// One variant of [`Samples::interleaved`]: the call, given its index, and what runs
/// untimed after it.
pub type Variant<'a> = (&'a dyn Fn(u32), &'a dyn Fn(u32));

/// The times of one operation's calls.
#[derive(Clone, Debug)]
pub struct Samples(Vec<Duration>);

impl Samples {
    /// Times `calls` calls of `call` (given the call's index), after `warm_up` untimed ones.
    /// `between` runs untimed after each call (to put a file back, say).
    pub fn take(
        warm_up: u32,
        calls: u32,
        mut call: impl FnMut(u32),
        mut between: impl FnMut(u32),
    ) -> Samples {
        for i in 0..warm_up {
            call(i);
            between(i);
        }
        let mut times = Vec::with_capacity(calls as usize);
        for i in 0..calls {
            let started = Instant::now();
            call(i);
            times.push(started.elapsed());
            between(i);
        }
        times.sort();
        Samples(times)
    }

    /// [`take`](Self::take) for several variants called in turn, one call each, so that a
    /// drift in the machine over the run (a disk's sync latency) falls on all alike.
    pub fn interleaved<const N: usize>(
        warm_up: u32,
        calls: u32,
        variants: [Variant<'_>; N],
    ) -> [Samples; N] {
        for i in 0..warm_up {
            for (call, between) in &variants {
                call(i);
                between(i);
            }
        }
        let mut times: [Vec<Duration>; N] =
            std::array::from_fn(|_| Vec::with_capacity(calls as usize));
        for i in 0..calls {
            for ((call, between), times) in variants.iter().zip(&mut times) {
                let started = Instant::now();
                call(i);
                times.push(started.elapsed());
                between(i);
            }
        }
        times.map(|mut times| {
            times.sort();
            Samples(times)
        })
    }

    pub fn from_micros(mut micros: Vec<f64>) -> Samples {
        micros.sort_by(f64::total_cmp);
        Samples(
            micros
                .into_iter()
                .map(|m| Duration::from_secs_f64(m / 1e6))
                .collect(),
        )
    }

    fn quantile(&self, q: f64) -> Duration {
        let last = self.0.len().saturating_sub(1);
        self.0[((last as f64) * q).round() as usize]
    }

    pub fn median(&self) -> Duration {
        self.quantile(0.5)
    }

    /// `median (p10–p90)`, in the unit that suits it.
    pub fn show(&self) -> String {
        format!(
            "{} ({}–{})",
            show_duration(self.median()),
            show_duration(self.quantile(0.1)),
            show_duration(self.quantile(0.9))
        )
    }
}

pub fn show_duration(d: Duration) -> String {
    let micros = d.as_secs_f64() * 1e6;
    if micros < 1000.0 {
        format!("{micros:.1} µs")
    } else {
        format!("{:.2} ms", micros / 1000.0)
    }
}

/// `a / b` as a ratio to print.
pub fn ratio(a: &Samples, b: &Samples) -> f64 {
    a.median().as_secs_f64() / b.median().as_secs_f64()
}
