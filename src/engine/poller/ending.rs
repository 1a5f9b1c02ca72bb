//! When a run is over.
//!
//! Only the API's own status ends a run (never a webhook alone, never a count): `finished`,
//! `warning` or `completed` is success, `shutdown` or `stopped` failure
//! ([`crate::api::classify_status`]; "All Inputs Failed" ends it at once, by the coordinator).
//! Then the results are drained until a page is not full: counts lag, so a full tail page,
//! or one behind the final count, is read again ([`EndPolicy::rereads`] times,
//! `reread_delay_ms` apart; a tail the final count fills is first read that long after the
//! status, which stands for one re-read), and a count seen trailing the rows during the run is
//! waited for with status reads instead of re-reading a full tail (`count_waits`). A run whose
//! `/results` still says 404 after its end completes empty only when the API counts no rows
//! and the 404s are spent (`missing_reads`, counted over every cron round). Then the poll
//! completes, or fails with JOB_FAILED after delivering the partial rows.

use alloc::string::String;

use crate::api::MissingRows;
use crate::engine::config::EndPolicy;
use crate::engine::cursor::EndKind;

/// What the API's status said the run ended as.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    Succeeded(String),
    Failed {
        status: String,
        message: Option<String>,
    },
    /// Ended with rows the server knows are missing: the stored rows are drained, then the poll
    /// completes as incomplete. `None`: resumed from a cursor, the details are read again.
    Incomplete {
        status: String,
        missing: Option<MissingRows>,
    },
}

/// How the poll ends once the run is over and read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Complete with this status.
    Complete(String),
    /// Complete as `"incomplete"`, with what is missing.
    Incomplete(MissingRows),
    /// JOB_FAILED with this message.
    Failed(String),
    /// An incomplete end resumed from a cursor: read the run again for what is missing.
    ReadRun,
}

/// The end of a run: seen or not, and the drain that follows it.
#[derive(Debug)]
pub(super) struct Ending {
    limits: EndPolicy,
    end: Option<End>,
    /// Re-reads of the tail left before completing (a lagging count or a full tail page).
    rereads_left: u32,
    /// Status reads left to wait for a count that trails the rows.
    count_waits_left: u32,
    /// The status is being read again at the end because the count trailed the rows.
    awaiting_count: bool,
    /// `/results` 404s after the run's end, over every round.
    missing: u32,
}

/// The tail as read, for the end's decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Tail {
    /// The last count read.
    pub count: Option<u64>,
    /// Rows delivered.
    pub offset: u64,
    /// Rows of the tail page consumed: the length of the last page read, or before any read,
    /// what a cursor saved (a cron round resumed at the end knows its tail without reading it).
    pub len: usize,
    /// Rows in a full page.
    pub page_size: usize,
    /// The count was seen behind the rows during the run (the lag model's finding).
    pub count_behind: bool,
}

impl Tail {
    fn full(&self) -> bool {
        self.len > 0 && self.len >= self.page_size
    }
}

/// What follows the read of the tail once the run is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Drain {
    /// Read the status again, no sooner than `min_ms` (the count trails the rows).
    AwaitCount { min_ms: u64 },
    /// Read the tail again after `ms`.
    Reread { ms: u64 },
    /// The run is over and read: complete or fail.
    Finish,
}

impl Ending {
    /// The end a cursor saved (`(kind, status)`), if any, and the 404s after it.
    pub fn new(limits: EndPolicy, saved: Option<(EndKind, String)>, missing: u32) -> Ending {
        let end = saved.map(|(kind, status)| match kind {
            EndKind::Succeeded => End::Succeeded(status),
            EndKind::Failed => End::Failed {
                status,
                message: None,
            },
            EndKind::Incomplete => End::Incomplete {
                status,
                missing: None,
            },
        });
        Ending {
            // A cursor saved during the end's drain: the tail may still lag, so a full one is
            // read once more (once: cron rounds on such a cursor must not re-read for ever).
            rereads_left: match end {
                Some(_) => limits.rereads.min(1),
                None => 0,
            },
            count_waits_left: limits.count_waits,
            awaiting_count: false,
            missing,
            end,
            limits,
        }
    }

    /// The API said the run is over.
    pub fn over(&self) -> bool {
        self.end.is_some()
    }

    /// The status the run ended with.
    pub fn status(&self) -> Option<&String> {
        match &self.end {
            Some(
                End::Succeeded(status)
                | End::Failed { status, .. }
                | End::Incomplete { status, .. },
            ) => Some(status),
            None => None,
        }
    }

    /// `(kind, status)` for the cursor.
    pub fn saved(&self) -> Option<(EndKind, &str)> {
        self.end.as_ref().map(|end| match end {
            End::Succeeded(status) => (EndKind::Succeeded, status.as_str()),
            End::Failed { status, .. } => (EndKind::Failed, status.as_str()),
            End::Incomplete { status, .. } => (EndKind::Incomplete, status.as_str()),
        })
    }

    /// `/results` 404s after the end, for the cursor.
    pub fn missing(&self) -> u32 {
        self.missing
    }

    /// The API's status says the run succeeded (each such read starts the re-reads anew).
    pub fn succeeded(&mut self, status: String) {
        self.end = Some(End::Succeeded(status));
        self.rereads_left = self.limits.rereads;
    }

    /// The API's status says the run failed; `message` for the JOB_FAILED error.
    pub fn failed(&mut self, status: String, message: Option<String>) {
        self.end = Some(End::Failed { status, message });
        self.rereads_left = self.limits.rereads;
    }

    /// The API's status says the run ended with rows it knows are missing: the rows it stored
    /// are drained as for any end, then the poll completes as incomplete.
    pub fn incomplete(&mut self, status: String, missing: MissingRows) {
        self.end = Some(End::Incomplete {
            status,
            missing: Some(missing),
        });
        self.rereads_left = self.limits.rereads;
    }

    /// The tail was reached once the run is over: wait for the count, read it again, or
    /// finish.
    pub fn drained(&mut self, tail: Tail) -> Drain {
        if self.count_awaited(tail) {
            return self.await_count();
        }
        match self.reread_due(tail) {
            true => self.reread(),
            false => Drain::Finish,
        }
    }

    fn reread(&mut self) -> Drain {
        self.rereads_left -= 1;
        let ms = u64::from(self.limits.reread_delay_ms);
        Drain::Reread { ms }
    }

    /// A status was read while the run is over: when it was the one awaited for a trailing
    /// count, whether to wait again; otherwise whether to pause before the tail is read
    /// (`Some`), or read it at once.
    ///
    /// The pause: a full tail is re-read `reread_delay_ms` after the read that found it, so
    /// that a next page linked late (results that trail the status) is still found; what that
    /// guards is the time after the end, not the number of reads. So when the count says the
    /// tail will end full (the rows of the tail page and those counted past the rows
    /// delivered make whole pages), the tail is read `reread_delay_ms` after this status, as
    /// late as that re-read would be, and that read is the re-read (one is spent): a run of
    /// whole pages (bursty's 3,000 rows) downloads its full tail once at the end, not twice.
    /// Any other tail (not counted, counted behind the rows, ending part full) is read at once
    /// and re-read as before. A wrong guess costs a pause or a re-read, never a row: whichever
    /// read finishes, it was sent `reread_delay_ms` after a status that said the run is over.
    pub fn status_read(&mut self, tail: Tail) -> Option<Drain> {
        self.end.as_ref()?;
        if !self.awaiting_count {
            let rows = tail
                .len
                .saturating_add(tail.count?.checked_sub(tail.offset)? as usize);
            let whole = rows > 0 && rows.checked_rem(tail.page_size) == Some(0);
            return (whole && self.rereads_left > 0).then(|| self.reread());
        }
        self.awaiting_count = false;
        if self.count_awaited(tail) {
            return Some(self.await_count());
        }
        // Caught up: the tail is read once more, as for a count that agrees; or waited for
        // long enough: read again as for any full tail.
        if tail.count.is_some_and(|n| n >= tail.offset) {
            self.rereads_left = self.rereads_left.min(1);
        }
        None
    }

    /// The run is over but the tail may lag: more rows than delivered are counted, or the
    /// tail page is full (counts lag, so only a page that is not full proves the end).
    fn reread_due(&self, tail: Tail) -> bool {
        let behind = tail.count.is_some_and(|n| n > tail.offset);
        // A final count that agrees with the rows delivered needs one more look at a full
        // tail, not several: a run of exactly N pages completes one re-read later.
        let agreed = tail.count == Some(tail.offset) && self.rereads_left < self.limits.rereads;
        self.rereads_left > 0 && (behind || tail.full() && !agreed)
    }

    /// At the end, a full tail whose final count is below the rows delivered, from a count
    /// seen behind the rows during the run: it will catch up, so the status (a few hundred
    /// bytes) is read again an interval later instead of the tail (a full page).
    fn count_awaited(&self, tail: Tail) -> bool {
        let trails = tail.count.is_some_and(|n| n < tail.offset);
        tail.count_behind && tail.full() && trails && self.count_waits_left > 0
    }

    fn await_count(&mut self) -> Drain {
        self.count_waits_left -= 1;
        self.awaiting_count = true;
        // Never sooner than a re-read of the tail would be: a `next` that shows late (after
        // the end) is then seen by the one re-read as by the rereads it replaces.
        let min_ms = u64::from(self.limits.reread_delay_ms);
        Drain::AwaitCount { min_ms }
    }

    /// A `/results` 404 after the end (they add up over cron rounds).
    pub fn results_missing(&mut self) {
        self.missing = self.missing.saturating_add(1);
    }

    /// The 404s after the end are spent (a cron round starts a new backoff: those of earlier
    /// rounds count too).
    pub fn missing_spent(&self) -> bool {
        self.missing > self.limits.missing_reads
    }

    /// How the poll ends; `None` while the run is not over.
    pub fn outcome(&self) -> Option<Outcome> {
        match self.end.as_ref()? {
            End::Succeeded(status) => Some(Outcome::Complete(status.clone())),
            End::Incomplete {
                missing: Some(missing),
                ..
            } => Some(Outcome::Incomplete(missing.clone())),
            End::Incomplete { missing: None, .. } => Some(Outcome::ReadRun),
            End::Failed { status, message } => {
                let mut text = ["the run ended with status \"", status, "\""].concat();
                if let Some(m) = message {
                    text.push_str(": ");
                    text.push_str(m);
                }
                Some(Outcome::Failed(text))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: EndPolicy = EndPolicy {
        rereads: 3,
        reread_delay_ms: 100,
        count_waits: 2,
        missing_reads: 3,
    };

    fn tail(count: u64, offset: u64, len: usize) -> Tail {
        Tail {
            count: Some(count),
            offset,
            len,
            page_size: 10,
            count_behind: false,
        }
    }

    #[test]
    fn a_tail_that_is_not_full_and_agrees_with_the_count_finishes() {
        let mut e = Ending::new(LIMITS, None, 0);
        assert!(!e.over());
        e.succeeded("finished".into());
        assert_eq!(e.drained(tail(15, 15, 5)), Drain::Finish);
        assert_eq!(e.outcome(), Some(Outcome::Complete("finished".into())));
    }

    #[test]
    fn a_full_tail_is_read_again_once_when_the_count_agrees_up_to_the_limit_when_behind() {
        let mut e = Ending::new(LIMITS, None, 0);
        e.succeeded("finished".into());
        assert_eq!(e.drained(tail(20, 20, 10)), Drain::Reread { ms: 100 });
        assert_eq!(e.drained(tail(20, 20, 10)), Drain::Finish);
        let mut behind = Ending::new(LIMITS, None, 0);
        behind.succeeded("finished".into());
        for _ in 0..LIMITS.rereads {
            assert_eq!(behind.drained(tail(25, 20, 10)), Drain::Reread { ms: 100 });
        }
        assert_eq!(behind.drained(tail(25, 20, 10)), Drain::Finish);
    }

    #[test]
    fn a_tail_the_final_count_fills_is_read_late_once_instead_of_twice() {
        let mut e = Ending::new(LIMITS, None, 0);
        e.succeeded("finished".into());
        // 7 rows read of the tail, 3 more counted: the page will be full.
        let filled = Some(Drain::Reread { ms: 100 });
        assert_eq!(e.status_read(tail(23, 20, 7)), filled);
        assert_eq!(e.drained(tail(23, 23, 10)), Drain::Finish);
        // Not counted, counted behind the rows, or a tail not full: read at once.
        let mut other = Ending::new(LIMITS, None, 0);
        other.succeeded("finished".into());
        let uncounted = Tail {
            count: None,
            ..tail(0, 20, 7)
        };
        assert_eq!(other.status_read(uncounted), None);
        assert_eq!(other.status_read(tail(19, 20, 10)), None);
        assert_eq!(other.status_read(tail(22, 20, 7)), None);
        assert_eq!(other.drained(tail(20, 20, 10)), Drain::Reread { ms: 100 });
    }

    #[test]
    fn a_count_seen_trailing_is_waited_for_then_the_tail_read_once_more() {
        let mut e = Ending::new(LIMITS, None, 0);
        e.succeeded("finished".into());
        let trailing = Tail {
            count_behind: true,
            ..tail(15, 20, 10)
        };
        assert_eq!(e.drained(trailing), Drain::AwaitCount { min_ms: 100 });
        // Still trailing: wait again, up to `count_waits`.
        assert_eq!(
            e.status_read(trailing),
            Some(Drain::AwaitCount { min_ms: 100 })
        );
        // Caught up: the tail is read once more (the read that follows), then it finishes.
        assert_eq!(e.status_read(tail(20, 20, 10)), None);
        assert_eq!(e.drained(tail(20, 20, 10)), Drain::Finish);
        // Waited for long enough: a full tail is read again as any.
        let mut waited = Ending::new(LIMITS, None, 0);
        waited.succeeded("finished".into());
        assert_eq!(waited.drained(trailing), Drain::AwaitCount { min_ms: 100 });
        assert_eq!(
            waited.status_read(trailing),
            Some(Drain::AwaitCount { min_ms: 100 })
        );
        assert_eq!(waited.status_read(trailing), None);
        assert_eq!(waited.drained(trailing), Drain::Reread { ms: 100 });
    }

    #[test]
    fn a_failed_run_says_its_status_and_message() {
        let mut e = Ending::new(LIMITS, None, 0);
        e.failed("stopped".into(), Some("quota reached".into()));
        assert_eq!(e.saved(), Some((EndKind::Failed, "stopped")));
        let text = "the run ended with status \"stopped\": quota reached";
        assert_eq!(e.outcome(), Some(Outcome::Failed(text.into())));
    }

    #[test]
    fn rows_known_missing_end_incomplete_and_a_saved_one_reads_the_run_again() {
        let missing = MissingRows {
            code: crate::api::ErrorCode::RowsMissing,
            batches: ["b3".into()].into(),
            batch_count: 1,
            count: Some(10),
        };
        let mut e = Ending::new(LIMITS, None, 0);
        e.incomplete("shutdown".into(), missing.clone());
        assert_eq!(e.saved(), Some((EndKind::Incomplete, "shutdown")));
        assert_eq!(e.drained(tail(15, 15, 5)), Drain::Finish);
        assert_eq!(e.outcome(), Some(Outcome::Incomplete(missing)));
        let saved = Ending::new(LIMITS, Some((EndKind::Incomplete, "shutdown".into())), 0);
        assert_eq!(saved.outcome(), Some(Outcome::ReadRun));
    }

    #[test]
    fn a_saved_end_reads_a_full_tail_once_and_404s_add_up_over_rounds() {
        let mut e = Ending::new(LIMITS, Some((EndKind::Succeeded, "finished".into())), 3);
        assert_eq!(e.status().map(String::as_str), Some("finished"));
        assert_eq!(e.drained(tail(0, 20, 10)), Drain::Reread { ms: 100 });
        assert_eq!(e.drained(tail(0, 20, 10)), Drain::Finish);
        assert!(!e.missing_spent());
        e.results_missing();
        assert!(e.missing_spent());
        assert_eq!(e.missing(), 4);
    }
}
