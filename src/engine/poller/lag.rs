//! A count that lags the rows (status-guided reads): the pace of batches, and reads that do
//! not wait for the count once it was seen behind.
//!
//! Captain Data processes inputs in batches, so rows come in bursts at a steady pace, and
//! `row_count` may trail them. A status-guided tick reads the results when the count moved;
//! when a read brings more rows than the count said, the count is behind and rows would wait
//! for it. From then on the results are also read on the ticks where the next batch is due
//! by the pace of the batches found so far (from one period after the last read that found
//! nothing, to one interval after the expected time), whatever the count says; once the count
//! announces rows before a read found them, it has caught up and is waited for again.
//!
//! Two signs of a trailing count are looked for at little cost: the page of a running run
//! that delivered nothing yet is read on every tick (empty, it costs a few bytes), and, a few
//! times ([`PROBES`]), the results are read in the two intervals before a batch is due.

use crate::engine::Poller;

/// Probes allowed before the count is seen behind (each may download a tail page for
/// nothing), renewed each time it is.
pub(super) const PROBES: u32 = 2;

impl Poller {
    /// At a status-guided tick (at `now_ms`) whose count says nothing new: whether the
    /// results are read anyway because a batch is due (see the module docs).
    pub(super) fn batch_due(&self, now_ms: u64) -> bool {
        let s = &self.state;
        // Nothing delivered yet from a running run: its page is empty, so a read costs a few
        // bytes, and the first batch it finds shows whether the count trails.
        if s.offset == 0 && s.batch_ms.is_some() && s.batch_after_ms < s.tick_ms {
            return true;
        }
        let Some(last) = s.batch_ms.filter(|_| s.period_ms > 0) else {
            return false;
        };
        let due = last + s.period_ms;
        let interval = u64::from(self.config.interval_ms);
        match s.count_behind {
            // After the tick the last batch was last known absent, by one period; up to an
            // interval after it was found, by one period.
            true => now_ms > s.batch_after_ms + s.period_ms && now_ms <= due + interval,
            // On the ticks of the last two intervals before the count should move.
            false => s.probes_left > 0 && now_ms + 2 * interval >= due && now_ms < due,
        }
    }

    /// The run was first seen running: the pace of its batches counts from its start, some
    /// time in the interval before (half of it, as a first guess).
    pub(super) fn note_running(&mut self) {
        let half = u64::from(self.config.interval_ms / 2);
        let s = &mut self.state;
        if s.batch_ms.is_none() {
            s.batch_ms = Some(s.tick_ms.saturating_sub(half));
            s.batch_after_ms = s.tick_ms;
        }
    }

    /// After a status-first tick read the results to the tail: learn the pace (the gaps
    /// between batches, recent ones weighing more), and whether the count said fewer rows
    /// than the read brought.
    pub(super) fn note_read(&mut self, blind: bool) {
        let s = &mut self.state;
        if s.poll_rows == 0 {
            if blind && !s.count_behind && s.offset > 0 {
                s.probes_left = s.probes_left.saturating_sub(1);
            }
            s.absent_ms = s.tick_ms;
            return;
        }
        let counted = s.last_run.as_ref().and_then(|r| r.row_count);
        if counted.is_some_and(|n| n < s.offset) {
            s.count_behind = true;
            s.probes_left = PROBES;
        }
        let at = s.tick_ms;
        if let Some(last) = s.batch_ms {
            let gap = at.saturating_sub(last);
            s.period_ms = match s.period_ms {
                0 => gap,
                period => (period + gap) / 2,
            };
        }
        s.batch_ms = Some(at);
        // The batch came after the last read that found nothing, if that was this interval.
        let interval = u64::from(self.config.interval_ms);
        s.batch_after_ms = s.absent_ms.max(at.saturating_sub(interval));
    }

    /// The count announced rows before a read found them: it caught up (back to waiting
    /// for it, with probes to notice if it falls behind again).
    pub(super) fn count_caught_up(&mut self) {
        self.state.count_behind = false;
    }
}
