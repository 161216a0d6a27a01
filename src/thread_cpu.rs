//! The CPU time of one thread, readable from any thread while it lives (POSIX per-thread clocks):
//! a job's CPU time is its own thread's plus its searches' helpers'.

use crate::sync::lock;
use std::sync::Mutex;
use std::time::Duration;

/// The CPU-time clock of one thread.
#[derive(Clone, Copy, Debug)]
pub struct ThreadClock(libc::clockid_t);

impl ThreadClock {
    /// The calling thread's clock (none where the system gives none).
    pub fn of_this_thread() -> Option<Self> {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: `clock` is a valid out-pointer; pthread_self is the calling thread.
        let result = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
        (result == 0).then_some(ThreadClock(clock))
    }

    /// The CPU time of the thread so far (zero if it cannot be read, as once the thread ended).
    pub fn cpu_time(self) -> Duration {
        let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `time` is a valid out-pointer.
        if unsafe { libc::clock_gettime(self.0, &mut time) } != 0 {
            return Duration::ZERO;
        }
        Duration::new(time.tv_sec as u64, time.tv_nsec as u32)
    }
}

/// The CPU time of the threads that help one caller's searches (a job's): of those that ended,
/// and of those running, read from their clocks, so that the caller's CPU time is current while
/// a long search runs. A helper registers its clock when it starts and takes it out, adding what
/// it spent, before it ends (a clock is never read after its thread ended).
#[derive(Debug, Default)]
pub struct HelperCpu(Mutex<Helpers>);

#[derive(Debug, Default)]
struct Helpers {
    ended: Duration,
    running: Vec<ThreadClock>,
}

impl HelperCpu {
    /// The calling thread starts helping.
    pub fn start(&self) {
        lock(&self.0).running.extend(ThreadClock::of_this_thread());
    }

    /// The calling thread stops helping (it ends, or helps no more).
    pub fn end(&self) {
        let Some(clock) = ThreadClock::of_this_thread() else { return };
        let mut helpers = lock(&self.0);
        if let Some(at) = helpers.running.iter().position(|running| running.0 == clock.0) {
            helpers.running.swap_remove(at);
            helpers.ended += clock.cpu_time();
        }
    }

    /// The CPU time of every helper so far.
    pub fn total(&self) -> Duration {
        let helpers = lock(&self.0);
        helpers.ended + helpers.running.iter().map(|clock| clock.cpu_time()).sum::<Duration>()
    }
}
