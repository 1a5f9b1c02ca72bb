//! The pace of a page's poller: hidden tabs poll slower (or not at all), an offline runtime
//! sends nothing, and the steady cadence is jittered so clients started together spread out.

use super::Wait;
use crate::engine::{Action, Poller, SleepReason};

/// Seeds the jitter's generator apart from the backoff's (same `Config::seed`).
pub(super) const JITTER_STREAM: u64 = 0x6a09_e667_f3bc_c908;

impl Poller {
    /// The pause before the next tick: `interval_ms` after this tick's last read, lengthened
    /// by up to 5 % (the jitter that spreads clients started together). Never shorter: no
    /// client polls faster than it asked, and a tick's own requests do not shorten the pause
    /// after it (the cadence of the seed's loop, and of SWR's `refreshInterval`), so a run is
    /// read no more often than such a loop reads it.
    pub(super) fn jittered_interval(&mut self) -> u64 {
        let interval = u64::from(self.config.interval_ms);
        self.state
            .jitter
            .between(interval, interval + interval / 20)
    }

    /// The delay a sleep really takes: a steady-cadence sleep of a hidden page is stretched
    /// to `hidden_interval_ms`; `None` when hidden polling is paused.
    pub(super) fn paced(&self, ms: u64, reason: SleepReason) -> Option<u64> {
        if !self.state.hidden || reason != SleepReason::Interval {
            return Some(ms);
        }
        let hidden = self.config.hidden_interval_ms?;
        Some(ms.max(hidden.into()))
    }

    /// Nothing to send until an event (visible again, back online): sleep until the deadline,
    /// which still ends the poll, or wait with no timer when there is none.
    pub(super) fn wait_for_event(&mut self, now_ms: u64) -> Action {
        let s = &mut self.state;
        match s.deadline_ms {
            Some(deadline) => {
                // The timer only brings the deadline; what was due is done once it fires.
                let ms = deadline.saturating_sub(now_ms).max(1);
                s.wait = Wait::Timer;
                s.sleep_until = now_ms + ms;
                s.sleep_reason = SleepReason::Interval;
                Action::Sleep {
                    ms: u32::try_from(ms).unwrap_or(u32::MAX),
                    reason: SleepReason::Interval,
                }
            }
            None => Action::Idle,
        }
    }

    pub(super) fn on_hidden(&mut self, hidden: bool, now_ms: u64) {
        let was = core::mem::replace(&mut self.state.hidden, hidden);
        // Visible again after being hidden: poll at once (the steady sleep is over).
        let poll_now = was && !hidden;
        self.sleep_cancelled(poll_now, now_ms);
    }

    pub(super) fn on_online(&mut self, online: bool, now_ms: u64) {
        let was_offline = core::mem::replace(&mut self.state.offline, !online);
        self.sleep_cancelled(was_offline && online, now_ms);
    }
}
