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
//! Rows can also come while the tick's status is read, and the read after it finds them
//! unannounced by a count that is on time: a status read right after that read tells
//! ([`Lag::confirm`]); only a count that still does not announce them is behind.
//!
//! The count is waited for again once it announces rows that a read on the previous tick
//! did not find: then it moved within an interval of the rows, as a read on every tick would.
//!
//! While nothing is known about the count, two signs of a trailing one are looked for at
//! little cost: the page of a running run that delivered nothing yet is read on every tick
//! (empty, it costs a few bytes), and, a few times ([`PROBES`]), the results are read in the
//! two intervals before a batch is due. The first sign is the better one: when the count
//! announced the first rows, found on the tick after a read that found none, it was at most
//! an interval behind, all a probe can show, and no probe is made (each one downloads the
//! partly filled page: 0.3× the rows' bytes on 100-row bursts into 1000-row pages).

use super::cadence::QUIET_TICKS;

/// Probes allowed before the count is seen behind (each may download a tail page for
/// nothing), renewed each time it is; none once the first rows showed the count on time.
const PROBES: u32 = 2;

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

/// What the reads taught about the count and the pace of the batches, in API time (against
/// `interval_ms`, the cadence each method is given).
#[derive(Debug)]
pub(super) struct Lag {
    /// When this tick's status was read.
    tick_ms: u64,
    /// When the previous tick's status was read.
    prev_tick_ms: u64,
    /// When the last results read that brought rows was made (its tick).
    batch_ms: Option<u64>,
    /// The pace of those reads: their gaps, recent ones weighing more (0: not known yet).
    period_ms: u64,
    /// When a results read last found nothing new.
    absent_ms: u64,
    /// Results reads in a row that found nothing, since the last batch.
    misses: u32,
    /// Gaps between batches the pace was learned from.
    gaps: u32,
    /// The last batch came after this (the read before it that found nothing, or an
    /// interval before the read that found it).
    batch_after_ms: u64,
    /// A read brought more rows than the count said: reads do not wait for it.
    count_behind: bool,
    /// A read brought rows the count of the tick's status did not announce, and no status
    /// read since told whether they came while it was read (`Some(on_time)`: they were the
    /// first rows, found on the tick after a read that found none).
    unconfirmed: Option<bool>,
    /// Reads before a batch is due (probes) left before the count is seen behind.
    probes_left: u32,
    /// This tick's results read was made although the count said nothing new.
    blind_read: bool,
}

/// A status-first tick's results read, as the lag model learns from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Read {
    /// Rows it brought.
    pub rows: u64,
    /// Rows delivered in total, these included.
    pub offset: u64,
    /// The count of the status read before it.
    pub counted: Option<u64>,
}

impl Lag {
    /// Nothing learned yet, at `now_ms`.
    pub fn new(now_ms: u64) -> Lag {
        Lag {
            tick_ms: now_ms,
            prev_tick_ms: now_ms,
            batch_ms: None,
            period_ms: 0,
            absent_ms: 0,
            misses: 0,
            gaps: 0,
            batch_after_ms: 0,
            count_behind: false,
            unconfirmed: None,
            probes_left: PROBES,
            blind_read: false,
        }
    }

    /// A read brought rows the count did not announce: the count trails the rows (so far as
    /// known: rows not yet confirmed count as trailing).
    pub fn count_behind(&self) -> bool {
        self.count_behind || self.unconfirmed.is_some()
    }

    /// A read brought rows the tick's count did not announce: a status read right after it
    /// tells whether they came while the status was read ([`Lag::confirm`]).
    pub fn unconfirmed(&self) -> bool {
        self.unconfirmed.is_some()
    }

    /// The status read after such a read counted `counted` (`offset` rows delivered): the
    /// rows it announces came while the tick's status was read, and the count is on time;
    /// otherwise it trails them.
    pub fn confirm(&mut self, counted: Option<u64>, offset: u64) {
        let Some(on_time) = self.unconfirmed.take() else {
            return;
        };
        match counted.is_some_and(|n| n >= offset) {
            true if on_time => self.probes_left = 0,
            true => {}
            false => self.seen_behind(),
        }
    }

    /// The count trails the rows: reads stop waiting for it, with probes renewed for when
    /// it is trusted again.
    fn seen_behind(&mut self) {
        self.count_behind = true;
        self.probes_left = PROBES;
    }

    /// A status-guided tick read the status at `now_ms` (`running`: the run said so). Rows
    /// left unconfirmed (that status read failed) are taken as a count behind.
    pub fn tick(&mut self, interval_ms: u32, now_ms: u64, running: bool) {
        if self.unconfirmed.take().is_some() {
            self.seen_behind();
        }
        self.prev_tick_ms = core::mem::replace(&mut self.tick_ms, now_ms);
        if running {
            self.note_running(interval_ms);
        }
    }

    /// At a status-guided tick whose count says nothing new (`offset` rows delivered):
    /// whether the results are read anyway because a batch is due; remembered as a blind
    /// read for [`Lag::read`].
    pub fn read_blind(&mut self, interval_ms: u32, now_ms: u64, offset: u64) -> bool {
        self.blind_read = self.batch_due(interval_ms, now_ms, offset);
        self.blind_read
    }

    /// At a status-guided tick at `now_ms` (`offset` rows delivered): whether the results
    /// are read anyway because a batch is due (see the module docs).
    fn batch_due(&self, interval_ms: u32, now_ms: u64, offset: u64) -> bool {
        // Nothing delivered yet from a running run: its page is empty, so a read costs a few
        // bytes, and the first batch it finds shows whether the count trails.
        if offset == 0 && self.batch_ms.is_some() && self.batch_after_ms < self.tick_ms {
            return true;
        }
        let Some(last) = self.batch_ms.filter(|_| offset > 0) else {
            return false;
        };
        if self.gaps < LEARNING_GAPS {
            return self.count_behind && self.misses <= QUIET_TICKS;
        }
        let interval = u64::from(interval_ms);
        match self.count_behind {
            // Open until a batch is found, or both WINDOW_READS reads found nothing and the
            // tick an interval after the one it was expected at has passed.
            true => {
                let opens =
                    self.batch_after_ms + self.period_ms + interval * OPEN_LATE_PERCENT / 100;
                let expected = last + self.period_ms + interval;
                now_ms > opens && (self.misses < WINDOW_READS || now_ms <= expected)
            }
            // On the ticks of the last two intervals before the count should move.
            false => {
                let due = last + self.period_ms;
                self.probes_left > 0 && now_ms + 2 * interval >= due && now_ms < due
            }
        }
    }

    /// The run was first seen running: the pace of its batches counts from its start, some
    /// time in the interval before (half of it, as a first guess).
    fn note_running(&mut self, interval_ms: u32) {
        let half = u64::from(interval_ms / 2);
        if self.batch_ms.is_none() {
            self.batch_ms = Some(self.tick_ms.saturating_sub(half));
            self.batch_after_ms = self.tick_ms;
        }
    }

    /// After a status-first tick read the results to the tail: date the batch it found, learn
    /// the pace, and whether the count said fewer rows than the read brought.
    pub fn read(&mut self, interval_ms: u32, read: Read) {
        let blind = core::mem::take(&mut self.blind_read);
        if read.rows == 0 {
            if blind && !self.count_behind && read.offset > 0 {
                self.probes_left = self.probes_left.saturating_sub(1);
            }
            self.absent_ms = self.tick_ms;
            self.misses = self.misses.saturating_add(1);
            return;
        }
        // The count announced none of the rows this read found (not merely fewer: rows that
        // come while the status is read are found by the read that follows it). They may
        // have come while it was read: unless the count is known behind, the next status
        // read tells.
        let unannounced = read.counted.is_some_and(|n| n <= read.offset - read.rows);
        let first = read.offset == read.rows;
        // The first rows, found on the tick after a read that found none: a count that
        // announced them was at most an interval behind them (see the module docs).
        let on_time = first && self.absent_ms == self.prev_tick_ms;
        match (unannounced, self.count_behind) {
            (true, true) => self.seen_behind(),
            (true, false) => self.unconfirmed = Some(on_time),
            (false, false) if on_time => self.probes_left = 0,
            (false, _) => {}
        }
        self.misses = 0;
        let after = self.earliest_date(interval_ms, read);
        if !first {
            // A mean of the first gaps, then recent ones weigh more.
            let gap = after.saturating_sub(self.batch_after_ms);
            let weight = u64::from(self.gaps).min(PACE_MEMORY);
            self.period_ms = (self.period_ms * weight + gap) / (weight + 1);
            self.gaps = self.gaps.saturating_add(1);
        }
        self.batch_ms = Some(self.tick_ms);
        self.batch_after_ms = after;
    }

    /// The earliest time the batch this tick's read found can have come (see the module
    /// docs): after the last read that found nothing, and, when that read was not on the
    /// previous tick, no earlier than the pace said (less the slack), but before this read.
    fn earliest_date(&self, interval_ms: u32, read: Read) -> u64 {
        let dated = self.absent_ms == self.prev_tick_ms;
        let first = read.offset == read.rows;
        if dated || first || self.period_ms == 0 {
            return self.absent_ms;
        }
        let slack = u64::from(interval_ms) * SLACK_PERCENT / 100;
        let paced = (self.batch_after_ms + self.period_ms).saturating_sub(slack);
        self.absent_ms
            .max(paced.min(self.tick_ms.saturating_sub(1)))
    }

    /// The count announced rows before a read found them: when a read on the previous tick
    /// found nothing, it moved within an interval of the rows (back to waiting for it, with
    /// probes to notice if it falls behind again).
    pub fn count_caught_up(&mut self) {
        if self.absent_ms == self.prev_tick_ms {
            self.count_behind = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERVAL: u64 = 10_000;

    /// A status-guided tick at `at` whose read found `rows` more (`offset` in all) than the
    /// count of `counted`.
    fn tick(lag: &mut Lag, at: u64, rows: u64, offset: u64, counted: u64) {
        lag.tick(INTERVAL as u32, at, true);
        lag.read(
            INTERVAL as u32,
            Read {
                rows,
                offset,
                counted: Some(counted),
            },
        );
    }

    /// This tick's read of a running run's page found it empty, as the count said.
    fn read_empty_page(lag: &mut Lag) {
        let empty = Read {
            rows: 0,
            offset: 0,
            counted: Some(0),
        };
        lag.read(INTERVAL as u32, empty);
    }

    #[test]
    fn a_read_that_brings_rows_the_count_did_not_announce_sees_the_count_behind() {
        let mut lag = Lag::new(0);
        tick(&mut lag, 10_000, 5, 5, 5);
        assert!(!lag.count_behind(), "the count announced them");
        tick(&mut lag, 20_000, 5, 10, 5);
        assert!(lag.count_behind(), "the count said 5, the read brought 10");
        // A read on the previous tick found nothing, then the count moves first: trusted again.
        tick(&mut lag, 30_000, 0, 10, 10);
        lag.tick(INTERVAL as u32, 40_000, true);
        lag.count_caught_up();
        assert!(!lag.count_behind());
    }

    #[test]
    fn rows_that_came_while_the_status_was_read_do_not_make_the_count_behind() {
        let mut lag = Lag::new(0);
        tick(&mut lag, 10_000, 5, 5, 5);
        tick(&mut lag, 20_000, 5, 10, 5);
        assert!(lag.unconfirmed() && lag.count_behind(), "behind until told");
        lag.confirm(Some(10), 10);
        assert!(!lag.count_behind(), "the next status announced them");
        tick(&mut lag, 30_000, 5, 15, 10);
        lag.confirm(Some(10), 15);
        assert!(!lag.unconfirmed() && lag.count_behind(), "it still did not");
    }

    #[test]
    fn rows_left_unconfirmed_by_the_next_tick_make_the_count_behind() {
        let mut lag = Lag::new(0);
        tick(&mut lag, 10_000, 5, 5, 5);
        tick(&mut lag, 20_000, 5, 10, 5);
        lag.tick(INTERVAL as u32, 30_000, true);
        lag.confirm(Some(10), 10);
        assert!(
            lag.count_behind(),
            "the status read after the rows never came"
        );
    }

    #[test]
    fn the_first_rows_of_a_running_run_are_looked_for_on_every_tick() {
        let mut lag = Lag::new(0);
        assert!(
            !lag.read_blind(INTERVAL as u32, 0, 0),
            "not seen running yet"
        );
        lag.tick(INTERVAL as u32, 10_000, true);
        read_empty_page(&mut lag);
        lag.tick(INTERVAL as u32, 20_000, true);
        assert!(lag.read_blind(INTERVAL as u32, 20_000, 0));
    }

    /// Batches of 5 every 3 ticks that the count announces at once, the first found at
    /// 20 s (after a read of the empty page at 10 s when `dated`): whether the tick before
    /// the fourth batch is due reads the results anyway (a probe).
    fn probes_before_the_fourth_batch(dated: bool) -> bool {
        let mut lag = Lag::new(0);
        lag.tick(INTERVAL as u32, 10_000, true);
        if dated {
            read_empty_page(&mut lag);
        }
        tick(&mut lag, 20_000, 5, 5, 5);
        // Quiet ticks read the status only, but for a read at 40 s that finds nothing (as
        // the quiet ticks' read would), which dates the next batch.
        lag.tick(INTERVAL as u32, 30_000, true);
        tick(&mut lag, 40_000, 0, 5, 5);
        tick(&mut lag, 50_000, 5, 10, 10);
        let mut at = 50_000;
        for _ in 0..2 {
            at += INTERVAL;
            lag.tick(INTERVAL as u32, at, true);
        }
        at += INTERVAL;
        tick(&mut lag, at, 5, 15, 15);
        at += 2 * INTERVAL;
        lag.tick(INTERVAL as u32, at, true);
        lag.read_blind(INTERVAL as u32, at, 15)
    }

    #[test]
    fn a_count_that_announced_the_first_rows_on_time_is_not_probed() {
        assert!(!probes_before_the_fourth_batch(true));
        assert!(
            probes_before_the_fourth_batch(false),
            "first rows not dated: the probes are made"
        );
    }

    #[test]
    fn once_the_pace_is_learned_a_trailing_count_is_not_waited_for_in_the_window() {
        let mut lag = Lag::new(0);
        // Batches every 3 ticks that the count never announces.
        let mut offset = 0;
        let mut at = 0;
        for _ in 0..4 {
            for _ in 0..2 {
                at += INTERVAL;
                tick(&mut lag, at, 0, offset, 0);
            }
            at += INTERVAL;
            offset += 10;
            tick(&mut lag, at, 10, offset, 0);
        }
        assert!(lag.count_behind());
        // The next batch is due three intervals after the last one: read blind around then,
        // not right after a batch.
        lag.tick(INTERVAL as u32, at + INTERVAL, true);
        assert!(!lag.read_blind(INTERVAL as u32, at + INTERVAL, offset));
        lag.read(
            INTERVAL as u32,
            Read {
                rows: 0,
                offset,
                counted: Some(0),
            },
        );
        let due = at + 3 * INTERVAL;
        lag.tick(INTERVAL as u32, due, true);
        assert!(lag.read_blind(INTERVAL as u32, due, offset));
    }
}
