//! The run as last read: what `onStatus` is told, and how long it has been paused.

use alloc::string::String;

use crate::api::{RunClass, RunInfo};

/// The last status read of the run.
#[derive(Debug, Default)]
pub(super) struct LastRun {
    /// A status was read (by this poller).
    seen: bool,
    run: Option<RunInfo>,
    /// When this poller first saw the run `paused` (cleared when it is not).
    paused_since: Option<u64>,
}

impl LastRun {
    /// A status was read.
    pub fn seen(&self) -> bool {
        self.seen
    }

    /// The run was read at all (its count is known).
    pub fn known(&self) -> bool {
        self.run.is_some()
    }

    /// `row_count` as last read.
    pub fn count(&self) -> Option<u64> {
        self.run.as_ref().and_then(|r| r.row_count)
    }

    /// The status as last read.
    pub fn status(&self) -> Option<&String> {
        self.run.as_ref().map(|r| &r.status)
    }

    /// A status read at `now_ms`: when the run changed or is still paused, `onStatus` is told
    /// (`Some`, with how long it has been paused).
    pub fn read(&mut self, run: &RunInfo, class: RunClass, now_ms: u64) -> Option<Option<u64>> {
        self.seen = true;
        let paused_for_ms = match class {
            RunClass::Paused => {
                Some(now_ms.saturating_sub(*self.paused_since.get_or_insert(now_ms)))
            }
            _ => {
                self.paused_since = None;
                None
            }
        };
        if self.run.as_ref() == Some(run) && paused_for_ms.is_none() {
            return None;
        }
        self.run = Some(run.clone());
        Some(paused_for_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: &str, rows: u64) -> RunInfo {
        RunInfo {
            status: status.into(),
            row_count: Some(rows),
            ..RunInfo::default()
        }
    }

    #[test]
    fn a_change_is_told_once_and_a_pause_on_every_read_with_its_length() {
        let mut last = LastRun::default();
        assert!(!last.seen());
        assert!(last.read(&run("running", 1), RunClass::Active, 0).is_some());
        assert!(last
            .read(&run("running", 1), RunClass::Active, 10)
            .is_none());
        assert_eq!(last.count(), Some(1));
        let paused = run("paused", 1);
        assert_eq!(last.read(&paused, RunClass::Paused, 20), Some(Some(0)));
        assert_eq!(last.read(&paused, RunClass::Paused, 50), Some(Some(30)));
        assert_eq!(
            last.read(&run("running", 1), RunClass::Active, 60),
            Some(None)
        );
        assert_eq!(last.status().map(String::as_str), Some("running"));
    }
}
