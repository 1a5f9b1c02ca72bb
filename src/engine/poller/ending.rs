//! The end of a run: the drain's re-reads of the tail, then completion or JOB_FAILED.

use alloc::string::String;

use super::{Ending, Next};
use crate::engine::{Action, ErrorCode, Poller, RequestKind, SleepReason, Summary};

impl Poller {
    pub(super) fn finish(&mut self, now_ms: u64) -> Action {
        let s = &self.state;
        let Some(ending) = s.ending.clone() else {
            return Action::Idle;
        };
        let status = match ending {
            Ending::Succeeded(status) => status,
            Ending::Failed { status, message } => {
                let mut text = ["the run ended with status \"", &status, "\""].concat();
                if let Some(m) = message {
                    text.push_str(": ");
                    text.push_str(&m);
                }
                let error = self.error(ErrorCode::JobFailed, text, None);
                return self.terminate(Action::Fail(error));
            }
        };
        let summary = self.summary(status, now_ms);
        self.terminate(Action::Complete(summary))
    }

    /// The summary of this poller's work so far, the run's rows counted up to the cursor.
    pub(super) fn summary(&self, status: String, now_ms: u64) -> Summary {
        let s = &self.state;
        Summary {
            status,
            total_results: self.delivered(),
            requests: s.requests,
            retries: s.retries,
            duration_ms: now_ms.saturating_sub(s.started_ms),
        }
    }

    /// The run is over but the tail may lag: more rows than delivered are counted, or the
    /// tail page is full (counts lag, so only a page that is not full proves the end).
    pub(super) fn recheck_due(&self) -> bool {
        let s = &self.state;
        let count = s.last_run.as_ref().and_then(|r| r.row_count);
        let behind = count.is_some_and(|n| n > s.offset);
        let full = s.last_len > 0 && s.last_len >= self.page_size();
        // A final count that agrees with the rows delivered needs one more look at a full
        // tail, not several: a run of exactly N pages completes one re-read later.
        let agreed = count == Some(s.offset) && s.rechecks_left < self.config.retry.retries;
        s.rechecks_left > 0 && (behind || full && !agreed)
    }

    /// At the end, a full tail whose final count is below the rows delivered, from a count
    /// seen behind the rows during the run: it will catch up, so the status (a few hundred
    /// bytes) is read again an interval later instead of the tail (a full page), up to
    /// `retry.retries` times.
    pub(super) fn count_awaited(&self) -> bool {
        let s = &self.state;
        let count = s.last_run.as_ref().and_then(|r| r.row_count);
        let full = s.last_len > 0 && s.last_len >= self.page_size();
        let trails = count.is_some_and(|n| n < s.offset);
        s.count_behind && full && trails && s.count_waits_left > 0
    }

    pub(super) fn await_count(&mut self) {
        // Never sooner than a re-read of the tail would be: a `next` that shows late (after
        // the end) is then seen by the one re-read as by the rechecks it replaces.
        let min = u64::from(self.config.retry.min_delay_ms);
        let ms = self.jittered_interval().max(min);
        let s = &mut self.state;
        s.count_waits_left -= 1;
        s.awaiting_count = true;
        s.next = match self.config.step_mode {
            true => Next::Yield,
            false => Next::Sleep {
                ms,
                reason: SleepReason::Interval,
                then: RequestKind::Run,
            },
        };
    }

    /// The status read while a trailing count was awaited: it still trails (wait again), it
    /// caught up (the tail is read once more, as for a count that agrees), or it was waited
    /// for long enough (the tail is read again as for any full tail).
    pub(super) fn count_read(&mut self) {
        self.state.awaiting_count = false;
        if self.count_awaited() {
            return self.await_count();
        }
        let s = &mut self.state;
        let count = s.last_run.as_ref().and_then(|r| r.row_count);
        if count.is_some_and(|n| n >= s.offset) {
            s.rechecks_left = s.rechecks_left.min(1);
        }
    }

    /// Rows in a full page: the API's, once it paged, else the configured (or a longer one
    /// seen).
    pub(super) fn page_size(&self) -> usize {
        let s = &self.state;
        match s.paged_len {
            0 => self.config.page_size.max(s.largest_len),
            n => n,
        }
    }
}
