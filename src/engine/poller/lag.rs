//! A count that lags the rows (status-guided reads): the pace of batches, and reads that do
//! not wait for the count once it was seen behind.
//!
//! Captain Data processes inputs in batches, so rows come in bursts at a steady pace, and
//! `row_count` may trail them. A status-guided tick reads the results when the count moved;
//! when a read brings rows the count did not announce at all, the count is behind and rows
//! would wait for it. From then on the results are also read in a window of ticks where the next batch
//! is due, whatever the count says. Everything is learned from the reads, in API time:
//!
//! - **Dating a batch.** It came after the last read that found nothing and at or before the
//!   read that found it. When that read was on the previous tick, the batch is dated to
//!   within an interval. Otherwise (the window's first read found it, or the count did) it
//!   came no earlier than one pace after the batch before, give or take [`SLACK_PERCENT`]
//!   of an interval: a batch found late so pulls the next window earlier, never later.
//! - **The pace** is the gap between the earliest dates of successive batches, averaged
//!   ([`PACE_MEMORY`]). Tick times stretched by a busy machine only move the dates, which
//!   stay true bounds.
//! - **The window** opens [`OPEN_LATE_PERCENT`] of an interval after the next batch's
//!   earliest date (a batch that comes right at it waits that much longer; most reads before
//!   it would find nothing) and closes once [`WINDOW_READS`] reads found nothing and an
//!   interval has passed since the tick the batch was expected at (one pace after the last
//!   batch was found): the batch is then left to the count, which is never ignored.
//! - Until the pace is known ([`LEARNING_GAPS`] gaps, the first three batches), the results
//!   are read on every tick (the page holds a few batches: a few tens of KB), as long as
//!   fewer than [`QUIET_TICKS`] reads in a row found nothing.
//!
//! The count is waited for again once it announces rows that a read on the previous tick
//! did not find: then it moved within an interval of the rows, as a read on every tick would.
//!
//! While nothing is known about the count, two signs of a trailing one are looked for at
//! little cost: the page of a running run that delivered nothing yet is read on every tick
//! (empty, it costs a few bytes), and, a few times ([`PROBES`]), the results are read in the
//! two intervals before a batch is due.

use crate::engine::{Poller, QUIET_TICKS};

/// Probes allowed before the count is seen behind (each may download a tail page for
/// nothing), renewed each time it is.
pub(super) const PROBES: u32 = 2;

/// How far (% of an interval) a batch not dated by the reads may have come before the pace
/// said.
const SLACK_PERCENT: u64 = 25;

/// How long (% of an interval) after the next batch's earliest date its window opens.
const OPEN_LATE_PERCENT: u64 = 25;

/// Reads that find nothing before a window closes.
const WINDOW_READS: u32 = 3;

/// Weight of the pace already learned against a new gap between batches.
const PACE_MEMORY: u64 = 3;

/// Gaps between batches learned (on every tick) before the pace is trusted.
const LEARNING_GAPS: u32 = 2;

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
        let Some(last) = s.batch_ms.filter(|_| s.offset > 0) else {
            return false;
        };
        if s.gaps < LEARNING_GAPS {
            return s.count_behind && s.misses <= QUIET_TICKS;
        }
        let interval = u64::from(self.config.interval_ms);
        match s.count_behind {
            // Open until a batch is found, or both WINDOW_READS reads found nothing and the
            // tick an interval after the one it was expected at has passed.
            true => {
                let opens = s.batch_after_ms + s.period_ms + interval * OPEN_LATE_PERCENT / 100;
                let expected = last + s.period_ms + interval;
                now_ms > opens && (s.misses < WINDOW_READS || now_ms <= expected)
            }
            // On the ticks of the last two intervals before the count should move.
            false => {
                let due = last + s.period_ms;
                s.probes_left > 0 && now_ms + 2 * interval >= due && now_ms < due
            }
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

    /// After a status-first tick read the results to the tail: date the batch it found, learn
    /// the pace, and whether the count said fewer rows than the read brought.
    pub(super) fn note_read(&mut self, blind: bool) {
        let s = &mut self.state;
        if s.poll_rows == 0 {
            if blind && !s.count_behind && s.offset > 0 {
                s.probes_left = s.probes_left.saturating_sub(1);
            }
            s.absent_ms = s.tick_ms;
            s.misses = s.misses.saturating_add(1);
            return;
        }
        // The count announced none of the rows this read found (not merely fewer: rows that
        // come while the status is read are found by the read that follows it).
        let counted = s.last_run.as_ref().and_then(|r| r.row_count);
        if counted.is_some_and(|n| n <= s.offset - s.poll_rows) {
            s.count_behind = true;
            s.probes_left = PROBES;
        }
        s.misses = 0;
        let after = self.earliest_date();
        let s = &mut self.state;
        let first = s.offset == s.poll_rows;
        if !first {
            // A mean of the first gaps, then recent ones weigh more.
            let gap = after.saturating_sub(s.batch_after_ms);
            let weight = u64::from(s.gaps).min(PACE_MEMORY);
            s.period_ms = (s.period_ms * weight + gap) / (weight + 1);
            s.gaps = s.gaps.saturating_add(1);
        }
        s.batch_ms = Some(s.tick_ms);
        s.batch_after_ms = after;
    }

    /// The earliest time the batch this tick's read found can have come (see the module
    /// docs): after the last read that found nothing, and, when that read was not on the
    /// previous tick, no earlier than the pace said (less the slack), but before this read.
    fn earliest_date(&self) -> u64 {
        let s = &self.state;
        let dated = s.absent_ms == s.prev_tick_ms;
        let first = s.offset == s.poll_rows;
        if dated || first || s.period_ms == 0 {
            return s.absent_ms;
        }
        let slack = u64::from(self.config.interval_ms) * SLACK_PERCENT / 100;
        let paced = (s.batch_after_ms + s.period_ms).saturating_sub(slack);
        s.absent_ms.max(paced.min(s.tick_ms.saturating_sub(1)))
    }

    /// The count announced rows before a read found them: when a read on the previous tick
    /// found nothing, it moved within an interval of the rows (back to waiting for it, with
    /// probes to notice if it falls behind again).
    pub(super) fn count_caught_up(&mut self) {
        let s = &mut self.state;
        if s.absent_ms == s.prev_tick_ms {
            s.count_behind = false;
        }
    }
}
